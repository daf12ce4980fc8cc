//! The integration tests: one binary, one shared harness. The app runs in-process through
//! `create_app`; model servers are local wiremock servers on 127.0.0.1.

mod harness;

mod api;
mod backends;
mod bad_input;
mod cli;
mod config;
mod context;
mod entitlement;
mod evals;
mod exits;
mod fail_closed;
mod forms;
mod gate;
pub mod gate_args;
mod gate_eval;
mod gate_redis;
mod gateways;
mod judge;
mod lookup;
mod openapi;
mod ops;
mod output;
mod padded;
mod policy;
mod policy_props;
mod props;
mod reliability;
mod results;
mod streams;

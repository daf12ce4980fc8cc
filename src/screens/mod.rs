//! The screens: the guard's control points, one slice each. Each owns its configuration
//! section, its checks, its verdict (a reason enum and a trace) and what it records.
//!
//! - [`input`]    the question, before the agent sees it: the pipeline of stages
//! - [`tools`]    the tool calls the model proposes: the gate
//! - [`context`]  untrusted content on its way into the model (documents, tool results)
//! - [`output`]   the agent's answer on its way out: masking, blocking

pub mod context;
pub mod input;
pub mod output;
pub mod tools;

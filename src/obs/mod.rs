//! Observability: the Prometheus metrics and the audit log.

pub mod audit;
pub mod metrics;

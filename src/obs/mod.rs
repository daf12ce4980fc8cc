//! Observability: the Prometheus metrics, the audit log, and the service's own JSON log.

pub mod audit;
pub mod log;
pub mod metrics;

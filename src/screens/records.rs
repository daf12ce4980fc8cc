//! Every screen's records, built once per process from the service's registry and audit log
//! and handed to each loaded configuration: each screen registers its own metrics
//! (`InputMetrics::new(&registry)`, ...) and writes its own audit lines.

use super::context::records::ContextMetrics;
use super::input::records::InputMetrics;
use super::input::stages::policy::PolicyAction;
use super::output::records::OutputMetrics;
use super::results::records::ResultsMetrics;
use super::tools::records::GateMetrics;
use crate::obs::audit::AuditLog;
use crate::obs::metrics::Registry;
use crate::product::Product;
use std::sync::Arc;

/// The screens' metrics and the audit log they write to. Cheap to clone.
#[derive(Clone)]
pub struct Records {
    pub input: InputMetrics,
    pub tools: GateMetrics,
    pub output: OutputMetrics,
    pub context: ContextMetrics,
    pub results: ResultsMetrics,
    pub audit: Arc<AuditLog>,
}

impl std::fmt::Debug for Records {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Records")
    }
}

impl Records {
    pub fn new(registry: &Registry, audit: Arc<AuditLog>) -> prometheus::Result<Self> {
        Ok(Records {
            input: InputMetrics::new(registry)?,
            tools: GateMetrics::new(registry)?,
            output: OutputMetrics::new(registry)?,
            context: ContextMetrics::new(registry)?,
            results: ResultsMetrics::new(registry)?,
            audit,
        })
    }

    /// Records that keep nothing: for one-shot runs (`check-config`, `eval`, tests).
    pub fn off() -> prometheus::Result<Self> {
        let audit = AuditLog::new(None, crate::obs::audit::AuditSink::Off);
        Self::new(&Registry::new(false), Arc::new(audit))
    }

    /// Create every series of one product at zero, so alerts see zero, not "no data".
    pub fn init_product(&self, p: &Product) {
        let rules: Vec<(&str, PolicyAction)> = p
            .input
            .policy
            .rules
            .iter()
            .map(|r| (r.id.as_str(), r.action))
            .collect();
        self.input.init_product(&p.name, &rules);
        self.output.init_product(&p.name);
        self.tools.init_product(&p.name, &p.tools);
        self.context.init_product(&p.name);
        self.results.init_product(&p.name);
    }
}

//! What the output screen records: its metrics (values masked by kind, decisions) and its
//! audit line (kinds and counts, never values; the answer as a keyed hash).

use super::verdict::{OutputDecision, OutputReason, OutputVerdict};
use crate::obs::audit::AuditLog;
use crate::obs::metrics::Registry;
use crate::redact::Kind;
use prometheus::IntCounterVec;

/// The output screen's metrics. Cheap to clone.
#[derive(Clone)]
pub struct OutputMetrics {
    enabled: bool,
    findings: IntCounterVec,
    decisions: IntCounterVec,
    lookups: IntCounterVec,
    asks: IntCounterVec,
}

/// The outcomes of the lookup question, the `outcome` label of `guard_output_lookup_asks_total`.
pub const ASK_OUTCOMES: [&str; 9] = [
    "no",
    "yes",
    "unparsable",
    "timeout",
    "error",
    "ok",
    "circuit_open",
    "shed",
    "unavailable",
];

impl OutputMetrics {
    pub fn new(r: &Registry) -> prometheus::Result<Self> {
        Ok(OutputMetrics {
            enabled: r.enabled(),
            findings: r.counter(
                "guard_output_findings_total",
                "Values masked by the output screen, by kind",
                &["product", "kind"],
            )?,
            decisions: r.counter(
                "guard_output_decisions_total",
                "Output screen decisions",
                &["product", "decision"],
            )?,
            lookups: r.counter(
                "guard_output_lookups_total",
                "Lookup checks of the answer's figures, by reason",
                &["product", "reason"],
            )?,
            asks: r.counter(
                "guard_output_lookup_asks_total",
                "Model questions of the lookup check (a turn that called no tool), by outcome",
                &["product", "outcome"],
            )?,
        })
    }

    pub fn record_lookup(&self, product: &str, reason: OutputReason) {
        if self.enabled {
            self.lookups
                .with_label_values(&[product, reason.as_str()])
                .inc();
        }
    }

    /// One model question asked; `outcome` is one of [`ASK_OUTCOMES`].
    pub fn record_model_ask(&self, product: &str, outcome: &str) {
        if self.enabled {
            let outcome = ASK_OUTCOMES
                .iter()
                .find(|o| **o == outcome)
                .copied()
                .unwrap_or("error");
            self.asks.with_label_values(&[product, outcome]).inc();
        }
    }

    /// Create every series of one product at zero.
    pub fn init_product(&self, product: &str) {
        if !self.enabled {
            return;
        }
        for kind in Kind::ALL {
            self.findings.with_label_values(&[product, kind.as_str()]);
        }
        for decision in OutputDecision::ALL {
            self.decisions
                .with_label_values(&[product, decision.as_str()]);
        }
        for reason in OutputReason::LOOKUP {
            self.lookups.with_label_values(&[product, reason.as_str()]);
        }
        for outcome in ASK_OUTCOMES {
            self.asks.with_label_values(&[product, outcome]);
        }
    }

    pub fn record(&self, product: &str, v: &OutputVerdict) {
        if !self.enabled {
            return;
        }
        for (kind, n) in &v.counts {
            self.findings
                .with_label_values(&[product, kind.as_str()])
                .inc_by(*n as u64);
        }
        self.decisions
            .with_label_values(&[product, v.decision.as_str()])
            .inc();
    }
}

/// One output-screen line: kinds and counts, never values; the answer as a keyed hash.
pub fn audit_answer(
    audit: &AuditLog,
    product: &str,
    text_hmac: &str,
    v: &OutputVerdict,
    latency_micros: u64,
) {
    if audit.is_off() {
        return;
    }
    let line = serde_json::json!({
        "ts": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        "kind": "output",
        "request_id": v.request_id,
        "product": product,
        "config_rev": v.config_rev,
        "decision": v.decision,
        "counts": v.counts,
        "blocked_kinds": v.blocked_kinds,
        "reason": v.reason,
        // The lookup check's ungrounded figures, counted: never the figures themselves.
        "ungrounded_figures": v.figures.len(),
        "trace": v.trace,
        "latency_micros": latency_micros,
        "text_hmac": text_hmac,
    });
    audit.write_value(&line);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::obs::audit::AuditSink;
    use std::sync::Mutex;

    #[test]
    fn file_lines_go_through_the_writer_and_are_flushed_when_the_log_is_dropped() {
        let path = std::env::temp_dir().join(format!("guard-audit-{}.log", std::process::id()));
        let file = std::fs::File::create(&path).unwrap_or_else(|e| panic!("{e}"));
        let log = AuditLog::new(Some(b"k".to_vec()), AuditSink::File(Mutex::new(file)));
        let v = OutputVerdict {
            decision: OutputDecision::Allow,
            text: None,
            findings: Vec::new(),
            counts: Default::default(),
            blocked_kinds: Vec::new(),
            config_rev: "r".into(),
            request_id: None,
            reason: crate::screens::output::OutputReason::Passed,
            figures: Vec::new(),
            message: None,
            trace: Vec::new(),
        };
        for _ in 0..1000 {
            audit_answer(&log, "p", "h", &v, 1);
        }
        assert_eq!(log.dropped(), 0);
        drop(log);
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        std::fs::remove_file(&path).ok();
        assert_eq!(text.lines().count(), 1000);
        assert!(text.lines().all(|l| l.contains("\"kind\":\"output\"")));
    }
}

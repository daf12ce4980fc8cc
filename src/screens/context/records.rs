//! What the context screen records: documents by decision, and one audit line per request
//! (per document its decision, reason and a keyed hash of its text).

use super::verdict::{ContextVerdict, DocDecision};
use crate::obs::audit::AuditLog;
use crate::obs::metrics::Registry;
use prometheus::IntCounterVec;

/// The context screen's metrics. Cheap to clone.
#[derive(Clone)]
pub struct ContextMetrics {
    enabled: bool,
    documents: IntCounterVec,
}

impl ContextMetrics {
    pub fn new(r: &Registry) -> prometheus::Result<Self> {
        Ok(ContextMetrics {
            enabled: r.enabled(),
            documents: r.counter(
                "guard_context_documents_total",
                "Untrusted documents screened by /v1/screen-context, by product and decision",
                &["product", "decision"],
            )?,
        })
    }

    pub fn record(&self, product: &str, decision: DocDecision) {
        if !self.enabled {
            return;
        }
        self.documents
            .with_label_values(&[product, decision.as_str()])
            .inc();
    }
}

/// One `/v1/screen-context` request: per document its decision and reason, and a keyed
/// hash of its text.
pub fn audit_documents(
    audit: &AuditLog,
    v: &ContextVerdict,
    text_hmacs: &[String],
    latency_micros: u64,
) {
    if audit.is_off() {
        return;
    }
    let docs: Vec<serde_json::Value> = v
        .documents
        .iter()
        .zip(text_hmacs)
        .map(|(d, h)| {
            serde_json::json!({
                "index": d.index,
                "decision": d.decision,
                "reason": d.reason,
                "categories": d.categories,
                "text_hmac": h,
            })
        })
        .collect();
    let line = serde_json::json!({
        "ts": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        "kind": "context",
        "request_id": v.request_id,
        "product": v.product,
        "config_rev": v.config_rev,
        "documents": docs,
        "latency_micros": latency_micros,
    });
    audit.write_value(&line);
}

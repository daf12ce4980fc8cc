//! What `POST /v1/tool-results` records: results by product, tool, outcome and decision,
//! `unknown_call` marks, requests by what the state did with them, and one audit line per
//! request (keyed hashes of ids and contents, never the values). Health changes are the gate's
//! metric (`guard_tool_health_changes_total`), counted wherever a step saw them.

use super::verdict::{ResultsState, ResultsVerdict};
use crate::obs::audit::AuditLog;
use crate::obs::metrics::Registry;
use crate::product::Product;
use crate::screens::context::verdict::DocDecision;
use prometheus::IntCounterVec;

/// The results route's metrics. Cheap to clone.
#[derive(Clone)]
pub struct ResultsMetrics {
    enabled: bool,
    results: IntCounterVec,
    unknown: IntCounterVec,
    requests: IntCounterVec,
}

/// What the state did with a request (the `state` label).
const STATES: [&str; 3] = ["kept", "gate_unavailable", "turn_full"];

impl ResultsMetrics {
    pub fn new(r: &Registry) -> prometheus::Result<Self> {
        Ok(ResultsMetrics {
            enabled: r.enabled(),
            results: r.counter(
                "guard_tool_results_total",
                "Tool results through /v1/tool-results, by product, tool (`other` when not on the allowlist), outcome (`ok`, `failed`) and decision (`pass`, `block`)",
                &["product", "tool", "outcome", "decision"],
            )?,
            unknown: r.counter(
                "guard_tool_results_unknown_call_total",
                "Tool results whose id is no call the gate let go ahead in the turn, by product and tool",
                &["product", "tool"],
            )?,
            requests: r.counter(
                "guard_tool_results_requests_total",
                "/v1/tool-results requests by product and what the state did (`kept`, `gate_unavailable`: fail closed, `turn_full`: refused)",
                &["product", "state"],
            )?,
        })
    }

    /// Create one product's request series at zero.
    pub fn init_product(&self, product: &str) {
        if !self.enabled {
            return;
        }
        for s in STATES {
            self.requests.with_label_values(&[product, s]);
        }
    }

    pub fn record(&self, p: &Product, v: &Result<ResultsVerdict, super::TurnFull>) {
        let Ok(v) = v else {
            return;
        };
        if !self.enabled {
            return;
        }
        for r in &v.results {
            let tool = Some(r.tool.as_str())
                .filter(|t| p.tools.tools.contains_key(*t))
                .unwrap_or("other");
            let outcome = if r.ok { "ok" } else { "failed" };
            let decision = match r.decision {
                DocDecision::Pass => "pass",
                _ => "block",
            };
            self.results
                .with_label_values(&[&v.product, tool, outcome, decision])
                .inc();
            if r.unknown_call {
                self.unknown.with_label_values(&[&v.product, tool]).inc();
            }
        }
        let state = match v.state {
            ResultsState::Kept => STATES[0],
            ResultsState::GateUnavailable => STATES[1],
        };
        self.requests.with_label_values(&[&v.product, state]).inc();
    }

    /// A request refused because the turn's evidence is full.
    pub fn turn_full(&self, product: &str) {
        if self.enabled {
            self.requests.with_label_values(&[product, STATES[2]]).inc();
        }
    }
}

/// One request: per result its decision, reason, whether its call was unknown, and keyed
/// hashes of its id and content (`hmacs`, in order).
pub fn audit_results(
    audit: &AuditLog,
    v: &ResultsVerdict,
    hmacs: &[(String, String)],
    latency_micros: u64,
) {
    if audit.is_off() {
        return;
    }
    let results: Vec<serde_json::Value> = v
        .results
        .iter()
        .zip(hmacs)
        .map(|(r, (id, content))| {
            serde_json::json!({
                "index": r.index,
                "id_hmac": id,
                "tool": r.tool,
                "ok": r.ok,
                "decision": r.decision,
                "reason": r.reason,
                "unknown_call": r.unknown_call,
                "content_hmac": content,
            })
        })
        .collect();
    let line = serde_json::json!({
        "ts": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        "kind": "tool_results",
        "product": v.product,
        "config_rev": v.config_rev,
        "conversation_hmac": audit.text_hash(&v.conversation),
        "turn_hmac": audit.text_hash(&v.turn),
        "state": v.state.as_str(),
        "evidence": v.evidence,
        "unavailable_tools": v.unavailable_tools,
        "results": results,
        "latency_micros": latency_micros,
    });
    audit.write_value(&line);
}

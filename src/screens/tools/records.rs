//! What the gate records: its metrics (decisions by tool and reason, velocity skips, the time
//! of a round) and its decision log line (argument names and keyed hashes of their values,
//! never the values).

use super::policy::ToolPolicy;
use super::verdict::GateVerdict;
use crate::obs::audit::AuditLog;
use crate::obs::metrics::Registry;
use crate::turn::health::HealthChange;
use prometheus::{HistogramVec, IntCounterVec};

/// The gate's metrics. Cheap to clone.
#[derive(Clone)]
pub struct GateMetrics {
    enabled: bool,
    tool_decisions: IntCounterVec,
    tool_velocity: IntCounterVec,
    gate_seconds: HistogramVec,
    tool_health: IntCounterVec,
}

impl GateMetrics {
    pub fn new(r: &Registry) -> prometheus::Result<Self> {
        Ok(GateMetrics {
            enabled: r.enabled(),
            tool_decisions: r.counter(
                "guard_tool_decisions_total",
                "Tool-call gate decisions, by product, tool (`other` when not on the allowlist), decision and reason",
                &["product", "tool", "decision", "reason"],
            )?,
            tool_velocity: r.counter(
                "guard_tool_velocity_total",
                "Tool calls a velocity window skipped (full) or sent to a person (an amount window over its approval threshold), by product and rule",
                &["product", "rule"],
            )?,
            gate_seconds: r.histogram(
                "guard_gate_seconds",
                "Time to decide one round of tool calls, by product and state store",
                &["product", "store"],
            )?,
            tool_health: r.counter(
                "guard_tool_health_changes_total",
                "Changes of a tool's health (`[tool_gate] health`), by product, tool and the state it went to (`unavailable`, `available`); each change is counted once, by the replica whose step saw it",
                &["product", "tool", "state"],
            )?,
        })
    }

    /// Create one product's velocity rules and its round latency at zero, so alerts see zero,
    /// not "no data".
    pub fn init_product(&self, product: &str, policy: &ToolPolicy) {
        if !self.enabled {
            return;
        }
        for rule in &policy.velocity {
            self.tool_velocity.with_label_values(&[product, &rule.id]);
        }
        if policy.health.enabled() {
            for tool in policy.tools.keys() {
                for change in [HealthChange::Unavailable, HealthChange::Available] {
                    self.tool_health
                        .with_label_values(&[product, tool, change.as_str()]);
                }
            }
        }
        self.gate_seconds
            .with_label_values(&[product, policy.store.as_str()]);
    }

    /// One round. Tool names outside the product's allowlist are counted as `other` (the
    /// label set stays closed whatever the model proposes).
    pub fn record(&self, v: &GateVerdict, policy: &ToolPolicy, seconds: f64) {
        if !self.enabled {
            return;
        }
        for d in &v.decisions {
            let tool = d
                .tool
                .as_deref()
                .filter(|t| policy.tools.contains_key(*t))
                .unwrap_or("other");
            self.tool_decisions
                .with_label_values(&[&v.product, tool, d.decision.as_str(), d.reason.as_str()])
                .inc();
            if let Some(rule) = &d.rule {
                self.tool_velocity
                    .with_label_values(&[&v.product, rule])
                    .inc();
            }
        }
        self.gate_seconds
            .with_label_values(&[&v.product, policy.store.as_str()])
            .observe(seconds);
        self.health_changed(&v.product, policy, &v.health_changes);
    }

    /// Health changes a step saw (a round, or a batch of tool results). Tools are always on
    /// the allowlist here: only their windows are read.
    pub fn health_changed(
        &self,
        product: &str,
        policy: &ToolPolicy,
        changes: &[(String, HealthChange)],
    ) {
        if !self.enabled {
            return;
        }
        for (tool, change) in changes {
            if policy.tools.contains_key(tool) {
                self.tool_health
                    .with_label_values(&[product, tool, change.as_str()])
                    .inc();
            }
        }
    }
}

/// The gate's decision log: one line per round, each proposed call with its decision and
/// reason, argument names and keyed hashes of their values (never the values).
pub fn audit_round(audit: &AuditLog, v: &GateVerdict, latency_micros: u64) {
    if audit.is_off() {
        return;
    }
    let calls: Vec<serde_json::Value> = v
        .decisions
        .iter()
        .map(|d| {
            let args: serde_json::Map<String, serde_json::Value> = d
                .arg_values
                .iter()
                .map(|(k, v)| (k.clone(), audit.text_hash(v).into()))
                .collect();
            serde_json::json!({
                "index": d.index,
                "id": d.id,
                "tool": d.tool,
                "decision": d.decision,
                "reason": d.reason,
                "rule": d.rule,
                "reuse_of": d.reuse_of,
                "args_hmac": args,
            })
        })
        .collect();
    let line = serde_json::json!({
        "ts": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        "kind": "tool_calls",
        "product": v.product,
        "config_rev": v.config_rev,
        "conversation_hmac": audit.text_hash(&v.conversation),
        "caller_hmac": v.caller.as_deref().map(|c| audit.text_hash(c)),
        "turn": v.turn,
        "calls": calls,
        "unavailable_tools": v.unavailable_tools,
        "latency_micros": latency_micros,
    });
    audit.write_value(&line);
}

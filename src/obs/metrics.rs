//! Every Prometheus metric of the service, in one place, recorded through named helpers.
//!
//! The registry belongs to the app state (not a global), so parallel tests can assert exact
//! counts. Label values come only from closed sets: the enums' `as_str()`, product names from
//! the validated configuration, and fixed error codes. Never text, never user ids.

use crate::backends::ModelOutcome;
use crate::screens::input::stages::policy::PolicyAction;
use crate::verdict::{FailMode, Reason, Stage, Verdict};
use prometheus::{
    Encoder, Histogram, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge,
    IntGaugeVec, Opts, Registry, TextEncoder,
};
use std::sync::OnceLock;

/// Latency buckets from 1 µs to 10 s: the cheap stages live in microseconds, models in
/// hundreds of milliseconds.
const LATENCY_BUCKETS: &[f64] = &[
    0.000_001, 0.000_005, 0.000_01, 0.000_025, 0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001,
    0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// What the judge decided: the `decision` label of `guard_judge_decisions_total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JudgeDecision {
    Allow,
    Block,
    Unparsable,
    Unavailable,
}

impl JudgeDecision {
    pub const ALL: [JudgeDecision; 4] = [
        JudgeDecision::Allow,
        JudgeDecision::Block,
        JudgeDecision::Unparsable,
        JudgeDecision::Unavailable,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            JudgeDecision::Allow => "allow",
            JudgeDecision::Block => "block",
            JudgeDecision::Unparsable => "unparsable",
            JudgeDecision::Unavailable => "unavailable",
        }
    }
}

#[derive(Clone)]
pub struct Metrics {
    pub registry: Registry,
    /// `GUARD_METRICS=off` turns recording off (to measure what metrics cost); `/metrics` then
    /// shows only build and config info.
    enabled: bool,
    verdicts: IntCounterVec,
    request_seconds: HistogramVec,
    stage_seconds: HistogramVec,
    /// `stage_seconds` per stage, by `Stage as usize`.
    stage_handles: Vec<Histogram>,
    model_calls: IntCounterVec,
    judge_decisions: IntCounterVec,
    cache_requests: IntCounterVec,
    cache_evictions: IntCounterVec,
    cache_entries: IntGaugeVec,
    failures: IntCounterVec,
    policy_hits: IntCounterVec,
    breaker_state: IntGaugeVec,
    model_sockets: IntGaugeVec,
    audit_dropped: IntGauge,
    output_findings: IntCounterVec,
    output_decisions: IntCounterVec,
    tool_decisions: IntCounterVec,
    tool_velocity: IntCounterVec,
    gate_seconds: HistogramVec,
    context_documents: IntCounterVec,
    in_flight: IntGauge,
    http_errors: IntCounterVec,
    config_info: IntGaugeVec,
    reloads: IntCounterVec,
}

/// Verdict counters per (reason, stage): the decision follows from the reason.
const VERDICT_SERIES: usize = Reason::ALL.len() * Stage::ALL.len();

/// One product's handles for what every screen records, resolved once per configuration: a
/// look-up in the registry per request (hashing the labels under a lock) cost the cheap path a
/// few percent. Verdict series are still created on first use, so `/metrics` shows only the
/// (reason, stage) pairs that happened. `None` when recording is off (no series are created).
pub struct ProductMetrics(Option<ProductHandles>);

struct ProductHandles {
    product: String,
    verdicts_vec: IntCounterVec,
    verdicts: [OnceLock<IntCounter>; VERDICT_SERIES],
    cache_hit: IntCounter,
    cache_miss: IntCounter,
    cache_entries: IntGauge,
    seconds_cached: Histogram,
    seconds_fresh: Histogram,
}

impl ProductMetrics {
    pub fn record_verdict(&self, v: &Verdict, seconds: f64) {
        let Some(h) = &self.0 else {
            return;
        };
        let slot = &h.verdicts[v.reason as usize * Stage::ALL.len() + v.stage as usize];
        slot.get_or_init(|| {
            h.verdicts_vec.with_label_values(&[
                &h.product,
                v.decision.as_str(),
                v.reason.as_str(),
                v.stage.as_str(),
            ])
        })
        .inc();
        if v.cached {
            h.seconds_cached.observe(seconds);
        } else {
            h.seconds_fresh.observe(seconds);
        }
    }

    pub fn record_cache(&self, hit: bool, entries: u64) {
        let Some(h) = &self.0 else {
            return;
        };
        if hit {
            h.cache_hit.inc();
        } else {
            h.cache_miss.inc();
        }
        h.cache_entries.set(entries as i64);
    }
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Metrics")
    }
}

fn counter(
    r: &Registry,
    name: &str,
    help: &str,
    labels: &[&str],
) -> prometheus::Result<IntCounterVec> {
    let c = IntCounterVec::new(Opts::new(name, help), labels)?;
    r.register(Box::new(c.clone()))?;
    Ok(c)
}

fn histogram(
    r: &Registry,
    name: &str,
    help: &str,
    labels: &[&str],
) -> prometheus::Result<HistogramVec> {
    let h = HistogramVec::new(
        HistogramOpts::new(name, help).buckets(LATENCY_BUCKETS.to_vec()),
        labels,
    )?;
    r.register(Box::new(h.clone()))?;
    Ok(h)
}

impl Metrics {
    pub fn new() -> prometheus::Result<Self> {
        Self::with_recording(std::env::var("GUARD_METRICS").map_or(true, |v| v != "off"))
    }

    pub fn with_recording(enabled: bool) -> prometheus::Result<Self> {
        let r = Registry::new();
        let build = IntGaugeVec::new(
            Opts::new("guard_build_info", "Build information"),
            &["version"],
        )?;
        r.register(Box::new(build.clone()))?;
        build.with_label_values(&[env!("CARGO_PKG_VERSION")]).set(1);
        let in_flight = IntGauge::new(
            "guard_in_flight_requests",
            "Screen requests being processed",
        )?;
        r.register(Box::new(in_flight.clone()))?;
        let cache_entries = IntGaugeVec::new(
            Opts::new("guard_cache_entries", "Cached verdicts"),
            &["product"],
        )?;
        r.register(Box::new(cache_entries.clone()))?;
        let config_info = IntGaugeVec::new(
            Opts::new(
                "guard_config_info",
                "Loaded configuration revision per product",
            ),
            &["product", "config_rev"],
        )?;
        r.register(Box::new(config_info.clone()))?;
        let mut m = Metrics {
            enabled,
            verdicts: counter(
                &r,
                "guard_verdicts_total",
                "Verdicts by product, decision, reason and deciding stage",
                &["product", "decision", "reason", "stage"],
            )?,
            request_seconds: histogram(
                &r,
                "guard_request_duration_seconds",
                "Whole screen latency",
                &["product", "cached"],
            )?,
            stage_seconds: histogram(
                &r,
                "guard_stage_duration_seconds",
                "Latency of each stage",
                &["stage"],
            )?,
            stage_handles: Vec::new(),
            model_calls: counter(
                &r,
                "guard_model_calls_total",
                "Guard and judge model calls by backend and outcome",
                &["backend", "outcome"],
            )?,
            judge_decisions: counter(
                &r,
                "guard_judge_decisions_total",
                "Judge outcomes per product",
                &["product", "decision"],
            )?,
            cache_requests: counter(
                &r,
                "guard_cache_requests_total",
                "Cache lookups",
                &["product", "result"],
            )?,
            cache_evictions: counter(
                &r,
                "guard_cache_evictions_total",
                "Cache entries evicted (size or TTL)",
                &["product"],
            )?,
            cache_entries,
            failures: counter(
                &r,
                "guard_fail_total",
                "Checks that could not answer, by failure policy",
                &["product", "stage", "mode"],
            )?,
            policy_hits: counter(
                &r,
                "guard_policy_hits_total",
                "Product policy rules that matched, by rule and action",
                &["product", "rule", "action"],
            )?,
            breaker_state: {
                let g = IntGaugeVec::new(
                    Opts::new(
                        "guard_breaker_state",
                        "Circuit breaker of each remote backend: 0 closed, 1 open, 2 half-open",
                    ),
                    &["product", "role"],
                )?;
                r.register(Box::new(g.clone()))?;
                g
            },
            model_sockets: {
                let g = IntGaugeVec::new(
                    Opts::new(
                        "guard_model_sockets",
                        "Sockets open to each remote backend (in use or idle); never above its max_concurrent",
                    ),
                    &["product", "role"],
                )?;
                r.register(Box::new(g.clone()))?;
                g
            },
            tool_decisions: counter(
                &r,
                "guard_tool_decisions_total",
                "Tool-call gate decisions, by product, tool (`other` when not on the allowlist), decision and reason",
                &["product", "tool", "decision", "reason"],
            )?,
            tool_velocity: counter(
                &r,
                "guard_tool_velocity_total",
                "Tool calls skipped because a velocity window was full, by product and rule",
                &["product", "rule"],
            )?,
            gate_seconds: histogram(
                &r,
                "guard_gate_seconds",
                "Time to decide one round of tool calls, by product and state store",
                &["product", "store"],
            )?,
            context_documents: counter(
                &r,
                "guard_context_documents_total",
                "Untrusted documents screened by /v1/screen-context, by product and decision",
                &["product", "decision"],
            )?,
            audit_dropped: {
                let g = IntGauge::new(
                    "guard_audit_dropped_lines",
                    "Audit lines dropped because the writer thread was too far behind",
                )?;
                r.register(Box::new(g.clone()))?;
                g
            },
            output_findings: counter(
                &r,
                "guard_output_findings_total",
                "Values masked by the output screen, by kind",
                &["product", "kind"],
            )?,
            output_decisions: counter(
                &r,
                "guard_output_decisions_total",
                "Output screen decisions",
                &["product", "decision"],
            )?,
            in_flight,
            http_errors: counter(
                &r,
                "guard_http_errors_total",
                "Error responses by stable error code",
                &["code"],
            )?,
            config_info,
            reloads: counter(
                &r,
                "guard_config_reloads_total",
                "Configuration reloads",
                &["result"],
            )?,
            registry: r,
        };
        // Closed label sets are created at zero up front, so rates and alerts see every series
        // from the first scrape instead of "no data".
        if enabled {
            m.stage_handles = Stage::ALL
                .iter()
                .map(|stage| m.stage_seconds.with_label_values(&[stage.as_str()]))
                .collect();
            let backends = crate::backends::BackendKind::ALL.map(|k| k.as_str());
            for backend in backends.iter().chain(std::iter::once(&"judge")) {
                for outcome in ModelOutcome::ALL {
                    m.model_calls
                        .with_label_values(&[backend, outcome.as_str()]);
                }
            }
            for result in ["ok", "error"] {
                m.reloads.with_label_values(&[result]);
            }
            for code in crate::http::error::ApiError::SCREEN_CODES {
                m.http_errors.with_label_values(&[code]);
            }
        }
        Ok(m)
    }

    /// Create every series of one product at zero, its policy rules' included.
    pub fn init_product(&self, product: &str, rules: &[(&str, PolicyAction)]) {
        if !self.enabled {
            return;
        }
        for kind in crate::redact::Kind::ALL {
            self.output_findings
                .with_label_values(&[product, kind.as_str()]);
        }
        for decision in ["allow", "block"] {
            self.output_decisions
                .with_label_values(&[product, decision]);
        }
        for (rule, action) in rules {
            self.policy_hits
                .with_label_values(&[product, rule, action.as_str()]);
        }
        // Cache requests and entries start at zero through `for_product`'s handles.
        self.cache_evictions.with_label_values(&[product]);
        for decision in JudgeDecision::ALL {
            self.judge_decisions
                .with_label_values(&[product, decision.as_str()]);
        }
        for stage in crate::verdict::Stage::ALL {
            for mode in [FailMode::Open, FailMode::Closed] {
                self.failures
                    .with_label_values(&[product, stage.as_str(), mode.as_str()]);
            }
        }
        self.verdicts
            .with_label_values(&[product, "allow", "passed", "pipeline"]);
        for cached in ["true", "false"] {
            self.request_seconds.with_label_values(&[product, cached]);
        }
    }

    /// One product's handles for the metrics every screen records (see [`ProductMetrics`]).
    pub fn for_product(&self, product: &str) -> ProductMetrics {
        if !self.enabled {
            return ProductMetrics(None);
        }
        let cache = |result: &str| self.cache_requests.with_label_values(&[product, result]);
        let seconds = |cached: &str| self.request_seconds.with_label_values(&[product, cached]);
        ProductMetrics(Some(ProductHandles {
            product: product.to_string(),
            verdicts_vec: self.verdicts.clone(),
            verdicts: std::array::from_fn(|_| OnceLock::new()),
            cache_hit: cache("hit"),
            cache_miss: cache("miss"),
            cache_entries: self.cache_entries.with_label_values(&[product]),
            seconds_cached: seconds("true"),
            seconds_fresh: seconds("false"),
        }))
    }

    pub fn record_stage(&self, stage: Stage, seconds: f64) {
        if !self.enabled {
            return;
        }
        if let Some(h) = self.stage_handles.get(stage as usize) {
            h.observe(seconds);
        }
    }

    /// `backend` is a [`crate::backends::BackendKind`] name or `judge`.
    pub fn record_model_call(&self, backend: &'static str, outcome: ModelOutcome) {
        if !self.enabled {
            return;
        }
        self.model_calls
            .with_label_values(&[backend, outcome.as_str()])
            .inc();
    }

    pub fn record_judge(&self, product: &str, decision: JudgeDecision) {
        if !self.enabled {
            return;
        }
        self.judge_decisions
            .with_label_values(&[product, decision.as_str()])
            .inc();
    }

    /// `rule` is a rule id from the product's validated policy file.
    pub fn record_policy_hit(&self, product: &str, rule: &str, action: PolicyAction) {
        if !self.enabled {
            return;
        }
        self.policy_hits
            .with_label_values(&[product, rule, action.as_str()])
            .inc();
    }

    pub fn record_output(&self, product: &str, v: &crate::screens::output::OutputVerdict) {
        if !self.enabled {
            return;
        }
        for (kind, n) in &v.counts {
            self.output_findings
                .with_label_values(&[product, kind.as_str()])
                .inc_by(*n as u64);
        }
        self.output_decisions
            .with_label_values(&[product, v.decision.as_str()])
            .inc();
    }

    /// One round of the tool-call gate. Tool names outside the product's allowlist are counted
    /// as `other` (the label set stays closed whatever the model proposes).
    pub fn record_gate(
        &self,
        v: &crate::screens::tools::GateVerdict,
        policy: &crate::screens::tools::policy::ToolPolicy,
        seconds: f64,
    ) {
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
    }

    pub fn record_context(&self, product: &str, decision: crate::screens::context::DocDecision) {
        if !self.enabled {
            return;
        }
        self.context_documents
            .with_label_values(&[product, decision.as_str()])
            .inc();
    }

    pub fn set_audit_dropped(&self, n: u64) {
        self.audit_dropped.set(n as i64);
    }

    /// `role`: `guard` or `judge`.
    pub fn set_breaker(
        &self,
        product: &str,
        role: &str,
        state: crate::backends::breaker::BreakerState,
    ) {
        use crate::backends::breaker::BreakerState as S;
        let v = match state {
            S::Closed => 0,
            S::Open => 1,
            S::HalfOpen => 2,
        };
        self.breaker_state
            .with_label_values(&[product, role])
            .set(v);
    }

    /// `role`: `guard` or `judge`.
    pub fn set_model_sockets(&self, product: &str, role: &str, open: usize) {
        self.model_sockets
            .with_label_values(&[product, role])
            .set(open as i64);
    }

    pub fn record_eviction(&self, product: &str) {
        if !self.enabled {
            return;
        }
        self.cache_evictions.with_label_values(&[product]).inc();
    }

    pub fn record_failure(&self, product: &str, stage: Stage, mode: FailMode) {
        if !self.enabled {
            return;
        }
        self.failures
            .with_label_values(&[product, stage.as_str(), mode.as_str()])
            .inc();
    }

    pub fn in_flight(&self) -> InFlight<'_> {
        self.in_flight.inc();
        InFlight(&self.in_flight)
    }

    pub fn record_http_error(&self, code: &'static str) {
        if !self.enabled {
            return;
        }
        self.http_errors.with_label_values(&[code]).inc();
    }

    pub fn set_config(&self, products: &[(String, String)]) {
        self.config_info.reset();
        for (name, rev) in products {
            self.config_info.with_label_values(&[name, rev]).set(1);
        }
    }

    pub fn record_reload(&self, ok: bool) {
        if !self.enabled {
            return;
        }
        self.reloads
            .with_label_values(&[if ok { "ok" } else { "error" }])
            .inc();
    }

    /// The Prometheus text exposition of every metric.
    pub fn render(&self) -> String {
        let mut buf = Vec::new();
        if TextEncoder::new()
            .encode(&self.registry.gather(), &mut buf)
            .is_err()
        {
            return String::new();
        }
        String::from_utf8(buf).unwrap_or_default()
    }
}

/// Decrements the in-flight gauge when dropped.
pub struct InFlight<'a>(&'a IntGauge);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.dec();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::{Decision, Reason};

    fn verdict() -> Verdict {
        Verdict {
            decision: Decision::Block,
            reason: Reason::UnsupportedLanguage,
            stage: Stage::Banglish,
            language: "bn-Latn".into(),
            reply: None,
            categories: Vec::new(),
            score: None,
            cached: true,
            fail_mode: None,
            config_rev: String::new(),
            request_id: None,
            trace: Vec::new(),
        }
    }

    /// The per-product handles count into the same series the registry exports; with
    /// recording off they create none (`/metrics` then shows only build and config info).
    #[test]
    fn product_handles_record_and_recording_off_creates_no_series() {
        let on = Metrics::with_recording(true).unwrap_or_else(|e| panic!("{e}"));
        let p = on.for_product("wallet");
        p.record_verdict(&verdict(), 0.001);
        p.record_verdict(&verdict(), 0.001);
        p.record_cache(true, 7);
        let text = on.render();
        assert!(
            text.contains(r#"guard_verdicts_total{decision="block",product="wallet",reason="unsupported_language",stage="banglish"} 2"#),
            "{text}"
        );
        assert!(text.contains(r#"guard_cache_requests_total{product="wallet",result="hit"} 1"#));
        assert!(text.contains(r#"guard_cache_entries{product="wallet"} 7"#));
        assert!(text
            .contains(r#"guard_request_duration_seconds_count{cached="true",product="wallet"} 2"#));

        let off = Metrics::with_recording(false).unwrap_or_else(|e| panic!("{e}"));
        let p = off.for_product("wallet");
        p.record_verdict(&verdict(), 0.001);
        p.record_cache(true, 7);
        let text = off.render();
        assert!(!text.contains("product=\"wallet\""), "{text}");
    }
}

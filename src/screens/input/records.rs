//! What the input screen records: its metrics (verdicts, stages, model calls, the judge, the
//! cache, failures, policy hits, breakers) registered with the service's registry, and its
//! audit line, written to the service's audit log.

use crate::backends::breaker::BreakerState;
use crate::backends::{BackendKind, ModelOutcome};
use crate::obs::audit::{with_scratch, AuditLog, PreparedLine, Timestamp};
use crate::obs::metrics::Registry;
use crate::screens::input::stages::policy::PolicyAction;
use crate::verdict::{FailMode, Reason, Stage, Verdict};
use prometheus::{Histogram, HistogramVec, IntCounter, IntCounterVec, IntGauge, IntGaugeVec};
use std::sync::OnceLock;

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

/// The input screen's metrics. Cheap to clone (the handles are shared).
#[derive(Clone)]
pub struct InputMetrics {
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
}

impl std::fmt::Debug for InputMetrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("InputMetrics")
    }
}

impl InputMetrics {
    pub fn new(r: &Registry) -> prometheus::Result<Self> {
        let mut m = InputMetrics {
            enabled: r.enabled(),
            verdicts: r.counter(
                "guard_verdicts_total",
                "Verdicts by product, decision, reason and deciding stage",
                &["product", "decision", "reason", "stage"],
            )?,
            request_seconds: r.histogram(
                "guard_request_duration_seconds",
                "Whole screen latency",
                &["product", "cached"],
            )?,
            stage_seconds: r.histogram(
                "guard_stage_duration_seconds",
                "Latency of each stage",
                &["stage"],
            )?,
            stage_handles: Vec::new(),
            model_calls: r.counter(
                "guard_model_calls_total",
                "Guard and judge model calls by backend and outcome",
                &["backend", "outcome"],
            )?,
            judge_decisions: r.counter(
                "guard_judge_decisions_total",
                "Judge outcomes per product",
                &["product", "decision"],
            )?,
            cache_requests: r.counter(
                "guard_cache_requests_total",
                "Cache lookups",
                &["product", "result"],
            )?,
            cache_evictions: r.counter(
                "guard_cache_evictions_total",
                "Cache entries evicted (size or TTL)",
                &["product"],
            )?,
            cache_entries: r.gauges("guard_cache_entries", "Cached verdicts", &["product"])?,
            failures: r.counter(
                "guard_fail_total",
                "Checks that could not answer, by failure policy",
                &["product", "stage", "mode"],
            )?,
            policy_hits: r.counter(
                "guard_policy_hits_total",
                "Product policy rules that matched, by rule and action",
                &["product", "rule", "action"],
            )?,
            breaker_state: r.gauges(
                "guard_breaker_state",
                "Circuit breaker of each remote backend: 0 closed, 1 open, 2 half-open",
                &["product", "role"],
            )?,
            model_sockets: r.gauges(
                "guard_model_sockets",
                "Sockets open to each remote backend (in use or idle); never above its max_concurrent",
                &["product", "role"],
            )?,
        };
        if m.enabled {
            m.init_closed_sets();
        }
        Ok(m)
    }

    /// On a registry of their own: for one-shot runs (evals, benchmarks, tests) that read no
    /// metrics, or read only these.
    pub fn with_recording(enabled: bool) -> prometheus::Result<Self> {
        Self::new(&Registry::new(enabled))
    }

    /// Closed label sets are created at zero up front, so rates and alerts see every series
    /// from the first scrape instead of "no data".
    fn init_closed_sets(&mut self) {
        self.stage_handles = Stage::ALL
            .iter()
            .map(|stage| self.stage_seconds.with_label_values(&[stage.as_str()]))
            .collect();
        let backends = BackendKind::ALL.map(|k| k.as_str());
        for backend in backends.iter().chain(std::iter::once(&"judge")) {
            for outcome in ModelOutcome::ALL {
                self.model_calls
                    .with_label_values(&[backend, outcome.as_str()]);
            }
        }
    }

    /// Create every series of one product at zero, its policy rules' included.
    pub fn init_product(&self, product: &str, rules: &[(&str, PolicyAction)]) {
        if !self.enabled {
            return;
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
        for stage in Stage::ALL {
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

    /// `backend` is a [`BackendKind`] name or `judge`.
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

    /// `role`: `guard` or `judge`.
    pub fn set_breaker(&self, product: &str, role: &str, state: BreakerState) {
        let v = match state {
            BreakerState::Closed => 0,
            BreakerState::Open => 1,
            BreakerState::HalfOpen => 2,
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

/// The audit line of one verdict: the text as a keyed hash, never the text.
pub fn audit_verdict(
    audit: &AuditLog,
    product: &str,
    text: &str,
    v: &Verdict,
    latency_micros: u64,
) {
    if audit.is_off() {
        return;
    }
    let hex = audit.text_hmac(text);
    let ts = Timestamp::now();
    with_scratch(|buf| {
        if verdict_line(buf, product, hex.as_str(), v, latency_micros, ts.as_str()) {
            audit.write_line(buf);
        }
    });
}

/// [`audit_verdict`] for a verdict answered again and again (a cached answer): the line is
/// the same but for its latency and time, so the rest (the text's keyed hash included) is
/// written once into `prepared` and copied from there on later answers.
pub fn audit_cached(
    audit: &AuditLog,
    prepared: &OnceLock<PreparedLine>,
    product: &str,
    text: &str,
    v: &Verdict,
    latency_micros: u64,
) {
    if audit.is_off() {
        return;
    }
    let parts = prepared.get_or_init(|| {
        let hex = audit.text_hmac(text);
        let mut line = Vec::new();
        verdict_line(&mut line, product, hex.as_str(), v, 0, "");
        audit.prepare(&line)
    });
    if !audit.write_prepared(parts, latency_micros) {
        // Prepared by another log (another key): not this log's line.
        audit_verdict(audit, product, text, v, latency_micros);
    }
}

/// One screen's audit line into `buf`; false if it could not be serialised (not expected).
fn verdict_line(
    buf: &mut Vec<u8>,
    product: &str,
    text_hmac: &str,
    v: &Verdict,
    latency_micros: u64,
    ts: &str,
) -> bool {
    // Serialised from a struct (keys in the order `json!` gave them, so the lines are
    // unchanged): building a map of values per request cost the cheap path a few percent.
    #[derive(serde::Serialize)]
    struct Line<'a> {
        cached: bool,
        categories: &'a [String],
        config_rev: &'a str,
        decision: crate::verdict::Decision,
        fail_mode: Option<crate::verdict::FailMode>,
        language: &'a str,
        latency_micros: u64,
        product: &'a str,
        reason: crate::verdict::Reason,
        request_id: Option<&'a str>,
        score: Option<f32>,
        stage: crate::verdict::Stage,
        text_hmac: &'a str,
        ts: &'a str,
    }
    let line = Line {
        cached: v.cached,
        categories: &v.categories,
        config_rev: &v.config_rev,
        decision: v.decision,
        fail_mode: v.fail_mode,
        language: &v.language,
        latency_micros,
        product,
        reason: v.reason,
        request_id: v.request_id.as_deref(),
        score: v.score,
        stage: v.stage,
        text_hmac,
        ts,
    };
    serde_json::to_writer(buf, &line).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::obs::audit::AuditSink;
    use crate::verdict::Decision;
    use std::sync::Mutex;

    fn metric_verdict() -> Verdict {
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
        let registry = Registry::new(true);
        let on = InputMetrics::new(&registry).unwrap_or_else(|e| panic!("{e}"));
        let p = on.for_product("wallet");
        p.record_verdict(&metric_verdict(), 0.001);
        p.record_verdict(&metric_verdict(), 0.001);
        p.record_cache(true, 7);
        let text = registry.render();
        assert!(
            text.contains(r#"guard_verdicts_total{decision="block",product="wallet",reason="unsupported_language",stage="banglish"} 2"#),
            "{text}"
        );
        assert!(text.contains(r#"guard_cache_requests_total{product="wallet",result="hit"} 1"#));
        assert!(text.contains(r#"guard_cache_entries{product="wallet"} 7"#));
        assert!(text
            .contains(r#"guard_request_duration_seconds_count{cached="true",product="wallet"} 2"#));

        let registry = Registry::new(false);
        let off = InputMetrics::new(&registry).unwrap_or_else(|e| panic!("{e}"));
        let p = off.for_product("wallet");
        p.record_verdict(&metric_verdict(), 0.001);
        p.record_cache(true, 7);
        let text = registry.render();
        assert!(!text.contains("product=\"wallet\""), "{text}");
    }

    fn verdict(language: &str, categories: &[&str]) -> Verdict {
        Verdict {
            decision: crate::verdict::Decision::Block,
            reason: crate::verdict::Reason::UnsupportedLanguage,
            stage: crate::verdict::Stage::Banglish,
            language: language.into(),
            reply: None,
            categories: categories.iter().map(|c| c.to_string()).collect(),
            score: Some(0.25),
            cached: true,
            fail_mode: None,
            config_rev: "rev \"1\"".into(),
            request_id: None,
            trace: Vec::new(),
        }
    }

    /// A line with its time replaced, so two lines written apart in time compare.
    fn timeless(line: &str) -> String {
        let mut v: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        assert!(v["ts"].as_str().is_some_and(|t| t.len() == 24), "{line}");
        v["ts"] = "T".into();
        v.to_string()
    }

    #[test]
    fn a_prepared_line_is_the_line_record_writes() {
        let log = AuditLog::new(
            Some(b"k".to_vec()),
            AuditSink::Memory(Mutex::new(Vec::new())),
        );
        // Values that contain the text the line is cut at must not move the cut.
        let tricky = [
            verdict("en", &[]),
            verdict(
                ",\"latency_micros\":0,",
                &["\"}", "a,\"latency_micros\":0,b"],
            ),
            verdict("bn", &["\"ts\":\"\"}"]),
        ];
        for (i, v) in tricky.iter().enumerate() {
            let prepared = std::sync::OnceLock::new();
            for micros in [0, 7, u64::MAX] {
                audit_verdict(&log, &format!("p{i}"), "the text", v, micros);
                audit_cached(&log, &prepared, &format!("p{i}"), "the text", v, micros);
            }
        }
        let lines = log.memory_lines();
        assert_eq!(lines.len(), 18);
        for pair in lines.chunks(2) {
            assert_eq!(timeless(&pair[0]), timeless(&pair[1]));
        }
        assert!(lines[3].contains(&format!("\"latency_micros\":{},", 7)));
    }

    #[test]
    fn a_line_prepared_by_another_log_is_not_copied() {
        let sink = || AuditSink::Memory(Mutex::new(Vec::new()));
        let (one, other) = (
            AuditLog::new(Some(b"k1".to_vec()), sink()),
            AuditLog::new(Some(b"k2".to_vec()), sink()),
        );
        let v = verdict("en", &[]);
        let prepared = std::sync::OnceLock::new();
        audit_cached(&one, &prepared, "p", "the text", &v, 1);
        audit_cached(&other, &prepared, "p", "the text", &v, 1);
        audit_verdict(&other, "p", "the text", &v, 1);
        let (a, b) = (one.memory_lines(), other.memory_lines());
        assert_eq!(b.len(), 2);
        assert_eq!(
            timeless(&b[0]),
            timeless(&b[1]),
            "the other log hashes with its own key"
        );
        assert_ne!(timeless(&a[0]), timeless(&b[0]));
    }
}

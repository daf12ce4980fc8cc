//! The metrics registry. Each part of the service registers its own records with it
//! (`InputMetrics::new(&registry)`, `GateMetrics::new(&registry)`, ...), so this module knows
//! no screen and no verdict.
//!
//! The registry belongs to the app state (not a global), so parallel tests can assert exact
//! counts. Names are `guard_<thing>_<unit>[_total]`; label values come only from closed sets:
//! the enums' `as_str()`, product names from the validated configuration, and fixed error
//! codes. Never text, never user ids.

use prometheus::proto::MetricFamily;
use prometheus::{
    Encoder, HistogramOpts, HistogramVec, IntCounterVec, IntGauge, IntGaugeVec, Opts, TextEncoder,
};

/// Latency buckets from 1 µs to 10 s: the cheap stages live in microseconds, models in
/// hundreds of milliseconds.
pub const LATENCY_BUCKETS: &[f64] = &[
    0.000_001, 0.000_005, 0.000_01, 0.000_025, 0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001,
    0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// The Prometheus registry and whether recording is on (`GUARD_METRICS=off` turns it off, to
/// measure what metrics cost; `/metrics` then shows only build and configuration info). Cheap
/// to clone: clones share the registry.
#[derive(Clone)]
pub struct Registry {
    inner: prometheus::Registry,
    enabled: bool,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("enabled", &self.enabled)
            .finish()
    }
}

impl Registry {
    pub fn new(enabled: bool) -> Self {
        Registry {
            inner: prometheus::Registry::new(),
            enabled,
        }
    }

    /// Whether records are kept. Series that describe the service (build, configuration) are
    /// kept either way.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    pub fn counter(
        &self,
        name: &str,
        help: &str,
        labels: &[&str],
    ) -> prometheus::Result<IntCounterVec> {
        let c = IntCounterVec::new(Opts::new(name, help), labels)?;
        self.inner.register(Box::new(c.clone()))?;
        Ok(c)
    }

    /// A latency histogram with [`LATENCY_BUCKETS`].
    pub fn histogram(
        &self,
        name: &str,
        help: &str,
        labels: &[&str],
    ) -> prometheus::Result<HistogramVec> {
        let opts = HistogramOpts::new(name, help).buckets(LATENCY_BUCKETS.to_vec());
        let h = HistogramVec::new(opts, labels)?;
        self.inner.register(Box::new(h.clone()))?;
        Ok(h)
    }

    pub fn gauges(
        &self,
        name: &str,
        help: &str,
        labels: &[&str],
    ) -> prometheus::Result<IntGaugeVec> {
        let g = IntGaugeVec::new(Opts::new(name, help), labels)?;
        self.inner.register(Box::new(g.clone()))?;
        Ok(g)
    }

    pub fn gauge(&self, name: &str, help: &str) -> prometheus::Result<IntGauge> {
        let g = IntGauge::new(name, help)?;
        self.inner.register(Box::new(g.clone()))?;
        Ok(g)
    }

    /// Every metric family, as `/metrics` exports them.
    pub fn gather(&self) -> Vec<MetricFamily> {
        self.inner.gather()
    }

    /// The Prometheus text exposition of every metric.
    pub fn render(&self) -> String {
        let mut buf = Vec::new();
        if TextEncoder::new().encode(&self.gather(), &mut buf).is_err() {
            return String::new();
        }
        String::from_utf8(buf).unwrap_or_default()
    }
}

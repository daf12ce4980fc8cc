//! What the HTTP service records about itself: build and configuration info, requests in
//! flight, error responses by code, reloads and audit lines dropped.

use super::error::ApiError;
use crate::obs::metrics::Registry;
use prometheus::{IntCounterVec, IntGauge, IntGaugeVec};

/// The service's own metrics. Cheap to clone.
#[derive(Clone)]
pub struct HttpMetrics {
    enabled: bool,
    in_flight: IntGauge,
    http_errors: IntCounterVec,
    config_info: IntGaugeVec,
    reloads: IntCounterVec,
    audit_dropped: IntGauge,
}

impl HttpMetrics {
    pub fn new(r: &Registry) -> prometheus::Result<Self> {
        let build = r.gauges("guard_build_info", "Build information", &["version"])?;
        build.with_label_values(&[env!("CARGO_PKG_VERSION")]).set(1);
        let m = HttpMetrics {
            enabled: r.enabled(),
            in_flight: r.gauge(
                "guard_in_flight_requests",
                "Screen requests being processed",
            )?,
            http_errors: r.counter(
                "guard_http_errors_total",
                "Error responses by stable error code",
                &["code"],
            )?,
            config_info: r.gauges(
                "guard_config_info",
                "Loaded configuration revision per product",
                &["product", "config_rev"],
            )?,
            reloads: r.counter(
                "guard_config_reloads_total",
                "Configuration reloads",
                &["result"],
            )?,
            audit_dropped: r.gauge(
                "guard_audit_dropped_lines",
                "Audit lines dropped because the writer thread was too far behind",
            )?,
        };
        // Closed label sets start at zero, so rates and alerts see them from the first scrape.
        if m.enabled {
            for result in ["ok", "error"] {
                m.reloads.with_label_values(&[result]);
            }
            for code in ApiError::CODES {
                m.http_errors.with_label_values(&[code]);
            }
        }
        Ok(m)
    }

    /// Counts a request in flight until the guard is dropped.
    pub fn in_flight(&self) -> InFlight {
        self.in_flight.inc();
        InFlight(self.in_flight.clone())
    }

    pub fn record_http_error(&self, code: &str) {
        if !self.enabled {
            return;
        }
        self.http_errors.with_label_values(&[code]).inc();
    }

    /// The revision of every loaded product (kept whether recording is on or not).
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

    pub fn set_audit_dropped(&self, n: u64) {
        self.audit_dropped.set(n as i64);
    }
}

/// Decrements the in-flight gauge when dropped.
pub struct InFlight(IntGauge);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.dec();
    }
}

//! What the HTTP service records about itself: build and configuration info, requests in
//! flight, error responses by route and code, the gateway adapters' answers, reloads and audit
//! lines dropped.

use crate::obs::metrics::Registry;
use prometheus::{IntCounter, IntCounterVec, IntGauge, IntGaugeVec};

/// The service's own metrics. Cheap to clone.
#[derive(Clone)]
pub struct HttpMetrics {
    enabled: bool,
    in_flight: IntGauge,
    http_errors: IntCounterVec,
    /// `guard_gateway_answers_total`, one series per adapter and action, resolved once.
    gateway_answers: Vec<IntCounter>,
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
                "Error responses by route and stable error code",
                &["route", "code"],
            )?,
            gateway_answers: {
                let v = r.counter(
                    "guard_gateway_answers_total",
                    "Answers of the gateway adapters by adapter and action (allow, mask, block)",
                    &["adapter", "action"],
                )?;
                // Closed label sets start at zero, so rates and alerts see them at once.
                Adapter::ALL
                    .iter()
                    .flat_map(|a| Action::ALL.map(|x| (a.as_str(), x.as_str())))
                    .map(|(a, x)| v.with_label_values(&[a, x]))
                    .collect()
            },
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
            for route in API_ROUTES {
                m.http_errors.with_label_values(&[route, "overloaded"]);
            }
        }
        Ok(m)
    }

    /// Counts a request in flight until the guard is dropped.
    pub fn in_flight(&self) -> InFlight {
        self.in_flight.inc();
        InFlight(self.in_flight.clone())
    }

    /// One error answered on `route` (a route table pattern, or `other`).
    pub fn record_http_error(&self, route: &str, code: &str) {
        if !self.enabled {
            return;
        }
        self.http_errors.with_label_values(&[route, code]).inc();
    }

    /// One answer of a gateway adapter.
    pub fn record_gateway(&self, adapter: Adapter, action: Action) {
        if !self.enabled {
            return;
        }
        let at = adapter as usize * Action::ALL.len() + action as usize;
        if let Some(counter) = self.gateway_answers.get(at) {
            counter.inc();
        }
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

/// The API routes whose `overloaded` errors are shown from the first scrape (alerts rate them).
const API_ROUTES: &[&str] = &[
    "/v1/screen",
    "/v1/screen-output",
    "/v1/screen-output/stream",
    "/v1/tool-calls",
    "/v1/screen-context",
];

/// Decrements the in-flight gauge when dropped.
pub struct InFlight(IntGauge);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.dec();
    }
}

/// The gateway adapters: the closed label set of `guard_gateway_answers_total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Adapter {
    /// LiteLLM's Generic Guardrail API.
    LiteLlm,
    /// The NeMo Guardrails microservice's `POST /v1/guardrail/checks`.
    NemoChecks,
    /// The open-source NeMo Guardrails server's `POST /v1/checks`.
    NemoOss,
    /// The Guardrail Webhook API (kgateway, agentgateway, Gloo).
    Webhook,
}

impl Adapter {
    pub const ALL: [Adapter; 4] = [
        Adapter::LiteLlm,
        Adapter::NemoChecks,
        Adapter::NemoOss,
        Adapter::Webhook,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Adapter::LiteLlm => "litellm",
            Adapter::NemoChecks => "nemo",
            Adapter::NemoOss => "nemo_oss",
            Adapter::Webhook => "webhook",
        }
    }
}

/// What an adapter's answer did: the closed label set of `guard_gateway_answers_total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Allow,
    Mask,
    Block,
}

impl Action {
    pub const ALL: [Action; 3] = [Action::Allow, Action::Mask, Action::Block];

    pub fn as_str(self) -> &'static str {
        match self {
            Action::Allow => "allow",
            Action::Mask => "mask",
            Action::Block => "block",
        }
    }
}

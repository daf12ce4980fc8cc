//! What the HTTP service records about itself: build and configuration info, requests in
//! flight, error responses by route and code, the gateway adapters' answers, reloads and audit
//! lines dropped.

use super::error::ApiError;
use super::gateway::{Action, Adapter};
use super::state::AppState;
use crate::obs::metrics::Registry;
use actix_web::dev::ServiceResponse;
use actix_web::web;
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

/// Count an error response, whichever route or layer answered it, and close its connection
/// after it: the route is the pattern of the route table that matched (a closed set), `other`
/// for none; the code is the `ApiError`'s. Every route's errors pass here (the app wraps every
/// route in it), so none can forget to.
///
/// An error can come before the body was read (a stream's unknown product, a full budget, a
/// body over the limit); kept alive, such a connection would wait for the rest of a body its
/// client need never send, so it is closed instead.
pub fn end_on_error<B>(res: &mut ServiceResponse<B>) {
    if res.response().error().is_some() {
        let head = res.response_mut().head_mut();
        head.set_connection_type(actix_web::http::ConnectionType::Close);
    }
    let Some(code) = res
        .response()
        .error()
        .and_then(|e| e.as_error::<ApiError>())
        .map(ApiError::code)
    else {
        return;
    };
    let req = res.request();
    if let Some(state) = req.app_data::<web::Data<AppState>>() {
        let route = req.match_pattern();
        let route = route.as_deref().unwrap_or("other");
        state.http.record_http_error(route, code);
    }
}

/// Decrements the in-flight gauge when dropped.
pub struct InFlight(IntGauge);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.dec();
    }
}

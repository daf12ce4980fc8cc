//! The operator's routes: `/metrics` (Prometheus text), `/healthz`, `/readyz` (products and
//! breakers), `/admin/reload` (admin token), and the fallback (`404`, or `405` on a known
//! route with the wrong method).

use super::error::ApiError;
use super::state::AppState;
use actix_web::http::header;
use actix_web::{web, HttpRequest, HttpResponse};

pub async fn metrics(state: web::Data<AppState>) -> HttpResponse {
    state.http.set_audit_dropped(state.audit.dropped());
    let screener = state.screener.load();
    let input = &screener.records().input;
    for p in screener.config.products.values() {
        for (role, breaker) in [
            ("guard", &p.input.guard.breaker),
            ("judge", &p.input.judge.breaker),
        ] {
            if let Some(b) = breaker {
                input.set_breaker(&p.name, role, b.state());
                let open = b.transport().open_sockets();
                input.set_model_sockets(&p.name, role, open);
            }
        }
    }
    HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4; charset=utf-8")
        .body(state.metrics.render())
}

pub async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(serde_json::json!({"status": "ok"}))
}

pub async fn readyz(state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    let screener = state.screener.load();
    if screener.config.products.is_empty() {
        return Err(ApiError::NotReady("no products loaded".into()));
    }
    let products: serde_json::Map<String, serde_json::Value> = screener
        .config
        .products
        .values()
        .map(|p| (p.name.clone(), p.config_rev.clone().into()))
        .collect();
    // Every remote backend's breaker: an open one still answers (fail closed), so the service
    // stays ready, but the operator sees it here and in `guard_breaker_state`.
    let breakers: serde_json::Map<String, serde_json::Value> = screener
        .config
        .products
        .values()
        .map(|p| {
            let state = |b: &Option<std::sync::Arc<crate::backends::breaker::Breaker>>| {
                b.as_ref().map(|b| b.state().as_str())
            };
            let v = serde_json::json!({"guard": state(&p.input.guard.breaker), "judge": state(&p.input.judge.breaker)});
            (p.name.clone(), v)
        })
        .collect();
    Ok(HttpResponse::Ok()
        .json(serde_json::json!({"status": "ready", "products": products, "breakers": breakers})))
}

pub async fn reload(
    state: web::Data<AppState>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let token = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    match (&state.admin_token, token) {
        (Some(expected), Some(given))
            if constant_time_eq(expected.as_bytes(), given.as_bytes()) => {}
        _ => return Err(ApiError::Unauthorized("GUARD_ADMIN_TOKEN")),
    }
    // Built off the async workers: requests keep flowing while the new configuration builds.
    let building = state.clone();
    let result = web::block(move || building.reload())
        .await
        .map_err(|_| ApiError::NotReady("the reload did not finish".into()))?;
    match result {
        Ok(products) => Ok(HttpResponse::Ok()
            .json(serde_json::json!({"status": "reloaded", "products": products}))),
        Err(e) => {
            let problems = e.problems.iter().map(ToString::to_string).collect();
            Err(ApiError::InvalidConfig(problems))
        }
    }
}

/// Compared in constant time (`subtle`), lengths included: hashing both sides first means a
/// wrong token of another length takes as long as one of the right length.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    use sha2::{Digest, Sha256};
    use subtle::ConstantTimeEq;
    Sha256::digest(a).ct_eq(&Sha256::digest(b)).into()
}

/// Unknown routes are 404; known routes with the wrong method are 405.
pub async fn fallback(
    state: web::Data<AppState>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let ops = state.ops_on_main;
    let allowed = match req.path() {
        "/v1/screen"
        | "/v1/screen-output"
        | "/v1/screen-output/stream"
        | "/v1/tool-calls"
        | "/v1/screen-context"
        | "/admin/reload" => Some("POST"),
        "/metrics" | "/healthz" | "/readyz" if ops => Some("GET"),
        _ => None,
    };
    Err(match allowed {
        Some(m) => ApiError::MethodNotAllowed(m),
        None => ApiError::NotFound,
    })
}

//! The operator's routes: `/metrics` (Prometheus text), `/healthz`, `/readyz` (products and
//! breakers), `/admin/reload` (admin token), and the fallback (`404`, or `405` on a known
//! route with the wrong method).

use super::error::{ApiError, ErrorBody};
use super::state::AppState;
use actix_web::http::header;
use actix_web::{web, HttpRequest, HttpResponse};
use serde::Serialize;
use std::collections::BTreeMap;
use utoipa::ToSchema;

/// The Prometheus metrics.
#[utoipa::path(
    get,
    path = "/metrics",
    tag = "service",
    responses((status = 200, description = "Prometheus text format", body = String,
        content_type = "text/plain; version=0.0.4; charset=utf-8"))
)]
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

/// `{"status": "ok"}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct Health {
    /// `ok`.
    pub status: &'static str,
}

/// Liveness.
#[utoipa::path(
    get,
    path = "/healthz",
    tag = "service",
    responses((status = 200, description = "The process serves", body = Health))
)]
pub async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(Health { status: "ok" })
}

/// The products loaded and their breakers.
#[derive(Debug, Serialize, ToSchema)]
pub struct Ready {
    /// `ready`.
    pub status: &'static str,
    /// Each product's `config_rev`.
    pub products: BTreeMap<String, String>,
    /// Each product's remote backends' breakers (`null`: no remote backend in that role).
    pub breakers: BTreeMap<String, Breakers>,
    /// Per product, what its configuration does that the operator should know (review rules
    /// or a borderline band with no judge); products without warnings are left out.
    pub warnings: BTreeMap<String, Vec<String>>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Breakers {
    /// `closed`, `open` or `half_open`.
    pub guard: Option<&'static str>,
    pub judge: Option<&'static str>,
}

/// Readiness.
#[utoipa::path(
    get,
    path = "/readyz",
    tag = "service",
    responses(
        (status = 200, description = "Products loaded (an open breaker still answers, fail closed)", body = Ready),
        (status = 503, description = "No product loaded", body = ErrorBody),
    )
)]
pub async fn readyz(state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    let screener = state.screener.load();
    if screener.config.products.is_empty() {
        return Err(ApiError::NotReady("no products loaded".into()));
    }
    let products = screener.config.products.values();
    // Every remote backend's breaker: an open one still answers (fail closed), so the service
    // stays ready, but the operator sees it here and in `guard_breaker_state`.
    let state = |b: &Option<std::sync::Arc<crate::backends::breaker::Breaker>>| {
        b.as_ref().map(|b| b.state().as_str())
    };
    Ok(HttpResponse::Ok().json(Ready {
        status: "ready",
        products: products
            .clone()
            .map(|p| (p.name.clone(), p.config_rev.clone()))
            .collect(),
        breakers: products
            .clone()
            .map(|p| {
                let b = Breakers {
                    guard: state(&p.input.guard.breaker),
                    judge: state(&p.input.judge.breaker),
                };
                (p.name.clone(), b)
            })
            .collect(),
        // What the configuration does that the operator should know (a product routing
        // questions to a judge it does not have): shown, never a reason to be unready.
        warnings: products
            .filter_map(|p| {
                let w = p.warnings();
                (!w.is_empty()).then(|| (p.name.clone(), w))
            })
            .collect(),
    }))
}

/// A reload's answer: every product and its new `config_rev`.
#[derive(Debug, Serialize, ToSchema)]
pub struct Reloaded {
    /// `reloaded`.
    pub status: &'static str,
    /// `[name, config_rev]` pairs.
    #[schema(value_type = Vec<Vec<String>>)]
    pub products: Vec<(String, String)>,
}

/// Re-read the configuration (admin token).
#[utoipa::path(
    post,
    path = "/admin/reload",
    tag = "service",
    responses(
        (status = 200, description = "The new configuration serves", body = Reloaded),
        (status = 401, description = "No admin token", body = ErrorBody),
        (status = 422, description = "Invalid: every problem; the old configuration keeps serving", body = ErrorBody),
        (status = 503, description = "The reload could not run", body = ErrorBody),
    )
)]
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
        Ok(products) => Ok(HttpResponse::Ok().json(Reloaded {
            status: "reloaded",
            products,
        })),
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
    let ops_routes = super::OPS_ROUTES.iter().filter(|_| ops);
    let allowed = super::API_ROUTES
        .iter()
        .chain(ops_routes)
        .find(|(_, path)| *path == req.path())
        .map(|(method, _)| match *method {
            "get" => "GET",
            _ => "POST",
        });
    Err(match allowed {
        Some(m) => ApiError::MethodNotAllowed(m),
        None => ApiError::NotFound,
    })
}

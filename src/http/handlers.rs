//! Thin handlers: read the request, call the screener, answer. Each is a dozen lines.

use super::error::ApiError;
use super::AppState;
use crate::screens::input::Answered;
use actix_web::http::header::{self, HeaderMap};
use actix_web::{web, HttpRequest, HttpResponse};
use futures_util::{FutureExt, StreamExt};
use serde::Deserialize;

/// The body of `POST /v1/screen`. Unknown fields are ignored (tolerant wire).
#[derive(Debug, Deserialize)]
pub struct ScreenRequest {
    #[serde(default)]
    pub product: Option<String>,
    #[serde(default)]
    pub text: Option<serde_json::Value>,
    #[serde(default)]
    pub request_id: Option<serde_json::Value>,
}

pub async fn screen(
    state: web::Data<AppState>,
    req: HttpRequest,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let _in_flight = state.http.in_flight();
    let result = match admit(&state, &req) {
        Ok(_permit) => screen_inner(&state, &req, payload).await,
        Err(e) => Err(e),
    };
    if let Err(e) = &result {
        state.http.record_http_error(e.code);
    }
    result
}

async fn screen_inner(
    state: &AppState,
    req: &HttpRequest,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let (product, text, request_id) = read_request(state, req, payload).await?;
    let screener = state.screener.load();
    let answered = screener
        .answer(&product, &text, request_id)
        .await
        .ok_or_else(|| ApiError::unknown_product(&product))?;
    Ok(match answered {
        Answered::Shared(answer) => HttpResponse::Ok()
            .insert_header(header::ContentType::json())
            .body(answer.json.clone()),
        Answered::Fresh(verdict) => json_response(&verdict),
    })
}

/// `200` with a JSON body, serialised once into a buffer sized for a verdict (growing one from
/// empty cost a few copies per request).
pub(super) fn json_response<T: serde::Serialize>(value: &T) -> HttpResponse {
    let mut body = Vec::with_capacity(1024);
    match serde_json::to_writer(&mut body, value) {
        Ok(()) => HttpResponse::Ok()
            .insert_header(header::ContentType::json())
            .body(body),
        // Not expected for any type the service answers with; actix's own path reports it.
        Err(_) => HttpResponse::Ok().json(value),
    }
}

/// A `{product, text, request_id?}` body, read, checked and authorised: what `/v1/screen` and
/// `/v1/screen-output` both take.
pub(super) async fn read_request(
    state: &AppState,
    req: &HttpRequest,
    payload: web::Payload,
) -> Result<(String, String, Option<String>), ApiError> {
    let request: ScreenRequest = read_object(state, req, payload).await?;
    let (product, text, request_id) = validate(request)?;
    authorize_product(state, req, &product)?;
    Ok((product, text, request_id))
}

/// A JSON object body, read within the limits and parsed into `T` (every route's first step).
pub(super) async fn read_object<T: serde::de::DeserializeOwned>(
    state: &AppState,
    req: &HttpRequest,
    payload: web::Payload,
) -> Result<T, ApiError> {
    require_json(req.headers())?;
    let body = read_body(state, req, payload).await?;
    // serde reads a struct from a JSON array too (fields by position): only an object is a request.
    if body.trim_ascii_start().first() != Some(&b'{') {
        return Err(ApiError::new(
            400,
            "malformed_json",
            "the body must be a JSON object",
        ));
    }
    serde_json::from_slice(&body).map_err(ApiError::malformed_json)
}

/// Missing or empty fields are 422 with a code naming the field.
pub fn validate(r: ScreenRequest) -> Result<(String, String, Option<String>), ApiError> {
    let product = match r.product {
        Some(p) if !p.trim().is_empty() => p,
        _ => {
            return Err(ApiError::unprocessable(
                "missing_product",
                "`product` is required",
            ))
        }
    };
    let text = match r.text {
        Some(serde_json::Value::String(t)) if !t.trim().is_empty() => {
            if !crate::text::has_visible(&t) {
                return Err(ApiError::unprocessable(
                    "no_visible_text",
                    "`text` has no visible character (only white space or invisible characters)",
                ));
            }
            t
        }
        Some(serde_json::Value::String(_)) | None | Some(serde_json::Value::Null) => {
            return Err(ApiError::unprocessable(
                "missing_text",
                "`text` is required and must not be empty",
            ))
        }
        Some(_) => {
            return Err(ApiError::unprocessable(
                "invalid_text",
                "`text` must be a string",
            ))
        }
    };
    Ok((product, text, request_id(r.request_id)?))
}

/// The caller's `request_id`, echoed in the verdict: a string (cut at 128 characters) or a
/// number; absent or null is none.
pub fn request_id(v: Option<serde_json::Value>) -> Result<Option<String>, ApiError> {
    match v {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::String(s)) => Ok(Some(s.chars().take(128).collect())),
        Some(serde_json::Value::Number(n)) => Ok(Some(n.to_string())),
        Some(_) => Err(ApiError::unprocessable(
            "invalid_request_id",
            "`request_id` must be a string or a number",
        )),
    }
}

pub(super) fn require_json(headers: &HeaderMap) -> Result<(), ApiError> {
    let ok = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|m| {
            let m = m.trim().to_ascii_lowercase();
            m == "application/json" || (m.starts_with("application/") && m.ends_with("+json"))
        });
    if ok {
        Ok(())
    } else {
        Err(ApiError::unsupported_media_type())
    }
}

/// `403` when the caller's key is not for this product (no keys configured: everyone may).
pub(super) fn authorize_product(
    state: &AppState,
    req: &HttpRequest,
    product: &str,
) -> Result<(), ApiError> {
    match &state.api_keys {
        Some(keys) => keys.authorize(req, Some(product)),
        None => Ok(()),
    }
}

/// Let a screen in, or refuse it at once (`401` first when keys are configured and the caller
/// has none): a declared body over the limit is `413` before a byte
/// is read, and with every in-flight slot taken the answer is `503` with `Retry-After` (callers
/// treat it as a block) rather than a queue without bound.
pub(super) fn admit<'a>(
    state: &'a AppState,
    req: &HttpRequest,
) -> Result<tokio::sync::SemaphorePermit<'a>, ApiError> {
    may_enter(state, req)?;
    state
        .in_flight
        .try_acquire()
        .map_err(|_| ApiError::overloaded())
}

/// [`admit`] for a slot held beyond the handler (a streamed answer).
pub(super) fn admit_owned(
    state: &AppState,
    req: &HttpRequest,
) -> Result<tokio::sync::OwnedSemaphorePermit, ApiError> {
    may_enter(state, req)?;
    state
        .in_flight
        .clone()
        .try_acquire_owned()
        .map_err(|_| ApiError::overloaded())
}

fn may_enter(state: &AppState, req: &HttpRequest) -> Result<(), ApiError> {
    let declared = declared_length(req.headers());
    if let Some(keys) = &state.api_keys {
        keys.authorize(req, None)?;
    }
    if declared.is_some_and(|n| n > state.max_body_bytes) {
        return Err(ApiError::payload_too_large(state.max_body_bytes));
    }
    Ok(())
}

/// The body length the client declared (`Content-Length`), if it did.
fn declared_length(headers: &HeaderMap) -> Option<usize> {
    headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<usize>().ok())
}

/// The whole body, within the size limit and the body deadline (a client that sends one byte
/// of a declared hundred is cut off with `408`, not held forever).
///
/// A body that has already arrived (nearly every one: a small request comes in the same read
/// as its headers) is taken without arming the deadline's timer, which cost the cheap path a
/// few percent; a body still on its way is read under the deadline.
pub(super) async fn read_body(
    state: &AppState,
    req: &HttpRequest,
    mut payload: web::Payload,
) -> Result<web::Bytes, ApiError> {
    let limit = state.max_body_bytes;
    // With a declared length, the body is complete once that many bytes are in (actix has
    // checked it never sends more), without waiting for the end-of-body signal.
    let declared = declared_length(req.headers());
    let mut body = Body::default();
    loop {
        if declared.is_some_and(|n| n > 0 && body.len() == n) {
            return Ok(body.into_bytes());
        }
        match payload.next().now_or_never() {
            Some(Some(chunk)) => body.add(chunk, limit)?,
            Some(None) => return Ok(body.into_bytes()),
            None => break,
        }
    }
    tokio::time::timeout(state.body_timeout, async {
        while let Some(chunk) = payload.next().await {
            body.add(chunk, limit)?;
        }
        Ok(body.into_bytes())
    })
    .await
    .map_err(|_| ApiError::request_timeout(state.body_timeout))?
}

/// A body read chunk by chunk: a body of one chunk is kept as it came, without a copy.
#[derive(Default)]
enum Body {
    #[default]
    Empty,
    One(web::Bytes),
    Many(web::BytesMut),
}

impl Body {
    fn add(
        &mut self,
        chunk: Result<web::Bytes, actix_web::error::PayloadError>,
        limit: usize,
    ) -> Result<(), ApiError> {
        let chunk = chunk.map_err(|e| match e {
            actix_web::error::PayloadError::Overflow => ApiError::payload_too_large(limit),
            other => ApiError::new(400, "bad_body", format!("could not read the body: {other}")),
        })?;
        if self.len() + chunk.len() > limit {
            return Err(ApiError::payload_too_large(limit));
        }
        *self = match std::mem::take(self) {
            Body::Empty => Body::One(chunk),
            Body::One(first) => {
                let mut all = web::BytesMut::with_capacity(first.len() + chunk.len());
                all.extend_from_slice(&first);
                all.extend_from_slice(&chunk);
                Body::Many(all)
            }
            Body::Many(mut all) => {
                all.extend_from_slice(&chunk);
                Body::Many(all)
            }
        };
        Ok(())
    }

    fn len(&self) -> usize {
        match self {
            Body::Empty => 0,
            Body::One(b) => b.len(),
            Body::Many(b) => b.len(),
        }
    }

    fn into_bytes(self) -> web::Bytes {
        match self {
            Body::Empty => web::Bytes::new(),
            Body::One(b) => b,
            Body::Many(b) => b.freeze(),
        }
    }
}

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
        return Err(ApiError::unavailable("no products loaded"));
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
        _ => return Err(ApiError::unauthorized()),
    }
    // Built off the async workers: requests keep flowing while the new configuration builds.
    let building = state.clone();
    let result = web::block(move || building.reload())
        .await
        .map_err(|_| ApiError::unavailable("the reload did not finish"))?;
    match result {
        Ok(products) => Ok(HttpResponse::Ok()
            .json(serde_json::json!({"status": "reloaded", "products": products}))),
        Err(e) => {
            let problems: Vec<String> = e.problems.iter().map(ToString::to_string).collect();
            Ok(HttpResponse::UnprocessableEntity().json(serde_json::json!({
                "error": {"code": "invalid_config", "message": "the new configuration is invalid; the old one keeps serving", "problems": problems}
            })))
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
        Some(m) => ApiError::method_not_allowed(m),
        None => ApiError::not_found(),
    })
}

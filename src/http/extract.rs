//! The opening of every route, written once: admit (API key, declared size, an in-flight slot)
//! → read the request (the JSON body, or the query) → the product it names → authorise the
//! key for that product → the route's own checks → the configuration in force → the product,
//! or `unknown_product`. A handler takes an [`Opened`] and only calls its screen.
//!
//! Every error response is counted by route and code (`guard_http_errors_total`, in
//! `end_on_error`, which wraps every route), and the request is counted in flight (`guard_in_flight_requests`) while its handler runs.

use super::error::ApiError;
use super::records::InFlight;
use super::state::AppState;
use crate::product::Product;
use crate::screens::input::Screener;
use actix_web::dev::Payload;
use actix_web::http::header::{self, HeaderMap};
use actix_web::{web, FromRequest, HttpRequest, HttpResponse};
use futures_util::future::LocalBoxFuture;
use futures_util::{FutureExt, StreamExt};
use serde::Deserialize;
use std::sync::Arc;
use tokio::sync::OwnedSemaphorePermit;

/// Where a route's request is read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A JSON object body (`Content-Type: application/json`).
    Body,
    /// The query string; the body is left to the handler (a streamed answer).
    Query,
}

/// Which in-flight budget a route's requests draw from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Budget {
    /// A screen answered at once (`GUARD_MAX_IN_FLIGHT`).
    Screen,
    /// An answer stream, open as long as its client sends (`GUARD_MAX_STREAMS`).
    Stream,
}

/// A route's request: how it is read and checked. Checks come in two parts so that a key is
/// authorised for a product before anything else about the request is answered.
pub trait RouteRequest: Sized + 'static {
    const SOURCE: Source;
    /// The budget its slot is taken from.
    const BUDGET: Budget = Budget::Screen;
    /// The request as the client sent it (tolerant: unknown fields are ignored). It may borrow
    /// from the body (`&'a str`, `Cow<'a, str>`): it lives only until [`check`](Self::check)
    /// has made the route's request of it, so what a route reads past costs no copy.
    type Raw<'a>: Deserialize<'a>;
    /// The body read into [`Self::Raw`] (serde_json, [`parse_json`]; a route may read it more
    /// strictly).
    fn parse(body: &[u8]) -> Result<Self::Raw<'_>, ApiError> {
        parse_json(body)
            .map_err(|e| ApiError::MalformedJson(format!("the body is not valid JSON: {e}")))
    }
    /// The product the request names (`missing_product` when it names none).
    fn product(raw: &Self::Raw<'_>) -> Result<String, ApiError>;
    /// The product, for a route that may also name it in a header or the query (the gateway
    /// contracts, whose bodies may have no place for it): [`product`](Self::product) by default.
    fn product_of(raw: &Self::Raw<'_>, _req: &HttpRequest) -> Result<String, ApiError> {
        Self::product(raw)
    }
    /// The route's own checks, once the key is authorised for the product.
    fn check(raw: Self::Raw<'_>) -> Result<Self, ApiError>;
}

/// A JSON body read as serde_json reads it from bytes, with its UTF-8 checked once for the
/// whole body: read from bytes, serde_json checks every string it reads on its own, which cost
/// a gateway's larger bodies more than any other step of reading them. A body that is not UTF-8
/// throughout (invalid bytes in a string guard reads past) is read from bytes as before, so
/// it is accepted or refused exactly as it was.
pub fn parse_json<'a, T: Deserialize<'a>>(body: &'a [u8]) -> serde_json::Result<T> {
    match std::str::from_utf8(body) {
        Ok(text) => serde_json::from_str(text),
        Err(_) => serde_json::from_slice(body),
    }
}

/// An admitted, read, authorised request and the product it is for.
pub struct Opened<T> {
    pub state: web::Data<AppState>,
    /// The configuration the request started with (a reload does not change it mid-request).
    pub screener: Arc<Screener>,
    pub product: Arc<Product>,
    pub request: T,
    /// The in-flight slot, held as long as this is (a stream keeps it for its whole body).
    pub permit: OwnedSemaphorePermit,
    _in_flight: InFlight,
}

impl<T: RouteRequest> FromRequest for Opened<T> {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let req = req.clone();
        let payload = match T::SOURCE {
            Source::Body => Some(payload.take()),
            Source::Query => None,
        };
        async move {
            let Some(state) = req.app_data::<web::Data<AppState>>().cloned() else {
                return Err(ApiError::NotReady("no application state".into()));
            };
            let in_flight = state.http.in_flight();
            let (permit, screener, product, request) = open::<T>(&state, &req, payload).await?;
            Ok(Opened {
                state,
                screener,
                product,
                request,
                permit,
                _in_flight: in_flight,
            })
        }
        .boxed_local()
    }
}

type Parts<T> = (OwnedSemaphorePermit, Arc<Screener>, Arc<Product>, T);

/// The opening sequence, in order.
async fn open<T: RouteRequest>(
    state: &AppState,
    req: &HttpRequest,
    payload: Option<Payload>,
) -> Result<Parts<T>, ApiError> {
    let permit = admit(state, req, T::BUDGET)?;
    let (name, request) = match payload {
        Some(payload) => {
            let body = read_object(state, req, payload).await?;
            let raw = T::parse(&body)?;
            checked::<T>(state, req, raw)?
        }
        None => {
            let raw = serde_urlencoded::from_str(req.query_string())
                .map_err(|e| ApiError::BadQuery(format!("Query deserialize error: {e}")))?;
            checked::<T>(state, req, raw)?
        }
    };
    let screener = state.screener.load_full();
    let product = screener
        .product(&name)
        .cloned()
        .ok_or(ApiError::UnknownProduct(name))?;
    Ok((permit, screener, product, request))
}

/// The product the request names, the key authorised for it, and the route's checks (which
/// end what the raw request borrowed of the body).
fn checked<T: RouteRequest>(
    state: &AppState,
    req: &HttpRequest,
    raw: T::Raw<'_>,
) -> Result<(String, T), ApiError> {
    let name = T::product_of(&raw, req)?;
    if let Some(keys) = &state.api_keys {
        keys.authorize(req, Some(&name))?;
    }
    Ok((name, T::check(raw)?))
}

/// Let a request in, or refuse it at once (`401` first when keys are configured and the caller
/// has none): a declared body over the limit is `413` before a byte is read, and with every
/// in-flight slot taken the answer is `503` with `Retry-After` (callers treat it as a block)
/// rather than a queue without bound.
fn admit(
    state: &AppState,
    req: &HttpRequest,
    budget: Budget,
) -> Result<OwnedSemaphorePermit, ApiError> {
    if let Some(keys) = &state.api_keys {
        keys.authorize(req, None)?;
    }
    if declared_length(req.headers()).is_some_and(|n| n > state.max_body_bytes) {
        return Err(ApiError::PayloadTooLarge(state.max_body_bytes));
    }
    let slots = match budget {
        Budget::Screen => &state.in_flight,
        Budget::Stream => &state.streams,
    };
    slots
        .clone()
        .try_acquire_owned()
        .map_err(|_| ApiError::Overloaded)
}

/// A JSON object body, read within the limits, for the route to parse
/// ([`RouteRequest::parse`]).
async fn read_object(
    state: &AppState,
    req: &HttpRequest,
    payload: Payload,
) -> Result<web::Bytes, ApiError> {
    require_json(req.headers())?;
    let body = read_body(state, req, payload).await?;
    // serde reads a struct from a JSON array too (fields by position): only an object is a request.
    if body.trim_ascii_start().first() != Some(&b'{') {
        return Err(ApiError::MalformedJson(
            "the body must be a JSON object".into(),
        ));
    }
    Ok(body)
}

fn require_json(headers: &HeaderMap) -> Result<(), ApiError> {
    let ok = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(is_json_type);
    if ok {
        Ok(())
    } else {
        Err(ApiError::UnsupportedMediaType)
    }
}

/// A media type (without its parameters) that is JSON: `application/json` or
/// `application/...+json`, in any ASCII case, compared without a lower-cased copy.
fn is_json_type(media_type: &str) -> bool {
    let m = media_type.trim().as_bytes();
    let (app, json) = (b"application/".as_slice(), b"+json".as_slice());
    let at = |from: usize, word: &[u8]| {
        m.get(from..from + word.len())
            .is_some_and(|part| part.eq_ignore_ascii_case(word))
    };
    m.eq_ignore_ascii_case(b"application/json")
        || (m.len() >= app.len() + json.len() && at(0, app) && at(m.len() - json.len(), json))
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
///
/// actix polls the handler once before it hands over the body that came in the same read as
/// the head, and again right after: so when no body is there at the first look, the request
/// yields once (waking itself, so it is polled again whatever the client does) and looks
/// again before it arms the timer.
async fn read_body(
    state: &AppState,
    req: &HttpRequest,
    mut payload: Payload,
) -> Result<web::Bytes, ApiError> {
    let limit = state.max_body_bytes;
    // With a declared length, the body is complete once that many bytes are in (actix has
    // checked it never sends more), without waiting for the end-of-body signal.
    let declared = declared_length(req.headers());
    let mut body = Body::default();
    let mut yielded = false;
    loop {
        if declared.is_some_and(|n| n > 0 && body.len() == n) {
            return Ok(body.into_bytes());
        }
        match payload.next().now_or_never() {
            Some(Some(chunk)) => body.add(chunk, limit)?,
            Some(None) => return Ok(body.into_bytes()),
            None if !yielded => {
                yielded = true;
                YieldOnce(false).await;
            }
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
    .map_err(|_| ApiError::RequestTimeout(state.body_timeout))?
}

/// Pending once, with the task woken at once (so it is polled again even if nothing else
/// wakes it), then ready.
struct YieldOnce(bool);

impl std::future::Future for YieldOnce {
    type Output = ();

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<()> {
        if self.0 {
            return std::task::Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        std::task::Poll::Pending
    }
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
            actix_web::error::PayloadError::Overflow => ApiError::PayloadTooLarge(limit),
            other => ApiError::BadBody(other.to_string()),
        })?;
        if self.len() + chunk.len() > limit {
            return Err(ApiError::PayloadTooLarge(limit));
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

/// `200` with a JSON body, serialised once into a buffer sized for a verdict (growing one from
/// empty cost a few copies per request).
pub fn json_response<T: serde::Serialize>(value: &T) -> HttpResponse {
    let mut body = Vec::with_capacity(1024);
    match serde_json::to_writer(&mut body, value) {
        Ok(()) => HttpResponse::Ok()
            .insert_header(header::ContentType::json())
            .body(body),
        // Not expected for any type the service answers with; actix's own path reports it.
        Err(_) => HttpResponse::Ok().json(value),
    }
}

/// The caller's `request_id`, echoed in the answer: a string (cut at 128 characters) or a
/// number; absent or null is none.
pub fn request_id(v: Option<serde_json::Value>) -> Result<Option<String>, ApiError> {
    match v {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::String(s)) => Ok(Some(s.chars().take(128).collect())),
        Some(serde_json::Value::Number(n)) => Ok(Some(n.to_string())),
        Some(_) => Err(ApiError::InvalidRequestId),
    }
}

/// A product named by a header (`x-guard-product`) or the query (`?product=`): for the gateway
/// contracts, whose bodies may have no place for one.
pub fn product_from_request(req: &HttpRequest) -> Option<String> {
    let header = req
        .headers()
        .get("x-guard-product")
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|v| !v.is_empty());
    if let Some(name) = header {
        return Some(name.to_string());
    }
    let query = req.query_string();
    if query.is_empty() {
        return None;
    }
    web::Query::<ProductQuery>::from_query(query)
        .ok()
        .and_then(|q| q.into_inner().product)
        .filter(|p| !p.trim().is_empty())
}

#[derive(serde::Deserialize)]
struct ProductQuery {
    product: Option<String>,
}

/// A product named by a string field: required, not blank.
pub fn named_product(p: &Option<String>, message: &str) -> Result<String, ApiError> {
    match p {
        Some(p) if !p.trim().is_empty() => Ok(p.clone()),
        _ => Err(ApiError::MissingProduct(message.into())),
    }
}

/// An optional label (a call's id or tool, a document's id or owner): a string, cut at 256
/// characters, or a number; anything else is none.
pub fn label(v: Option<&serde_json::Value>) -> Option<String> {
    match v {
        Some(serde_json::Value::String(s)) => Some(s.chars().take(256).collect()),
        Some(serde_json::Value::Number(n)) => Some(n.to_string()),
        _ => None,
    }
}

/// A required identifier: a non-empty string or a number, at most 256 characters; `error`
/// makes the route's code for the field from the message.
pub fn required_id(
    v: Option<serde_json::Value>,
    field: &str,
    error: fn(String) -> ApiError,
) -> Result<String, ApiError> {
    let s = match v {
        Some(serde_json::Value::String(s)) if !s.trim().is_empty() => s,
        Some(serde_json::Value::Number(n)) => n.to_string(),
        _ => {
            let message = format!("`{field}` is required: a non-empty string or a number");
            return Err(error(message));
        }
    };
    if s.chars().count() > 256 {
        return Err(error(format!("`{field}` is at most 256 characters")));
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The media type check as it was first written (a lower-cased copy).
    fn lowered(m: &str) -> bool {
        let m = m.trim().to_ascii_lowercase();
        m == "application/json" || (m.starts_with("application/") && m.ends_with("+json"))
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 4000, ..ProptestConfig::default() })]

        /// The same answer as the lower-cased comparison, for media types built of its parts
        /// in any case, with padding, and for arbitrary text.
        #[test]
        fn json_media_types_are_read_as_before(
            parts in prop::collection::vec(prop_oneof![
                Just("application/"), Just("APPLICATION/"), Just("Application/"), Just("json"),
                Just("JSON"), Just("+json"), Just("+JSon"), Just("vnd.api"), Just(" "), Just("/"),
                Just("+"), Just("\t"), Just("x-ndjson"), Just("\u{212a}"),
            ], 0..5),
            any_text in ".{0,24}",
        ) {
            let built = parts.concat();
            prop_assert_eq!(is_json_type(&built), lowered(&built), "{:?}", built);
            prop_assert_eq!(is_json_type(&any_text), lowered(&any_text), "{:?}", any_text);
        }
    }
}

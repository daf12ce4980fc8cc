//! `POST /v1/screen-output` (a whole answer) and `POST /v1/screen-output/stream` (an answer as
//! it is generated): thin handlers over [`crate::screens::output`].
//!
//! The stream speaks newline-delimited JSON both ways, because that is what agent frameworks
//! already hold: each token delta is a string they can wrap as `{"delta": "..."}` without caring
//! where a UTF-8 character or a number is cut, and the answer's verdict can follow the text as
//! one more line. Request lines: `{"delta": "..."}`; the product and `request_id` are query
//! parameters, so an unknown product is refused before any text is read. Response lines:
//! `{"delta": "masked text"}` as soon as it cannot change, then
//! `{"done": true, "decision": ..., "findings": ..., "counts": ..., "blocked_kinds": ...}`.
//! A malformed line ends the stream with `{"error": {...}}` after what was already masked.
//!
//! Streams draw from their own in-flight budget (`GUARD_MAX_STREAMS`), so streams cannot take
//! the slots of the screens answered at once, and each has two deadlines from the product's
//! `[output]`: a client that sends nothing for `stream_idle_timeout_ms`, or a stream open for
//! `stream_max_duration_ms`, ends with the rest of the masked text and a verdict line that
//! blocks (`"reason": "stream_idle"` or `"stream_too_long"`: the answer never finished).

use super::error::ApiError;
use super::error::ErrorBody;
use super::extract::{json_response, named_product, Budget, Opened, RouteRequest, Source};
use super::records::HttpMetrics;
use super::screen::TextRequest;
use crate::product::Product;
use crate::screens::input::Screener;
use crate::screens::output::policy::StreamLimits;
use crate::screens::output::{self, OutputReason, OutputStream, OutputVerdict};
use actix_web::{web, HttpResponse};
use futures_util::StreamExt;
use serde::Deserialize;
use std::sync::Arc;
use std::time::Instant;
use utoipa::{IntoParams, ToSchema};

/// The stream's route, as the errors metric names it.
const STREAM_ROUTE: &str = "/v1/screen-output/stream";

/// A stream request line longer than this is refused.
const MAX_LINE_BYTES: usize = 64 * 1024;

/// Mask an agent's whole answer before it leaves.
#[utoipa::path(
    post,
    path = "/v1/screen-output",
    tag = "screens",
    request_body = super::screen::RawTextRequest,
    responses(
        (status = 200, description = "The answer masked, and its verdict", body = OutputVerdict),
        (status = "4XX", description = "A bad request: every error is JSON", body = ErrorBody),
        (status = 503, description = "Overloaded (`Retry-After: 1`): treat it as a block", body = ErrorBody),
    )
)]
pub async fn screen_output(open: Opened<TextRequest>) -> Result<HttpResponse, ApiError> {
    // The caller is read (a bad one is `422 invalid_caller`) for the checks of the answer
    // that need the turn; masking itself is the same for every caller.
    let TextRequest {
        text, request_id, ..
    } = open.request;
    let records = open.screener.records();
    let v = output::answer(&open.product, &text, request_id, records);
    Ok(json_response(&v))
}

/// The query of the stream: `?product=...&request_id=...`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct StreamQuery {
    /// A product in `products/` (required).
    product: Option<String>,
    /// Echoed in the verdict line.
    request_id: Option<String>,
    /// The `caller` object as JSON text (the same object as the other routes' `caller`).
    caller: Option<String>,
}

/// A line of the stream's request: a piece of the answer, cut anywhere.
#[derive(Debug, ToSchema)]
pub struct StreamDelta {
    pub delta: String,
}

/// A line of the stream's answer: masked text, then the verdict (`done: true`), or an error
/// that ends the stream.
#[derive(Debug, ToSchema)]
#[serde(untagged)]
#[allow(dead_code)]
pub enum StreamLine {
    /// `{"delta": "<masked text>"}`.
    Delta(StreamDelta),
    /// The `/v1/screen-output` verdict without `text`, and `"done": true`.
    Done(StreamDone),
    /// `{"error": {"code", "message"}}`, after what was already masked.
    Error(ErrorBody),
}

/// The stream's last line.
#[derive(Debug, ToSchema)]
#[allow(dead_code)]
pub struct StreamDone {
    #[serde(flatten)]
    verdict: OutputVerdict,
    /// `true`.
    done: bool,
}

/// A stream's request: read from the query, so an unknown product is refused before any of the
/// answer is read.
#[derive(Debug)]
pub struct StreamRequest {
    request_id: Option<String>,
}

impl RouteRequest for StreamRequest {
    const SOURCE: Source = Source::Query;
    const BUDGET: Budget = Budget::Stream;
    type Raw = StreamQuery;

    fn product(raw: &StreamQuery) -> Result<String, ApiError> {
        named_product(&raw.product, "`product` (query) is required")
    }

    fn check(raw: StreamQuery) -> Result<Self, ApiError> {
        let request_id = raw.request_id.map(|r| r.chars().take(128).collect());
        if let Some(text) = raw.caller {
            let v = serde_json::from_str(&text).map_err(|_| {
                ApiError::InvalidCaller("`caller` (query) is the caller object as JSON text".into())
            })?;
            crate::screens::caller::Caller::from_json(Some(v)).map_err(ApiError::InvalidCaller)?;
        }
        Ok(StreamRequest { request_id })
    }
}

/// Mask an answer while it is generated: NDJSON in, NDJSON out.
#[utoipa::path(
    post,
    path = "/v1/screen-output/stream",
    tag = "screens",
    params(StreamQuery),
    request_body(content = StreamDelta, content_type = "application/x-ndjson",
        description = "One `{\"delta\": \"...\"}` per line"),
    responses(
        (status = 200, description = "`{\"delta\"}` lines as soon as the text cannot change, then the verdict line",
            body = StreamLine, content_type = "application/x-ndjson"),
        (status = "4XX", description = "A bad request, before the stream starts", body = ErrorBody),
        (status = 503, description = "Overloaded (`Retry-After: 1`): treat it as a block", body = ErrorBody),
    )
)]
pub async fn screen_output_stream(
    open: Opened<StreamRequest>,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let now = tokio::time::Instant::now();
    let pump = Pump {
        payload,
        limits: open.product.output.stream,
        opened: now,
        heard: now,
        http: open.state.http.clone(),
        line: Vec::new(),
        out: Some(OutputStream::new(&open.product)),
        hasher: open.state.audit.hasher(),
        product: open.product,
        request_id: open.request.request_id,
        screener: open.screener,
        started: Instant::now(),
        ended: false,
        _permit: open.permit,
    };
    let body = futures_util::stream::unfold(pump, |mut pump| async move {
        if pump.ended {
            return None;
        }
        let bytes = pump.next_lines().await;
        Some((Ok::<_, actix_web::Error>(web::Bytes::from(bytes)), pump))
    });
    Ok(HttpResponse::Ok()
        .content_type("application/x-ndjson")
        .streaming(body))
}

#[derive(Debug, Deserialize)]
struct DeltaLine {
    delta: serde_json::Value,
}

/// Where the stream stands between polls.
struct Pump {
    payload: web::Payload,
    limits: StreamLimits,
    /// When the stream opened, and when the client last sent a byte.
    opened: tokio::time::Instant,
    heard: tokio::time::Instant,
    /// To count the errors that end a stream (`guard_http_errors_total`).
    http: HttpMetrics,
    line: Vec<u8>,
    out: Option<OutputStream>,
    hasher: crate::obs::audit::TextHasher,
    product: Arc<Product>,
    request_id: Option<String>,
    /// The configuration the stream started with: its records.
    screener: Arc<Screener>,
    started: Instant,
    ended: bool,
    /// The in-flight slot, held for the whole stream.
    _permit: tokio::sync::OwnedSemaphorePermit,
}

impl Pump {
    /// Read until at least one line of output is ready (or the request ends); returns the
    /// NDJSON lines to send.
    async fn next_lines(&mut self) -> Vec<u8> {
        loop {
            if let Some(nl) = self.line.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.line.drain(..=nl).collect();
                match self.take_line(&line) {
                    Ok(Some(masked)) => return masked,
                    Ok(None) => continue,
                    Err(e) => return self.end(Some(e)),
                }
            }
            if self.line.len() > MAX_LINE_BYTES {
                return self.end(Some(ApiError::PayloadTooLarge(MAX_LINE_BYTES)));
            }
            let idle_at = self.heard + self.limits.idle;
            let last_at = self.opened + self.limits.max;
            let next = tokio::time::timeout_at(idle_at.min(last_at), self.payload.next()).await;
            let Ok(next) = next else {
                let why = match idle_at <= last_at {
                    true => OutputReason::StreamIdle,
                    false => OutputReason::StreamTooLong,
                };
                return self.end_with(None, Some(why));
            };
            match next {
                Some(Ok(chunk)) => {
                    self.heard = tokio::time::Instant::now();
                    self.line.extend_from_slice(&chunk);
                }
                Some(Err(e)) => {
                    let e = ApiError::BadBody(e.to_string());
                    return self.end(Some(e));
                }
                None => {
                    // The last line may lack its newline.
                    let rest = std::mem::take(&mut self.line);
                    if !rest.iter().all(u8::is_ascii_whitespace) {
                        match self.take_line(&rest) {
                            Ok(Some(mut masked)) => {
                                masked.extend(self.end(None));
                                return masked;
                            }
                            Ok(None) => {}
                            Err(e) => return self.end(Some(e)),
                        }
                    }
                    return self.end(None);
                }
            }
        }
    }

    /// One request line: its masked text as a response line, if any is ready.
    fn take_line(&mut self, line: &[u8]) -> Result<Option<Vec<u8>>, ApiError> {
        if line.iter().all(u8::is_ascii_whitespace) {
            return Ok(None);
        }
        let parsed: DeltaLine = serde_json::from_slice(line)
            .map_err(|e| ApiError::MalformedJson(format!("the body is not valid JSON: {e}")))?;
        let serde_json::Value::String(delta) = parsed.delta else {
            return Err(ApiError::InvalidText("delta"));
        };
        self.hasher.update(&delta);
        let Some(out) = &mut self.out else {
            return Ok(None);
        };
        let masked = out.push(&delta);
        Ok((!masked.is_empty()).then(|| delta_line(&masked)))
    }

    /// The rest of the masked text, then the verdict (or the error) line.
    fn end(&mut self, error: Option<ApiError>) -> Vec<u8> {
        self.end_with(error, None)
    }

    /// [`end`](Self::end), or for a stream cut by a deadline (`cut`), a verdict that blocks.
    fn end_with(&mut self, error: Option<ApiError>, cut: Option<OutputReason>) -> Vec<u8> {
        self.ended = true;
        let Some(out) = self.out.take() else {
            return Vec::new();
        };
        let (rest, mut v) = match cut {
            Some(why) => out.cut(&self.product, why),
            None => out.finish(&self.product),
        };
        let mut bytes = if rest.is_empty() {
            Vec::new()
        } else {
            delta_line(&rest)
        };
        v.request_id = self.request_id.clone();
        let last = match error {
            Some(e) => {
                self.http.record_http_error(STREAM_ROUTE, e.code());
                serde_json::json!({"error": {"code": e.code(), "message": e.message()}})
            }
            None => {
                let mut value = serde_json::to_value(&v).unwrap_or_default();
                if let Some(o) = value.as_object_mut() {
                    o.insert("done".into(), true.into());
                }
                value
            }
        };
        bytes.extend_from_slice(last.to_string().as_bytes());
        bytes.push(b'\n');
        let records = self.screener.records();
        let hash = std::mem::replace(&mut self.hasher, records.audit.hasher()).finish();
        output::record(
            records,
            &self.product.name,
            &hash,
            &v,
            self.started.elapsed(),
        );
        bytes
    }
}

fn delta_line(text: &str) -> Vec<u8> {
    let mut bytes = serde_json::json!({ "delta": text })
        .to_string()
        .into_bytes();
    bytes.push(b'\n');
    bytes
}

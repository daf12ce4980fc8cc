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
use super::extract::request_id;
use super::extract::{json_response, named_product, Budget, Opened, RouteRequest, Source};
use super::openapi::{CallerSchema, Id};
use super::records::HttpMetrics;
use super::screen::checked_text;
use crate::product::Product;
use crate::screens::input::Screener;
use crate::screens::output::policy::StreamLimits;
use crate::screens::output::TurnContext;
use crate::screens::output::{self, OutputReason, OutputStream, OutputVerdict};
use crate::turn::evidence::Evidence;
use actix_web::{web, HttpResponse};
use futures_util::StreamExt;
use serde::Deserialize;
use serde_json::Value;
use std::sync::Arc;
use std::time::Instant;
use utoipa::{IntoParams, ToSchema};

/// The stream's route, as the errors metric names it.
const STREAM_ROUTE: &str = "/v1/screen-output/stream";

/// A stream request line longer than this is refused.
const MAX_LINE_BYTES: usize = 64 * 1024;

/// More inline tool results than this in one request is refused (`invalid_evidence`).
pub const MAX_EVIDENCE_RESULTS: usize = 256;

/// The body of `POST /v1/screen-output`. Unknown fields are ignored (tolerant wire); without
/// `evidence`, `conversation` and `turn` the answer is only masked, as before.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(as = OutputRequest)]
pub struct RawOutputRequest {
    /// A product in `products/` (case-sensitive).
    #[serde(default)]
    #[schema(value_type = String, required = true)]
    pub product: Option<String>,
    /// The answer: not empty, with at least one visible character.
    #[serde(default)]
    #[schema(value_type = String, required = true)]
    pub text: Option<Value>,
    /// Echoed in the verdict (a string is cut at 128 characters).
    #[serde(default)]
    #[schema(value_type = Option<Id>)]
    pub request_id: Option<Value>,
    /// The conversation (1 to 256 characters): with `turn`, the lookup check reads the turn's
    /// stored evidence and remembers its model question.
    #[serde(default)]
    #[schema(value_type = Option<Id>)]
    pub conversation: Option<Value>,
    /// The turn within the conversation (1 to 256 characters).
    #[serde(default)]
    #[schema(value_type = Option<Id>)]
    pub turn: Option<Value>,
    /// What the person typed this turn: figures in it are grounded.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub question: Option<Value>,
    /// The turn's tool results inline, for a stateless caller: the lookup check runs against
    /// them.
    #[serde(default)]
    #[schema(value_type = Option<InlineEvidence>)]
    pub evidence: Option<Value>,
    /// The platform's caller (see `docs/api.md`, "The caller"): checked (`422 invalid_caller`);
    /// masking and the lookup check are the same for every caller.
    #[serde(default)]
    #[schema(value_type = Option<CallerSchema>)]
    pub caller: Option<Value>,
}

/// Inline evidence: the turn's tool results (an empty list: the turn called no tool).
#[derive(Debug, ToSchema)]
#[allow(dead_code)]
pub struct InlineEvidence {
    /// At most 256 results.
    results: Vec<InlineResult>,
    /// What the person typed (as the top-level `question`).
    question: Option<String>,
}

/// One tool result: its text, or any JSON value (read as its JSON text).
#[derive(Debug, ToSchema)]
#[allow(dead_code)]
pub struct InlineResult {
    tool: Option<String>,
    #[schema(value_type = Value)]
    content: Value,
}

/// An answer to screen, checked.
#[derive(Debug)]
pub struct OutputRequest {
    pub text: String,
    pub request_id: Option<String>,
    pub turn: TurnContext,
}

impl RouteRequest for OutputRequest {
    const SOURCE: Source = Source::Body;
    type Raw<'a> = RawOutputRequest;

    fn product(raw: &RawOutputRequest) -> Result<String, ApiError> {
        named_product(&raw.product, "`product` is required")
    }

    fn check(raw: RawOutputRequest) -> Result<Self, ApiError> {
        crate::screens::caller::Caller::from_json(raw.caller).map_err(ApiError::InvalidCaller)?;
        Ok(OutputRequest {
            text: checked_text(raw.text)?,
            request_id: request_id(raw.request_id)?,
            turn: turn_context(raw.conversation, raw.turn, raw.question, raw.evidence)?,
        })
    }
}

/// The turn of an answer from the request's optional fields, checked.
pub fn turn_context(
    conversation: Option<Value>,
    turn: Option<Value>,
    question: Option<Value>,
    evidence: Option<Value>,
) -> Result<TurnContext, ApiError> {
    let id = |v: Option<Value>, field: &str, e: fn(String) -> ApiError| match v {
        None | Some(Value::Null) => Ok(None),
        v => super::extract::required_id(v, field, e).map(Some),
    };
    let conversation = id(conversation, "conversation", ApiError::MissingConversation)?;
    let turn = id(turn, "turn", ApiError::MissingTurn)?;
    let mut question = match question {
        None | Some(Value::Null) => None,
        Some(Value::String(q)) => Some(q),
        Some(_) => return Err(ApiError::InvalidText("question")),
    };
    let evidence = match evidence {
        None | Some(Value::Null) => None,
        Some(v) => {
            let (e, q) = inline_evidence(v)?;
            question = question.or(q);
            Some(e)
        }
    };
    Ok(TurnContext {
        conversation,
        turn,
        question,
        evidence,
    })
}

/// `{"results": [{"tool", "content"}], "question"?}` → the evidence of every result.
fn inline_evidence(v: Value) -> Result<(Evidence, Option<String>), ApiError> {
    let bad = |m: &str| ApiError::InvalidEvidence(m.to_string());
    let Value::Object(mut o) = v else {
        return Err(bad(
            "`evidence` must be an object: {\"results\": [{\"tool\", \"content\"}]}",
        ));
    };
    let question = match o.remove("question") {
        None | Some(Value::Null) => None,
        Some(Value::String(q)) => Some(q),
        Some(_) => return Err(bad("`evidence.question` must be a string")),
    };
    let Some(Value::Array(results)) = o.remove("results") else {
        return Err(bad(
            "`evidence.results` is required: an array of {tool, content}",
        ));
    };
    if results.len() > MAX_EVIDENCE_RESULTS {
        return Err(ApiError::InvalidEvidence(format!(
            "at most {MAX_EVIDENCE_RESULTS} results in `evidence.results`"
        )));
    }
    let mut evidence = Evidence::default();
    for (i, r) in results.into_iter().enumerate() {
        let content = match r {
            Value::Object(mut r) => r.remove("content"),
            _ => None,
        };
        let text = match content {
            Some(Value::String(s)) => s,
            Some(Value::Null) | None => {
                return Err(ApiError::InvalidEvidence(format!(
                    "`evidence.results[{i}]` needs `content`: a string or any JSON value"
                )))
            }
            Some(v) => v.to_string(),
        };
        evidence.merge(&Evidence::of_text(&text));
    }
    Ok((evidence, question))
}

/// Mask an agent's whole answer before it leaves, and check its figures against the turn.
#[utoipa::path(
    post,
    path = "/v1/screen-output",
    tag = "screens",
    request_body = RawOutputRequest,
    responses(
        (status = 200, description = "The answer masked, and its verdict", body = OutputVerdict),
        (status = "4XX", description = "A bad request: every error is JSON", body = ErrorBody),
        (status = 503, description = "Overloaded (`Retry-After: 1`): treat it as a block", body = ErrorBody),
    )
)]
pub async fn screen_output(open: Opened<OutputRequest>) -> Result<HttpResponse, ApiError> {
    let OutputRequest {
        text,
        request_id,
        turn,
    } = open.request;
    let records = open.screener.records();
    let p = &open.product;
    let v = match turn.wants_lookup() {
        false => output::answer(p, &text, request_id, records),
        true => {
            let model = output::lookup_model(p);
            let model = model
                .as_ref()
                .map(|m| m as &dyn crate::screens::output::lookup::LookupModel);
            let turns = open.state.gate.as_ref();
            output::answer_turn(p, &text, request_id, &turn, turns, model, records).await
        }
    };
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
    /// The conversation and turn (the lookup check's stored evidence and memory).
    conversation: Option<String>,
    turn: Option<String>,
    /// What the person typed: a data question holds the whole answer until it is checked.
    question: Option<String>,
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
    turn: TurnContext,
}

impl RouteRequest for StreamRequest {
    const SOURCE: Source = Source::Query;
    const BUDGET: Budget = Budget::Stream;
    type Raw<'a> = StreamQuery;

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
        let turn = turn_context(
            raw.conversation.map(Value::String),
            raw.turn.map(Value::String),
            raw.question.map(Value::String),
            None,
        )?;
        Ok(StreamRequest { request_id, turn })
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
    let mut out = OutputStream::new(&open.product);
    let turn = open.request.turn;
    out.set_turn(&open.product, turn.clone());
    let pump = Pump {
        payload,
        limits: open.product.output.stream,
        opened: now,
        heard: now,
        http: open.state.http.clone(),
        line: Vec::new(),
        out: Some(out),
        turn,
        deltas: 0,
        turns: open.state.turns(),
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

/// A request line: a delta, or (before the first delta) the turn's context:
/// `{"evidence": {...}, "question"?, "conversation"?, "turn"?}`.
#[derive(Debug, Deserialize)]
struct DeltaLine {
    #[serde(default)]
    delta: Option<Value>,
    #[serde(default)]
    evidence: Option<Value>,
    #[serde(default)]
    question: Option<Value>,
    #[serde(default)]
    conversation: Option<Value>,
    #[serde(default)]
    turn: Option<Value>,
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
    /// The turn, as the query and a context line gave it.
    turn: TurnContext,
    /// Deltas read (a context line comes before the first).
    deltas: usize,
    turns: Arc<dyn crate::screens::output::lookup::TurnMemory>,
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
                    Err(e) => return self.end(Some(e)).await,
                }
            }
            if self.line.len() > MAX_LINE_BYTES {
                return self
                    .end(Some(ApiError::PayloadTooLarge(MAX_LINE_BYTES)))
                    .await;
            }
            let idle_at = self.heard + self.limits.idle;
            let last_at = self.opened + self.limits.max;
            let next = tokio::time::timeout_at(idle_at.min(last_at), self.payload.next()).await;
            let Ok(next) = next else {
                let why = match idle_at <= last_at {
                    true => OutputReason::StreamIdle,
                    false => OutputReason::StreamTooLong,
                };
                return self.end_with(None, Some(why)).await;
            };
            match next {
                Some(Ok(chunk)) => {
                    self.heard = tokio::time::Instant::now();
                    self.line.extend_from_slice(&chunk);
                }
                Some(Err(e)) => {
                    let e = ApiError::BadBody(e.to_string());
                    return self.end(Some(e)).await;
                }
                None => {
                    // The last line may lack its newline.
                    let rest = std::mem::take(&mut self.line);
                    if !rest.iter().all(u8::is_ascii_whitespace) {
                        match self.take_line(&rest) {
                            Ok(Some(mut masked)) => {
                                masked.extend(self.end(None).await);
                                return masked;
                            }
                            Ok(None) => {}
                            Err(e) => return self.end(Some(e)).await,
                        }
                    }
                    return self.end(None).await;
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
        let delta = match parsed.delta {
            Some(Value::String(delta)) => delta,
            None if self.deltas == 0 => {
                // The turn's context line, before the first delta.
                let t = turn_context(
                    parsed.conversation,
                    parsed.turn,
                    parsed.question,
                    parsed.evidence,
                )?;
                let merged = TurnContext {
                    conversation: t.conversation.or(self.turn.conversation.take()),
                    turn: t.turn.or(self.turn.turn.take()),
                    question: t.question.or(self.turn.question.take()),
                    evidence: t.evidence.or(self.turn.evidence.take()),
                };
                if let Some(out) = &mut self.out {
                    out.set_turn(&self.product, merged.clone());
                }
                self.turn = merged;
                return Ok(None);
            }
            _ => return Err(ApiError::InvalidText("delta")),
        };
        self.deltas += 1;
        self.hasher.update(&delta);
        let Some(out) = &mut self.out else {
            return Ok(None);
        };
        let masked = out.push(&delta);
        Ok((!masked.is_empty()).then(|| delta_line(&masked)))
    }

    /// The rest of the masked text, then the verdict (or the error) line.
    async fn end(&mut self, error: Option<ApiError>) -> Vec<u8> {
        self.end_with(error, None).await
    }

    /// [`end`](Self::end), or for a stream cut by a deadline (`cut`), a verdict that blocks.
    /// The lookup check, when the turn wants it, runs here over the whole masked answer.
    async fn end_with(&mut self, error: Option<ApiError>, cut: Option<OutputReason>) -> Vec<u8> {
        self.ended = true;
        let Some(out) = self.out.take() else {
            return Vec::new();
        };
        let records = self.screener.records();
        let hash = std::mem::replace(&mut self.hasher, records.audit.hasher()).finish();
        let (rest, mut v) = match (cut, &error) {
            (Some(why), _) => out.cut(&self.product, why),
            // An error ends the stream: nothing held leaves (the masking-only finish withholds
            // a held answer: it was never checked).
            (None, Some(_)) => out.finish(&self.product),
            (None, None) => {
                let model = output::lookup_model(&self.product);
                let model = model
                    .as_ref()
                    .map(|m| m as &dyn crate::screens::output::lookup::LookupModel);
                let turns = self.turns.as_ref();
                out.finish_turn(&self.product, turns, model, records, &hash)
                    .await
            }
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

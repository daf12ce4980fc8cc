//! `POST /v1/tool-calls`: the calls the model proposes, through the gate. The body is read
//! strictly ([`crate::screens::tools::wire`]): a key given twice anywhere refuses it whole
//! (`400 duplicate_key`), and each call is read in exactly one of the shapes agent frameworks
//! hold; a call that could be read two ways is skipped as `ambiguous_call`.

use super::error::{ApiError, ErrorBody};
use super::extract::{required_id, Opened, RouteRequest, Source};
use super::openapi::{CallerSchema, Id};
use crate::screens::caller::Caller;
use crate::screens::tools::wire::{self, WireError};
use crate::screens::tools::{self, GateVerdict, Round};
use actix_web::HttpResponse;
use serde::Deserialize;
use serde_json::Value;
use utoipa::ToSchema;

/// More calls than this in one request is refused whole (the cap skips most of them anyway).
pub const MAX_CALLS_PER_REQUEST: usize = 1_000;

/// The body as sent (parsed strictly, then read into this). Unknown top-level fields are
/// ignored.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(as = ToolCallsRequest)]
pub struct RawToolCalls {
    /// 1 to 256 characters.
    #[serde(default)]
    #[schema(value_type = Id, required = true)]
    product: Option<Value>,
    /// The platform's conversation id (1 to 256 characters); logged only as a keyed hash.
    #[serde(default)]
    #[schema(value_type = Id, required = true)]
    conversation: Option<Value>,
    /// The turn within the conversation (1 to 256 characters): dedupe is per turn.
    #[serde(default)]
    #[schema(value_type = Id, required = true)]
    turn: Option<Value>,
    /// At most 1,000 calls.
    #[serde(default)]
    #[schema(value_type = Vec<ToolCall>, required = true)]
    calls: Option<Value>,
    /// Whose turn it is, from the platform's own session (never the model's output): record
    /// arguments are checked against it where the product declares `entitlement`.
    #[serde(default)]
    #[schema(value_type = Option<CallerSchema>)]
    caller: Option<Value>,
}

/// One proposed call, in any of three shapes: `{id, tool, args}`, `{id, name, arguments}`, or
/// OpenAI's `{id, type: "function", function: {name, arguments: "<JSON text>"}}`. The
/// arguments are an object, or JSON text holding one; absent or empty is `{}`.
#[derive(Debug, ToSchema)]
#[allow(dead_code)]
pub struct ToolCall {
    #[schema(value_type = Option<Id>)]
    id: Option<Value>,
    tool: Option<String>,
    name: Option<String>,
    #[schema(value_type = Option<Value>)]
    args: Option<Value>,
    #[schema(value_type = Option<Value>)]
    arguments: Option<Value>,
    #[serde(rename = "type")]
    kind: Option<String>,
    function: Option<ToolFunction>,
}

/// OpenAI's `function` of a call.
#[derive(Debug, ToSchema)]
#[allow(dead_code)]
pub struct ToolFunction {
    name: Option<String>,
    /// JSON text holding an object (or the object).
    #[schema(value_type = Option<Value>)]
    arguments: Option<Value>,
}

impl RouteRequest for Round {
    const SOURCE: Source = Source::Body;
    type Raw<'a> = RawToolCalls;

    /// The duplicate-detecting parse: which of two equal keys an executor reads is not the
    /// gate's to guess.
    fn parse(body: &[u8]) -> Result<RawToolCalls, ApiError> {
        match wire::parse_strict(body).map_err(wire_error)? {
            v @ serde_json::Value::Object(_) => serde_json::from_value(v)
                .map_err(|e| ApiError::MalformedJson(format!("the body is not valid JSON: {e}"))),
            _ => Err(ApiError::MalformedJson(
                "the body must be a JSON object".into(),
            )),
        }
    }

    fn product(raw: &RawToolCalls) -> Result<String, ApiError> {
        required_id(raw.product.clone(), "product", ApiError::MissingProduct)
    }

    fn check(raw: RawToolCalls) -> Result<Self, ApiError> {
        let conversation = required_id(
            raw.conversation,
            "conversation",
            ApiError::MissingConversation,
        )?;
        let turn = required_id(raw.turn, "turn", ApiError::MissingTurn)?;
        let caller = Caller::from_json(raw.caller).map_err(ApiError::InvalidCaller)?;
        let Some(Value::Array(calls)) = raw.calls else {
            return Err(ApiError::MissingCalls);
        };
        if calls.len() > MAX_CALLS_PER_REQUEST {
            return Err(ApiError::TooManyCalls(MAX_CALLS_PER_REQUEST));
        }
        let calls = calls
            .into_iter()
            .enumerate()
            .map(|(i, c)| wire::read_call(c, i))
            .collect::<Result<_, _>>()
            .map_err(wire_error)?;
        Ok(Round {
            conversation,
            turn,
            calls,
            caller,
        })
    }
}

/// Decide which of the model's proposed tool calls run.
#[utoipa::path(
    post,
    path = "/v1/tool-calls",
    tag = "screens",
    request_body = RawToolCalls,
    responses(
        (status = 200, description = "One decision per call, in order", body = GateVerdict),
        (status = "4XX", description = "A bad request: every error is JSON", body = ErrorBody),
        (status = 503, description = "Overloaded (`Retry-After: 1`): treat it as a block", body = ErrorBody),
    )
)]
pub async fn tool_calls(open: Opened<Round>) -> Result<HttpResponse, ApiError> {
    let records = open.screener.records();
    let verdict = tools::screen(&open.product, &open.state.gate, open.request, records).await;
    Ok(HttpResponse::Ok().json(verdict))
}

/// `400 duplicate_key` (the key's path, never a value) or `400 malformed_json`.
fn wire_error(e: WireError) -> ApiError {
    match e {
        WireError::DuplicateKey(path) => ApiError::DuplicateKey(path),
        WireError::Malformed(detail) => {
            ApiError::MalformedJson(format!("the body is not valid JSON: {detail}"))
        }
    }
}

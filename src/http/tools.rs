//! `POST /v1/tool-calls`: the calls the model proposes, through the gate. The body is read
//! tolerantly: the call shapes agent frameworks hold are all understood.

use super::error::{ApiError, ErrorBody};
use super::extract::{label, required_id, Opened, RouteRequest, Source};
use super::openapi::Id;
use crate::screens::tools::{self, GateVerdict, ProposedCall, Round};
use actix_web::HttpResponse;
use serde::Deserialize;
use serde_json::Value;
use utoipa::ToSchema;

/// More calls than this in one request is refused whole (the cap skips most of them anyway).
pub const MAX_CALLS_PER_REQUEST: usize = 1_000;

/// The body as sent. Unknown fields are ignored (tolerant wire).
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
    type Raw = RawToolCalls;

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
        let Some(Value::Array(calls)) = raw.calls else {
            return Err(ApiError::MissingCalls);
        };
        if calls.len() > MAX_CALLS_PER_REQUEST {
            return Err(ApiError::TooManyCalls(MAX_CALLS_PER_REQUEST));
        }
        Ok(Round {
            conversation,
            turn,
            calls: calls.into_iter().map(proposed_call).collect(),
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

/// One call as the model proposed it. Tolerant of the shapes agent frameworks hold:
/// `{id, tool, args}`, `{id, name, arguments}`, and OpenAI's
/// `{id, type: "function", function: {name, arguments: "<JSON text>"}}`.
pub(crate) fn proposed_call(v: Value) -> ProposedCall {
    let Value::Object(mut call) = v else {
        return ProposedCall {
            id: None,
            tool: None,
            args: Err("a call is an object {id, tool, args}".into()),
        };
    };
    let function = match call.remove("function") {
        Some(Value::Object(f)) => f,
        _ => serde_json::Map::new(),
    };
    let id = label(call.get("id"));
    let tool = label(
        call.get("tool")
            .or_else(|| call.get("name"))
            .or_else(|| function.get("name")),
    );
    let args = call
        .remove("args")
        .or_else(|| call.remove("arguments"))
        .or_else(|| function.get("arguments").cloned())
        .unwrap_or(Value::Null);
    let args = match args {
        // Arguments as JSON text (OpenAI's wire): parsed, so white space and key order vanish.
        Value::String(s) if s.trim().is_empty() => Ok(Value::Null),
        Value::String(s) => serde_json::from_str(&s)
            .map_err(|_| "the arguments are not valid JSON: send an object".to_string()),
        other => Ok(other),
    };
    ProposedCall { id, tool, args }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openai_shaped_calls_are_read() {
        let c = proposed_call(serde_json::json!({
            "id": "call_1", "type": "function",
            "function": {"name": "get_balance", "arguments": "{\"account\": \"A1\"}"}
        }));
        assert_eq!(c.id.as_deref(), Some("call_1"));
        assert_eq!(c.tool.as_deref(), Some("get_balance"));
        assert_eq!(c.args.ok(), Some(serde_json::json!({"account": "A1"})));
        let bad = proposed_call(serde_json::json!({"id": "x", "name": "t", "arguments": "{oops"}));
        assert!(bad.args.is_err());
        let not_object = proposed_call(serde_json::json!([1]));
        assert!(not_object.id.is_none() && not_object.args.is_err());
    }
}

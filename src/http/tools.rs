//! `POST /v1/tool-calls`: the calls the model proposes, through the gate. The body is read
//! tolerantly: the call shapes agent frameworks hold are all understood.

use super::error::ApiError;
use super::extract::{label, required_id, Opened, RouteRequest, Source};
use crate::screens::tools::{self, ProposedCall, Round};
use actix_web::HttpResponse;
use serde::Deserialize;
use serde_json::Value;

/// More calls than this in one request is refused whole (the cap skips most of them anyway).
pub const MAX_CALLS_PER_REQUEST: usize = 1_000;

/// The body as sent. Unknown fields are ignored (tolerant wire).
#[derive(Debug, Deserialize)]
pub struct RawToolCalls {
    #[serde(default)]
    product: Option<Value>,
    #[serde(default)]
    conversation: Option<Value>,
    #[serde(default)]
    turn: Option<Value>,
    #[serde(default)]
    calls: Option<Value>,
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

pub async fn tool_calls(open: Opened<Round>) -> Result<HttpResponse, ApiError> {
    let records = open.screener.records();
    let verdict = tools::screen(&open.product, &open.state.gate, open.request, records).await;
    Ok(HttpResponse::Ok().json(verdict))
}

/// One call as the model proposed it. Tolerant of the shapes agent frameworks hold:
/// `{id, tool, args}`, `{id, name, arguments}`, and OpenAI's
/// `{id, type: "function", function: {name, arguments: "<JSON text>"}}`.
fn proposed_call(v: Value) -> ProposedCall {
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

//! While the agent works: `POST /v1/tool-calls` (the tool-call gate, [`crate::screens::tools`]) and
//! `POST /v1/screen-context` (untrusted documents, [`crate::screens::context`]). Thin handlers: read
//! the body tolerantly, hand it on, answer.

use super::error::ApiError;
use super::handlers::{admit, authorize_product, read_object, request_id};
use super::AppState;
use crate::screens::context::Document;
use crate::screens::tools::{ProposedCall, Round};
use actix_web::{web, HttpRequest, HttpResponse};
use serde::Deserialize;
use serde_json::Value;

/// More calls than this in one request is refused whole (the cap skips most of them anyway).
pub const MAX_CALLS_PER_REQUEST: usize = 1_000;
/// Documents per `/v1/screen-context` request.
pub const MAX_DOCUMENTS: usize = 64;

#[derive(Debug, Deserialize)]
pub struct ToolCallsRequest {
    #[serde(default)]
    product: Option<Value>,
    #[serde(default)]
    conversation: Option<Value>,
    #[serde(default)]
    turn: Option<Value>,
    #[serde(default)]
    calls: Option<Value>,
}

pub async fn tool_calls(
    state: web::Data<AppState>,
    req: HttpRequest,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let _permit = admit(&state, &req)?;
    let body: ToolCallsRequest = read_object(&state, &req, payload).await?;
    let product = required_id(body.product, "product", "missing_product")?;
    authorize_product(&state, &req, &product)?;
    let conversation = required_id(body.conversation, "conversation", "missing_conversation")?;
    let turn = required_id(body.turn, "turn", "missing_turn")?;
    let calls = match body.calls {
        Some(Value::Array(calls)) => calls,
        _ => {
            return Err(ApiError::unprocessable(
                "missing_calls",
                "`calls` is required: an array of {id, tool, args}",
            ))
        }
    };
    if calls.len() > MAX_CALLS_PER_REQUEST {
        return Err(ApiError::unprocessable(
            "too_many_calls",
            format!("at most {MAX_CALLS_PER_REQUEST} calls per request"),
        ));
    }
    let screener = state.screener.load_full();
    let p = screener
        .config
        .product(&product)
        .ok_or_else(|| ApiError::unknown_product(&product))?;
    let round = Round {
        conversation,
        turn,
        calls: calls.into_iter().map(proposed_call).collect(),
    };
    let records = screener.records();
    let verdict = crate::screens::tools::screen(p, &state.gate, round, records).await;
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

/// An optional label (a call's id or tool, a document's id or owner): a string, cut at 256
/// characters, or a number; anything else is none.
fn label(v: Option<&Value>) -> Option<String> {
    match v {
        Some(Value::String(s)) => Some(s.chars().take(256).collect()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    }
}

/// A required identifier: a non-empty string or a number, at most 256 characters.
fn required_id(v: Option<Value>, field: &str, code: &'static str) -> Result<String, ApiError> {
    let s = match v {
        Some(Value::String(s)) if !s.trim().is_empty() => s,
        Some(Value::Number(n)) => n.to_string(),
        _ => {
            return Err(ApiError::unprocessable(
                code,
                format!("`{field}` is required: a non-empty string or a number"),
            ))
        }
    };
    if s.chars().count() > 256 {
        return Err(ApiError::unprocessable(
            code,
            format!("`{field}` is at most 256 characters"),
        ));
    }
    Ok(s)
}

#[derive(Debug, Deserialize)]
pub struct ContextRequest {
    #[serde(default)]
    product: Option<Value>,
    #[serde(default)]
    documents: Option<Value>,
    /// The caller's owner id: documents carrying another `owner` are dropped.
    #[serde(default)]
    caller: Option<Value>,
    #[serde(default)]
    request_id: Option<Value>,
}

pub async fn screen_context(
    state: web::Data<AppState>,
    req: HttpRequest,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let _permit = admit(&state, &req)?;
    let body: ContextRequest = read_object(&state, &req, payload).await?;
    let product = required_id(body.product, "product", "missing_product")?;
    authorize_product(&state, &req, &product)?;
    let caller = match body.caller {
        None | Some(Value::Null) => None,
        v => Some(required_id(v, "caller", "invalid_caller")?),
    };
    let request_id = request_id(body.request_id)?;
    let docs = documents(body.documents)?;
    let screener = state.screener.load_full();
    let p = screener
        .config
        .product(&product)
        .ok_or_else(|| ApiError::unknown_product(&product))?;
    let records = screener.records();
    let verdict =
        crate::screens::context::answer(p, docs, caller.as_deref(), request_id, records).await;
    Ok(HttpResponse::Ok().json(verdict))
}

/// `documents`: an array of `{id?, text, owner?}` objects or of strings.
fn documents(v: Option<Value>) -> Result<Vec<Document>, ApiError> {
    let Some(Value::Array(items)) = v else {
        return Err(ApiError::unprocessable(
            "missing_documents",
            "`documents` is required: an array of {id?, text, owner?}",
        ));
    };
    if items.len() > MAX_DOCUMENTS {
        return Err(ApiError::unprocessable(
            "too_many_documents",
            format!("at most {MAX_DOCUMENTS} documents per request"),
        ));
    }
    let invalid = |i: usize| {
        ApiError::unprocessable(
            "invalid_document",
            format!("documents[{i}] needs `text`: a non-empty string"),
        )
    };
    items
        .into_iter()
        .enumerate()
        .map(|(i, item)| {
            let (id, text, owner) = match item {
                Value::String(t) => (None, Some(t), None),
                Value::Object(mut o) => {
                    let text = match o.remove("text") {
                        Some(Value::String(t)) => Some(t),
                        _ => None,
                    };
                    (label(o.get("id")), text, label(o.get("owner")))
                }
                _ => (None, None, None),
            };
            match text {
                Some(text) if !text.trim().is_empty() => Ok(Document { id, text, owner }),
                _ => Err(invalid(i)),
            }
        })
        .collect()
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

//! While the agent works: `POST /v1/tool-calls` (the tool-call gate, [`crate::screens::tools`]) and
//! `POST /v1/screen-context` (untrusted documents, [`crate::screens::context`]). Thin handlers: read
//! the body, hand it on, answer. The gate's body is read strictly
//! ([`crate::screens::tools::wire`]): a key given twice anywhere refuses it whole.

use super::error::ApiError;
use super::handlers::{admit, authorize_product, read_body, read_object, request_id, require_json};
use super::AppState;
use crate::screens::context::Document;
use crate::screens::tools::wire::{self, label, WireError};
use crate::screens::tools::Round;
use actix_web::{web, HttpRequest, HttpResponse};
use serde::Deserialize;
use serde_json::Value;

/// More calls than this in one request is refused whole (the cap skips most of them anyway).
pub const MAX_CALLS_PER_REQUEST: usize = 1_000;
/// Documents per `/v1/screen-context` request.
pub const MAX_DOCUMENTS: usize = 64;

pub async fn tool_calls(
    state: web::Data<AppState>,
    req: HttpRequest,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let _permit = admit(&state, &req)?;
    let mut body = read_strict_object(&state, &req, payload).await?;
    let product = required_id(body.remove("product"), "product", "missing_product")?;
    authorize_product(&state, &req, &product)?;
    let conversation = required_id(
        body.remove("conversation"),
        "conversation",
        "missing_conversation",
    )?;
    let turn = required_id(body.remove("turn"), "turn", "missing_turn")?;
    let calls = match body.remove("calls") {
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
    let calls = calls
        .into_iter()
        .enumerate()
        .map(|(i, c)| wire::read_call(c, i))
        .collect::<Result<_, _>>()
        .map_err(wire_error)?;
    let round = Round {
        conversation,
        turn,
        calls,
    };
    let records = screener.records();
    let verdict = crate::screens::tools::screen(p, &state.gate, round, records).await;
    Ok(HttpResponse::Ok().json(verdict))
}

/// A JSON object body read with the duplicate-detecting parse.
async fn read_strict_object(
    state: &AppState,
    req: &HttpRequest,
    payload: web::Payload,
) -> Result<serde_json::Map<String, Value>, ApiError> {
    require_json(req.headers())?;
    let bytes = read_body(state, req, payload).await?;
    match wire::parse_strict(&bytes).map_err(wire_error)? {
        Value::Object(map) => Ok(map),
        _ => Err(ApiError::new(
            400,
            "malformed_json",
            "the body must be a JSON object",
        )),
    }
}

/// `400 duplicate_key` (the key's path, never a value) or `400 malformed_json`.
fn wire_error(e: WireError) -> ApiError {
    match e {
        WireError::DuplicateKey(_) => ApiError::new(400, "duplicate_key", e.to_string()),
        WireError::Malformed(detail) => ApiError::malformed_json(detail),
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

//! `POST /v1/tool-calls`: the calls the model proposes, through the gate. The body is read
//! strictly ([`crate::screens::tools::wire`]): a key given twice anywhere refuses it whole
//! (`400 duplicate_key`), and each call is read in exactly one of the shapes agent frameworks
//! hold; a call that could be read two ways is skipped as `ambiguous_call`.

use super::error::ApiError;
use super::extract::{required_id, Opened, RouteRequest, Source};
use crate::screens::tools::wire::{self, WireError};
use crate::screens::tools::{self, Round};
use actix_web::HttpResponse;
use serde::Deserialize;
use serde_json::Value;

/// More calls than this in one request is refused whole (the cap skips most of them anyway).
pub const MAX_CALLS_PER_REQUEST: usize = 1_000;

/// The body as sent (parsed strictly, then read into this). Unknown top-level fields are
/// ignored.
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
        })
    }
}

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

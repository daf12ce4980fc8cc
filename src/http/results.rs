//! `POST /v1/tool-results`: what the tools returned, back through the guard
//! ([`crate::screens::results`]): each result screened and wrapped as untrusted content, and
//! kept as the turn's evidence. The body is read strictly, as the gate's is: a key given twice
//! anywhere refuses it whole (`400 duplicate_key`).

use super::error::{ApiError, ErrorBody};
use super::extract::{required_id, Opened, RouteRequest, Source};
use super::openapi::Id;
use crate::screens::results::{self, ResultsRequest, ResultsVerdict, ToolResult};
use crate::screens::tools::wire::{self, label, WireError};
use actix_web::HttpResponse;
use serde::Deserialize;
use serde_json::Value;
use utoipa::ToSchema;

/// The body as sent (parsed strictly, then read into this). Unknown top-level fields are
/// ignored.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(as = ToolResultsRequest)]
pub struct RawToolResults {
    #[serde(default)]
    #[schema(value_type = Id, required = true)]
    product: Option<Value>,
    /// The conversation of the gate's round (1 to 256 characters).
    #[serde(default)]
    #[schema(value_type = Id, required = true)]
    conversation: Option<Value>,
    /// The turn of the gate's round (1 to 256 characters): evidence is kept per turn.
    #[serde(default)]
    #[schema(value_type = Id, required = true)]
    turn: Option<Value>,
    /// The caller, as the platform's session knows it: accepted, not read by this route.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    #[allow(dead_code)]
    caller: Option<Value>,
    /// At most 32 results.
    #[serde(default)]
    #[schema(value_type = Vec<ToolResultItem>, required = true)]
    results: Option<Value>,
}

/// One tool result: the id of the call it answers (as the gate saw it), the tool, whether it
/// succeeded, and what it returned (a string, or JSON, serialised; at most 32 KiB).
#[derive(Debug, ToSchema)]
#[allow(dead_code)]
pub struct ToolResultItem {
    #[schema(value_type = Id)]
    id: Value,
    tool: String,
    ok: bool,
    /// A non-empty string, or any JSON value but `null` (serialised). For a failure: its error.
    #[schema(value_type = Value)]
    content: Value,
}

impl RouteRequest for ResultsRequest {
    const SOURCE: Source = Source::Body;
    type Raw<'a> = RawToolResults;

    fn parse(body: &[u8]) -> Result<RawToolResults, ApiError> {
        let v = wire::parse_strict(body).map_err(|e| match e {
            WireError::DuplicateKey(path) => ApiError::DuplicateKey(path),
            WireError::Malformed(d) => {
                ApiError::MalformedJson(format!("the body is not valid JSON: {d}"))
            }
        })?;
        serde_json::from_value(v)
            .map_err(|e| ApiError::MalformedJson(format!("the body is not valid JSON: {e}")))
    }

    fn product(raw: &RawToolResults) -> Result<String, ApiError> {
        required_id(raw.product.clone(), "product", ApiError::MissingProduct)
    }

    fn check(raw: RawToolResults) -> Result<Self, ApiError> {
        let conversation = required_id(
            raw.conversation,
            "conversation",
            ApiError::MissingConversation,
        )?;
        let turn = required_id(raw.turn, "turn", ApiError::MissingTurn)?;
        let Some(Value::Array(items)) = raw.results else {
            return Err(ApiError::MissingResults);
        };
        if items.len() > results::MAX_RESULTS_PER_REQUEST {
            return Err(ApiError::TooManyResults(results::MAX_RESULTS_PER_REQUEST));
        }
        let results = items
            .into_iter()
            .enumerate()
            .map(|(i, item)| read_result(i, item))
            .collect::<Result<_, _>>()?;
        Ok(ResultsRequest {
            conversation,
            turn,
            results,
        })
    }
}

/// `results[i]`: `{id, tool, ok, content}`, each checked.
fn read_result(i: usize, item: Value) -> Result<ToolResult, ApiError> {
    let Value::Object(mut o) = item else {
        return Err(ApiError::InvalidResult(
            i,
            "a result is an object {id, tool, ok, content}",
        ));
    };
    let id = label(o.get("id"))
        .filter(|id| !id.trim().is_empty())
        .ok_or(ApiError::InvalidResult(
            i,
            "`id` is required: the call's id, a string or a number",
        ))?;
    let tool = match o.get("tool") {
        Some(Value::String(t)) if !t.trim().is_empty() && t.chars().count() <= 128 => t.clone(),
        _ => {
            return Err(ApiError::InvalidResult(
                i,
                "`tool` is required: the tool's name, 1 to 128 characters",
            ))
        }
    };
    let Some(Value::Bool(ok)) = o.get("ok") else {
        return Err(ApiError::InvalidResult(
            i,
            "`ok` is required: true or false",
        ));
    };
    let ok = *ok;
    let content = match o.remove("content") {
        Some(Value::String(s)) => s,
        None | Some(Value::Null) => String::new(),
        Some(json) => json.to_string(),
    };
    if content.trim().is_empty() {
        return Err(ApiError::InvalidResult(
            i,
            "`content` is required: the tool's output, or its error when `ok` is false",
        ));
    }
    if content.len() > results::MAX_RESULT_BYTES {
        return Err(ApiError::ResultTooLarge(i, results::MAX_RESULT_BYTES));
    }
    Ok(ToolResult {
        id,
        tool,
        ok,
        content,
    })
}

/// Hand the tools' results back through the guard: screened, wrapped, kept as the turn's
/// evidence.
#[utoipa::path(
    post,
    path = "/v1/tool-results",
    tag = "screens",
    request_body = RawToolResults,
    responses(
        (status = 200, description = "Each result screened (wrapped when it passes) and the turn's evidence kept; `state: gate_unavailable` when the store did not answer (every result blocked)", body = ResultsVerdict),
        (status = "4XX", description = "A bad request: every error is JSON", body = ErrorBody),
        (status = 503, description = "Overloaded (`Retry-After: 1`): treat it as a block", body = ErrorBody),
    )
)]
pub async fn tool_results(open: Opened<ResultsRequest>) -> Result<HttpResponse, ApiError> {
    let records = open.screener.records();
    let verdict = results::answer(&open.product, &open.state.gate, open.request, records)
        .await
        .map_err(|full| ApiError::TurnEvidenceFull(full.0))?;
    Ok(HttpResponse::Ok().json(verdict))
}

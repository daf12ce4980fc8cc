//! `POST /v1/screen`: a question through the input screen. The answer is the verdict JSON;
//! a cached verdict is answered with the JSON serialised once.

use super::error::ApiError;
use super::error::ErrorBody;
use super::extract::{json_response, named_product, request_id, Opened, RouteRequest, Source};
use super::openapi::{CallerSchema, Id};
use crate::screens::caller::Caller;
use crate::screens::input::Answered;
use crate::verdict::Verdict;
use actix_web::http::header;
use actix_web::HttpResponse;
use serde::Deserialize;
use serde_json::Value;
use utoipa::ToSchema;

/// The body of `POST /v1/screen` and `POST /v1/screen-output`. Unknown fields are ignored
/// (tolerant wire).
#[derive(Debug, Deserialize, ToSchema)]
#[schema(as = TextRequest)]
pub struct RawTextRequest {
    /// A product in `products/` (case-sensitive).
    #[serde(default)]
    #[schema(value_type = String, required = true)]
    pub product: Option<String>,
    /// The question (or the answer): not empty, with at least one visible character.
    #[serde(default)]
    #[schema(value_type = String, required = true)]
    pub text: Option<Value>,
    /// Echoed in the verdict (a string is cut at 128 characters).
    #[serde(default)]
    #[schema(value_type = Option<Id>)]
    pub request_id: Option<Value>,
    /// Whose turn it is, from the platform's own session (never the model's output or the
    /// user's text): rules with `#others_record` compare the numbers a question names with
    /// the caller's records.
    #[serde(default)]
    #[schema(value_type = Option<CallerSchema>)]
    pub caller: Option<Value>,
}

/// A text to screen (a question or an answer), checked.
#[derive(Debug)]
pub struct TextRequest {
    pub text: String,
    pub request_id: Option<String>,
    pub caller: Option<Caller>,
}

impl RouteRequest for TextRequest {
    const SOURCE: Source = Source::Body;
    type Raw<'a> = RawTextRequest;

    fn product(raw: &RawTextRequest) -> Result<String, ApiError> {
        named_product(&raw.product, "`product` is required")
    }

    fn check(raw: RawTextRequest) -> Result<Self, ApiError> {
        Ok(TextRequest {
            text: checked_text(raw.text)?,
            request_id: request_id(raw.request_id)?,
            caller: Caller::from_json(raw.caller).map_err(ApiError::InvalidCaller)?,
        })
    }
}

/// The checks every text to screen takes, over HTTP and in `guard screen --jsonl` alike: a
/// string (`invalid_text`), not empty (`missing_text`), with a visible character
/// (`no_visible_text`).
pub fn checked_text(text: Option<Value>) -> Result<String, ApiError> {
    match text {
        Some(Value::String(t)) if !t.trim().is_empty() => {
            if crate::text::has_visible(&t) {
                Ok(t)
            } else {
                Err(ApiError::NoVisibleText)
            }
        }
        Some(Value::String(_)) | None | Some(Value::Null) => Err(ApiError::MissingText),
        Some(_) => Err(ApiError::InvalidText("text")),
    }
}

/// Screen a question before the agent sees it.
#[utoipa::path(
    post,
    path = "/v1/screen",
    tag = "screens",
    request_body = RawTextRequest,
    responses(
        (status = 200, description = "The verdict (a block is a 200: read `decision`)", body = Verdict),
        (status = "4XX", description = "A bad request: every error is JSON", body = ErrorBody),
        (status = 503, description = "Overloaded (`Retry-After: 1`): treat it as a block", body = ErrorBody),
    )
)]
pub async fn screen(open: Opened<TextRequest>) -> Result<HttpResponse, ApiError> {
    let TextRequest {
        text,
        request_id,
        caller,
    } = open.request;
    let name = &open.product.name;
    let answered = open
        .screener
        .answer(name, &text, caller.as_ref(), request_id)
        .await;
    Ok(match answered {
        Some(Answered::Shared(answer)) => HttpResponse::Ok()
            .insert_header(header::ContentType::json())
            .body(answer.json.clone()),
        Some(Answered::Fresh(verdict)) => json_response(&verdict),
        None => return Err(ApiError::UnknownProduct(name.clone())),
    })
}

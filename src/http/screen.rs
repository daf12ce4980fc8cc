//! `POST /v1/screen`: a question through the input screen. The answer is the verdict JSON;
//! a cached verdict is answered with the JSON serialised once.

use super::error::ApiError;
use super::extract::{json_response, named_product, request_id, Opened, RouteRequest, Source};
use crate::screens::input::Answered;
use actix_web::http::header;
use actix_web::HttpResponse;
use serde::Deserialize;
use serde_json::Value;

/// The body of `POST /v1/screen` and `POST /v1/screen-output`. Unknown fields are ignored
/// (tolerant wire).
#[derive(Debug, Deserialize)]
pub struct RawTextRequest {
    #[serde(default)]
    pub product: Option<String>,
    #[serde(default)]
    pub text: Option<Value>,
    #[serde(default)]
    pub request_id: Option<Value>,
}

/// A text to screen (a question or an answer), checked.
#[derive(Debug)]
pub struct TextRequest {
    pub text: String,
    pub request_id: Option<String>,
}

impl RouteRequest for TextRequest {
    const SOURCE: Source = Source::Body;
    type Raw = RawTextRequest;

    fn product(raw: &RawTextRequest) -> Result<String, ApiError> {
        named_product(&raw.product, "`product` is required")
    }

    fn check(raw: RawTextRequest) -> Result<Self, ApiError> {
        Ok(TextRequest {
            text: checked_text(raw.text)?,
            request_id: request_id(raw.request_id)?,
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

pub async fn screen(open: Opened<TextRequest>) -> Result<HttpResponse, ApiError> {
    let TextRequest { text, request_id } = open.request;
    let name = &open.product.name;
    let answered = open.screener.answer(name, &text, request_id).await;
    Ok(match answered {
        Some(Answered::Shared(answer)) => HttpResponse::Ok()
            .insert_header(header::ContentType::json())
            .body(answer.json.clone()),
        Some(Answered::Fresh(verdict)) => json_response(&verdict),
        None => return Err(ApiError::UnknownProduct(name.clone())),
    })
}

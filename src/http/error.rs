//! `ApiError`: every error response of the HTTP API, with a status and a stable snake_case code:
//! `{"error": {"code": "...", "message": "..."}}`. Nothing a client sends produces a 500.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use serde_json::json;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct ApiError {
    pub status: u16,
    pub code: &'static str,
    pub message: String,
}

impl ApiError {
    /// Every code `POST /v1/screen` can answer with (the metric's closed label set).
    pub const SCREEN_CODES: [&'static str; 14] = [
        "malformed_json",
        "bad_body",
        "missing_product",
        "missing_text",
        "no_visible_text",
        "invalid_text",
        "invalid_request_id",
        "unknown_product",
        "payload_too_large",
        "unsupported_media_type",
        "overloaded",
        "request_timeout",
        "unauthorized",
        "forbidden_product",
    ];

    pub fn new(status: u16, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
        }
    }

    pub fn malformed_json(detail: impl std::fmt::Display) -> Self {
        Self::new(
            400,
            "malformed_json",
            format!("the body is not valid JSON: {detail}"),
        )
    }
    pub fn unauthorized() -> Self {
        Self::new(
            401,
            "unauthorized",
            "a valid `Authorization: Bearer <GUARD_ADMIN_TOKEN>` header is required",
        )
    }
    pub fn not_found() -> Self {
        Self::new(404, "not_found", "no such route; see README.md for the API")
    }
    pub fn unknown_product(name: &str) -> Self {
        let shown: String = name.chars().take(64).collect();
        Self::new(
            404,
            "unknown_product",
            format!("no product named `{shown}`"),
        )
    }
    pub fn method_not_allowed(allowed: &str) -> Self {
        Self::new(
            405,
            "method_not_allowed",
            format!("this route accepts {allowed}"),
        )
    }
    pub fn payload_too_large(limit: usize) -> Self {
        Self::new(
            413,
            "payload_too_large",
            format!("the body is larger than the limit of {limit} bytes"),
        )
    }
    pub fn unsupported_media_type() -> Self {
        Self::new(
            415,
            "unsupported_media_type",
            "send the body as `Content-Type: application/json`",
        )
    }
    pub fn unprocessable(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(422, code, message)
    }
    /// Every in-flight slot is taken: `503` with `Retry-After: 1`; callers treat it as a block.
    pub fn overloaded() -> Self {
        Self::new(
            503,
            "overloaded",
            "too many screens in flight; retry after a second (treat this as a block)",
        )
    }
    pub fn request_timeout(limit: std::time::Duration) -> Self {
        Self::new(
            408,
            "request_timeout",
            format!("the body did not arrive within {} ms", limit.as_millis()),
        )
    }
    pub fn unavailable(message: impl Into<String>) -> Self {
        Self::new(503, "not_ready", message)
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        StatusCode::from_u16(self.status).unwrap_or(StatusCode::BAD_REQUEST)
    }

    fn error_response(&self) -> HttpResponse {
        let mut response = HttpResponse::build(self.status_code());
        if self.code == "overloaded" {
            response.insert_header((actix_web::http::header::RETRY_AFTER, "1"));
        }
        response.json(json!({"error": {"code": self.code, "message": self.message}}))
    }
}

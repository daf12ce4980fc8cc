//! `ApiError`: every error response of the HTTP API. Each variant is one stable snake_case
//! code with its status: `{"error": {"code": "...", "message": "..."}}`. Nothing a client sends
//! produces a 500.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use serde::Serialize;
use std::time::Duration;
use utoipa::ToSchema;

/// Declares [`ApiError`] from one table of variant, status and code, so the list of codes
/// (the metric's closed label set) cannot drift from the variants.
macro_rules! api_errors {
    ($( $(#[$doc:meta])* $variant:ident $(($($field:ty),+))? => $status:literal, $code:literal; )+) => {
        /// An error answer of the HTTP API; the variant is its code.
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub enum ApiError {
            $( $(#[$doc])* $variant $(($($field),+))?, )+
        }

        impl ApiError {
            /// Every code, one per variant.
            pub const CODES: &'static [&'static str] = &[$($code),+];

            /// The stable snake_case code.
            pub fn code(&self) -> &'static str {
                match self {
                    $( api_errors!(@pattern $variant $(($($field),+))?) => $code, )+
                }
            }

            pub fn status(&self) -> u16 {
                match self {
                    $( api_errors!(@pattern $variant $(($($field),+))?) => $status, )+
                }
            }
        }
    };
    (@pattern $variant:ident) => { ApiError::$variant };
    (@pattern $variant:ident ($($field:ty),+)) => { ApiError::$variant(..) };
}

api_errors! {
    /// The body is not JSON, or not a JSON object (the message says which).
    MalformedJson(String) => 400, "malformed_json";
    /// A key given twice in one object of the body (its path, never a value).
    DuplicateKey(String) => 400, "duplicate_key";
    /// The body could not be read (the connection's error).
    BadBody(String) => 400, "bad_body";
    /// The query could not be read.
    BadQuery(String) => 400, "bad_query";
    /// No valid credential: which one (an API key, the admin token).
    Unauthorized(&'static str) => 401, "unauthorized";
    /// The API key is not for this product (its name).
    ForbiddenProduct(String) => 403, "forbidden_product";
    NotFound => 404, "not_found";
    /// No product of this name.
    UnknownProduct(String) => 404, "unknown_product";
    /// The methods the route takes.
    MethodNotAllowed(&'static str) => 405, "method_not_allowed";
    /// The body did not arrive within the deadline.
    RequestTimeout(Duration) => 408, "request_timeout";
    /// The body is over the limit (in bytes).
    PayloadTooLarge(usize) => 413, "payload_too_large";
    UnsupportedMediaType => 415, "unsupported_media_type";
    /// The product is missing, empty or too long (the message says which).
    MissingProduct(String) => 422, "missing_product";
    MissingText => 422, "missing_text";
    NoVisibleText => 422, "no_visible_text";
    /// A text that is not a string (the field's name).
    InvalidText(&'static str) => 422, "invalid_text";
    InvalidRequestId => 422, "invalid_request_id";
    MissingConversation(String) => 422, "missing_conversation";
    MissingTurn(String) => 422, "missing_turn";
    MissingCalls => 422, "missing_calls";
    /// More calls than a request may carry (the limit).
    TooManyCalls(usize) => 422, "too_many_calls";
    InvalidCaller(String) => 422, "invalid_caller";
    MissingDocuments => 422, "missing_documents";
    /// Inline `evidence` that is not `{"results": [{tool, content}]}`, or too much of it.
    InvalidEvidence(String) => 422, "invalid_evidence";
    /// More documents than a request may carry (the limit).
    TooManyDocuments(usize) => 422, "too_many_documents";
    /// The document at this index has no text.
    InvalidDocument(usize) => 422, "invalid_document";
    MissingResults => 422, "missing_results";
    /// More tool results than a request may carry (the limit).
    TooManyResults(usize) => 422, "too_many_results";
    /// The tool result at this index is not `{id, tool, ok, content}` (what is wrong).
    InvalidResult(usize, &'static str) => 422, "invalid_result";
    /// The tool result at this index has more content than the limit (in bytes).
    ResultTooLarge(usize, usize) => 422, "result_too_large";
    /// The turn's evidence would go over its limit (which).
    TurnEvidenceFull(String) => 422, "turn_evidence_full";
    /// LiteLLM's `input_type` is absent or neither `request` nor `response`.
    MissingInputType => 422, "missing_input_type";
    /// A gateway contract's messages (or choices) are absent or empty (the message says which).
    MissingMessages(String) => 422, "missing_messages";
    /// A reload found problems: every one, the old configuration keeps serving.
    InvalidConfig(Vec<String>) => 422, "invalid_config";
    /// Every in-flight slot is taken: `503` with `Retry-After: 1`; callers treat it as a block.
    Overloaded => 503, "overloaded";
    /// The service cannot answer yet (why).
    NotReady(String) => 503, "not_ready";
}

impl ApiError {
    /// What the client is told (never screened text).
    pub fn message(&self) -> String {
        use ApiError as E;
        match self {
            E::MalformedJson(m) | E::MissingProduct(m) | E::MissingConversation(m) => m.clone(),
            E::MissingTurn(m) | E::InvalidCaller(m) | E::NotReady(m) => m.clone(),
            E::MissingMessages(m) | E::InvalidEvidence(m) => m.clone(),
            E::MissingInputType => "`input_type` is required: \"request\" or \"response\"".into(),
            E::BadBody(e) => format!("could not read the body: {e}"),
            E::DuplicateKey(path) => {
                format!(
                    "the key `{}` is given twice: send each key once",
                    shown(path)
                )
            }
            E::BadQuery(e) => format!("could not read the query: {e}"),
            E::Unauthorized("API key") => {
                "a valid `Authorization: Bearer <API key>` or `x-api-key` header is required".into()
            }
            E::Unauthorized(what) => {
                format!("a valid `Authorization: Bearer <{what}>` header is required")
            }
            E::ForbiddenProduct(p) => format!("this API key is not for product `{}`", shown(p)),
            E::NotFound => "no such route; see docs/api.md for the API".into(),
            E::UnknownProduct(p) => format!("no product named `{}`", shown(p)),
            E::MethodNotAllowed(allowed) => format!("this route accepts {allowed}"),
            E::RequestTimeout(limit) => {
                format!("the body did not arrive within {} ms", limit.as_millis())
            }
            E::PayloadTooLarge(limit) => {
                format!("the body is larger than the limit of {limit} bytes")
            }
            E::UnsupportedMediaType => "send the body as `Content-Type: application/json`".into(),
            E::MissingText => "`text` is required and must not be empty".into(),
            E::NoVisibleText => {
                "`text` has no visible character (only white space or invisible characters)".into()
            }
            E::InvalidText(field) => format!("`{field}` must be a string"),
            E::InvalidRequestId => "`request_id` must be a string or a number".into(),
            E::MissingCalls => "`calls` is required: an array of {id, tool, args}".into(),
            E::TooManyCalls(n) => format!("at most {n} calls per request"),
            E::MissingDocuments => {
                "`documents` is required: an array of {id?, text, owner?}".into()
            }
            E::TooManyDocuments(n) => format!("at most {n} documents per request"),
            E::InvalidDocument(i) => format!("documents[{i}] needs `text`: a non-empty string"),
            E::MissingResults => {
                "`results` is required: an array of {id, tool, ok, content}".into()
            }
            E::TooManyResults(n) => format!("at most {n} results per request"),
            E::InvalidResult(i, why) => format!("results[{i}]: {why}"),
            E::ResultTooLarge(i, n) => {
                format!("results[{i}].content is over the limit of {n} bytes: send less")
            }
            E::TurnEvidenceFull(limit) => format!("the turn cannot keep more evidence: {limit}"),
            E::InvalidConfig(_) => {
                "the new configuration is invalid; the old one keeps serving".into()
            }
            E::Overloaded => {
                "too many screens in flight; retry after a second (treat this as a block)".into()
            }
        }
    }

    /// `{"error": {"code", "message"}}` (and a reload's problems).
    pub fn body(&self) -> ErrorBody {
        let problems = match self {
            ApiError::InvalidConfig(problems) => Some(problems.clone()),
            _ => None,
        };
        ErrorBody {
            error: ErrorDetail {
                code: ErrorCode(self.code()),
                message: self.message(),
                problems,
            },
        }
    }
}

/// Every error answer: `{"error": {"code", "message"}}`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ErrorDetail {
    pub code: ErrorCode,
    /// A sentence for a person; not stable.
    pub message: String,
    /// `invalid_config` only: every problem of the configuration.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problems: Option<Vec<String>>,
}

/// The stable snake_case code: one of [`ApiError::CODES`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct ErrorCode(pub &'static str);

impl utoipa::PartialSchema for ErrorCode {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{ObjectBuilder, Type};
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(ApiError::CODES.iter().copied()))
            .description(Some("The stable snake_case code of the error"))
            .into()
    }
}

impl ToSchema for ErrorCode {}

/// A name the client sent, cut for the message.
fn shown(name: &str) -> String {
    name.chars().take(64).collect()
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code(), self.message())
    }
}

impl std::error::Error for ApiError {}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        StatusCode::from_u16(self.status()).unwrap_or(StatusCode::BAD_REQUEST)
    }

    fn error_response(&self) -> HttpResponse {
        let mut response = HttpResponse::build(self.status_code());
        if *self == ApiError::Overloaded {
            response.insert_header((actix_web::http::header::RETRY_AFTER, "1"));
        }
        response.json(self.body())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_distinct_snake_case_and_statuses_are_errors() {
        let mut seen = std::collections::BTreeSet::new();
        for code in ApiError::CODES {
            assert!(seen.insert(code), "{code} twice");
            assert!(
                code.chars().all(|c| c.is_ascii_lowercase() || c == '_'),
                "{code}"
            );
        }
        for e in [
            ApiError::Overloaded,
            ApiError::UnknownProduct("x".repeat(100)),
            ApiError::InvalidConfig(vec!["p".into()]),
        ] {
            assert!(ApiError::CODES.contains(&e.code()));
            assert!((400..600).contains(&e.status()));
            assert!(e.message().chars().count() < 120, "{}", e.message());
        }
        let body = serde_json::to_value(ApiError::InvalidConfig(vec!["a: b".into()]).body())
            .unwrap_or_default();
        assert_eq!(body["error"]["problems"][0], "a: b");
        assert_eq!(body["error"]["code"], "invalid_config");
    }
}

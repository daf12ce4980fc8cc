//! `POST /v1/screen-context`: retrieved documents and tool results, through the context
//! screen, each handed back wrapped as untrusted data when it passes.

use super::error::{ApiError, ErrorBody};
use super::extract::{label, request_id, required_id, Opened, RouteRequest, Source};
use super::openapi::{ContextCaller, Id};
use crate::screens::caller::Caller;
use crate::screens::context::{self, ContextVerdict, Document};
use actix_web::HttpResponse;
use serde::Deserialize;
use serde_json::Value;
use utoipa::ToSchema;

/// Documents per request.
pub const MAX_DOCUMENTS: usize = 64;

/// The body as sent. Unknown fields are ignored (tolerant wire).
#[derive(Debug, Deserialize, ToSchema)]
#[schema(as = ContextRequest)]
pub struct RawContext {
    #[serde(default)]
    #[schema(value_type = Id, required = true)]
    product: Option<Value>,
    /// At most 64.
    #[serde(default)]
    #[schema(value_type = Vec<ContextDocument>, required = true)]
    documents: Option<Value>,
    /// Whose turn it is (the platform's session): documents carrying an `owner` that is not
    /// the caller (its `id`, or one of its records) are dropped. The old form, a string, is
    /// the caller's id.
    #[serde(default)]
    #[schema(value_type = Option<ContextCaller>)]
    caller: Option<Value>,
    /// Echoed.
    #[serde(default)]
    #[schema(value_type = Option<Id>)]
    request_id: Option<Value>,
}

/// A document: its text, or `{id?, text, owner?}`.
#[derive(Debug, ToSchema)]
#[serde(untagged)]
#[allow(dead_code)]
pub enum ContextDocument {
    Text(String),
    Document(DocumentFields),
}

#[derive(Debug, ToSchema)]
#[allow(dead_code)]
pub struct DocumentFields {
    #[schema(value_type = Option<Id>)]
    id: Option<Value>,
    /// A non-empty string.
    text: String,
    /// The document's owner: dropped unless it is the caller (its id or one of its records).
    #[schema(value_type = Option<Id>)]
    owner: Option<Value>,
}

/// A checked request: the documents, the caller (for the ownership check) and the request id.
#[derive(Debug)]
pub struct ContextRequest {
    documents: Vec<Document>,
    caller: Option<Caller>,
    request_id: Option<String>,
}

impl RouteRequest for ContextRequest {
    const SOURCE: Source = Source::Body;
    type Raw<'a> = RawContext;

    fn product(raw: &RawContext) -> Result<String, ApiError> {
        required_id(raw.product.clone(), "product", ApiError::MissingProduct)
    }

    fn check(raw: RawContext) -> Result<Self, ApiError> {
        let caller =
            match raw.caller {
                // The old form: the owner id alone.
                v @ Some(Value::String(_) | Value::Number(_)) => Some(Caller::with_id(
                    &required_id(v, "caller", ApiError::InvalidCaller)?,
                )),
                v => Caller::from_json(v).map_err(ApiError::InvalidCaller)?,
            };
        let request_id = request_id(raw.request_id)?;
        Ok(ContextRequest {
            documents: documents(raw.documents)?,
            caller,
            request_id,
        })
    }
}

/// Screen retrieved documents or tool results before the model reads them.
#[utoipa::path(
    post,
    path = "/v1/screen-context",
    tag = "screens",
    request_body = RawContext,
    responses(
        (status = 200, description = "Each document screened, and wrapped when it passes", body = ContextVerdict),
        (status = "4XX", description = "A bad request: every error is JSON", body = ErrorBody),
        (status = 503, description = "Overloaded (`Retry-After: 1`): treat it as a block", body = ErrorBody),
    )
)]
pub async fn screen_context(open: Opened<ContextRequest>) -> Result<HttpResponse, ApiError> {
    let ContextRequest {
        documents,
        caller,
        request_id,
    } = open.request;
    let records = open.screener.records();
    let caller = caller.as_ref();
    let verdict = context::answer(&open.product, documents, caller, request_id, records).await;
    Ok(HttpResponse::Ok().json(verdict))
}

/// `documents`: an array of `{id?, text, owner?}` objects or of strings.
fn documents(v: Option<Value>) -> Result<Vec<Document>, ApiError> {
    let Some(Value::Array(items)) = v else {
        return Err(ApiError::MissingDocuments);
    };
    if items.len() > MAX_DOCUMENTS {
        return Err(ApiError::TooManyDocuments(MAX_DOCUMENTS));
    }
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
                _ => Err(ApiError::InvalidDocument(i)),
            }
        })
        .collect()
}

//! `POST /v1/screen-context`: retrieved documents and tool results, through the context
//! screen, each handed back wrapped as untrusted data when it passes.

use super::error::ApiError;
use super::extract::{label, request_id, required_id, Opened, RouteRequest, Source};
use crate::screens::context::{self, Document};
use actix_web::HttpResponse;
use serde::Deserialize;
use serde_json::Value;

/// Documents per request.
pub const MAX_DOCUMENTS: usize = 64;

/// The body as sent. Unknown fields are ignored (tolerant wire).
#[derive(Debug, Deserialize)]
pub struct RawContext {
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

/// A checked request: the documents, the caller (for the ownership check) and the request id.
#[derive(Debug)]
pub struct ContextRequest {
    documents: Vec<Document>,
    caller: Option<String>,
    request_id: Option<String>,
}

impl RouteRequest for ContextRequest {
    const SOURCE: Source = Source::Body;
    type Raw = RawContext;

    fn product(raw: &RawContext) -> Result<String, ApiError> {
        required_id(raw.product.clone(), "product", ApiError::MissingProduct)
    }

    fn check(raw: RawContext) -> Result<Self, ApiError> {
        let caller = match raw.caller {
            None | Some(Value::Null) => None,
            v => Some(required_id(v, "caller", ApiError::InvalidCaller)?),
        };
        let request_id = request_id(raw.request_id)?;
        Ok(ContextRequest {
            documents: documents(raw.documents)?,
            caller,
            request_id,
        })
    }
}

pub async fn screen_context(open: Opened<ContextRequest>) -> Result<HttpResponse, ApiError> {
    let ContextRequest {
        documents,
        caller,
        request_id,
    } = open.request;
    let records = open.screener.records();
    let caller = caller.as_deref();
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

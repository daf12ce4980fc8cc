//! `GET /openapi.json`: the OpenAPI 3.1 description of every route, native and gateway. It is
//! derived from the request and answer types (`#[derive(ToSchema)]`) and each handler's
//! `#[utoipa::path]`, over the route tables of [`super`]. The same text is committed as
//! `docs/openapi.json`; the tests fail when the two differ, when a route of the tables is
//! missing from it (or the other way round), and when an answer or an example of the docs does
//! not validate against it.

use super::{ApiPaths, OpsPaths};
use actix_web::HttpResponse;
use std::sync::OnceLock;
use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, OneOfBuilder, Schema, Type};
use utoipa::openapi::{InfoBuilder, LicenseBuilder, RefOr, Tag};
use utoipa::{OpenApi, PartialSchema, ToSchema};

/// The description, built from the route tables.
pub fn openapi() -> utoipa::openapi::OpenApi {
    let mut doc = ApiPaths::openapi();
    doc.merge(OpsPaths::openapi());
    doc.info = InfoBuilder::new()
        .title("guard")
        .version(env!("CARGO_PKG_VERSION"))
        .description(Some(
            "Screens what goes into and out of a bank's or wallet's customer-facing AI agent: \
             the question, the proposed tool calls, untrusted documents and the answer. The \
             `screens` routes are guard's own; the `gateways` routes speak the contracts of \
             LiteLLM, NeMo Guardrails and the Guardrail Webhook API over the same screens.",
        ))
        .license(Some(LicenseBuilder::new().name("Apache-2.0").build()))
        .build();
    let tag = |name: &str, description: &str| {
        let mut t = Tag::new(name);
        t.description = Some(description.to_string());
        t
    };
    doc.tags = Some(vec![
        tag("screens", "guard's own routes, one per screen"),
        tag("gateways", "gateway contracts over the same screens"),
        tag("service", "operations, configuration and this description"),
    ]);
    doc
}

/// The description as served and committed (pretty JSON and a final new line), built once.
pub fn openapi_text() -> &'static str {
    static TEXT: OnceLock<String> = OnceLock::new();
    TEXT.get_or_init(|| match openapi().to_pretty_json() {
        Ok(mut text) => {
            text.push('\n');
            text
        }
        // Not expected: every part is plain data. Served as an error rather than not at all.
        Err(e) => format!("{{\"error\": {{\"code\": \"not_ready\", \"message\": \"{e}\"}}}}\n"),
    })
}

/// This description.
#[utoipa::path(
    get,
    path = "/openapi.json",
    tag = "service",
    responses((status = 200, description = "The OpenAPI 3.1 description of every route", body = Object))
)]
pub async fn openapi_json() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("application/json")
        .body(openapi_text())
}

/// In the description: a string or a number (ids, `product` of the gate and context routes).
pub struct Id;

impl PartialSchema for Id {
    fn schema() -> RefOr<Schema> {
        OneOfBuilder::new()
            .item(ObjectBuilder::new().schema_type(Type::String))
            .item(ObjectBuilder::new().schema_type(Type::Number))
            .description(Some("A string or a number"))
            .into()
    }
}

impl ToSchema for Id {}

/// In the description: a chat message's content, a string or OpenAI's list of parts.
pub struct MessageContent;

impl PartialSchema for MessageContent {
    fn schema() -> RefOr<Schema> {
        let part = OneOfBuilder::new()
            .item(ObjectBuilder::new().schema_type(Type::String))
            .item(ObjectBuilder::new().schema_type(Type::Object));
        OneOfBuilder::new()
            .item(ObjectBuilder::new().schema_type(Type::String))
            .item(ArrayBuilder::new().items(part))
            .item(ObjectBuilder::new().schema_type(Type::Null))
            .description(Some(
                "A string, or content parts (`{\"type\": \"text\", \"text\": ...}`; any other \
                 part refuses the message)",
            ))
            .into()
    }
}

impl ToSchema for MessageContent {}

/// In the description: the `caller` of every screen route. Trusted input: the platform sets
/// it from its own authenticated session, never from the model's output or the user's text.
#[derive(ToSchema)]
#[schema(as = Caller)]
#[allow(dead_code)]
pub struct CallerSchema {
    /// The signed-in user's id (1 to 256 characters); logged only as a keyed hash.
    id: String,
    /// The user's role (`customer`, `teller`, `officer`...): tools that declare `roles` are
    /// only for those.
    role: Option<String>,
    /// Staff: the user's branch (a label; the branch's records go in `records` or `scope`).
    branch: Option<String>,
    /// The records the user may touch, by kind (the policy's record kinds: `wallet`,
    /// `account`, `customer`...): strings, in any spelling the gate reads (`01711000000` is
    /// `+8801711000000`).
    records: Option<std::collections::BTreeMap<String, Vec<String>>>,
    /// Staff: id prefixes by kind (a branch's account numbers all start with its code): a
    /// record of an `id`-format kind whose id starts with one is the user's too.
    scope: Option<std::collections::BTreeMap<String, Vec<String>>>,
}

/// The context route's `caller`: the object, or (the old form) the owner id alone.
#[derive(ToSchema)]
#[serde(untagged)]
#[allow(dead_code)]
pub enum ContextCaller {
    Caller(CallerSchema),
    /// The old form: the caller's id, as `{"id": ...}`.
    Owner(String),
}

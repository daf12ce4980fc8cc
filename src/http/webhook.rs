//! `POST /request` and `POST /response`: the Guardrail Webhook API of kgateway, agentgateway
//! and Gloo AI Gateway, over the screens, exactly as its published OpenAPI file gives it.
//!
//! `/request` is the question screen on the last user message of `body.messages`: a block is a
//! `RejectAction` (`403`, the product's reply as the body the client gets). `/response` is the
//! output screen on every `body.choices[i].message.content`: masked values come back as a
//! `MaskAction` with the same number of choices, in order. The published file allows only
//! `PassAction` and `MaskAction` on `/response`, so an answer guard refuses is a `MaskAction`
//! whose every choice holds the reply. The API has no tool calls: the gate is not reachable
//! through it.
//!
//! The body carries no product: it comes from an `x-guard-product` header (agentgateway's
//! `headers:`, a CEL expression such as `'"wallet-assistant"'`) or a `?product=` query.
//!
//! The gateway reads the action as an untagged union and takes anything that is neither a
//! valid mask nor a valid reject for a pass: the answers here are exact, and a pass has no
//! field a mask or a reject has.

use super::error::{ApiError, ErrorBody};
use super::extract::Source;
use super::extract::{json_response, named_product, product_from_request, Opened, RouteRequest};
use super::gateway::{answer_question, content_text, screen_answers, Adapter, Checks};
use super::gateway::{ChatMessage, QuestionShape, Transcript, Unscreenable};
use actix_web::{HttpRequest, HttpResponse};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

/// The missing product's message (the body has no place for one).
const NO_PRODUCT: &str =
    "the product is required: an `x-guard-product` header or a `?product=` query";

/// `POST /request`: the prompt's messages.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(as = GuardrailsPromptRequest)]
pub struct RawPrompt {
    #[serde(default)]
    #[schema(value_type = PromptMessages, required = true)]
    body: Option<PromptMessages>,
}

/// The messages of a prompt, in order.
#[derive(Debug, Deserialize, ToSchema)]
pub struct PromptMessages {
    #[serde(default)]
    #[schema(value_type = Vec<WebhookMessage>, required = true)]
    messages: Option<Transcript>,
}

/// A message of the Webhook API: both fields are strings.
#[derive(Debug, Deserialize, Serialize, ToSchema)]
pub struct WebhookMessage {
    pub role: String,
    pub content: String,
}

/// `POST /response`: the answer's choices.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(as = GuardrailsResponseRequest)]
pub struct RawResponse {
    #[serde(default)]
    #[schema(value_type = ResponseChoicesIn, required = true)]
    body: Option<ResponseChoicesIn>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[schema(as = ResponseChoices)]
pub struct ResponseChoicesIn {
    #[serde(default)]
    #[schema(value_type = Vec<ResponseChoice>, required = true)]
    choices: Option<Vec<ChoiceIn>>,
}

#[derive(Debug, Deserialize)]
struct ChoiceIn {
    #[serde(default)]
    message: Option<ChatMessage>,
}

/// One choice of an answer.
#[derive(Debug, Serialize, ToSchema)]
pub struct ResponseChoice {
    pub message: WebhookMessage,
}

/// A checked prompt.
#[derive(Debug)]
pub struct Prompt {
    messages: Transcript,
}

/// A checked answer: each choice's role and content.
#[derive(Debug)]
pub struct Answer {
    choices: Vec<(String, Option<Value>)>,
}

impl RouteRequest for Prompt {
    const SOURCE: Source = Source::Body;
    type Raw<'a> = RawPrompt;

    fn product(_raw: &RawPrompt) -> Result<String, ApiError> {
        named_product(&None, NO_PRODUCT)
    }

    fn product_of(_raw: &RawPrompt, req: &HttpRequest) -> Result<String, ApiError> {
        named_product(&product_from_request(req), NO_PRODUCT)
    }

    fn check(raw: RawPrompt) -> Result<Self, ApiError> {
        match raw.body.and_then(|b| b.messages) {
            Some(messages) => Ok(Prompt { messages }),
            None => Err(ApiError::MissingMessages(
                "`body.messages` is required: an array of {role, content}".into(),
            )),
        }
    }
}

impl RouteRequest for Answer {
    const SOURCE: Source = Source::Body;
    type Raw<'a> = RawResponse;

    fn product(_raw: &RawResponse) -> Result<String, ApiError> {
        named_product(&None, NO_PRODUCT)
    }

    fn product_of(_raw: &RawResponse, req: &HttpRequest) -> Result<String, ApiError> {
        named_product(&product_from_request(req), NO_PRODUCT)
    }

    fn check(raw: RawResponse) -> Result<Self, ApiError> {
        let Some(choices) = raw.body.and_then(|b| b.choices) else {
            return Err(ApiError::MissingMessages(
                "`body.choices` is required: an array of {message: {role, content}}".into(),
            ));
        };
        let choices = choices
            .into_iter()
            .map(|c| {
                let m = c.message.unwrap_or_default();
                (m.role.unwrap_or_else(|| "assistant".into()), m.content)
            })
            .collect();
        Ok(Answer { choices })
    }
}

/// `{"action": ...}` of `/request`: a pass or a reject.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = GuardrailsPromptResponse)]
pub struct PromptAnswer {
    pub action: PromptAction,
}

/// Untagged, as the gateway reads it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(untagged)]
pub enum PromptAction {
    Reject(RejectAction),
    Pass(PassAction),
}

/// `{"action": ...}` of `/response`: a pass or a mask.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = GuardrailsResponseResponse)]
pub struct ResponseAnswer {
    pub action: ResponseAction,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(untagged)]
pub enum ResponseAction {
    Mask(MaskAction),
    Pass(PassAction),
}

/// Unchanged. No `body` and no `status_code`: a pass cannot be mistaken for the others.
#[derive(Debug, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PassAction {
    /// `passed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Refused: the client gets `status_code` with `body` as the response body.
#[derive(Debug, Serialize, ToSchema)]
pub struct RejectAction {
    /// The product's reply.
    pub body: String,
    /// `403`.
    pub status_code: u16,
    /// guard's reason code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The choices, masked (or every one holding the reply, for an answer guard refuses): as many
/// as were sent, in order.
#[derive(Debug, Serialize, ToSchema)]
pub struct MaskAction {
    pub body: ResponseChoicesOut,
    /// `masked`, or guard's reason code of the refusal.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ResponseChoicesOut {
    pub choices: Vec<ResponseChoice>,
}

/// The Guardrail Webhook API's prompt webhook.
#[utoipa::path(
    post,
    path = "/request",
    tag = "gateways",
    request_body = RawPrompt,
    params(("x-guard-product" = Option<String>, Header, description = "The product (or `?product=`)")),
    responses(
        (status = 200, description = "A decision, always (a reject is a 200 to the gateway)", body = PromptAnswer),
        (status = "4XX", description = "Not the contract (no messages, no product, bad JSON)", body = ErrorBody),
        (status = 503, description = "Overloaded", body = ErrorBody),
    )
)]
pub async fn request(open: Opened<Prompt>) -> Result<HttpResponse, ApiError> {
    let question = match open.request.messages.last_user() {
        Some(m) => content_text(m.content.as_ref()),
        None => Err(Unscreenable::NoQuestion),
    };
    let shape = QuestionShape::Webhook;
    // The Guardrail Webhook API carries no caller: the question is screened without one.
    let answered = answer_question(
        &open,
        question,
        None,
        Adapter::Webhook,
        shape,
        prompt_answer,
    );
    Ok(answered.await)
}

/// `/request`'s answer for what the question screen concluded.
fn prompt_answer(checks: &Checks) -> PromptAnswer {
    let action = match &checks.refusal {
        Some(r) => PromptAction::Reject(RejectAction {
            body: r.message.clone(),
            status_code: 403,
            reason: Some(r.reason.to_string()),
        }),
        None => PromptAction::Pass(PassAction {
            reason: Some("passed".into()),
        }),
    };
    PromptAnswer { action }
}

/// The Guardrail Webhook API's response webhook.
#[utoipa::path(
    post,
    path = "/response",
    tag = "gateways",
    request_body = RawResponse,
    params(("x-guard-product" = Option<String>, Header, description = "The product (or `?product=`)")),
    responses(
        (status = 200, description = "A decision, always", body = ResponseAnswer),
        (status = "4XX", description = "Not the contract (no choices, no product, bad JSON)", body = ErrorBody),
        (status = 503, description = "Overloaded", body = ErrorBody),
    )
)]
pub async fn response(open: Opened<Answer>) -> Result<HttpResponse, ApiError> {
    let choices = &open.request.choices;
    let mut checks = Checks::default();
    let mut texts = Vec::with_capacity(choices.len());
    for (_, content) in choices {
        match content_text(content.as_ref()) {
            Ok(text) => texts.push(text),
            Err(Unscreenable::NoQuestion) => texts.push(String::new()),
            Err(why) => {
                let rail = super::gateway::OUTPUT_RAIL;
                let kind = super::gateway::RailKind::Output;
                super::gateway::refuse_unscreenable(&open, rail, kind, why, &mut checks);
                texts.push(String::new());
            }
        }
    }
    let masked = match checks.refused() {
        true => texts,
        false => screen_answers(&open, &texts, &mut checks),
    };
    checks.record(&open, Adapter::Webhook);
    let mask = |contents: Vec<String>, reason: &str| {
        let choices = choices
            .iter()
            .zip(contents)
            .map(|((role, _), content)| ResponseChoice {
                message: WebhookMessage {
                    role: role.clone(),
                    content,
                },
            })
            .collect();
        ResponseAction::Mask(MaskAction {
            body: ResponseChoicesOut { choices },
            reason: Some(reason.to_string()),
        })
    };
    let action = match (&checks.refusal, checks.masked) {
        (Some(r), _) => mask(vec![r.message.clone(); choices.len()], r.reason),
        (None, true) => mask(masked, "masked"),
        (None, false) => ResponseAction::Pass(PassAction {
            reason: Some("passed".into()),
        }),
    };
    Ok(json_response(&ResponseAnswer { action }))
}

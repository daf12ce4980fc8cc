//! `POST /beta/litellm_basic_guardrail_api`: LiteLLM's Generic Guardrail API, over the screens.
//!
//! LiteLLM calls it before the model (`input_type: "request"`, its `pre_call` mode) and after it
//! (`"response"`, `post_call`). The request side is the question screen on the last user message
//! of `structured_messages` (the last of `texts` when LiteLLM sends no messages); the calls of
//! earlier assistant turns that LiteLLM also lists in `tool_calls` already ran and are not gated.
//! The response side is the output screen on each of `texts` and then the gate on `tool_calls`,
//! the calls the model proposes now.
//!
//! Where the request's parts come from:
//! - the product: `additional_provider_specific_params.product` (the guardrail's entry in
//!   LiteLLM's config), else an `x-guard-product` header on the call (the entry's `headers:`);
//! - the gate's conversation (its velocity windows): an `x-guard-conversation` header of the
//!   client's, which LiteLLM forwards in `request_headers` when the entry lists it in
//!   `extra_headers`; else the end user (`request_data.user_api_key_end_user_id`, OpenAI's `user`
//!   field), so that windows count per customer; else `litellm_trace_id`; else the turn;
//! - the gate's turn (its dedupe): `litellm_call_id`, the same on both sides of one call.
//!
//! LiteLLM lets through anything that is not exactly `"action": "BLOCKED"`, and applies `texts`
//! whatever the action says; a shorter `texts` leaves the rest of the answer as it was. So the
//! answer always carries one of the three actions, and `texts` only with
//! `GUARDRAIL_INTERVENED`: every text sent, masked, in order.

use super::error::ApiError;
use super::extract::{json_response, named_product, product_from_request, Opened, RouteRequest};
use super::extract::{label, Source};
use super::gateway::{answer_question, screen_answers, Adapter, ChatMessage, Checks};
use super::gateway::{caller_of_header, content_text, fresh_id, gate_calls, header_text};
use super::gateway::{screenable, QuestionShape, Transcript, Unscreenable, CALLER_HEADER};
use crate::screens::caller::Caller;
use actix_web::{HttpRequest, HttpResponse};
use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;
use std::borrow::Cow;
use utoipa::ToSchema;

/// The body LiteLLM sends (every field present, unset ones `null`). Unknown fields are ignored:
/// LiteLLM adds some from release to release.
// Its strings are borrowed from the body (copied only when they hold escapes): of most of them
// a request keeps nothing.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(as = LiteLlmRequest)]
pub struct RawLiteLlm<'a> {
    /// `request` (before the model: the question) or `response` (after it: the answer).
    #[serde(default, borrow)]
    #[schema(value_type = InputType, required = true)]
    input_type: Option<Cow<'a, str>>,
    /// Request: every text of every message, in order. Response: the answer's texts, one per
    /// choice (or per text part).
    #[serde(default, borrow)]
    #[schema(value_type = Option<Vec<String>>)]
    texts: Option<Vec<Cow<'a, str>>>,
    /// Request: the messages, with their roles (where the last user message is found).
    #[serde(default)]
    #[schema(value_type = Option<Vec<ChatMessage>>)]
    structured_messages: Option<Transcript>,
    /// Response: the calls the model proposes, `[{id, type: "function", function: {name,
    /// arguments: "<JSON text>"}}]`, gated. Request: the calls of earlier turns (not gated).
    #[serde(default)]
    #[schema(value_type = Option<Vec<Object>>)]
    tool_calls: Option<Vec<Value>>,
    /// The image URLs of the messages (an image in the last user message refuses it).
    // In the description; read past, never used.
    #[allow(dead_code)]
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>)]
    images: Option<IgnoredAny>,
    /// The tool definitions of the request (not read).
    // In the description; read past, never used.
    #[allow(dead_code)]
    #[serde(default)]
    #[schema(value_type = Option<Vec<Object>>)]
    tools: Option<IgnoredAny>,
    /// LiteLLM's key metadata: `user_api_key_end_user_id` is the client's `user` field.
    #[serde(default, borrow)]
    #[schema(value_type = Option<RequestData>)]
    request_data: Option<RequestData<'a>>,
    /// The client's headers as LiteLLM forwards them (`[present]` for a value it keeps back).
    #[serde(default)]
    #[schema(value_type = Option<HashMap<String, String>>)]
    request_headers: Option<ForwardedHeaders>,
    /// The same on both sides of one call: the gate's turn.
    #[serde(default, borrow)]
    #[schema(value_type = Option<String>)]
    litellm_call_id: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    #[schema(value_type = Option<String>)]
    litellm_trace_id: Option<Cow<'a, str>>,
    /// The guardrail's `additional_provider_specific_params` from LiteLLM's config.
    #[serde(default, borrow)]
    #[schema(value_type = Option<ProviderParams>)]
    additional_provider_specific_params: Option<ProviderParams<'a>>,
    // In the description; read past, never used.
    #[allow(dead_code)]
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    model: Option<IgnoredAny>,
    // In the description; read past, never used.
    #[allow(dead_code)]
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    litellm_version: Option<IgnoredAny>,
}

/// `request` or `response`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum InputType {
    Request,
    Response,
}

/// What guard reads of LiteLLM's key metadata (the other keys are ignored).
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct RequestData<'a> {
    /// The OpenAI `user` field of the client's request: the customer.
    // Any JSON value, read only for a call to gate.
    #[serde(default, borrow)]
    #[schema(value_type = Option<String>)]
    user_api_key_end_user_id: Option<&'a RawValue>,
}

/// What guard reads of the guardrail's `additional_provider_specific_params`.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct ProviderParams<'a> {
    /// The product to screen for.
    #[serde(default, borrow)]
    #[schema(value_type = Option<String>)]
    product: Option<Cow<'a, str>>,
}

/// LiteLLM's `request_headers`, of which guard keeps `x-guard-conversation` (any case) and reads
/// past the rest without keeping them.
#[derive(Debug, Default)]
pub struct ForwardedHeaders {
    conversation: Option<String>,
    /// `x-guard-caller`: the caller object as JSON text, set by the platform from its session.
    caller: Option<String>,
}

impl<'de> Deserialize<'de> for ForwardedHeaders {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Headers;
        impl<'de> serde::de::Visitor<'de> for Headers {
            type Value = ForwardedHeaders;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object of header names and values")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<ForwardedHeaders, A::Error> {
                let mut kept = ForwardedHeaders::default();
                while let Some(name) = map.next_key::<HeaderName>()? {
                    if name == HeaderName::Conversation {
                        let value: Value = map.next_value()?;
                        kept.conversation = value.as_str().map(str::to_string);
                    } else if name == HeaderName::Caller {
                        let value: Value = map.next_value()?;
                        kept.caller = value.as_str().map(str::to_string);
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                Ok(kept)
            }
        }
        d.deserialize_map(Headers)
    }
}

/// Which of guard's headers a header's name is (any case), read without a copy of it.
#[derive(Debug, PartialEq, Eq)]
enum HeaderName {
    Conversation,
    Caller,
    Other,
}

impl<'de> Deserialize<'de> for HeaderName {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Name;
        impl serde::de::Visitor<'_> for Name {
            type Value = HeaderName;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string")
            }

            fn visit_str<E>(self, v: &str) -> Result<HeaderName, E> {
                Ok(if v.eq_ignore_ascii_case("x-guard-conversation") {
                    HeaderName::Conversation
                } else if v.eq_ignore_ascii_case(CALLER_HEADER) {
                    HeaderName::Caller
                } else {
                    HeaderName::Other
                })
            }
        }
        d.deserialize_str(Name)
    }
}

/// A checked call: the side, and what that side screens.
#[derive(Debug)]
pub struct LiteLlmCall {
    side: InputType,
    texts: Vec<String>,
    messages: Option<Transcript>,
    tool_calls: Vec<Value>,
    ids: Ids,
    caller: Option<Caller>,
}

/// What the gate's conversation and turn are made from, as sent (kept on the response side
/// only: the request side gates nothing).
#[derive(Debug, Default)]
struct Ids {
    call: Option<String>,
    trace: Option<String>,
    forwarded: Option<String>,
    end_user: Option<String>,
}

impl RouteRequest for LiteLlmCall {
    const SOURCE: Source = Source::Body;
    type Raw<'a> = RawLiteLlm<'a>;

    fn product(raw: &RawLiteLlm<'_>) -> Result<String, ApiError> {
        let named = raw
            .additional_provider_specific_params
            .as_ref()
            .and_then(|p| p.product.as_deref())
            .map(str::to_string);
        named_product(
            &named,
            "`additional_provider_specific_params.product` (or an `x-guard-product` header) is required",
        )
    }

    fn product_of(raw: &RawLiteLlm<'_>, req: &HttpRequest) -> Result<String, ApiError> {
        Self::product(raw).or_else(|e| product_from_request(req).ok_or(e))
    }

    fn check(raw: RawLiteLlm<'_>) -> Result<Self, ApiError> {
        let side = match raw.input_type.as_deref().map(str::trim) {
            Some(t) if t.eq_ignore_ascii_case("request") => InputType::Request,
            Some(t) if t.eq_ignore_ascii_case("response") => InputType::Response,
            _ => return Err(ApiError::MissingInputType),
        };
        let headers = raw.request_headers.unwrap_or_default();
        let caller = caller_of_header(headers.caller.as_deref())?;
        let texts = raw.texts.unwrap_or_default();
        let texts = match side {
            // The request side reads a text only without messages, and then only the last.
            InputType::Request if raw.structured_messages.is_some() => Vec::new(),
            InputType::Request => texts.last().map(|t| t.to_string()).into_iter().collect(),
            InputType::Response => texts.into_iter().map(Cow::into_owned).collect(),
        };
        let ids = match side {
            InputType::Request => Ids::default(),
            InputType::Response => Ids {
                call: raw.litellm_call_id.map(Cow::into_owned),
                trace: raw.litellm_trace_id.map(Cow::into_owned),
                forwarded: headers.conversation,
                end_user: raw
                    .request_data
                    .and_then(|d| d.user_api_key_end_user_id)
                    .and_then(|v| serde_json::from_str::<Value>(v.get()).ok())
                    .and_then(|v| label(Some(&v))),
            },
        };
        Ok(LiteLlmCall {
            side,
            texts,
            messages: raw.structured_messages,
            tool_calls: raw.tool_calls.unwrap_or_default(),
            ids,
            caller,
        })
    }
}

impl LiteLlmCall {
    /// The gate's conversation and turn, worked out only for calls to gate (the request side
    /// gates nothing, and never pays for them): the turn is `litellm_call_id`, else a fresh id;
    /// the conversation is the forwarded `x-guard-conversation`, else the end user, else
    /// `litellm_trace_id`, else the turn.
    fn ids(&self) -> (String, String) {
        let ids = &self.ids;
        let turn = header_text(ids.call.as_deref()).unwrap_or_else(|| fresh_id("turn"));
        let conversation = header_text(ids.forwarded.as_deref())
            .or_else(|| header_text(ids.end_user.as_deref()).map(|u| format!("user:{u}")))
            .or_else(|| header_text(ids.trace.as_deref()))
            .unwrap_or_else(|| turn.clone());
        (conversation, turn)
    }
}

/// What LiteLLM reads back.
#[derive(Debug, Serialize, ToSchema)]
pub struct LiteLlmAnswer {
    pub action: LiteLlmAction,
    /// With `BLOCKED`: what the client is shown (LiteLLM's `error.message`): the product's
    /// reply, or the gate's message for a call it would not run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocked_reason: Option<String>,
    /// With `GUARDRAIL_INTERVENED` only: every text that was sent, masked, in order.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub texts: Option<Vec<String>>,
}

/// The three actions LiteLLM knows. It passes anything else, so guard sends nothing else.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
pub enum LiteLlmAction {
    /// Refused: the client gets `blocked_reason`.
    #[serde(rename = "BLOCKED")]
    Blocked,
    /// Nothing to change.
    #[serde(rename = "NONE")]
    Pass,
    /// The answer's texts are replaced by `texts`.
    #[serde(rename = "GUARDRAIL_INTERVENED")]
    Intervened,
}

/// LiteLLM's Generic Guardrail API.
#[utoipa::path(
    post,
    path = "/beta/litellm_basic_guardrail_api",
    tag = "gateways",
    request_body = RawLiteLlm,
    responses(
        (status = 200, description = "A decision, always (a block is a 200)", body = LiteLlmAnswer),
        (status = "4XX", description = "Not the contract (no `input_type`, no product, bad JSON)", body = super::error::ErrorBody),
        (status = 503, description = "Overloaded", body = super::error::ErrorBody),
    )
)]
pub async fn guardrail(open: Opened<LiteLlmCall>) -> Result<HttpResponse, ApiError> {
    let call = &open.request;
    if call.side == InputType::Request {
        let render = |checks: &Checks| answer(checks, None);
        let shape = QuestionShape::LiteLlm;
        let caller = call.caller.as_ref();
        let answered = answer_question(
            &open,
            question(call),
            caller,
            Adapter::LiteLlm,
            shape,
            render,
        );
        return Ok(answered.await);
    }
    let mut checks = Checks::default();
    let texts = screen_answers(&open, &call.texts, &mut checks);
    if !checks.refused() && !call.tool_calls.is_empty() {
        let (conversation, turn) = call.ids();
        let calls = call.tool_calls.clone();
        let caller = call.caller.clone();
        // Boxed: the gate's state, inline, would be copied by every request of this route.
        Box::pin(gate_calls(
            &open,
            conversation,
            turn,
            caller,
            calls,
            &mut checks,
        ))
        .await;
    }
    checks.record(&open, Adapter::LiteLlm);
    Ok(json_response(&answer(&checks, Some(texts))))
}

/// The answer for what the screens concluded (`texts`: the answer's texts, masked).
fn answer(checks: &Checks, texts: Option<Vec<String>>) -> LiteLlmAnswer {
    match (&checks.refusal, checks.masked) {
        (Some(refusal), _) => LiteLlmAnswer {
            action: LiteLlmAction::Blocked,
            blocked_reason: Some(refusal.message.clone()),
            texts: None,
        },
        (None, true) => LiteLlmAnswer {
            action: LiteLlmAction::Intervened,
            blocked_reason: None,
            texts,
        },
        (None, false) => LiteLlmAnswer {
            action: LiteLlmAction::Pass,
            blocked_reason: None,
            texts: None,
        },
    }
}

/// The question of a request: the last user message, or without messages the last text.
fn question(call: &LiteLlmCall) -> Result<String, Unscreenable> {
    match &call.messages {
        Some(messages) => match messages.last_user() {
            Some(m) => content_text(m.content.as_ref()),
            None => Err(Unscreenable::NoQuestion),
        },
        None => match call.texts.last() {
            Some(text) => screenable(text.clone()),
            None => Err(Unscreenable::NoQuestion),
        },
    }
}

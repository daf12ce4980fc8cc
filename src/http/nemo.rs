//! NeMo Guardrails' checks APIs, over the screens, in the two shapes their callers speak:
//!
//! - `POST /v1/guardrail/checks`, the NeMo microservice's (what Kong AI Gateway's NeMo policy,
//!   Llama Stack's NVIDIA safety provider and the TrustyAI server call): `{status: success |
//!   blocked, rails_status, guardrails_data}`;
//! - `POST /v1/checks`, the open-source `nemoguardrails` server's: `{status: passed | modified |
//!   blocked, content, rail}`.
//!
//! Both read an OpenAI chat body with `guardrails: {config_id}`; `config_id` names the product
//! (`config_ids` may name one; the open-source server's own body puts `config_id` beside
//! `messages`, which is read the same; an `x-guard-product` header when the body names none;
//! two different products are refused). Which
//! screens run follows NeMo: `guardrails.rail_types` when given (`input`, `output`), else the
//! input rails when there is a user message and the output rails when the last message is the
//! assistant's. The input rails are the question screen on the last user message, each of its
//! stages a rail (`script` ... `judge`); the output rails are the output screen on the last
//! message (rail `output`) and the gate on its `tool_calls` (rail `tool_gate`), with
//! `guardrails.thread_id` (or an `x-guard-conversation` header) as the gate's conversation.
//!
//! The microservice's shape has no place for a masked answer: an answer the output screen
//! masked is `blocked` there (card numbers never leave in clear), with the masked text in
//! `guardrails_data.guard.content`. The open-source shape answers it `modified`.

use super::error::{ApiError, ErrorBody};
use super::extract::Source;
use super::extract::{json_response, named_product, product_from_request, Opened, RouteRequest};
use super::gateway::{answer_question, QuestionShape, RailKind, Unscreenable};
use super::gateway::{caller_of_header, content_text, fresh_id, gate_calls, header_text};
use super::gateway::{question_caller, screen_answers, Transcript, CALLER_HEADER};
use super::gateway::{refuse_unscreenable, screen_question, Adapter, ChatMessage, Checks};
use super::gateway::{OUTPUT_RAIL, QUESTION_RAIL};
use actix_web::{HttpRequest, HttpResponse};
use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use utoipa::ToSchema;

/// The body of both checks routes: an OpenAI chat request and `guardrails`. Unknown fields
/// (sampling parameters, `stream`, ...) are ignored.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(as = NemoCheckRequest)]
pub struct RawNemoCheck {
    /// The model NeMo would call (not used: guard's screens call their own models).
    // In the description; read past, never used.
    #[allow(dead_code)]
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    model: Option<IgnoredAny>,
    /// The conversation, in order; not empty.
    #[serde(default)]
    #[schema(value_type = Vec<ChatMessage>, required = true)]
    messages: Option<Transcript>,
    #[serde(default)]
    guardrails: Option<NemoGuardrails>,
    /// The product, where the open-source server's own request body puts it (beside
    /// `messages`); the same as `guardrails.config_id`, and both naming different products is
    /// refused.
    #[serde(default)]
    config_id: Option<String>,
    /// One product, as the open-source server's body may name it (more is refused).
    #[serde(default)]
    config_ids: Option<Vec<String>>,
    /// The conversation, where the open-source server's body puts it.
    #[serde(default)]
    thread_id: Option<String>,
}

/// NeMo's `guardrails` object.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct NemoGuardrails {
    /// The product.
    #[serde(default)]
    config_id: Option<String>,
    /// One product (more is refused: one product per check).
    #[serde(default)]
    config_ids: Option<Vec<String>>,
    /// An inline NeMo configuration: not supported (name a product).
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    config: Option<IgnoredAny>,
    /// `["input"]`, `["output"]` or both: which rails run (default: from the roles).
    #[serde(default)]
    rail_types: Option<Vec<String>>,
    /// The conversation, for the gate's velocity windows.
    #[serde(default)]
    thread_id: Option<String>,
}

/// A checked request: the messages and which rails run on them.
#[derive(Debug)]
pub struct NemoCheck {
    messages: Transcript,
    input: bool,
    output: bool,
    conversation: Option<String>,
}

impl RouteRequest for NemoCheck {
    const SOURCE: Source = Source::Body;
    type Raw<'a> = RawNemoCheck;

    fn product(raw: &RawNemoCheck) -> Result<String, ApiError> {
        let named = named_config(raw)?;
        named_product(&named, missing_product_message(raw))
    }

    fn product_of(raw: &RawNemoCheck, req: &HttpRequest) -> Result<String, ApiError> {
        let named = named_config(raw)?.or_else(|| product_from_request(req));
        named_product(&named, missing_product_message(raw))
    }

    fn check(raw: RawNemoCheck) -> Result<Self, ApiError> {
        let messages = match raw.messages {
            Some(m) if !m.is_empty() => m,
            _ => {
                let message = "`messages` is required: a non-empty array of {role, content}";
                return Err(ApiError::MissingMessages(message.into()));
            }
        };
        let g = raw.guardrails.unwrap_or_default();
        let named = |kind: &str, types: &[String]| {
            types.iter().any(|t| t.trim().eq_ignore_ascii_case(kind))
        };
        let (input, output) = match g.rail_types.as_deref() {
            Some(types) if !types.is_empty() => (named("input", types), named("output", types)),
            _ => (
                messages.last_user().is_some(),
                messages.last().is_some_and(|m| m.is("assistant")),
            ),
        };
        let thread = g.thread_id.as_deref().or(raw.thread_id.as_deref());
        Ok(NemoCheck {
            messages,
            input,
            output,
            conversation: header_text(thread),
        })
    }
}

/// The product the body names (in `guardrails` or, as the open-source server's body has it,
/// beside `messages`), if it names one; more than one, or two different ones, is refused.
fn named_config(raw: &RawNemoCheck) -> Result<Option<String>, ApiError> {
    let g = raw.guardrails.as_ref();
    let inner = one_config(
        g.and_then(|g| g.config_id.as_ref()),
        g.and_then(|g| g.config_ids.as_deref()),
        "guardrails.config_ids",
    )?;
    let outer = one_config(
        raw.config_id.as_ref(),
        raw.config_ids.as_deref(),
        "config_ids",
    )?;
    match (inner, outer) {
        (Some(a), Some(b)) if a != b => Err(ApiError::MissingProduct(format!(
            "one product per check: `guardrails` names `{a}` and the body `{b}`"
        ))),
        (a, b) => Ok(a.or(b)),
    }
}

/// `config_id`, else the one entry of `config_ids`; more than one entry is refused.
fn one_config(
    id: Option<&String>,
    ids: Option<&[String]>,
    field: &str,
) -> Result<Option<String>, ApiError> {
    let ids = ids.unwrap_or_default();
    if ids.len() > 1 {
        let message = format!("one product per check: `{field}` names {}", ids.len());
        return Err(ApiError::MissingProduct(message));
    }
    match (id, ids.first()) {
        (Some(a), Some(b)) if a != b => Err(ApiError::MissingProduct(format!(
            "one product per check: `{field}` names `{b}`, `config_id` `{a}`"
        ))),
        (a, b) => Ok(a.or(b).cloned()),
    }
}

fn missing_product_message(raw: &RawNemoCheck) -> &'static str {
    match raw.guardrails.as_ref().is_some_and(|g| g.config.is_some()) {
        true => "an inline `guardrails.config` is not supported: name the product in `guardrails.config_id`",
        false => "`guardrails.config_id` (the product, or an `x-guard-product` header) is required",
    }
}

/// The input rails, then (unless they refused) the output rails; and the text after guard
/// (the answer masked, or the question as it was checked).
async fn run(open: &Opened<NemoCheck>, req: &HttpRequest) -> (Checks, Option<String>) {
    let check = &open.request;
    let mut checks = Checks::default();
    let mut content = None;
    if !check.input && !check.output {
        let why = Unscreenable::NoQuestion;
        refuse_unscreenable(open, QUESTION_RAIL, RailKind::Input, why, &mut checks);
        return (checks, content);
    }
    if check.input {
        let question = question(check);
        content = question.as_ref().ok().cloned();
        let caller = question_caller(req);
        screen_question(open, question, caller.as_ref(), &mut checks).await;
    }
    if check.output && !checks.refused() {
        let last = check.messages.last().filter(|m| m.is("assistant"));
        let calls = last.and_then(|m| m.tool_calls.clone()).unwrap_or_default();
        match content_text(last.and_then(|m| m.content.as_ref())) {
            Ok(text) => {
                content = screen_answers(open, &[text], &mut checks).pop();
            }
            // An answer that is only tool calls has no text to mask.
            Err(Unscreenable::NoQuestion) if !calls.is_empty() => {}
            Err(why) => {
                content = None;
                refuse_unscreenable(open, OUTPUT_RAIL, RailKind::Output, why, &mut checks);
            }
        }
        if !checks.refused() && !calls.is_empty() {
            let from_header = req
                .headers()
                .get("x-guard-conversation")
                .and_then(|v| v.to_str().ok());
            let turn = fresh_id("turn");
            let conversation = check
                .conversation
                .clone()
                .or_else(|| header_text(from_header))
                .unwrap_or_else(|| turn.clone());
            let from_header = req
                .headers()
                .get(CALLER_HEADER)
                .and_then(|v| v.to_str().ok());
            match caller_of_header(from_header) {
                Ok(caller) => {
                    gate_calls(open, conversation, turn, caller, calls, &mut checks).await
                }
                // A caller the guard cannot read: every call fails closed, as with none.
                Err(_) => gate_calls(open, conversation, turn, None, calls, &mut checks).await,
            }
        }
    }
    (checks, content)
}

/// `success` or `blocked`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum NemoStatus {
    Success,
    Blocked,
}

/// What the microservice's callers read (Llama Stack indexes `rails_status` unconditionally:
/// it is always sent).
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = NemoCheckAnswer)]
pub struct NemoCheckAnswer {
    pub status: NemoStatus,
    /// Every rail that ran, by name: guard's stages, `output`, `tool_gate` (and `question` for a
    /// message guard could not screen). The rail that refused carries guard's reason code.
    pub rails_status: BTreeMap<String, NemoRailStatus>,
    pub guardrails_data: NemoGuardrailsData,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct NemoRailStatus {
    pub status: NemoStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct NemoGuardrailsData {
    pub log: NemoLog,
    /// guard's own summary (extra keys are allowed in NeMo's shape).
    pub guard: NemoGuardSummary,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct NemoLog {
    /// The rails in the order they ran, ending at the one that stopped.
    pub activated_rails: Vec<NemoActivatedRail>,
    #[schema(value_type = Object)]
    pub stats: BTreeMap<String, Value>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct NemoActivatedRail {
    /// `input`, `output` or `tool`.
    #[serde(rename = "type")]
    pub kind: String,
    pub name: String,
    pub stop: bool,
    /// guard's reason code, on the rail that stopped.
    pub decisions: Vec<String>,
    #[schema(value_type = Vec<Object>)]
    pub executed_actions: Vec<Value>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct NemoGuardSummary {
    /// `allow`, `mask` (blocked on this route: the masked text is `content`) or `block`.
    pub action: String,
    /// guard's reason code of the refusal (`masked` for an answer that was masked).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rail: Option<String>,
    /// The text after guard: the refusal's reply, or the masked answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    pub config_rev: String,
}

/// The NeMo microservice's checks API.
#[utoipa::path(
    post,
    path = "/v1/guardrail/checks",
    tag = "gateways",
    request_body = RawNemoCheck,
    responses(
        (status = 200, description = "A decision, always (a block is a 200)", body = NemoCheckAnswer),
        (status = "4XX", description = "Not the contract (no messages, no product, bad JSON)", body = ErrorBody),
        (status = 503, description = "Overloaded", body = ErrorBody),
    )
)]
pub async fn checks(open: Opened<NemoCheck>, req: HttpRequest) -> Result<HttpResponse, ApiError> {
    let config_rev = &open.product.config_rev;
    if let Some(question) = input_only(&open.request) {
        // Input rails alone mask nothing: the answer has no content to carry.
        let render = |checks: &Checks| checks_answer(checks, None, config_rev);
        let (adapter, shape) = (Adapter::NemoChecks, QuestionShape::NemoChecks);
        let caller = question_caller(&req);
        let answered = answer_question(&open, question, caller.as_ref(), adapter, shape, render);
        return Ok(answered.await);
    }
    // Boxed: the output rails and the gate hold far more state than the input rails, and a
    // future holding them inline is copied whole by every request, input rails only or not.
    let (checks, content) = Box::pin(run(&open, &req)).await;
    checks.record(&open, Adapter::NemoChecks);
    Ok(json_response(&checks_answer(&checks, content, config_rev)))
}

/// The question of a request that runs the input rails alone, when it does.
fn input_only(check: &NemoCheck) -> Option<Result<String, Unscreenable>> {
    (check.input && !check.output).then(|| question(check))
}

/// The last user message's text.
fn question(check: &NemoCheck) -> Result<String, Unscreenable> {
    match check.messages.last_user() {
        Some(m) => content_text(m.content.as_ref()),
        None => Err(Unscreenable::NoQuestion),
    }
}

/// The microservice's answer for what the rails concluded (`content`: the text after them).
fn checks_answer(checks: &Checks, content: Option<String>, config_rev: &str) -> NemoCheckAnswer {
    // A masked answer cannot travel in this shape: it is refused, the masked text kept aside.
    let masked = checks.masked && !checks.refused();
    let mut rails_status = BTreeMap::new();
    let mut activated = Vec::with_capacity(checks.rails.len());
    for rail in &checks.rails {
        let stop = rail.blocked || (masked && rail.name == OUTPUT_RAIL);
        let reason = match (rail.reason, stop) {
            (Some(r), _) => Some(r.to_string()),
            (None, true) => Some("masked".to_string()),
            (None, false) => None,
        };
        let status = if stop {
            NemoStatus::Blocked
        } else {
            NemoStatus::Success
        };
        rails_status.insert(
            rail.name.to_string(),
            NemoRailStatus {
                status,
                reason: reason.clone(),
            },
        );
        activated.push(NemoActivatedRail {
            kind: rail.kind.as_str().to_string(),
            name: rail.name.to_string(),
            stop,
            decisions: reason.into_iter().collect(),
            executed_actions: Vec::new(),
        });
    }
    let refused = checks.refusal.as_ref();
    let status = match refused.is_some() || masked {
        true => NemoStatus::Blocked,
        false => NemoStatus::Success,
    };
    let guard = NemoGuardSummary {
        action: checks.action().as_str().to_string(),
        reason: refused
            .map(|r| r.reason.to_string())
            .or_else(|| masked.then(|| "masked".into())),
        rail: refused
            .map(|r| r.rail.to_string())
            .or_else(|| masked.then(|| OUTPUT_RAIL.into())),
        content: match refused {
            Some(r) => Some(r.message.clone()),
            None => content.filter(|_| masked),
        },
        config_rev: config_rev.to_string(),
    };
    let log = NemoLog {
        activated_rails: activated,
        stats: BTreeMap::new(),
    };
    NemoCheckAnswer {
        status,
        rails_status,
        guardrails_data: NemoGuardrailsData { log, guard },
    }
}

/// `passed`, `modified` or `blocked`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum NemoOssStatus {
    Passed,
    Modified,
    Blocked,
}

/// What the open-source server answers.
#[derive(Debug, Serialize, ToSchema)]
pub struct NemoOssAnswer {
    pub status: NemoOssStatus,
    /// The text after guard: the reply on a block, the masked answer when modified, the checked
    /// text when passed.
    pub content: String,
    /// The rail that blocked (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rail: Option<String>,
}

/// The open-source NeMo Guardrails server's checks API.
#[utoipa::path(
    post,
    path = "/v1/checks",
    tag = "gateways",
    request_body = RawNemoCheck,
    responses(
        (status = 200, description = "A decision, always (a block is a 200)", body = NemoOssAnswer),
        (status = "4XX", description = "Not the contract (no messages, no product, bad JSON)", body = ErrorBody),
        (status = 503, description = "Overloaded", body = ErrorBody),
    )
)]
pub async fn checks_oss(
    open: Opened<NemoCheck>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    if let Some(question) = input_only(&open.request) {
        // Passed, the content is the question: the view is of this very text (a verdict's
        // views never serve another).
        let content = question.as_ref().ok().cloned();
        let render = |checks: &Checks| oss_answer(checks, content);
        let (adapter, shape) = (Adapter::NemoOss, QuestionShape::NemoOss);
        let caller = question_caller(&req);
        let answered = answer_question(&open, question, caller.as_ref(), adapter, shape, render);
        return Ok(answered.await);
    }
    // Boxed: the output rails and the gate hold far more state than the input rails, and a
    // future holding them inline is copied whole by every request, input rails only or not.
    let (checks, content) = Box::pin(run(&open, &req)).await;
    checks.record(&open, Adapter::NemoOss);
    Ok(json_response(&oss_answer(&checks, content)))
}

/// The open-source server's answer for what the rails concluded.
fn oss_answer(checks: &Checks, content: Option<String>) -> NemoOssAnswer {
    match &checks.refusal {
        Some(r) => NemoOssAnswer {
            status: NemoOssStatus::Blocked,
            content: r.message.clone(),
            rail: Some(r.rail.to_string()),
        },
        None => NemoOssAnswer {
            status: match checks.masked {
                true => NemoOssStatus::Modified,
                false => NemoOssStatus::Passed,
            },
            content: content.unwrap_or_default(),
            rail: None,
        },
    }
}

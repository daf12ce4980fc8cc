//! What the gateway contracts share (LiteLLM's Generic Guardrail API, NeMo Guardrails' checks
//! APIs, the Guardrail Webhook API): the chat messages they carry, the screens they call (the
//! same calls, with the same metrics and audit lines, as `POST /v1/screen`,
//! `/v1/screen-output` and `/v1/tool-calls`), and [`Checks`], what those screens concluded,
//! which each adapter then writes in its contract's shape. Nothing here knows a contract.
//!
//! A gateway turns any error of its guardrail into a failure of the user's turn, so an adapter
//! answers with a decision whenever it can read the request: a message it cannot screen (no
//! question, only invisible characters, an image) is refused (fail closed) rather than
//! answered with a `422`. A `422` is for a request that is not the contract at all.

use super::error::ApiError;
use super::extract::{json_response, Opened};
pub use super::records::{Action, Adapter};
use crate::product::Product;
use crate::screens::caller::Caller;
use crate::screens::input::answer::View;
use crate::screens::input::Answered;
use crate::screens::output::{self, OutputReason};
use crate::screens::tools::{self, Decision as GateDecision, ProposedCall, Round};
use crate::verdict::{Decision, Outcome, Reply, Verdict};
use actix_web::http::header;
use actix_web::HttpResponse;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::OnceLock;
use utoipa::ToSchema;

/// One chat message as the gateways send it (OpenAI's shape). Unknown fields are ignored.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
pub struct ChatMessage {
    /// `system`, `user`, `assistant`, `tool`, ... (compared without regard to case).
    #[serde(default)]
    pub role: Option<String>,
    /// A string, or OpenAI's content parts (`[{"type": "text", "text": "..."}, ...]`): the text
    /// parts are screened together; a message with any other part (an image, audio, a file)
    /// is refused, since guard cannot read it.
    #[serde(default)]
    #[schema(value_type = super::openapi::MessageContent)]
    pub content: Option<Value>,
    /// The calls an assistant message proposes: `[{id, type: "function", function: {name,
    /// arguments: "<JSON text>"}}]`.
    #[serde(default)]
    #[schema(value_type = Option<Vec<Object>>)]
    pub tool_calls: Option<Vec<Value>>,
}

impl ChatMessage {
    pub fn is(&self, role: &str) -> bool {
        self.role
            .as_deref()
            .is_some_and(|r| r.trim().eq_ignore_ascii_case(role))
    }
}

/// A conversation as a gateway sends it (an array of [`ChatMessage`]), read in one pass that
/// keeps only what the screens read: the last message with role `user`, the last message, and
/// how many there were. Every message is read as a `ChatMessage` is (the same fields, the same
/// errors for a field of the wrong type), but the others are read past without a copy of their
/// texts: a long transcript costs a scan of its bytes, not an allocation per message.
#[derive(Debug, Default)]
pub struct Transcript {
    len: usize,
    last_user: Option<ChatMessage>,
    /// The last message, when it is not a user's (else it is `last_user`).
    last_other: Option<ChatMessage>,
}

impl Transcript {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The last message with role `user`.
    pub fn last_user(&self) -> Option<&ChatMessage> {
        self.last_user.as_ref()
    }

    /// The last message.
    pub fn last(&self) -> Option<&ChatMessage> {
        self.last_other.as_ref().or(self.last_user.as_ref())
    }
}

/// A message as it lies in the body: its role (copied only when escaped) and its content and
/// calls as the JSON text they are, validated but not built.
#[derive(Deserialize)]
#[serde(rename = "ChatMessage")]
struct MessageRef<'a> {
    #[serde(default, borrow)]
    role: Option<Role<'a>>,
    #[serde(default, borrow)]
    content: Option<&'a serde_json::value::RawValue>,
    #[serde(default, borrow)]
    tool_calls: Option<Vec<&'a serde_json::value::RawValue>>,
}

impl MessageRef<'_> {
    fn is(&self, role: &str) -> bool {
        self.role
            .as_ref()
            .is_some_and(|r| r.0.trim().eq_ignore_ascii_case(role))
    }

    /// The message, built (its content and calls read as values, as `ChatMessage` reads them).
    fn owned(&self) -> serde_json::Result<ChatMessage> {
        let value = |raw: &serde_json::value::RawValue| serde_json::from_str::<Value>(raw.get());
        Ok(ChatMessage {
            role: self.role.as_ref().map(|r| r.0.to_string()),
            content: self.content.map(value).transpose()?,
            tool_calls: match &self.tool_calls {
                Some(calls) => Some(calls.iter().map(|c| value(c)).collect::<Result<_, _>>()?),
                None => None,
            },
        })
    }
}

/// A role: borrowed from the body unless it holds an escape.
struct Role<'a>(std::borrow::Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Role<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Text;
        impl<'de> serde::de::Visitor<'de> for Text {
            type Value = std::borrow::Cow<'de, str>;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string")
            }

            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(std::borrow::Cow::Borrowed(v))
            }

            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(std::borrow::Cow::Owned(v.to_string()))
            }
        }
        d.deserialize_str(Text).map(Role)
    }
}

impl<'de> Deserialize<'de> for Transcript {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Messages;
        impl<'de> serde::de::Visitor<'de> for Messages {
            type Value = Transcript;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a sequence")
            }

            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Transcript, A::Error> {
                let mut len = 0;
                let (mut last_user, mut last) = (None, None);
                while let Some(m) = seq.next_element::<MessageRef<'de>>()? {
                    len += 1;
                    let user = m.is("user");
                    if user {
                        last_user = Some(m);
                        last = None;
                    } else {
                        last = Some(m);
                    }
                }
                let owned = |m: Option<MessageRef>| {
                    m.map(|m| m.owned().map_err(serde::de::Error::custom))
                        .transpose()
                };
                Ok(Transcript {
                    len,
                    last_user: owned(last_user)?,
                    last_other: owned(last)?,
                })
            }
        }
        d.deserialize_seq(Messages)
    }
}

/// Why a message cannot be screened. Each is refused (fail closed) with this code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unscreenable {
    /// No user message, or an empty one.
    NoQuestion,
    /// Only white space and invisible characters.
    NoVisibleText,
    /// Content guard cannot read: an image, audio, a file, a part of unknown shape.
    UnreadableContent,
}

impl Unscreenable {
    pub fn as_str(self) -> &'static str {
        match self {
            Unscreenable::NoQuestion => "no_question",
            Unscreenable::NoVisibleText => "no_visible_text",
            Unscreenable::UnreadableContent => "unreadable_content",
        }
    }
}

/// The text of a message's content: a string, or its text parts joined by new lines.
pub fn content_text(content: Option<&Value>) -> Result<String, Unscreenable> {
    let text = match content {
        None | Some(Value::Null) => return Err(Unscreenable::NoQuestion),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => {
            let mut texts: Vec<&str> = Vec::with_capacity(parts.len());
            for part in parts {
                texts.push(part_text(part).ok_or(Unscreenable::UnreadableContent)?);
            }
            texts.join("\n")
        }
        Some(_) => return Err(Unscreenable::UnreadableContent),
    };
    screenable(text)
}

/// A content part's text: a string, or `{"type": "text" | "input_text" | "output_text", "text"}`.
fn part_text(part: &Value) -> Option<&str> {
    match part {
        Value::String(s) => Some(s),
        Value::Object(o) => {
            let typed = o.get("type").and_then(Value::as_str);
            let is_text = typed.is_none_or(|t| matches!(t, "text" | "input_text" | "output_text"));
            o.get("text").and_then(Value::as_str).filter(|_| is_text)
        }
        _ => None,
    }
}

/// A text that can be screened (what `/v1/screen` would not refuse with `422`).
pub fn screenable(text: String) -> Result<String, Unscreenable> {
    if text.trim().is_empty() {
        Err(Unscreenable::NoQuestion)
    } else if !crate::text::has_visible(&text) {
        Err(Unscreenable::NoVisibleText)
    } else {
        Ok(text)
    }
}

/// The text of a reply for a gateway, which shows one string: in the question's language when
/// it is English or Bangla, in both otherwise (Banglish, another language, or an answer whose
/// question the gateway did not send).
pub fn reply_text(reply: &Reply, language: Option<&str>) -> String {
    match language {
        Some("en") => reply.en.to_string(),
        Some("bn") => reply.bn.to_string(),
        _ => format!("{}\n{}", reply.en, reply.bn),
    }
}

/// Which screen a rail belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RailKind {
    Input,
    Output,
    Tool,
}

impl RailKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RailKind::Input => "input",
            RailKind::Output => "output",
            RailKind::Tool => "tool",
        }
    }
}

/// The rail of the question screen's own refusals (a message it could not screen).
pub const QUESTION_RAIL: &str = "question";
/// The rail of the output screen.
pub const OUTPUT_RAIL: &str = "output";
/// The rail of the tool-call gate.
pub const GATE_RAIL: &str = "tool_gate";

/// One check that ran, as NeMo's contract lists them: a stage of the question screen (its
/// name, `script` ... `judge`), the output screen (`output`) or the gate (`tool_gate`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rail {
    pub name: &'static str,
    pub kind: RailKind,
    pub blocked: bool,
    /// guard's reason code, on the rail that refused.
    pub reason: Option<&'static str>,
}

/// A refusal: the rail that decided, guard's reason code, and the text the user is shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub rail: &'static str,
    pub reason: &'static str,
    pub message: String,
}

/// What an adapter's screens concluded, in the order they ran.
#[derive(Debug, Default)]
pub struct Checks {
    pub rails: Vec<Rail>,
    /// The first refusal: a screen that runs after one is not asked.
    pub refusal: Option<Refusal>,
    /// The output screen changed a text.
    pub masked: bool,
    /// A message no screen could read, refused here: the rail and why (its audit line).
    unscreenable: Option<(&'static str, Unscreenable)>,
}

impl Checks {
    pub fn refused(&self) -> bool {
        self.refusal.is_some()
    }

    fn pass(&mut self, name: &'static str, kind: RailKind) {
        self.rails.push(Rail {
            name,
            kind,
            blocked: false,
            reason: None,
        });
    }

    fn refuse(
        &mut self,
        name: &'static str,
        kind: RailKind,
        reason: &'static str,
        message: String,
    ) {
        self.rails.push(Rail {
            name,
            kind,
            blocked: true,
            reason: Some(reason),
        });
        if self.refusal.is_none() {
            self.refusal = Some(Refusal {
                rail: name,
                reason,
                message,
            });
        }
    }

    /// What the answer does: refuse, mask or let through.
    pub fn action(&self) -> Action {
        if self.refused() {
            Action::Block
        } else if self.masked {
            Action::Mask
        } else {
            Action::Allow
        }
    }

    /// Record the answer: `guard_gateway_answers_total`, and an audit line for a refusal no
    /// screen wrote one for (a message none could read; never its content).
    pub fn record<T>(&self, open: &Opened<T>, adapter: Adapter) {
        open.state.http.record_gateway(adapter, self.action());
        let Some((rail, why)) = self.unscreenable else {
            return;
        };
        let line = serde_json::json!({
            "ts": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            "kind": "gateway_refusal",
            "adapter": adapter.as_str(),
            "product": open.product.name,
            "config_rev": open.product.config_rev,
            "rail": rail,
            "decision": "block",
            "reason": why.as_str(),
        });
        open.screener.records().audit.write_value(&line);
    }
}

/// The question screen on the user's message, as `POST /v1/screen` runs it (the cache, the
/// metrics and the audit line included). Every stage that ran is a rail; a block refuses
/// with the product's reply. A message that cannot be screened is refused with the safety
/// reply.
pub async fn screen_question<T>(
    open: &Opened<T>,
    text: Result<String, Unscreenable>,
    caller: Option<&Caller>,
    checks: &mut Checks,
) {
    let product = &open.product;
    let text = match text {
        Ok(text) => text,
        Err(why) => return refuse_unscreenable(open, QUESTION_RAIL, RailKind::Input, why, checks),
    };
    let answered = open
        .screener
        .answer(&product.name, &text, caller, None)
        .await;
    let verdict: &Verdict = match &answered {
        Some(Answered::Shared(answer)) => &answer.verdict,
        Some(Answered::Fresh(verdict)) => verdict,
        None => return question_unavailable(product, checks),
    };
    question_rails(product, verdict, checks);
}

/// The shapes of a gateway's answer to a question alone: each keeps its rendering of a cached
/// verdict in its own slot of the verdict's views.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuestionShape {
    /// LiteLLM's request side.
    LiteLlm = 0,
    /// NeMo's microservice checks, input rails only.
    NemoChecks = 1,
    /// The open-source NeMo server's checks, input rails only.
    NemoOss = 2,
    /// The Guardrail Webhook API's `/request`.
    Webhook = 3,
}

/// The question screen alone, for a request whose whole answer is what that screen concludes:
/// [`screen_question`], then `render` writes the contract's answer from the [`Checks`], and the
/// answer is recorded. A verdict read from the cache is rendered once per shape and kept with
/// it (its views, which live and die with that verdict: the same product, configuration and
/// text), so the same question again is answered as `/v1/screen` answers it, without building
/// rails, replies or JSON again.
pub async fn answer_question<T, A: Serialize>(
    open: &Opened<T>,
    text: Result<String, Unscreenable>,
    caller: Option<&Caller>,
    adapter: Adapter,
    shape: QuestionShape,
    render: impl FnOnce(&Checks) -> A,
) -> HttpResponse {
    let mut checks = Checks::default();
    let text = match text {
        Ok(text) => text,
        Err(why) => {
            refuse_unscreenable(open, QUESTION_RAIL, RailKind::Input, why, &mut checks);
            checks.record(open, adapter);
            return json_response(&render(&checks));
        }
    };
    let product = &open.product;
    // The caller's records are part of the verdict cache's key, and so of the views kept with it.
    let answer = match open
        .screener
        .answer(&product.name, &text, caller, None)
        .await
    {
        Some(Answered::Shared(answer)) => answer,
        Some(Answered::Fresh(verdict)) => {
            question_rails(product, &verdict, &mut checks);
            checks.record(open, adapter);
            return json_response(&render(&checks));
        }
        None => {
            question_unavailable(product, &mut checks);
            checks.record(open, adapter);
            return json_response(&render(&checks));
        }
    };
    let cell = answer.views.slot(shape as usize);
    let view = match cell.and_then(OnceLock::get) {
        Some(view) => view,
        None => {
            question_rails(product, &answer.verdict, &mut checks);
            // Rendered once; another request of this thread may have filled the cell since, with
            // the same bytes.
            let answered = render(&checks);
            let (Some(cell), Ok(json)) = (cell, serde_json::to_vec(&answered)) else {
                checks.record(open, adapter);
                return json_response(&answered);
            };
            cell.get_or_init(|| View {
                json: json.into(),
                refused: checks.refused(),
            })
        }
    };
    let action = match view.refused {
        true => Action::Block,
        false => Action::Allow,
    };
    open.state.http.record_gateway(adapter, action);
    HttpResponse::Ok()
        .insert_header(header::ContentType::json())
        .body(view.json.clone())
}

// Every shape has its slot.
const _: () = assert!((QuestionShape::Webhook as usize) < crate::screens::input::answer::VIEWS);

/// The product was found when the request was opened, on this same configuration; should the
/// screen still not know it, the question is refused as a check that failed.
fn question_unavailable(product: &Product, checks: &mut Checks) {
    let message = reply_text(&product.replies.unavailable, None);
    checks.refuse(QUESTION_RAIL, RailKind::Input, "check_failed", message);
}

/// Refuse a message guard cannot screen, on `rail`, with the product's safety reply (in both
/// languages: there is no verdict to tell the question's language).
pub fn refuse_unscreenable<T>(
    open: &Opened<T>,
    rail: &'static str,
    kind: RailKind,
    why: Unscreenable,
    checks: &mut Checks,
) {
    let message = reply_text(&open.product.replies.safety, None);
    checks.refuse(rail, kind, why.as_str(), message);
    checks.unscreenable.get_or_insert((rail, why));
}

/// A question's verdict as rails: one per stage in its trace, the deciding one refusing.
fn question_rails(product: &Product, v: &Verdict, checks: &mut Checks) {
    let blocked = v.decision == Decision::Block;
    for t in &v.trace {
        let failed = matches!(t.outcome, Outcome::Block | Outcome::FailClosed);
        // The deciding stage is written by the refusal below, with its reason.
        if blocked && failed && t.stage == v.stage {
            continue;
        }
        checks.rails.push(Rail {
            name: t.stage.as_str(),
            kind: RailKind::Input,
            blocked: failed,
            reason: None,
        });
    }
    if blocked {
        let reply = match &v.reply {
            Some(reply) => reply.clone(),
            None => product.replies.for_block(v.reason, &v.categories),
        };
        let message = reply_text(&reply, Some(&v.language));
        checks.refuse(
            v.stage.as_str(),
            RailKind::Input,
            v.reason.as_str(),
            message,
        );
    }
}

/// The output screen on each of an answer's texts, as `POST /v1/screen-output` runs it: the
/// masked text of each (the text itself when nothing changed), in order. A text the product
/// blocks refuses the answer with the safety reply (the unavailable one when the masking
/// crashed), in both languages: the gateway did not send the question.
pub fn screen_answers<T, S: AsRef<str>>(
    open: &Opened<T>,
    texts: &[S],
    checks: &mut Checks,
) -> Vec<String> {
    let product = &open.product;
    let records = open.screener.records();
    let mut out = Vec::with_capacity(texts.len());
    let mut refusal = None;
    for text in texts {
        let text = text.as_ref();
        if text.trim().is_empty() {
            out.push(text.to_string());
            continue;
        }
        let v = output::answer(product, text, None, records);
        if !v.decision.allows() && refusal.is_none() {
            refusal = Some(v.reason);
        }
        let masked = v.text.unwrap_or_default();
        checks.masked |= masked != text;
        out.push(masked);
    }
    match refusal {
        None => checks.pass(OUTPUT_RAIL, RailKind::Output),
        Some(reason) => {
            let reply = match reason {
                // The adapters screen whole answers; a stream's deadlines never reach here.
                OutputReason::CheckFailed
                | OutputReason::StreamIdle
                | OutputReason::StreamTooLong => &product.replies.unavailable,
                // The adapters send no turn, so the lookup check never runs here; were it to,
                // its refusals read as the safety reply.
                _ => &product.replies.safety,
            };
            let message = reply_text(reply, None);
            checks.refuse(OUTPUT_RAIL, RailKind::Output, reason.as_str(), message);
        }
    }
    out
}

/// One call as the gate's route reads it; a duplicate key inside its `arguments` text (which
/// the route refuses whole) makes this call's arguments unreadable, so the gate skips it.
fn read_call((index, call): (usize, Value)) -> ProposedCall {
    crate::screens::tools::wire::read_call(call, index).unwrap_or_else(|e| {
        ProposedCall::new(None, None, Err(format!("the call is ambiguous: {e}")))
    })
}

/// The gate on the calls an answer proposes, as `POST /v1/tool-calls` runs it (the state, the
/// metrics and the decision log included). A gateway runs a call or drops the whole answer, so
/// every call the gate would not run now (`skip`, `needs_approval`, `reuse`) refuses the answer
/// with the gate's messages.
pub async fn gate_calls<T>(
    open: &Opened<T>,
    conversation: String,
    turn: String,
    caller: Option<Caller>,
    calls: Vec<Value>,
    checks: &mut Checks,
) {
    let round = Round {
        conversation,
        turn,
        caller,
        calls: calls.into_iter().enumerate().map(read_call).collect(),
    };
    let records = open.screener.records();
    let verdict = tools::screen(&open.product, &open.state.gate, round, records).await;
    let held: Vec<_> = verdict
        .decisions
        .iter()
        .filter(|d| d.decision != GateDecision::Run)
        .collect();
    let Some(first) = held.first() else {
        checks.pass(GATE_RAIL, RailKind::Tool);
        return;
    };
    let message = held
        .iter()
        .map(|d| match (&d.message, &d.tool) {
            (Some(m), _) => m.clone(),
            (None, Some(tool)) => format!("`{tool}`: {}", d.reason.as_str()),
            (None, None) => d.reason.as_str().to_string(),
        })
        .collect::<Vec<_>>()
        .join("; ");
    checks.refuse(GATE_RAIL, RailKind::Tool, first.reason.as_str(), message);
}

/// An id for a request that brought none (a gate round needs a conversation and a turn):
/// random, so that replicas sharing the gate's state never collide.
pub fn fresh_id(prefix: &str) -> String {
    let mut bytes = [0u8; 12];
    // Without the CSPRNG the time still tells rounds apart (and a clash only dedupes).
    if getrandom::fill(&mut bytes).is_err() {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        bytes.copy_from_slice(&nanos.to_le_bytes()[..12]);
    }
    format!("{prefix}-{}", hex::encode(bytes))
}

/// A header's value as text, when present, not blank and not LiteLLM's `[present]` (a header
/// whose value it did not forward).
/// The header a gateway's caller forwards the platform's `caller` in, as JSON text.
pub const CALLER_HEADER: &str = "x-guard-caller";

/// The caller a gateway's question screen reads: the `x-guard-caller` header of `req`, when it
/// is a caller. One it cannot read screens the question as with no caller (the stricter
/// reading: every record number counts as someone else's); the gate refuses on it.
pub fn question_caller(req: &actix_web::HttpRequest) -> Option<Caller> {
    let header = req
        .headers()
        .get(CALLER_HEADER)
        .and_then(|v| v.to_str().ok());
    caller_of_header(header).ok().flatten()
}

/// The caller of a gateway request: the `x-guard-caller` header's JSON text, read as the
/// native routes read `caller` (`422 invalid_caller` when it is not a caller).
pub fn caller_of_header(value: Option<&str>) -> Result<Option<Caller>, ApiError> {
    let Some(text) = value.map(str::trim).filter(|v| !v.is_empty()) else {
        return Ok(None);
    };
    let v = serde_json::from_str(text).map_err(|_| {
        ApiError::InvalidCaller(format!(
            "`{CALLER_HEADER}` is the caller object as JSON text"
        ))
    })?;
    Caller::from_json(Some(v)).map_err(ApiError::InvalidCaller)
}

pub fn header_text(value: Option<&str>) -> Option<String> {
    value
        .map(str::trim)
        .filter(|v| !v.is_empty() && *v != "[present]")
        .map(|v| match v.len() <= 256 {
            // Never more characters than bytes.
            true => v.to_string(),
            false => v.chars().take(256).collect(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn content_is_read_as_text_or_refused() {
        let cases = [
            (json!("hello"), Ok("hello".to_string())),
            (
                json!([{"type": "text", "text": "a"}, {"text": "b"}, "c"]),
                Ok("a\nb\nc".to_string()),
            ),
            (json!([{"type": "input_text", "text": "x"}]), Ok("x".into())),
            (
                json!([{"type": "text", "text": "a"}, {"type": "image_url", "image_url": {"url": "data:"}}]),
                Err(Unscreenable::UnreadableContent),
            ),
            (
                json!([{"type": "image_url", "text": "pretend"}]),
                Err(Unscreenable::UnreadableContent),
            ),
            (json!(42), Err(Unscreenable::UnreadableContent)),
            (json!(null), Err(Unscreenable::NoQuestion)),
            (json!("  \n"), Err(Unscreenable::NoQuestion)),
            (json!([]), Err(Unscreenable::NoQuestion)),
            (json!("\u{200B}\u{2060}"), Err(Unscreenable::NoVisibleText)),
        ];
        for (content, want) in cases {
            assert_eq!(content_text(Some(&content)), want, "{content}");
        }
        assert_eq!(content_text(None), Err(Unscreenable::NoQuestion));
    }

    mod transcript {
        use super::*;
        use proptest::prelude::*;

        /// A message as gateways write them, and as they should not: roles in any case and
        /// padding (or escaped, or of the wrong type), content as a string, parts, null, a
        /// number or absent, calls or a wrong `tool_calls`, extra fields, the array form.
        fn message() -> impl Strategy<Value = Value> {
            let role = prop_oneof![
                Just(json!("user")),
                Just(json!(" User ")),
                Just(json!("assistant")),
                Just(json!("system")),
                Just(json!("tool")),
                Just(json!("user\n")),
                Just(json!("\"user\"")),
                Just(json!(7)),
                Just(Value::Null),
            ];
            let content = prop_oneof![
                "[a-z \\n\"\u{0995}-\u{09a0}]{0,12}".prop_map(Value::String),
                Just(json!([{"type": "text", "text": "a"}, "b"])),
                Just(json!([{"type": "image_url", "image_url": {"url": "x"}}])),
                Just(Value::Null),
                Just(json!(3)),
            ];
            let calls = prop_oneof![
                Just(None),
                Just(Some(
                    json!([{"id": "c", "function": {"name": "f", "arguments": "{}"}}])
                )),
                Just(Some(Value::Null)),
                Just(Some(json!("not calls"))),
            ];
            (role, content, calls, any::<[bool; 3]>()).prop_map(|(role, content, calls, has)| {
                let mut m = serde_json::Map::new();
                if has[0] {
                    m.insert("role".into(), role);
                }
                if has[1] {
                    m.insert("content".into(), content);
                }
                if let Some(calls) = calls {
                    m.insert("tool_calls".into(), calls);
                }
                if has[2] {
                    m.insert("name".into(), json!({"extra": [1, {"x": null}]}));
                }
                Value::Object(m)
            })
        }

        fn messages() -> impl Strategy<Value = Value> {
            let one = prop_oneof![
                8 => message(),
                1 => Just(json!(["user", "as an array"])),
                1 => Just(json!("not a message")),
            ];
            prop::collection::vec(one, 0..8).prop_map(Value::Array)
        }

        /// The last message with role `user`, read from every message built.
        fn last_user(messages: &[ChatMessage]) -> Option<&ChatMessage> {
            messages.iter().rev().find(|m| m.is("user"))
        }

        fn same(a: Option<&ChatMessage>, b: Option<&ChatMessage>) -> bool {
            let key = |m: &ChatMessage| (m.role.clone(), m.content.clone(), m.tool_calls.clone());
            a.map(key) == b.map(key)
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

            /// The transcript reads what the messages read as `ChatMessage`s: the same
            /// refusals, the same count, the same last user message and last message.
            #[test]
            fn a_transcript_keeps_what_the_messages_say(v in messages()) {
                let text = v.to_string();
                let full = serde_json::from_str::<Vec<ChatMessage>>(&text);
                let kept = serde_json::from_str::<Transcript>(&text);
                match (full, kept) {
                    (Ok(full), Ok(kept)) => {
                        prop_assert_eq!(full.len(), kept.len());
                        prop_assert!(same(last_user(&full), kept.last_user()), "{}", text);
                        prop_assert!(same(full.last(), kept.last()), "{}", text);
                    }
                    (Err(_), Err(_)) => {}
                    (full, kept) => prop_assert!(false, "{text}: {full:?} vs {kept:?}"),
                }
            }
        }
    }

    #[test]
    fn replies_follow_the_question_language() {
        let r = Reply::new("Sorry.", "দুঃখিত।");
        assert_eq!(reply_text(&r, Some("en")), "Sorry.");
        assert_eq!(reply_text(&r, Some("bn")), "দুঃখিত।");
        assert_eq!(reply_text(&r, Some("bn-Latn")), "Sorry.\nদুঃখিত।");
        assert_eq!(reply_text(&r, None), "Sorry.\nদুঃখিত।");
    }

    #[test]
    fn ids_are_fresh_and_headers_real() {
        assert_ne!(fresh_id("t"), fresh_id("t"));
        assert_eq!(header_text(Some(" c-1 ")), Some("c-1".into()));
        assert_eq!(header_text(Some("[present]")), None);
        assert_eq!(header_text(Some("  ")), None);
        assert_eq!(header_text(None), None);
    }
}

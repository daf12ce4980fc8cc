//! The verdict: what every screen returns, on the wire and in the audit log.
//!
//! The JSON shape is a stable contract (see `ARCHITECTURE.md`): clients, dashboards and eval
//! suites depend on the field names and on the closed sets of `stage`, `reason` and `outcome`.
//! Every closed set here is an enum with `as_str()`, so metric labels can only come from them.

use serde::{Deserialize, Serialize};
use std::sync::Arc;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::openapi::RefOr;
use utoipa::{PartialSchema, ToSchema};

/// The seven stages of the pipeline, plus `Pipeline` for "everything passed".
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord, ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    Script,
    Banglish,
    LangId,
    Signatures,
    Policy,
    Guard,
    Judge,
    Pipeline,
}

impl Stage {
    pub const ALL: [Stage; 8] = [
        Stage::Script,
        Stage::Banglish,
        Stage::LangId,
        Stage::Signatures,
        Stage::Policy,
        Stage::Guard,
        Stage::Judge,
        Stage::Pipeline,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Script => "script",
            Stage::Banglish => "banglish",
            Stage::LangId => "lang_id",
            Stage::Signatures => "signatures",
            Stage::Policy => "policy",
            Stage::Guard => "guard",
            Stage::Judge => "judge",
            Stage::Pipeline => "pipeline",
        }
    }

    /// Language stages fail open, safety stages fail closed.
    pub fn is_language(self) -> bool {
        matches!(self, Stage::Script | Stage::Banglish | Stage::LangId)
    }

    /// The stages of a full screen, in pipeline order: the one place the order is written.
    pub const SCREEN: [Stage; 7] = [
        Stage::Script,
        Stage::Banglish,
        Stage::LangId,
        Stage::Signatures,
        Stage::Policy,
        Stage::Guard,
        Stage::Judge,
    ];

    /// Untrusted content (retrieved documents, tool results) for `/v1/screen-context`: the
    /// injection signatures with the hidden-text checks, then the guard model. No language
    /// screen (documents may be in any language), no product rules (they are about customers'
    /// questions), no judge (its instructions are about questions too): borderline blocks.
    pub const CONTEXT: [Stage; 2] = [Stage::Signatures, Stage::Guard];

    /// The language screen alone (the eval suites' `language` cases).
    pub const LANGUAGE: [Stage; 3] = [Stage::Script, Stage::Banglish, Stage::LangId];
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    Allow,
    Block,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Block => "block",
        }
    }
}

/// Stable reason codes. Adding one is a contract change; renaming one breaks clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    Passed,
    JudgeAllowed,
    UnsupportedLanguage,
    PromptInjection,
    PolicyBlocked,
    Unsafe,
    JudgeBlocked,
    GuardUnavailable,
    JudgeUnavailable,
    /// A safety check itself crashed: the question is blocked (fail closed).
    CheckFailed,
}

impl Reason {
    pub const ALL: [Reason; 10] = [
        Reason::Passed,
        Reason::JudgeAllowed,
        Reason::UnsupportedLanguage,
        Reason::PromptInjection,
        Reason::PolicyBlocked,
        Reason::Unsafe,
        Reason::JudgeBlocked,
        Reason::GuardUnavailable,
        Reason::JudgeUnavailable,
        Reason::CheckFailed,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Passed => "passed",
            Reason::JudgeAllowed => "judge_allowed",
            Reason::UnsupportedLanguage => "unsupported_language",
            Reason::PromptInjection => "prompt_injection",
            Reason::PolicyBlocked => "policy_blocked",
            Reason::Unsafe => "unsafe",
            Reason::JudgeBlocked => "judge_blocked",
            Reason::GuardUnavailable => "guard_unavailable",
            Reason::JudgeUnavailable => "judge_unavailable",
            Reason::CheckFailed => "check_failed",
        }
    }

    pub fn decision(self) -> Decision {
        match self {
            Reason::Passed | Reason::JudgeAllowed => Decision::Allow,
            _ => Decision::Block,
        }
    }
}

/// What one stage did, as recorded in the trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The stage let the question go on (or decided it is acceptable).
    Pass,
    /// The stage decided the question is acceptable and later language stages are skipped.
    Accept,
    /// The stage decided to block.
    Block,
    /// The guard was unsure; the judge decides.
    Borderline,
    /// A language check could not run or answer; the question passed anyway.
    FailOpen,
    /// A safety check could not run or answer; the question was blocked.
    FailClosed,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Accept => "accept",
            Outcome::Block => "block",
            Outcome::Borderline => "borderline",
            Outcome::FailOpen => "fail_open",
            Outcome::FailClosed => "fail_closed",
        }
    }
}

/// How a verdict came about when a check could not answer. Never cached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum FailMode {
    Open,
    Closed,
}

impl FailMode {
    pub fn as_str(self) -> &'static str {
        match self {
            FailMode::Open => "open",
            FailMode::Closed => "closed",
        }
    }
}

/// One line of the trace: which stage ran, what it concluded and how long it took.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct TraceEntry {
    pub stage: Stage,
    pub outcome: Outcome,
    pub micros: u64,
    /// Short machine-readable detail (never the screened text): e.g. `"letters bn=12 latn=3"`,
    /// `"signature injection-en:ignore previous instructions"`, `"p_unsafe=0.42"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// The fixed reply a blocked question gets, in both languages.
///
/// Shared with the product's configuration (a blocked verdict's reply is not copied) and
/// escaped into JSON once, when the configuration loads: escaping the Bangla text byte by byte
/// on every answer cost the cheap path a few percent.
#[derive(Debug, Clone, Deserialize)]
#[serde(from = "ReplyText<String>")]
pub struct Reply {
    pub en: Arc<str>,
    pub bn: Arc<str>,
    /// `{"en": …, "bn": …}`, written as it is into a JSON answer.
    json: Option<Arc<serde_json::value::RawValue>>,
}

#[derive(Serialize, Deserialize)]
struct ReplyText<T> {
    en: T,
    bn: T,
}

impl Reply {
    pub fn new(en: &str, bn: &str) -> Reply {
        let json = serde_json::to_string(&ReplyText { en, bn })
            .ok()
            .and_then(|j| serde_json::value::RawValue::from_string(j).ok())
            .map(Arc::from);
        Reply {
            en: en.into(),
            bn: bn.into(),
            json,
        }
    }
}

/// `{"en": "...", "bn": "..."}` in the OpenAPI description (its serialisation is written by hand).
impl PartialSchema for Reply {
    fn schema() -> RefOr<Schema> {
        let text = || ObjectBuilder::new().schema_type(Type::String);
        ObjectBuilder::new()
            .schema_type(Type::Object)
            .property("en", text())
            .property("bn", text())
            .required("en")
            .required("bn")
            .description(Some("The product's fixed reply, in English and Bangla"))
            .into()
    }
}

impl ToSchema for Reply {}

impl From<ReplyText<String>> for Reply {
    fn from(r: ReplyText<String>) -> Reply {
        Reply::new(&r.en, &r.bn)
    }
}

impl PartialEq for Reply {
    fn eq(&self, other: &Reply) -> bool {
        self.en == other.en && self.bn == other.bn
    }
}

impl Eq for Reply {}

impl Serialize for Reply {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match &self.json {
            Some(raw) => raw.serialize(s),
            None => ReplyText {
                en: &*self.en,
                bn: &*self.bn,
            }
            .serialize(s),
        }
    }
}

/// The wire verdict of `POST /v1/screen` and `guard screen`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Verdict {
    pub decision: Decision,
    pub reason: Reason,
    pub stage: Stage,
    pub language: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply: Option<Reply>,
    pub categories: Vec<String>,
    pub score: Option<f32>,
    pub cached: bool,
    /// `open` / `closed` when a check could not answer and the failure policy decided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fail_mode: Option<FailMode>,
    pub config_rev: String,
    /// The caller's `request_id` (HTTP) or `id` (JSON lines), echoed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    pub trace: Vec<TraceEntry>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reply escaped once at load is exactly what serialising its two texts gives, quotes,
    /// line breaks, control characters and Bangla included; one read from JSON is escaped too.
    #[test]
    fn a_pre_escaped_reply_serialises_as_its_texts_do() {
        let (en, bn) = ("Say \"no\"\\\n\ttab \u{1}", "দুঃখিত, \"আবার\" জিজ্ঞেস করুন।\n");
        let plain = serde_json::json!({"en": en, "bn": bn});
        let reply = Reply::new(en, bn);
        let out = serde_json::to_string(&reply).unwrap_or_default();
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&out).ok(),
            Some(plain.clone())
        );
        assert_eq!(serde_json::to_value(&reply).ok(), Some(plain.clone()));
        let read: Reply = serde_json::from_value(plain.clone()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(read, reply);
        assert_eq!(serde_json::to_value(&read).ok(), Some(plain));
    }
}

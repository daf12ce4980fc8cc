//! The context screen's verdict: per document its decision, reason, trace and (when it
//! passed) the wrapped text to hand the model.

use crate::verdict::TraceEntry;
use serde::Serialize;

#[derive(Debug, Clone)]
pub struct Document {
    pub id: Option<String>,
    pub text: String,
    pub owner: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DocDecision {
    /// Screened and wrapped: hand `wrapped` to the model, never `text`.
    Pass,
    /// Refused by a safety check: leave it out.
    Block,
    /// Owned by someone other than the caller: left out.
    Drop,
}

impl DocDecision {
    pub fn as_str(self) -> &'static str {
        match self {
            DocDecision::Pass => "pass",
            DocDecision::Block => "block",
            DocDecision::Drop => "drop",
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct DocVerdict {
    pub index: usize,
    pub id: Option<String>,
    pub decision: DocDecision,
    /// `passed`, the input side's reason codes (`prompt_injection`, `unsafe`,
    /// `guard_unavailable`, `check_failed`), `borderline`, or `not_owner`.
    pub reason: &'static str,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub categories: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wrapped: Option<String>,
    pub trace: Vec<TraceEntry>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ContextVerdict {
    pub product: String,
    pub documents: Vec<DocVerdict>,
    pub passed: usize,
    pub blocked: usize,
    pub dropped: usize,
    /// The boundary the markers of this request's documents carry
    /// (`<<<UNTRUSTED_DOCUMENT_<boundary>` … `UNTRUSTED_DOCUMENT_<boundary>>>>`): fresh for
    /// every request, so no document can write the closer. An agent may name it to its model.
    pub boundary: String,
    pub config_rev: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

//! The context screen's verdict: per document its decision, reason, trace and (when it
//! passed) the wrapped text to hand the model.

use crate::verdict::{Decision, Reason, TraceEntry};
use serde::{Serialize, Serializer};
use utoipa::ToSchema;

#[derive(Debug, Clone)]
pub struct Document {
    pub id: Option<String>,
    pub text: String,
    pub owner: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
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

/// Why a document was decided as it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocReason {
    /// The input side's screen decided (`passed`, `prompt_injection`, `unsafe`,
    /// `guard_unavailable`, `check_failed`).
    Screen(Reason),
    /// The guard was unsure, and no judge reads documents: left out.
    Borderline,
    /// Owned by someone other than the caller.
    NotOwner,
}

impl DocReason {
    pub fn as_str(self) -> &'static str {
        match self {
            DocReason::Screen(r) => r.as_str(),
            DocReason::Borderline => "borderline",
            DocReason::NotOwner => "not_owner",
        }
    }

    /// What the document's screen came to: with no judge in the plan, a borderline answer
    /// ends as "no judge resolved it".
    pub fn of_screen(decision: Decision, reason: Reason) -> (DocDecision, DocReason) {
        match (decision, reason) {
            (Decision::Allow, r) => (DocDecision::Pass, DocReason::Screen(r)),
            (Decision::Block, Reason::JudgeUnavailable) => (DocDecision::Block, Self::Borderline),
            (Decision::Block, r) => (DocDecision::Block, DocReason::Screen(r)),
        }
    }
}

impl Serialize for DocReason {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// A string in the OpenAPI description: the input side's reason codes, `borderline`, `not_owner`.
impl utoipa::PartialSchema for DocReason {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{ObjectBuilder, Type};
        let codes = Reason::ALL
            .iter()
            .map(|r| r.as_str())
            .chain(["borderline", "not_owner"]);
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(codes))
            .description(Some("Why the document was decided as it was"))
            .into()
    }
}

impl ToSchema for DocReason {}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct DocVerdict {
    pub index: usize,
    pub id: Option<String>,
    pub decision: DocDecision,
    pub reason: DocReason,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub categories: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wrapped: Option<String>,
    pub trace: Vec<TraceEntry>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
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

//! The answer of `POST /v1/tool-results`: per result the context screen's decision and the
//! wrapped text, whether its call is one the gate let go ahead, and what the turn now holds.

use crate::screens::context::verdict::{DocDecision, DocReason};
use crate::screens::tools::verdict::GateTrace;
use crate::verdict::{Reason, TraceEntry};
use serde::{Serialize, Serializer};
use utoipa::ToSchema;

/// One tool result as the platform sent it (checked).
#[derive(Debug, Clone)]
pub struct ToolResult {
    pub id: String,
    pub tool: String,
    /// `false`: the tool failed (its content is its error); counted in the tool's health.
    pub ok: bool,
    /// The tool's output as text (JSON output serialised).
    pub content: String,
}

/// One request's results.
#[derive(Debug, Clone)]
pub struct ResultsRequest {
    pub conversation: String,
    pub turn: String,
    pub results: Vec<ToolResult>,
}

/// Why a result was decided as it was: the context screen's reason, or the state that could
/// not keep it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResultReason {
    /// The context screen decided (`passed`, `prompt_injection`, `unsafe`, `borderline`, ...).
    Screen(DocReason),
    /// The gate's store did not answer: the turn's evidence cannot be kept, so the result is
    /// not handed on (fail closed).
    GateUnavailable,
}

impl ResultReason {
    pub fn as_str(self) -> &'static str {
        match self {
            ResultReason::Screen(r) => r.as_str(),
            ResultReason::GateUnavailable => "gate_unavailable",
        }
    }
}

impl Serialize for ResultReason {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// A string in the OpenAPI description: the context screen's codes and `gate_unavailable`.
impl utoipa::PartialSchema for ResultReason {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{ObjectBuilder, Type};
        let codes = Reason::ALL
            .iter()
            .map(|r| r.as_str())
            .chain(["borderline", "gate_unavailable"]);
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(codes))
            .description(Some("Why the result was decided as it was"))
            .into()
    }
}

impl ToSchema for ResultReason {}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ResultVerdict {
    pub index: usize,
    pub id: String,
    pub tool: String,
    pub ok: bool,
    /// `pass`: hand the model `wrapped`, never the content; `block`: leave it out.
    pub decision: DocDecision,
    pub reason: ResultReason,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub categories: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wrapped: Option<String>,
    /// No call of this id was let go ahead by the gate in this turn (never proposed, skipped,
    /// or the turn's record expired). Accepted and counted; `false` when the store could not
    /// be read.
    pub unknown_call: bool,
    pub trace: Vec<TraceEntry>,
}

/// Whether the turn kept the results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ResultsState {
    /// The results' evidence was added to the turn.
    Kept,
    /// The gate's store did not answer: nothing was kept and every result is blocked.
    GateUnavailable,
}

impl ResultsState {
    pub fn as_str(self) -> &'static str {
        match self {
            ResultsState::Kept => "kept",
            ResultsState::GateUnavailable => "gate_unavailable",
        }
    }
}

/// What the turn's evidence holds after this request (counts, never the values).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
pub struct EvidenceCounts {
    /// Results kept this turn, ok or not.
    pub results: u32,
    pub figures: usize,
    pub identifiers: usize,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ResultsVerdict {
    pub product: String,
    pub conversation: String,
    pub turn: String,
    pub results: Vec<ResultVerdict>,
    pub state: ResultsState,
    /// The turn's evidence after this request; `null` when it could not be kept.
    pub evidence: Option<EvidenceCounts>,
    /// Results marked `unknown_call`.
    pub unknown_calls: usize,
    /// The product's tools failing right now (as in every gate answer); every tool when the
    /// store could not be read.
    pub unavailable_tools: Vec<String>,
    /// The boundary the wrapped results' markers carry (fresh for every request).
    pub boundary: String,
    pub config_rev: String,
    /// The state step (`{step: "state", micros, detail}`).
    pub trace: Vec<GateTrace>,
    /// The health changes this request saw (for the metrics). Never serialised.
    #[serde(skip)]
    pub health_changes: Vec<(String, crate::turn::health::HealthChange)>,
}

//! The output screen's verdict: the masked answer, what was found (kinds and places, never
//! values), the decision and its reason, and a trace of the masking.

use crate::redact::{Finding, Kind};
use crate::screens::TraceLine;
use crate::verdict::Outcome;
use serde::Serialize;
use std::collections::BTreeMap;
use utoipa::ToSchema;

/// The output screen's decision: the question screen's `allow` and `block`, and
/// `needs_lookup` (the answer states figures no tool result of the turn grounds: the agent looks
/// them up and answers again; the platform shows nothing of this answer).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum OutputDecision {
    Allow,
    Block,
    NeedsLookup,
}

impl OutputDecision {
    pub const ALL: [OutputDecision; 3] = [
        OutputDecision::Allow,
        OutputDecision::Block,
        OutputDecision::NeedsLookup,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            OutputDecision::Allow => "allow",
            OutputDecision::Block => "block",
            OutputDecision::NeedsLookup => "needs_lookup",
        }
    }

    /// Whether the answer may go out as it is.
    pub fn allows(self) -> bool {
        self == OutputDecision::Allow
    }
}

/// Why the output screen decided as it did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum OutputReason {
    /// Every value the product lists was masked; nothing blocks.
    Passed,
    /// A kind the product says must never go out was found (`blocked_kinds`).
    BlockedKind,
    /// The masking itself crashed: the answer is blocked and nothing more of it leaves.
    CheckFailed,
    /// A streamed answer's client sent nothing within the product's idle deadline: the answer
    /// is incomplete, so it is blocked (fail closed) after what was already masked.
    StreamIdle,
    /// A streamed answer lasted longer than the product allows: blocked likewise.
    StreamTooLong,
    /// The lookup check ran: the answer states no figure that needs one (none, or only what
    /// the person typed and the product's constants).
    NoFigures,
    /// The lookup check ran: every figure is in the turn's tool results.
    Grounded,
    /// The turn called no tool; the model said clearly that no number is a fact about the
    /// customer's records: kept.
    LookupKept,
    /// Figures are ungrounded, but the product only flags them (`on_ungrounded = "flag"`).
    LookupFlagged,
    /// `needs_lookup`: the turn's tools were called and these figures are in none of their
    /// results.
    UngroundedFigures,
    /// `needs_lookup`: no tool was called, and the model said a number is a fact about the
    /// customer's records.
    LookupModelYes,
    /// `needs_lookup`: no tool was called, and the model's answer was not a clear yes or no.
    LookupModelUnparsable,
    /// `needs_lookup`: no tool was called, and the model did not answer (timeout, error).
    LookupModelUnavailable,
    /// `needs_lookup`: no tool was called, and there is no model to ask (fail closed).
    LookupNoModel,
    /// `needs_lookup`: no tool was called, and the turn already asked the model about another
    /// answer: it is asked once per turn, never again.
    LookupAlreadyAsked,
    /// `needs_lookup`: the turn's state (stored evidence, the ask-once memory) did not answer.
    LookupTurnUnavailable,
}

impl OutputReason {
    pub fn as_str(self) -> &'static str {
        match self {
            OutputReason::Passed => "passed",
            OutputReason::BlockedKind => "blocked_kind",
            OutputReason::CheckFailed => "check_failed",
            OutputReason::StreamIdle => "stream_idle",
            OutputReason::StreamTooLong => "stream_too_long",
            OutputReason::NoFigures => "no_figures",
            OutputReason::Grounded => "grounded",
            OutputReason::LookupKept => "lookup_kept",
            OutputReason::LookupFlagged => "lookup_flagged",
            OutputReason::UngroundedFigures => "ungrounded_figures",
            OutputReason::LookupModelYes => "lookup_model_yes",
            OutputReason::LookupModelUnparsable => "lookup_model_unparsable",
            OutputReason::LookupModelUnavailable => "lookup_model_unavailable",
            OutputReason::LookupNoModel => "lookup_no_model",
            OutputReason::LookupAlreadyAsked => "lookup_already_asked",
            OutputReason::LookupTurnUnavailable => "lookup_turn_unavailable",
        }
    }

    /// The lookup check's reasons, for the metric's series.
    pub const LOOKUP: [OutputReason; 11] = [
        OutputReason::NoFigures,
        OutputReason::Grounded,
        OutputReason::LookupKept,
        OutputReason::LookupFlagged,
        OutputReason::UngroundedFigures,
        OutputReason::LookupModelYes,
        OutputReason::LookupModelUnparsable,
        OutputReason::LookupModelUnavailable,
        OutputReason::LookupNoModel,
        OutputReason::LookupAlreadyAsked,
        OutputReason::LookupTurnUnavailable,
    ];

    pub fn decision(self) -> OutputDecision {
        match self {
            OutputReason::Passed
            | OutputReason::NoFigures
            | OutputReason::Grounded
            | OutputReason::LookupKept
            | OutputReason::LookupFlagged => OutputDecision::Allow,
            OutputReason::BlockedKind
            | OutputReason::CheckFailed
            | OutputReason::StreamIdle
            | OutputReason::StreamTooLong => OutputDecision::Block,
            OutputReason::UngroundedFigures
            | OutputReason::LookupModelYes
            | OutputReason::LookupModelUnparsable
            | OutputReason::LookupModelUnavailable
            | OutputReason::LookupNoModel
            | OutputReason::LookupAlreadyAsked
            | OutputReason::LookupTurnUnavailable => OutputDecision::NeedsLookup,
        }
    }

    /// The wire carries `reason` only when `decision` and `blocked_kinds` do not already say
    /// it: for `check_failed` and a stream cut by its deadlines (the answer's shape is a
    /// contract that predates the enum).
    fn implied(&self) -> bool {
        matches!(self, OutputReason::Passed | OutputReason::BlockedKind)
    }
}

/// The output screen's checks, as its trace names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OutputStep {
    /// A whole answer masked at once.
    Mask,
    /// A streamed answer masked chunk by chunk (one line for the whole stream).
    Stream,
    /// The lookup check of the answer's figures (and the model question, when asked).
    Lookup,
}

/// One line of the output screen's trace: for the audit log, not on the wire.
#[derive(Debug, Clone, Serialize)]
pub struct OutputTrace {
    pub step: OutputStep,
    pub outcome: Outcome,
    pub micros: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl TraceLine for OutputTrace {
    type Step = OutputStep;
    fn new(step: OutputStep, outcome: Outcome, micros: u64, detail: Option<String>) -> Self {
        OutputTrace {
            step,
            outcome,
            micros,
            detail,
        }
    }
}

/// What `POST /v1/screen-output` answers (and the last line of the stream, with `done`).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct OutputVerdict {
    /// `allow`; `block` when a kind in the product's `output.block` was found (or the
    /// masking crashed); `needs_lookup` when the lookup check ran and a figure is ungrounded.
    /// Always `reason.decision()`.
    pub decision: OutputDecision,
    /// The answer with every value masked (absent on the stream's last line: it was streamed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Kind and char offsets in the masked text of every value found; never the values.
    pub findings: Vec<Finding>,
    /// How many of each kind.
    pub counts: BTreeMap<Kind, usize>,
    /// The kinds that blocked the answer.
    pub blocked_kinds: Vec<Kind>,
    pub config_rev: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// On the wire except `passed` and `blocked_kind` (they follow from the rest): every
    /// lookup decision carries its reason.
    #[serde(skip_serializing_if = "OutputReason::implied")]
    pub reason: OutputReason,
    /// The lookup check's ungrounded figures, canonical (`5000`, `12.5%`); never the answer.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub figures: Vec<String>,
    /// For the agent, with `needs_lookup`: what to look up before answering again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The masking's trace, timings included: kept for the audit log.
    #[serde(skip)]
    pub trace: Vec<OutputTrace>,
}

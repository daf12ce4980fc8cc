//! The output screen's verdict: the masked answer, what was found (kinds and places, never
//! values), the decision and its reason, and a trace of the masking.

use crate::redact::{Finding, Kind};
use crate::screens::TraceLine;
use crate::verdict::{Decision, Outcome};
use serde::Serialize;
use std::collections::BTreeMap;

/// Why the output screen decided as it did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OutputReason {
    /// Every value the product lists was masked; nothing blocks.
    Passed,
    /// A kind the product says must never go out was found (`blocked_kinds`).
    BlockedKind,
    /// The masking itself crashed: the answer is blocked and nothing more of it leaves.
    CheckFailed,
}

impl OutputReason {
    pub fn as_str(self) -> &'static str {
        match self {
            OutputReason::Passed => "passed",
            OutputReason::BlockedKind => "blocked_kind",
            OutputReason::CheckFailed => "check_failed",
        }
    }

    pub fn decision(self) -> Decision {
        match self {
            OutputReason::Passed => Decision::Allow,
            OutputReason::BlockedKind | OutputReason::CheckFailed => Decision::Block,
        }
    }

    /// The wire carries `reason` only when `decision` and `blocked_kinds` do not already say
    /// it: for `check_failed` (the answer's shape is a contract that predates the enum).
    fn implied(&self) -> bool {
        *self != OutputReason::CheckFailed
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
#[derive(Debug, Clone, Serialize)]
pub struct OutputVerdict {
    /// `allow`, or `block` when a kind in the product's `output.block` was found (or the
    /// masking crashed): always `reason.decision()`.
    pub decision: Decision,
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
    /// On the wire only as `check_failed` (see [`OutputReason`]).
    #[serde(skip_serializing_if = "OutputReason::implied")]
    pub reason: OutputReason,
    /// The masking's trace, timings included: kept for the audit log.
    #[serde(skip)]
    pub trace: Vec<OutputTrace>,
}

//! The gate's verdict: one decision per proposed call, each with a stable reason code and a
//! message the model can act on, and a trace of the gate's two steps.

use crate::screens::caller::Caller;
use crate::screens::TraceLine;
use crate::verdict::Outcome;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

/// What happens to a call: the gate's decision, which follows from its reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[schema(as = GateDecision)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    Run,
    Skip,
    NeedsApproval,
    Reuse,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Run => "run",
            Decision::Skip => "skip",
            Decision::NeedsApproval => "needs_approval",
            Decision::Reuse => "reuse",
        }
    }
}

/// Stable reason codes of the gate's decisions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum GateReason {
    /// Allowed, within every limit.
    Allowed,
    /// The tool cannot be undone: a person approves every call.
    Irreversible,
    /// The amount is above the tool's approval threshold.
    OverApprovalThreshold,
    /// With the earlier calls of an amount window, the total goes above its approval
    /// threshold (transfers split to stay under the per-call one).
    AmountWindow,
    /// Past the per-round cap.
    RoundCap,
    /// No id or no tool name, or an id used twice in the round.
    InvalidCall,
    /// The call names its tool (or its arguments) more than once, or in more than one shape:
    /// which one an executor reads is not the gate's to guess.
    AmbiguousCall,
    /// Arguments that are not an object, or a limited argument missing or unreadable.
    InvalidArguments,
    /// The tool is not on the product's allowlist.
    ToolNotAllowed,
    /// An argument over the tool's limit.
    OverLimit,
    /// A velocity window is full.
    Velocity,
    /// Identical to an earlier call of this turn.
    DuplicateCall,
    /// The gate's state could not be read or written: fail closed.
    GateUnavailable,
    /// A check of the gate itself crashed: fail closed.
    CheckFailed,
    /// A record argument names a record outside the caller's records or scope, or the tool
    /// is not for the caller's role.
    NotEntitled,
    /// The product checks entitlement and the request carried no `caller`: fail closed.
    CallerRequired,
    /// The tool failed repeatedly in its health window (`[tool_gate] health`): carry on
    /// without it.
    ToolUnavailable,
}

impl GateReason {
    pub fn as_str(self) -> &'static str {
        match self {
            GateReason::Allowed => "allowed",
            GateReason::Irreversible => "irreversible",
            GateReason::OverApprovalThreshold => "over_approval_threshold",
            GateReason::AmountWindow => "amount_window",
            GateReason::RoundCap => "round_cap",
            GateReason::InvalidCall => "invalid_call",
            GateReason::AmbiguousCall => "ambiguous_call",
            GateReason::InvalidArguments => "invalid_arguments",
            GateReason::ToolNotAllowed => "tool_not_allowed",
            GateReason::OverLimit => "over_limit",
            GateReason::Velocity => "velocity",
            GateReason::DuplicateCall => "duplicate_call",
            GateReason::GateUnavailable => "gate_unavailable",
            GateReason::CheckFailed => "check_failed",
            GateReason::NotEntitled => "not_entitled",
            GateReason::CallerRequired => "caller_required",
            GateReason::ToolUnavailable => "tool_unavailable",
        }
    }

    /// The decision a reason makes: the one place it is written.
    pub fn decision(self) -> Decision {
        use GateReason as R;
        match self {
            R::Allowed => Decision::Run,
            R::Irreversible | R::OverApprovalThreshold | R::AmountWindow => Decision::NeedsApproval,
            R::DuplicateCall => Decision::Reuse,
            R::RoundCap
            | R::InvalidCall
            | R::AmbiguousCall
            | R::InvalidArguments
            | R::ToolNotAllowed
            | R::OverLimit
            | R::Velocity
            | R::GateUnavailable
            | R::CheckFailed
            | R::NotEntitled
            | R::CallerRequired
            | R::ToolUnavailable => Decision::Skip,
        }
    }
}

/// One proposed call as the wire gave it ([`super::wire::read_call`] reads the accepted
/// shapes).
#[derive(Debug, Clone)]
pub struct ProposedCall {
    pub id: Option<String>,
    pub tool: Option<String>,
    /// The arguments, or why they could not be read.
    pub args: Result<Value, String>,
    /// Why the call cannot be read as one call (its tool named twice, two shapes at once):
    /// such a call is skipped as `ambiguous_call`.
    pub ambiguity: Option<String>,
}

impl ProposedCall {
    /// A call read in one shape.
    pub fn new(id: Option<String>, tool: Option<String>, args: Result<Value, String>) -> Self {
        ProposedCall {
            id,
            tool,
            args,
            ambiguity: None,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Round {
    pub conversation: String,
    pub turn: String,
    pub calls: Vec<ProposedCall>,
    /// Whose turn it is (the platform's session): what entitlement checks record arguments
    /// against.
    pub caller: Option<Caller>,
}

/// One call's decision. `decision` always follows from `reason` (`CallDecision::set`).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CallDecision {
    pub index: usize,
    pub id: Option<String>,
    pub tool: Option<String>,
    pub decision: Decision,
    pub reason: GateReason,
    /// What the model can do about it (skips and approvals).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// For `reuse`: the id whose result stands for this call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reuse_of: Option<String>,
    /// For `velocity` and `amount_window`: the rule's id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// The argument names with each canonical value: for the decision log, which writes only
    /// keyed hashes of them. Never serialised.
    #[serde(skip)]
    pub arg_values: Vec<(String, String)>,
}

impl CallDecision {
    /// A call not decided yet (skipped as invalid until a check says otherwise).
    pub fn new(index: usize, call: &ProposedCall, arg_values: Vec<(String, String)>) -> Self {
        let mut d = CallDecision {
            index,
            id: call.id.clone(),
            tool: call.tool.clone(),
            decision: Decision::Skip,
            reason: GateReason::InvalidCall,
            message: None,
            reuse_of: None,
            rule: None,
            arg_values,
        };
        d.set(GateReason::InvalidCall, None);
        d
    }

    /// Decide the call: the reason, and the decision it makes.
    pub fn set(&mut self, reason: GateReason, message: Option<String>) {
        self.reason = reason;
        self.decision = reason.decision();
        self.message = message;
    }
}

/// The gate's checks, as its trace names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum GateStep {
    /// The static checks of every call: cap, shape, allowlist, limits, approval.
    Rules,
    /// The turn's state: dedupe and velocity, one atomic step per round.
    State,
}

/// One line of the gate's trace (`{step, micros, detail}` on the wire).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct GateTrace {
    pub step: GateStep,
    /// Kept for the decision log and the metrics; not on the wire.
    #[serde(skip)]
    pub outcome: Outcome,
    pub micros: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl TraceLine for GateTrace {
    type Step = GateStep;
    fn new(step: GateStep, outcome: Outcome, micros: u64, detail: Option<String>) -> Self {
        GateTrace {
            step,
            outcome,
            micros,
            detail,
        }
    }
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct GateVerdict {
    pub product: String,
    pub conversation: String,
    pub turn: String,
    pub decisions: Vec<CallDecision>,
    /// The product's tools that are failing right now (`[tool_gate] health`): calls to them
    /// are skipped as `tool_unavailable`. Always present; empty when every tool is healthy.
    /// Every tool of the product when the gate's store cannot be read (fail closed).
    pub unavailable_tools: Vec<String>,
    pub config_rev: String,
    pub trace: Vec<GateTrace>,
    /// The caller's id, for the decision log (written as a keyed hash). Never serialised.
    #[serde(skip)]
    pub caller: Option<String>,
    /// The health changes this round saw (for the metrics). Never serialised.
    #[serde(skip)]
    pub health_changes: Vec<(String, crate::turn::health::HealthChange)>,
}

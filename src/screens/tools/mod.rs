//! The tool-call gate: while the agent works, the model proposes tool calls and the gate decides
//! which run. Policy in code, outside the model's reach: a successful injection can make the
//! model propose anything, but only what the product's tool policy allows runs.
//!
//! ```text
//! body ─► wire (duplicate keys, one shape per call) ─► rules (cap, shape, allowlist, argument
//!         names and types, limits, approval) ─► state (dedupe, velocity, amount windows) ─► decisions
//!         the whole body                           pure, per call       one atomic step per round
//! ```
//!
//! Every call gets a decision, in order: `run`, `skip` (with a reason code and a message the
//! model can act on), `needs_approval` (a person decides), or `reuse` (an identical call of the
//! same turn or batch; its id is given). Never a silent drop. When the state cannot be read the
//! gate fails closed: every call that needed it is skipped as `gate_unavailable`.

pub mod args;
pub mod canonical;
pub mod policy;
mod rules;
pub mod store;
pub mod wire;

use policy::ToolPolicy;
use rules::{
    arg_values, check, hash, key, nonce, velocity_message, window_approval_message, Site, Tentative,
};
use serde::Serialize;
use serde_json::Value;
use std::collections::HashMap;
use std::time::{Duration, Instant};
use store::{MemoryStore, Pending, RedisStore, Settled, StateRound, StoreError};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
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
        }
    }
}

/// One proposed call as the wire gave it ([`wire::read_call`] reads the accepted shapes).
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
}

#[derive(Debug, Clone, Serialize)]
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
    /// For `velocity`: the rule's id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// The argument names with each canonical value: for the decision log, which writes only
    /// keyed hashes of them. Never serialised.
    #[serde(skip)]
    pub arg_values: Vec<(String, String)>,
}

#[derive(Debug, Clone, Serialize)]
pub struct GateTrace {
    pub step: &'static str,
    pub micros: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct GateVerdict {
    pub product: String,
    pub conversation: String,
    pub turn: String,
    pub decisions: Vec<CallDecision>,
    pub config_rev: String,
    pub trace: Vec<GateTrace>,
}

/// The gate's state stores: the in-process one always, Redis when `GUARD_REDIS_URL` is set.
pub struct Stores {
    pub memory: MemoryStore,
    pub redis: Option<RedisStore>,
}

/// Keys the in-process store holds at most (windows and turns): about 100 bytes each plus their
/// entries, whose number each window's `max` bounds.
pub const MEMORY_STORE_KEYS: usize = 200_000;

impl Stores {
    pub fn from_env() -> Result<Self, String> {
        match std::env::var("GUARD_REDIS_URL") {
            Ok(url) if !url.trim().is_empty() => Self::with_redis(url.trim()),
            _ => Ok(Stores {
                memory: MemoryStore::new(MEMORY_STORE_KEYS),
                redis: None,
            }),
        }
    }

    pub fn with_redis(url: &str) -> Result<Self, String> {
        Ok(Stores {
            memory: MemoryStore::new(MEMORY_STORE_KEYS),
            redis: Some(RedisStore::new(url).map_err(|e| e.to_string())?),
        })
    }

    async fn apply(
        &self,
        policy: &ToolPolicy,
        round: &StateRound,
        now_ms: u64,
    ) -> Result<store::RoundOutcome, StoreError> {
        match policy.store {
            policy::StoreKind::Memory => self.memory.apply(round, now_ms),
            policy::StoreKind::Redis => match &self.redis {
                Some(r) => {
                    r.apply(round, Duration::from_millis(policy.store_timeout_ms))
                        .await
                }
                None => Err(StoreError::NotConfigured),
            },
        }
    }
}

/// Milliseconds of the wall clock (the in-process store's windows).
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// A tool call's verdict for one round; `now_ms` is the clock of the in-process store (Redis
/// uses its own).
pub async fn decide(
    product: &str,
    config_rev: &str,
    policy: &ToolPolicy,
    stores: &Stores,
    round: Round,
    now_ms: u64,
) -> GateVerdict {
    let started = Instant::now();
    let nonce = nonce();
    let conversation = hash(&round.conversation);
    let mut decisions = Vec::with_capacity(round.calls.len());
    let mut pending: Vec<(usize, Pending, Tentative)> = Vec::new();
    let mut ids: HashMap<String, usize> = HashMap::new();
    for (index, call) in round.calls.iter().enumerate() {
        let mut d = CallDecision {
            index,
            id: call.id.clone(),
            tool: call.tool.clone(),
            decision: Decision::Skip,
            reason: GateReason::InvalidCall,
            message: None,
            reuse_of: None,
            rule: None,
            arg_values: arg_values(&call.args),
        };
        let at = Site {
            product,
            conversation: &conversation,
            nonce: &nonce,
            index,
        };
        match check(policy, call, &at, &mut ids) {
            Err((reason, message)) => {
                d.reason = reason;
                d.message = Some(message);
            }
            Ok((tentative, p)) => pending.push((decisions.len(), p, tentative)),
        }
        decisions.push(d);
    }
    let rules_micros = started.elapsed().as_micros() as u64;
    let mut trace = vec![GateTrace {
        step: "rules",
        micros: rules_micros,
        detail: None,
    }];
    if !pending.is_empty() {
        let state_started = Instant::now();
        let state_round = StateRound {
            turn_key: key(
                product,
                &["turn", &hash(&round.conversation), &hash(&round.turn)],
            ),
            dedupe_ttl_ms: policy.dedupe_ttl_ms,
            calls: pending.iter().map(|(_, p, _)| p.clone()).collect(),
        };
        let settled = stores.apply(policy, &state_round, now_ms).await;
        let detail = match &settled {
            Ok(_) => policy.store.as_str().to_string(),
            Err(e) => format!("{}: {e}", policy.store.as_str()),
        };
        trace.push(GateTrace {
            step: "state",
            micros: state_started.elapsed().as_micros() as u64,
            detail: Some(detail),
        });
        match settled {
            Ok(settled) => {
                for ((at, _, tentative), s) in pending.iter().zip(settled) {
                    let d = &mut decisions[*at];
                    match s {
                        Settled::Fresh => {
                            d.decision = tentative.decision;
                            d.reason = tentative.reason;
                            d.message = tentative.message.clone();
                        }
                        // An amount window's total went above its approval threshold: a call
                        // that would have run needs a person; one that already did keeps its
                        // own reason.
                        Settled::Approval(rule) => {
                            d.decision = Decision::NeedsApproval;
                            d.reason = tentative.reason;
                            d.message = tentative.message.clone();
                            if tentative.decision == Decision::Run {
                                let v = policy.velocity.get(rule);
                                d.reason = GateReason::AmountWindow;
                                d.rule = v.map(|v| v.id.clone());
                                d.message = Some(match v {
                                    Some(v) => window_approval_message(v),
                                    None => "a person must approve it".into(),
                                });
                            }
                        }
                        Settled::Reuse(id) => {
                            d.decision = Decision::Reuse;
                            d.reason = GateReason::DuplicateCall;
                            d.message = Some(format!(
                                "identical to call `{id}` of this turn: use its result"
                            ));
                            d.reuse_of = Some(id);
                        }
                        Settled::Velocity(rule) => {
                            let v = policy.velocity.get(rule);
                            d.decision = Decision::Skip;
                            d.reason = GateReason::Velocity;
                            d.rule = v.map(|v| v.id.clone());
                            d.message = Some(match v {
                                Some(v) => velocity_message(v, d.tool.as_deref().unwrap_or("")),
                                None => "too many calls for now: wait, or ask a person".into(),
                            });
                        }
                    }
                }
            }
            Err(_) => {
                for (at, _, _) in &pending {
                    let d = &mut decisions[*at];
                    d.decision = Decision::Skip;
                    d.reason = GateReason::GateUnavailable;
                    d.message = Some(
                        "the gate cannot check this call's limits right now: try again later"
                            .into(),
                    );
                }
            }
        }
    }
    GateVerdict {
        product: product.to_string(),
        conversation: round.conversation,
        turn: round.turn,
        decisions,
        config_rev: config_rev.to_string(),
        trace,
    }
}

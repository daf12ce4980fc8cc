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
//! gate fails closed: every call that needed it is skipped as `gate_unavailable`; when a check
//! of the gate itself crashes, as `check_failed`. Both steps run through the screens' shared
//! [`step`].

pub mod args;
pub mod canonical;
mod keys;
pub mod policy;
pub mod records;
mod rules;
pub mod store;
pub mod turn;
pub mod verdict;
pub mod wire;

pub use verdict::{CallDecision, Decision, GateReason, GateStep, GateTrace, GateVerdict};
pub use verdict::{ProposedCall, Round};
// The turn's state beyond its calls (the contract of issue 28): `Stores::evidence`,
// `add_evidence`, `ask_once`, `settle_ask`, `keep_results`.
pub use turn::{AskOnce, KeptResults, ResultsBatch};

use crate::product::Product;
use crate::screens::records::Records;
use crate::screens::{step, step_sync, Failure, Trace};
use crate::verdict::{FailMode, Outcome};
use policy::ToolPolicy;
use rules::{
    arg_values, check, hash, key, nonce, velocity_message, window_approval_message, Entitled, Site,
    Tentative,
};
use std::collections::HashMap;
use std::time::{Duration, Instant};
use store::{HealthRead, HealthState, MemoryStore, Pending, RedisStore, Settled, StateRound};
use store::{RoundOutcome, StoreError};

/// The gate's state stores: the in-process one always, Redis when `GUARD_REDIS_URL` is set.
pub struct Stores {
    pub memory: MemoryStore,
    pub redis: Option<RedisStore>,
}

/// Keys the in-process store holds at most (windows and turns): about 100 bytes each plus their
/// entries, whose number each window's `max` bounds.
pub const MEMORY_STORE_KEYS: usize = 200_000;

impl Stores {
    /// The in-process store, and Redis at `redis_url` (`GUARD_REDIS_URL`) when there is one.
    pub fn new(redis_url: Option<&str>) -> Result<Self, String> {
        match redis_url {
            Some(url) => Self::with_redis(url),
            None => Ok(Self::in_process(MEMORY_STORE_KEYS)),
        }
    }

    /// The in-process store alone, holding at most `max_keys` keys (an eval case, a test).
    pub fn in_process(max_keys: usize) -> Self {
        Stores {
            memory: MemoryStore::new(max_keys),
            redis: None,
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
    ) -> Result<RoundOutcome, StoreError> {
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

/// The gate of `POST /v1/tool-calls`: one round decided, then recorded (metrics and the
/// decision log).
pub async fn screen(
    product: &Product,
    stores: &Stores,
    round: Round,
    records: &Records,
) -> GateVerdict {
    let started = Instant::now();
    let p = product;
    let verdict = decide(&p.name, &p.config_rev, &p.tools, stores, round, now_ms()).await;
    let elapsed = started.elapsed();
    records
        .tools
        .record(&verdict, &p.tools, elapsed.as_secs_f64());
    records::audit_round(&records.audit, &verdict, elapsed.as_micros() as u64);
    verdict
}

/// A call that passed the rules, waiting for the state: where its decision is, what the state
/// is asked, and what the call will be if the state lets it go ahead.
type Waiting = (usize, Pending, Tentative);

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
    let mut trace = Trace::with_capacity(2);
    let (mut decisions, pending) = apply_rules(product, policy, &round, &mut trace);
    let health = health_read(product, policy);
    let mut health_state = HealthState::default();
    // The state is read when a call waits for it, or for the tools' health (every answer
    // lists the unavailable ones).
    if !pending.is_empty() || health.is_some() {
        let settled = read_state(
            product, policy, stores, &round, &pending, health, now_ms, &mut trace,
        )
        .await;
        health_state = match &settled {
            Some(outcome) => outcome.health.clone(),
            // Fail closed: with no state, no tool is known to be healthy.
            None => HealthState {
                unavailable: policy.tools.keys().cloned().collect(),
                changes: Vec::new(),
            },
        };
        apply_state(policy, &pending, settled.map(|o| o.calls), &mut decisions);
    }
    GateVerdict {
        product: product.to_string(),
        caller: round.caller.map(|c| c.id),
        conversation: round.conversation,
        turn: round.turn,
        decisions,
        unavailable_tools: health_state.unavailable,
        config_rev: config_rev.to_string(),
        trace: trace.into_lines(),
        health_changes: health_state.changes,
    }
}

/// What a step reads of the product's tool health: every tool of the allowlist (`None` when
/// health is off or there are no tools).
pub(crate) fn health_read(product: &str, policy: &ToolPolicy) -> Option<HealthRead> {
    if !policy.health.enabled() || policy.tools.is_empty() {
        return None;
    }
    Some(HealthRead {
        tools: policy
            .tools
            .iter()
            .map(|(name, t)| {
                let k = key(product, &["health", &t.health_id]);
                (name.clone(), t.health_id.clone(), k)
            })
            .collect(),
        down_key: key(product, &["health", "down"]),
        settings: policy.health,
    })
}

/// The message of a call to a tool that is failing.
pub(crate) fn unavailable_message(tool: &str) -> String {
    format!(
        "the tool `{tool}` is failing right now: carry on without it, or tell the customer to try later"
    )
}

/// The rules step: every call's static checks, in order. A crash of the rules fails the round
/// closed: every call is skipped as `check_failed`.
fn apply_rules(
    product: &str,
    policy: &ToolPolicy,
    round: &Round,
    trace: &mut Trace<GateTrace>,
) -> (Vec<CallDecision>, Vec<Waiting>) {
    let ran = step_sync(|| Ok::<_, ()>(rules_of_round(product, policy, round)));
    match ran.result {
        Ok(decided) => {
            trace.record(GateStep::Rules, Outcome::Pass, ran.elapsed, None);
            decided
        }
        Err(_) => {
            trace.failed(
                GateStep::Rules,
                FailMode::Closed,
                ran.elapsed,
                "check panicked".into(),
            );
            let failed = round
                .calls
                .iter()
                .enumerate()
                .map(|(index, call)| {
                    let mut d = CallDecision::new(index, call, Vec::new());
                    let message = "the gate cannot check this call right now: try again later";
                    d.set(GateReason::CheckFailed, Some(message.into()));
                    d
                })
                .collect();
            (failed, Vec::new())
        }
    }
}

/// Each call's decision by the rules, and the calls only the state can still stop.
fn rules_of_round(
    product: &str,
    policy: &ToolPolicy,
    round: &Round,
) -> (Vec<CallDecision>, Vec<Waiting>) {
    let nonce = nonce();
    let conversation = hash(&round.conversation);
    let entitled = round.caller.as_ref().map(|c| Entitled::new(policy, c));
    let mut decisions = Vec::with_capacity(round.calls.len());
    let mut pending = Vec::new();
    let mut ids: HashMap<String, usize> = HashMap::new();
    for (index, call) in round.calls.iter().enumerate() {
        let mut d = CallDecision::new(index, call, arg_values(&call.args));
        let at = Site {
            product,
            conversation: &conversation,
            nonce,
            index,
            caller: entitled.as_ref(),
        };
        match check(policy, call, &at, &mut ids) {
            Err((reason, message)) => d.set(reason, Some(message)),
            Ok((tentative, p)) => pending.push((decisions.len(), p, tentative)),
        }
        decisions.push(d);
    }
    (decisions, pending)
}

/// The state step: one atomic round on the product's store. `None` when the store could not
/// answer (or the step crashed): the calls waiting for it fail closed.
#[allow(clippy::too_many_arguments)]
async fn read_state(
    product: &str,
    policy: &ToolPolicy,
    stores: &Stores,
    round: &Round,
    pending: &[Waiting],
    health: Option<HealthRead>,
    now_ms: u64,
    trace: &mut Trace<GateTrace>,
) -> Option<RoundOutcome> {
    let state_round = StateRound {
        turn_key: turn_key(product, &round.conversation, &round.turn),
        dedupe_ttl_ms: policy.dedupe_ttl_ms,
        calls: pending.iter().map(|(_, p, _)| p.clone()).collect(),
        health,
    };
    // Redis applies its own deadline (`store_timeout_ms`); the memory store does not wait.
    let ran = step(None, stores.apply(policy, &state_round, now_ms)).await;
    let store = policy.store.as_str();
    match ran.result {
        Ok(settled) => {
            trace.record(
                GateStep::State,
                Outcome::Pass,
                ran.elapsed,
                Some(store.to_string()),
            );
            Some(settled)
        }
        Err(failure) => {
            let why = match failure {
                Failure::Error(e) => e.to_string(),
                Failure::TimedOut => "timed out".to_string(),
                Failure::Panicked => "check panicked".to_string(),
            };
            trace.failed(
                GateStep::State,
                FailMode::Closed,
                ran.elapsed,
                format!("{store}: {why}"),
            );
            None
        }
    }
}

/// The key of a turn's record of its calls (call hash → id).
pub(crate) fn turn_key(product: &str, conversation: &str, turn: &str) -> String {
    key(product, &["turn", &hash(conversation), &hash(turn)])
}

/// What the state said, onto each waiting call's decision.
fn apply_state(
    policy: &ToolPolicy,
    pending: &[Waiting],
    settled: Option<Vec<Settled>>,
    decisions: &mut [CallDecision],
) {
    let Some(settled) = settled else {
        for (at, _, _) in pending {
            let message = "the gate cannot check this call's limits right now: try again later";
            decisions[*at].set(GateReason::GateUnavailable, Some(message.into()));
        }
        return;
    };
    for ((at, _, tentative), s) in pending.iter().zip(settled) {
        let d = &mut decisions[*at];
        match s {
            Settled::Fresh => d.set(tentative.reason, tentative.message.clone()),
            // An amount window's total went above its approval threshold: a call that would
            // have run needs a person; one that needed one already keeps its own reason.
            Settled::Approval(rule) => match policy.velocity.get(rule) {
                Some(v) if tentative.reason.decision() == Decision::Run => {
                    d.set(GateReason::AmountWindow, Some(window_approval_message(v)));
                    d.rule = Some(v.id.clone());
                }
                Some(_) => d.set(tentative.reason, tentative.message.clone()),
                None => d.set(
                    GateReason::AmountWindow,
                    Some("a person must approve it".into()),
                ),
            },
            Settled::Reuse(id) => {
                let message = format!("identical to call `{id}` of this turn: use its result");
                d.set(GateReason::DuplicateCall, Some(message));
                d.reuse_of = Some(id);
            }
            Settled::Unavailable => {
                let message = unavailable_message(d.tool.as_deref().unwrap_or(""));
                d.set(GateReason::ToolUnavailable, Some(message));
            }
            Settled::Velocity(rule) => {
                let v = policy.velocity.get(rule);
                let message = match v {
                    Some(v) => velocity_message(v, d.tool.as_deref().unwrap_or("")),
                    None => "too many calls for now: wait, or ask a person".into(),
                };
                d.set(GateReason::Velocity, Some(message));
                d.rule = v.map(|v| v.id.clone());
            }
        }
    }
}

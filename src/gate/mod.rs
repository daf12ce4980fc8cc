//! The tool-call gate: while the agent works, the model proposes tool calls and the gate decides
//! which run. Policy in code, outside the model's reach: a successful injection can make the
//! model propose anything, but only what the product's tool policy allows runs.
//!
//! ```text
//! proposed calls ─► rules (cap, shape, allowlist, limits, approval) ─► state (dedupe, velocity) ─► decisions
//!                   pure, per call                                   one atomic step per round
//! ```
//!
//! Every call gets a decision, in order: `run`, `skip` (with a reason code and a message the
//! model can act on), `needs_approval` (a person decides), or `reuse` (an identical call of the
//! same turn or batch; its id is given). Never a silent drop. When the state cannot be read the
//! gate fails closed: every call that needed it is skipped as `gate_unavailable`.

pub mod canonical;
pub mod policy;
pub mod store;

use policy::{Counted, Scope, Tool, ToolPolicy};
use serde::Serialize;
use serde_json::Value;
use std::collections::HashMap;
use std::time::{Duration, Instant};
use store::{CounterOp, MemoryStore, Pending, RedisStore, Settled, StateRound, StoreError};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    Run,
    Skip,
    NeedsApproval,
    Reuse,
}

impl Decision {
    pub const ALL: [Decision; 4] = [
        Decision::Run,
        Decision::Skip,
        Decision::NeedsApproval,
        Decision::Reuse,
    ];

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
    /// Past the per-round cap.
    RoundCap,
    /// No id or no tool name, or an id used twice in the round.
    InvalidCall,
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
            GateReason::RoundCap => "round_cap",
            GateReason::InvalidCall => "invalid_call",
            GateReason::InvalidArguments => "invalid_arguments",
            GateReason::ToolNotAllowed => "tool_not_allowed",
            GateReason::OverLimit => "over_limit",
            GateReason::Velocity => "velocity",
            GateReason::DuplicateCall => "duplicate_call",
            GateReason::GateUnavailable => "gate_unavailable",
        }
    }
}

/// One proposed call as the wire gave it (the handler is tolerant about its shape).
#[derive(Debug, Clone)]
pub struct ProposedCall {
    pub id: Option<String>,
    pub tool: Option<String>,
    /// The arguments, or why they could not be read.
    pub args: Result<Value, String>,
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
    ) -> Result<Vec<Settled>, StoreError> {
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

/// What a call will be if the state lets it go ahead.
#[derive(Debug, Clone)]
struct Tentative {
    decision: Decision,
    reason: GateReason,
    message: Option<String>,
}

type Refusal = (GateReason, String);

/// Where a call stands: its product, conversation (hashed), round and position.
struct Site<'a> {
    product: &'a str,
    conversation: &'a str,
    nonce: &'a str,
    index: usize,
}

/// The static checks of one call, in order; `Ok` when only the state can still stop it.
fn check(
    policy: &ToolPolicy,
    call: &ProposedCall,
    at: &Site<'_>,
    ids: &mut HashMap<String, usize>,
) -> Result<(Tentative, Pending), Refusal> {
    let index = at.index;
    let cap = policy.max_calls_per_round;
    if index >= cap {
        return Err((
            GateReason::RoundCap,
            format!("cap of {cap} calls per round reached: narrow the request"),
        ));
    }
    let id = match call.id.as_deref() {
        Some(id) if !id.trim().is_empty() => id,
        _ => return Err((GateReason::InvalidCall, "the call has no id".into())),
    };
    if let std::collections::hash_map::Entry::Occupied(first) = ids.entry(id.to_string()) {
        return Err((
            GateReason::InvalidCall,
            format!(
                "id `{id}` is already used by call #{} of this round",
                first.get()
            ),
        ));
    }
    ids.insert(id.to_string(), index);
    let name = match call.tool.as_deref() {
        Some(t) if !t.trim().is_empty() => t,
        _ => return Err((GateReason::InvalidCall, "the call names no tool".into())),
    };
    let args = match &call.args {
        Ok(Value::Object(map)) => map,
        Ok(Value::Null) => &serde_json::Map::new(),
        Ok(_) => {
            return Err((
                GateReason::InvalidArguments,
                "the arguments must be a JSON object".into(),
            ))
        }
        Err(why) => return Err((GateReason::InvalidArguments, why.clone())),
    };
    let Some(tool) = policy.tools.get(name) else {
        return Err((
            GateReason::ToolNotAllowed,
            format!("`{name}` is not available to this agent"),
        ));
    };
    let amount = limits(tool, args)?;
    let threshold = tool
        .amount
        .as_ref()
        .and_then(|l| l.approval_above.map(|m| (m, l.unit.as_str())));
    let over_approval = match (amount, threshold) {
        (Some(a), Some((m, unit))) if a > m => Some((a, m, unit)),
        _ => None,
    };
    let tentative = if tool.irreversible {
        Tentative {
            decision: Decision::NeedsApproval,
            reason: GateReason::Irreversible,
            message: Some(format!(
                "`{name}` cannot be undone: a person must approve it"
            )),
        }
    } else if let Some((a, m, unit)) = over_approval {
        Tentative {
            decision: Decision::NeedsApproval,
            reason: GateReason::OverApprovalThreshold,
            message: Some(format!(
                "{} {unit} is above {} {unit}: a person must approve it",
                grouped(a),
                grouped(m),
            )),
        }
    } else {
        Tentative {
            decision: Decision::Run,
            reason: GateReason::Allowed,
            message: None,
        }
    };
    let ops = counters(policy, tool, name, args, at)?;
    Ok((
        tentative,
        Pending {
            id: id.to_string(),
            hash: canonical::call_hash_of_object(name, args),
            ops,
        },
    ))
}

/// The tool's argument limits; the amount (when the tool has amount limits) for the approval
/// threshold.
fn limits(tool: &Tool, args: &serde_json::Map<String, Value>) -> Result<Option<f64>, Refusal> {
    let mut amount = None;
    if let Some(limit) = &tool.amount {
        let name = &tool.amount_arg;
        let a = args.get(name).and_then(number).ok_or_else(|| {
            (
                GateReason::InvalidArguments,
                format!("give `{name}` as a number of {}", limit.unit),
            )
        })?;
        if let Some(currency) = args.get(&tool.currency_arg) {
            let same = currency
                .as_str()
                .is_some_and(|c| c.trim().eq_ignore_ascii_case(&limit.unit));
            if !same {
                return Err((
                    GateReason::InvalidArguments,
                    format!("amounts for this tool are in {}", limit.unit),
                ));
            }
        }
        if let Some(max) = limit.max {
            if a > max {
                return Err((
                    GateReason::OverLimit,
                    format!("limit is {} {}; ask for less", grouped(max), limit.unit),
                ));
            }
        }
        amount = Some(a);
    }
    if let Some(max) = tool.max_count {
        let name = &tool.count_arg;
        let n = args
            .get(name)
            .and_then(number)
            .filter(|n| n.fract() == 0.0)
            .ok_or_else(|| {
                (
                    GateReason::InvalidArguments,
                    format!("give `{name}` as a whole number (at most {max})"),
                )
            })?;
        if n > max as f64 {
            return Err((
                GateReason::OverLimit,
                format!("at most {max} per call; narrow the request"),
            ));
        }
    }
    if let Some(max) = tool.max_range_days {
        let (from, to) = (&tool.from_arg, &tool.to_arg);
        let day = |k: &str| args.get(k).and_then(Value::as_str).and_then(days_from_iso);
        let (Some(a), Some(b)) = (day(from), day(to)) else {
            return Err((
                GateReason::InvalidArguments,
                format!("give `{from}` and `{to}` as dates (YYYY-MM-DD), at most {max} days apart"),
            ));
        };
        if b < a {
            return Err((
                GateReason::InvalidArguments,
                format!("`{to}` is before `{from}`"),
            ));
        }
        if (b - a) as u64 > max {
            return Err((
                GateReason::OverLimit,
                format!("the date range is limited to {max} days; ask for a shorter period"),
            ));
        }
    }
    Ok(amount)
}

/// The velocity windows this call is counted in.
fn counters(
    policy: &ToolPolicy,
    tool: &Tool,
    name: &str,
    args: &serde_json::Map<String, Value>,
    at: &Site<'_>,
) -> Result<Vec<CounterOp>, Refusal> {
    let mut ops = Vec::new();
    let (nonce, index, conversation) = (at.nonce, at.index, at.conversation);
    for (rule, v) in policy.velocity.iter().enumerate() {
        if v.tool.as_deref().is_some_and(|t| t != name) {
            continue;
        }
        let member = match v.count {
            Counted::Calls => format!("{nonce}.{index}"),
            Counted::Outbound if tool.outbound => format!("{nonce}.{index}"),
            Counted::Outbound => continue,
            Counted::Records => {
                let Some(arg) = &tool.record_arg else {
                    continue;
                };
                match args.get(arg) {
                    Some(Value::String(s)) if !s.trim().is_empty() => hash(s.trim()),
                    Some(Value::Number(n)) => {
                        hash(&canonical::canonical(&Value::Number(n.clone())))
                    }
                    _ => {
                        return Err((
                            GateReason::InvalidArguments,
                            format!("give `{arg}`: the record this call touches"),
                        ))
                    }
                }
            }
        };
        let tool_part = match v.count {
            Counted::Calls if v.tool.is_none() => name,
            _ => "",
        };
        let scope: &[&str] = match v.scope {
            Scope::Conversation => &["v", &v.id, "c", conversation, tool_part],
            Scope::Product => &["v", &v.id, "p", tool_part],
        };
        ops.push(CounterOp {
            key: key(at.product, scope),
            window_ms: v.window_ms,
            max: v.max,
            member,
            rule,
        });
    }
    Ok(ops)
}

fn velocity_message(v: &policy::Velocity, tool: &str) -> String {
    let what = match v.count {
        Counted::Calls => format!("`{}` calls", v.tool.as_deref().unwrap_or(tool)),
        Counted::Records => "records touched".to_string(),
        Counted::Outbound => "messages sent".to_string(),
    };
    let scope = match v.scope {
        Scope::Conversation => "this conversation",
        Scope::Product => "this service",
    };
    format!(
        "too many {what} in {scope} (at most {} per {}): wait, or ask a person",
        v.max,
        human_window(v.window_ms)
    )
}

fn human_window(ms: u64) -> String {
    let s = ms / 1000;
    match s {
        s if s % 86_400 == 0 => format!("{} day(s)", s / 86_400),
        s if s % 3_600 == 0 => format!("{} hour(s)", s / 3_600),
        s if s % 60 == 0 => format!("{} minute(s)", s / 60),
        s => format!("{s} seconds"),
    }
}

/// A number from a JSON number or a numeric string ("50,000", "৫০০০০"); negative numbers and
/// anything else are not amounts.
fn number(v: &Value) -> Option<f64> {
    let n = match v {
        Value::Number(n) => n.as_f64()?,
        Value::String(s) => {
            let t: String = s
                .trim()
                .chars()
                .filter(|c| !matches!(c, ',' | '_' | ' '))
                .map(|c| crate::redact::digit_char(c).map_or(c, |d| char::from(b'0' + d as u8)))
                .collect();
            if t.is_empty() || !t.chars().all(|c| c.is_ascii_digit() || c == '.') {
                return None;
            }
            t.parse().ok()?
        }
        _ => return None,
    };
    (n.is_finite() && n >= 0.0).then_some(n)
}

/// Days since 1970-01-01 of an ISO date (`YYYY-MM-DD`, a time after it is ignored).
fn days_from_iso(s: &str) -> Option<i64> {
    let date = s.trim().get(..10)?;
    let mut parts = date.split('-');
    let y: i64 = parts.next()?.parse().ok()?;
    let m: i64 = parts.next()?.parse().ok()?;
    let d: i64 = parts.next()?.parse().ok()?;
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || !(1..=9999).contains(&y) {
        return None;
    }
    // Howard Hinnant's days_from_civil.
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    Some(era * 146_097 + doe - 719_468)
}

/// 50000 → "50,000"; fractions keep two decimals.
fn grouped(n: f64) -> String {
    let whole = n.trunc() as u64;
    let digits = whole.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if n.fract() != 0.0 {
        out.push_str(&format!("{:.2}", n.fract())[1..]);
    }
    out
}

/// A short (96-bit) hash for keys and counted members.
fn hash(s: &str) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(&Sha256::digest(s.as_bytes())[..12])
}

/// A state key. The product is a Redis hash tag, so one product's keys share a cluster slot.
fn key(product: &str, parts: &[&str]) -> String {
    let mut k = String::with_capacity(96);
    k.push_str("guard:gate:{");
    k.push_str(product);
    k.push('}');
    for p in parts {
        k.push(':');
        k.push_str(p);
    }
    k
}

/// Unique per round across replicas: what a call is counted as in a window.
fn nonce() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let seed = format!("{t}.{}.{n}.{:p}", std::process::id(), &COUNTER);
    crate::text::sha256_hex(seed.as_bytes())[..20].to_string()
}

/// Argument names with each canonical value: the decision log's view of a call (hashed there).
fn arg_values(args: &Result<Value, String>) -> Vec<(String, String)> {
    match args {
        Ok(Value::Object(map)) => map
            .iter()
            .map(|(k, v)| (k.clone(), canonical::canonical(v)))
            .collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_count_days() {
        assert_eq!(days_from_iso("1970-01-01"), Some(0));
        assert_eq!(
            days_from_iso("2026-03-01")
                .zip(days_from_iso("2026-02-01"))
                .map(|(a, b)| a - b),
            Some(28)
        );
        assert_eq!(
            days_from_iso("2024-03-01T10:00:00Z")
                .zip(days_from_iso("2024-02-01"))
                .map(|(a, b)| a - b),
            Some(29)
        );
        assert_eq!(days_from_iso("2026-13-01"), None);
        assert_eq!(days_from_iso("yesterday"), None);
    }

    #[test]
    fn numbers_from_strings_and_bengali_digits() {
        assert_eq!(number(&Value::from("50,000")), Some(50_000.0));
        assert_eq!(number(&Value::from("৫০০০০")), Some(50_000.0));
        // Any script's digits are read: "６００００" is over a 50,000 limit like "60000".
        assert_eq!(number(&Value::from("６００００")), Some(60_000.0));
        assert_eq!(number(&Value::from("٦٠,٠٠٠")), Some(60_000.0));
        assert_eq!(number(&Value::from(-5)), None);
        assert_eq!(number(&Value::from("5e3")), None);
        assert_eq!(number(&Value::from("")), None);
        assert_eq!(grouped(50_000.0), "50,000");
        assert_eq!(grouped(1_234_567.5), "1,234,567.50");
    }
}

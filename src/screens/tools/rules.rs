//! The gate's rules: the static checks of one proposed call (cap, shape, allowlist, limits,
//! approval) and the velocity windows it is counted in, with the messages a model can act on.
//! Pure and per call; the state step (dedupe, velocity) is the store's.

use super::canonical;
use super::policy::{self, Counted, Scope, Tool, ToolPolicy};
use super::store::{CounterOp, Pending};
use super::verdict::{GateReason, ProposedCall};
use serde_json::Value;
use std::collections::HashMap;

/// What a call will be if the state lets it go ahead.
#[derive(Debug, Clone)]
pub(super) struct Tentative {
    pub(super) reason: GateReason,
    pub(super) message: Option<String>,
}

type Refusal = (GateReason, String);

/// Where a call stands: its product, conversation (hashed), round and position.
pub(super) struct Site<'a> {
    pub(super) product: &'a str,
    pub(super) conversation: &'a str,
    pub(super) nonce: &'a str,
    pub(super) index: usize,
}

/// The static checks of one call, in order; `Ok` when only the state can still stop it.
pub(super) fn check(
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
    let tentative = tentative(tool, name, amount);
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

/// What a call that passed the checks will be if the state lets it go ahead: a person approves
/// an irreversible tool and an amount above the approval threshold; the rest runs.
fn tentative(tool: &Tool, name: &str, amount: Option<f64>) -> Tentative {
    let threshold = tool
        .amount
        .as_ref()
        .and_then(|l| l.approval_above.map(|m| (m, l.unit.as_str())));
    let over_approval = match (amount, threshold) {
        (Some(a), Some((m, unit))) if a > m => Some((a, m, unit)),
        _ => None,
    };
    if tool.irreversible {
        Tentative {
            reason: GateReason::Irreversible,
            message: Some(format!(
                "`{name}` cannot be undone: a person must approve it"
            )),
        }
    } else if let Some((a, m, unit)) = over_approval {
        Tentative {
            reason: GateReason::OverApprovalThreshold,
            message: Some(format!(
                "{} {unit} is above {} {unit}: a person must approve it",
                grouped(a),
                grouped(m),
            )),
        }
    } else {
        Tentative {
            reason: GateReason::Allowed,
            message: None,
        }
    }
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

pub(super) fn velocity_message(v: &policy::Velocity, tool: &str) -> String {
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

/// Days since 1970-01-01 of an ISO date (`YYYY-MM-DD`, a time after it is ignored); `None` for
/// a date the calendar does not have (`2026-02-31`).
fn days_from_iso(s: &str) -> Option<i64> {
    use chrono::Datelike;
    let date = s.trim().get(..10)?;
    let date = chrono::NaiveDate::parse_from_str(date, "%Y-%m-%d").ok()?;
    if !(1..=9999).contains(&date.year()) {
        return None;
    }
    /// `num_days_from_ce` of 1970-01-01.
    const UNIX_EPOCH_FROM_CE: i64 = 719_163;
    Some(i64::from(date.num_days_from_ce()) - UNIX_EPOCH_FROM_CE)
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
pub(super) fn hash(s: &str) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(&Sha256::digest(s.as_bytes())[..12])
}

/// A state key. The product is a Redis hash tag, so one product's keys share a cluster slot.
pub(super) fn key(product: &str, parts: &[&str]) -> String {
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
pub(super) fn nonce() -> String {
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
pub(super) fn arg_values(args: &Result<Value, String>) -> Vec<(String, String)> {
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
        // Days the calendar does not have are not dates.
        assert_eq!(days_from_iso("2026-02-31"), None);
        assert_eq!(days_from_iso("2026-02-29"), None);
        assert_eq!(days_from_iso("2026-04-31"), None);
        assert_eq!(days_from_iso("2026-00-10"), None);
        assert_eq!(days_from_iso("2024-02-29").map(|d| d > 0), Some(true));
        assert_eq!(days_from_iso("2000-01-01"), Some(10_957));
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

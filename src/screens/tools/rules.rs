//! The gate's rules: the static checks of one proposed call (cap, shape, allowlist, argument
//! names and types, limits, approval) and the velocity windows it is counted in, with the
//! messages a model can act on. Pure and per call; the state step (dedupe, velocity) is the
//! store's.

use super::args::{self, ArgSpec, ArgType, Meaning, ReadError, RecordFormat};
use super::canonical;
pub(super) use super::keys::{hash, key};
use super::policy::{self, Counted, Scope, Tool, ToolPolicy, WindowLimit};
use super::store::{member_of, CounterOp, Member, Pending};
use super::verdict::{GateReason, ProposedCall};
use crate::screens::caller::Caller;
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};

/// What a call will be if the state lets it go ahead.
#[derive(Debug, Clone)]
pub(super) struct Tentative {
    pub(super) reason: GateReason,
    pub(super) message: Option<String>,
}

type Refusal = (GateReason, String);

/// Where a call stands: its product, conversation (hashed), round and position, and whose
/// turn it is.
pub(super) struct Site<'a> {
    pub(super) product: &'a str,
    pub(super) conversation: &'a str,
    pub(super) nonce: Member,
    pub(super) index: usize,
    pub(super) caller: Option<&'a Entitled<'a>>,
}

/// The caller's records as entitlement compares them: for each entitled kind and format the
/// tools declare, the caller's ids canonical in that format. Made once per round.
pub(crate) struct Entitled<'c> {
    caller: &'c Caller,
    sets: HashMap<(String, RecordFormat), HashSet<String>>,
}

impl<'c> Entitled<'c> {
    pub(crate) fn new(policy: &ToolPolicy, caller: &'c Caller) -> Self {
        let mut sets = HashMap::new();
        for spec in policy.tools.values().flat_map(|t| t.args.values()) {
            if let ArgType::Record(r) = &spec.ty {
                if policy.entitles(&r.kind) {
                    sets.entry((r.kind.clone(), r.format))
                        .or_insert_with(|| caller.canonical(&r.kind, r.format, &policy.read));
                }
            }
        }
        Entitled { caller, sets }
    }

    /// Whether the caller may touch record `id` (canonical) of `kind`.
    fn holds(&self, kind: &str, format: RecordFormat, id: &str) -> bool {
        self.sets
            .get(&(kind.to_string(), format))
            .is_some_and(|s| s.contains(id))
            || self.caller.scope_holds(kind, format, id)
    }
}

/// A call's arguments as the gate read them.
pub(crate) struct ReadArgs<'t> {
    /// The declared arguments by meaning, in name order; absent ones and ones given as their
    /// default are left out.
    pub(crate) meanings: Vec<(&'t str, Meaning)>,
    /// The ids of `record_arg` when it is not declared (read as record ids), if given.
    pub(crate) undeclared_records: Option<Vec<String>>,
}

impl ReadArgs<'_> {
    pub(crate) fn meaning(&self, name: &str) -> Option<&Meaning> {
        self.meanings
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, m)| m)
    }
}

/// The static checks of one call, in order; `Ok` when only the state can still stop it.
pub(super) fn check(
    policy: &ToolPolicy,
    call: &ProposedCall,
    at: &Site<'_>,
    ids: &mut HashMap<String, usize>,
) -> Result<(Tentative, Pending), Refusal> {
    let id = admit(policy, call, at.index, ids)?;
    let name = match call.tool.as_deref() {
        Some(t) if !t.trim().is_empty() => t,
        _ => return Err((GateReason::InvalidCall, "the call names no tool".into())),
    };
    let args = match &call.args {
        Ok(Value::Object(map)) => map,
        Ok(Value::Null) => &Map::new(),
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
    let read = read_args(policy, tool, args)?;
    // Whose records first: a value naming someone else's record among several is
    // `not_entitled`, whatever the count.
    entitlement(policy, tool, name, &read, at.caller)?;
    record_counts(tool, &read)?;
    let amount = limits(tool, args)?;
    let tentative = tentative(tool, name, amount);
    let ops = counters(policy, tool, name, args, &read, amount, at)?;
    let hash = if tool.args.is_empty() {
        canonical::call_hash_of_object(name, args)
    } else {
        args::call_hash_by_meaning(name, args, &tool.args, &read.meanings)
    };
    Ok((
        tentative,
        Pending {
            id: id.to_string(),
            hash,
            tool: name.to_string(),
            ops,
        },
    ))
}

/// The round's checks of a call before its tool is looked at: the round's cap, an ambiguous
/// call, an id given and not used before in the round (recorded in `ids`). The call's id.
fn admit<'c>(
    policy: &ToolPolicy,
    call: &'c ProposedCall,
    index: usize,
    ids: &mut HashMap<String, usize>,
) -> Result<&'c str, Refusal> {
    let cap = policy.max_calls_per_round;
    if index >= cap {
        return Err((
            GateReason::RoundCap,
            format!("cap of {cap} calls per round reached: narrow the request"),
        ));
    }
    if let Some(why) = &call.ambiguity {
        return Err((GateReason::AmbiguousCall, why.clone()));
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
    Ok(id)
}

/// What a call that passed the static checks will be: held for a person when the tool is
/// irreversible or the amount is above the approval threshold, allowed otherwise.
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

/// Entitlement: with the product checking record kinds, every record of those kinds the call
/// names must be the caller's (its records, or within its scope), and a tool that declares
/// roles must be for the caller's role. With no caller at all, such a call fails closed.
fn entitlement(
    policy: &ToolPolicy,
    tool: &Tool,
    name: &str,
    read: &ReadArgs<'_>,
    caller: Option<&Entitled<'_>>,
) -> Result<(), Refusal> {
    if policy.entitlement.is_empty() {
        return Ok(());
    }
    let named: Vec<(&str, &args::RecordSpec, &Meaning)> = read
        .meanings
        .iter()
        .filter_map(|(arg, m)| match tool.args.get(*arg).map(|s| &s.ty) {
            Some(ArgType::Record(r)) if policy.entitles(&r.kind) => Some((*arg, r, m)),
            _ => None,
        })
        .collect();
    if named.is_empty() && tool.roles.is_none() {
        return Ok(());
    }
    let Some(caller) = caller else {
        return Err((
            GateReason::CallerRequired,
            "this call touches a customer's records and the request names no signed-in caller: \
             the platform must send `caller` from its session"
                .into(),
        ));
    };
    if let Some(roles) = &tool.roles {
        let role = caller.caller.role.as_deref().unwrap_or("");
        if !roles.iter().any(|r| r == role) {
            return Err((
                GateReason::NotEntitled,
                format!(
                    "`{name}` is for the roles {}: the signed-in user cannot call it; ask a colleague with that role",
                    roles.join(", ")
                ),
            ));
        }
    }
    for (arg, r, m) in named {
        if m.values()
            .iter()
            .any(|id| !caller.holds(&r.kind, r.format, id))
        {
            let kind = &r.kind;
            return Err((
                GateReason::NotEntitled,
                format!(
                    "`{arg}` names a {kind} that is not the signed-in caller's: use the caller's own {kind}, \
                     or tell them this {kind} cannot be used for them"
                ),
            ));
        }
    }
    Ok(())
}

/// The call's argument names, then its declared arguments by type: one spelling per name,
/// every declared value readable, no pattern where records are named.
pub(crate) fn read_args<'t>(
    policy: &ToolPolicy,
    tool: &'t Tool,
    args: &Map<String, Value>,
) -> Result<ReadArgs<'t>, Refusal> {
    check_names(policy, tool, args)?;
    let meanings = read_declared(policy, tool, args)?;
    let undeclared_records = read_undeclared_records(policy, tool, args)?;
    Ok(ReadArgs {
        meanings,
        undeclared_records,
    })
}

/// Each record argument within its `max_records`.
fn record_counts(tool: &Tool, read: &ReadArgs<'_>) -> Result<(), Refusal> {
    for (name, m) in &read.meanings {
        let Some(ArgType::Record(r)) = tool.args.get(*name).map(|s| &s.ty) else {
            continue;
        };
        if let Some(max) = r.max_records.filter(|max| m.values().len() > *max) {
            return Err((
                GateReason::OverLimit,
                format!(
                    "at most {max} {} record(s) per call in `{name}`: name fewer",
                    r.kind
                ),
            ));
        }
    }
    Ok(())
}

/// The call's argument names: none spelled two ways, none a misspelling of a declared one, and
/// none undeclared when the policy refuses those.
fn check_names(policy: &ToolPolicy, tool: &Tool, args: &Map<String, Value>) -> Result<(), Refusal> {
    if let Some((at, a, b)) = args::colliding_names(args) {
        let place = if at.is_empty() {
            String::new()
        } else {
            format!(" (in `{}`)", short(&at))
        };
        return Err((
            GateReason::InvalidArguments,
            format!(
                "`{}` and `{}` name one argument{place}: send it once, spelled one way",
                short(&a),
                short(&b)
            ),
        ));
    }
    for k in args.keys() {
        if tool.args.contains_key(k) {
            continue;
        }
        let folded = args::fold_name(k);
        if let Some((_, name)) = tool
            .read_names
            .iter()
            .find(|(fold, name)| *fold == folded && name != k)
        {
            return Err((
                GateReason::InvalidArguments,
                format!(
                    "`{}` is not how this tool spells `{name}`: write `{name}`",
                    short(k)
                ),
            ));
        }
    }
    if policy.refuse_undeclared && !tool.args.is_empty() {
        let read =
            |k: &String| tool.args.contains_key(k) || tool.read_names.iter().any(|(_, n)| n == k);
        if let Some(k) = args.keys().find(|k| !read(k)) {
            let declared: Vec<&str> = tool.args.keys().map(String::as_str).collect();
            return Err((
                GateReason::InvalidArguments,
                format!(
                    "`{}` is not an argument of this tool (its arguments: {}): send only those",
                    short(k),
                    declared.join(", ")
                ),
            ));
        }
    }
    Ok(())
}

/// The declared arguments by meaning, in name order, absent ones and ones given as their
/// default left out; each readable as its type, a record argument within its count.
fn read_declared<'t>(
    policy: &ToolPolicy,
    tool: &'t Tool,
    args: &Map<String, Value>,
) -> Result<Vec<(&'t str, Meaning)>, Refusal> {
    let mut meanings = Vec::with_capacity(tool.args.len());
    for (name, spec) in &tool.args {
        let v = args.get(name).unwrap_or(&Value::Null);
        match args::read(&spec.ty, v, &policy.read) {
            Ok(Some(m)) => {
                if spec.default.as_ref() == Some(&m) {
                    continue;
                }
                meanings.push((name.as_str(), m));
            }
            Ok(None) if spec.optional => {}
            Ok(None) => return Err((GateReason::InvalidArguments, missing(name, spec))),
            Err(e) => return Err((GateReason::InvalidArguments, unreadable(name, spec, e))),
        }
    }
    Ok(meanings)
}

/// The ids of `record_arg` when it is not declared, read as record ids (a pattern refused).
fn read_undeclared_records(
    policy: &ToolPolicy,
    tool: &Tool,
    args: &Map<String, Value>,
) -> Result<Option<Vec<String>>, Refusal> {
    // `record_arg` read as ids even when it is not declared: a wildcard is never a record.
    let mut undeclared_records = None;
    if let Some(arg) = tool
        .record_arg
        .as_deref()
        .filter(|a| !tool.args.contains_key(*a))
    {
        match args.get(arg) {
            Some(v) if !matches!(v, Value::Null) => {
                match args::records(v, RecordFormat::Id, &policy.read) {
                    Ok(ids) => undeclared_records = Some(ids),
                    Err(ReadError::Pattern) if !is_blank_text(v) => {
                        return Err((GateReason::InvalidArguments, pattern_message(arg, "record")))
                    }
                    Err(_) => {}
                }
            }
            _ => {}
        }
    }
    Ok(undeclared_records)
}

fn is_blank_text(v: &Value) -> bool {
    v.as_str().is_some_and(|s| s.trim().is_empty())
}

fn missing(name: &str, spec: &ArgSpec) -> String {
    match &spec.ty {
        ArgType::Record(_) => format!("give `{name}`: the record this call touches"),
        _ => format!("give `{name}` as {}", describe(spec)),
    }
}

fn unreadable(name: &str, spec: &ArgSpec, e: ReadError) -> String {
    match (&spec.ty, e) {
        (ArgType::Record(r), ReadError::Pattern) => pattern_message(name, &r.kind),
        _ => format!("give `{name}` as {}", describe(spec)),
    }
}

fn pattern_message(name: &str, kind: &str) -> String {
    format!(
        "`{name}`: name each {kind} by its id; a pattern, a wildcard, a word like `all` or an empty list is not a record"
    )
}

/// What a value of the type looks like, for the model.
fn describe(spec: &ArgSpec) -> String {
    match &spec.ty {
        ArgType::Amount => "an amount: a number, 0 or more".into(),
        ArgType::Count => "a whole number".into(),
        ArgType::Record(r) => match r.format {
            RecordFormat::Id => format!("{} ids (letters and digits)", r.kind),
            RecordFormat::Phone => format!("{} numbers (phone numbers)", r.kind),
        },
        ArgType::Phone => "one phone number".into(),
        ArgType::Date => "a date (YYYY-MM-DD)".into(),
        ArgType::FreeText => "text".into(),
        ArgType::Code(None) => "a code (letters and digits)".into(),
        ArgType::Code(Some(values)) => format!("one of: {}", values.join(", ")),
    }
}

/// A name cut for a message (names are the model's, and may be long).
fn short(s: &str) -> String {
    let mut out: String = s.chars().filter(|c| !c.is_control()).take(64).collect();
    if s.chars().count() > 64 {
        out.push('…');
    }
    out
}

/// The tool's argument limits; the amount (when the tool has amount limits) for the approval
/// threshold and the amount windows.
fn limits(tool: &Tool, args: &Map<String, Value>) -> Result<Option<f64>, Refusal> {
    let mut amount = None;
    if let Some(limit) = &tool.amount {
        let name = &tool.amount_arg;
        let a = args.get(name).and_then(args::amount).ok_or_else(|| {
            (
                GateReason::InvalidArguments,
                format!("give `{name}` as a number of {}", limit.unit),
            )
        })?;
        if let Some(currency) = args.get(&tool.currency_arg).filter(|c| !c.is_null()) {
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
        let n = args.get(name).and_then(args::count).ok_or_else(|| {
            (
                GateReason::InvalidArguments,
                format!("give `{name}` as a whole number (at most {max})"),
            )
        })?;
        if n > max {
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

/// What one velocity window counts of a call: its members, what each adds, and its limits.
struct Counting {
    members: Vec<Member>,
    weight: u64,
    approval_above: Option<u64>,
    max: u64,
}

/// The velocity windows this call is counted in, and what it adds to each.
fn counters(
    policy: &ToolPolicy,
    tool: &Tool,
    name: &str,
    args: &Map<String, Value>,
    read: &ReadArgs<'_>,
    amount: Option<f64>,
    at: &Site<'_>,
) -> Result<Vec<CounterOp>, Refusal> {
    let mut ops = Vec::with_capacity(policy.velocity.len());
    // Worked out once per call, whatever the number of windows that use them.
    // The round's nonce (80 random bits) and the call's position: unique across replicas.
    let call_member: Member = (at.nonce << 32) | at.index as u128;
    let mut records: Option<Option<Vec<Member>>> = None;
    let mut per_values: Vec<(&str, Vec<String>)> = Vec::new();
    for (rule, v) in policy.velocity.iter().enumerate() {
        if v.tool.as_deref().is_some_and(|t| t != name) {
            continue;
        }
        let Some(counting) = counting(v, tool, args, read, amount, call_member, &mut records)?
        else {
            continue;
        };
        let Some(per) = per_window(v, tool, read, &mut per_values) else {
            continue;
        };
        push_windows(&mut ops, v, rule, at, name, per, counting);
    }
    Ok(ops)
}

/// What window `v` counts of this call, or `None` when it does not count it (another kind of
/// tool, no record named, an amount in another unit). The call's records are read once, into
/// `records`, for every window that counts them.
fn counting(
    v: &policy::Velocity,
    tool: &Tool,
    args: &Map<String, Value>,
    read: &ReadArgs<'_>,
    amount: Option<f64>,
    call_member: Member,
    records: &mut Option<Option<Vec<Member>>>,
) -> Result<Option<Counting>, Refusal> {
    let (members, weight, approval_above, max) = match (&v.count, &v.limit) {
        (Counted::Calls, WindowLimit::Count(max)) => (vec![call_member], 1, None, *max),
        (Counted::Outbound, WindowLimit::Count(max)) if tool.outbound => {
            (vec![call_member], 1, None, *max)
        }
        (Counted::Records, WindowLimit::Count(max)) => {
            if records.is_none() {
                *records = Some(record_members(tool, args, read)?);
            }
            match records.as_ref().and_then(Option::as_ref) {
                Some(members) => (members.clone(), 1, None, *max),
                None => return Ok(None),
            }
        }
        (Counted::Amount, WindowLimit::Amount(limit)) => {
            let in_unit = tool.amount.as_ref().is_some_and(|a| a.unit == limit.unit);
            let Some(a) = amount.filter(|_| in_unit) else {
                return Ok(None);
            };
            (
                vec![call_member],
                args::hundredths(a),
                limit.approval_above.map(args::hundredths),
                limit.max.map_or(u64::MAX, args::hundredths),
            )
        }
        _ => return Ok(None),
    };
    Ok(Some(Counting {
        members,
        weight,
        approval_above,
        max,
    }))
}

/// The values of window `v`'s `per` argument that this call is counted under (hashed, read
/// once into `per_values`), empty without `per`; `None` when the tool does not declare it.
fn per_window<'p, 'a>(
    v: &'p policy::Velocity,
    tool: &Tool,
    read: &ReadArgs<'_>,
    per_values: &'a mut Vec<(&'p str, Vec<String>)>,
) -> Option<&'a [String]> {
    // `per`: one window per value of the argument; a tool that does not declare it is not
    // counted, an optional one left out is counted under "none given".
    let per: &[String] = match &v.per {
        None => &[],
        Some(arg) if !tool.args.contains_key(arg) => return None,
        Some(arg) => {
            let at = match per_values.iter().position(|(a, _)| *a == arg.as_str()) {
                Some(i) => i,
                None => {
                    let values = match read.meaning(arg) {
                        Some(m) => m.values().iter().map(|x| hash(x)).collect(),
                        None => vec!["-".into()],
                    };
                    per_values.push((arg.as_str(), values));
                    per_values.len() - 1
                }
            };
            &per_values[at].1
        }
    };
    Some(per)
}

/// One counter per window of `v` the call falls in (one per `per` value, or one), each with
/// the call's members and weight.
fn push_windows(
    ops: &mut Vec<CounterOp>,
    v: &policy::Velocity,
    rule: usize,
    at: &Site<'_>,
    name: &str,
    per: &[String],
    counting: Counting,
) {
    let Counting {
        mut members,
        weight,
        approval_above,
        max,
    } = counting;
    let tool_part = match v.count {
        Counted::Calls if v.tool.is_none() => name,
        _ => "",
    };
    let windows = per.len().max(1);
    for i in 0..windows {
        let scope: [&str; 6] = match v.scope {
            Scope::Conversation => ["v", &v.id, "c", at.conversation, tool_part, ""],
            Scope::Product => ["v", &v.id, "p", tool_part, "", ""],
        };
        let n = if v.scope == Scope::Conversation { 5 } else { 4 };
        let mut k = key(at.product, &scope[..n]);
        if let Some(value) = per.get(i) {
            k.push(':');
            k.push_str(value);
        }
        ops.push(CounterOp {
            key: k,
            window_ms: v.window_ms,
            max,
            approval_above,
            members: if i + 1 == windows {
                std::mem::take(&mut members)
            } else {
                members.clone()
            },
            weight,
            sum: v.count == Counted::Amount,
            rule,
        });
    }
}

/// What a `records` window counts for this call: each record of `record_arg`, hashed with its
/// kind; `None` when the tool names no record (or an optional one was left out).
fn record_members(
    tool: &Tool,
    args: &Map<String, Value>,
    read: &ReadArgs<'_>,
) -> Result<Option<Vec<Member>>, Refusal> {
    let Some(arg) = &tool.record_arg else {
        return Ok(None);
    };
    let kind = tool.record_kind();
    let ids = if tool.args.contains_key(arg) {
        match read.meaning(arg) {
            Some(m) => m.values(),
            None => return Ok(None),
        }
    } else {
        match &read.undeclared_records {
            Some(ids) if args.contains_key(arg) => ids.as_slice(),
            _ => {
                return Err((
                    GateReason::InvalidArguments,
                    format!("give `{arg}`: the record this call touches"),
                ))
            }
        }
    };
    Ok(Some(
        ids.iter()
            .map(|id| member_of(&format!("{kind}\u{1f}{id}")))
            .collect(),
    ))
}

pub(super) fn velocity_message(v: &policy::Velocity, tool: &str) -> String {
    let scope = match (v.scope, &v.per) {
        (Scope::Conversation, None) => "this conversation".to_string(),
        (Scope::Product, None) => "this service".to_string(),
        (Scope::Conversation, Some(per)) => format!("this conversation for this `{per}`"),
        (Scope::Product, Some(per)) => format!("this service for this `{per}`"),
    };
    let window = human_window(v.window_ms);
    match &v.limit {
        WindowLimit::Count(max) => {
            let what = match v.count {
                Counted::Calls => format!("`{}` calls", v.tool.as_deref().unwrap_or(tool)),
                Counted::Records => "records touched".to_string(),
                _ => "messages sent".to_string(),
            };
            format!(
                "too many {what} in {scope} (at most {max} per {window}): wait, or ask a person"
            )
        }
        WindowLimit::Amount(limit) => format!(
            "the amounts in {scope} would go over {} {} per {window}: wait, or ask a person",
            limit.max.map_or_else(|| "the limit".to_string(), grouped),
            limit.unit
        ),
    }
}

/// The message of a call an amount window sends to a person.
pub(super) fn window_approval_message(v: &policy::Velocity) -> String {
    let scope = match (v.scope, &v.per) {
        (Scope::Conversation, None) => "in this conversation".to_string(),
        (Scope::Product, None) => "across this service".to_string(),
        (Scope::Conversation, Some(per)) => format!("for this `{per}` in this conversation"),
        (Scope::Product, Some(per)) => format!("for this `{per}` across this service"),
    };
    match &v.limit {
        WindowLimit::Amount(limit) => format!(
            "with the earlier amounts {scope} this goes above {} {} per {}: a person must approve it",
            limit.approval_above.map_or_else(|| "the threshold".to_string(), grouped),
            limit.unit,
            human_window(v.window_ms)
        ),
        WindowLimit::Count(_) => "a person must approve it".into(),
    }
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

/// Days since 1970-01-01 of an ISO date (`YYYY-MM-DD` in any script's digits, a time after it
/// is ignored); `None` for a date the calendar does not have (`2026-02-31`).
fn days_from_iso(s: &str) -> Option<i64> {
    use chrono::Datelike;
    let canonical = args::date(s)?;
    let date = chrono::NaiveDate::parse_from_str(canonical.get(..10)?, "%Y-%m-%d").ok()?;
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

/// Unique per round across replicas: 80 bits of a hash of the clock, the process, a counter
/// and an address. A call is counted in a window as this and its position ([`counters`]).
pub(super) fn nonce() -> Member {
    use sha2::{Digest, Sha256};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let seed = format!("{t}.{}.{n}.{:p}", std::process::id(), &COUNTER);
    let d = Sha256::digest(seed.as_bytes());
    let mut b = [0u8; 16];
    b[6..].copy_from_slice(&d[..10]);
    u128::from_be_bytes(b)
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

    fn number(v: &Value) -> Option<f64> {
        args::amount(v)
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

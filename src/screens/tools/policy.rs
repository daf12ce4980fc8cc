//! A product's tool policy, as data beside its screening rules (`policies/<product>.toml`):
//! which tools the agent may call, each tool's argument limits (units in the key names), which
//! tools are irreversible, the per-round cap, and the velocity limits.
//!
//! ```toml
//! [tool_gate]
//! max_calls_per_round = 12         # default 12
//! record_arg = "customer_id"       # the argument that names the record a call touches
//! store = "memory"                 # or "redis" (GUARD_REDIS_URL): limits across replicas
//! entitlement = ["wallet"]         # record kinds checked against the request's `caller`
//!
//! [tools.send_money]
//! irreversible = true              # always needs a person's approval
//! max_amount_bdt = 50000           # above: skip ("limit is 50,000 BDT")
//! approval_above_bdt = 10000       # above: needs_approval
//!
//! [tools.list_transactions]
//! max_count = 100                  # argument `count` (count_arg)
//! max_range_days = 90              # arguments `from` and `to` (from_arg, to_arg), ISO dates
//!
//! [tools.send_money.args]          # argument types (see [`super::args`]): dedupe by meaning
//! wallet = { type = "record", kind = "wallet", format = "phone" }
//! to = "phone"
//! amount = "amount"
//!
//! [[velocity]]
//! id = "transfers_per_conversation"
//! scope = "conversation"           # or "product"
//! count = "calls"                  # or "records" (each record_arg value), "outbound", "amount"
//! tool = "send_money"              # without it every tool is counted on its own
//! window_seconds = 600
//! max = 3
//!
//! [[velocity]]                     # an amount window: the amounts of its calls added up
//! id = "transfer_amount_per_recipient"
//! scope = "conversation"
//! per = "to"                       # one window per value of a declared argument
//! count = "amount"
//! tool = "send_money"              # without it: every tool with amount limits in that unit
//! window_seconds = 86400
//! approval_above_bdt = 10000       # the window's total above it: needs_approval
//! max_amount_bdt = 50000           # above it: skip (velocity), nothing counted
//! ```
//!
//! With no `[tools]` at all, every tool call is skipped: an agent gets tools by being given them.

use super::args::{self, ArgSpec, ArgType, Meaning, ReadSettings, RecordFormat, RecordSpec};
use crate::turn::health::HealthSettings;
use serde::Deserialize;
use std::collections::BTreeMap;

/// The cap on calls per round when a product does not set one.
pub const DEFAULT_MAX_CALLS_PER_ROUND: usize = 12;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawToolGate {
    #[serde(default)]
    pub max_calls_per_round: Option<usize>,
    #[serde(default)]
    pub record_arg: Option<String>,
    #[serde(default)]
    pub store: Option<String>,
    #[serde(default)]
    pub dedupe_ttl_seconds: Option<u64>,
    #[serde(default)]
    pub store_timeout_ms: Option<u64>,
    /// The country code of national phone numbers (`"880"`, the default): `01711000000` is
    /// `+8801711000000`.
    #[serde(default)]
    pub phone_country_code: Option<String>,
    /// What a tool that declares its arguments does with an argument it does not declare:
    /// `"keep"` (the default: compared literally) or `"refuse"` (`invalid_arguments`: the gate
    /// vouches only for what it reads).
    #[serde(default)]
    pub undeclared_args: Option<String>,
    /// The record kinds checked against the request's `caller` (`["wallet"]`): a call whose
    /// record argument of one of these kinds names a record outside the caller's records or
    /// scope is `not_entitled`; with no caller, `caller_required`. Each kind must be the `kind`
    /// of a declared `record` argument.
    #[serde(default)]
    pub entitlement: Option<Vec<String>>,
    /// How long a turn's evidence (its tool results) and its asked-once memory are kept, in
    /// seconds (default 3600, at most 604800).
    #[serde(default)]
    pub turn_ttl_seconds: Option<u64>,
    /// Per-tool health: `{failures = 5, window_seconds = 60}` (the default); `failures = 0`
    /// turns it off.
    #[serde(default)]
    pub health: Option<RawHealth>,
}

/// `[tool_gate] health`: a tool with `failures` failed results within `window_seconds` is
/// unavailable until they leave the window.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawHealth {
    #[serde(default)]
    pub failures: Option<u32>,
    #[serde(default)]
    pub window_seconds: Option<u64>,
}

/// One `[tools.<name>]` table. Amount limits carry their currency in the key
/// (`max_amount_bdt`, `approval_above_usd`), so they are read from the remaining keys (and any
/// other unknown key is reported there: `deny_unknown_fields` does not work with `flatten`).
#[derive(Debug, Default, Deserialize)]
pub struct RawTool {
    #[serde(default)]
    pub irreversible: bool,
    #[serde(default)]
    pub outbound: bool,
    #[serde(default)]
    pub record_arg: Option<String>,
    #[serde(default)]
    pub amount_arg: Option<String>,
    #[serde(default)]
    pub currency_arg: Option<String>,
    #[serde(default)]
    pub count_arg: Option<String>,
    #[serde(default)]
    pub max_count: Option<u64>,
    #[serde(default)]
    pub from_arg: Option<String>,
    #[serde(default)]
    pub to_arg: Option<String>,
    #[serde(default)]
    pub max_range_days: Option<u64>,
    /// The caller roles that may call this tool (`["officer", "manager"]`); with entitlement
    /// on, a caller of another role (or none) is `not_entitled`. Without it, every role may.
    #[serde(default)]
    pub roles: Option<Vec<String>>,
    /// `[tools.<name>.args]`: each argument's type, as a type name or a table (see
    /// [`super::args`]). Read by hand, so every problem is reported with its key.
    #[serde(default)]
    pub args: BTreeMap<String, toml::Value>,
    #[serde(flatten)]
    pub amounts: BTreeMap<String, toml::Value>,
}

/// One `[[velocity]]` rule. An amount window's limits carry their currency in the key
/// (`max_amount_bdt`, `approval_above_bdt`), read from the remaining keys like a tool's.
#[derive(Debug, Deserialize)]
pub struct RawVelocity {
    pub id: String,
    pub scope: Scope,
    pub count: Counted,
    #[serde(default)]
    pub tool: Option<String>,
    /// A declared argument: one window per value of it (a recipient, a customer).
    #[serde(default)]
    pub per: Option<String>,
    pub window_seconds: u64,
    /// The window's limit for counts (calls, records, outbound).
    #[serde(default)]
    pub max: Option<u64>,
    #[serde(flatten)]
    pub amounts: BTreeMap<String, toml::Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    Conversation,
    Product,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Counted {
    /// Calls of one tool (or of each tool on its own).
    Calls,
    /// Distinct records touched (values of the record argument).
    Records,
    /// Calls of tools marked `outbound` (messages, e-mails, SMS).
    Outbound,
    /// The amounts of the calls added up (tools with amount limits in the window's unit).
    Amount,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreKind {
    Memory,
    Redis,
}

impl StoreKind {
    pub fn as_str(self) -> &'static str {
        match self {
            StoreKind::Memory => "memory",
            StoreKind::Redis => "redis",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct AmountLimit {
    /// Upper-case currency code from the key name (`max_amount_bdt` → `BDT`).
    pub unit: String,
    pub max: Option<f64>,
    pub approval_above: Option<f64>,
}

#[derive(Debug, Clone)]
pub struct Tool {
    pub irreversible: bool,
    pub outbound: bool,
    pub record_arg: Option<String>,
    pub amount_arg: String,
    pub currency_arg: String,
    pub amount: Option<AmountLimit>,
    pub count_arg: String,
    pub max_count: Option<u64>,
    pub from_arg: String,
    pub to_arg: String,
    pub max_range_days: Option<u64>,
    /// The declared arguments (`[tools.<name>.args]`), read by meaning.
    pub args: BTreeMap<String, ArgSpec>,
    /// Every argument name the gate reads (declared or limited), folded, with the name: a
    /// name given that folds to one of them but is spelled otherwise is refused.
    pub read_names: Vec<(String, String)>,
    /// The caller roles that may call it (none: every role).
    pub roles: Option<Vec<String>>,
    /// A hash of the tool's name: its health window's key part.
    pub health_id: String,
}

impl Tool {
    /// The kind of record `record_arg` names (`record` when it is not declared).
    pub fn record_kind(&self) -> &str {
        match self.record_arg.as_ref().and_then(|a| self.args.get(a)) {
            Some(ArgSpec {
                ty: ArgType::Record(r),
                ..
            }) => &r.kind,
            _ => "record",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Velocity {
    pub id: String,
    pub scope: Scope,
    pub count: Counted,
    pub tool: Option<String>,
    /// One window per value of this declared argument.
    pub per: Option<String>,
    pub window_ms: u64,
    pub limit: WindowLimit,
}

/// What a window holds at most.
#[derive(Debug, Clone, PartialEq)]
pub enum WindowLimit {
    /// Calls, records or messages.
    Count(u64),
    /// An amount window: its total's approval threshold and maximum, in `unit`.
    Amount(AmountLimit),
}

/// A product's tool policy, built and checked.
#[derive(Debug, Clone)]
pub struct ToolPolicy {
    pub max_calls_per_round: usize,
    pub tools: BTreeMap<String, Tool>,
    pub velocity: Vec<Velocity>,
    pub store: StoreKind,
    pub dedupe_ttl_ms: u64,
    pub store_timeout_ms: u64,
    /// How argument values are read (the phone country code).
    pub read: ReadSettings,
    /// A tool that declares its arguments refuses any other (`undeclared_args = "refuse"`).
    pub refuse_undeclared: bool,
    /// The record kinds checked against the caller (`entitlement`); empty: off.
    pub entitlement: Vec<String>,
    /// How long a turn's evidence and asked-once memory live (`turn_ttl_seconds`).
    pub turn_ttl_ms: u64,
    /// Per-tool health (`health`).
    pub health: HealthSettings,
}

impl Default for ToolPolicy {
    fn default() -> Self {
        ToolPolicy {
            max_calls_per_round: DEFAULT_MAX_CALLS_PER_ROUND,
            tools: BTreeMap::new(),
            velocity: Vec::new(),
            store: StoreKind::Memory,
            dedupe_ttl_ms: 3_600_000,
            store_timeout_ms: 250,
            read: ReadSettings::default(),
            refuse_undeclared: false,
            entitlement: Vec::new(),
            turn_ttl_ms: 3_600_000,
            health: HealthSettings::default(),
        }
    }
}

impl ToolPolicy {
    /// Whether record arguments of `kind` are checked against the caller.
    pub fn entitles(&self, kind: &str) -> bool {
        self.entitlement.iter().any(|k| k == kind)
    }

    /// The tool sections of a policy file's text (other sections are ignored): for tests,
    /// benchmarks and tools; the service reads the whole file through the configuration loader.
    pub fn from_toml(text: &str) -> Result<Self, Vec<(String, String)>> {
        #[derive(Deserialize)]
        struct Sections {
            tool_gate: Option<RawToolGate>,
            #[serde(default)]
            tools: BTreeMap<String, RawTool>,
            #[serde(default)]
            velocity: Vec<RawVelocity>,
        }
        let s: Sections =
            toml::from_str(text).map_err(|e| vec![("-".to_string(), e.message().to_string())])?;
        ToolPolicy::build(s.tool_gate, s.tools, s.velocity)
    }

    /// Build from the file's sections; every problem is reported as (key, message).
    pub fn build(
        gate: Option<RawToolGate>,
        tools: BTreeMap<String, RawTool>,
        velocity: Vec<RawVelocity>,
    ) -> Result<Self, Vec<(String, String)>> {
        let mut problems = Vec::new();
        let gate = gate.unwrap_or_default();
        let mut policy = ToolPolicy::default();
        apply_gate(&gate, &mut policy, &mut problems);
        for (name, raw) in tools {
            match build_tool(&name, raw, gate.record_arg.as_deref(), &policy.read) {
                Ok(t) => {
                    policy.tools.insert(name, t);
                }
                Err(mut p) => problems.append(&mut p),
            }
        }
        check_entitlement(&gate, &mut policy, &mut problems);
        let mut ids = std::collections::HashSet::new();
        for v in velocity {
            let key = format!("velocity {}", v.id);
            if v.id.trim().is_empty() || !ids.insert(v.id.clone()) {
                problems.push((key.clone(), "needs a unique, non-empty id".into()));
            }
            if let Some(rule) = build_velocity(&key, v, &policy.tools, &mut problems) {
                policy.velocity.push(rule);
            }
        }
        if problems.is_empty() {
            Ok(policy)
        } else {
            Err(problems)
        }
    }
}

/// The `[tool_gate]` settings, each checked (its problem added to `problems`) and kept within
/// its bounds.
fn apply_gate(gate: &RawToolGate, policy: &mut ToolPolicy, problems: &mut Vec<(String, String)>) {
    if let Some(n) = gate.max_calls_per_round {
        if n == 0 || n > 256 {
            problems.push((
                "tool_gate.max_calls_per_round".into(),
                "must be between 1 and 256".into(),
            ));
        }
        policy.max_calls_per_round = n.clamp(1, 256);
    }
    policy.store = match gate.store.as_deref() {
        None | Some("memory") => StoreKind::Memory,
        Some("redis") => StoreKind::Redis,
        Some(other) => {
            problems.push((
                "tool_gate.store".into(),
                format!("`{other}` is not a store: `memory` or `redis`"),
            ));
            StoreKind::Memory
        }
    };
    if let Some(s) = gate.dedupe_ttl_seconds {
        if s == 0 || s > 7 * 86_400 {
            problems.push((
                "tool_gate.dedupe_ttl_seconds".into(),
                "must be between 1 and 604800".into(),
            ));
        }
        policy.dedupe_ttl_ms = s.clamp(1, 7 * 86_400) * 1000;
    }
    if let Some(ms) = gate.store_timeout_ms {
        if ms == 0 || ms > 10_000 {
            problems.push((
                "tool_gate.store_timeout_ms".into(),
                "must be between 1 and 10000".into(),
            ));
        }
        policy.store_timeout_ms = ms.clamp(1, 10_000);
    }
    if let Some(cc) = &gate.phone_country_code {
        let cc = cc.trim().trim_start_matches('+').to_string();
        if cc.is_empty() || cc.len() > 3 || !cc.bytes().all(|b| b.is_ascii_digit()) {
            problems.push((
                "tool_gate.phone_country_code".into(),
                "1 to 3 digits, e.g. \"880\"".into(),
            ));
        }
        policy.read.country_code = cc;
    }
    if let Some(s) = gate.turn_ttl_seconds {
        if s == 0 || s > 7 * 86_400 {
            problems.push((
                "tool_gate.turn_ttl_seconds".into(),
                "must be between 1 and 604800".into(),
            ));
        }
        policy.turn_ttl_ms = s.clamp(1, 7 * 86_400) * 1000;
    }
    if let Some(h) = &gate.health {
        if let Some(f) = h.failures {
            if f > 10_000 {
                problems.push((
                    "tool_gate.health.failures".into(),
                    "must be between 0 (off) and 10000".into(),
                ));
            }
            policy.health.failures = f.min(10_000);
        }
        if let Some(w) = h.window_seconds {
            if w == 0 || w > 86_400 {
                problems.push((
                    "tool_gate.health.window_seconds".into(),
                    "must be between 1 and 86400".into(),
                ));
            }
            policy.health.window_ms = w.clamp(1, 86_400) * 1000;
        }
    }
    policy.refuse_undeclared = match gate.undeclared_args.as_deref() {
        None | Some("keep") => false,
        Some("refuse") => true,
        Some(other) => {
            problems.push((
                "tool_gate.undeclared_args".into(),
                format!("`{other}` is not a choice: `keep` or `refuse`"),
            ));
            false
        }
    };
}

/// `entitlement`: kinds of declared record arguments; `roles` only where it is on.
fn check_entitlement(
    gate: &RawToolGate,
    policy: &mut ToolPolicy,
    problems: &mut Vec<(String, String)>,
) {
    let declared: std::collections::BTreeSet<&str> = policy
        .tools
        .values()
        .flat_map(|t| t.args.values())
        .filter_map(|a| match &a.ty {
            ArgType::Record(r) => Some(r.kind.as_str()),
            _ => None,
        })
        .collect();
    for kind in gate.entitlement.iter().flatten() {
        if !declared.contains(kind.as_str()) {
            let known: Vec<&str> = declared.iter().copied().collect();
            problems.push((
                "tool_gate.entitlement".into(),
                format!(
                    "`{kind}` is not the kind of any record argument (declared kinds: {})",
                    known.join(", ")
                ),
            ));
        }
    }
    let on = gate.entitlement.clone().unwrap_or_default();
    for (name, t) in &policy.tools {
        match &t.roles {
            Some(_) if on.is_empty() => problems.push((
                format!("tools.{name}.roles"),
                "roles are checked against the caller: set `entitlement` in [tool_gate]".into(),
            )),
            Some(r) if r.is_empty() || r.iter().any(|x| x.trim().is_empty()) => problems.push((
                format!("tools.{name}.roles"),
                "a non-empty list of role names".into(),
            )),
            _ => {}
        }
    }
    policy.entitlement = on;
}

/// One velocity rule, its problems added to `problems`.
fn build_velocity(
    key: &str,
    v: RawVelocity,
    tools: &BTreeMap<String, Tool>,
    problems: &mut Vec<(String, String)>,
) -> Option<Velocity> {
    let before = problems.len();
    let mut problem = |m: String| problems.push((key.to_string(), m));
    let counted = counted_tools(&v, tools, &mut problem);
    let limit = if v.count == Counted::Amount {
        amount_window(&v, &counted, &mut problem)
    } else {
        count_window(&v, &mut problem)
    };
    (problems.len() == before).then(|| Velocity {
        id: v.id,
        scope: v.scope,
        count: v.count,
        tool: v.tool,
        per: v.per,
        window_ms: v.window_seconds.clamp(1, 7 * 86_400) * 1000,
        limit,
    })
}

/// A rule's window, tool and `per` checked against the tools; the tools it can count (its
/// own, or every one).
fn counted_tools<'t>(
    v: &RawVelocity,
    tools: &'t BTreeMap<String, Tool>,
    problem: &mut impl FnMut(String),
) -> Vec<&'t Tool> {
    if v.window_seconds == 0 || v.window_seconds > 7 * 86_400 {
        problem("window_seconds must be between 1 and 604800".into());
    }
    if let Some(t) = &v.tool {
        if !tools.contains_key(t) {
            problem(format!("tool `{t}` is not in [tools]"));
        }
        if v.count == Counted::Outbound {
            problem("`tool` applies to count = \"calls\", \"records\" or \"amount\"".into());
        }
    }
    if v.count == Counted::Records && !tools.values().any(|t| t.record_arg.is_some()) {
        problem("count = \"records\" needs a record_arg (in [tool_gate] or a tool)".into());
    }
    if v.count == Counted::Outbound && !tools.values().any(|t| t.outbound) {
        problem("count = \"outbound\" needs a tool with outbound = true".into());
    }
    // The tools this rule can count: its own, or every one.
    let counted: Vec<&Tool> = match &v.tool {
        Some(t) => tools.get(t).into_iter().collect(),
        None => tools.values().collect(),
    };
    if let Some(per) = &v.per {
        let declared = counted.iter().any(|t| t.args.contains_key(per));
        if !declared {
            problem(format!(
                "per = \"{per}\": no tool this rule counts declares `{per}` in its args"
            ));
        }
        if let Some(t) = &v.tool {
            if tools.get(t).is_some_and(|t| !t.args.contains_key(per)) {
                problem(format!("tool `{t}` does not declare `{per}` in its args"));
            }
        }
    }
    counted
}

/// An amount window's limit, from its `max_amount_<currency>` and `approval_above_<currency>`
/// keys; a tool it counts must have amount limits in that currency.
fn amount_window(
    v: &RawVelocity,
    counted: &[&Tool],
    problem: &mut impl FnMut(String),
) -> WindowLimit {
    if v.max.is_some() {
        problem(
            "an amount window's limits are `max_amount_<currency>` and `approval_above_<currency>`, not `max`"
                .into(),
        );
    }
    let mut amount_problems = Vec::new();
    let limit = amount_limit(&v.amounts, &mut amount_problems, "velocity (amount window)");
    for (k, m) in amount_problems {
        problem(format!("{k}: {m}"));
    }
    match limit {
        Some(l) => {
            let in_unit = |t: &&Tool| t.amount.as_ref().is_some_and(|a| a.unit == l.unit);
            if !counted.iter().any(in_unit) {
                problem(format!(
                    "count = \"amount\" needs a tool with amount limits in {} (max_amount_{} or approval_above_{})",
                    l.unit,
                    l.unit.to_ascii_lowercase(),
                    l.unit.to_ascii_lowercase()
                ));
            }
            WindowLimit::Amount(l)
        }
        None => {
            problem(
                "an amount window needs `max_amount_<currency>` or `approval_above_<currency>`"
                    .into(),
            );
            WindowLimit::Count(1)
        }
    }
}

/// A count window's limit, its `max`; amount keys are unknown here.
fn count_window(v: &RawVelocity, problem: &mut impl FnMut(String)) -> WindowLimit {
    for k in v.amounts.keys() {
        let hint = if k.starts_with("max_amount_") || k.starts_with("approval_above_") {
            " (amount limits are for count = \"amount\")"
        } else {
            ""
        };
        problem(format!("unknown key `{k}`{hint}"));
    }
    match v.max {
        Some(0) | None => {
            problem("max must be at least 1".into());
            WindowLimit::Count(1)
        }
        Some(m) => WindowLimit::Count(m),
    }
}

/// `max_amount_<unit>` and `approval_above_<unit>` from a table's remaining keys: one unit,
/// the approval threshold below the maximum. Any other key is a problem.
fn amount_limit(
    keys: &BTreeMap<String, toml::Value>,
    problems: &mut Vec<(String, String)>,
    what: &str,
) -> Option<AmountLimit> {
    let mut amount: Option<AmountLimit> = None;
    for (k, v) in keys {
        let (field, unit) = if let Some(u) = k.strip_prefix("max_amount_") {
            ("max", u)
        } else if let Some(u) = k.strip_prefix("approval_above_") {
            ("approval", u)
        } else {
            problems.push((
                k.clone(),
                format!("unknown key (the amount limits of a {what} are `max_amount_<currency>` and `approval_above_<currency>`)"),
            ));
            continue;
        };
        let number = match v {
            toml::Value::Integer(i) if *i >= 0 => *i as f64,
            toml::Value::Float(f) if f.is_finite() && *f >= 0.0 => *f,
            _ => {
                problems.push((k.clone(), "must be a number, 0 or more".into()));
                continue;
            }
        };
        if unit.is_empty() || !unit.chars().all(|c| c.is_ascii_alphabetic()) {
            problems.push((k.clone(), "the unit is a currency code, e.g. `_bdt`".into()));
            continue;
        }
        let unit = unit.to_ascii_uppercase();
        let limit = amount.get_or_insert_with(|| AmountLimit {
            unit: unit.clone(),
            max: None,
            approval_above: None,
        });
        if limit.unit != unit {
            problems.push((
                k.clone(),
                format!("one currency per {what}: its limits are in {}", limit.unit),
            ));
            continue;
        }
        match field {
            "max" => limit.max = Some(number),
            _ => limit.approval_above = Some(number),
        }
    }
    if let Some(AmountLimit {
        max: Some(max),
        approval_above: Some(approval),
        ..
    }) = &amount
    {
        if approval >= max {
            problems.push((
                "approval_above".into(),
                "must be below the max_amount (or nothing ever needs approval)".into(),
            ));
        }
    }
    amount
}

/// A test of an argument's declared type.
type IsType = fn(&ArgType) -> bool;

fn build_tool(
    name: &str,
    raw: RawTool,
    record_arg: Option<&str>,
    read: &ReadSettings,
) -> Result<Tool, Vec<(String, String)>> {
    let mut problems = Vec::new();
    let key = |k: &str| format!("tools.{name}.{k}");
    if name.trim().is_empty() || name.len() > 128 {
        problems.push((key(""), "a tool name is 1 to 128 characters".into()));
    }
    let mut amount_problems = Vec::new();
    let amount = amount_limit(&raw.amounts, &mut amount_problems, "tool");
    problems.extend(amount_problems.into_iter().map(|(k, m)| (key(&k), m)));
    if raw.max_count == Some(0) || raw.max_range_days == Some(0) {
        problems.push((
            key("max_count / max_range_days"),
            "must be at least 1".into(),
        ));
    }
    let mut args = BTreeMap::new();
    for (arg, v) in &raw.args {
        if let Some(spec) = build_arg(&key(&format!("args.{arg}")), v, read, &mut problems) {
            args.insert(arg.clone(), spec);
        }
    }
    let arg = |a: &Option<String>, default: &str| a.clone().unwrap_or_else(|| default.to_string());
    let record_arg = raw
        .record_arg
        .clone()
        .or_else(|| record_arg.map(str::to_string));
    let amount_arg = arg(&raw.amount_arg, "amount");
    let count_arg = arg(&raw.count_arg, "count");
    let (from_arg, to_arg) = (arg(&raw.from_arg, "from"), arg(&raw.to_arg, "to"));
    // A limited argument that is declared must be declared as what the limit reads.
    let mut limited: Vec<(&str, &str, IsType)> = Vec::new();
    if amount.is_some() {
        limited.push((&amount_arg, "amount", |t| *t == ArgType::Amount));
    }
    if raw.max_count.is_some() {
        limited.push((&count_arg, "count", |t| *t == ArgType::Count));
    }
    if raw.max_range_days.is_some() {
        limited.push((&from_arg, "date", |t| *t == ArgType::Date));
        limited.push((&to_arg, "date", |t| *t == ArgType::Date));
    }
    if let Some(r) = &record_arg {
        limited.push((r, "record", |t| matches!(t, ArgType::Record(_))));
    }
    check_limited(&args, &limited, &key, &mut problems);
    if !problems.is_empty() {
        return Err(problems);
    }
    let currency_arg = arg(&raw.currency_arg, "currency");
    let read_names = read_names(
        &args,
        &limited,
        amount.is_some().then_some(currency_arg.as_str()),
    );
    Ok(Tool {
        irreversible: raw.irreversible,
        outbound: raw.outbound,
        record_arg,
        amount_arg,
        currency_arg,
        amount,
        count_arg,
        max_count: raw.max_count,
        from_arg,
        to_arg,
        max_range_days: raw.max_range_days,
        args,
        read_names,
        roles: raw.roles,
        health_id: super::keys::hash(name),
    })
}

/// A limited argument that is declared must be declared as what the limit reads: a problem
/// for each that is not.
fn check_limited(
    args: &BTreeMap<String, ArgSpec>,
    limited: &[(&str, &str, IsType)],
    key: &impl Fn(&str) -> String,
    problems: &mut Vec<(String, String)>,
) {
    for (a, want, ok) in limited {
        if let Some(spec) = args.get(*a) {
            if !ok(&spec.ty) {
                problems.push((
                    key(&format!("args.{a}")),
                    format!(
                        "the tool's limits read `{a}` as {want}: declare it `{want}` (it is `{}`)",
                        spec.ty.as_str()
                    ),
                ));
            }
        }
    }
}

/// The names the gate reads a tool's arguments by (declared, limited, the currency when the
/// tool has amount limits), each with its folded form, sorted and each once.
fn read_names(
    args: &BTreeMap<String, ArgSpec>,
    limited: &[(&str, &str, IsType)],
    currency_arg: Option<&str>,
) -> Vec<(String, String)> {
    let mut read_names: Vec<(String, String)> = args
        .keys()
        .map(String::as_str)
        .chain(limited.iter().map(|(a, _, _)| *a))
        .chain(currency_arg)
        .map(|n| (args::fold_name(n).into_owned(), n.to_string()))
        .collect();
    read_names.sort();
    read_names.dedup();
    read_names
}

/// One `[tools.<name>.args]` entry: a type name, or a table with `type` and the type's keys.
fn build_arg(
    key: &str,
    v: &toml::Value,
    read: &ReadSettings,
    problems: &mut Vec<(String, String)>,
) -> Option<ArgSpec> {
    const TYPES: &str = "amount, count, record, phone, date, free_text, code";
    let before = problems.len();
    let mut problem = |m: String| problems.push((key.to_string(), m));
    let empty = toml::map::Map::new();
    let (type_name, table) = match v {
        toml::Value::String(t) => (t.as_str(), &empty),
        toml::Value::Table(t) => match t.get("type") {
            Some(toml::Value::String(ty)) => (ty.as_str(), t),
            _ => {
                problem(format!("needs `type`: one of {TYPES}"));
                return None;
            }
        },
        _ => {
            problem(format!(
                "a type name (`amount`) or a table (`{{ type = \"record\", kind = \"customer\" }}`); types: {TYPES}"
            ));
            return None;
        }
    };
    let mut allowed: Vec<&str> = vec!["type", "optional", "default"];
    let ty = match type_name {
        "amount" => ArgType::Amount,
        "count" => ArgType::Count,
        "phone" => ArgType::Phone,
        "date" => ArgType::Date,
        "free_text" => ArgType::FreeText,
        "code" => {
            allowed.push("values");
            let values = code_values(table, read, &mut problem);
            ArgType::Code(values)
        }
        "record" => {
            allowed.extend(["kind", "format", "max_records"]);
            ArgType::Record(record_spec(table, &mut problem))
        }
        other => {
            problem(format!("`{other}` is not an argument type: one of {TYPES}"));
            return None;
        }
    };
    for k in table.keys() {
        if !allowed.contains(&k.as_str()) {
            problem(format!(
                "unknown key `{k}` for a `{type_name}` argument (keys: {})",
                allowed.join(", ")
            ));
        }
    }
    let (optional, default) = optional_and_default(table, &ty, type_name, read, &mut problem);
    (problems.len() == before).then_some(ArgSpec {
        ty,
        optional,
        default,
    })
}

/// The `values` of a `code` argument: codes (letters, digits and `-_.`), a non-empty array.
fn code_values(
    table: &toml::map::Map<String, toml::Value>,
    read: &ReadSettings,
    problem: &mut impl FnMut(String),
) -> Option<Vec<String>> {
    match table.get("values") {
        None => None,
        Some(toml::Value::Array(items)) if !items.is_empty() => {
            let mut out = Vec::new();
            for item in items {
                let code = item.as_str().and_then(|s| {
                    args::read(&ArgType::Code(None), &s.into(), read)
                        .ok()
                        .flatten()
                });
                match code {
                    Some(Meaning::One(c)) => out.push(c),
                    _ => problem("`values` are codes: letters, digits and `-_.`".to_string()),
                }
            }
            Some(out)
        }
        Some(_) => {
            problem("`values` is a non-empty array of codes".into());
            None
        }
    }
}

/// A `record` argument's `kind`, `format` and `max_records`.
fn record_spec(
    table: &toml::map::Map<String, toml::Value>,
    problem: &mut impl FnMut(String),
) -> RecordSpec {
    let kind = match table.get("kind") {
        Some(toml::Value::String(k))
            if !k.is_empty()
                && k.len() <= 32
                && k.bytes().all(|b| b.is_ascii_lowercase() || b == b'_') =>
        {
            k.clone()
        }
        Some(_) => {
            problem("`kind` is a lower-case name: `wallet`, `account`, `customer`...".into());
            String::new()
        }
        None => {
            problem("a record needs its `kind`: `wallet`, `account`, `customer`...".into());
            String::new()
        }
    };
    let format = match table.get("format").map(|f| f.as_str()) {
        None | Some(Some("id")) => RecordFormat::Id,
        Some(Some("phone")) => RecordFormat::Phone,
        Some(_) => {
            problem("`format` is `id` (the default) or `phone`".into());
            RecordFormat::Id
        }
    };
    let max_records = match table.get("max_records") {
        None => None,
        Some(toml::Value::Integer(n)) if *n >= 1 => Some(*n as usize),
        Some(_) => {
            problem("`max_records` must be at least 1".into());
            None
        }
    };
    RecordSpec {
        kind,
        format,
        max_records,
    }
}

/// Whether an argument is optional, and its default, read as its type (a default makes it
/// optional).
fn optional_and_default(
    table: &toml::map::Map<String, toml::Value>,
    ty: &ArgType,
    type_name: &str,
    read: &ReadSettings,
    problem: &mut impl FnMut(String),
) -> (bool, Option<Meaning>) {
    let mut optional = match table.get("optional") {
        None => false,
        Some(toml::Value::Boolean(b)) => *b,
        Some(_) => {
            problem("`optional` is true or false".into());
            false
        }
    };
    let default = match table.get("default") {
        None => None,
        Some(d) => {
            optional = true;
            let json = match d {
                toml::Value::String(s) => serde_json::Value::from(s.as_str()),
                toml::Value::Integer(i) => serde_json::Value::from(*i),
                toml::Value::Float(f) => serde_json::Value::from(*f),
                toml::Value::Boolean(b) => serde_json::Value::from(*b),
                _ => serde_json::Value::Null,
            };
            match args::read(ty, &json, read) {
                Ok(Some(m)) => Some(m),
                _ => {
                    problem(format!("`default` is not a valid `{type_name}`"));
                    None
                }
            }
        }
    };
    (optional, default)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<ToolPolicy, Vec<(String, String)>> {
        ToolPolicy::from_toml(text)
    }

    #[test]
    fn amount_limits_take_their_unit_from_the_key() {
        let p = parse("[tools.send]\nmax_amount_bdt = 50000\napproval_above_bdt = 10000\n")
            .unwrap_or_default();
        let a = p.tools["send"].amount.clone();
        assert_eq!(
            a,
            Some(AmountLimit {
                unit: "BDT".into(),
                max: Some(50000.0),
                approval_above: Some(10000.0)
            })
        );
    }

    #[test]
    fn unknown_keys_mixed_units_and_bad_velocity_are_reported() {
        let e = parse(
            "[tools.send]\nmax_amount_bdt = 5\napproval_above_usd = 1\nmax_amonut = 3\n\
             [[velocity]]\nid = \"v\"\nscope = \"conversation\"\ncount = \"records\"\n\
             tool = \"nope\"\nwindow_seconds = 0\nmax = 0\n",
        )
        .err()
        .unwrap_or_default();
        let text = format!("{e:?}");
        for needle in [
            "one currency",
            "unknown key",
            "window_seconds",
            "max must",
            "`nope`",
            "record_arg",
        ] {
            assert!(text.contains(needle), "{needle} missing in {text}");
        }
    }

    #[test]
    fn no_tools_means_an_empty_allowlist() {
        let p = parse("").unwrap_or_default();
        assert!(p.tools.is_empty());
        assert_eq!(p.max_calls_per_round, 12);
        assert_eq!(p.store, StoreKind::Memory);
    }
}

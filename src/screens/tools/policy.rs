//! A product's tool policy, as data beside its screening rules (`policies/<product>.toml`):
//! which tools the agent may call, each tool's argument limits (units in the key names), which
//! tools are irreversible, the per-round cap, and the velocity limits.
//!
//! ```toml
//! [tool_gate]
//! max_calls_per_round = 12         # default 12
//! record_arg = "customer_id"       # the argument that names the record a call touches
//! store = "memory"                 # or "redis" (GUARD_REDIS_URL): limits across replicas
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
//! [[velocity]]
//! id = "transfers_per_conversation"
//! scope = "conversation"           # or "product"
//! count = "calls"                  # or "records" (distinct record_arg values), "outbound"
//! tool = "send_money"              # calls only; without it every tool is counted on its own
//! window_seconds = 600
//! max = 3
//! ```
//!
//! With no `[tools]` at all, every tool call is skipped: an agent gets tools by being given them.

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
    #[serde(flatten)]
    pub amounts: BTreeMap<String, toml::Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawVelocity {
    pub id: String,
    pub scope: Scope,
    pub count: Counted,
    #[serde(default)]
    pub tool: Option<String>,
    pub window_seconds: u64,
    pub max: u64,
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
}

#[derive(Debug, Clone)]
pub struct Velocity {
    pub id: String,
    pub scope: Scope,
    pub count: Counted,
    pub tool: Option<String>,
    pub window_ms: u64,
    pub max: u64,
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
        }
    }
}

impl ToolPolicy {
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
        policy.apply_gate(&gate, &mut problems);
        for (name, raw) in tools {
            match build_tool(&name, raw, gate.record_arg.as_deref()) {
                Ok(t) => {
                    policy.tools.insert(name, t);
                }
                Err(mut p) => problems.append(&mut p),
            }
        }
        let mut ids = std::collections::HashSet::new();
        for v in velocity {
            let built = policy.build_velocity(v, &mut ids, &mut problems);
            policy.velocity.push(built);
        }
        if problems.is_empty() {
            Ok(policy)
        } else {
            Err(problems)
        }
    }

    /// The `[tool_gate]` settings, each within its bounds.
    fn apply_gate(&mut self, gate: &RawToolGate, problems: &mut Vec<(String, String)>) {
        if let Some(n) = gate.max_calls_per_round {
            if n == 0 || n > 256 {
                problems.push((
                    "tool_gate.max_calls_per_round".into(),
                    "must be between 1 and 256".into(),
                ));
            }
            self.max_calls_per_round = n.clamp(1, 256);
        }
        self.store = match gate.store.as_deref() {
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
            self.dedupe_ttl_ms = s.clamp(1, 7 * 86_400) * 1000;
        }
        if let Some(ms) = gate.store_timeout_ms {
            if ms == 0 || ms > 10_000 {
                problems.push((
                    "tool_gate.store_timeout_ms".into(),
                    "must be between 1 and 10000".into(),
                ));
            }
            self.store_timeout_ms = ms.clamp(1, 10_000);
        }
    }

    /// One `[[velocity]]` window, checked against the tools already built.
    fn build_velocity(
        &self,
        v: RawVelocity,
        ids: &mut std::collections::HashSet<String>,
        problems: &mut Vec<(String, String)>,
    ) -> Velocity {
        let key = format!("velocity {}", v.id);
        if v.id.trim().is_empty() || !ids.insert(v.id.clone()) {
            problems.push((key.clone(), "needs a unique, non-empty id".into()));
        }
        if v.window_seconds == 0 || v.window_seconds > 7 * 86_400 {
            problems.push((
                key.clone(),
                "window_seconds must be between 1 and 604800".into(),
            ));
        }
        if v.max == 0 {
            problems.push((key.clone(), "max must be at least 1".into()));
        }
        if let Some(t) = &v.tool {
            if !self.tools.contains_key(t) {
                problems.push((key.clone(), format!("tool `{t}` is not in [tools]")));
            }
            if v.count == Counted::Outbound {
                problems.push((
                    key.clone(),
                    "`tool` applies to count = \"calls\" or \"records\"".into(),
                ));
            }
        }
        if v.count == Counted::Records && !self.tools.values().any(|t| t.record_arg.is_some()) {
            problems.push((
                key.clone(),
                "count = \"records\" needs a record_arg (in [tool_gate] or a tool)".into(),
            ));
        }
        if v.count == Counted::Outbound && !self.tools.values().any(|t| t.outbound) {
            problems.push((
                key.clone(),
                "count = \"outbound\" needs a tool with outbound = true".into(),
            ));
        }
        Velocity {
            id: v.id,
            scope: v.scope,
            count: v.count,
            tool: v.tool,
            window_ms: v.window_seconds.clamp(1, 7 * 86_400) * 1000,
            max: v.max.max(1),
        }
    }
}

fn build_tool(
    name: &str,
    raw: RawTool,
    record_arg: Option<&str>,
) -> Result<Tool, Vec<(String, String)>> {
    let mut problems = Vec::new();
    let key = |k: &str| format!("tools.{name}.{k}");
    if name.trim().is_empty() || name.len() > 128 {
        problems.push((key(""), "a tool name is 1 to 128 characters".into()));
    }
    let amount = amount_limit(&raw.amounts, &key, &mut problems);
    if raw.max_count == Some(0) || raw.max_range_days == Some(0) {
        problems.push((
            key("max_count / max_range_days"),
            "must be at least 1".into(),
        ));
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    let arg = |a: Option<String>, default: &str| a.unwrap_or_else(|| default.to_string());
    Ok(Tool {
        irreversible: raw.irreversible,
        outbound: raw.outbound,
        record_arg: raw.record_arg.or_else(|| record_arg.map(str::to_string)),
        amount_arg: arg(raw.amount_arg, "amount"),
        currency_arg: arg(raw.currency_arg, "currency"),
        amount,
        count_arg: arg(raw.count_arg, "count"),
        max_count: raw.max_count,
        from_arg: arg(raw.from_arg, "from"),
        to_arg: arg(raw.to_arg, "to"),
        max_range_days: raw.max_range_days,
    })
}

/// A tool's amount limits, from its `max_amount_<currency>` and `approval_above_<currency>`
/// keys (one currency per tool).
fn amount_limit(
    amounts: &BTreeMap<String, toml::Value>,
    key: &impl Fn(&str) -> String,
    problems: &mut Vec<(String, String)>,
) -> Option<AmountLimit> {
    let mut amount: Option<AmountLimit> = None;
    for (k, v) in amounts {
        let (field, unit) = if let Some(u) = k.strip_prefix("max_amount_") {
            ("max", u)
        } else if let Some(u) = k.strip_prefix("approval_above_") {
            ("approval", u)
        } else {
            problems.push((
                key(k),
                "unknown key (amount limits are `max_amount_<currency>` and `approval_above_<currency>`)".into(),
            ));
            continue;
        };
        let number = match v {
            toml::Value::Integer(i) if *i >= 0 => *i as f64,
            toml::Value::Float(f) if f.is_finite() && *f >= 0.0 => *f,
            _ => {
                problems.push((key(k), "must be a number, 0 or more".into()));
                continue;
            }
        };
        if unit.is_empty() || !unit.chars().all(|c| c.is_ascii_alphabetic()) {
            problems.push((key(k), "the unit is a currency code, e.g. `_bdt`".into()));
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
                key(k),
                format!(
                    "one currency per tool: this tool's limits are in {}",
                    limit.unit
                ),
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
                key("approval_above"),
                "must be below the tool's max_amount (or nothing ever needs approval)".into(),
            ));
        }
    }
    amount
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

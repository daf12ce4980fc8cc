//! Gate state: which calls of a turn already ran (dedupe) and the sliding windows of the
//! velocity limits. In process by default; in Redis when several replicas must hold one limit
//! between them. Both stores apply a whole round atomically and in order, with the same rules:
//!
//! for each call that passed the static checks, in order:
//! 1. an identical call (same tool, canonical arguments) already ran in this turn → `reuse` it;
//! 2. any velocity window would go over its limit → `velocity` (nothing is counted);
//! 3. otherwise count the call in every window and remember it for the turn → it may run, or,
//!    when a window's total went above its approval threshold, a person approves it.
//!
//! A window holds members (a call, a record, a message) with a weight each: 1, or an amount in
//! hundredths for an amount window. A count window's total is its number of members (a record
//! already in it is not new); an amount window keeps the running sum of its weights.
//!
//! The Redis store does all of it in one Lua script: one network round trip per round.
//!
//! A new kind of per-turn state (the turn's evidence, tool health, a question asked once) is a
//! new field of [`StateRound`] and of [`RoundOutcome`]: the in-process store keeps it beside
//! `calls` in its `Turn`, the script in its own field of the turn's hash (or its own key under
//! the same `{product}` hash tag), in the same atomic step.

use crate::turn::evidence::Evidence;
use crate::turn::health::{FailureWindow, HealthChange, HealthSettings};
use serde::Serialize;
use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// The in-process maps' hasher: window keys are ~100 bytes, looked up twice per window per
/// call, and SipHash over them was a tenth of a round. foldhash is seeded per process.
type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// What a window counts: a call (its round's nonce and position) or a record (a hash of its
/// kind and canonical id), as 128 bits: no string to allocate or compare per entry.
pub type Member = u128;

/// The member of a text (a record's kind and id): the first 128 bits of its SHA-256.
pub fn member_of(text: &str) -> Member {
    use sha2::{Digest, Sha256};
    let d = Sha256::digest(text.as_bytes());
    let mut b = [0u8; 16];
    b.copy_from_slice(&d[..16]);
    u128::from_be_bytes(b)
}

/// One window a call is counted in.
#[derive(Debug, Clone, Serialize)]
pub struct CounterOp {
    /// The window's key (product, scope, rule, tool or conversation, `per` value).
    pub key: String,
    pub window_ms: u64,
    /// The window's total may not go above it: over it, the call is refused (`velocity`).
    pub max: u64,
    /// Above it the call needs a person's approval (amount windows).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approval_above: Option<u64>,
    /// What is counted: a unique id per call, or the hashed ids of the records it touches.
    pub members: Vec<Member>,
    /// What each new member adds to the total: 1, or the call's amount in hundredths.
    pub weight: u64,
    /// An amount window (a running sum) rather than a count of distinct members.
    pub sum: bool,
    /// Index of the velocity rule in the product's policy.
    pub rule: usize,
}

/// A call that passed the static checks and now needs the state.
#[derive(Debug, Clone)]
pub struct Pending {
    pub id: String,
    pub hash: String,
    /// The tool's name: a call to a tool that is unavailable is not run.
    pub tool: String,
    pub ops: Vec<CounterOp>,
}

#[derive(Debug, Clone)]
pub struct StateRound {
    /// The key of this turn's dedupe record.
    pub turn_key: String,
    pub dedupe_ttl_ms: u64,
    pub calls: Vec<Pending>,
    /// The product's tool health, read in the same step (when health is on).
    pub health: Option<HealthRead>,
}

/// The product's tool health to read: one failure window per tool of the allowlist.
#[derive(Debug, Clone)]
pub struct HealthRead {
    /// (tool name, its hashed id, its window's key), in the allowlist's order.
    pub tools: Vec<(String, String, String)>,
    /// The set of tools last seen unavailable (Redis: so each change is reported once).
    pub down_key: String,
    pub settings: HealthSettings,
}

impl HealthRead {
    fn position(&self, tool: &str) -> Option<usize> {
        self.tools.iter().position(|(name, _, _)| name == tool)
    }
}

/// The product's tool health as one step of the store saw it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HealthState {
    /// The tools unavailable now, in the allowlist's order.
    pub unavailable: Vec<String>,
    /// The changes this step saw (each change is seen by exactly one step).
    pub changes: Vec<(String, HealthChange)>,
}

/// What the store answers for a round: one [`Settled`] per pending call, in order, and the
/// product's tool health.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RoundOutcome {
    pub calls: Vec<Settled>,
    pub health: HealthState,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Settled {
    /// Counted: the call may go ahead.
    Fresh,
    /// Counted, and the total of the amount window with this rule index went above its
    /// approval threshold: a person approves the call.
    Approval(usize),
    /// An identical call of this turn, by its id.
    Reuse(String),
    /// Over the velocity rule with this index.
    Velocity(usize),
    /// The tool is failing right now (its health window is full): not run, nothing counted.
    Unavailable,
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("the gate store is not configured (GUARD_REDIS_URL)")]
    NotConfigured,
    #[error("the gate store did not answer in time")]
    Timeout,
    #[error("the gate store failed: {0}")]
    Failed(String),
    #[error("the in-process gate store is full")]
    Full,
    /// The turn's evidence would go over its limit (what was over it).
    #[error("the turn's evidence is full: {0}")]
    TurnFull(String),
}

/// In-process state, bounded: expired windows and turns are swept when the key count reaches
/// the bound; if the live ones still fill it, the gate fails closed rather than forget a limit.
pub struct MemoryStore {
    pub(super) state: Mutex<MemState>,
    max_keys: usize,
}

#[derive(Default)]
pub(super) struct MemState {
    windows: FastMap<String, Window>,
    pub(super) turns: FastMap<String, Turn>,
    /// Each turn's evidence: (expires, evidence).
    pub(super) evidence: FastMap<String, (u64, Evidence)>,
    /// Each turn's asked-once memory: (expires, answer hash, kept).
    pub(super) asks: FastMap<String, (u64, String, Option<bool>)>,
    /// Each tool's failure window, by key.
    pub(super) health: FastMap<String, FailureWindow>,
}

impl MemState {
    fn keys(&self) -> usize {
        self.windows.len()
            + self.turns.len()
            + self.evidence.len()
            + self.asks.len()
            + self.health.len()
    }

    /// Room for a new key: expired ones swept when the bound is reached; still full, the
    /// store fails closed rather than forget a limit.
    pub(super) fn make_room(&mut self, now_ms: u64, max_keys: usize) -> Result<(), StoreError> {
        if self.keys() < max_keys {
            return Ok(());
        }
        self.windows.retain(|_, w| w.expires > now_ms);
        self.turns.retain(|_, t| t.expires > now_ms);
        self.evidence.retain(|_, (e, _)| *e > now_ms);
        self.asks.retain(|_, (e, _, _)| *e > now_ms);
        // A failure window is dropped once empty; its settings are not known here, so one
        // with failures in the last day is kept.
        let day = HealthSettings {
            failures: 1,
            window_ms: 86_400_000,
        };
        self.health.retain(|_, w| !w.expired(now_ms, &day));
        if self.keys() >= max_keys {
            return Err(StoreError::Full);
        }
        Ok(())
    }

    /// The product's tool health at `now_ms`, each change seen once.
    pub(super) fn read_health(&mut self, read: &HealthRead, now_ms: u64) -> HealthState {
        let mut out = HealthState::default();
        for (name, _, key) in &read.tools {
            let Some(w) = self.health.get_mut(key) else {
                continue;
            };
            let (failing, change) = w.observe(now_ms, &read.settings);
            if failing {
                out.unavailable.push(name.clone());
            }
            if let Some(c) = change {
                out.changes.push((name.clone(), c));
            }
        }
        out
    }

    /// A failure of `key`'s tool at `now_ms`.
    pub(super) fn fail(&mut self, key: &str, now_ms: u64, s: &HealthSettings) {
        self.health
            .entry(key.to_string())
            .or_default()
            .fail(now_ms, s);
    }
}

#[derive(Default)]
struct Window {
    expires: u64,
    /// (time in ms, member, weight), oldest first.
    entries: VecDeque<(u64, Member, u64)>,
    /// The weights of `entries` added up.
    total: u64,
}

impl Window {
    /// Drop what the window no longer covers.
    fn slide(&mut self, now_ms: u64, window_ms: u64) {
        let (entries, total) = (&mut self.entries, &mut self.total);
        entries.retain(|(t, _, w)| {
            let keep = t + window_ms > now_ms;
            if !keep {
                *total = total.saturating_sub(*w);
            }
            keep
        });
    }

    /// The total if this op's new members were added (members already in a count window are
    /// not new).
    fn total_with(&self, op: &CounterOp) -> u64 {
        let present = |m: &Member| self.entries.iter().any(|(_, e, _)| e == m);
        let new = match op.members.as_slice() {
            _ if op.sum => op.members.len() as u64,
            [one] => u64::from(!present(one)),
            many => {
                let mut fresh: Vec<&Member> = many.iter().filter(|m| !present(m)).collect();
                fresh.sort_unstable();
                fresh.dedup();
                fresh.len() as u64
            }
        };
        self.total.saturating_add(new.saturating_mul(op.weight))
    }

    fn add(&mut self, op: &CounterOp, now_ms: u64) {
        for m in &op.members {
            if !op.sum {
                // A record touched again moves to now; it is still one record.
                if let Some(i) = self.entries.iter().position(|(_, e, _)| e == m) {
                    if let Some((_, _, w)) = self.entries.remove(i) {
                        self.total = self.total.saturating_sub(w);
                    }
                }
            }
            self.entries.push_back((now_ms, *m, op.weight));
            self.total = self.total.saturating_add(op.weight);
        }
        self.expires = self.expires.max(now_ms + op.window_ms);
    }
}

pub(super) struct Turn {
    pub(super) expires: u64,
    /// Call hash → call id: the calls the gate let go ahead this turn.
    pub(super) calls: FastMap<String, String>,
}

/// Calls remembered per turn at most (beyond it dedupe stops remembering; limits still hold).
const MAX_CALLS_PER_TURN: usize = 4096;

impl MemoryStore {
    pub fn new(max_keys: usize) -> Self {
        MemoryStore {
            state: Mutex::new(MemState::default()),
            max_keys: max_keys.max(16),
        }
    }

    /// The bound on keys (windows, turns, evidence, health).
    pub(super) fn max_keys(&self) -> usize {
        self.max_keys
    }

    pub fn apply(&self, round: &StateRound, now_ms: u64) -> Result<RoundOutcome, StoreError> {
        let mut state = self.state.lock().map_err(|_| StoreError::Full)?;
        state.make_room(now_ms, self.max_keys)?;
        let health = match &round.health {
            Some(read) => state.read_health(read, now_ms),
            None => HealthState::default(),
        };
        let mut out = Vec::with_capacity(round.calls.len());
        for call in &round.calls {
            let earlier = state
                .turns
                .get(&round.turn_key)
                .filter(|t| t.expires > now_ms)
                .and_then(|t| t.calls.get(&call.hash))
                .cloned();
            if let Some(id) = earlier {
                out.push(Settled::Reuse(id));
                continue;
            }
            if health.unavailable.contains(&call.tool) {
                out.push(Settled::Unavailable);
                continue;
            }
            let mut over = None;
            let mut approval = None;
            for op in &call.ops {
                let (before, total) = match state.windows.get_mut(&op.key) {
                    Some(w) => {
                        w.slide(now_ms, op.window_ms);
                        (w.total, w.total_with(op))
                    }
                    None => (0, Window::default().total_with(op)),
                };
                if total > op.max && total > before {
                    over = Some(op.rule);
                    break;
                }
                if approval.is_none() && op.approval_above.is_some_and(|a| total > a) {
                    approval = Some(op.rule);
                }
            }
            if let Some(rule) = over {
                out.push(Settled::Velocity(rule));
                continue;
            }
            for op in &call.ops {
                match state.windows.get_mut(&op.key) {
                    Some(w) => w.add(op, now_ms),
                    None => {
                        let mut w = Window::default();
                        w.add(op, now_ms);
                        state.windows.insert(op.key.clone(), w);
                    }
                }
            }
            let turn = state.turns.entry(round.turn_key.clone()).or_insert(Turn {
                expires: 0,
                calls: FastMap::default(),
            });
            if turn.expires <= now_ms {
                turn.calls.clear();
            }
            turn.expires = now_ms + round.dedupe_ttl_ms;
            if turn.calls.len() < MAX_CALLS_PER_TURN {
                turn.calls.insert(call.hash.clone(), call.id.clone());
            }
            out.push(match approval {
                Some(rule) => Settled::Approval(rule),
                None => Settled::Fresh,
            });
        }
        Ok(RoundOutcome { calls: out, health })
    }
}

/// The head of every script that reads tool health: `now` from the Redis server's clock (so
/// replicas agree on it), and `read_health(h)`: for each tool of `h` (`keys`: the KEYS index of
/// its failure window, a sorted set of failure → time in ms; `ids`: its hashed name), the
/// failures older than the window dropped, and the tool `unhealthy` when `failures` or more are
/// left. A change against the set of tools last seen down (`KEYS[h.down]`) is reported once,
/// by the step that saw it: `down:<j>` or `up:<j>`; every unhealthy tool is `unhealthy:<j>`
/// (1-based, in `h`'s order).
macro_rules! lua_health {
    () => {
        r#"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local unhealthy = {}
local health_out = {}
local function read_health(h)
  for j, k in ipairs(h.keys) do
    local key = KEYS[k]
    redis.call('ZREMRANGEBYSCORE', key, '-inf', now - h.window_ms)
    local failing = redis.call('ZCARD', key) >= h.failures
    local was = redis.call('SISMEMBER', KEYS[h.down], h.ids[j]) == 1
    if failing then
      unhealthy[j] = true
      health_out[#health_out + 1] = 'unhealthy:' .. j
      if not was then
        redis.call('SADD', KEYS[h.down], h.ids[j])
        health_out[#health_out + 1] = 'down:' .. j
      end
    elseif was then
      redis.call('SREM', KEYS[h.down], h.ids[j])
      health_out[#health_out + 1] = 'up:' .. j
    end
  end
end
"#
    };
}

/// The round in Redis: KEYS[1] is the turn's hash (call hash → id), the rest are sorted sets
/// (member → time in ms) and, for amount windows, the string holding the window's running sum
/// (its members are `<id>:<weight>`). Time comes from the Redis server, so replicas agree on
/// it.
///
/// With `round.health`, the product's tool health is read first (see [`lua_health`]): a call
/// to a tool that is failing is `unavailable` (after dedupe: a duplicate still reuses its
/// earlier result), and the health markers follow the calls' answers.
const ROUND_SCRIPT: &str = concat!(
    lua_health!(),
    r#"
local round = cjson.decode(ARGV[1])
local out = {}
if round.health then read_health(round.health) end
local function weight_of(m)
  return tonumber(string.match(m, ':(%d+)$')) or 0
end
-- The window's total now, after dropping what it no longer covers.
local function total(op)
  local key = KEYS[op.key]
  local horizon = now - op.window_ms
  if op.sum then
    local skey = KEYS[op.sum]
    local s = redis.call('GET', skey)
    if not s then
      -- No sum (expired or new): rebuilt from the members still in the window.
      redis.call('ZREMRANGEBYSCORE', key, '-inf', horizon)
      local n = 0
      for _, m in ipairs(redis.call('ZRANGE', key, 0, -1)) do n = n + weight_of(m) end
      return n
    end
    local n = tonumber(s)
    local old = redis.call('ZRANGEBYSCORE', key, '-inf', horizon)
    if #old > 0 then
      for _, m in ipairs(old) do n = n - weight_of(m) end
      redis.call('ZREMRANGEBYSCORE', key, '-inf', horizon)
      if n < 0 then n = 0 end
      redis.call('SET', skey, n, 'KEEPTTL')
    end
    return n
  end
  redis.call('ZREMRANGEBYSCORE', key, '-inf', horizon)
  return redis.call('ZCARD', key)
end
for i, c in ipairs(round.calls) do
  local res = false
  local approval = false
  local prev = redis.call('HGET', KEYS[1], c.hash)
  if prev then
    res = 'reuse:' .. prev
  elseif c.tool and unhealthy[c.tool] then
    res = 'unavailable'
  else
    for _, op in ipairs(c.ops) do
      local before = total(op)
      local new = 0
      if op.sum then
        new = #op.members
      else
        local seen = {}
        for _, m in ipairs(op.members) do
          if not seen[m] and not redis.call('ZSCORE', KEYS[op.key], m) then new = new + 1 end
          seen[m] = true
        end
      end
      local after = before + new * op.weight
      if after > op.max and after > before then
        res = 'velocity:' .. op.rule
        break
      end
      if not approval and op.approval_above and after > op.approval_above then
        approval = 'approve:' .. op.rule
      end
    end
  end
  if not res then
    for _, op in ipairs(c.ops) do
      local key = KEYS[op.key]
      if op.sum then
        local skey = KEYS[op.sum]
        local n = total(op)
        for _, m in ipairs(op.members) do
          redis.call('ZADD', key, now, m .. ':' .. op.weight)
          n = n + op.weight
        end
        redis.call('SET', skey, n, 'PX', op.window_ms)
      else
        for _, m in ipairs(op.members) do redis.call('ZADD', key, now, m) end
      end
      if redis.call('PTTL', key) < op.window_ms then
        redis.call('PEXPIRE', key, op.window_ms)
      end
    end
    redis.call('HSET', KEYS[1], c.hash, c.id)
    redis.call('PEXPIRE', KEYS[1], round.ttl)
    res = approval or 'run'
  end
  out[i] = res
end
for _, e in ipairs(health_out) do out[#out + 1] = e end
return out
"#
);

/// State in Redis, shared by every replica that points at the same server.
pub struct RedisStore {
    client: redis::Client,
    conn: OnceLock<redis::aio::ConnectionManager>,
    script: redis::Script,
    /// The turn's other steps (evidence, results, the asked-once memory): `super::turn`.
    pub(super) results_script: redis::Script,
    pub(super) ask_script: redis::Script,
}

#[derive(Serialize)]
struct WireOp {
    key: usize,
    /// The index of the running sum's key (amount windows).
    #[serde(skip_serializing_if = "Option::is_none")]
    sum: Option<usize>,
    window_ms: u64,
    max: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    approval_above: Option<u64>,
    members: Vec<String>,
    weight: u64,
    rule: usize,
}

#[derive(Serialize)]
struct WireCall<'a> {
    id: &'a str,
    hash: &'a str,
    /// The 1-based position of its tool in `health.ids`, when health is read.
    #[serde(skip_serializing_if = "Option::is_none")]
    tool: Option<usize>,
    ops: Vec<WireOp>,
}

#[derive(Serialize)]
struct WireRound<'a> {
    ttl: u64,
    calls: Vec<WireCall<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    health: Option<WireHealth<'a>>,
}

/// What `read_health` reads (see [`lua_health`]).
#[derive(Serialize)]
pub(super) struct WireHealth<'a> {
    pub keys: Vec<usize>,
    pub ids: Vec<&'a str>,
    pub down: usize,
    pub failures: u32,
    pub window_ms: u64,
}

impl<'a> WireHealth<'a> {
    /// `read`'s keys placed in the script's KEYS (through `slot`).
    pub(super) fn of(
        read: &'a HealthRead,
        keys: &mut Vec<&'a str>,
        index: &mut HashMap<&'a str, usize>,
    ) -> Self {
        WireHealth {
            keys: read
                .tools
                .iter()
                .map(|(_, _, k)| slot(keys, index, k.as_str()))
                .collect(),
            ids: read.tools.iter().map(|(_, id, _)| id.as_str()).collect(),
            down: slot(keys, index, read.down_key.as_str()),
            failures: read.settings.failures,
            window_ms: read.settings.window_ms,
        }
    }
}

/// The health markers a script answered after its own answers (`unhealthy:<j>`, `down:<j>`,
/// `up:<j>`), read against `read`.
pub(super) fn parse_health(
    read: &HealthRead,
    markers: &[String],
) -> Result<HealthState, StoreError> {
    let mut out = HealthState::default();
    for m in markers {
        let (what, j) = m
            .split_once(':')
            .and_then(|(w, j)| Some((w, j.parse::<usize>().ok()?)))
            .ok_or_else(|| StoreError::Failed(format!("unexpected answer `{m}`")))?;
        let name = j
            .checked_sub(1)
            .and_then(|j| read.tools.get(j))
            .map(|(name, _, _)| name.clone())
            .ok_or_else(|| StoreError::Failed(format!("unexpected answer `{m}`")))?;
        match what {
            "unhealthy" => out.unavailable.push(name),
            "down" => out.changes.push((name, HealthChange::Unavailable)),
            "up" => out.changes.push((name, HealthChange::Available)),
            _ => return Err(StoreError::Failed(format!("unexpected answer `{m}`"))),
        }
    }
    Ok(out)
}

impl RedisStore {
    pub fn new(url: &str) -> Result<Self, StoreError> {
        let client = redis::Client::open(url).map_err(|e| StoreError::Failed(e.to_string()))?;
        Ok(RedisStore {
            client,
            conn: OnceLock::new(),
            script: redis::Script::new(ROUND_SCRIPT),
            results_script: redis::Script::new(RESULTS_SCRIPT),
            ask_script: redis::Script::new(ASK_SCRIPT),
        })
    }

    /// The connection, made on first use (inside the runtime) and reconnected by the manager.
    pub(super) fn connection(
        &self,
        timeout: Duration,
    ) -> Result<redis::aio::ConnectionManager, StoreError> {
        if let Some(c) = self.conn.get() {
            return Ok(c.clone());
        }
        let config = redis::aio::ConnectionManagerConfig::new()
            .set_connection_timeout(Some(timeout))
            .set_response_timeout(Some(timeout))
            .set_number_of_retries(1)
            .set_max_delay(Duration::from_millis(500));
        let conn = redis::aio::ConnectionManager::new_lazy_with_config(self.client.clone(), config)
            .map_err(|e| StoreError::Failed(e.to_string()))?;
        Ok(self.conn.get_or_init(|| conn).clone())
    }

    pub async fn apply(
        &self,
        round: &StateRound,
        timeout: Duration,
    ) -> Result<RoundOutcome, StoreError> {
        // The sum keys are made here, so they are kept beside the round while `keys` borrows.
        let sum_keys: Vec<String> = round
            .calls
            .iter()
            .flat_map(|c| c.ops.iter())
            .filter(|op| op.sum)
            .map(|op| format!("{}:sum", op.key))
            .collect();
        let mut sums = sum_keys.iter();
        let mut keys: Vec<&str> = vec![&round.turn_key];
        let mut index: HashMap<&str, usize> = HashMap::new();
        let calls = round
            .calls
            .iter()
            .map(|c| WireCall {
                id: &c.id,
                hash: &c.hash,
                tool: round
                    .health
                    .as_ref()
                    .and_then(|h| h.position(&c.tool))
                    .map(|j| j + 1),
                ops: c
                    .ops
                    .iter()
                    .map(|op| {
                        let key = slot(&mut keys, &mut index, op.key.as_str());
                        let sum = if op.sum {
                            sums.next().map(|k| slot(&mut keys, &mut index, k.as_str()))
                        } else {
                            None
                        };
                        WireOp {
                            key,
                            sum,
                            window_ms: op.window_ms,
                            max: op.max,
                            approval_above: op.approval_above,
                            members: op.members.iter().map(|m| format!("{m:032x}")).collect(),
                            weight: op.weight,
                            rule: op.rule,
                        }
                    })
                    .collect(),
            })
            .collect();
        let health = round
            .health
            .as_ref()
            .map(|h| WireHealth::of(h, &mut keys, &mut index));
        let wire = WireRound {
            ttl: round.dedupe_ttl_ms,
            calls,
            health,
        };
        let argv = serde_json::to_string(&wire).map_err(|e| StoreError::Failed(e.to_string()))?;
        let mut conn = self.connection(timeout)?;
        let mut invocation = self.script.prepare_invoke();
        for k in &keys {
            invocation.key(*k);
        }
        invocation.arg(argv);
        let answer: Vec<String> = tokio::time::timeout(timeout, invocation.invoke_async(&mut conn))
            .await
            .map_err(|_| StoreError::Timeout)?
            .map_err(|e| StoreError::Failed(e.to_string()))?;
        if answer.len() < round.calls.len() {
            return Err(StoreError::Failed(
                "the script answered for the wrong number of calls".into(),
            ));
        }
        let (calls, markers) = answer.split_at(round.calls.len());
        let health = match &round.health {
            Some(read) => parse_health(read, markers)?,
            None if markers.is_empty() => HealthState::default(),
            None => return Err(StoreError::Failed("unexpected health answers".into())),
        };
        Ok(RoundOutcome {
            calls: calls
                .iter()
                .map(|a| parse_settled(a))
                .collect::<Result<_, _>>()?,
            health,
        })
    }
}

/// The 1-based position of `key` in the script's KEYS, added when new.
pub(super) fn slot<'a>(
    keys: &mut Vec<&'a str>,
    index: &mut HashMap<&'a str, usize>,
    key: &'a str,
) -> usize {
    *index.entry(key).or_insert_with(|| {
        keys.push(key);
        keys.len()
    })
}

/// The script's answer for one call; anything else is a failure (the gate fails closed).
fn parse_settled(a: &str) -> Result<Settled, StoreError> {
    if a == "run" {
        return Ok(Settled::Fresh);
    }
    if let Some(id) = a.strip_prefix("reuse:") {
        return Ok(Settled::Reuse(id.to_string()));
    }
    if let Some(rule) = a.strip_prefix("velocity:").and_then(|r| r.parse().ok()) {
        return Ok(Settled::Velocity(rule));
    }
    if let Some(rule) = a.strip_prefix("approve:").and_then(|r| r.parse().ok()) {
        return Ok(Settled::Approval(rule));
    }
    if a == "unavailable" {
        return Ok(Settled::Unavailable);
    }
    Err(StoreError::Failed(format!("unexpected answer `{a}`")))
}

/// A batch of results in Redis. KEYS[1] is the turn's calls (call hash → id), KEYS[2] the
/// turn's evidence (a hash: `n` = results kept, `f:<figure>` and `i:<identifier>` fields), the
/// rest the health windows (see [`lua_health`]). Over a limit, nothing is written. The answer:
/// `ok`, the ids' known bits (`1`/`0`), the results kept, the number of evidence fields and
/// the fields, then the health markers.
pub(super) const RESULTS_SCRIPT: &str = concat!(
    lua_health!(),
    r#"
local b = cjson.decode(ARGV[1])
local known = {}
if #b.ids > 0 then
  local seen = {}
  for _, v in ipairs(redis.call('HVALS', KEYS[1])) do seen[v] = true end
  for i, id in ipairs(b.ids) do known[i] = seen[id] and '1' or '0' end
end
local n = tonumber(redis.call('HGET', KEYS[2], 'n') or '0')
if n + b.results > b.max_results then return {'full:results'} end
local fresh = 0
for _, f in ipairs(b.entries) do
  if redis.call('HEXISTS', KEYS[2], f) == 0 then fresh = fresh + 1 end
end
local have = redis.call('HLEN', KEYS[2])
if redis.call('HEXISTS', KEYS[2], 'n') == 1 then have = have - 1 end
if have + fresh > b.max_entries then return {'full:entries'} end
for _, f in ipairs(b.entries) do redis.call('HSET', KEYS[2], f, '1') end
n = redis.call('HINCRBY', KEYS[2], 'n', b.results)
redis.call('PEXPIRE', KEYS[2], b.ttl)
if b.health then
  for i, j in ipairs(b.failures) do
    local key = KEYS[b.health.keys[j]]
    redis.call('ZADD', key, now, b.member .. ':' .. i)
    redis.call('ZREMRANGEBYRANK', key, 0, -(b.health.failures + 1))
    redis.call('PEXPIRE', key, b.health.window_ms)
  end
  read_health(b.health)
end
local out = {'ok', table.concat(known), tostring(n)}
local fields = redis.call('HKEYS', KEYS[2])
out[#out + 1] = tostring(#fields)
for _, f in ipairs(fields) do out[#out + 1] = f end
for _, e in ipairs(health_out) do out[#out + 1] = e end
return out
"#
);

/// The once-per-turn question in Redis: KEYS[1] is the turn's hash (`h` = the answer's hash,
/// `kept`), ARGV the answer's hash and the turn's lifetime in ms.
pub(super) const ASK_SCRIPT: &str = r#"
if redis.call('HSETNX', KEYS[1], 'h', ARGV[1]) == 1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {'first'}
end
local v = redis.call('HMGET', KEYS[1], 'h', 'kept')
return {'asked', v[1] or '', v[2] or ''}
"#;

#[cfg(test)]
mod tests {
    use super::*;

    fn op(key: &str, max: u64, member: &str) -> CounterOp {
        CounterOp {
            key: key.into(),
            window_ms: 60_000,
            max,
            approval_above: None,
            members: vec![member_of(member)],
            weight: 1,
            sum: false,
            rule: 0,
        }
    }

    fn round(calls: Vec<Pending>) -> StateRound {
        StateRound {
            turn_key: "t".into(),
            dedupe_ttl_ms: 3_600_000,
            calls,
            health: None,
        }
    }

    #[test]
    fn the_window_slides_with_the_clock() {
        let s = MemoryStore::new(100);
        let call = |id: &str| Pending {
            id: id.into(),
            hash: id.into(),
            tool: "t".into(),
            ops: vec![op("w", 2, id)],
        };
        let r = round(vec![call("a"), call("b"), call("c")]);
        let got = s.apply(&r, 1_000).unwrap_or_default().calls;
        assert_eq!(
            got,
            vec![Settled::Fresh, Settled::Fresh, Settled::Velocity(0)]
        );
        // 59 s later the first two are still in the window; 61 s later they are not.
        let r = StateRound {
            turn_key: "t2".into(),
            ..round(vec![call("d")])
        };
        assert_eq!(
            s.apply(&r, 60_000).unwrap_or_default().calls,
            vec![Settled::Velocity(0)]
        );
        let r = StateRound {
            turn_key: "t3".into(),
            ..round(vec![call("e")])
        };
        assert_eq!(
            s.apply(&r, 61_001).unwrap_or_default().calls,
            vec![Settled::Fresh]
        );
    }

    #[test]
    fn a_record_touched_again_is_not_a_new_record() {
        let s = MemoryStore::new(100);
        let call = |id: &str, record: &str| Pending {
            id: id.into(),
            hash: id.into(),
            tool: "t".into(),
            ops: vec![op("records", 2, record)],
        };
        let r = round(vec![
            call("a", "cust-1"),
            call("b", "cust-2"),
            call("c", "cust-1"),
            call("d", "cust-3"),
        ]);
        assert_eq!(
            s.apply(&r, 0).unwrap_or_default().calls,
            vec![
                Settled::Fresh,
                Settled::Fresh,
                Settled::Fresh,
                Settled::Velocity(0)
            ]
        );
    }

    #[test]
    fn a_full_store_fails_closed() {
        let s = MemoryStore::new(16);
        for i in 0..16 {
            let r = StateRound {
                turn_key: format!("turn{i}"),
                ..round(vec![])
            };
            let _ = s.apply(&r, 0);
            let r = StateRound {
                turn_key: format!("turn{i}"),
                ..round(vec![Pending {
                    id: "x".into(),
                    hash: "x".into(),
                    tool: "t".into(),
                    ops: vec![],
                }])
            };
            let _ = s.apply(&r, 0);
        }
        let r = round(vec![]);
        assert!(matches!(s.apply(&r, 1), Err(StoreError::Full)));
        // Once the turns expire, the sweep makes room again.
        assert!(s.apply(&r, 3_600_001).is_ok());
    }

    #[test]
    fn unexpected_script_answers_fail() {
        assert!(parse_settled("ok").is_err());
        assert!(parse_settled("velocity:x").is_err());
        assert_eq!(
            parse_settled("reuse:c1").ok(),
            Some(Settled::Reuse("c1".into()))
        );
    }
}

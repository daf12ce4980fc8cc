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
    pub ops: Vec<CounterOp>,
}

#[derive(Debug, Clone)]
pub struct StateRound {
    /// The key of this turn's dedupe record.
    pub turn_key: String,
    pub dedupe_ttl_ms: u64,
    pub calls: Vec<Pending>,
}

/// What the store answers for a round: one [`Settled`] per pending call, in order.
pub type RoundOutcome = Vec<Settled>;

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
}

/// In-process state, bounded: expired windows and turns are swept when the key count reaches
/// the bound; if the live ones still fill it, the gate fails closed rather than forget a limit.
pub struct MemoryStore {
    state: Mutex<MemState>,
    max_keys: usize,
}

#[derive(Default)]
struct MemState {
    windows: FastMap<String, Window>,
    turns: FastMap<String, Turn>,
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

struct Turn {
    expires: u64,
    calls: FastMap<String, String>,
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

    pub fn apply(&self, round: &StateRound, now_ms: u64) -> Result<RoundOutcome, StoreError> {
        let mut state = self.state.lock().map_err(|_| StoreError::Full)?;
        if state.windows.len() + state.turns.len() >= self.max_keys {
            state.windows.retain(|_, w| w.expires > now_ms);
            state.turns.retain(|_, t| t.expires > now_ms);
            if state.windows.len() + state.turns.len() >= self.max_keys {
                return Err(StoreError::Full);
            }
        }
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
        Ok(out)
    }
}

/// The round in Redis: KEYS[1] is the turn's hash (call hash → id), the rest are sorted sets
/// (member → time in ms) and, for amount windows, the string holding the window's running sum
/// (its members are `<id>:<weight>`). Time comes from the Redis server, so replicas agree on
/// it.
const ROUND_SCRIPT: &str = r#"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local round = cjson.decode(ARGV[1])
local out = {}
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
return out
"#;

/// State in Redis, shared by every replica that points at the same server.
pub struct RedisStore {
    client: redis::Client,
    conn: OnceLock<redis::aio::ConnectionManager>,
    script: redis::Script,
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
    ops: Vec<WireOp>,
}

#[derive(Serialize)]
struct WireRound<'a> {
    ttl: u64,
    calls: Vec<WireCall<'a>>,
}

impl RedisStore {
    pub fn new(url: &str) -> Result<Self, StoreError> {
        let client = redis::Client::open(url).map_err(|e| StoreError::Failed(e.to_string()))?;
        Ok(RedisStore {
            client,
            conn: OnceLock::new(),
            script: redis::Script::new(ROUND_SCRIPT),
        })
    }

    /// The connection, made on first use (inside the runtime) and reconnected by the manager.
    fn connection(&self, timeout: Duration) -> Result<redis::aio::ConnectionManager, StoreError> {
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
        let wire = WireRound {
            ttl: round.dedupe_ttl_ms,
            calls,
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
        if answer.len() != round.calls.len() {
            return Err(StoreError::Failed(
                "the script answered for the wrong number of calls".into(),
            ));
        }
        answer.iter().map(|a| parse_settled(a)).collect()
    }
}

/// The 1-based position of `key` in the script's KEYS, added when new.
fn slot<'a>(keys: &mut Vec<&'a str>, index: &mut HashMap<&'a str, usize>, key: &'a str) -> usize {
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
    Err(StoreError::Failed(format!("unexpected answer `{a}`")))
}

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
        }
    }

    #[test]
    fn the_window_slides_with_the_clock() {
        let s = MemoryStore::new(100);
        let call = |id: &str| Pending {
            id: id.into(),
            hash: id.into(),
            ops: vec![op("w", 2, id)],
        };
        let r = round(vec![call("a"), call("b"), call("c")]);
        let got = s.apply(&r, 1_000).unwrap_or_default();
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
            s.apply(&r, 60_000).unwrap_or_default(),
            vec![Settled::Velocity(0)]
        );
        let r = StateRound {
            turn_key: "t3".into(),
            ..round(vec![call("e")])
        };
        assert_eq!(
            s.apply(&r, 61_001).unwrap_or_default(),
            vec![Settled::Fresh]
        );
    }

    #[test]
    fn a_record_touched_again_is_not_a_new_record() {
        let s = MemoryStore::new(100);
        let call = |id: &str, record: &str| Pending {
            id: id.into(),
            hash: id.into(),
            ops: vec![op("records", 2, record)],
        };
        let r = round(vec![
            call("a", "cust-1"),
            call("b", "cust-2"),
            call("c", "cust-1"),
            call("d", "cust-3"),
        ]);
        assert_eq!(
            s.apply(&r, 0).unwrap_or_default(),
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

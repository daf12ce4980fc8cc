//! Gate state: which calls of a turn already ran (dedupe) and the sliding windows of the
//! velocity limits. In process by default; in Redis when several replicas must hold one limit
//! between them. Both stores apply a whole round atomically and in order, with the same rules:
//!
//! for each call that passed the static checks, in order:
//! 1. an identical call (same tool, canonical arguments) already ran in this turn → `reuse` it;
//! 2. any velocity window would go over its limit → `velocity` (nothing is counted);
//! 3. otherwise count the call in every window and remember it for the turn → it may run.
//!
//! The Redis store does all of it in one Lua script: one network round trip per round.

use serde::Serialize;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// One window a call is counted in.
#[derive(Debug, Clone, Serialize)]
pub struct CounterOp {
    /// The window's key (product, scope, rule, tool or conversation).
    pub key: String,
    pub window_ms: u64,
    pub max: u64,
    /// What is counted: a unique id per call, or the hashed record id for distinct records.
    pub member: String,
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

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Settled {
    /// Counted: the call may go ahead.
    Fresh,
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
    windows: HashMap<String, Window>,
    turns: HashMap<String, Turn>,
}

struct Window {
    expires: u64,
    /// (time in ms, member), oldest first.
    entries: Vec<(u64, String)>,
}

struct Turn {
    expires: u64,
    calls: HashMap<String, String>,
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

    pub fn apply(&self, round: &StateRound, now_ms: u64) -> Result<Vec<Settled>, StoreError> {
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
            for op in &call.ops {
                if let Some(w) = state.windows.get_mut(&op.key) {
                    w.entries.retain(|(t, _)| t + op.window_ms > now_ms);
                    let present = w.entries.iter().any(|(_, m)| *m == op.member);
                    if !present && w.entries.len() as u64 >= op.max {
                        over = Some(op.rule);
                        break;
                    }
                } else if op.max == 0 {
                    over = Some(op.rule);
                    break;
                }
            }
            if let Some(rule) = over {
                out.push(Settled::Velocity(rule));
                continue;
            }
            for op in &call.ops {
                let w = state.windows.entry(op.key.clone()).or_insert(Window {
                    expires: 0,
                    entries: Vec::new(),
                });
                w.entries.retain(|(_, m)| *m != op.member);
                w.entries.push((now_ms, op.member.clone()));
                w.expires = w.expires.max(now_ms + op.window_ms);
            }
            let turn = state.turns.entry(round.turn_key.clone()).or_insert(Turn {
                expires: 0,
                calls: HashMap::new(),
            });
            if turn.expires <= now_ms {
                turn.calls.clear();
            }
            turn.expires = now_ms + round.dedupe_ttl_ms;
            if turn.calls.len() < MAX_CALLS_PER_TURN {
                turn.calls.insert(call.hash.clone(), call.id.clone());
            }
            out.push(Settled::Fresh);
        }
        Ok(out)
    }
}

/// The round in Redis: KEYS[1] is the turn's hash (call hash → id), the rest are sorted sets
/// (member → time in ms). Time comes from the Redis server, so replicas agree on it.
const ROUND_SCRIPT: &str = r#"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local round = cjson.decode(ARGV[1])
local out = {}
for i, c in ipairs(round.calls) do
  local res = false
  local prev = redis.call('HGET', KEYS[1], c.hash)
  if prev then
    res = 'reuse:' .. prev
  else
    for _, op in ipairs(c.ops) do
      local key = KEYS[op.key]
      redis.call('ZREMRANGEBYSCORE', key, '-inf', now - op.window_ms)
      if not redis.call('ZSCORE', key, op.member) then
        if redis.call('ZCARD', key) >= op.max then
          res = 'velocity:' .. op.rule
          break
        end
      end
    end
  end
  if not res then
    for _, op in ipairs(c.ops) do
      local key = KEYS[op.key]
      redis.call('ZADD', key, now, op.member)
      if redis.call('PTTL', key) < op.window_ms then
        redis.call('PEXPIRE', key, op.window_ms)
      end
    end
    redis.call('HSET', KEYS[1], c.hash, c.id)
    redis.call('PEXPIRE', KEYS[1], round.ttl)
    res = 'run'
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
struct WireOp<'a> {
    key: usize,
    window_ms: u64,
    max: u64,
    member: &'a str,
    rule: usize,
}

#[derive(Serialize)]
struct WireCall<'a> {
    id: &'a str,
    hash: &'a str,
    ops: Vec<WireOp<'a>>,
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
    ) -> Result<Vec<Settled>, StoreError> {
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
                        let key = *index.entry(op.key.as_str()).or_insert_with(|| {
                            keys.push(&op.key);
                            keys.len()
                        });
                        WireOp {
                            key,
                            window_ms: op.window_ms,
                            max: op.max,
                            member: &op.member,
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
            member: member.into(),
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

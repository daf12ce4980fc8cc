//! The turn's state beyond its calls, in the gate's stores (in process or in Redis, as the
//! product's `[tool_gate] store` says), under the gate's keys (the product as a hash tag, the
//! conversation and the turn hashed) and with the turn's lifetime (`turn_ttl_seconds`):
//!
//! - **the turn's evidence** ([`Evidence`]): what its tool results stated, added by
//!   `POST /v1/tool-results` ([`Stores::keep_results`], [`Stores::add_evidence`]) and read by
//!   the lookup check of the answer ([`Stores::evidence`]);
//! - **which results belong to a call the gate let go ahead**: a result's id is looked up among
//!   the calls the gate remembered for the turn (the dedupe record: calls it answered `run` or
//!   `needs_approval`); any other id is an `unknown_call`;
//! - **per-tool health**: failed results feed each tool's failure window
//!   ([`crate::turn::health`]), read in the same step;
//! - **the once-per-turn model question** ([`Stores::ask_once`], [`Stores::settle_ask`]): the
//!   first caller for a turn gets [`AskOnce::First`], atomically, whichever replica it reaches.
//!
//! Each is one atomic step: one lock in process, one script (or one command) in Redis. Redis
//! holds the turn's figures and identifiers in clear (card numbers only as their last four),
//! for the turn's lifetime only.

use super::policy::{StoreKind, ToolPolicy};
use super::rules::{hash, key, nonce};
use super::store::{
    parse_health, HealthRead, HealthState, MemoryStore, RedisStore, StoreError, WireHealth,
};
use super::{health_read, turn_key, Stores};
use crate::turn::evidence::Evidence;
use serde::Serialize;
use std::collections::HashMap;
use std::time::Duration;

/// Results one turn keeps at most: more is refused (`turn_evidence_full`).
pub const MAX_RESULTS_PER_TURN: u32 = 256;
/// Figures and identifiers one turn keeps at most (together): more is refused.
pub const MAX_EVIDENCE_ENTRIES_PER_TURN: usize = 8_192;

/// The once-per-turn question's memory (the lookup check's own type: the stores answer it).
pub use crate::turn::lookup::AskOnce;

/// One request's tool results, for the state: each result's id, the evidence they add and the
/// tools that failed.
#[derive(Debug, Clone, Default)]
pub struct ResultsBatch {
    pub conversation: String,
    pub turn: String,
    /// Every result's id, in order (looked up among the turn's calls).
    pub ids: Vec<String>,
    /// What the results stated (only those whose text the model is handed).
    pub evidence: Evidence,
    /// The tool of each failed result (`ok: false`), when it is on the allowlist.
    pub failures: Vec<String>,
}

/// What the state said of a batch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeptResults {
    /// Per id: a call of this turn the gate let go ahead.
    pub known: Vec<bool>,
    /// The turn's evidence with this batch's added.
    pub evidence: Evidence,
    /// The product's tool health after the batch's failures.
    pub health: HealthState,
}

fn evidence_key(product: &str, conversation: &str, turn: &str) -> String {
    key(product, &["evidence", &hash(conversation), &hash(turn)])
}

fn ask_key(product: &str, conversation: &str, turn: &str) -> String {
    key(product, &["ask", &hash(conversation), &hash(turn)])
}

impl Stores {
    /// The store the product's policy names: the in-process one, or Redis (`NotConfigured`
    /// when the policy says Redis and `GUARD_REDIS_URL` is not set).
    fn redis_for(&self, policy: &ToolPolicy) -> Result<Option<&RedisStore>, StoreError> {
        match policy.store {
            StoreKind::Memory => Ok(None),
            StoreKind::Redis => self
                .redis
                .as_ref()
                .map(Some)
                .ok_or(StoreError::NotConfigured),
        }
    }

    /// A batch of tool results, in one atomic step: their ids looked up among the turn's
    /// calls, their evidence added to the turn's, their failures counted in each tool's window,
    /// and the product's tool health read. `now_ms` is the in-process store's clock (Redis
    /// uses its own). Over the turn's limits: `TurnFull`, and nothing is kept.
    pub async fn keep_results(
        &self,
        policy: &ToolPolicy,
        product: &str,
        batch: &ResultsBatch,
        now_ms: u64,
    ) -> Result<KeptResults, StoreError> {
        let keys = TurnKeys::of(product, &batch.conversation, &batch.turn);
        let health = health_read(product, policy);
        let timeout = Duration::from_millis(policy.store_timeout_ms);
        match self.redis_for(policy)? {
            None => self
                .memory
                .keep_results(&keys, batch, health.as_ref(), policy, now_ms),
            Some(r) => {
                r.keep_results(&keys, batch, health.as_ref(), policy, timeout)
                    .await
            }
        }
    }

    /// The turn's evidence (empty when nothing was kept, or the turn's lifetime is over).
    pub async fn evidence(
        &self,
        policy: &ToolPolicy,
        product: &str,
        conversation: &str,
        turn: &str,
    ) -> Result<Evidence, StoreError> {
        let key = evidence_key(product, conversation, turn);
        match self.redis_for(policy)? {
            None => self.memory.evidence(&key, super::now_ms()),
            Some(r) => {
                r.evidence(&key, Duration::from_millis(policy.store_timeout_ms))
                    .await
            }
        }
    }

    /// `delta` added to the turn's evidence; the turn's evidence after it.
    pub async fn add_evidence(
        &self,
        policy: &ToolPolicy,
        product: &str,
        conversation: &str,
        turn: &str,
        delta: &Evidence,
    ) -> Result<Evidence, StoreError> {
        let batch = ResultsBatch {
            conversation: conversation.to_string(),
            turn: turn.to_string(),
            evidence: delta.clone(),
            ..ResultsBatch::default()
        };
        let mut quiet = policy.clone();
        // Evidence alone reads no health.
        quiet.health.failures = 0;
        Ok(self
            .keep_results(&quiet, product, &batch, super::now_ms())
            .await?
            .evidence)
    }

    /// Atomic: the first caller for a turn gets `First` (and the turn remembers `answer_hash`).
    pub async fn ask_once(
        &self,
        policy: &ToolPolicy,
        product: &str,
        conversation: &str,
        turn: &str,
        answer_hash: &str,
    ) -> Result<AskOnce, StoreError> {
        let key = ask_key(product, conversation, turn);
        match self.redis_for(policy)? {
            None => self
                .memory
                .ask_once(&key, answer_hash, policy.turn_ttl_ms, super::now_ms()),
            Some(r) => r.ask_once(&key, answer_hash, policy).await,
        }
    }

    /// The question's answer, remembered for the turn (`kept` = the model said a clear "no").
    pub async fn settle_ask(
        &self,
        policy: &ToolPolicy,
        product: &str,
        conversation: &str,
        turn: &str,
        kept: bool,
    ) -> Result<(), StoreError> {
        let key = ask_key(product, conversation, turn);
        match self.redis_for(policy)? {
            None => self
                .memory
                .settle_ask(&key, kept, policy.turn_ttl_ms, super::now_ms()),
            Some(r) => r.settle_ask(&key, kept, policy).await,
        }
    }
}

/// The keys of one turn's state.
pub struct TurnKeys {
    calls: String,
    evidence: String,
}

impl TurnKeys {
    fn of(product: &str, conversation: &str, turn: &str) -> Self {
        TurnKeys {
            calls: turn_key(product, conversation, turn),
            evidence: evidence_key(product, conversation, turn),
        }
    }
}

/// The turn's evidence with `delta` added, or why not (over a limit).
fn within_limits(mut merged: Evidence, delta: &Evidence) -> Result<Evidence, StoreError> {
    merged.merge(delta);
    if merged.results > MAX_RESULTS_PER_TURN {
        return Err(StoreError::TurnFull(format!(
            "a turn keeps at most {MAX_RESULTS_PER_TURN} results"
        )));
    }
    if merged.entries() > MAX_EVIDENCE_ENTRIES_PER_TURN {
        return Err(StoreError::TurnFull(format!(
            "a turn keeps at most {MAX_EVIDENCE_ENTRIES_PER_TURN} figures and identifiers"
        )));
    }
    Ok(merged)
}

impl MemoryStore {
    fn keep_results(
        &self,
        keys: &TurnKeys,
        batch: &ResultsBatch,
        health: Option<&HealthRead>,
        policy: &ToolPolicy,
        now_ms: u64,
    ) -> Result<KeptResults, StoreError> {
        let mut state = self.state.lock().map_err(|_| StoreError::Full)?;
        state.make_room(now_ms, self.max_keys())?;
        let calls = state.turns.get(&keys.calls).filter(|t| t.expires > now_ms);
        let known = batch
            .ids
            .iter()
            .map(|id| calls.is_some_and(|t| t.calls.values().any(|v| v == id)))
            .collect();
        let current = state
            .evidence
            .get(&keys.evidence)
            .filter(|(expires, _)| *expires > now_ms)
            .map(|(_, e)| e.clone())
            .unwrap_or_default();
        let merged = within_limits(current, &batch.evidence)?;
        state.evidence.insert(
            keys.evidence.clone(),
            (now_ms + policy.turn_ttl_ms, merged.clone()),
        );
        let health = match health {
            Some(read) => {
                for tool in &batch.failures {
                    if let Some((_, _, k)) = read.tools.iter().find(|(n, _, _)| n == tool) {
                        state.fail(k, now_ms, &read.settings);
                    }
                }
                state.read_health(read, now_ms)
            }
            None => HealthState::default(),
        };
        Ok(KeptResults {
            known,
            evidence: merged,
            health,
        })
    }

    fn evidence(&self, key: &str, now_ms: u64) -> Result<Evidence, StoreError> {
        let state = self.state.lock().map_err(|_| StoreError::Full)?;
        Ok(state
            .evidence
            .get(key)
            .filter(|(expires, _)| *expires > now_ms)
            .map(|(_, e)| e.clone())
            .unwrap_or_default())
    }

    fn ask_once(
        &self,
        key: &str,
        answer_hash: &str,
        ttl_ms: u64,
        now_ms: u64,
    ) -> Result<AskOnce, StoreError> {
        let mut state = self.state.lock().map_err(|_| StoreError::Full)?;
        if let Some((expires, h, kept)) = state.asks.get(key) {
            if *expires > now_ms {
                return Ok(AskOnce::Asked {
                    answer_hash: h.clone(),
                    kept: *kept,
                });
            }
        }
        state.make_room(now_ms, self.max_keys())?;
        state.asks.insert(
            key.to_string(),
            (now_ms + ttl_ms, answer_hash.to_string(), None),
        );
        Ok(AskOnce::First)
    }

    fn settle_ask(
        &self,
        key: &str,
        kept: bool,
        ttl_ms: u64,
        now_ms: u64,
    ) -> Result<(), StoreError> {
        let mut state = self.state.lock().map_err(|_| StoreError::Full)?;
        match state.asks.get_mut(key).filter(|(e, _, _)| *e > now_ms) {
            Some(entry) => entry.2 = Some(kept),
            None => {
                // Settled without having been asked here (its memory expired): remembered, so
                // the turn still does not ask again.
                state.make_room(now_ms, self.max_keys())?;
                state.asks.insert(
                    key.to_string(),
                    (now_ms + ttl_ms, String::new(), Some(kept)),
                );
            }
        }
        Ok(())
    }
}

#[derive(Serialize)]
struct WireBatch<'a> {
    ids: &'a [String],
    results: u32,
    entries: Vec<String>,
    max_results: u32,
    max_entries: usize,
    ttl: u64,
    /// The 1-based position in `health` of each failed result's tool.
    failures: Vec<usize>,
    member: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    health: Option<WireHealth<'a>>,
}

/// The evidence of a Redis hash's field names.
fn evidence_of_fields<'a>(fields: impl Iterator<Item = &'a str>, results: u32) -> Evidence {
    let mut e = Evidence {
        results,
        ..Evidence::default()
    };
    for f in fields {
        if let Some(fig) = f.strip_prefix("f:") {
            e.figures.insert(fig.to_string());
        } else if let Some(id) = f.strip_prefix("i:") {
            e.identifiers.insert(id.to_string());
        }
    }
    e
}

fn failed(e: impl std::fmt::Display) -> StoreError {
    StoreError::Failed(e.to_string())
}

impl RedisStore {
    async fn keep_results(
        &self,
        keys: &TurnKeys,
        batch: &ResultsBatch,
        health: Option<&HealthRead>,
        policy: &ToolPolicy,
        timeout: Duration,
    ) -> Result<KeptResults, StoreError> {
        let mut script_keys: Vec<&str> = vec![&keys.calls, &keys.evidence];
        let mut index: HashMap<&str, usize> = HashMap::new();
        index.insert(&keys.calls, 1);
        index.insert(&keys.evidence, 2);
        let wire_health = health.map(|h| WireHealth::of(h, &mut script_keys, &mut index));
        let failures = match health {
            Some(h) => batch
                .failures
                .iter()
                .filter_map(|t| h.tools.iter().position(|(n, _, _)| n == t))
                .map(|j| j + 1)
                .collect(),
            None => Vec::new(),
        };
        let e = &batch.evidence;
        let entries = e
            .figures
            .iter()
            .map(|f| format!("f:{f}"))
            .chain(e.identifiers.iter().map(|i| format!("i:{i}")))
            .collect();
        let wire = WireBatch {
            ids: &batch.ids,
            results: e.results,
            entries,
            max_results: MAX_RESULTS_PER_TURN,
            max_entries: MAX_EVIDENCE_ENTRIES_PER_TURN,
            ttl: policy.turn_ttl_ms,
            failures,
            member: format!("{:032x}", nonce()),
            health: wire_health,
        };
        let argv = serde_json::to_string(&wire).map_err(failed)?;
        let mut conn = self.connection(timeout)?;
        let mut invocation = self.results_script.prepare_invoke();
        for k in &script_keys {
            invocation.key(*k);
        }
        invocation.arg(argv);
        let answer: Vec<String> = tokio::time::timeout(timeout, invocation.invoke_async(&mut conn))
            .await
            .map_err(|_| StoreError::Timeout)?
            .map_err(failed)?;
        parse_kept(&answer, batch.ids.len(), health)
    }

    async fn evidence(&self, key: &str, timeout: Duration) -> Result<Evidence, StoreError> {
        let mut conn = self.connection(timeout)?;
        let cmd = redis::cmd("HGETALL").arg(key).to_owned();
        let map: HashMap<String, String> =
            tokio::time::timeout(timeout, cmd.query_async(&mut conn))
                .await
                .map_err(|_| StoreError::Timeout)?
                .map_err(failed)?;
        let results = map.get("n").and_then(|n| n.parse().ok()).unwrap_or(0);
        Ok(evidence_of_fields(map.keys().map(String::as_str), results))
    }

    async fn ask_once(
        &self,
        key: &str,
        answer_hash: &str,
        policy: &ToolPolicy,
    ) -> Result<AskOnce, StoreError> {
        let timeout = Duration::from_millis(policy.store_timeout_ms);
        let mut conn = self.connection(timeout)?;
        let mut invocation = self.ask_script.prepare_invoke();
        invocation.key(key).arg(answer_hash).arg(policy.turn_ttl_ms);
        let answer: Vec<String> = tokio::time::timeout(timeout, invocation.invoke_async(&mut conn))
            .await
            .map_err(|_| StoreError::Timeout)?
            .map_err(failed)?;
        match answer.as_slice() {
            [first] if first == "first" => Ok(AskOnce::First),
            [asked, h, kept] if asked == "asked" => Ok(AskOnce::Asked {
                answer_hash: h.clone(),
                kept: match kept.as_str() {
                    "1" => Some(true),
                    "0" => Some(false),
                    _ => None,
                },
            }),
            _ => Err(StoreError::Failed("unexpected answer to ask_once".into())),
        }
    }

    async fn settle_ask(
        &self,
        key: &str,
        kept: bool,
        policy: &ToolPolicy,
    ) -> Result<(), StoreError> {
        let timeout = Duration::from_millis(policy.store_timeout_ms);
        let mut conn = self.connection(timeout)?;
        let pipe = redis::pipe()
            .atomic()
            .hset(key, "kept", if kept { "1" } else { "0" })
            .ignore()
            .pexpire(key, policy.turn_ttl_ms as i64)
            .ignore()
            .to_owned();
        let () = tokio::time::timeout(timeout, pipe.query_async(&mut conn))
            .await
            .map_err(|_| StoreError::Timeout)?
            .map_err(failed)?;
        Ok(())
    }
}

/// The results script's answer (see [`super::store::RESULTS_SCRIPT`]); anything unexpected is a failure.
fn parse_kept(
    answer: &[String],
    ids: usize,
    health: Option<&HealthRead>,
) -> Result<KeptResults, StoreError> {
    let unexpected = || StoreError::Failed("unexpected answer to the results script".into());
    match answer.first().map(String::as_str) {
        Some("ok") => {}
        Some("full:results") => {
            return Err(StoreError::TurnFull(format!(
                "a turn keeps at most {MAX_RESULTS_PER_TURN} results"
            )))
        }
        Some("full:entries") => {
            return Err(StoreError::TurnFull(format!(
                "a turn keeps at most {MAX_EVIDENCE_ENTRIES_PER_TURN} figures and identifiers"
            )))
        }
        _ => return Err(unexpected()),
    }
    let bits = answer.get(1).ok_or_else(unexpected)?;
    let known: Vec<bool> = if ids == 0 {
        Vec::new()
    } else {
        bits.bytes().map(|b| b == b'1').collect()
    };
    if known.len() != ids {
        return Err(unexpected());
    }
    let results = answer
        .get(2)
        .and_then(|n| n.parse().ok())
        .ok_or_else(unexpected)?;
    let count: usize = answer
        .get(3)
        .and_then(|n| n.parse().ok())
        .ok_or_else(unexpected)?;
    let fields = answer.get(4..4 + count).ok_or_else(unexpected)?;
    let evidence = evidence_of_fields(fields.iter().map(String::as_str), results);
    let markers = &answer[4 + count..];
    let health = match health {
        Some(read) => parse_health(read, markers)?,
        None if markers.is_empty() => HealthState::default(),
        None => return Err(unexpected()),
    };
    Ok(KeptResults {
        known,
        evidence,
        health,
    })
}

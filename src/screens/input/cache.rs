//! The verdict cache: bounded, with a TTL, keyed by everything that can change a verdict.
//!
//! Key = SHA-256 of (product, `config_rev`, normalised text), where the normalised text is
//! [`crate::text::normalise`]'s output (NFC, trimmed, spaces collapsed, line breaks kept): every stage
//! screens exactly that form, so two questions with the same key get the same verdict. Case is
//! not folded: a remote model may read it. Fail-open and fail-closed verdicts are never stored
//! (the pipeline hands them back as `Err`, which `try_get_with` does not cache).

use crate::obs::metrics::Metrics;
use crate::verdict::{Outcome, Reason, Stage, TraceEntry, Verdict};
use moka::future::Cache;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

pub type CacheKey = [u8; 32];

/// Cache settings of one product (`[cache]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheSettings {
    pub enabled: bool,
    pub max_entries: u64,
    pub ttl: std::time::Duration,
}

/// A cache entry and when it was made: its TTL runs from then (moka's does too), which
/// [`Recent`] needs to expire its copies no later than the entry.
#[derive(Clone)]
pub struct Cached {
    pub created: Instant,
    pub entry: Arc<[u8]>,
}

/// Entries are verdicts in a compact binary form ([`encode`], `postcard`) without the product's reply and
/// `config_rev` (the key pins both): one allocation of ~150 bytes instead of a dozen small ones,
/// which keeps 100,000 cached verdicts under 100 MB of RSS.
#[derive(Clone)]
pub struct VerdictCache {
    pub inner: Cache<CacheKey, Cached>,
    pub ttl: std::time::Duration,
}

impl VerdictCache {
    pub fn new(product: &str, settings: &CacheSettings, metrics: &Metrics) -> Self {
        let metrics = metrics.clone();
        let product = product.to_string();
        let inner = Cache::builder()
            .max_capacity(settings.max_entries)
            .time_to_live(settings.ttl)
            .eviction_listener(move |_k, _v, cause| {
                if cause.was_evicted() {
                    metrics.record_eviction(&product);
                }
            })
            .build();
        VerdictCache {
            inner,
            ttl: settings.ttl,
        }
    }

    pub fn key(product: &str, config_rev: &str, normalised: &str) -> CacheKey {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        h.update(product.as_bytes());
        h.update([0]);
        h.update(config_rev.as_bytes());
        h.update([0]);
        h.update(normalised.as_bytes());
        h.finalize().into()
    }
}

/// What a cached verdict keeps: reason, stage, language, score, categories and the trace
/// without timings. `reply`, `config_rev`, `request_id` and `fail_mode` are not stored
/// (fail-mode verdicts are never cached; the others come from the product and the request).
#[derive(serde::Serialize, serde::Deserialize)]
struct Entry {
    reason: Reason,
    stage: Stage,
    language: String,
    score: Option<f32>,
    categories: Vec<String>,
    trace: Vec<(Stage, Outcome, Option<String>)>,
}

/// Encode a verdict as a cache entry (`postcard`: enum variants as one-byte indices, strings
/// length-prefixed).
pub fn encode(v: &Verdict) -> Arc<[u8]> {
    let entry = Entry {
        reason: v.reason,
        stage: v.stage,
        language: v.language.clone(),
        score: v.score,
        categories: v.categories.clone(),
        trace: v
            .trace
            .iter()
            .map(|t| (t.stage, t.outcome, t.detail.clone()))
            .collect(),
    };
    postcard::to_allocvec(&entry).unwrap_or_default().into()
}

/// The inverse of [`encode`], with `cached: true` and zero timings; `None` on a malformed entry.
pub fn decode(bytes: &[u8]) -> Option<Verdict> {
    let e: Entry = postcard::from_bytes(bytes).ok()?;
    Some(Verdict {
        decision: e.reason.decision(),
        reason: e.reason,
        stage: e.stage,
        language: e.language,
        reply: None,
        categories: e.categories,
        score: e.score,
        cached: true,
        fail_mode: None,
        config_rev: String::new(),
        request_id: None,
        trace: e
            .trace
            .into_iter()
            .map(|(stage, outcome, detail)| TraceEntry {
                stage,
                outcome,
                micros: 0,
                detail,
            })
            .collect(),
    })
}

/// A cached verdict as the HTTP API answers it: the verdict and its JSON (no request id),
/// serialised once.
#[derive(Debug)]
pub struct Answer {
    pub verdict: Verdict,
    pub json: bytes::Bytes,
    /// When the cache entry it was read from expires.
    pub expires: Instant,
    /// Its audit line but for latency and time, written on its first answer.
    pub audit: std::sync::OnceLock<crate::obs::audit::PreparedLine>,
}

/// Answers kept per thread (each HTTP worker is one thread).
const RECENT_MAX: usize = 256;

thread_local! {
    static RECENT: RefCell<Recent> = RefCell::new(Recent::default());
}

/// The answers this thread last read from the cache, by product and the question exactly as
/// sent: a repeated question is answered without normalising it, hashing the key, looking it
/// up in moka, decoding the entry or serialising the verdict. Copies never outlive the entry
/// they came from (same expiry), belong to one loaded configuration (`generation`; a reload
/// starts afresh), and are dropped all at once when [`RECENT_MAX`] is reached. The questions
/// stay in memory only, as they do while being screened.
#[derive(Default)]
pub struct Recent {
    generation: u64,
    answers: HashMap<String, HashMap<Box<str>, Arc<Answer>>>,
}

impl Recent {
    /// The answer kept for this question, if it has not expired.
    pub fn get(generation: u64, product: &str, text: &str, now: Instant) -> Option<Arc<Answer>> {
        RECENT.with(|recent| {
            let recent = recent.try_borrow().ok()?;
            if recent.generation != generation {
                return None;
            }
            let answer = recent.answers.get(product)?.get(text)?;
            (now < answer.expires).then(|| answer.clone())
        })
    }

    pub fn keep(generation: u64, product: &str, text: &str, answer: Arc<Answer>) {
        RECENT.with(|recent| {
            let Ok(mut recent) = recent.try_borrow_mut() else {
                return;
            };
            if recent.generation != generation || recent.len() >= RECENT_MAX {
                *recent = Recent {
                    generation,
                    ..Recent::default()
                };
            }
            // Runs only on a cache hit this thread has not kept yet, so copying the product's
            // name for the look-up costs nothing that matters.
            recent
                .answers
                .entry(product.to_string())
                .or_default()
                .insert(text.into(), answer);
        })
    }

    fn len(&self) -> usize {
        self.answers.values().map(HashMap::len).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::Decision;

    fn sample() -> Verdict {
        Verdict {
            decision: Decision::Block,
            reason: Reason::Unsafe,
            stage: Stage::Guard,
            language: "bn".into(),
            reply: None,
            categories: vec!["S2: Non-Violent Crimes".into(), "ধরন".into()],
            score: Some(0.93),
            cached: false,
            fail_mode: None,
            config_rev: String::new(),
            request_id: None,
            trace: vec![
                TraceEntry {
                    stage: Stage::Script,
                    outcome: Outcome::Accept,
                    micros: 3,
                    detail: Some("bengali=12 latin=0".into()),
                },
                TraceEntry {
                    stage: Stage::Signatures,
                    outcome: Outcome::Pass,
                    micros: 9,
                    detail: None,
                },
                TraceEntry {
                    stage: Stage::Guard,
                    outcome: Outcome::Block,
                    micros: 20,
                    detail: Some("p_unsafe=0.930".into()),
                },
            ],
        }
    }

    #[test]
    fn encode_decode_roundtrip() {
        let v = sample();
        let bytes = encode(&v);
        assert!(bytes.len() < 120, "{}", bytes.len());
        let back = decode(&bytes);
        let mut want = v.clone();
        want.cached = true;
        for t in &mut want.trace {
            t.micros = 0;
        }
        assert_eq!(back, Some(want));
        assert_eq!(decode(&bytes[..bytes.len() - 1]), None);
        assert_eq!(decode(&[]), None);
    }

    /// Kept answers belong to one configuration, expire with their entry, and are dropped
    /// together at the cap, so a flood of distinct questions cannot grow them.
    #[test]
    fn recent_answers_are_bounded_and_scoped() {
        let now = Instant::now();
        let answer = |expires| {
            Arc::new(Answer {
                verdict: decode(&encode(&sample())).unwrap_or_else(|| panic!("decodes")),
                json: bytes::Bytes::from_static(b"{}"),
                expires,
                audit: Default::default(),
            })
        };
        let later = now + std::time::Duration::from_secs(60);
        Recent::keep(7, "p", "hello", answer(later));
        assert!(Recent::get(7, "p", "hello", now).is_some());
        assert!(
            Recent::get(7, "q", "hello", now).is_none(),
            "another product"
        );
        assert!(Recent::get(7, "p", "hello ", now).is_none(), "another text");
        assert!(
            Recent::get(8, "p", "hello", now).is_none(),
            "another configuration"
        );
        assert!(Recent::get(7, "p", "hello", later).is_none(), "expired");
        Recent::keep(8, "p", "other", answer(later));
        assert!(Recent::get(7, "p", "hello", now).is_none());
        assert!(
            Recent::get(8, "p", "hello", now).is_none(),
            "a new configuration starts afresh"
        );
        for i in 0..RECENT_MAX {
            Recent::keep(8, "p", &format!("q{i}"), answer(later));
        }
        let kept = RECENT.with(|r| r.borrow().len());
        assert!(kept <= RECENT_MAX, "{kept}");
        assert!(
            Recent::get(8, "p", "other", now).is_none(),
            "dropped at the cap"
        );
        assert!(Recent::get(8, "p", &format!("q{}", RECENT_MAX - 1), now).is_some());
    }
}

//! The verdict cache: bounded, with a TTL, keyed by everything that can change a verdict.
//!
//! Key = SHA-256 of (product, `config_rev`, normalised text), where the normalised text is
//! [`crate::text::normalise`]'s output (NFC, trimmed, spaces collapsed, line breaks kept): every stage
//! screens exactly that form, so two questions with the same key get the same verdict. Case is
//! not folded: a remote model may read it. Fail-open and fail-closed verdicts are never stored
//! (the pipeline hands them back as `Err`, which `try_get_with` does not cache).

use super::records::InputMetrics;
use crate::verdict::{Outcome, Reason, Stage, TraceEntry, Verdict};
use moka::future::Cache;
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
/// [`Recent`](super::answer::Recent) needs to expire its copies no later than the entry.
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
    pub fn new(product: &str, settings: &CacheSettings, metrics: &InputMetrics) -> Self {
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
}

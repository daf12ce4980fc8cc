//! The verdict cache: bounded, with a TTL, keyed by everything that can change a verdict.
//!
//! Key = SHA-256 of (product, `config_rev`, normalised text), where the normalised text is
//! [`crate::text::normalise`]'s output (NFC, trimmed, whitespace runs collapsed): every stage
//! screens exactly that form, so two questions with the same key get the same verdict. Case is
//! not folded: a remote model may read it. Fail-open and fail-closed verdicts are never stored
//! (the pipeline hands them back as `Err`, which `try_get_with` does not cache).

use crate::config::CacheSettings;
use crate::metrics::Metrics;
use crate::verdict::{Outcome, Reason, Stage, TraceEntry, Verdict};
use moka::future::Cache;
use std::sync::Arc;

pub type CacheKey = [u8; 32];

/// Entries are verdicts in a compact binary form ([`encode`]) without the product's reply and
/// `config_rev` (the key pins both): one allocation of ~150 bytes instead of a dozen small ones,
/// which keeps 100,000 cached verdicts under 100 MB of RSS.
#[derive(Clone)]
pub struct VerdictCache {
    pub inner: Cache<CacheKey, Arc<[u8]>>,
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
        VerdictCache { inner }
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

fn index_of<T: PartialEq>(all: &[T], x: &T) -> u8 {
    all.iter().position(|a| a == x).unwrap_or(0) as u8
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    let bytes = &s.as_bytes()[..s.len().min(u16::MAX as usize - 1)];
    out.extend_from_slice(&(bytes.len() as u16).to_le_bytes());
    out.extend_from_slice(bytes);
}

/// Encode what a cached verdict needs: reason, stage, language, categories, score and the trace.
/// `reply`, `config_rev`, `request_id` and `fail_mode` are not stored (fail-mode verdicts are
/// never cached; the others come from the product and the request).
pub fn encode(v: &Verdict) -> Arc<[u8]> {
    let mut out = Vec::with_capacity(128);
    out.push(index_of(&Reason::ALL, &v.reason));
    out.push(index_of(&Stage::ALL, &v.stage));
    put_str(&mut out, &v.language);
    match v.score {
        Some(s) => {
            out.push(1);
            out.extend_from_slice(&s.to_le_bytes());
        }
        None => out.push(0),
    }
    out.push(v.categories.len().min(255) as u8);
    for c in v.categories.iter().take(255) {
        put_str(&mut out, c);
    }
    out.push(v.trace.len().min(255) as u8);
    for t in v.trace.iter().take(255) {
        out.push(index_of(&Stage::ALL, &t.stage));
        out.push(index_of(&Outcome::ALL, &t.outcome));
        match &t.detail {
            Some(d) => put_str(&mut out, d),
            None => out.extend_from_slice(&u16::MAX.to_le_bytes()),
        }
    }
    out.into()
}

/// The inverse of [`encode`], with `cached: true` and zero timings; `None` on a malformed entry.
pub fn decode(bytes: &[u8]) -> Option<Verdict> {
    let mut r = Reader { bytes, at: 0 };
    let reason = *Reason::ALL.get(r.u8()? as usize)?;
    let stage = *Stage::ALL.get(r.u8()? as usize)?;
    let language = r.string()?;
    let score = match r.u8()? {
        0 => None,
        _ => Some(f32::from_le_bytes(r.take(4)?.try_into().ok()?)),
    };
    let categories = (0..r.u8()?)
        .map(|_| r.string())
        .collect::<Option<Vec<_>>>()?;
    let mut trace = Vec::new();
    for _ in 0..r.u8()? {
        let stage = *Stage::ALL.get(r.u8()? as usize)?;
        let outcome = *Outcome::ALL.get(r.u8()? as usize)?;
        let detail = r.optional_string()?;
        trace.push(TraceEntry {
            stage,
            outcome,
            micros: 0,
            detail,
        });
    }
    Some(Verdict {
        decision: reason.decision(),
        reason,
        stage,
        language,
        reply: None,
        categories,
        score,
        cached: true,
        fail_mode: None,
        config_rev: String::new(),
        request_id: None,
        trace,
    })
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let slice = self.bytes.get(self.at..self.at + n)?;
        self.at += n;
        Some(slice)
    }
    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }
    fn len(&mut self) -> Option<u16> {
        self.take(2).map(|b| u16::from_le_bytes([b[0], b[1]]))
    }
    fn string(&mut self) -> Option<String> {
        let n = self.len()? as usize;
        String::from_utf8(self.take(n)?.to_vec()).ok()
    }
    fn optional_string(&mut self) -> Option<Option<String>> {
        match self.len()? {
            u16::MAX => Some(None),
            n => Some(Some(
                String::from_utf8(self.take(n as usize)?.to_vec()).ok()?,
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::Decision;

    #[test]
    fn encode_decode_roundtrip() {
        let v = Verdict {
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
        };
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

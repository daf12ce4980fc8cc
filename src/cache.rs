//! The verdict cache: bounded, with a TTL, keyed by everything that can change a verdict.
//!
//! Key = SHA-256 of (product, `config_rev`, normalised text), where the normalised text is
//! [`crate::text::normalise`]'s output (NFC, trimmed, whitespace runs collapsed): every stage
//! screens exactly that form, so two questions with the same key get the same verdict. Case is
//! not folded: a remote model may read it. Fail-open and fail-closed verdicts are never stored
//! (the pipeline hands them back as `Err`, which `try_get_with` does not cache).

use crate::config::CacheSettings;
use crate::metrics::Metrics;
use crate::verdict::Verdict;
use moka::future::Cache;
use std::sync::Arc;

pub type CacheKey = [u8; 32];

#[derive(Clone)]
pub struct VerdictCache {
    pub inner: Cache<CacheKey, Arc<Verdict>>,
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

//! Built matchers shared across loads by content. A reload, `check-config` or a second
//! configuration directory with the same wordlists reuses the aho-corasick automata already
//! built (the signature lists take most of a load) instead of building them again. The last few
//! builds are kept (a handful of megabytes), so a reload back and forth reuses them too.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// Builds kept per kind of matcher.
const KEEP: usize = 4;

pub(super) type Memo<T> = OnceLock<Mutex<HashMap<String, (Arc<T>, u64)>>>;

pub(super) static LEXICONS: Memo<crate::screens::input::stages::banglish::Lexicon> =
    OnceLock::new();
pub(super) static SIGNATURES: Memo<crate::screens::input::stages::signatures::Signatures> =
    OnceLock::new();

/// The value built from what `parts` name (hashed together, each length-prefixed: the lists'
/// names and their files' digests, so equal keys mean equal contents). Errors are not kept: a
/// broken list is reported on every load.
pub(super) fn shared<T, E>(
    memo: &'static Memo<T>,
    parts: &[&str],
    build: impl FnOnce() -> Result<T, E>,
) -> Result<Arc<T>, E> {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p.as_bytes());
    }
    let key = hex::encode(h.finalize());
    let map = memo.get_or_init(|| Mutex::new(HashMap::new()));
    static TICK: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let tick = TICK.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    if let Ok(mut m) = map.lock() {
        if let Some((hit, used)) = m.get_mut(&key) {
            *used = tick;
            return Ok(hit.clone());
        }
    }
    // Built outside the lock: two loads racing build twice, and both results are correct.
    let built = Arc::new(build()?);
    if let Ok(mut m) = map.lock() {
        m.insert(key, (built.clone(), tick));
        while m.len() > KEEP {
            let oldest = m
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(k, _)| k.clone());
            match oldest {
                Some(k) => m.remove(&k),
                None => break,
            };
        }
    }
    Ok(built)
}

//! Built matchers shared across loads by content. A reload, `check-config` or a second
//! configuration directory with the same wordlists reuses the aho-corasick automata already
//! built (the signature lists take most of a load) instead of building them again. Entries are
//! weak: a matcher lives only as long as some loaded configuration uses it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, Weak};

pub(super) type Memo<T> = OnceLock<Mutex<HashMap<String, Weak<T>>>>;

pub(super) static LEXICONS: Memo<crate::stages::banglish::Lexicon> = OnceLock::new();
pub(super) static SIGNATURES: Memo<crate::stages::signatures::Signatures> = OnceLock::new();

/// The value built from `parts` (hashed together, each length-prefixed), built once while any
/// configuration holds it. Errors are not kept: a broken list is reported on every load.
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
    if let Some(hit) = map
        .lock()
        .ok()
        .and_then(|m| m.get(&key).and_then(Weak::upgrade))
    {
        return Ok(hit);
    }
    // Built outside the lock: two loads racing build twice, and both results are correct.
    let built = Arc::new(build()?);
    if let Ok(mut m) = map.lock() {
        m.retain(|_, w| w.strong_count() > 0);
        m.insert(key, Arc::downgrade(&built));
    }
    Ok(built)
}

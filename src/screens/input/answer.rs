//! A verdict as `POST /v1/screen` answers it, shared and serialised once, and the answers
//! each worker thread keeps ([`Recent`]) so that the same question again is answered without
//! screening, hashing, decoding or serialising.

use crate::obs::audit::PreparedLine;
use crate::verdict::Verdict;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

/// A cached verdict as the HTTP API answers it: the verdict and its JSON (no request id),
/// serialised once. One answer is made for one question of one product in one loaded
/// configuration, its text exactly as sent (see [`Recent`]), and is never handed out for another.
#[derive(Debug)]
pub struct Answer {
    pub verdict: Verdict,
    pub json: bytes::Bytes,
    /// When the cache entry it was read from expires.
    pub expires: Instant,
    /// Its audit line but for latency and time, written on its first answer.
    pub audit: std::sync::OnceLock<PreparedLine>,
    /// The same verdict written in other shapes (a gateway contract's answer), each made on
    /// its first use.
    pub views: Views,
}

/// How many other shapes an answer can keep.
pub const VIEWS: usize = 4;

/// Renderings of one answer's verdict, by slot (the HTTP layer numbers its shapes). Kept
/// inside the [`Answer`], a rendering lives exactly as long as the verdict it was made from
/// and cannot reach another product, configuration or text: those are other answers.
#[derive(Debug, Default)]
pub struct Views([std::sync::OnceLock<View>; VIEWS]);

/// One rendering: the JSON body, and whether it refuses (what its answer is counted as).
#[derive(Debug, Clone)]
pub struct View {
    pub json: bytes::Bytes,
    pub refused: bool,
}

impl Views {
    /// The cell of `slot` (`None` past [`VIEWS`]): filled by its first user.
    pub fn slot(&self, slot: usize) -> Option<&std::sync::OnceLock<View>> {
        self.0.get(slot)
    }
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
    answers: FastMap<String, FastMap<Box<str>, Arc<Answer>>>,
}

/// foldhash (seeded per process) rather than SipHash: the question is hashed on every request
/// that repeats one, and SipHash over it cost more than the rest of the look-up. A flood of
/// questions made to collide is bounded by [`RECENT_MAX`] like any other.
type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

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
    use crate::screens::input::cache::{decode, encode};
    use crate::verdict::{Decision, Outcome, Reason, Stage, TraceEntry};

    fn sample() -> Verdict {
        Verdict {
            decision: Decision::Block,
            reason: Reason::Unsafe,
            stage: Stage::Guard,
            language: "bn".into(),
            reply: None,
            categories: vec!["S2".into()],
            score: Some(0.93),
            cached: false,
            fail_mode: None,
            config_rev: String::new(),
            request_id: None,
            trace: vec![TraceEntry {
                stage: Stage::Guard,
                outcome: Outcome::Block,
                micros: 20,
                detail: Some("p_unsafe=0.930".into()),
            }],
        }
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
                views: Default::default(),
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

//! The input screen: every user message before the agent sees it.
//!
//! ```text
//! text ─► question ─► cache? ─► pipeline (script → banglish → lang_id → signatures → policy → guard → judge) ─► verdict
//! ```
//!
//! - [`question`]  the question computed once: normalised, hidden, folded, skeleton, decoded, outbound
//! - [`clauses`]   the question cut into sentences and turns, for the embedded guard
//! - [`decode`]    what is cheap to decode (entities, escapes, base64, hex, Morse, ROT13, ...)
//! - [`segments`]  code fences, JSON, YAML, templates and tags taken out to be screened alone
//! - [`cache`]     the verdict cache; [`answer`] the answers kept per thread, serialised once
//! - [`pipeline`]  the only place the stage order lives; fail-open/closed policy
//! - [`stages`]    one module per stage; [`section`] the product's settings they run with
//! - [`records`]   the screen's metrics and audit line
//!
//! [`Screener`] is the screen's entry: a loaded configuration with its caches and records.

pub mod answer;
pub mod cache;
pub mod clauses;
pub mod decode;
pub mod filled;
pub mod pipeline;
pub mod question;
pub mod records;
pub mod section;
pub mod segments;
pub mod stages;

use crate::config::ConfigSet;
use crate::product::Product;
use crate::screens::caller::{Caller, CallerNumbers};
use crate::screens::records::Records;
use crate::verdict::{Decision, Verdict};
use answer::{Answer, Recent};
use cache::{Cached, VerdictCache};
use pipeline::run_stages;
use question::Question;
use records::{audit_cached, audit_verdict, ProductMetrics};
use std::collections::HashMap;

/// A caller's records as numbers are compared, and their fingerprint (for cache keys).
type CallersRecords = (Arc<CallerNumbers>, String);
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// A loaded configuration with its caches and records: what one request works against, on
/// every screen. Replaced whole on reload; a request keeps the `Arc<Screener>` it started with.
pub struct Screener {
    pub config: ConfigSet,
    products: HashMap<String, ProductScreen>,
    records: Records,
    /// Distinct for every loaded configuration: the per-thread [`Recent`] answers belong to one.
    generation: u64,
}

/// What `POST /v1/screen` answers with: a cached answer, shared and already serialised, or a
/// verdict to serialise.
pub enum Answered {
    Shared(Arc<Answer>),
    Fresh(Verdict),
}

/// A verdict screened now, or one read from the cache (shared and serialised).
enum Screened {
    Fresh(Verdict),
    Cached(Arc<Answer>),
}

/// What a screen for one product needs, found with one look-up by name.
struct ProductScreen {
    product: Arc<Product>,
    cache: Option<VerdictCache>,
    metrics: ProductMetrics,
}

impl Screener {
    pub fn new(config: ConfigSet, records: Records) -> Self {
        for p in config.products.values() {
            records.init_product(p);
        }
        let products = config
            .products
            .values()
            .map(|p| {
                let screen = ProductScreen {
                    product: p.clone(),
                    cache: p
                        .cache
                        .enabled
                        .then(|| VerdictCache::new(&p.name, &p.cache, &records.input)),
                    metrics: records.input.for_product(&p.name),
                };
                (p.name.clone(), screen)
            })
            .collect();
        static GENERATION: AtomicU64 = AtomicU64::new(1);
        Screener {
            config,
            products,
            records,
            generation: GENERATION.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// Every screen's records (metrics and the audit log).
    pub fn records(&self) -> &Records {
        &self.records
    }

    /// A product by name.
    pub fn product(&self, name: &str) -> Option<&Arc<Product>> {
        self.products.get(name).map(|s| &s.product)
    }

    /// Screen one question for a product; `None` when the product does not exist.
    pub async fn screen(&self, product: &str, text: &str) -> Option<Verdict> {
        Some(self.screen_with(product, text, None, true).await?.0)
    }

    /// [`screen`](Self::screen) of a question from a signed-in caller: the policy's
    /// `#others_record` detectors compare the numbers it names with the caller's records.
    pub async fn screen_for(
        &self,
        product: &str,
        text: &str,
        caller: Option<&Caller>,
    ) -> Option<Verdict> {
        let records = self.callers_records(product, caller);
        Some(self.screen_with(product, text, records, true).await?.0)
    }

    /// The caller's records as the question screen compares numbers (read with the product's
    /// phone country code), and their fingerprint for the cache keys.
    fn callers_records(&self, product: &str, caller: Option<&Caller>) -> Option<CallersRecords> {
        let caller = caller?;
        let read = &self.products.get(product)?.product.tools.read;
        let numbers = caller.numbers(read);
        let fingerprint = numbers.fingerprint();
        Some((Arc::new(numbers), fingerprint))
    }

    /// [`screen`](Self::screen) without the verdict cache: for a one-shot bulk run
    /// (`guard screen --jsonl`), where rows rarely repeat and a cache insert per row cost more
    /// than the screen itself (the development split took 0.30 s with it, 0.20 s without).
    pub async fn screen_uncached(&self, product: &str, text: &str) -> Option<Verdict> {
        Some(self.screen_with(product, text, None, false).await?.0)
    }

    /// The screen of `POST /v1/screen`, its audit line written: a verdict read from the cache
    /// comes back shared and serialised (unless the caller's request id must go into it);
    /// `None` when the product does not exist.
    pub async fn answer(
        &self,
        product: &str,
        text: &str,
        caller: Option<&Caller>,
        request_id: Option<String>,
    ) -> Option<Answered> {
        let started = Instant::now();
        let records = self.callers_records(product, caller);
        let screened = self.screen_answer(product, text, records).await?;
        let micros = started.elapsed().as_micros() as u64;
        let audit = &self.records.audit;
        // A cached verdict is answered with its JSON as serialised once; a request id needs its own.
        if let (Screened::Cached(answer), None) = (&screened, &request_id) {
            audit_cached(audit, &answer.audit, product, text, &answer.verdict, micros);
            return Some(Answered::Shared(answer.clone()));
        }
        let mut verdict = match screened {
            Screened::Fresh(v) => v,
            Screened::Cached(a) => a.verdict.clone(),
        };
        verdict.request_id = request_id;
        audit_verdict(audit, product, text, &verdict, micros);
        Some(Answered::Fresh(verdict))
    }

    /// A verdict read from the cache comes back shared and serialised, and is kept for this
    /// thread ([`Recent`]) until its cache entry expires, so the same question again is
    /// answered without screening or serialising.
    ///
    /// Not an `async fn`: a question this thread answered before is answered at once, and the
    /// screen itself (whose state machine holds every stage's, some kilobytes) is boxed and
    /// awaited only for a question it has not: every future that awaits this one (the HTTP
    /// handlers', which actix boxes per request) stays small, not a copy of the screen's.
    fn screen_answer<'a>(
        &'a self,
        product: &'a str,
        text: &'a str,
        callers: Option<CallersRecords>,
    ) -> impl std::future::Future<Output = Option<Screened>> + 'a {
        let kept = self.kept_answer(product, text, callers.as_ref());
        async move {
            match kept {
                Some(answer) => Some(Screened::Cached(answer)),
                None => Box::pin(self.screen_and_keep(product, text, callers)).await,
            }
        }
    }

    /// A caller's records can change the verdict (`#others_record`): they are part of the key
    /// of every kept answer.
    fn answer_key<'t>(
        text: &'t str,
        callers: Option<&CallersRecords>,
    ) -> std::borrow::Cow<'t, str> {
        match callers {
            None => std::borrow::Cow::Borrowed(text),
            Some((_, fingerprint)) => std::borrow::Cow::Owned(format!("{fingerprint}\u{0}{text}")),
        }
    }

    /// The answer this thread keeps for the question, counted as a cache hit.
    fn kept_answer(
        &self,
        product: &str,
        text: &str,
        callers: Option<&CallersRecords>,
    ) -> Option<Arc<Answer>> {
        let screen = self.products.get(product)?;
        let cache = screen.cache.as_ref()?;
        let started = Instant::now();
        let key = Self::answer_key(text, callers);
        let answer = Recent::get(self.generation, product, &key, started)?;
        screen.metrics.record_cache(true, cache.inner.entry_count());
        let seconds = started.elapsed().as_secs_f64();
        screen.metrics.record_verdict(&answer.verdict, seconds);
        Some(answer)
    }

    /// The question screened (or read from the cache, and then kept for this thread).
    async fn screen_and_keep(
        &self,
        product: &str,
        text: &str,
        callers: Option<CallersRecords>,
    ) -> Option<Screened> {
        let key = Self::answer_key(text, callers.as_ref());
        let (verdict, expires) = self.screen_with(product, text, callers, true).await?;
        let Some(expires) = expires else {
            return Some(Screened::Fresh(verdict));
        };
        let Ok(json) = serde_json::to_vec(&verdict) else {
            return Some(Screened::Fresh(verdict));
        };
        let answer = Arc::new(Answer {
            verdict,
            json: json.into(),
            expires,
            audit: Default::default(),
            views: Default::default(),
        });
        Recent::keep(self.generation, product, &key, answer.clone());
        Some(Screened::Cached(answer))
    }

    /// The verdict, and when it was read from the cache, when that entry expires.
    async fn screen_with(
        &self,
        product: &str,
        text: &str,
        callers: Option<CallersRecords>,
        use_cache: bool,
    ) -> Option<(Verdict, Option<Instant>)> {
        let screen = self.products.get(product)?;
        let started = Instant::now();
        let (records, fingerprint) = callers.unzip();
        let question = Question::new(text)
            .with_english(screen.product.input.lexicon.clone())
            .with_callers_records(records);
        let (verdict, expires) = match screen.cache.as_ref().filter(|_| use_cache) {
            None => (self.run(&screen.product, &question).await, None),
            Some(cache) => {
                self.through_cache(screen, cache, &question, fingerprint.as_deref())
                    .await
            }
        };
        let seconds = started.elapsed().as_secs_f64();
        screen.metrics.record_verdict(&verdict, seconds);
        Some((verdict, expires))
    }

    /// The verdict through the product's cache: identical questions in flight share one run
    /// of the stages.
    async fn through_cache(
        &self,
        screen: &ProductScreen,
        cache: &VerdictCache,
        question: &Question,
        fingerprint: Option<&str>,
    ) -> (Verdict, Option<Instant>) {
        let product = &screen.product;
        let key = match fingerprint {
            None => VerdictCache::key(&product.name, &product.config_rev, question.text()),
            Some(f) => {
                let keyed = format!("{f}\u{0}{}", question.text());
                VerdictCache::key(&product.name, &product.config_rev, &keyed)
            }
        };
        let ran = AtomicBool::new(false);
        // The request that runs the stages keeps its own verdict (real timings); only the ones
        // that waited for it, and later hits, read the cached entry.
        let fresh: Mutex<Option<Verdict>> = Mutex::new(None);
        let result = cache
            .inner
            .try_get_with(key, async {
                ran.store(true, Ordering::Relaxed);
                let v = self.run(product, question).await;
                // Fail-open / fail-closed verdicts are handed back as errors: never cached.
                if v.fail_mode.is_some() {
                    return Err(v);
                }
                let entry = cache::encode(&v);
                if let Ok(mut slot) = fresh.lock() {
                    *slot = Some(v);
                }
                Ok(Cached {
                    created: Instant::now(),
                    entry,
                })
            })
            .await;
        let hit = !ran.load(Ordering::Relaxed);
        screen.metrics.record_cache(hit, cache.inner.entry_count());
        let fresh = fresh.into_inner().ok().flatten();
        match (result, fresh) {
            (Err(e), _) => ((*e).clone(), None),
            (Ok(_), Some(v)) => (v, None),
            (Ok(cached), None) => match restore(product, &cached.entry) {
                Some(v) => (v, Some(cached.created + cache.ttl)),
                None => (self.run(product, question).await, None),
            },
        }
    }

    async fn run(&self, product: &Product, question: &Question) -> Verdict {
        run_stages(product, question, &self.records.input).await
    }
}

/// A full verdict again from a cached entry; `None` if the entry cannot be read (never expected).
fn restore(product: &Product, entry: &[u8]) -> Option<Verdict> {
    let mut v = cache::decode(entry)?;
    v.reply =
        (v.decision == Decision::Block).then(|| product.replies.for_block(v.reason, &v.categories));
    v.config_rev = product.config_rev.clone();
    Some(v)
}

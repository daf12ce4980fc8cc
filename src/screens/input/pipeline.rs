//! The pipeline: the only place that knows the stage order, applies the failure policy and the
//! cache, and turns stage evaluations into a verdict.
//!
//! ```text
//! text ─► question ─► cache? ─► script ─► banglish ─► lang_id ─► signatures ─► guard ─► judge ─► verdict
//!                                language screen (fails OPEN)    safety screen (fails CLOSED)
//! ```
//!
//! [`run_stages`] is the whole flow: a loop over the stages in [`Stage::SCREEN`] order. Every
//! stage runs through [`Run::step`], which owns its timer, timeout, panic capture, failure
//! policy, metrics and trace entry; [`Run::apply`] turns what the stage concluded into "go on"
//! or the end of the screen.

use crate::config::{ConfigSet, Product};
use crate::obs::metrics::{JudgeDecision, Metrics, ModelOutcome, ProductMetrics};
use crate::screens::input::cache::{Answer, Cached, Recent, VerdictCache};
use crate::screens::input::question::Question;
use crate::screens::input::stages::policy::PolicyAction;
use crate::screens::input::stages::{self, Context, StageError, StageEval};
use crate::verdict::{Decision, FailMode, Outcome, Reason, Stage, TraceEntry, Verdict};
use futures_util::FutureExt;
use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A loaded configuration with its caches: what one request screens against. Replaced whole on
/// reload; a request keeps the `Arc<Screener>` it started with.
pub struct Screener {
    pub config: ConfigSet,
    products: HashMap<String, ProductScreen>,
    metrics: Metrics,
    /// Distinct for every loaded configuration: the per-thread [`Recent`] answers belong to one.
    generation: u64,
}

/// What the HTTP API answers with: a verdict screened now, or one read from the cache, shared
/// and already serialised.
pub enum Screened {
    Fresh(Verdict),
    Cached(Arc<Answer>),
}

impl Screened {
    pub fn into_verdict(self) -> Verdict {
        match self {
            Screened::Fresh(v) => v,
            Screened::Cached(a) => a.verdict.clone(),
        }
    }
}

/// What a screen for one product needs, found with one look-up by name.
struct ProductScreen {
    product: std::sync::Arc<Product>,
    cache: Option<VerdictCache>,
    metrics: ProductMetrics,
}

impl Screener {
    pub fn new(config: ConfigSet, metrics: Metrics) -> Self {
        for p in config.products.values() {
            let rules: Vec<(&str, PolicyAction)> = p
                .policy
                .rules
                .iter()
                .map(|r| (r.id.as_str(), r.action))
                .collect();
            metrics.init_product(&p.name, &rules);
        }
        let revs: Vec<(String, String)> = config
            .products
            .values()
            .map(|p| (p.name.clone(), p.config_rev.clone()))
            .collect();
        metrics.set_config(&revs);
        let products = config
            .products
            .values()
            .map(|p| {
                let screen = ProductScreen {
                    product: p.clone(),
                    cache: p
                        .cache
                        .enabled
                        .then(|| VerdictCache::new(&p.name, &p.cache, &metrics)),
                    metrics: metrics.for_product(&p.name),
                };
                (p.name.clone(), screen)
            })
            .collect();
        static GENERATION: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        Screener {
            config,
            products,
            metrics,
            generation: GENERATION.fetch_add(1, Ordering::Relaxed),
        }
    }

    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// Screen one question for a product; `None` when the product does not exist.
    pub async fn screen(&self, product: &str, text: &str) -> Option<Verdict> {
        Some(self.screen_with(product, text, true).await?.0)
    }

    /// [`screen`](Self::screen) without the verdict cache: for a one-shot bulk run
    /// (`guard screen --jsonl`), where rows rarely repeat and a cache insert per row cost more
    /// than the screen itself (the development split took 0.30 s with it, 0.20 s without).
    pub async fn screen_uncached(&self, product: &str, text: &str) -> Option<Verdict> {
        Some(self.screen_with(product, text, false).await?.0)
    }

    /// [`screen`](Self::screen) for the HTTP API: a verdict read from the cache comes back
    /// shared and serialised, and is kept for this thread ([`Recent`]) until its cache entry
    /// expires, so the same question again is answered without screening or serialising.
    pub async fn screen_answer(&self, product: &str, text: &str) -> Option<Screened> {
        let screen = self.products.get(product)?;
        if let Some(cache) = &screen.cache {
            let started = Instant::now();
            if let Some(answer) = Recent::get(self.generation, product, text, started) {
                screen.metrics.record_cache(true, cache.inner.entry_count());
                let seconds = started.elapsed().as_secs_f64();
                screen.metrics.record_verdict(&answer.verdict, seconds);
                return Some(Screened::Cached(answer));
            }
        }
        let (verdict, expires) = self.screen_with(product, text, true).await?;
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
        });
        Recent::keep(self.generation, product, text, answer.clone());
        Some(Screened::Cached(answer))
    }

    /// The verdict, and when it was read from the cache, when that entry expires.
    async fn screen_with(
        &self,
        product: &str,
        text: &str,
        use_cache: bool,
    ) -> Option<(Verdict, Option<Instant>)> {
        let ProductScreen {
            product,
            cache,
            metrics,
        } = self.products.get(product)?;
        let started = Instant::now();
        let question = Question::new(text).with_english(product.lexicon.clone());
        let mut expires = None;
        let verdict = match cache.as_ref().filter(|_| use_cache) {
            None => run_stages(product, &question, &self.metrics).await,
            Some(cache) => {
                let key = VerdictCache::key(&product.name, &product.config_rev, question.text());
                let ran = AtomicBool::new(false);
                // The request that runs the stages keeps its own verdict (real timings); only
                // the ones that waited for it, and later hits, read the cached entry.
                let fresh: Mutex<Option<Verdict>> = Mutex::new(None);
                let result = cache
                    .inner
                    .try_get_with(key, async {
                        ran.store(true, Ordering::Relaxed);
                        let v = run_stages(product, &question, &self.metrics).await;
                        // Fail-open / fail-closed verdicts are handed back as errors: never cached.
                        if v.fail_mode.is_some() {
                            return Err(v);
                        }
                        let entry = crate::screens::input::cache::encode(&v);
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
                metrics.record_cache(hit, cache.inner.entry_count());
                let fresh = fresh.into_inner().ok().flatten();
                match (result, fresh) {
                    (Err(e), _) => (*e).clone(),
                    (Ok(_), Some(v)) => v,
                    (Ok(cached), None) => match restore(product, &cached.entry) {
                        Some(v) => {
                            expires = Some(cached.created + cache.ttl);
                            v
                        }
                        None => run_stages(product, &question, &self.metrics).await,
                    },
                }
            }
        };
        metrics.record_verdict(&verdict, started.elapsed().as_secs_f64());
        Some((verdict, expires))
    }
}

/// A full verdict again from a cached entry; `None` if the entry cannot be read (never expected).
fn restore(product: &Product, entry: &[u8]) -> Option<Verdict> {
    let mut v = crate::screens::input::cache::decode(entry)?;
    v.reply =
        (v.decision == Decision::Block).then(|| product.replies.for_block(v.reason, &v.categories));
    v.config_rev = product.config_rev.clone();
    Some(v)
}

/// The full screen of one question: every stage in pipeline order.
pub async fn run_stages(product: &Product, q: &Question, metrics: &Metrics) -> Verdict {
    run_plan(product, q, metrics, &Stage::SCREEN, Context::default()).await
}

/// Run the given stages (in the given order, which callers take from [`Stage::SCREEN`] or
/// [`Stage::LANGUAGE`]) from a starting context. A screen that no stage ended is `passed` at
/// stage `pipeline`; a borderline guard answer that no judge resolved blocks.
pub async fn run_plan(
    product: &Product,
    q: &Question,
    metrics: &Metrics,
    plan: &[Stage],
    mut ctx: Context,
) -> Verdict {
    let mut run = Run::new(product, metrics, plan.len());
    for &stage in plan {
        if run.skips(stage, &ctx) {
            continue;
        }
        let result = run
            .step(stage, stages::evaluate(stage, q, product, &ctx))
            .await;
        if let Some(end) = run.apply(stage, result, &mut ctx) {
            return run.finish(end);
        }
    }
    // A borderline answer or a review rule that no judge resolved blocks.
    let end = if ctx.borderline.is_some() || ctx.review.is_some() {
        let (score, categories) = ctx.judge_context();
        run.end(Reason::JudgeUnavailable, Stage::Judge, categories, score)
    } else {
        run.end(Reason::Passed, Stage::Pipeline, Vec::new(), None)
    };
    run.finish(end)
}

/// How a screen ended.
struct End {
    reason: Reason,
    stage: Stage,
    categories: Vec<String>,
    score: Option<f32>,
}

/// Accumulates the trace and builds the verdict.
struct Run<'a> {
    product: &'a Product,
    metrics: &'a Metrics,
    trace: Vec<TraceEntry>,
    language: String,
    /// The language screen has decided (or failed open): its remaining stages are skipped.
    language_done: bool,
    score: Option<f32>,
    fail_mode: Option<FailMode>,
}

impl<'a> Run<'a> {
    fn new(product: &'a Product, metrics: &'a Metrics, stages: usize) -> Self {
        Run {
            product,
            metrics,
            trace: Vec::with_capacity(stages),
            language: "und".into(),
            language_done: false,
            score: None,
            fail_mode: None,
        }
    }

    /// Stages that have nothing to do for this question.
    fn skips(&self, stage: Stage, ctx: &Context) -> bool {
        match stage {
            Stage::Script | Stage::Banglish => self.language_done,
            Stage::LangId => self.language_done || ctx.evidence.is_none(),
            Stage::Judge => ctx.borderline.is_none() && ctx.review.is_none(),
            _ => false,
        }
    }

    /// Run one stage: under its timer, its timeout (model stages) and panic capture. The timer
    /// covers everything the stage does, the lazy forms of the question it reads included.
    async fn step(
        &mut self,
        stage: Stage,
        eval: impl std::future::Future<Output = Result<StageEval, StageError>>,
    ) -> (Result<StageEval, StageError>, Duration) {
        let started = Instant::now();
        let guarded = AssertUnwindSafe(eval).catch_unwind();
        let result = match self.timeout(stage) {
            Some(limit) => match tokio::time::timeout(limit, guarded).await {
                Ok(r) => r,
                Err(_) => Ok(Err(StageError::Backend(
                    crate::backends::BackendError::Timeout,
                ))),
            },
            None => guarded.await,
        };
        let result = result.unwrap_or(Err(StageError::Panicked));
        (result, started.elapsed())
    }

    fn timeout(&self, stage: Stage) -> Option<Duration> {
        match stage {
            Stage::Guard => Some(self.product.guard_timeout),
            Stage::Judge => Some(self.product.judge_timeout),
            _ => None,
        }
    }

    /// The one place that turns a stage's result into the trace, the metrics and "go on" or
    /// the end of the screen, failure policy included.
    fn apply(
        &mut self,
        stage: Stage,
        (result, elapsed): (Result<StageEval, StageError>, Duration),
        ctx: &mut Context,
    ) -> Option<End> {
        self.metrics.record_stage(stage, elapsed.as_secs_f64());
        self.record_model_call(stage, &result);
        let eval = match result {
            Ok(eval) => eval,
            Err(e) => return self.fail(stage, e, elapsed, ctx),
        };
        let (outcome, detail, end) = match eval {
            StageEval::Pass { detail, score } => {
                self.score = score.or(self.score);
                (Outcome::Pass, detail, None)
            }
            StageEval::PassedEmbeddedFirst { detail, score } => {
                self.score = Some(score);
                (Outcome::Pass, Some(detail), None)
            }
            StageEval::LanguageUndetermined { detail } => {
                self.language_done = true;
                (Outcome::Pass, Some(detail), None)
            }
            StageEval::Language {
                code,
                settled,
                detail,
            } => {
                let accepted = self.product.accepts(&code);
                let supported = matches!(code.as_str(), "en" | "bn");
                self.language = code;
                if accepted {
                    self.language_done = true;
                    let outcome = if settled {
                        Outcome::Accept
                    } else {
                        Outcome::Pass
                    };
                    (outcome, Some(detail), None)
                } else if settled || supported {
                    let end = self.end(Reason::UnsupportedLanguage, stage, Vec::new(), None);
                    (Outcome::Block, Some(detail), Some(end))
                } else {
                    // A weak guess at a language the screen does not decide on: fail open.
                    self.language_done = true;
                    (Outcome::Pass, Some(detail), None)
                }
            }
            StageEval::Undecided { evidence } => {
                let detail = evidence.detail();
                ctx.evidence = Some(evidence);
                (Outcome::Pass, Some(detail), None)
            }
            StageEval::Block {
                reason,
                categories,
                score,
                detail,
            } => {
                if reason == Reason::PolicyBlocked {
                    let rule = categories.first().map_or("", String::as_str);
                    self.metrics
                        .record_policy_hit(&self.product.name, rule, PolicyAction::Block);
                }
                (
                    Outcome::Block,
                    detail,
                    Some(self.end(reason, stage, categories, score)),
                )
            }
            StageEval::Review { rule, description } => {
                self.metrics
                    .record_policy_hit(&self.product.name, &rule, PolicyAction::Review);
                let detail = format!("rule {rule} (review: the judge decides)");
                ctx.review = Some((rule, description));
                (Outcome::Pass, Some(detail), None)
            }
            StageEval::Borderline { score, categories } => {
                ctx.borderline = Some((score, categories));
                (
                    Outcome::Borderline,
                    Some(format!("p_unsafe={score:.3}")),
                    None,
                )
            }
            StageEval::JudgeAllowed { rationale } => {
                let (score, categories) = ctx.judge_context();
                let end = self.end(Reason::JudgeAllowed, stage, categories, score);
                (
                    Outcome::Pass,
                    Some(format!("allow: {rationale}")),
                    Some(end),
                )
            }
        };
        if stage == Stage::Judge {
            let decision = match outcome {
                Outcome::Pass => JudgeDecision::Allow,
                _ => JudgeDecision::Block,
            };
            self.metrics.record_judge(&self.product.name, decision);
        }
        self.trace(stage, outcome, elapsed, detail);
        end
    }

    /// A stage gave no evaluation: language stages fail open (the language screen ends and the
    /// question goes on), safety stages fail closed.
    fn fail(
        &mut self,
        stage: Stage,
        error: StageError,
        elapsed: Duration,
        ctx: &mut Context,
    ) -> Option<End> {
        let detail = match (&error, stage) {
            (StageError::Backend(e), Stage::Guard) => {
                format!(
                    "{}: {}",
                    self.product.guard.kind().as_str(),
                    e.outcome().as_str()
                )
            }
            (StageError::Backend(e), _) => format!("{}: {}", stage.as_str(), e.outcome().as_str()),
            (other, _) => other.to_string(),
        };
        if stage.is_language() {
            self.language_done = true;
            self.trace(stage, Outcome::FailOpen, elapsed, Some(detail));
            return None;
        }
        let reason = match (&error, stage) {
            (StageError::Panicked, _) => Reason::CheckFailed,
            (StageError::UnparsableAnswer, Stage::Judge) => Reason::JudgeBlocked,
            (_, Stage::Judge) => Reason::JudgeUnavailable,
            _ => Reason::GuardUnavailable,
        };
        if stage == Stage::Judge {
            let decision = match error {
                StageError::UnparsableAnswer => JudgeDecision::Unparsable,
                _ => JudgeDecision::Unavailable,
            };
            self.metrics.record_judge(&self.product.name, decision);
        }
        self.trace(stage, Outcome::FailClosed, elapsed, Some(detail));
        let (score, categories) = ctx.judge_context();
        Some(self.end(reason, stage, categories, score))
    }

    /// Model stages count their calls by backend and outcome.
    fn record_model_call(&self, stage: Stage, result: &Result<StageEval, StageError>) {
        let backend = match (stage, result) {
            (Stage::Guard, Ok(StageEval::PassedEmbeddedFirst { .. })) => "embedded",
            (Stage::Guard, _) => self.product.guard.kind().as_str(),
            (Stage::Judge, _) if self.product.judge.is_some() => "judge",
            _ => return,
        };
        let outcome = match result {
            Ok(_) => ModelOutcome::Ok,
            Err(StageError::Backend(e)) => e.outcome(),
            Err(StageError::UnparsableAnswer) => ModelOutcome::Unparsable,
            Err(StageError::NotConfigured(_) | StageError::Panicked) => ModelOutcome::Error,
        };
        self.metrics.record_model_call(backend, outcome);
    }

    fn end(
        &self,
        reason: Reason,
        stage: Stage,
        categories: Vec<String>,
        score: Option<f32>,
    ) -> End {
        End {
            reason,
            stage,
            categories,
            score: score.or(self.score),
        }
    }

    fn trace(&mut self, stage: Stage, outcome: Outcome, elapsed: Duration, detail: Option<String>) {
        let mode = match outcome {
            Outcome::FailOpen => Some(FailMode::Open),
            Outcome::FailClosed => Some(FailMode::Closed),
            _ => None,
        };
        if let Some(mode) = mode {
            self.metrics.record_failure(&self.product.name, stage, mode);
            // A closed failure outranks an open one in the verdict's fail_mode.
            if self.fail_mode != Some(FailMode::Closed) {
                self.fail_mode = Some(mode);
            }
        }
        self.trace.push(TraceEntry {
            stage,
            outcome,
            micros: elapsed.as_micros() as u64,
            detail,
        });
    }

    fn finish(self, end: End) -> Verdict {
        let decision = end.reason.decision();
        Verdict {
            decision,
            reason: end.reason,
            stage: end.stage,
            language: self.language,
            reply: (decision == Decision::Block)
                .then(|| self.product.replies.for_block(end.reason, &end.categories)),
            categories: end.categories,
            score: end.score,
            cached: false,
            fail_mode: self.fail_mode,
            config_rev: self.product.config_rev.clone(),
            request_id: None,
            trace: self.trace,
        }
    }
}

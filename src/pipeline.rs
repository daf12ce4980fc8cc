//! The pipeline: the only place that knows the stage order, applies the failure policy and the
//! cache, and turns stage outcomes into a verdict.
//!
//! ```text
//! text ─► normalise ─► cache? ─► script ─► banglish ─► lang_id ─► signatures ─► guard ─► judge ─► verdict
//!                                 language screen (fails OPEN)    safety screen (fails CLOSED)
//! ```

use crate::cache::VerdictCache;
use crate::config::{ConfigSet, Product};
use crate::metrics::Metrics;
use crate::stages::banglish::{self, BanglishEval};
use crate::stages::guard::{apply_thresholds, GuardEval};
use crate::stages::judge::JudgeEval;
use crate::stages::lang_id::{self, LangIdEval};
use crate::stages::script::{self, ScriptEval};
use crate::text::{mask_cards, normalise};
use crate::verdict::{Decision, FailMode, Outcome, Reason, Stage, TraceEntry, Verdict};
use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// A loaded configuration with its caches: what one request screens against. Replaced whole on
/// reload; a request keeps the `Arc<Screener>` it started with.
pub struct Screener {
    pub config: ConfigSet,
    caches: HashMap<String, VerdictCache>,
    metrics: Metrics,
}

impl Screener {
    pub fn new(config: ConfigSet, metrics: Metrics) -> Self {
        let caches = config
            .products
            .values()
            .filter(|p| p.cache.enabled)
            .map(|p| {
                (
                    p.name.clone(),
                    VerdictCache::new(&p.name, &p.cache, &metrics),
                )
            })
            .collect();
        for p in config.products.values() {
            metrics.init_product(&p.name);
        }
        let revs: Vec<(String, String)> = config
            .products
            .values()
            .map(|p| (p.name.clone(), p.config_rev.clone()))
            .collect();
        metrics.set_config(&revs);
        Screener {
            config,
            caches,
            metrics,
        }
    }

    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// Screen one question for a product; `None` when the product does not exist.
    pub async fn screen(&self, product: &str, text: &str) -> Option<Verdict> {
        let product = self.config.product(product)?.clone();
        let started = Instant::now();
        let normalised = normalise(text);
        let verdict = match self.caches.get(&product.name) {
            None => run_stages(&product, &normalised, &self.metrics).await,
            Some(cache) => {
                let key = VerdictCache::key(&product.name, &product.config_rev, &normalised);
                let ran = AtomicBool::new(false);
                // The request that runs the stages keeps its own verdict (real timings); only
                // the ones that waited for it, and later hits, read the cached entry.
                let fresh: Mutex<Option<Verdict>> = Mutex::new(None);
                let result = cache
                    .inner
                    .try_get_with(key, async {
                        ran.store(true, Ordering::Relaxed);
                        let v = run_stages(&product, &normalised, &self.metrics).await;
                        // Fail-open / fail-closed verdicts are handed back as errors: never cached.
                        if v.fail_mode.is_some() {
                            return Err(v);
                        }
                        let entry = crate::cache::encode(&v);
                        if let Ok(mut slot) = fresh.lock() {
                            *slot = Some(v);
                        }
                        Ok(entry)
                    })
                    .await;
                let hit = !ran.load(Ordering::Relaxed);
                self.metrics.record_cache(&product.name, hit);
                self.metrics
                    .set_cache_entries(&product.name, cache.inner.entry_count());
                let fresh = fresh.into_inner().ok().flatten();
                match (result, fresh) {
                    (Err(e), _) => (*e).clone(),
                    (Ok(_), Some(v)) => v,
                    (Ok(entry), None) => match restore(&product, &entry) {
                        Some(v) => v,
                        None => run_stages(&product, &normalised, &self.metrics).await,
                    },
                }
            }
        };
        self.metrics
            .record_verdict(&product.name, &verdict, started.elapsed().as_secs_f64());
        Some(verdict)
    }
}

/// A full verdict again from a cached entry; `None` if the entry cannot be read (never expected).
fn restore(product: &Product, entry: &[u8]) -> Option<Verdict> {
    let mut v = crate::cache::decode(entry)?;
    v.reply = (v.decision == Decision::Block).then(|| product.reply.clone());
    v.config_rev = product.config_rev.clone();
    Some(v)
}

/// Accumulates the trace and builds the verdict.
struct Run<'a> {
    product: &'a Product,
    metrics: &'a Metrics,
    trace: Vec<TraceEntry>,
    language: String,
    fail_mode: Option<FailMode>,
}

impl Run<'_> {
    fn record(&mut self, stage: Stage, outcome: Outcome, started: Instant, detail: Option<String>) {
        let elapsed = started.elapsed();
        self.metrics.record_stage(stage, elapsed.as_secs_f64());
        if matches!(outcome, Outcome::FailOpen | Outcome::FailClosed) {
            let mode = if outcome == Outcome::FailOpen {
                FailMode::Open
            } else {
                FailMode::Closed
            };
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

    fn finish(
        self,
        reason: Reason,
        stage: Stage,
        categories: Vec<String>,
        score: Option<f32>,
    ) -> Verdict {
        let decision = reason.decision();
        Verdict {
            decision,
            reason,
            stage,
            language: self.language,
            reply: (decision == Decision::Block).then(|| self.product.reply.clone()),
            categories,
            score,
            cached: false,
            fail_mode: self.fail_mode,
            config_rev: self.product.config_rev.clone(),
            request_id: None,
            trace: self.trace,
        }
    }
}

/// Only the language screen (stages 1–3), as the eval suites' `language` cases run it: the
/// verdict blocks with `unsupported_language` or allows with `passed` at stage `pipeline`.
pub fn run_language_screen(product: &Product, text: &str, metrics: &Metrics) -> Verdict {
    let mut run = Run {
        product,
        metrics,
        trace: Vec::with_capacity(3),
        language: "und".into(),
        fail_mode: None,
    };
    match language_screen(&mut run, text) {
        Some(stage) => run.finish(Reason::UnsupportedLanguage, stage, Vec::new(), None),
        None => run.finish(Reason::Passed, Stage::Pipeline, Vec::new(), None),
    }
}

/// Run the language screen and the safety screen on normalised text.
pub async fn run_stages(product: &Product, text: &str, metrics: &Metrics) -> Verdict {
    let mut run = Run {
        product,
        metrics,
        trace: Vec::with_capacity(6),
        language: "und".into(),
        fail_mode: None,
    };
    if let Some(stage) = language_screen(&mut run, text) {
        return run.finish(Reason::UnsupportedLanguage, stage, Vec::new(), None);
    }
    safety_screen(run, text).await
}

/// Stages 1–3. Returns the stage that rejected the question, if one did. A panic inside a
/// language check fails open: the question goes on to the safety screen.
fn language_screen(run: &mut Run<'_>, text: &str) -> Option<Stage> {
    let product = run.product;
    let t = Instant::now();
    let script = match catch_unwind(|| script::evaluate(text)) {
        Ok(s) => s,
        Err(_) => {
            run.record(
                Stage::Script,
                Outcome::FailOpen,
                t,
                Some("check panicked".into()),
            );
            return None;
        }
    };
    let detail = Some(script.detail());
    match script {
        ScriptEval::Bangla { .. } => {
            run.language = "bn".into();
            let outcome = if product.accepts_bangla {
                Outcome::Accept
            } else {
                Outcome::Block
            };
            run.record(Stage::Script, outcome, t, detail);
            return (!product.accepts_bangla).then_some(Stage::Script);
        }
        ScriptEval::Other { language, .. } => {
            run.language = language;
            run.record(Stage::Script, Outcome::Block, t, detail);
            return Some(Stage::Script);
        }
        ScriptEval::NoLetters => {
            run.record(Stage::Script, Outcome::Pass, t, detail);
            return None;
        }
        ScriptEval::Latin { .. } => run.record(Stage::Script, Outcome::Pass, t, detail),
    }

    // Latin text with non-ASCII characters is read through the same fold as the signatures
    // (NFKC, look-alikes mapped, invisibles removed): "ＩＧＮＯＲＥ previous" is English written to
    // dodge a filter, and the signature stage, not the language screen, should name it.
    let folded;
    let text = if text.is_ascii() {
        text
    } else {
        folded = crate::text::fold_for_matching(text);
        folded.as_str()
    };
    let t = Instant::now();
    let lexicon = AssertUnwindSafe(&product.lexicon);
    let evidence = match catch_unwind(|| banglish::evaluate(&lexicon, text)) {
        Err(_) => {
            run.record(
                Stage::Banglish,
                Outcome::FailOpen,
                t,
                Some("check panicked".into()),
            );
            return None;
        }
        Ok(BanglishEval::English(ev)) => {
            run.language = "en".into();
            let outcome = if product.accepts_english {
                Outcome::Accept
            } else {
                Outcome::Block
            };
            run.record(Stage::Banglish, outcome, t, Some(ev.detail()));
            return (!product.accepts_english).then_some(Stage::Banglish);
        }
        Ok(BanglishEval::Romanized { language, evidence }) => {
            run.language = language.into();
            run.record(Stage::Banglish, Outcome::Block, t, Some(evidence.detail()));
            return Some(Stage::Banglish);
        }
        Ok(BanglishEval::Undecided(ev)) => {
            run.record(Stage::Banglish, Outcome::Pass, t, Some(ev.detail()));
            ev
        }
    };

    let t = Instant::now();
    match catch_unwind(|| lang_id::evaluate(text, &evidence)) {
        Err(_) => {
            run.record(
                Stage::LangId,
                Outcome::FailOpen,
                t,
                Some("check panicked".into()),
            );
            None
        }
        Ok(LangIdEval::Pass { language, detail }) => {
            let rejected = language == "en" && !product.accepts_english;
            run.language = language;
            run.record(
                Stage::LangId,
                if rejected {
                    Outcome::Block
                } else {
                    Outcome::Pass
                },
                t,
                Some(detail),
            );
            rejected.then_some(Stage::LangId)
        }
        Ok(LangIdEval::Reject { language, detail }) => {
            run.language = language;
            run.record(Stage::LangId, Outcome::Block, t, Some(detail));
            Some(Stage::LangId)
        }
    }
}

/// Stages 4–6. Every failure here blocks (fail closed).
async fn safety_screen(mut run: Run<'_>, text: &str) -> Verdict {
    let product = run.product;
    let metrics = run.metrics;

    let t = Instant::now();
    let signatures = AssertUnwindSafe(&product.signatures);
    match catch_unwind(|| signatures.evaluate(text)) {
        Err(_) => {
            run.record(
                Stage::Signatures,
                Outcome::FailClosed,
                t,
                Some("check panicked".into()),
            );
            return run.finish(Reason::PromptInjection, Stage::Signatures, Vec::new(), None);
        }
        Ok(Some(hit)) => {
            run.record(Stage::Signatures, Outcome::Block, t, Some(hit.detail()));
            return run.finish(
                Reason::PromptInjection,
                Stage::Signatures,
                vec!["prompt_injection".into()],
                None,
            );
        }
        Ok(None) => run.record(Stage::Signatures, Outcome::Pass, t, None),
    }

    // Card numbers never leave the process in clear.
    let kind = product.guard.kind();
    let outbound = if kind.is_remote() {
        mask_cards(text)
    } else {
        text.to_string()
    };
    let t = Instant::now();
    let answer = match tokio::time::timeout(
        product.guard_timeout,
        product.guard.classify(&outbound),
    )
    .await
    {
        Ok(r) => r,
        Err(_) => Err(crate::backends::BackendError::Timeout),
    };
    let judgement = match answer {
        Ok(j) => {
            metrics.record_model_call(kind.as_str(), "ok");
            j
        }
        Err(e) => {
            metrics.record_model_call(kind.as_str(), e.outcome());
            run.record(
                Stage::Guard,
                Outcome::FailClosed,
                t,
                Some(format!("{}: {}", kind.as_str(), e.outcome())),
            );
            return run.finish(Reason::GuardUnavailable, Stage::Guard, Vec::new(), None);
        }
    };
    let (score, categories) = match apply_thresholds(judgement, &product.thresholds) {
        GuardEval::Safe { score } => {
            run.record(
                Stage::Guard,
                Outcome::Pass,
                t,
                score.map(|p| format!("p_unsafe={p:.3}")),
            );
            return run.finish(Reason::Passed, Stage::Pipeline, Vec::new(), score);
        }
        GuardEval::Unsafe { score, categories } => {
            run.record(
                Stage::Guard,
                Outcome::Block,
                t,
                score.map(|p| format!("p_unsafe={p:.3}")),
            );
            return run.finish(Reason::Unsafe, Stage::Guard, categories, score);
        }
        GuardEval::Borderline { score, categories } => {
            run.record(
                Stage::Guard,
                Outcome::Borderline,
                t,
                Some(format!("p_unsafe={score:.3}")),
            );
            (score, categories)
        }
    };

    // Only a borderline question reaches the judge; only its explicit allow lets it through.
    let t = Instant::now();
    let Some(judge) = &product.judge else {
        metrics.record_judge(&product.name, "unavailable");
        run.record(
            Stage::Judge,
            Outcome::FailClosed,
            t,
            Some("no judge configured".into()),
        );
        return run.finish(
            Reason::JudgeUnavailable,
            Stage::Judge,
            categories,
            Some(score),
        );
    };
    let masked = mask_cards(text);
    let answer = match tokio::time::timeout(
        product.judge_timeout,
        judge.evaluate(&product.judge_prompt, &masked, score),
    )
    .await
    {
        Ok(r) => r,
        Err(_) => Err(crate::backends::BackendError::Timeout),
    };
    match answer {
        Err(e) => {
            metrics.record_model_call("judge", e.outcome());
            metrics.record_judge(&product.name, "unavailable");
            run.record(
                Stage::Judge,
                Outcome::FailClosed,
                t,
                Some(format!("judge: {}", e.outcome())),
            );
            run.finish(
                Reason::JudgeUnavailable,
                Stage::Judge,
                categories,
                Some(score),
            )
        }
        Ok(JudgeEval::Allow { rationale }) => {
            metrics.record_model_call("judge", "ok");
            metrics.record_judge(&product.name, "allow");
            run.record(
                Stage::Judge,
                Outcome::Pass,
                t,
                Some(format!("allow: {rationale}")),
            );
            run.finish(Reason::JudgeAllowed, Stage::Judge, categories, Some(score))
        }
        Ok(JudgeEval::Block {
            rationale,
            categories: judge_categories,
        }) => {
            metrics.record_model_call("judge", "ok");
            metrics.record_judge(&product.name, "block");
            run.record(
                Stage::Judge,
                Outcome::Block,
                t,
                Some(format!("block: {rationale}")),
            );
            let mut all = categories;
            all.extend(judge_categories);
            run.finish(Reason::JudgeBlocked, Stage::Judge, all, Some(score))
        }
        Ok(JudgeEval::Unparsable) => {
            metrics.record_model_call("judge", "unparsable");
            metrics.record_judge(&product.name, "unparsable");
            run.record(
                Stage::Judge,
                Outcome::FailClosed,
                t,
                Some("unparsable answer".into()),
            );
            run.finish(Reason::JudgeBlocked, Stage::Judge, categories, Some(score))
        }
    }
}

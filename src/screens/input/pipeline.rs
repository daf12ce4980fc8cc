//! The pipeline: the only place that knows the stage order, applies the failure policy, and
//! turns stage evaluations into a verdict (the cache in front of it is the screen's, in
//! [`super::Screener`]).
//!
//! ```text
//! text ─► question ─► cache? ─► script ─► banglish ─► lang_id ─► signatures ─► guard ─► judge ─► verdict
//!                                language screen (fails OPEN)    safety screen (fails CLOSED)
//! ```
//!
//! [`run_stages`] is the whole flow: a loop over the stages in [`Stage::SCREEN`] order. Every
//! stage runs through the screens' shared [`step`] (timer, deadline, panic capture);
//! [`Run::apply`] alone turns what the stage concluded, or its failure, into the trace, the
//! metrics and "go on" or the end of the screen, failure policy included.

use super::question::Question;
use super::records::{InputMetrics, JudgeDecision};
use super::section::InputSection;
use super::stages::policy::PolicyAction;
use super::stages::{self, Context, StageError, StageEval};
use crate::backends::ModelOutcome;
use crate::product::Product;
use crate::screens::{step, Failure, Ran, Trace, TraceLine};
use crate::verdict::{Decision, FailMode, Outcome, Reason, Stage, TraceEntry, Verdict};
use std::time::Duration;

/// The full screen of one question: every stage in pipeline order.
pub async fn run_stages(product: &Product, q: &Question, metrics: &InputMetrics) -> Verdict {
    run_plan(product, q, metrics, &Stage::SCREEN, Context::default()).await
}

/// Run the given stages (in the given order, which callers take from [`Stage::SCREEN`] or
/// [`Stage::LANGUAGE`]) from a starting context. A screen that no stage ended is `passed` at
/// stage `pipeline`; a borderline guard answer that no judge resolved blocks.
pub async fn run_plan(
    product: &Product,
    q: &Question,
    metrics: &InputMetrics,
    plan: &[Stage],
    mut ctx: Context,
) -> Verdict {
    let mut run = Run::new(product, metrics, plan.len());
    for &stage in plan {
        if run.skips(stage, &ctx) {
            continue;
        }
        let deadline = run.deadline(stage);
        let ran = step(deadline, evaluate(stage, q, &product.input, &ctx)).await;
        if let Some(end) = run.apply(stage, ran, &mut ctx) {
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

/// Run one stage's evaluation. Sync stages are plain calls; the model stages are awaited.
async fn evaluate(
    stage: Stage,
    q: &Question,
    input: &InputSection,
    ctx: &Context,
) -> Result<StageEval, StageError> {
    match stage {
        Stage::Script => Ok(stages::script::stage(q)),
        Stage::Banglish => Ok(stages::banglish::stage(q.latin(), &input.lexicon)),
        Stage::LangId => Ok(stages::lang_id::stage(q, ctx.evidence.as_ref())),
        Stage::Signatures => Ok(match input.signatures.stage(q) {
            // Untrusted content is also read for text addressed to the model or the agent.
            StageEval::Pass { .. } if ctx.untrusted => input.context_signatures.stage(q),
            eval => eval,
        }),
        Stage::Policy => Ok(input.policy.stage(q)),
        Stage::Guard => stages::guard::stage(q, &input.guard).await,
        Stage::Judge => stages::judge::stage(q, &input.judge, ctx).await,
        Stage::Pipeline => Ok(StageEval::Pass {
            detail: None,
            score: None,
        }),
    }
}

/// How a screen ended.
struct End {
    reason: Reason,
    stage: Stage,
    categories: Vec<String>,
    score: Option<f32>,
}

impl TraceLine for TraceEntry {
    type Step = Stage;
    fn new(stage: Stage, outcome: Outcome, micros: u64, detail: Option<String>) -> Self {
        TraceEntry {
            stage,
            outcome,
            micros,
            detail,
        }
    }
}

/// Accumulates the trace and builds the verdict.
struct Run<'a> {
    product: &'a Product,
    metrics: &'a InputMetrics,
    trace: Trace<TraceEntry>,
    language: String,
    /// The language screen has decided (or failed open): its remaining stages are skipped.
    language_done: bool,
    score: Option<f32>,
}

/// What a stage's evaluation comes to: its trace line's outcome and detail, and the end of
/// the screen when it ended it.
type Concluded = (Outcome, Option<String>, Option<End>);

impl<'a> Run<'a> {
    fn new(product: &'a Product, metrics: &'a InputMetrics, stages: usize) -> Self {
        Run {
            product,
            metrics,
            trace: Trace::with_capacity(stages),
            language: "und".into(),
            language_done: false,
            score: None,
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

    /// The model stages' deadlines; the others do not wait on anything.
    fn deadline(&self, stage: Stage) -> Option<Duration> {
        match stage {
            Stage::Guard => Some(self.product.input.guard.timeout),
            Stage::Judge => Some(self.product.input.judge.timeout),
            _ => None,
        }
    }

    /// The one place that turns a stage's result into the trace, the metrics and "go on" or
    /// the end of the screen, failure policy included.
    fn apply(
        &mut self,
        stage: Stage,
        ran: Ran<StageEval, StageError>,
        ctx: &mut Context,
    ) -> Option<End> {
        let elapsed = ran.elapsed;
        let result = ran.result.map_err(|f| match f {
            Failure::Error(e) => e,
            Failure::TimedOut => StageError::Backend(crate::backends::BackendError::Timeout),
            Failure::Panicked => StageError::Panicked,
        });
        self.metrics.record_stage(stage, elapsed.as_secs_f64());
        self.record_model_call(stage, &result);
        let eval = match result {
            Ok(eval) => eval,
            Err(e) => return self.fail(stage, e, elapsed, ctx),
        };
        let (outcome, detail, end) = self.conclude(stage, eval, ctx);
        if stage == Stage::Judge {
            let decision = match outcome {
                Outcome::Pass => JudgeDecision::Allow,
                _ => JudgeDecision::Block,
            };
            self.metrics.record_judge(&self.product.name, decision);
        }
        self.trace.record(stage, outcome, elapsed, detail);
        end
    }

    /// What an evaluation means for the screen.
    fn conclude(&mut self, stage: Stage, eval: StageEval, ctx: &mut Context) -> Concluded {
        match eval {
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
            } => self.language(stage, code, settled, detail),
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
                let end = self.end(reason, stage, categories, score);
                (Outcome::Block, detail, Some(end))
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
                let detail = format!("p_unsafe={score:.3}");
                (Outcome::Borderline, Some(detail), None)
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
        }
    }

    /// A language the stage found: accepted, blocked, or (a weak guess at a language the
    /// screen does not decide on) let through, failing open.
    fn language(&mut self, stage: Stage, code: String, settled: bool, detail: String) -> Concluded {
        let accepted = self.product.input.accepts(&code);
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
            self.language_done = true;
            (Outcome::Pass, Some(detail), None)
        }
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
                    self.product.input.guard.backend.kind().as_str(),
                    e.outcome().as_str()
                )
            }
            (StageError::Backend(e), _) => format!("{}: {}", stage.as_str(), e.outcome().as_str()),
            (other, _) => other.to_string(),
        };
        let mode = if stage.is_language() {
            FailMode::Open
        } else {
            FailMode::Closed
        };
        self.metrics.record_failure(&self.product.name, stage, mode);
        self.trace.failed(stage, mode, elapsed, detail);
        if mode == FailMode::Open {
            self.language_done = true;
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
        let (score, categories) = ctx.judge_context();
        Some(self.end(reason, stage, categories, score))
    }

    /// Model stages count their calls by backend and outcome.
    fn record_model_call(&self, stage: Stage, result: &Result<StageEval, StageError>) {
        let backend = match (stage, result) {
            (Stage::Guard, Ok(StageEval::PassedEmbeddedFirst { .. })) => "embedded",
            (Stage::Guard, _) => self.product.input.guard.backend.kind().as_str(),
            (Stage::Judge, _) if self.product.input.judge.client.is_some() => "judge",
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
            fail_mode: self.trace.fail_mode(),
            config_rev: self.product.config_rev.clone(),
            request_id: None,
            trace: self.trace.into_lines(),
        }
    }
}

//! Run eval cases in-process and compare what happened with what was expected.

use super::suite::{Case, Expect, GuardLabel, Kind};
use crate::config::ConfigSet;
use crate::screens::input::pipeline::{run_plan, run_stages};
use crate::screens::input::question::Question;
use crate::screens::input::records::InputMetrics;
use crate::screens::input::stages::Context;
use crate::verdict::{Decision, Outcome, Reason, Stage, Verdict};
use futures_util::StreamExt;
use serde::Serialize;

/// What a case produced, in the same terms as [`Expect`].
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Actual {
    pub decision: Option<Decision>,
    pub reason: Option<Reason>,
    pub stage: Option<Stage>,
    pub language: Option<String>,
    pub categories: Vec<String>,
    pub guard: Option<GuardLabel>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CaseResult {
    pub suite: String,
    pub group: String,
    pub name: String,
    pub kind: &'static str,
    pub passed: bool,
    pub expected: Expect,
    pub actual: Actual,
    /// How many times the case ran (reruns of failed model cases included).
    pub attempts: u32,
}

/// Every expected field must match; categories must each be present.
pub fn matches(e: &Expect, a: &Actual) -> bool {
    fn eq<T: PartialEq>(want: &Option<T>, got: &Option<T>) -> bool {
        want.is_none() || want == got
    }
    eq(&e.decision, &a.decision)
        && eq(&e.reason, &a.reason)
        && eq(&e.stage, &a.stage)
        && e.language
            .as_ref()
            .is_none_or(|l| a.language.as_deref() == Some(l.as_str()))
        && eq(&e.guard, &a.guard)
        && e.categories
            .as_ref()
            .is_none_or(|cs| cs.iter().all(|c| a.categories.contains(c)))
}

/// Each kind of case runs the pipeline's own stages (the same step, timeouts and failure
/// policy as a real screen), only fewer of them.
async fn run_case(config: &ConfigSet, metrics: &InputMetrics, case: &Case) -> Actual {
    let Some(product) = config.product(&case.product) else {
        return Actual::default();
    };
    let q = Question::new(&case.text).with_english(product.input.lexicon.clone());
    let from_verdict = |v: Verdict| Actual {
        decision: Some(v.decision),
        reason: Some(v.reason),
        stage: Some(v.stage),
        language: Some(v.language),
        categories: v.categories,
        guard: None,
    };
    match case.kind {
        Kind::Language => {
            from_verdict(run_plan(product, &q, metrics, &Stage::LANGUAGE, Context::default()).await)
        }
        Kind::Screen => from_verdict(run_stages(product, &q, metrics).await),
        Kind::Guard => {
            let v = run_plan(product, &q, metrics, &[Stage::Guard], Context::default()).await;
            let outcome = v.trace.first().map(|t| t.outcome);
            let (label, reason) = match outcome {
                Some(Outcome::Pass) => (GuardLabel::Safe, Some(Reason::Passed)),
                Some(Outcome::Block) => (GuardLabel::Unsafe, Some(Reason::Unsafe)),
                Some(Outcome::Borderline) => (GuardLabel::Borderline, None),
                _ => (GuardLabel::Unavailable, Some(Reason::GuardUnavailable)),
            };
            let decision = if label == GuardLabel::Safe {
                Decision::Allow
            } else {
                Decision::Block
            };
            Actual {
                decision: Some(decision),
                reason,
                stage: Some(Stage::Guard),
                language: None,
                categories: v.categories,
                guard: Some(label),
            }
        }
        Kind::Judge => {
            let ctx = Context {
                borderline: Some((0.5, Vec::new())),
                ..Context::default()
            };
            let v = run_plan(product, &q, metrics, &[Stage::Judge], ctx).await;
            Actual {
                decision: Some(v.decision),
                reason: Some(v.reason),
                stage: Some(Stage::Judge),
                ..Default::default()
            }
        }
    }
}

/// Run every case, `concurrency` at a time; a failed model case is run again up to `reruns`
/// times and passes if any run passes.
pub async fn run_all(
    config: &ConfigSet,
    metrics: &InputMetrics,
    cases: &[Case],
    concurrency: usize,
    reruns: u32,
) -> Vec<CaseResult> {
    futures_util::stream::iter(cases.iter().map(|case| async move {
        let mut attempts = 1;
        let mut actual = run_case(config, metrics, case).await;
        let mut passed = matches(&case.expect, &actual);
        while !passed && case.kind.uses_model() && attempts <= reruns {
            attempts += 1;
            actual = run_case(config, metrics, case).await;
            passed = matches(&case.expect, &actual);
        }
        CaseResult {
            suite: case.suite.clone(),
            group: case.group.clone(),
            name: case.name.clone(),
            kind: case.kind.as_str(),
            passed,
            expected: case.expect.clone(),
            actual,
            attempts,
        }
    }))
    .buffered(concurrency.max(1))
    .collect()
    .await
}

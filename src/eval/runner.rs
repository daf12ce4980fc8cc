//! Run eval cases in-process and compare what happened with what was expected.

use super::checks::{in_clear, names_left};
use super::suite::{AnswerDecision, Case, Expect, GuardLabel, Kind, Turn};
use super::turn::{run_rounds, turn_checks, CallActual};
use crate::config::ConfigSet;
use crate::product::Product;
use crate::redact::Kind as ValueKind;
use crate::screens::input::pipeline::{run_plan, run_stages};
use crate::screens::input::question::Question;
use crate::screens::input::records::InputMetrics;
use crate::screens::input::stages::Context;
use crate::verdict::{Decision, Outcome, Reason, Stage, Verdict};
use futures_util::StreamExt;
use serde::Serialize;
use std::collections::BTreeSet;

/// What a case produced, in the same terms as [`Expect`].
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Actual {
    pub decision: Option<Decision>,
    pub reason: Option<Reason>,
    pub stage: Option<Stage>,
    pub language: Option<String>,
    pub categories: Vec<String>,
    pub guard: Option<GuardLabel>,
    /// `output` and `turn`: the kinds of the case's values left in clear.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub in_clear: Vec<ValueKind>,
    /// `output` and `turn`: the product's internal names left in the answer.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub names_left: Vec<String>,
    /// `output` and `turn`: the screen changed the answer (masked or replaced something).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub changed: bool,
    /// `gate` and `turn`: every call's decision.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<CallActual>,
    /// `turn`: the question screen's decision.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub question: Option<Decision>,
    /// `turn`: the answer's decision after the lookup check, and the figures it found
    /// ungrounded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer: Option<AnswerDecision>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ungrounded: Option<Vec<String>>,
    /// `turn`: the figures of the turn's evidence.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evidence: Option<Vec<String>>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CaseResult {
    pub suite: String,
    pub group: String,
    pub name: String,
    pub kind: &'static str,
    /// `turn` cases: which of the turn's checks this is (`question`, `calls`, `evidence`,
    /// `lookup`, `output`); each is scored in the group `<group>.<check>`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub check: Option<&'static str>,
    pub passed: bool,
    /// The check does not exist on this build: counted in its group, never passed.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub not_run: bool,
    pub expected: Expect,
    pub actual: Actual,
    /// How many times the case ran (reruns of failed model cases included).
    pub attempts: u32,
}

/// Every expected field must match; categories must each be present; no value of a
/// `not_in_clear` kind is in clear; every call decides as expected; the ungrounded figures are
/// exactly the expected ones and the evidence holds every expected figure.
pub fn matches(e: &Expect, a: &Actual) -> bool {
    fn eq<T: PartialEq>(want: &Option<T>, got: &Option<T>) -> bool {
        want.is_none() || want == got
    }
    let set = |v: &Option<Vec<String>>| v.iter().flatten().cloned().collect::<BTreeSet<_>>();
    let calls = e.calls.len() == a.calls.len()
        && e.calls.iter().zip(&a.calls).all(|(e, a)| {
            e.expect.decision == a.decision
                && e.expect.reason.is_none_or(|r| r == a.reason)
                && e.expect
                    .reuse_of
                    .as_ref()
                    .is_none_or(|id| a.reuse_of.as_ref() == Some(id))
        });
    calls
        && eq(&e.question, &a.question)
        && eq(&e.answer, &a.answer)
        && (e.ungrounded.is_none()
            || (a.ungrounded.is_some() && set(&e.ungrounded) == set(&a.ungrounded)))
        && (e.evidence.is_none()
            || (a.evidence.is_some() && set(&e.evidence).is_subset(&set(&a.evidence))))
        && e.not_in_clear
            .iter()
            .flatten()
            .all(|k| !a.in_clear.contains(k))
        && (e.no_internal_name != Some(true) || a.names_left.is_empty())
        && (e.unchanged != Some(true) || !a.changed)
        && eq(&e.decision, &a.decision)
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
    match case.kind {
        Kind::Output => return run_output(product, metrics, case).await,
        Kind::Gate => {
            return Actual {
                calls: run_rounds(product, &case.rounds).await,
                ..Actual::default()
            }
        }
        _ => {}
    }
    let q = Question::new(&case.text).with_english(product.input.lexicon.clone());
    let from_verdict = |v: Verdict| Actual {
        decision: Some(v.decision),
        reason: Some(v.reason),
        stage: Some(v.stage),
        language: Some(v.language),
        categories: v.categories,
        ..Actual::default()
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
                ..Actual::default()
            }
        }
        // Run by their own functions, above and in `run_turn`.
        Kind::Output | Kind::Gate | Kind::Turn => Actual::default(),
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

/// The language screen's verdict on any text (the answer's language, for `output` cases).
async fn language_of(product: &Product, metrics: &InputMetrics, text: &str) -> String {
    let q = Question::new(text).with_english(product.input.lexicon.clone());
    run_plan(product, &q, metrics, &Stage::LANGUAGE, Context::default())
        .await
        .language
}

/// The output screen on an answer: its decision, the values and names it left, and (when the
/// case asks) the answer's language.
async fn run_output(product: &Product, metrics: &InputMetrics, case: &Case) -> Actual {
    let mut actual = masking(product, &case.text, case);
    if case.expect.language.is_some() {
        actual.language = Some(language_of(product, metrics, &case.text).await);
    }
    actual
}

fn masking(product: &Product, answer: &str, case: &Case) -> Actual {
    let v = crate::screens::output::screen(product, answer);
    let masked = v.text.unwrap_or_default();
    let redactor = &product.output.redactor;
    Actual {
        // The screen alone (no turn) never asks for a lookup: it allows or blocks.
        decision: Some(match v.decision.allows() {
            true => crate::verdict::Decision::Allow,
            false => crate::verdict::Decision::Block,
        }),
        in_clear: in_clear(redactor, answer, &masked, &case.values),
        names_left: names_left(redactor, &masked),
        changed: masked != crate::text::normalise_output(answer),
        ..Actual::default()
    }
}

/// A turn's checks, each with what it expects and what happened (`None`: not run).
async fn run_turn(
    product: &Product,
    metrics: &InputMetrics,
    case: &Case,
    turn: &Turn,
) -> Vec<(&'static str, Expect, Option<Actual>)> {
    let e = &case.expect;
    let mut checks = Vec::new();
    if let Some(question) = e.question {
        let records = case
            .caller
            .as_ref()
            .map(|c| std::sync::Arc::new(c.numbers(&product.tools.read)));
        let q = Question::new(&turn.question)
            .with_english(product.input.lexicon.clone())
            .with_callers_records(records);
        let v = run_stages(product, &q, metrics).await;
        let expect = Expect {
            question: Some(question),
            ..Expect::default()
        };
        let actual = Actual {
            question: Some(v.decision),
            ..Actual::default()
        };
        checks.push(("question", expect, Some(actual)));
    }
    if !e.calls.is_empty() {
        let round = super::suite::GateRound {
            conversation: format!("eval-{}-{}", case.suite, case.name),
            turn: "1".into(),
            at_ms: 0,
            calls: turn.calls.clone(),
            caller: case.caller.clone(),
        };
        let expect = Expect {
            calls: e.calls.clone(),
            ..Expect::default()
        };
        let actual = Actual {
            calls: run_rounds(product, std::slice::from_ref(&round)).await,
            ..Actual::default()
        };
        checks.push(("calls", expect, Some(actual)));
    }
    checks.extend(evidence_and_lookup(e, turn_checks(product, turn).await));
    if e.answer.is_some()
        || e.not_in_clear.is_some()
        || e.no_internal_name.is_some()
        || e.unchanged.is_some()
    {
        // The masking alone: it blocks only what the product never lets out; `needs_lookup` is
        // the lookup check's, scored above.
        let decision = e.answer.map(|a| match a {
            AnswerDecision::Block => Decision::Block,
            AnswerDecision::Allow | AnswerDecision::NeedsLookup => Decision::Allow,
        });
        let expect = Expect {
            decision,
            not_in_clear: e.not_in_clear.clone(),
            no_internal_name: e.no_internal_name,
            unchanged: e.unchanged,
            ..Expect::default()
        };
        checks.push(("output", expect, Some(masking(product, &turn.answer, case))));
    }
    checks
}

/// The checks of the turn's evidence and of the lookup check, from what [`turn_checks`] said
/// (`None` inside: not run). The lookup check is scored apart for answers with a figure to
/// catch (`lookup_ungrounded`: the catch rate) and answers without (`lookup_grounded`: the
/// false flags), so the ratchet holds each rate on its own.
fn evidence_and_lookup(
    e: &Expect,
    ran: super::turn::TurnChecks,
) -> Vec<(&'static str, Expect, Option<Actual>)> {
    let mut checks = Vec::new();
    if let Some(evidence) = &e.evidence {
        let expect = Expect {
            evidence: Some(evidence.clone()),
            ..Expect::default()
        };
        let actual = ran.evidence.map(|f| Actual {
            evidence: Some(f.into_iter().collect()),
            ..Actual::default()
        });
        checks.push(("evidence", expect, actual));
    }
    if e.answer.is_some() || e.ungrounded.is_some() {
        let ungrounded = e.ungrounded.clone().unwrap_or_default();
        let check = match ungrounded.is_empty() {
            true => "lookup_grounded",
            false => "lookup_ungrounded",
        };
        let expect = Expect {
            answer: e.answer,
            ungrounded: Some(ungrounded),
            ..Expect::default()
        };
        let actual = ran.lookup.map(|(answer, figures)| Actual {
            answer: Some(answer),
            ungrounded: Some(figures.into_iter().collect()),
            ..Actual::default()
        });
        checks.push((check, expect, actual));
    }
    checks
}

fn result_of(case: &Case, check: Option<&'static str>, passed: bool, not_run: bool) -> CaseResult {
    CaseResult {
        suite: case.suite.clone(),
        group: match check {
            Some(c) => format!("{}.{c}", case.group),
            None => case.group.clone(),
        },
        name: case.name.clone(),
        kind: case.kind.as_str(),
        check,
        passed,
        not_run,
        expected: case.expect.clone(),
        actual: Actual::default(),
        attempts: 1,
    }
}

/// A turn case: one result per check.
async fn run_turn_case(config: &ConfigSet, metrics: &InputMetrics, case: &Case) -> Vec<CaseResult> {
    let (Some(product), Some(turn)) = (config.product(&case.product), case.turn.as_ref()) else {
        return vec![result_of(case, None, false, false)];
    };
    run_turn(product, metrics, case, turn)
        .await
        .into_iter()
        .map(|(check, expect, actual)| {
            let passed = actual.as_ref().is_some_and(|a| matches(&expect, a));
            let mut r = result_of(case, Some(check), passed, actual.is_none());
            r.expected = expect;
            r.actual = actual.unwrap_or_default();
            r
        })
        .collect()
}

/// Run every case, `concurrency` at a time; a failed model case is run again up to `reruns`
/// times and passes if any run passes. A `turn` case gives one result per check.
pub async fn run_all(
    config: &ConfigSet,
    metrics: &InputMetrics,
    cases: &[Case],
    concurrency: usize,
    reruns: u32,
) -> Vec<CaseResult> {
    let runs: Vec<Vec<CaseResult>> =
        futures_util::stream::iter(cases.iter().map(|case| async move {
            if case.kind == Kind::Turn {
                return run_turn_case(config, metrics, case).await;
            }
            let mut attempts = 1;
            let mut actual = run_case(config, metrics, case).await;
            let mut passed = matches(&case.expect, &actual);
            while !passed && case.kind.uses_model() && attempts <= reruns {
                attempts += 1;
                actual = run_case(config, metrics, case).await;
                passed = matches(&case.expect, &actual);
            }
            let mut r = result_of(case, None, passed, false);
            r.actual = actual;
            r.attempts = attempts;
            vec![r]
        }))
        .buffered(concurrency.max(1))
        .collect()
        .await;
    runs.into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    use super::super::turn::TurnChecks;
    use super::*;

    fn strings(v: &[&str]) -> BTreeSet<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    fn planted() -> Expect {
        Expect {
            answer: Some(AnswerDecision::NeedsLookup),
            ungrounded: Some(vec!["5800".into()]),
            evidence: Some(vec!["5000".into()]),
            ..Expect::default()
        }
    }

    /// What the merge point returns is scored: evidence must hold the expected figures, the
    /// lookup check must find exactly the expected ones; nothing returned is not run.
    #[test]
    fn the_turns_own_checks_are_scored_from_what_the_merge_point_returns() {
        let score = |e: &Expect, ran: TurnChecks| -> Vec<(&'static str, Option<bool>)> {
            evidence_and_lookup(e, ran)
                .into_iter()
                .map(|(check, expect, actual)| (check, actual.map(|a| matches(&expect, &a))))
                .collect()
        };
        let found = |answer, figures: &[&str]| Some((answer, strings(figures)));
        /// Each check's name, and whether it passed (`None`: not run).
        type Scored = Vec<(&'static str, Option<bool>)>;
        let rows: Vec<(Expect, TurnChecks, Scored)> = vec![
            (
                planted(),
                TurnChecks::default(),
                vec![("evidence", None), ("lookup_ungrounded", None)],
            ),
            (
                planted(),
                TurnChecks {
                    evidence: Some(strings(&["5000", "2026"])),
                    lookup: found(AnswerDecision::NeedsLookup, &["5800"]),
                },
                vec![("evidence", Some(true)), ("lookup_ungrounded", Some(true))],
            ),
            // A figure missed, one flagged too many, the right figures without the decision.
            (
                planted(),
                TurnChecks {
                    evidence: Some(strings(&["500"])),
                    lookup: found(AnswerDecision::Allow, &[]),
                },
                vec![
                    ("evidence", Some(false)),
                    ("lookup_ungrounded", Some(false)),
                ],
            ),
            (
                planted(),
                TurnChecks {
                    evidence: None,
                    lookup: found(AnswerDecision::NeedsLookup, &["5800", "16247"]),
                },
                vec![("evidence", None), ("lookup_ungrounded", Some(false))],
            ),
            (
                planted(),
                TurnChecks {
                    evidence: None,
                    lookup: found(AnswerDecision::Allow, &["5800"]),
                },
                vec![("evidence", None), ("lookup_ungrounded", Some(false))],
            ),
            // A grounded answer: scored as such, and a false flag fails it.
            (
                Expect {
                    answer: Some(AnswerDecision::Allow),
                    ..Expect::default()
                },
                TurnChecks {
                    evidence: None,
                    lookup: found(AnswerDecision::NeedsLookup, &["2025"]),
                },
                vec![("lookup_grounded", Some(false))],
            ),
            (
                Expect {
                    answer: Some(AnswerDecision::Allow),
                    ..Expect::default()
                },
                TurnChecks {
                    evidence: None,
                    lookup: found(AnswerDecision::Allow, &[]),
                },
                vec![("lookup_grounded", Some(true))],
            ),
        ];
        for (i, (e, ran, expected)) in rows.into_iter().enumerate() {
            assert_eq!(score(&e, ran), expected, "row {i}");
        }
    }
}

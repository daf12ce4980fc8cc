//! The `gate` and `turn` kinds: rounds of calls through the gate's own `decide` (a fresh
//! in-memory store per case, a fixed clock), and the checks of a whole turn, each scored on its
//! own: the question screen, the gate, the turn's evidence, the lookup check and the masking.
//!
//! The evidence and the lookup check belong to `crate::turn`: [`turn_checks`] is the one place
//! that calls them. A check a case cannot run is reported as *not run* (counted in its group,
//! shown in the report, never passed).

use super::suite::{AnswerDecision, GateCall, GateRound, Turn};
use crate::product::Product;
use crate::screens::tools::policy::{StoreKind, ToolPolicy};
use crate::screens::tools::{decide, Decision, GateReason, ProposedCall, Round, Stores};
use serde::Serialize;
use std::borrow::Cow;
use std::collections::BTreeSet;

/// The fixed clock a case starts at (2027-01-15, UTC): rounds move it by their `at_ms`.
pub const CLOCK_START_MS: u64 = 1_800_000_000_000;

/// Keys the in-memory store of one case holds at most.
const CASE_STORE_KEYS: usize = 10_000;

/// One call's decision, in the terms of [`super::suite::CallExpect`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CallActual {
    pub round: usize,
    pub id: Option<String>,
    pub decision: Decision,
    pub reason: GateReason,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reuse_of: Option<String>,
}

/// The product's tool policy on the in-memory store (a product served with Redis is evaluated
/// in process: the decisions are the same, only the store differs).
fn in_memory(policy: &ToolPolicy) -> Cow<'_, ToolPolicy> {
    match policy.store {
        StoreKind::Memory => Cow::Borrowed(policy),
        _ => Cow::Owned(ToolPolicy {
            store: StoreKind::Memory,
            ..policy.clone()
        }),
    }
}

fn proposed(calls: &[GateCall]) -> Vec<ProposedCall> {
    calls
        .iter()
        .map(|c| ProposedCall::new(Some(c.id.clone()), Some(c.tool.clone()), Ok(c.args.clone())))
        .collect()
}

/// Every round of a case through the gate, in order, on one fresh store: every call's decision.
pub async fn run_rounds(product: &Product, rounds: &[GateRound]) -> Vec<CallActual> {
    let policy = in_memory(&product.tools);
    let stores = Stores::in_process(CASE_STORE_KEYS);
    let mut out = Vec::new();
    for (i, r) in rounds.iter().enumerate() {
        let round = Round {
            conversation: r.conversation.clone(),
            turn: r.turn.clone(),
            calls: proposed(&r.calls),
            caller: r.caller.clone(),
        };
        let now = CLOCK_START_MS + r.at_ms;
        let v = decide(
            &product.name,
            &product.config_rev,
            &policy,
            &stores,
            round,
            now,
        )
        .await;
        out.extend(v.decisions.into_iter().map(|d| CallActual {
            round: i,
            id: d.id,
            decision: d.decision,
            reason: d.reason,
            reuse_of: d.reuse_of,
        }));
    }
    out
}

/// What the turn's own checks said.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TurnChecks {
    /// The figures (canonical) the turn's evidence holds after every result: `None` when the
    /// evidence does not exist on this build.
    pub evidence: Option<BTreeSet<String>>,
    /// The answer's decision given the evidence and the question, and the figures found
    /// ungrounded: `None` when the lookup check does not exist on this build.
    pub lookup: Option<(AnswerDecision, BTreeSet<String>)>,
}

/// The turn's evidence and lookup check on one case, through `crate::turn`: every result's
/// evidence (`Evidence::of_text`, what `POST /v1/tool-results` keeps), then the lookup check
/// of the masked answer against it, the question and the product's `[lookup] constants` (the
/// suite's `constants` must be among them: [`constants_missing`]). The case's results are given
/// inline (no store, so no model question: the cases all call a tool).
pub async fn turn_checks(product: &Product, turn: &Turn) -> TurnChecks {
    use crate::screens::output::lookup::{self, LookupEval};
    use crate::turn::evidence::Evidence;
    use crate::turn::lookup::OnUngrounded;
    let mut evidence = Evidence::default();
    for r in &turn.results {
        evidence.merge(&Evidence::of_text(&r.content_text()));
    }
    let masked = crate::screens::output::screen(product, &turn.answer)
        .text
        .unwrap_or_default();
    let input = lookup::LookupInput {
        product,
        answer: &masked,
        question: Some(&turn.question),
        inline: Some(&evidence),
        turn: None,
        answer_hash: "",
    };
    let memory = Stores::in_process(CASE_STORE_KEYS);
    let checked = lookup::evaluate(input, &memory, None).await;
    let (decision, figures) = match checked.eval {
        LookupEval::NoFigures | LookupEval::Grounded | LookupEval::Kept => {
            (AnswerDecision::Allow, Vec::new())
        }
        LookupEval::Ungrounded(f) | LookupEval::Unconfirmed(f, _) => {
            match product.lookup.on_ungrounded {
                OnUngrounded::Block => (AnswerDecision::NeedsLookup, f),
                OnUngrounded::Flag => (AnswerDecision::Allow, f),
            }
        }
    };
    TurnChecks {
        evidence: Some(evidence.figures),
        lookup: Some((decision, figures.into_iter().collect())),
    }
}

/// The suite's declared constants the product's `[lookup] constants` do not hold: a suite that
/// assumes a published figure the product does not publish would score the wrong thing.
pub fn constants_missing(product: &Product, constants: &[String]) -> Vec<String> {
    constants
        .iter()
        .filter(|c| {
            let canonical = crate::turn::figures::canonical_of(c);
            !canonical
                .iter()
                .all(|f| product.lookup.constants.contains(f))
        })
        .cloned()
        .collect()
}

// =============================================================================================

//! The `gate` and `turn` kinds: rounds of calls through the gate's own `decide` (a fresh
//! in-memory store per case, a fixed clock), and the checks of a whole turn, each scored on its
//! own: the question screen, the gate, the turn's evidence, the lookup check and the masking.
//!
//! The evidence and the lookup check belong to `crate::turn`, which this build does not have:
//! [`turn_checks`] is the one place that calls them, and until it does those checks are
//! reported as *not run* (counted in their group, shown in the report, never passed).

use super::suite::{AnswerDecision, GateCall, GateRound, Turn};
use crate::product::Product;
use crate::screens::tools::policy::{StoreKind, ToolPolicy};
use crate::screens::tools::store::MemoryStore;
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
    let stores = Stores {
        memory: MemoryStore::new(CASE_STORE_KEYS),
        redis: None,
    };
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

// =============================================================================================
// MERGE POINT (issue 28): the lead replaces the body of `turn_checks` when the `results` and
// `lookup` branches land. Everything else in the eval already runs; only this function knows
// whether the turn's evidence and the lookup check exist.
// =============================================================================================

/// The turn's evidence and lookup check on one case. **Today it runs neither** and says so
/// (`None` for both: the runner reports those checks as not run). At merge it must become:
///
/// ```text
/// let mut evidence = crate::turn::evidence::Evidence::default();
/// for r in &turn.results {
///     evidence.merge(&crate::turn::evidence::Evidence::of_text(&r.content_text()));
/// }
/// // the output screen given that evidence, the question (what the person typed) and the
/// // product's constants (this suite's `constants` must be among them):
/// let v = /* the output screen with evidence */ (product, &turn.answer, &evidence, &turn.question);
/// TurnChecks {
///     evidence: Some(evidence.figures.clone()),
///     lookup: Some((/* v.decision as AnswerDecision */, /* v.figures: the ungrounded, canonical */)),
/// }
/// ```
///
/// `constants` are the suite's declared product constants (hotline, published fees): the
/// product configuration should carry them; until it does, the lead may pass them in.
pub fn turn_checks(product: &Product, turn: &Turn, constants: &[String]) -> TurnChecks {
    let _ = (product, turn, constants);
    TurnChecks::default()
}

// =============================================================================================

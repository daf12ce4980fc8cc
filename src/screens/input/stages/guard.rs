//! Stage 6, guard: the product's guard backend scores the question and the product's
//! thresholds turn its judgement into `safe`, `unsafe` or `borderline`. Timeouts and errors are
//! not handled here: the pipeline applies the fail-closed policy.
//!
//! The embedded model reads the folded forms; a remote model reads only the outbound form
//! (invisible characters removed, card numbers masked), made here, inside the guard's timer.

use super::{StageError, StageEval};
use crate::backends::breaker::{call_through, Breaker};
use crate::backends::{GuardBackend, Judgement, NativeLabel, Thresholds};
use crate::screens::input::question::Question;
use crate::verdict::Reason;
use std::sync::Arc;
use std::time::Duration;

/// A product's `[guard]` section, validated: the model, its thresholds and its deadline.
#[derive(Debug)]
pub struct GuardSection {
    pub backend: Arc<dyn GuardBackend>,
    /// Tiered guard: the embedded model first (`guard.embedded_first_below`); off when `None`.
    pub prefilter: Option<Prefilter>,
    /// The remote guard's breaker and concurrency cap (none for the embedded model).
    pub breaker: Option<Arc<Breaker>>,
    pub thresholds: Thresholds,
    /// How long the stage may take before the question is blocked (`guard_unavailable`); the
    /// pipeline enforces it.
    pub timeout: Duration,
}

/// The tiered guard: the embedded model scores every question first; one it scores below
/// `allow_below` passes without a remote call. Off unless a product sets
/// `guard.embedded_first_below`. The embedded model's explicit labels are never softened, and a
/// failure of it fails closed like any guard failure.
#[derive(Debug, Clone)]
pub struct Prefilter {
    pub backend: Arc<dyn GuardBackend>,
    pub allow_below: f32,
}

/// The stage: classify, then apply the product's thresholds.
pub async fn stage(q: &Question, guard: &GuardSection) -> Result<StageEval, StageError> {
    if let Some(pre) = &guard.prefilter {
        let j = pre.backend.classify(q).await?;
        if let (NativeLabel::Score | NativeLabel::Safe, Some(p)) = (j.label, j.p_unsafe) {
            if p < pre.allow_below {
                return Ok(StageEval::PassedEmbeddedFirst {
                    detail: format!(
                        "embedded first: p_unsafe={p:.3} < {}: no remote call",
                        pre.allow_below
                    ),
                    score: p,
                });
            }
        }
    }
    // A remote backend goes through its breaker and concurrency cap.
    let judgement = call_through(guard.breaker.as_deref(), guard.backend.classify(q)).await?;
    let p = |score: Option<f32>| score.map(|p| format!("p_unsafe={p:.3}"));
    Ok(match apply_thresholds(judgement, &guard.thresholds) {
        GuardEval::Safe { score } => StageEval::Pass {
            detail: p(score),
            score,
        },
        GuardEval::Unsafe { score, categories } => StageEval::Block {
            reason: Reason::Unsafe,
            categories,
            score,
            detail: p(score),
        },
        GuardEval::Borderline { score, categories } => StageEval::Borderline { score, categories },
    })
}

#[derive(Debug, Clone, PartialEq)]
pub enum GuardEval {
    Safe {
        score: Option<f32>,
    },
    Unsafe {
        score: Option<f32>,
        categories: Vec<String>,
    },
    Borderline {
        score: f32,
        categories: Vec<String>,
    },
}

/// The probability band decides when the backend gives one; the native label otherwise. A
/// threshold can only make the verdict stricter than the model's own label: an explicit
/// `unsafe` (or a moderation flag) is never below borderline, whatever its probability.
/// Qwen3Guard's `Controversial` is always borderline. Categories are kept even when the band
/// overrides the label (an `unsafe\nS6` at p=0.55 is borderline with S6).
pub fn apply_thresholds(j: Judgement, t: &Thresholds) -> GuardEval {
    let categories = j.categories;
    match (j.label, j.p_unsafe) {
        (NativeLabel::Unsafe, Some(p)) if p < t.block_at => GuardEval::Borderline {
            score: p,
            categories,
        },
        (NativeLabel::Controversial, p) => GuardEval::Borderline {
            score: p.unwrap_or(0.5),
            categories,
        },
        (_, Some(p)) if p >= t.block_at => GuardEval::Unsafe {
            score: Some(p),
            categories,
        },
        (_, Some(p)) if p < t.allow_below => GuardEval::Safe { score: Some(p) },
        (_, Some(p)) => GuardEval::Borderline {
            score: p,
            categories,
        },
        (NativeLabel::Unsafe, None) => GuardEval::Unsafe {
            score: None,
            categories,
        },
        (NativeLabel::Safe, None) => GuardEval::Safe { score: None },
        // A score-only backend without a score never gets here (backends always set one);
        // if one did, the judge decides.
        (NativeLabel::Score, None) => GuardEval::Borderline {
            score: 0.5,
            categories,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threshold_table() {
        let t = Thresholds {
            allow_below: 0.3,
            block_at: 0.8,
        };
        let j = |label, p: Option<f32>| Judgement {
            label,
            p_unsafe: p,
            categories: vec!["S6".into()],
        };
        let kind = |e: GuardEval| match e {
            GuardEval::Safe { .. } => "safe",
            GuardEval::Unsafe { .. } => "unsafe",
            GuardEval::Borderline { .. } => "borderline",
        };
        for (judgement, want) in [
            (j(NativeLabel::Score, Some(0.1)), "safe"),
            (j(NativeLabel::Score, Some(0.3)), "borderline"),
            (j(NativeLabel::Score, Some(0.79)), "borderline"),
            (j(NativeLabel::Score, Some(0.8)), "unsafe"),
            (j(NativeLabel::Unsafe, Some(0.55)), "borderline"),
            // An explicit unsafe label is never made safe by a low probability.
            (j(NativeLabel::Unsafe, Some(0.1)), "borderline"),
            (j(NativeLabel::Unsafe, Some(0.0)), "borderline"),
            (j(NativeLabel::Safe, Some(0.95)), "unsafe"),
            (j(NativeLabel::Unsafe, None), "unsafe"),
            (j(NativeLabel::Safe, None), "safe"),
            (j(NativeLabel::Controversial, None), "borderline"),
            (j(NativeLabel::Controversial, Some(0.1)), "borderline"),
        ] {
            assert_eq!(
                kind(apply_thresholds(judgement.clone(), &t)),
                want,
                "{judgement:?}"
            );
        }
        match apply_thresholds(j(NativeLabel::Unsafe, Some(0.55)), &t) {
            GuardEval::Borderline { categories, .. } => {
                assert_eq!(categories, vec!["S6".to_string()])
            }
            other => panic!("{other:?}"),
        }
    }
}

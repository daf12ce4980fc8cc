//! Tool results on their way back to the model: `POST /v1/tool-results`. Each result is
//! screened and wrapped as untrusted content by the context screen (the same plan, markers and
//! boundary as `/v1/screen-context`), then kept in the turn's state, in one atomic step of the
//! gate's store ([`crate::screens::tools::turn`]):
//!
//! ```text
//! results ─► context screen (per result: signatures, hidden text, guard model; wrapped) ─►
//!            state (ids against the turn's calls, evidence added, failures into tool health)
//! ```
//!
//! - **Evidence** is what the results handed to the model state: the figures and identifiers
//!   of each result that passed ([`crate::turn::evidence::Evidence`]). A blocked result's
//!   figures are not evidence: the model never reads them.
//! - **`unknown_call`**: a result whose id is not a call the gate let go ahead in this turn is
//!   accepted but marked, and counted.
//! - **Health**: each failed result (`ok: false`) of a tool on the allowlist counts in that
//!   tool's failure window ([`crate::turn::health`]).
//! - **Fail closed**: when the store does not answer, nothing is kept, and every result is
//!   blocked as `gate_unavailable`: a result whose evidence the turn cannot hold would make
//!   the answer's lookup check fail anyway, and the platform is told so now. Over the turn's
//!   limits the request is refused (`422 turn_evidence_full`), and nothing is kept.

pub mod records;
pub mod verdict;

pub use verdict::{EvidenceCounts, ToolResult};
pub use verdict::{ResultReason, ResultVerdict, ResultsRequest, ResultsState, ResultsVerdict};

use crate::product::Product;
use crate::screens::context::{self, DocDecision, Document};
use crate::screens::input::records::InputMetrics;
use crate::screens::records::Records;
use crate::screens::tools::store::StoreError;
use crate::screens::tools::turn::ResultsBatch;
use crate::screens::tools::{now_ms, GateStep, GateTrace, Stores};
use crate::screens::{step, Failure, Trace};
use crate::turn::evidence::Evidence;
use crate::verdict::{FailMode, Outcome};
use std::time::Instant;

/// Results per request at most (`422 too_many_results`).
pub const MAX_RESULTS_PER_REQUEST: usize = 32;
/// A result's content at most, in bytes of UTF-8 (JSON content as serialised):
/// `422 result_too_large`. The body limit (`GUARD_MAX_BODY_BYTES`, 64 KiB by default) also
/// holds: raise it to send several large results at once.
pub const MAX_RESULT_BYTES: usize = 32 * 1024;

/// The turn cannot hold more evidence (the limit that was reached).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct TurnFull(pub String);

/// The route's screen: the results screened, kept, then recorded (metrics and one audit line
/// with keyed hashes of ids and contents).
pub async fn answer(
    product: &Product,
    stores: &Stores,
    request: ResultsRequest,
    records: &Records,
) -> Result<ResultsVerdict, TurnFull> {
    let started = Instant::now();
    let hmacs: Vec<(String, String)> = request
        .results
        .iter()
        .map(|r| {
            (
                records.audit.text_hash(&r.id),
                records.audit.text_hash(&r.content),
            )
        })
        .collect();
    let p = product;
    let verdict = screen(p, stores, request, &records.input, now_ms()).await;
    records.results.record(p, &verdict);
    match &verdict {
        Ok(v) => {
            records
                .tools
                .health_changed(&p.name, &p.tools, &v.health_changes);
            let micros = started.elapsed().as_micros() as u64;
            records::audit_results(&records.audit, v, &hmacs, micros);
        }
        Err(_) => records.results.turn_full(&p.name),
    }
    verdict
}

/// Screen and keep one request's results; `now_ms` is the in-process store's clock.
pub async fn screen(
    product: &Product,
    stores: &Stores,
    request: ResultsRequest,
    metrics: &InputMetrics,
    now_ms: u64,
) -> Result<ResultsVerdict, TurnFull> {
    let ResultsRequest {
        conversation,
        turn,
        results,
    } = request;
    let docs = results
        .iter()
        .map(|r| Document {
            id: Some(r.id.clone()),
            text: r.content.clone(),
            owner: None,
        })
        .collect();
    let screened = context::screen(product, docs, None, metrics).await;
    let mut delta = Evidence::default();
    for (r, d) in results.iter().zip(&screened.documents) {
        if d.decision == DocDecision::Pass {
            delta.merge(&Evidence::of_text(&r.content));
        }
    }
    // Every result counts as one the turn received, whatever the screen said of it.
    delta.results = results.len() as u32;
    let policy = &product.tools;
    let batch = ResultsBatch {
        conversation: conversation.clone(),
        turn: turn.clone(),
        ids: results.iter().map(|r| r.id.clone()).collect(),
        evidence: delta,
        failures: results
            .iter()
            .filter(|r| !r.ok && policy.tools.contains_key(&r.tool))
            .map(|r| r.tool.clone())
            .collect(),
    };
    let mut trace = Trace::<GateTrace>::with_capacity(1);
    // Redis applies its own deadline (`store_timeout_ms`); the memory store does not wait.
    let ran = step(
        None,
        stores.keep_results(policy, &product.name, &batch, now_ms),
    )
    .await;
    let store = policy.store.as_str().to_string();
    let kept = match ran.result {
        Ok(kept) => {
            trace.record(GateStep::State, Outcome::Pass, ran.elapsed, Some(store));
            Some(kept)
        }
        Err(Failure::Error(StoreError::TurnFull(limit))) => return Err(TurnFull(limit)),
        Err(failure) => {
            let why = match failure {
                Failure::Error(e) => e.to_string(),
                Failure::TimedOut => "timed out".to_string(),
                Failure::Panicked => "check panicked".to_string(),
            };
            let detail = format!("{store}: {why}");
            trace.failed(GateStep::State, FailMode::Closed, ran.elapsed, detail);
            None
        }
    };
    let out: Vec<ResultVerdict> = results
        .into_iter()
        .zip(screened.documents)
        .enumerate()
        .map(|(index, (r, d))| {
            let unknown_call = kept
                .as_ref()
                .and_then(|k| k.known.get(index))
                .is_some_and(|known| !known);
            let mut v = ResultVerdict {
                index,
                id: r.id,
                tool: r.tool,
                ok: r.ok,
                decision: d.decision,
                reason: ResultReason::Screen(d.reason),
                categories: d.categories,
                score: d.score,
                wrapped: d.wrapped,
                unknown_call,
                trace: d.trace,
            };
            if kept.is_none() {
                v.decision = DocDecision::Block;
                v.reason = ResultReason::GateUnavailable;
                v.wrapped = None;
            }
            v
        })
        .collect();
    let unknown_calls = out.iter().filter(|r| r.unknown_call).count();
    let (state, evidence, unavailable_tools, health_changes) = match kept {
        Some(k) => (
            ResultsState::Kept,
            Some(EvidenceCounts {
                results: k.evidence.results,
                figures: k.evidence.figures.len(),
                identifiers: k.evidence.identifiers.len(),
            }),
            k.health.unavailable,
            k.health.changes,
        ),
        None => (
            ResultsState::GateUnavailable,
            None,
            policy.tools.keys().cloned().collect(),
            Vec::new(),
        ),
    };
    Ok(ResultsVerdict {
        product: product.name.clone(),
        conversation,
        turn,
        results: out,
        state,
        evidence,
        unknown_calls,
        unavailable_tools,
        boundary: screened.boundary,
        config_rev: product.config_rev.clone(),
        trace: trace.into_lines(),
        health_changes,
    })
}

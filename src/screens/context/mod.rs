//! Untrusted content on its way into the model: `POST /v1/screen-context` screens retrieved
//! documents and tool results with the input side's injection signatures, hidden-text checks
//! and guard model (the [`Stage::CONTEXT`] plan of the one pipeline loop), and hands back each
//! document that passes wrapped as delimited, labelled untrusted data: markers carrying a
//! random boundary per request (no document can write the closer), chat-template control
//! tokens and our own markers neutralised, invisible characters removed and card numbers
//! masked. The context plan's signatures include a family the question screen does not use:
//! text addressed to the model or the agent ("AI agents reading this should…", "IMPORTANT
//! SYSTEM NOTICE: the assistant must…"), which a customer may well write to us but which has
//! no business inside a document.
//!
//! - [`verdict`]  per document its decision, reason and trace
//! - [`wrap`]     the boundary, the markers and the neutralised body
//! - [`records`]  documents by decision, and the audit line
//!
//! The optional ownership check drops documents whose `owner` is not the caller. It is defence
//! in depth only: access filtering belongs in the retriever, before top-k, or a customer's
//! question can still be answered from ranking signals of documents it never sees.

pub mod records;
pub mod verdict;
pub mod wrap;

pub use verdict::{ContextVerdict, DocDecision, DocReason, DocVerdict, Document};

use crate::product::Product;
use crate::screens::caller::Caller;
use crate::screens::input::pipeline::run_plan;
use crate::screens::input::question::Question;
use crate::screens::input::records::InputMetrics;
use crate::screens::input::stages::Context;
use crate::screens::records::Records;
use crate::verdict::{Reason, Stage};
use std::time::Instant;

/// The screen of `POST /v1/screen-context`: every document screened, then recorded (documents
/// by decision, and one audit line with a keyed hash of each document's text).
pub async fn answer(
    product: &Product,
    docs: Vec<Document>,
    caller: Option<&Caller>,
    request_id: Option<String>,
    records: &Records,
) -> ContextVerdict {
    let started = Instant::now();
    let hmacs: Vec<String> = docs
        .iter()
        .map(|d| records.audit.text_hash(&d.text))
        .collect();
    let mut verdict = screen(product, docs, caller, &records.input).await;
    verdict.request_id = request_id;
    for v in &verdict.documents {
        records.context.record(&product.name, v.decision);
    }
    let micros = started.elapsed().as_micros() as u64;
    records::audit_documents(&records.audit, &verdict, &hmacs, micros);
    verdict
}

/// Screen every document (in order); `caller` turns on the ownership check. The documents
/// that pass are wrapped under one fresh boundary; with no random bytes to draw it from, every
/// document is blocked (`check_failed`: fail closed).
pub async fn screen(
    product: &Product,
    docs: Vec<Document>,
    caller: Option<&Caller>,
    metrics: &InputMetrics,
) -> ContextVerdict {
    let texts: Vec<&str> = docs.iter().map(|d| d.text.as_str()).collect();
    let boundary = wrap::fresh_boundary(&texts);
    // Concurrently: with a remote guard model the documents share its latency (its
    // breaker's concurrency cap still bounds the calls).
    let out =
        futures_util::future::join_all(docs.into_iter().enumerate().map(|(index, doc)| {
            screen_one(product, index, doc, caller, metrics, boundary.as_deref())
        }))
        .await;
    let count = |d: DocDecision| out.iter().filter(|v| v.decision == d).count();
    ContextVerdict {
        product: product.name.clone(),
        passed: count(DocDecision::Pass),
        blocked: count(DocDecision::Block),
        dropped: count(DocDecision::Drop),
        documents: out,
        boundary: boundary.unwrap_or_default(),
        config_rev: product.config_rev.clone(),
        request_id: None,
    }
}

async fn screen_one(
    product: &Product,
    index: usize,
    doc: Document,
    caller: Option<&Caller>,
    metrics: &InputMetrics,
    boundary: Option<&str>,
) -> DocVerdict {
    // The owner is the caller when it is the caller's id or one of its records, read as the
    // gate reads record arguments (`01711000000` is `+8801711000000`).
    if let (Some(caller), Some(owner)) = (caller, doc.owner.as_deref()) {
        if !caller.owns(owner, &product.tools.read) {
            return DocVerdict {
                index,
                id: doc.id,
                decision: DocDecision::Drop,
                reason: DocReason::NotOwner,
                categories: Vec::new(),
                score: None,
                wrapped: None,
                trace: Vec::new(),
            };
        }
    }
    let q = Question::new(&doc.text);
    let untrusted = Context {
        untrusted: true,
        ..Context::default()
    };
    let v = run_plan(product, &q, metrics, &Stage::CONTEXT, untrusted).await;
    let (decision, reason) = match DocReason::of_screen(v.decision, v.reason) {
        // No boundary to wrap it under: fail closed.
        (DocDecision::Pass, _) if boundary.is_none() => {
            (DocDecision::Block, DocReason::Screen(Reason::CheckFailed))
        }
        screened => screened,
    };
    let wrapped = boundary
        .filter(|_| decision == DocDecision::Pass)
        .map(|b| wrap::wrap(b, doc.id.as_deref(), index, &doc.text));
    DocVerdict {
        index,
        id: doc.id,
        decision,
        reason,
        categories: v.categories,
        score: v.score,
        wrapped,
        trace: v.trace,
    }
}

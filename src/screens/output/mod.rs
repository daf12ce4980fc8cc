//! The output screen: the agent's answer on its way out. The agent needs the real values to do
//! its work, so they are allowed in and stopped here, in code: every sensitive value the product
//! lists is masked ([`crate::redact`], the same code the input side masks cards with), internal
//! names are replaced, and an answer holding a kind the product says must never go out (a full
//! PIN or OTP) is blocked.
//!
//! The masking runs through the screens' shared [`step_sync`]: a crash of it blocks the answer
//! (`check_failed`, fail closed) and is traced as such.
//!
//! - [`policy`]   the product's `[output]` section, raw and validated
//! - [`verdict`]  the verdict, its reason and its trace
//! - [`records`]  the screen's metrics and audit line

pub mod policy;
pub mod records;
pub mod verdict;

pub use verdict::{OutputReason, OutputStep, OutputTrace, OutputVerdict};

use crate::product::Product;
use crate::redact::{Finding, Kind, Redacted};
use crate::screens::records::Records;
use crate::screens::{step_sync, Trace};
use crate::verdict::{FailMode, Outcome};
use std::collections::BTreeMap;
use std::convert::Infallible;
use std::time::{Duration, Instant};

/// Screen a whole answer. A crash of the masking blocks the answer (`check_failed`).
pub fn screen(product: &Product, text: &str) -> OutputVerdict {
    let redactor = &product.output.redactor;
    let ran =
        step_sync(|| Ok::<_, Infallible>(redactor.redact(&crate::text::normalise_output(text))));
    let mut trace = Trace::with_capacity(1);
    match ran.result {
        Ok(out) => {
            trace.record(OutputStep::Mask, Outcome::Pass, ran.elapsed, None);
            verdict(product, Some(out.text), out.findings, trace)
        }
        Err(_) => {
            let detail = "check panicked".to_string();
            trace.failed(OutputStep::Mask, FailMode::Closed, ran.elapsed, detail);
            check_failed(product, trace)
        }
    }
}

/// The screen of `POST /v1/screen-output`: the verdict with the caller's request id, recorded
/// (metrics and audit line).
pub fn answer(
    product: &Product,
    text: &str,
    request_id: Option<String>,
    records: &Records,
) -> OutputVerdict {
    let started = Instant::now();
    let mut v = screen(product, text);
    v.request_id = request_id;
    let hmac = records.audit.text_hmac(text);
    record(records, &product.name, hmac.as_str(), &v, started.elapsed());
    v
}

/// Record one answer's verdict: its metrics and its audit line (the answer as a keyed hash).
pub fn record(
    records: &Records,
    product: &str,
    text_hmac: &str,
    v: &OutputVerdict,
    took: Duration,
) {
    records.output.record(product, v);
    let micros = took.as_micros() as u64;
    records::audit_answer(&records.audit, product, text_hmac, v, micros);
}

/// The verdict of an answer whose masking crashed: blocked, no text.
fn check_failed(product: &Product, trace: Trace<OutputTrace>) -> OutputVerdict {
    let mut v = verdict(product, None, Vec::new(), trace);
    v.reason = OutputReason::CheckFailed;
    v.decision = v.reason.decision();
    v
}

/// The verdict over everything found (for the stream: what all its chunks found).
fn verdict(
    product: &Product,
    text: Option<String>,
    findings: Vec<Finding>,
    trace: Trace<OutputTrace>,
) -> OutputVerdict {
    let mut counts = BTreeMap::new();
    for f in &findings {
        *counts.entry(f.kind).or_insert(0) += 1;
    }
    let blocked_kinds: Vec<Kind> = counts
        .keys()
        .filter(|k| product.output.block.contains(k))
        .copied()
        .collect();
    let reason = if blocked_kinds.is_empty() {
        OutputReason::Passed
    } else {
        OutputReason::BlockedKind
    };
    OutputVerdict {
        decision: reason.decision(),
        text,
        findings,
        counts,
        blocked_kinds,
        config_rev: product.config_rev.clone(),
        request_id: None,
        reason,
        trace: trace.into_lines(),
    }
}

/// A streamed answer: chunks in, masked chunks out, the verdict at the end.
pub struct OutputStream {
    stream: crate::redact::Stream,
    findings: Vec<Finding>,
    /// The masking crashed: nothing more leaves, and the verdict blocks.
    failed: bool,
    /// The masking's time over every chunk, and how many chunks: one trace line at the end.
    took: Duration,
    chunks: usize,
}

impl OutputStream {
    pub fn new(product: &Product) -> Self {
        OutputStream {
            stream: product.output.redactor.stream(),
            findings: Vec::new(),
            failed: false,
            took: Duration::ZERO,
            chunks: 0,
        }
    }

    /// A chunk of the answer; returns the masked text that can leave now (nothing, once the
    /// masking has crashed).
    pub fn push(&mut self, chunk: &str) -> String {
        if self.failed {
            return String::new();
        }
        let stream = &mut self.stream;
        let ran =
            step_sync(|| Ok::<_, Infallible>(stream.push(&crate::text::normalise_output(chunk))));
        self.took += ran.elapsed;
        self.chunks += 1;
        match ran.result {
            Ok(Redacted { text, findings }) => {
                self.findings.extend(findings);
                text
            }
            Err(_) => {
                self.failed = true;
                String::new()
            }
        }
    }

    /// The end of the answer: the rest of the masked text and the verdict (blocked, and the
    /// held text withheld, if the masking crashed).
    pub fn finish(mut self, product: &Product) -> (String, OutputVerdict) {
        let mut trace = Trace::with_capacity(1);
        let ran = match self.failed {
            true => None,
            false => {
                let stream = &mut self.stream;
                Some(step_sync(|| Ok::<_, Infallible>(stream.finish())))
            }
        };
        self.took += ran.as_ref().map_or(Duration::ZERO, |r| r.elapsed);
        match ran.map(|r| r.result) {
            Some(Ok(Redacted { text, findings })) => {
                self.findings.extend(findings);
                let detail = Some(format!("chunks={}", self.chunks));
                trace.record(OutputStep::Stream, Outcome::Pass, self.took, detail);
                (text, verdict(product, None, self.findings, trace))
            }
            None | Some(Err(_)) => {
                let detail = format!("check panicked (chunks={})", self.chunks);
                trace.failed(OutputStep::Stream, FailMode::Closed, self.took, detail);
                (String::new(), check_failed(product, trace))
            }
        }
    }
}

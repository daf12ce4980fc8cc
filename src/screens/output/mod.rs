//! The output screen: the agent's answer on its way out. The agent needs the real values to do
//! its work, so they are allowed in and stopped here, in code: every sensitive value the product
//! lists is masked ([`crate::redact`], the same code the input side masks cards with), internal
//! names are replaced, and an answer holding a kind the product says must never go out (a full
//! PIN or OTP) is blocked.

pub mod policy;

use crate::product::Product;
use crate::redact::{Finding, Kind, Redacted};
use serde::Serialize;
use std::collections::BTreeMap;

/// What `POST /v1/screen-output` answers (and the last line of the stream, with `done`).
#[derive(Debug, Clone, Serialize)]
pub struct OutputVerdict {
    /// `allow`, or `block` when a kind in the product's `output.block` was found.
    pub decision: crate::verdict::Decision,
    /// The answer with every value masked (absent on the stream's last line: it was streamed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Kind and char offsets in the masked text of every value found; never the values.
    pub findings: Vec<Finding>,
    /// How many of each kind.
    pub counts: BTreeMap<Kind, usize>,
    /// The kinds that blocked the answer.
    pub blocked_kinds: Vec<Kind>,
    pub config_rev: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// `check_failed` when the masking itself crashed: the answer is blocked and nothing more
    /// of it is given out (fail closed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<&'static str>,
}

/// Screen a whole answer. A crash of the masking blocks the answer (`check_failed`).
pub fn screen(product: &Product, text: &str) -> OutputVerdict {
    let masked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        product
            .output
            .redactor
            .redact(&crate::text::normalise_output(text))
    }));
    match masked {
        Ok(out) => verdict(product, Some(out.text), out.findings),
        Err(_) => check_failed(product),
    }
}

/// The verdict of an answer whose masking crashed: blocked, no text.
fn check_failed(product: &Product) -> OutputVerdict {
    let mut v = verdict(product, None, Vec::new());
    v.decision = crate::verdict::Decision::Block;
    v.reason = Some("check_failed");
    v
}

/// The verdict over everything found (for the stream: what all its chunks found).
pub fn verdict(product: &Product, text: Option<String>, findings: Vec<Finding>) -> OutputVerdict {
    let mut counts = BTreeMap::new();
    for f in &findings {
        *counts.entry(f.kind).or_insert(0) += 1;
    }
    let blocked_kinds: Vec<Kind> = counts
        .keys()
        .filter(|k| product.output.block.contains(k))
        .copied()
        .collect();
    OutputVerdict {
        decision: if blocked_kinds.is_empty() {
            crate::verdict::Decision::Allow
        } else {
            crate::verdict::Decision::Block
        },
        text,
        findings,
        counts,
        blocked_kinds,
        config_rev: product.config_rev.clone(),
        request_id: None,
        reason: None,
    }
}

/// A streamed answer: chunks in, masked chunks out, the verdict at the end.
pub struct OutputStream {
    stream: crate::redact::Stream,
    findings: Vec<Finding>,
    /// The masking crashed: nothing more leaves, and the verdict blocks.
    failed: bool,
}

impl OutputStream {
    pub fn new(product: &Product) -> Self {
        OutputStream {
            stream: product.output.redactor.stream(),
            findings: Vec::new(),
            failed: false,
        }
    }

    /// A chunk of the answer; returns the masked text that can leave now (nothing, once the
    /// masking has crashed).
    pub fn push(&mut self, chunk: &str) -> String {
        if self.failed {
            return String::new();
        }
        let stream = &mut self.stream;
        let pushed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            stream.push(&crate::text::normalise_output(chunk))
        }));
        match pushed {
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
        if self.failed {
            return (String::new(), check_failed(product));
        }
        let stream = &mut self.stream;
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| stream.finish())) {
            Ok(Redacted { text, findings }) => {
                self.findings.extend(findings);
                (text, verdict(product, None, self.findings))
            }
            Err(_) => (String::new(), check_failed(product)),
        }
    }
}

//! The output screen: the agent's answer on its way out. The agent needs the real values to do
//! its work, so they are allowed in and stopped here, in code: every sensitive value the product
//! lists is masked ([`crate::redact`], the same code the input side masks cards with), internal
//! names are replaced, and an answer holding a kind the product says must never go out (a full
//! PIN or OTP) is blocked.

use crate::config::Product;
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
}

/// Screen a whole answer.
pub fn screen(product: &Product, text: &str) -> OutputVerdict {
    let out = product
        .output
        .redactor
        .redact(&crate::text::normalise_output(text));
    verdict(product, Some(out.text), out.findings)
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
    }
}

/// A streamed answer: chunks in, masked chunks out, the verdict at the end.
pub struct OutputStream {
    stream: crate::redact::Stream,
    findings: Vec<Finding>,
}

impl OutputStream {
    pub fn new(product: &Product) -> Self {
        OutputStream {
            stream: product.output.redactor.stream(),
            findings: Vec::new(),
        }
    }

    /// A chunk of the answer; returns the masked text that can leave now.
    pub fn push(&mut self, chunk: &str) -> String {
        let Redacted { text, findings } = self.stream.push(&crate::text::normalise_output(chunk));
        self.findings.extend(findings);
        text
    }

    /// The end of the answer: the rest of the masked text and the verdict.
    pub fn finish(mut self, product: &Product) -> (String, OutputVerdict) {
        let Redacted { text, findings } = self.stream.finish();
        self.findings.extend(findings);
        (text, verdict(product, None, self.findings))
    }
}

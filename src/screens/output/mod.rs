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
//!
//! Given the turn (inline evidence, or a conversation and turn whose evidence the gate's store
//! holds), the answer also takes the lookup check ([`crate::turn::lookup`]): every figure it
//! states must be grounded, or the decision is `needs_lookup`. The check runs on the masked
//! answer (what leaves), after the masking, through the same `step`; a crash of it blocks.
//! Without the turn, the answer is screened as before: masking only.

pub mod lookup;
pub mod policy;
pub mod records;
pub mod verdict;

pub use verdict::{OutputDecision, OutputReason, OutputStep, OutputTrace, OutputVerdict};

use crate::product::Product;
use crate::redact::{Finding, Kind, Redacted};
use crate::screens::records::Records;
use crate::screens::{step, step_sync, Trace, TraceLine};
use crate::turn::evidence::Evidence;
use crate::turn::lookup::{Grounds, OnUngrounded};
use crate::verdict::{FailMode, Outcome};
use lookup::{Checked, LookupEval, LookupModel, TurnMemory, Unconfirmed};
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
        figures: Vec::new(),
        message: None,
        trace: trace.into_lines(),
    }
}

/// The turn an answer belongs to, as the request gives it: all optional.
#[derive(Debug, Clone, Default)]
pub struct TurnContext {
    pub conversation: Option<String>,
    pub turn: Option<String>,
    /// What the person typed: figures in it are grounded.
    pub question: Option<String>,
    /// Inline evidence (a stateless caller's tool results).
    pub evidence: Option<Evidence>,
}

impl TurnContext {
    /// The lookup check runs when there is evidence to check against: inline, or a turn whose
    /// evidence is stored. Otherwise the answer is screened as before.
    pub fn wants_lookup(&self) -> bool {
        self.evidence.is_some() || self.stored().is_some()
    }

    fn stored(&self) -> Option<(&str, &str)> {
        Some((self.conversation.as_deref()?, self.turn.as_deref()?))
    }
}

/// The product's model for the lookup question: its judge server, when it has one.
pub fn lookup_model(product: &Product) -> Option<lookup::JudgeModel> {
    let judge = &product.input.judge;
    judge.client.as_ref().map(|client| lookup::JudgeModel {
        client: client.clone(),
        breaker: judge.breaker.clone(),
    })
}

/// [`answer`] with the turn: the masking, then the lookup check when the turn gives evidence;
/// recorded. `model`: the lookup question's model (the product's judge, [`lookup_model`]).
pub async fn answer_turn(
    product: &Product,
    text: &str,
    request_id: Option<String>,
    ctx: &TurnContext,
    turns: &dyn TurnMemory,
    model: Option<&dyn LookupModel>,
    records: &Records,
) -> OutputVerdict {
    let started = Instant::now();
    let mut v = screen(product, text);
    v.request_id = request_id;
    let hmac = records.audit.text_hmac(text);
    if ctx.wants_lookup() {
        let masked = v.text.clone().unwrap_or_default();
        apply_lookup(
            product,
            &mut v,
            &masked,
            ctx,
            turns,
            model,
            hmac.as_str(),
            records,
        )
        .await;
    }
    record(records, &product.name, hmac.as_str(), &v, started.elapsed());
    v
}

/// Run the lookup check on `answer` (masked) and apply it to `v`: a masking block or crash
/// stays as it is; otherwise the lookup's reason decides. A crash of the check blocks
/// (`check_failed`).
#[allow(clippy::too_many_arguments)]
async fn apply_lookup(
    product: &Product,
    v: &mut OutputVerdict,
    answer: &str,
    ctx: &TurnContext,
    turns: &dyn TurnMemory,
    model: Option<&dyn LookupModel>,
    answer_hash: &str,
    records: &Records,
) {
    if v.reason == OutputReason::CheckFailed {
        return;
    }
    let input = lookup::LookupInput {
        product,
        answer,
        question: ctx.question.as_deref(),
        inline: ctx.evidence.as_ref(),
        turn: ctx.stored(),
        answer_hash,
    };
    let ran = step(None, async {
        Ok::<_, Infallible>(lookup::evaluate(input, turns, model).await)
    })
    .await;
    let checked = match ran.result {
        Ok(c) => c,
        Err(_) => {
            let line = OutputTrace::new(
                OutputStep::Lookup,
                Outcome::FailClosed,
                ran.elapsed.as_micros() as u64,
                Some("check panicked".into()),
            );
            v.trace.push(line);
            v.text = None;
            v.reason = OutputReason::CheckFailed;
            v.decision = v.reason.decision();
            return;
        }
    };
    if let Some(outcome) = checked.asked {
        records.output.record_model_ask(&product.name, outcome);
    }
    let (reason, figures) = lookup_reason(product, &checked);
    records.output.record_lookup(&product.name, reason);
    let outcome = match reason.decision() {
        OutputDecision::Allow => Outcome::Pass,
        _ => Outcome::Block,
    };
    let detail = format!(
        "reason={} stated={} ungrounded={} results={} asked={} model_micros={}",
        reason.as_str(),
        checked.stated,
        figures.len(),
        checked.results,
        checked.asked.unwrap_or("-"),
        checked.model_time.as_micros(),
    );
    let micros = ran.elapsed.as_micros() as u64;
    v.trace.push(OutputTrace::new(
        OutputStep::Lookup,
        outcome,
        micros,
        Some(detail),
    ));
    if v.decision != OutputDecision::Allow {
        // The masking's block stands; the lookup is in the trace.
        return;
    }
    if !figures.is_empty() {
        v.message = Some(format!(
            "look these up with a tool before stating them: {}",
            figures.join(", ")
        ));
    }
    v.figures = figures;
    v.reason = reason;
    v.decision = reason.decision();
}

/// The reason of a lookup evaluation under the product's policy, and its ungrounded figures.
fn lookup_reason(product: &Product, c: &Checked) -> (OutputReason, Vec<String>) {
    let (reason, figures) = match &c.eval {
        LookupEval::NoFigures => (OutputReason::NoFigures, Vec::new()),
        LookupEval::Grounded => (OutputReason::Grounded, Vec::new()),
        LookupEval::Kept => (OutputReason::LookupKept, Vec::new()),
        LookupEval::Ungrounded(f) => (OutputReason::UngroundedFigures, f.clone()),
        LookupEval::Unconfirmed(f, why) => {
            let reason = match why {
                Unconfirmed::ModelYes => OutputReason::LookupModelYes,
                Unconfirmed::ModelUnparsable => OutputReason::LookupModelUnparsable,
                Unconfirmed::ModelUnavailable => OutputReason::LookupModelUnavailable,
                Unconfirmed::NoModel => OutputReason::LookupNoModel,
                Unconfirmed::AlreadyAsked => OutputReason::LookupAlreadyAsked,
                Unconfirmed::TurnUnavailable => OutputReason::LookupTurnUnavailable,
            };
            (reason, f.clone())
        }
    };
    let flag = product.lookup.on_ungrounded == OnUngrounded::Flag;
    if flag && reason.decision() == OutputDecision::NeedsLookup {
        return (OutputReason::LookupFlagged, figures);
    }
    (reason, figures)
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
    /// The lookup check's hold, when the stream was given its turn ([`OutputStream::set_turn`]).
    lookup: Option<StreamLookup>,
}

/// What a streamed answer holds for the lookup check. A data question's answer is held whole;
/// any other streams whole sentences up to the first one stating a figure the person did not
/// type (nor the product publishes, nor the inline evidence states): that sentence and the
/// rest wait for the check at the end.
struct StreamLookup {
    ctx: TurnContext,
    hold_all: bool,
    /// Every masked byte so far, and how many of them were released.
    masked: String,
    released: usize,
    /// A sentence with an unchecked figure was found: nothing more leaves before the check.
    gated: bool,
    /// What grounds a figure in time to stream it: inline evidence with results.
    early: Evidence,
    question: Vec<String>,
    constants: std::collections::BTreeSet<String>,
}

impl StreamLookup {
    fn new(product: &Product, ctx: TurnContext) -> Self {
        let policy = &product.lookup;
        let hold_all = ctx
            .question
            .as_deref()
            .is_some_and(|q| policy.is_data_question(q));
        let early = ctx
            .evidence
            .clone()
            .filter(|e| e.results > 0)
            .unwrap_or_default();
        let question = ctx
            .question
            .as_deref()
            .map(crate::turn::figures::canonical_of)
            .unwrap_or_default();
        StreamLookup {
            ctx,
            hold_all,
            masked: String::new(),
            released: 0,
            gated: false,
            early,
            question,
            constants: policy.constants.clone(),
        }
    }

    /// Masked text in; what may leave now.
    fn take(&mut self, masked: &str) -> String {
        self.masked.push_str(masked);
        if self.hold_all || self.gated {
            return String::new();
        }
        let from = self.released;
        let grounds = Grounds {
            evidence: &self.early,
            question: std::mem::take(&mut self.question),
            constants: &self.constants,
        };
        while let Some(end) = sentence_end(&self.masked[self.released..]) {
            let sentence = &self.masked[self.released..self.released + end];
            let unchecked = crate::turn::figures::stated(sentence)
                .iter()
                .any(|f| !grounds.grounded(&f.canonical));
            if unchecked {
                self.gated = true;
                break;
            }
            self.released += end;
        }
        self.question = grounds.question;
        self.masked[from..self.released].to_string()
    }
}

/// The end of the first whole sentence of `text` (after the white space that follows its
/// terminator), if one is complete.
fn sentence_end(text: &str) -> Option<usize> {
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let ends = matches!(c, '.' | '!' | '?' | '।' | '\n');
        if !ends {
            continue;
        }
        if c == '\n' {
            return Some(i + 1);
        }
        match chars.peek() {
            Some(&(j, n)) if n.is_whitespace() => return Some(j + n.len_utf8()),
            _ => continue,
        }
    }
    None
}

impl OutputStream {
    pub fn new(product: &Product) -> Self {
        OutputStream {
            stream: product.output.redactor.stream(),
            findings: Vec::new(),
            failed: false,
            took: Duration::ZERO,
            chunks: 0,
            lookup: None,
        }
    }

    /// The turn of the answer, before its first chunk: when it wants the lookup check, the
    /// stream holds what has not been checked ([`StreamLookup`]) and
    /// [`finish_turn`](Self::finish_turn) runs the check.
    pub fn set_turn(&mut self, product: &Product, ctx: TurnContext) {
        self.lookup = ctx.wants_lookup().then(|| StreamLookup::new(product, ctx));
    }

    /// Whether the stream holds the whole answer until it is checked (a data question).
    pub fn holds_whole(&self) -> bool {
        self.lookup.as_ref().is_some_and(|l| l.hold_all)
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
                match &mut self.lookup {
                    Some(l) => l.take(&text),
                    None => text,
                }
            }
            Err(_) => {
                self.failed = true;
                String::new()
            }
        }
    }

    /// A stream cut short by its deadlines (`why`: [`OutputReason::StreamIdle`] or
    /// [`OutputReason::StreamTooLong`]): the rest of the masked text, and a verdict that blocks,
    /// since the answer never finished.
    pub fn cut(mut self, product: &Product, why: OutputReason) -> (String, OutputVerdict) {
        // What the lookup check holds never leaves unchecked.
        let held = self.lookup.take().is_some();
        let (rest, mut v) = self.finish(product);
        let rest = if held { String::new() } else { rest };
        if v.reason != OutputReason::CheckFailed {
            v.reason = why;
            v.decision = why.decision();
        }
        (rest, v)
    }

    /// The end of an answer with its turn: the masking's end, then the lookup check over the
    /// whole masked answer; what was held leaves only when the decision allows it.
    pub async fn finish_turn(
        mut self,
        product: &Product,
        turns: &dyn TurnMemory,
        model: Option<&dyn LookupModel>,
        records: &Records,
        answer_hash: &str,
    ) -> (String, OutputVerdict) {
        let Some(mut held) = self.lookup.take() else {
            return self.finish(product);
        };
        let (rest, mut v) = self.finish(product);
        held.masked.push_str(&rest);
        let masked = std::mem::take(&mut held.masked);
        apply_lookup(
            product,
            &mut v,
            &masked,
            &held.ctx,
            turns,
            model,
            answer_hash,
            records,
        )
        .await;
        let rest = match v.decision.allows() {
            true => masked.get(held.released..).unwrap_or_default().to_string(),
            false => String::new(),
        };
        (rest, v)
    }

    /// The end of the answer: the rest of the masked text and the verdict (blocked, and the
    /// held text withheld, if the masking crashed). A stream given a turn that wants the
    /// lookup check ends with [`finish_turn`](Self::finish_turn); ended here, it fails closed.
    pub fn finish(mut self, product: &Product) -> (String, OutputVerdict) {
        if self.lookup.take().is_some() {
            let mut trace = Trace::with_capacity(1);
            let detail = "the lookup check did not run".to_string();
            trace.failed(OutputStep::Lookup, FailMode::Closed, Duration::ZERO, detail);
            return (String::new(), check_failed(product, trace));
        }
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

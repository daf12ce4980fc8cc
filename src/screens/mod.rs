//! The screens: the guard's control points, one slice each. Each owns its configuration
//! section, its checks, its verdict (a reason enum and a trace) and what it records.
//!
//! - [`input`]    the question, before the agent sees it: the pipeline of stages
//! - [`tools`]    the tool calls the model proposes: the gate
//! - [`context`]  untrusted content on its way into the model (documents, tool results)
//! - [`results`]  tool results back through the guard: screened, wrapped, kept as the turn's evidence
//! - [`output`]   the agent's answer on its way out: masking, blocking
//! - [`caller`]   whose turn it is (the platform's session): read by every screen
//! - [`records`]  every screen's metrics and the audit log they write to
//!
//! Every check of every screen runs through [`step`] (or [`step_sync`] for a check that does
//! not wait): one place owns the timer, the deadline and the panic capture, and a [`Trace`]
//! owns the trace entry and the failure policy. A check never times or traces itself, so a new
//! check cannot forget to; fail-open and fail-closed are recorded as themselves, never folded
//! into allow or block. This module imports none of the screens.

pub mod caller;
pub mod context;
pub mod input;
pub mod output;
pub mod records;
pub mod results;
pub mod tools;

use crate::verdict::{FailMode, Outcome};
use futures_util::FutureExt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::time::{Duration, Instant};

/// Why a check gave no answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Failure<E> {
    /// The check answered with an error of its own.
    Error(E),
    /// The check did not answer within its deadline.
    TimedOut,
    /// The check crashed.
    Panicked,
}

/// A check run under the shared step: what it gave and how long it took.
#[derive(Debug)]
pub struct Ran<T, E> {
    pub result: Result<T, Failure<E>>,
    /// Everything the check did, what it read lazily included.
    pub elapsed: Duration,
}

/// Run one check under its timer, its deadline (model calls have one) and panic capture.
pub async fn step<T, E>(
    deadline: Option<Duration>,
    check: impl Future<Output = Result<T, E>>,
) -> Ran<T, E> {
    let started = Instant::now();
    let guarded = AssertUnwindSafe(check).catch_unwind();
    let caught = match deadline {
        Some(limit) => match tokio::time::timeout(limit, guarded).await {
            Ok(r) => r.map(|r| r.map_err(Failure::Error)),
            Err(_) => Ok(Err(Failure::TimedOut)),
        },
        None => guarded.await.map(|r| r.map_err(Failure::Error)),
    };
    Ran {
        result: caught.unwrap_or(Err(Failure::Panicked)),
        elapsed: started.elapsed(),
    }
}

/// [`step`] for a check that does not wait (masking, the gate's rules): timer and panic
/// capture.
pub fn step_sync<T, E>(check: impl FnOnce() -> Result<T, E>) -> Ran<T, E> {
    let started = Instant::now();
    let result = match std::panic::catch_unwind(AssertUnwindSafe(check)) {
        Ok(r) => r.map_err(Failure::Error),
        Err(_) => Err(Failure::Panicked),
    };
    Ran {
        result,
        elapsed: started.elapsed(),
    }
}

/// One line of a screen's trace. Each screen has its own wire shape (the input screen's
/// `{stage, outcome, micros, detail}`, the gate's `{step, micros, detail}`); they are all
/// made here, by [`Trace`].
pub trait TraceLine {
    /// What ran: the stage or step.
    type Step: Copy;
    fn new(step: Self::Step, outcome: Outcome, micros: u64, detail: Option<String>) -> Self;
}

/// A screen's trace as its checks run, and how failures were decided.
#[derive(Debug, Clone)]
pub struct Trace<L> {
    lines: Vec<L>,
    fail_mode: Option<FailMode>,
}

impl<L: TraceLine> Trace<L> {
    pub fn with_capacity(checks: usize) -> Self {
        Trace {
            lines: Vec::with_capacity(checks),
            fail_mode: None,
        }
    }

    /// A check that answered: what it concluded.
    pub fn record(
        &mut self,
        step: L::Step,
        outcome: Outcome,
        elapsed: Duration,
        detail: Option<String>,
    ) {
        if let Some(mode) = fail_mode_of(outcome) {
            self.note(mode);
        }
        let micros = elapsed.as_micros() as u64;
        self.lines.push(L::new(step, outcome, micros, detail));
    }

    /// A check that gave no answer, decided by its failure policy: open (the screen goes on)
    /// or closed (the screen blocks). The trace says which, never a plain pass or block.
    pub fn failed(&mut self, step: L::Step, mode: FailMode, elapsed: Duration, detail: String) {
        let outcome = match mode {
            FailMode::Open => Outcome::FailOpen,
            FailMode::Closed => Outcome::FailClosed,
        };
        self.record(step, outcome, elapsed, Some(detail));
    }

    /// `closed` when any check failed closed, else `open` when any failed open.
    pub fn fail_mode(&self) -> Option<FailMode> {
        self.fail_mode
    }

    pub fn into_lines(self) -> Vec<L> {
        self.lines
    }

    fn note(&mut self, mode: FailMode) {
        // A closed failure outranks an open one.
        if self.fail_mode != Some(FailMode::Closed) {
            self.fail_mode = Some(mode);
        }
    }
}

fn fail_mode_of(outcome: Outcome) -> Option<FailMode> {
    match outcome {
        Outcome::FailOpen => Some(FailMode::Open),
        Outcome::FailClosed => Some(FailMode::Closed),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq)]
    struct Line(&'static str, Outcome);

    impl TraceLine for Line {
        type Step = &'static str;
        fn new(step: &'static str, outcome: Outcome, _: u64, _: Option<String>) -> Self {
            Line(step, outcome)
        }
    }

    #[tokio::test]
    async fn a_check_that_panics_times_out_or_errs_is_a_failure_not_a_crash() {
        let ran = step(None, async { Ok::<u8, ()>(7) }).await;
        assert_eq!(ran.result, Ok(7));
        let ran = step(None, async { Err::<u8, &str>("down") }).await;
        assert_eq!(ran.result, Err(Failure::Error("down")));
        async fn boom() -> Result<u8, ()> {
            panic!("boom")
        }
        let ran = step(None, boom()).await;
        assert_eq!(ran.result, Err(Failure::Panicked));
        let never = std::future::pending::<Result<u8, ()>>();
        let ran = step(Some(Duration::ZERO), never).await;
        assert_eq!(ran.result, Err(Failure::TimedOut));
        let ran = step_sync(|| -> Result<u8, ()> { panic!("boom") });
        assert_eq!(ran.result, Err(Failure::Panicked));
        assert_eq!(step_sync(|| Ok::<u8, ()>(1)).result, Ok(1));
    }

    #[test]
    fn a_closed_failure_outranks_an_open_one_and_both_are_traced_as_themselves() {
        let mut t = Trace::<Line>::with_capacity(3);
        t.record("a", Outcome::Pass, Duration::ZERO, None);
        assert_eq!(t.fail_mode(), None);
        t.failed("b", FailMode::Closed, Duration::ZERO, "x".into());
        t.failed("c", FailMode::Open, Duration::ZERO, "y".into());
        assert_eq!(t.fail_mode(), Some(FailMode::Closed));
        let lines = t.into_lines();
        assert_eq!(
            lines,
            vec![
                Line("a", Outcome::Pass),
                Line("b", Outcome::FailClosed),
                Line("c", Outcome::FailOpen)
            ]
        );
    }
}

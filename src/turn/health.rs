//! Per-tool health: failed results (`ok: false` on `POST /v1/tool-results`) feed one window per
//! tool, product-wide. A tool is **unavailable** while its window holds at least `failures`
//! failures of the last `window_seconds` (`[tool_gate] health`); the gate then skips calls to it
//! (`tool_unavailable`) and every gate answer lists it in `unavailable_tools`.
//!
//! A successful result does not heal a tool: only time does, as its failures leave the window.
//! One good answer between failures says little about the next call, and a tool that flaps
//! between ok and failed would otherwise flap in and out of the agent's tool list.
//!
//! Only the `failures` most recent failures are kept: with times that do not go backwards, the
//! window holds `failures` or more exactly when the oldest of those is still in it. So a tool
//! failing without end costs `failures` entries, never more.

use std::collections::VecDeque;

/// `[tool_gate] health = { failures = 5, window_seconds = 60 }`; `failures = 0` turns it off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HealthSettings {
    pub failures: u32,
    pub window_ms: u64,
}

impl Default for HealthSettings {
    fn default() -> Self {
        HealthSettings {
            failures: 5,
            window_ms: 60_000,
        }
    }
}

impl HealthSettings {
    pub fn enabled(&self) -> bool {
        self.failures > 0
    }
}

/// A change of a tool's health, as one observer saw it (each change is seen once).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HealthChange {
    /// It went over the window's limit: calls to it are skipped.
    Unavailable,
    /// Its failures left the window: calls to it run again.
    Available,
}

impl HealthChange {
    pub fn as_str(self) -> &'static str {
        match self {
            HealthChange::Unavailable => "unavailable",
            HealthChange::Available => "available",
        }
    }
}

/// One tool's recent failures (the in-process store's; Redis keeps a sorted set the same way).
#[derive(Debug, Clone, Default)]
pub struct FailureWindow {
    /// Times in ms, oldest first; at most `failures` of them.
    times: VecDeque<u64>,
    /// Last seen unavailable (so each change is reported once).
    down: bool,
}

impl FailureWindow {
    /// A failure at `now_ms`.
    pub fn fail(&mut self, now_ms: u64, s: &HealthSettings) {
        self.times.push_back(now_ms);
        while self.times.len() > s.failures as usize {
            self.times.pop_front();
        }
    }

    /// Whether the window holds `failures` or more at `now_ms`.
    pub fn failing(&self, now_ms: u64, s: &HealthSettings) -> bool {
        s.enabled()
            && self.times.len() >= s.failures as usize
            && self
                .times
                .iter()
                .filter(|t| *t + s.window_ms > now_ms)
                .count()
                >= s.failures as usize
    }

    /// The tool's health at `now_ms` (`true`: unavailable) and the change since it was last
    /// looked at, if any.
    pub fn observe(&mut self, now_ms: u64, s: &HealthSettings) -> (bool, Option<HealthChange>) {
        let failing = self.failing(now_ms, s);
        let change = match (self.down, failing) {
            (false, true) => Some(HealthChange::Unavailable),
            (true, false) => Some(HealthChange::Available),
            _ => None,
        };
        self.down = failing;
        (failing, change)
    }

    /// Nothing left to remember at `now_ms` (the in-process store drops it).
    pub fn expired(&self, now_ms: u64, s: &HealthSettings) -> bool {
        !self.down && self.times.back().is_none_or(|t| t + s.window_ms <= now_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Generated sequences of failures (ok results feed nothing) at non-decreasing times:
        /// the tool is unavailable exactly when the last `window` ms hold `failures` or more,
        /// counted from the whole history, and each change is reported once, when it happens.
        #[test]
        fn unavailable_exactly_when_the_window_holds_enough_failures(
            failures in 1u32..6,
            window_ms in 1u64..200,
            steps in prop::collection::vec((0u64..80, any::<bool>()), 1..120),
        ) {
            let s = HealthSettings { failures, window_ms };
            let mut w = FailureWindow::default();
            let mut history: Vec<u64> = Vec::new();
            let mut now = 0;
            let mut was = false;
            for (gap, failed) in steps {
                now += gap;
                if failed {
                    w.fail(now, &s);
                    history.push(now);
                }
                let in_window = history.iter().filter(|t| *t + window_ms > now).count();
                let expected = in_window >= failures as usize;
                let (failing, change) = w.observe(now, &s);
                prop_assert_eq!(failing, expected);
                let want = match (was, expected) {
                    (false, true) => Some(HealthChange::Unavailable),
                    (true, false) => Some(HealthChange::Available),
                    _ => None,
                };
                prop_assert_eq!(change, want);
                was = expected;
                prop_assert!(w.times.len() <= failures as usize);
            }
        }
    }

    #[test]
    fn off_is_never_failing() {
        let s = HealthSettings {
            failures: 0,
            window_ms: 1000,
        };
        let mut w = FailureWindow::default();
        w.fail(1, &s);
        assert!(!w.failing(1, &s));
    }
}

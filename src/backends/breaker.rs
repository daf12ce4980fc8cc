//! A circuit breaker and a concurrency cap for one remote model backend (guard or judge).
//!
//! - **Cap:** at most `max_concurrent` calls at once; a call that finds no slot is shed at once
//!   (`BackendError::Shed`, fail closed) instead of queueing past its timeout.
//! - **Breaker:** after `failures_to_open` consecutive failures (errors, timeouts, unparsable
//!   answers) the breaker opens: calls fail at once (`BackendError::CircuitOpen`, fail closed, in
//!   microseconds) for `cool_down`; then one probe is let through (half-open): its success closes
//!   the breaker, its failure opens it again.
//!
//! - **Transport:** the breaker owns the backend's [`Transport`], whose own semaphore of the same
//!   size bounds the calls in flight per process: a call the breaker admits never waits there,
//!   except while a reload's old and new loads (two breakers, one transport) both have calls
//!   running. The transport's pool keeps at most `max_concurrent` idle sockets.
//!
//! A call holds an [`Admission`]; dropping it without [`Admission::succeeded`] counts as a
//! failure, so a call cut off by the pipeline's timeout is counted too.

use super::transport::Transport;
use super::BackendError;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BreakerSettings {
    pub max_concurrent: usize,
    pub failures_to_open: u32,
    pub cool_down: Duration,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BreakerState {
    Closed,
    Open,
    HalfOpen,
}

impl BreakerState {
    pub fn as_str(self) -> &'static str {
        match self {
            BreakerState::Closed => "closed",
            BreakerState::Open => "open",
            BreakerState::HalfOpen => "half_open",
        }
    }
}

#[derive(Debug)]
enum Inner {
    Closed { failures: u32 },
    Open { until: Instant },
    HalfOpen { probing: bool },
}

#[derive(Debug)]
pub struct Breaker {
    settings: BreakerSettings,
    inner: Mutex<Inner>,
    slots: Arc<tokio::sync::Semaphore>,
    /// The last state, readable without the lock (for `/readyz` and the metrics).
    shown: AtomicU8,
    transport: Transport,
}

/// Permission for one call.
pub struct Admission<'a> {
    breaker: &'a Breaker,
    _slot: tokio::sync::OwnedSemaphorePermit,
    done: bool,
}

impl Admission<'_> {
    pub fn succeeded(mut self) {
        self.done = true;
        self.breaker.record(true);
    }
}

impl Drop for Admission<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.breaker.record(false);
        }
    }
}

/// One model call through the backend's breaker and cap, when it has one (the embedded model
/// has none): refused at once when the breaker is open or the cap full, counted as a success
/// when the server answered (`call` returned `Ok`), as a failure otherwise, a call dropped by
/// the pipeline's timeout included. The one place a call is admitted.
pub async fn call_through<T>(
    breaker: Option<&Breaker>,
    call: impl std::future::Future<Output = Result<T, BackendError>>,
) -> Result<T, BackendError> {
    let admission = breaker.map(Breaker::admit).transpose()?;
    let answer = call.await?;
    if let Some(a) = admission {
        a.succeeded();
    }
    Ok(answer)
}

impl Breaker {
    pub fn new(settings: BreakerSettings, transport: Transport) -> Self {
        Breaker {
            settings,
            inner: Mutex::new(Inner::Closed { failures: 0 }),
            slots: Arc::new(tokio::sync::Semaphore::new(settings.max_concurrent.max(1))),
            shown: AtomicU8::new(0),
            transport,
        }
    }

    /// The backend's HTTP transport (at most `max_concurrent` calls in flight per process).
    pub fn transport(&self) -> &Transport {
        &self.transport
    }

    pub fn state(&self) -> BreakerState {
        match self.shown.load(Ordering::Relaxed) {
            1 => BreakerState::Open,
            2 => BreakerState::HalfOpen,
            _ => BreakerState::Closed,
        }
    }

    /// Let a call through, or fail it at once.
    pub fn admit(&self) -> Result<Admission<'_>, BackendError> {
        {
            let Ok(mut inner) = self.inner.lock() else {
                return Err(BackendError::CircuitOpen);
            };
            match &mut *inner {
                Inner::Closed { .. } => {}
                Inner::Open { until } if Instant::now() < *until => {
                    return Err(BackendError::CircuitOpen)
                }
                Inner::Open { .. } => {
                    *inner = Inner::HalfOpen { probing: true };
                    self.show(BreakerState::HalfOpen);
                }
                Inner::HalfOpen { probing } if *probing => return Err(BackendError::CircuitOpen),
                Inner::HalfOpen { probing } => *probing = true,
            }
        }
        let slot = self.slots.clone().try_acquire_owned().map_err(|_| {
            // Shedding is not the backend's fault: undo a probe it would have been.
            if let Ok(mut inner) = self.inner.lock() {
                if let Inner::HalfOpen { probing } = &mut *inner {
                    *probing = false;
                }
            }
            BackendError::Shed
        })?;
        Ok(Admission {
            breaker: self,
            _slot: slot,
            done: false,
        })
    }

    fn record(&self, ok: bool) {
        let Ok(mut inner) = self.inner.lock() else {
            return;
        };
        let next = match (&*inner, ok) {
            (_, true) => Inner::Closed { failures: 0 },
            (Inner::Closed { failures }, false)
                if failures + 1 < self.settings.failures_to_open =>
            {
                Inner::Closed {
                    failures: failures + 1,
                }
            }
            (_, false) => Inner::Open {
                until: Instant::now() + self.settings.cool_down,
            },
        };
        self.show(match next {
            Inner::Closed { .. } => BreakerState::Closed,
            Inner::Open { .. } => BreakerState::Open,
            Inner::HalfOpen { .. } => BreakerState::HalfOpen,
        });
        *inner = next;
    }

    fn show(&self, s: BreakerState) {
        let v = match s {
            BreakerState::Closed => 0,
            BreakerState::Open => 1,
            BreakerState::HalfOpen => 2,
        };
        self.shown.store(v, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn breaker(cool_down: Duration) -> Breaker {
        let transport = match Transport::new(2) {
            Ok(t) => t,
            Err(e) => panic!("{e}"),
        };
        let settings = BreakerSettings {
            max_concurrent: 2,
            failures_to_open: 3,
            cool_down,
        };
        Breaker::new(settings, transport)
    }

    #[test]
    fn opens_after_consecutive_failures_then_half_opens_with_one_probe() {
        let b = breaker(Duration::ZERO);
        for _ in 0..2 {
            drop(b.admit());
        }
        assert_eq!(b.state(), BreakerState::Closed);
        drop(b.admit());
        assert_eq!(b.state(), BreakerState::Open);
        // Cool-down of zero: the next call is the probe; a second one meanwhile is refused.
        let probe = b.admit();
        assert!(probe.is_ok());
        assert_eq!(b.state(), BreakerState::HalfOpen);
        assert!(matches!(b.admit(), Err(BackendError::CircuitOpen)));
        if let Ok(p) = probe {
            p.succeeded();
        }
        assert_eq!(b.state(), BreakerState::Closed);
    }

    #[test]
    fn an_open_breaker_fails_fast_until_its_cool_down_ends() {
        let b = breaker(Duration::from_secs(3600));
        for _ in 0..3 {
            drop(b.admit());
        }
        for _ in 0..100 {
            assert!(matches!(b.admit(), Err(BackendError::CircuitOpen)));
        }
    }

    #[test]
    fn a_success_resets_the_count_and_the_cap_sheds() {
        let b = breaker(Duration::from_secs(3600));
        drop(b.admit());
        drop(b.admit());
        if let Ok(a) = b.admit() {
            a.succeeded();
        }
        drop(b.admit());
        drop(b.admit());
        assert_eq!(
            b.state(),
            BreakerState::Closed,
            "2 failures after a success"
        );
        let one = b.admit();
        let two = b.admit();
        assert!(one.is_ok() && two.is_ok());
        assert!(matches!(b.admit(), Err(BackendError::Shed)));
        for a in [one, two].into_iter().flatten() {
            a.succeeded();
        }
        assert_eq!(b.state(), BreakerState::Closed);
    }
}

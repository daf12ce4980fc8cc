//! The HTTP transport of one remote model backend: one `reqwest::Client` and a bound on the
//! calls in flight.
//!
//! What is bounded, and how:
//!
//! - **Calls in flight: at most the cap, always.** A call holds one slot of a semaphore from
//!   before it sends its request until it has read the whole answer, so the model never sees more
//!   than `cap` of this backend's calls at once. The breaker (`breaker.rs`) sheds at the same cap
//!   per configuration load; this semaphore is per process, so while a reload's old and new
//!   loads both have calls running, the two together still stay under the cap. A call that
//!   finds every slot held waits for one (within the call's deadline) instead of failing: the
//!   breaker has already decided whether it may run at all.
//! - **Idle sockets: at most the cap**, closed after 60 s idle (reqwest's
//!   `pool_max_idle_per_host` and `pool_idle_timeout`). A socket that comes back to a full pool
//!   is closed.
//! - **Open sockets: not bounded exactly.** A connection pool dials whenever no idle socket is
//!   ready, and a socket whose call has just finished goes back to the pool a moment later, on
//!   another task; a call that starts in that gap dials again. So for a moment the sockets can
//!   outnumber the cap (86 and 90 under a cap of 64 with 1,000 client connections, in two runs
//!   of `tools/soak.py connections`, while the model never saw more than 64 calls); the pool's
//!   bound closes the extra ones as they come back. reqwest's connector layers cannot hold anything for a socket's life (they must
//!   hand back reqwest's own connection type), so no exact socket bound is kept.
//!
//! Deadlines: dialling 2 s (the client's `connect_timeout`), a whole call 30 s (one timeout
//! around the slot wait, the request and the answer); the product's `timeout_ms` cuts it first.
//! An answer is read in chunks and refused past 1 MiB.
//!
//! One transport per backend (role, URL, model, cap) per process, each with its own client:
//! the idle bound is a per-client setting and follows each backend's own cap, and a reload
//! reuses the transport, so both bounds hold across reloads. http/1.1 only, rustls with the
//! compiled-in webpki roots (nothing read from the machine), no proxy from the environment, no
//! redirects followed (a 3xx is an HTTP status error: the screen fails closed).

use super::{BackendError, RemoteTarget};
use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, OnceLock};
use std::time::Duration;
use tokio::sync::Semaphore;

/// How long dialling may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// An outer bound on a whole call (waiting for a slot, sending, reading the answer), applied
/// once around it rather than as reqwest's own timeout, which would not cover the wait for a
/// slot; each product's `timeout_ms` is the real deadline.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(30);
/// Idle sockets are closed after this.
const IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// A model's answer larger than this is refused as unparsable (a guard verdict is a few
/// hundred bytes; a judge answer is capped by `max_tokens`).
const MAX_ANSWER_BYTES: usize = 1 << 20;

/// A pooled HTTP client and its cap on calls in flight. Cheap to clone (clones share both).
#[derive(Clone)]
pub struct Transport {
    client: reqwest::Client,
    calls: Arc<Semaphore>,
    cap: usize,
    endpoint: Arc<OnceLock<Endpoint>>,
}

/// The URL a backend posts to, parsed once: a transport serves one target and one path, and
/// parsing it for every call was a fifth of what reqwest adds to a call (measured with
/// callgrind).
struct Endpoint {
    base: String,
    path: String,
    url: reqwest::Url,
}

impl std::fmt::Debug for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transport")
            .field("cap", &self.cap)
            .field("calls_in_flight", &self.calls_in_flight())
            .finish()
    }
}

impl Transport {
    /// A new transport with its own client: at most `cap` calls in flight and `cap` idle
    /// sockets.
    pub fn new(cap: usize) -> Result<Self, String> {
        let cap = cap.max(1);
        let client = reqwest::Client::builder()
            .use_rustls_tls()
            .http1_only()
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .tcp_nodelay(true)
            .connect_timeout(CONNECT_TIMEOUT)
            .pool_max_idle_per_host(cap)
            .pool_idle_timeout(IDLE_TIMEOUT)
            .build()
            .map_err(|e| {
                format!(
                    "cannot set up the HTTP client for model calls: {}",
                    describe(&e)
                )
            })?;
        Ok(Transport {
            client,
            calls: Arc::new(Semaphore::new(cap)),
            cap,
            endpoint: Arc::default(),
        })
    }

    /// `target`'s URL for `path`: parsed on the first call, then reused while the same target
    /// and path come back (any other is parsed on its own).
    fn url(&self, target: &RemoteTarget, path: &str) -> Result<reqwest::Url, BackendError> {
        let parse = || {
            reqwest::Url::parse(&target.endpoint(path))
                .map_err(|e| BackendError::Connect(format!("the model URL is not valid: {e}")))
        };
        if let Some(e) = self.endpoint.get() {
            if e.base == target.url && e.path == path {
                return Ok(e.url.clone());
            }
            return parse();
        }
        let url = parse()?;
        let _ = self.endpoint.set(Endpoint {
            base: target.url.clone(),
            path: path.to_string(),
            url: url.clone(),
        });
        Ok(url)
    }

    /// The process's transport for `key` (role, URL, model) and `cap`: built once, shared by
    /// every load, so a reload does not open a second pool beside the first.
    pub fn shared(key: &str, cap: usize) -> Result<Self, String> {
        static ALL: LazyLock<Mutex<HashMap<(String, usize), Transport>>> =
            LazyLock::new(Default::default);
        let mut all = ALL.lock().unwrap_or_else(|e| e.into_inner());
        let key = (key.to_string(), cap);
        if let Some(t) = all.get(&key) {
            return Ok(t.clone());
        }
        let t = Transport::new(cap)?;
        all.insert(key, t.clone());
        Ok(t)
    }

    /// Calls to the model in flight now, never above the cap.
    pub fn calls_in_flight(&self) -> usize {
        self.cap - self.calls.available_permits()
    }

    /// The sockets calls are using now: one per call in flight (http/1.1), so never above the
    /// cap. Idle keep-alive sockets are not counted (reqwest does not show its pool); there are
    /// at most `cap` of them. Kept under this name for the `guard_model_sockets` gauge.
    pub fn open_sockets(&self) -> usize {
        self.calls_in_flight()
    }

    async fn post(
        &self,
        target: &RemoteTarget,
        path: &str,
        body: &serde_json::Value,
    ) -> Result<serde_json::Value, BackendError> {
        let bytes = serde_json::to_vec(body)
            .map_err(|e| BackendError::Connect(format!("cannot encode the request: {e}")))?;
        // Held until the whole answer is read (or the call is dropped at its deadline).
        let _slot = self
            .calls
            .acquire()
            .await
            .map_err(|_| BackendError::Connect("the transport is closed".into()))?;
        let url = self.url(target, path)?;
        let mut req = self
            .client
            .post(url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header(reqwest::header::ACCEPT, "application/json")
            .body(bytes);
        if let Some(key) = &target.api_key {
            // reqwest marks the header sensitive: never shown in debug output.
            req = req.bearer_auth(key);
        }
        let mut resp = req.send().await.map_err(send_error)?;
        let status = resp.status();
        if !status.is_success() {
            return Err(BackendError::Status(status.as_u16()));
        }
        let too_large = || {
            BackendError::Unparsable(format!(
                "answer too large: more than {MAX_ANSWER_BYTES} bytes"
            ))
        };
        // Read in chunks, never more than the bound: a declared length over it is refused
        // before a byte of the body is read, an undeclared one as soon as it passes it.
        let declared = resp.content_length().unwrap_or(0);
        if declared > MAX_ANSWER_BYTES as u64 {
            return Err(too_large());
        }
        let mut answer = Vec::with_capacity(declared as usize);
        while let Some(chunk) = resp.chunk().await.map_err(|e| {
            BackendError::Unparsable(format!("answer cut off: {}", describe(&e.without_url())))
        })? {
            if answer.len() + chunk.len() > MAX_ANSWER_BYTES {
                return Err(too_large());
            }
            answer.extend_from_slice(&chunk);
        }
        serde_json::from_slice(&answer)
            .map_err(|e| BackendError::Unparsable(format!("body is not JSON: {e}")))
    }
}

/// POST JSON and read the answer as JSON leniently (any extra fields); errors mapped
/// uniformly, every one of them a [`BackendError`] (the screen fails closed on each).
pub async fn post_json(
    http: &Transport,
    target: &RemoteTarget,
    path: &str,
    body: &serde_json::Value,
) -> Result<serde_json::Value, BackendError> {
    post_json_within(CALL_TIMEOUT, http, target, path, body).await
}

/// [`post_json`] under another outer bound than [`CALL_TIMEOUT`]: the judge's, when its
/// deadline is longer (`guard eval`'s scripted judge has none, `Duration::MAX`).
pub async fn post_json_within(
    bound: Duration,
    http: &Transport,
    target: &RemoteTarget,
    path: &str,
    body: &serde_json::Value,
) -> Result<serde_json::Value, BackendError> {
    match tokio::time::timeout(bound, http.post(target, path, body)).await {
        Ok(answer) => answer,
        Err(_) => Err(BackendError::Timeout),
    }
}

/// A failed send, a dial that timed out included, is a connection error (the whole call running
/// out of time is [`post_json`]'s timeout).
fn send_error(e: reqwest::Error) -> BackendError {
    BackendError::Connect(describe(&e.without_url()))
}

/// The error and its causes on one line (reqwest's own message is only "error sending request").
fn describe(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
}

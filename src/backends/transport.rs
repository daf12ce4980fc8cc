//! The HTTP transport of one remote model backend, with a hard bound on its sockets.
//!
//! The breaker's cap bounds the calls in flight, but a connection pool opens a new socket
//! whenever no idle one is ready, and a socket whose call has just finished is handed back to
//! the pool a moment later, on another task. Under 1,000 client connections that gap let 83
//! sockets reach a model capped at 64 (measured with `tools/soak.py connections`). Here every
//! socket holds one slot of a semaphore for its whole life: the connector takes a slot before
//! it dials and the slot is released only when the socket is dropped. A call that finds every
//! slot held waits (at most the connect timeout) for a socket to come back to the pool, which
//! it takes instead of dialling.
//!
//! reqwest cannot do this (its connector layers cannot wrap the socket), so model calls go
//! through hyper-util's pooled client, the one reqwest is built on, with rustls for `https`.
//! One transport per backend (role, URL, model, cap) per process: a reload reuses it, so the
//! bound holds across reloads too.

use super::{BackendError, RemoteTarget};
use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::client::legacy::connect::{Connected, Connection, HttpConnector};
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, LazyLock, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// How long dialling may take, and how long a call waits for a socket slot.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// An outer bound on a whole call; each product's `timeout_ms` is the real deadline.
const CALL_TIMEOUT: Duration = Duration::from_secs(30);
/// Idle sockets are closed after this.
const IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// A model's answer larger than this is refused as unparsable (a guard verdict is a few
/// hundred bytes; a judge answer is capped by `max_tokens`).
const MAX_ANSWER_BYTES: usize = 1 << 20;

type BoxError = Box<dyn std::error::Error + Send + Sync>;
type Connector = hyper_rustls::HttpsConnector<CappedConnector>;

/// A pooled HTTP client whose sockets never outnumber its cap. Cheap to clone.
#[derive(Clone)]
pub struct Transport {
    client: Client<Connector, Full<Bytes>>,
    sockets: Arc<Semaphore>,
    cap: usize,
}

impl std::fmt::Debug for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transport")
            .field("cap", &self.cap)
            .field("open", &self.open_sockets())
            .finish()
    }
}

impl Transport {
    /// A new transport with its own pool of at most `cap` sockets.
    pub fn new(cap: usize) -> Result<Self, String> {
        let cap = cap.max(1);
        let sockets = Arc::new(Semaphore::new(cap));
        let mut http = HttpConnector::new();
        http.enforce_http(false);
        http.set_nodelay(true);
        http.set_connect_timeout(Some(CONNECT_TIMEOUT));
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls_config()?)
            .https_or_http()
            .enable_http1()
            .wrap_connector(CappedConnector {
                inner: http,
                sockets: sockets.clone(),
            });
        let client = Client::builder(TokioExecutor::new())
            .pool_idle_timeout(IDLE_TIMEOUT)
            .pool_max_idle_per_host(cap)
            .pool_timer(TokioTimer::new())
            .build(connector);
        Ok(Transport {
            client,
            sockets,
            cap,
        })
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

    /// Sockets open to the model now (in use or idle in the pool).
    pub fn open_sockets(&self) -> usize {
        self.cap - self.sockets.available_permits()
    }

    async fn post(
        &self,
        target: &RemoteTarget,
        path: &str,
        body: &serde_json::Value,
    ) -> Result<serde_json::Value, BackendError> {
        let bytes = serde_json::to_vec(body)
            .map_err(|e| BackendError::Connect(format!("cannot encode the request: {e}")))?;
        let mut req = http::Request::post(target.endpoint(path))
            .header(http::header::CONTENT_TYPE, "application/json")
            .header(http::header::ACCEPT, "application/json");
        if let Some(key) = &target.api_key {
            // Marked sensitive, as reqwest's `bearer_auth` did: never shown in debug output.
            let mut value = http::HeaderValue::try_from(format!("Bearer {key}")).map_err(|_| {
                BackendError::Connect("the API key is not a valid header value".into())
            })?;
            value.set_sensitive(true);
            req = req.header(http::header::AUTHORIZATION, value);
        }
        let req = req
            .body(Full::new(Bytes::from(bytes)))
            .map_err(|e| BackendError::Connect(format!("bad request to the model: {e}")))?;
        let resp = self
            .client
            .request(req)
            .await
            .map_err(|e| BackendError::Connect(describe(&e)))?;
        let status = resp.status();
        if !status.is_success() {
            return Err(BackendError::Status(status.as_u16()));
        }
        let answer = Limited::new(resp.into_body(), MAX_ANSWER_BYTES)
            .collect()
            .await
            .map_err(|e| BackendError::Unparsable(format!("answer cut off or too large: {e}")))?
            .to_bytes();
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
    match tokio::time::timeout(CALL_TIMEOUT, http.post(target, path, body)).await {
        Ok(answer) => answer,
        Err(_) => Err(BackendError::Timeout),
    }
}

/// The error and its causes on one line (hyper's own message is only "client error (Connect)").
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

/// rustls with the webpki roots (compiled in: nothing read from the machine), built once.
fn tls_config() -> Result<rustls::ClientConfig, String> {
    static CONFIG: LazyLock<Result<rustls::ClientConfig, String>> = LazyLock::new(|| {
        let roots = rustls::RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        };
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        Ok(rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("cannot set up TLS for model calls: {e}"))?
            .with_root_certificates(roots)
            .with_no_client_auth())
    });
    CONFIG.clone()
}

/// Dials through `inner` only while holding a socket slot, and keeps the slot in the socket.
#[derive(Clone)]
pub struct CappedConnector {
    inner: HttpConnector,
    sockets: Arc<Semaphore>,
}

impl tower_service::Service<http::Uri> for CappedConnector {
    type Response = CappedSocket;
    type Error = BoxError;
    type Future = Pin<Box<dyn std::future::Future<Output = Result<CappedSocket, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, uri: http::Uri) -> Self::Future {
        let mut inner = self.inner.clone();
        let sockets = self.sockets.clone();
        Box::pin(async move {
            // Every slot held: a socket is about to come back to the pool, and the pool hands
            // it to this call instead (hyper races the pool against this dial). A dial that
            // loses that race and still finds no slot gives up after the connect timeout.
            let slot = tokio::time::timeout(CONNECT_TIMEOUT, sockets.acquire_owned())
                .await
                .map_err(|_| "every socket slot to the model is in use")?
                .map_err(|_| "the transport is closed")?;
            let io = inner.call(uri).await?;
            Ok(CappedSocket { io, _slot: slot })
        })
    }
}

/// A socket and its slot: the slot is released when the socket is dropped (closed).
pub struct CappedSocket {
    io: TokioIo<tokio::net::TcpStream>,
    _slot: OwnedSemaphorePermit,
}

impl Connection for CappedSocket {
    fn connected(&self) -> Connected {
        self.io.connected()
    }
}

impl hyper::rt::Read for CappedSocket {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: hyper::rt::ReadBufCursor<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl hyper::rt::Write for CappedSocket {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }
}

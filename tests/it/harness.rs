//! Shared test harness: the app on the shipped configuration, or on a temporary copy of it with
//! product settings replaced (to point a product at a mock model server).

use actix_web::dev::{Service, ServiceResponse};
use actix_web::{test, web};
use guard::config::Overrides;
use guard::http::{create_app, AppState, Surface};
use guard::obs::audit::{AuditLog, AuditSink};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The shipped configuration, loaded once for the tests that read its sections directly.
pub fn shipped_config() -> &'static guard::config::ConfigSet {
    static C: std::sync::OnceLock<guard::config::ConfigSet> = std::sync::OnceLock::new();
    C.get_or_init(
        || match guard::config::load(&repo_root(), &Overrides::default()) {
            Ok(c) => c,
            Err(e) => panic!("{e}"),
        },
    )
}

/// The cases of eval suites (`tests/evals/<file>.yaml`): (suite, name, text, decision).
pub fn suite_cases(files: &[&str]) -> Vec<(String, String, String, String)> {
    let dir = repo_root().join("tests/evals");
    let mut out = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(dir.join(format!("{file}.yaml")))
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        let doc: serde_yaml::Value =
            serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
        for case in doc["cases"].as_sequence().into_iter().flatten() {
            if let (Some(n), Some(t), Some(d)) = (
                case["name"].as_str(),
                case["text"].as_str(),
                case["expect"]["decision"].as_str(),
            ) {
                out.push((file.to_string(), n.into(), t.into(), d.into()));
            }
        }
    }
    out
}

pub fn memory_audit() -> AuditLog {
    AuditLog::new(
        Some(b"test-key".to_vec()),
        AuditSink::Memory(Mutex::new(Vec::new())),
    )
}

/// App state over the shipped configuration.
pub fn shipped_state() -> web::Data<AppState> {
    state_for(&repo_root(), Overrides::default())
}

pub fn state_for(dir: &Path, overrides: Overrides) -> web::Data<AppState> {
    state_with_token(dir, overrides, None)
}

/// App state whose `/admin/reload` accepts `token`.
pub fn state_with_token(
    dir: &Path,
    overrides: Overrides,
    token: Option<&str>,
) -> web::Data<AppState> {
    match AppState::load(dir.to_path_buf(), overrides, memory_audit()) {
        Ok(mut s) => {
            s.admin_token = token.map(str::to_string);
            web::Data::new(s)
        }
        Err(e) => panic!("config did not load: {e}"),
    }
}

/// A temporary config dir: the shipped wordlists, prompts and products, with `edit` applied to
/// each product file's text.
pub struct TempConfig {
    pub dir: tempfile::TempDir,
}

impl TempConfig {
    pub fn new(edit: impl Fn(&str, String) -> String) -> Self {
        let dir = match tempfile::tempdir() {
            Ok(d) => d,
            Err(e) => panic!("tempdir: {e}"),
        };
        let root = repo_root();
        // Wordlists and prompts are copied (tests edit them); the 7 MB of models are only read,
        // so they are linked.
        for sub in ["wordlists", "judge_prompts", "policies"] {
            copy_dir(&root.join(sub), &dir.path().join(sub));
        }
        #[cfg(unix)]
        std::os::unix::fs::symlink(root.join("models"), dir.path().join("models")).ok();
        #[cfg(not(unix))]
        copy_dir(&root.join("models"), &dir.path().join("models"));
        let products = dir.path().join("products");
        std::fs::create_dir_all(&products).ok();
        for name in ["bank-operator", "wallet-assistant"] {
            let text = std::fs::read_to_string(root.join(format!("products/{name}.toml")))
                .unwrap_or_default();
            std::fs::write(products.join(format!("{name}.toml")), edit(name, text)).ok();
        }
        TempConfig { dir }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn write(&self, rel: &str, text: &str) {
        std::fs::write(self.dir.path().join(rel), text).ok();
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).ok();
    if let Ok(entries) = std::fs::read_dir(from) {
        for e in entries.flatten() {
            std::fs::copy(e.path(), to.join(e.file_name())).ok();
        }
    }
}

/// Replace the whole `[guard]` table of a product file.
pub fn with_guard(text: String, guard_table: &str) -> String {
    replace_table(text, "guard", guard_table)
}

pub fn with_judge(text: String, judge_table: &str) -> String {
    replace_table(text, "judge", judge_table)
}

pub fn replace_table(text: String, table: &str, body: &str) -> String {
    let header = format!("[{table}]");
    let Some(start) = text.find(&header) else {
        return format!("{text}\n{header}\n{body}\n");
    };
    let rest = &text[start + header.len()..];
    let end = rest
        .find("\n[")
        .map_or(text.len(), |i| start + header.len() + i + 1);
    format!("{}{header}\n{body}\n{}", &text[..start], &text[end..])
}

/// POST /v1/screen with a JSON body; returns status and JSON.
pub async fn screen<S, B>(app: &S, body: serde_json::Value) -> (u16, serde_json::Value)
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: actix_web::body::MessageBody,
{
    post(app, "/v1/screen", body).await
}

/// POST a JSON body to any route; returns status and JSON (`Null` when the body is not JSON).
pub async fn post<S, B>(app: &S, uri: &str, body: serde_json::Value) -> (u16, serde_json::Value)
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: actix_web::body::MessageBody,
{
    let req = test::TestRequest::post()
        .uri(uri)
        .set_json(body)
        .to_request();
    let resp = test::call_service(app, req).await;
    let status = resp.status().as_u16();
    let bytes = test::read_body(resp).await;
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null),
    )
}

/// [`screen`], also returning how long the verdict took (for timeout tests).
pub async fn timed_screen<S, B>(
    app: &S,
    body: serde_json::Value,
) -> (serde_json::Value, std::time::Duration)
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: actix_web::body::MessageBody,
{
    let started = std::time::Instant::now();
    let (_, verdict) = screen(app, body).await;
    (verdict, started.elapsed())
}

pub async fn app_for(
    state: web::Data<AppState>,
) -> impl Service<
    actix_http::Request,
    Response = ServiceResponse<impl actix_web::body::MessageBody>,
    Error = actix_web::Error,
> {
    test::init_service(create_app(state, Surface::Api)).await
}

/// The current value of a metric (counters and gauges summed over the series whose labels
/// match), read from the state's own registry.
pub fn counter_value(
    m: &guard::obs::metrics::Registry,
    name: &str,
    labels: &[(&str, &str)],
) -> f64 {
    let mut total = 0.0;
    for family in m.gather() {
        if family.get_name() != name {
            continue;
        }
        for metric in family.get_metric() {
            let matches = labels.iter().all(|(k, v)| {
                metric
                    .get_label()
                    .iter()
                    .any(|l| l.get_name() == *k && l.get_value() == *v)
            });
            if matches {
                total += metric.get_counter().get_value() + metric.get_gauge().get_value();
            }
        }
    }
    total
}

/// How long [`LiveServer::raw_waiting`] waits before it calls the server hung.
const HUNG: std::time::Duration = std::time::Duration::from_secs(600);

/// The real server on a loopback port, for what only a socket can show (slow clients, raw
/// bytes, content lengths that lie).
pub struct LiveServer {
    pub addr: String,
    handle: actix_web::dev::ServerHandle,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl LiveServer {
    pub fn start(state: web::Data<AppState>) -> Self {
        Self::start_with_workers(state, 1)
    }

    /// With `workers` worker threads, each with its own runtime, like `guard serve`.
    pub fn start_with_workers(state: web::Data<AppState>, workers: usize) -> Self {
        let listener = match std::net::TcpListener::bind("127.0.0.1:0") {
            Ok(l) => l,
            Err(e) => panic!("{e}"),
        };
        let addr = listener
            .local_addr()
            .map(|a| a.to_string())
            .unwrap_or_default();
        // The client and the machine set the pace, not actix's own clocks: on a busy machine a
        // request head can take longer than actix's 5 s to be read (408), and an idle pooled
        // connection closed by a 5 s keep-alive races the client's next request on it (reset).
        // Neither is what these tests look at; the guard's own deadlines (the body's) still apply.
        let Ok(server) =
            actix_web::HttpServer::new(move || create_app(state.clone(), Surface::Api))
                .workers(workers)
                .client_request_timeout(std::time::Duration::ZERO)
                .keep_alive(std::time::Duration::from_secs(300))
                .listen(listener)
                .map(|s| s.run())
        else {
            panic!("server did not start");
        };
        let handle = server.handle();
        let thread = std::thread::spawn(move || {
            let _ = actix_web::rt::System::new().block_on(server);
        });
        LiveServer {
            addr,
            handle,
            thread: Some(thread),
        }
    }

    /// Raw bytes on a new connection; the first answer the server gives.
    pub fn raw(&self, request: &[u8]) -> String {
        self.raw_in_parts(&[request], std::time::Duration::ZERO)
    }

    /// [`raw`](Self::raw) for an answer that comes after work of its own (a reload): waits for
    /// the answer, however busy the machine. The bound only turns a server that never answers
    /// into a failure instead of a hung test run.
    pub fn raw_waiting(&self, request: &[u8]) -> String {
        self.read_answer(&[request], std::time::Duration::ZERO, HUNG)
    }

    /// [`raw`](Self::raw), the request written in parts with a pause between them (a body
    /// still on its way when the handler starts).
    pub fn raw_in_parts(&self, parts: &[&[u8]], pause: std::time::Duration) -> String {
        self.read_answer(parts, pause, std::time::Duration::from_secs(10))
    }

    fn read_answer(
        &self,
        parts: &[&[u8]],
        pause: std::time::Duration,
        read_timeout: std::time::Duration,
    ) -> String {
        use std::io::{Read, Write};
        let mut stream = match std::net::TcpStream::connect(&self.addr) {
            Ok(s) => s,
            Err(e) => panic!("{e}"),
        };
        stream.set_read_timeout(Some(read_timeout)).ok();
        stream.set_nodelay(true).ok();
        for (i, part) in parts.iter().enumerate() {
            if i > 0 {
                std::thread::sleep(pause);
            }
            stream.write_all(part).ok();
        }
        let request = parts.concat();
        let mut raw = Vec::new();
        let mut buf = [0u8; 8192];
        // Until the server closes, or the first answer is complete enough to judge.
        while let Ok(n) = stream.read(&mut buf) {
            if n == 0 {
                break;
            }
            raw.extend_from_slice(&buf[..n]);
            if !request.windows(17).any(|w| w == b"Connection: close") {
                break;
            }
        }
        String::from_utf8_lossy(&raw).to_string()
    }

    /// One request on its own connection; the status and the body.
    pub fn send(
        &self,
        method: &str,
        path: &str,
        content_type: Option<&str>,
        body: &[u8],
    ) -> (u16, String) {
        let mut head = format!(
            "{method} {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: {}\r\n",
            body.len()
        );
        if let Some(ct) = content_type {
            head.push_str(&format!("Content-Type: {ct}\r\n"));
        }
        head.push_str("\r\n");
        let mut request = head.into_bytes();
        request.extend_from_slice(body);
        let text = self.raw(&request);
        let status = text
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let body = text
            .split("\r\n\r\n")
            .nth(1)
            .unwrap_or_default()
            .to_string();
        (status, body)
    }
}

impl Drop for LiveServer {
    fn drop(&mut self) {
        actix_web::rt::System::new().block_on(self.handle.stop(false));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The wallet product's `config_rev` in a configuration directory (`None` if it does not load).
pub fn wallet_rev(cfg: &TempConfig) -> Option<String> {
    guard::config::load(cfg.path(), &Overrides::default())
        .ok()
        .and_then(|s| {
            s.products
                .get("wallet-assistant")
                .map(|p| p.config_rev.clone())
        })
}

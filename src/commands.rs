//! What `serve`, `screen` and `check-config` do, once the command line is parsed (`crate::run`
//! dispatches here).

use crate::config;
use crate::http;
use crate::obs::{audit, log};
use crate::screens::input::Screener;
use crate::screens::records::Records;
use crate::settings::Settings;
use anyhow::Context;
use futures_util::StreamExt;
use std::io::{BufRead, Write};
use std::process::ExitCode;

/// A panic message can hold the text being screened (a slicing panic quotes the string), so
/// the hook prints where it happened, never what it says. The pipeline catches stage panics and
/// fails them by policy; this only keeps them out of the logs.
pub(crate) fn quiet_panics() {
    std::panic::set_hook(Box::new(|info| {
        let at = info
            .location()
            .map_or_else(String::new, |l| format!("{}:{}", l.file(), l.line()));
        let msg = "a check panicked (message withheld: it may quote screened text)";
        log::error(msg, serde_json::json!({ "at": at }));
    }));
}

/// The state `serve` and `screen` run on; `serve` (`json_log`) reports its warnings and
/// problems as JSON log lines, `screen` as text.
fn load_state(
    config_dir: std::path::PathBuf,
    settings: &Settings,
    audit_default: &str,
    json_log: bool,
) -> anyhow::Result<Result<http::AppState, ExitCode>> {
    for warning in &settings.warnings {
        match json_log {
            true => log::warn(warning, serde_json::Value::Null),
            false => eprintln!("{warning}"),
        }
    }
    let key = settings.audit_key.clone();
    let audit = audit::AuditLog::open(key, settings.audit_log.as_deref(), audit_default)
        .context("opening the audit log (GUARD_AUDIT_LOG)")?;
    match http::AppState::with_settings(config_dir, settings, audit) {
        Ok(s) => {
            release_freed_memory();
            Ok(Ok(s))
        }
        Err(e) => {
            match json_log {
                true => log_problems("the configuration is invalid; not serving", &e),
                false => eprint!("{e}"),
            }
            Ok(Err(ExitCode::from(2)))
        }
    }
}

/// Hand back to the OS the heap that building the matchers used and freed (glibc keeps freed
/// memory in its arenas otherwise), so the resident size is what stays in use: 48 -> 29 MB
/// idle.
pub(crate) fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn malloc_trim(pad: usize) -> std::os::raw::c_int;
        }
        // SAFETY: glibc's malloc_trim takes no pointer and only releases free memory.
        unsafe {
            malloc_trim(0);
        }
    }
    // Load read part of the built-in model and token vectors (decoding: the vectors' pieces
    // and scales; their digests come from build time). From now on the model reads its tables in place, page by page as questions
    // touch them: drop the pages now, and what is read comes back from the executable on
    // demand (clean pages the kernel can reclaim, not heap).
    drop_resident_pages(crate::backends::embedded::BUILTIN_MODEL);
    drop_resident_pages(crate::backends::token_vectors::BUILTIN_VECTORS);
}

/// Let the kernel drop the resident pages of read-only data in the binary (about 7 MB for the
/// two model files). Nothing is lost: the pages are read back from the executable when the data
/// is touched again, and they were never written.
fn drop_resident_pages(bytes: &'static [u8]) {
    #[cfg(target_os = "linux")]
    {
        extern "C" {
            fn madvise(
                addr: *mut std::ffi::c_void,
                len: usize,
                advice: std::os::raw::c_int,
            ) -> std::os::raw::c_int;
            fn sysconf(name: std::os::raw::c_int) -> std::os::raw::c_long;
        }
        const MADV_DONTNEED: std::os::raw::c_int = 4;
        const SC_PAGESIZE: std::os::raw::c_int = 30;
        // SAFETY: sysconf takes no pointer.
        let page = unsafe { sysconf(SC_PAGESIZE) };
        let Ok(page) = usize::try_from(page) else {
            return;
        };
        if page == 0 {
            return;
        }
        // Only whole pages inside the data: its neighbours in the binary are left alone.
        let start = (bytes.as_ptr() as usize).div_ceil(page) * page;
        let end = (bytes.as_ptr() as usize + bytes.len()) / page * page;
        if end > start {
            // SAFETY: the range lies inside a 'static read-only mapping of the executable that
            // is never written; MADV_DONTNEED on it only discards clean pages, which the next
            // read faults back in from the file with the same contents.
            unsafe {
                madvise(start as *mut std::ffi::c_void, end - start, MADV_DONTNEED);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = bytes;
}

pub(crate) fn check_config(
    config_dir: std::path::PathBuf,
    settings: &Settings,
) -> anyhow::Result<ExitCode> {
    match config::load(&config_dir, &settings.overrides) {
        Ok(set) => {
            // Exactly what `serve` builds, caches included.
            let screener = Screener::new(set, Records::off()?);
            let set = &screener.config;
            for p in set.products.values() {
                let judge = if p.input.judge.client.is_some() {
                    "configured"
                } else {
                    "none"
                };
                println!(
                    "ok  {}  config_rev={}  guard={} (allow_below={} block_at={})  judge={judge}  signatures={} ({} KiB)  tools={} velocity={} gate_store={}",
                    p.name,
                    p.config_rev,
                    p.input.guard.backend.kind().as_str(),
                    p.input.guard.thresholds.allow_below,
                    p.input.guard.thresholds.block_at,
                    p.input.signatures.count,
                    p.input.signatures.memory_usage() / 1024,
                    p.tools.tools.len(),
                    p.tools.velocity.len(),
                    p.tools.store.as_str()
                );
                // Warnings do not fail the check: the configuration is valid, but it does
                // something its operator should know about.
                for w in p.warnings() {
                    println!("warn  {}  {w}", p.name);
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprint!("{e}");
            Ok(ExitCode::from(2))
        }
    }
}

pub(crate) async fn serve(
    config_dir: std::path::PathBuf,
    listen: String,
    workers: Option<usize>,
    settings: &Settings,
) -> anyhow::Result<ExitCode> {
    let state = match load_state(config_dir, settings, "stdout", true)? {
        Ok(s) => actix_web::web::Data::new(s),
        Err(code) => return Ok(code),
    };
    if let Err(code) = check_access(&state, &listen, settings) {
        return Ok(code);
    }
    let products: Vec<String> = state
        .screener
        .load()
        .config
        .products
        .keys()
        .cloned()
        .collect();
    let version = env!("CARGO_PKG_VERSION");
    let fields = serde_json::json!({"version": version, "listen": listen, "products": products});
    log::info("listening", fields);
    spawn_sighup_reload(state.clone());
    run_api(
        state.clone(),
        &listen,
        workers,
        settings.ops_listen.as_deref(),
    )
    .await?;
    // Stopped (SIGTERM or SIGINT): requests finished; write out the audit log before exiting.
    state.audit.close();
    Ok(ExitCode::SUCCESS)
}

/// Without API keys the service answers anyone who can reach it: fine on loopback, refused
/// elsewhere unless asked for explicitly (as Redis's protected mode does).
fn check_access(state: &http::AppState, listen: &str, settings: &Settings) -> Result<(), ExitCode> {
    let loopback = listen
        .parse::<std::net::SocketAddr>()
        .map(|a| a.ip().is_loopback())
        .unwrap_or_else(|_| listen.starts_with("localhost:"));
    let access = |level, msg: &str, mode: &str| {
        log::event(
            level,
            msg,
            serde_json::json!({"access": mode, "listen": listen}),
        );
    };
    match (&state.api_keys, loopback, settings.allow_unauthenticated) {
        (Some(_), _, _) => access(
            log::Level::Info,
            "API keys required on /v1/* (scoped to products)",
            "api_keys",
        ),
        (None, true, _) => access(
            log::Level::Info,
            "no API keys configured; serving loopback only",
            "loopback",
        ),
        (None, false, true) => access(
            log::Level::Warn,
            "no API keys and a non-loopback address; GUARD_ALLOW_UNAUTHENTICATED=1",
            "unauthenticated",
        ),
        (None, false, false) => {
            access(
                log::Level::Error,
                "refusing to listen without API keys: set GUARD_API_KEYS (or \
                 GUARD_API_KEYS_FILE), or GUARD_ALLOW_UNAUTHENTICATED=1 to run open on purpose",
                "refused",
            );
            return Err(ExitCode::from(2));
        }
    }
    Ok(())
}

/// The API on `listen` until SIGTERM or SIGINT; with their own address (GUARD_OPS_LISTEN), the
/// ops routes leave the main one.
async fn run_api(
    state: actix_web::web::Data<http::AppState>,
    listen: &str,
    workers: Option<usize>,
    ops_listen: Option<&str>,
) -> anyhow::Result<()> {
    let ops_state = state.clone();
    // Slow and idle clients are cut off on purpose: the request head must arrive within 5 s
    // (then 408), idle keep-alive connections close after 30 s, and on SIGTERM in-flight requests
    // get 10 s to finish before the process exits 0. Each body has its own deadline
    // (GUARD_BODY_TIMEOUT_MS, see AppState).
    let server =
        actix_web::HttpServer::new(move || http::create_app(state.clone(), http::Surface::Api))
            .client_request_timeout(std::time::Duration::from_secs(5))
            .client_disconnect_timeout(std::time::Duration::from_secs(1))
            .keep_alive(std::time::Duration::from_secs(30))
            .shutdown_timeout(10);
    // Two workers per core by default: each worker is one thread serving its connections in
    // turn, and with one per core a worker that the kernel preempts (for the agent process, a
    // sidecar, or the load generator on the same cores) stalls all of its connections. On 2
    // cores the cheap path served 1.3 × more with 4 workers than with 2, and 256 connections
    // through a model waited less at p99 (docs/performance.md).
    let workers = workers.unwrap_or_else(|| {
        2 * std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    let server = server
        .workers(workers.max(1))
        .bind(listen)
        .with_context(|| format!("binding {listen}"))?;
    // The API's socket is listening from here on (connections wait in its backlog until it
    // runs), so the ops address, bound only now, never answers /readyz 200 while connections
    // to the API would still be refused: a readiness probe on it means the API accepts.
    if let Some(ops) = ops_listen {
        let ops_server = actix_web::HttpServer::new(move || {
            http::create_app(ops_state.clone(), http::Surface::Ops)
        })
        .workers(1)
        .bind(ops)
        .with_context(|| format!("binding GUARD_OPS_LISTEN {ops}"))?
        .run();
        tokio::spawn(ops_server);
        let msg = "ops routes (/metrics, /healthz, /readyz) on their own address";
        log::info(msg, serde_json::json!({"listen": ops}));
    }
    server.run().await.context("serving")
}

#[cfg(unix)]
fn spawn_sighup_reload(state: actix_web::web::Data<http::AppState>) {
    tokio::spawn(async move {
        let Ok(mut hup) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())
        else {
            log::warn("SIGHUP reload unavailable", serde_json::Value::Null);
            return;
        };
        while hup.recv().await.is_some() {
            let building = state.clone();
            let result = tokio::task::spawn_blocking(move || building.reload()).await;
            let Ok(result) = result else {
                let msg = "reload failed to run; the old configuration keeps serving";
                log::error(msg, serde_json::Value::Null);
                continue;
            };
            match result {
                Ok(products) => log::info("reloaded configuration", reloaded(&products)),
                Err(e) => log_problems("reload refused, the old configuration keeps serving", &e),
            }
        }
    });
}

#[cfg(unix)]
/// A reload's products as log fields: `{"products": [{"product", "config_rev"}]}`.
fn reloaded(products: &[(String, String)]) -> serde_json::Value {
    let products: Vec<serde_json::Value> = products
        .iter()
        .map(|(name, rev)| serde_json::json!({"product": name, "config_rev": rev}))
        .collect();
    serde_json::json!({ "products": products })
}

/// Configuration problems as one log line, every problem an item of `problems`.
fn log_problems(msg: &str, e: &config::ConfigError) {
    let problems: Vec<String> = e.problems.iter().map(ToString::to_string).collect();
    log::error(msg, serde_json::json!({ "problems": problems }));
}

#[cfg(not(unix))]
fn spawn_sighup_reload(_state: actix_web::web::Data<http::AppState>) {}

pub(crate) async fn screen(
    config_dir: std::path::PathBuf,
    settings: &Settings,
    product: String,
    jsonl: bool,
    concurrency: usize,
    text: Option<String>,
) -> anyhow::Result<ExitCode> {
    let state = match load_state(config_dir, settings, "off", false)? {
        Ok(s) => s,
        Err(code) => return Ok(code),
    };
    let screener = state.screener.load_full();
    if screener.config.product(&product).is_none() {
        eprintln!(
            "unknown product `{product}`; known: {}",
            screener
                .config
                .products
                .keys()
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        );
        return Ok(ExitCode::from(2));
    }
    if !jsonl {
        let Some(text) = text.filter(|t| !t.trim().is_empty()) else {
            eprintln!("give the question as TEXT, or use --jsonl");
            return Ok(ExitCode::from(2));
        };
        let verdict = screener.screen(&product, &text).await;
        println!("{}", serde_json::to_string(&verdict)?);
        return Ok(ExitCode::SUCCESS);
    }
    screen_jsonl(screener, product, concurrency).await
}

/// JSON lines on stdin, one verdict per line on stdout, in order.
async fn screen_jsonl(
    screener: std::sync::Arc<Screener>,
    product: String,
    concurrency: usize,
) -> anyhow::Result<ExitCode> {
    // Lines are read on a thread and handed over in batches through a bounded channel: memory
    // stays bounded on an input of any size, screening starts with the first batch, and the
    // threads are not woken once per line.
    const BATCH: usize = 128;
    let (tx, rx) = tokio::sync::mpsc::channel::<Vec<std::io::Result<String>>>(4);
    std::thread::spawn(move || {
        let mut batch = Vec::with_capacity(BATCH);
        for line in std::io::stdin().lock().lines() {
            batch.push(line);
            if batch.len() == BATCH {
                let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
                if tx.blocking_send(full).is_err() {
                    return;
                }
            }
        }
        if !batch.is_empty() {
            let _ = tx.blocking_send(batch);
        }
    });
    let batches = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|batch| (batch, rx))
    });
    let out = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, out.lock());
    // Each batch is its own task, so the runtime's threads screen on every core; `buffered`
    // keeps the output in input order. `concurrency` bounds the questions in flight.
    let results = batches
        .map(|batch| {
            let screener = screener.clone();
            let product = product.clone();
            tokio::spawn(async move {
                let mut lines = Vec::with_capacity(batch.len());
                for line in batch {
                    lines.push(match line {
                        Ok(line) => Ok(jsonl_line(&screener, &product, &line).await),
                        Err(e) => Err(e),
                    });
                }
                lines
            })
        })
        .buffered(concurrency.div_ceil(BATCH).max(2));
    let mut results = std::pin::pin!(results);
    while let Some(lines) = results.next().await {
        for line in lines.context("a screening task failed")? {
            writeln!(out, "{}", line.context("reading stdin")?)?;
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// The verdict as one JSON object with `"id"` first, serialised once (no map of values).
fn with_id(id: &serde_json::Value, v: &crate::verdict::Verdict) -> String {
    #[derive(serde::Serialize)]
    struct Line<'a> {
        id: &'a serde_json::Value,
        #[serde(flatten)]
        verdict: &'a crate::verdict::Verdict,
    }
    serde_json::to_string(&Line { id, verdict: v }).unwrap_or_default()
}

/// One JSON line in, one out: the verdict with `id` echoed, or `{"id", "error"}` with the
/// codes and messages of the HTTP API (the same text checks).
async fn jsonl_line(screener: &Screener, product: &str, line: &str) -> String {
    let parsed: Result<serde_json::Value, _> = serde_json::from_str(line);
    let id = match &parsed {
        Ok(v) => v.get("id").cloned().unwrap_or(serde_json::Value::Null),
        Err(_) => serde_json::Value::Null,
    };
    let error = |code: &str, message: &str| {
        serde_json::json!({"id": id, "error": {"code": code, "message": message}}).to_string()
    };
    let text = match parsed {
        Err(_) => return error("malformed_json", "the line is not valid JSON"),
        Ok(mut v) => http::screen::checked_text(v.get_mut("text").map(serde_json::Value::take)),
    };
    match text {
        Err(e) => error(e.code(), &e.message()),
        Ok(t) => match screener.screen_uncached(product, &t).await {
            Some(v) => with_id(&id, &v),
            None => error("unknown_product", "no such product"),
        },
    }
}

/// `guard screen-output`: stream a file (or stdin) through the output screen.
pub(crate) fn screen_output(
    config_dir: std::path::PathBuf,
    settings: &Settings,
    product: &str,
    jsonl: bool,
    file: Option<&std::path::Path>,
) -> anyhow::Result<ExitCode> {
    use std::io::Read;
    let set = match config::load(&config_dir, &settings.overrides) {
        Ok(s) => s,
        Err(e) => {
            eprint!("{e}");
            return Ok(ExitCode::from(2));
        }
    };
    let Some(p) = set.product(product) else {
        eprintln!("unknown product `{product}`");
        return Ok(ExitCode::from(2));
    };
    let mut input: Box<dyn Read> = match file {
        Some(path) => Box::new(
            std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?,
        ),
        None => Box::new(std::io::stdin().lock()),
    };
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if jsonl {
        // One answer per line, one verdict per line, in order; `id` echoed.
        for line in std::io::BufReader::new(input).lines() {
            let line = line.context("reading a line")?;
            let value: serde_json::Value = serde_json::from_str(&line).unwrap_or_default();
            let text = value["text"].as_str().unwrap_or_default();
            let mut v = serde_json::to_value(crate::screens::output::screen(p, text))?;
            if let Some(o) = v.as_object_mut() {
                o.insert("id".into(), value["id"].clone());
            }
            writeln!(out, "{v}")?;
        }
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut stream = crate::screens::output::OutputStream::new(p);
    let mut buf = vec![0u8; 8192];
    // Bytes of a UTF-8 character cut at a read boundary wait for the next read.
    let mut carry: Vec<u8> = Vec::new();
    loop {
        let n = input.read(&mut buf).context("reading the answer")?;
        if n == 0 {
            break;
        }
        carry.extend_from_slice(&buf[..n]);
        let valid = match std::str::from_utf8(&carry) {
            Ok(s) => s.len(),
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(_) => anyhow::bail!("the answer is not valid UTF-8"),
        };
        let text = std::str::from_utf8(&carry[..valid])
            .unwrap_or_default()
            .to_string();
        carry.drain(..valid);
        out.write_all(stream.push(&text).as_bytes())?;
    }
    let (rest, verdict) = stream.finish(p);
    out.write_all(rest.as_bytes())?;
    out.flush()?;
    eprintln!("{}", serde_json::to_string(&verdict)?);
    Ok(ExitCode::SUCCESS)
}

//! What `serve`, `screen` and `check-config` do, once the command line is parsed (`crate::run`
//! dispatches here).

use crate::{audit, config, metrics, pipeline, server, text};
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
            .map_or_else(String::new, |l| format!(" at {}:{}", l.file(), l.line()));
        eprintln!("guard: a check panicked{at} (message withheld: it may quote screened text)");
    }));
}

fn load_state(
    config_dir: std::path::PathBuf,
    audit_default: &str,
) -> anyhow::Result<Result<server::AppState, ExitCode>> {
    let audit = audit::AuditLog::from_env(audit_default)
        .context("opening the audit log (GUARD_AUDIT_LOG)")?;
    match server::AppState::load(config_dir, config::Overrides::from_env(), audit) {
        Ok(s) => Ok(Ok(s)),
        Err(e) => {
            eprint!("{e}");
            Ok(Err(ExitCode::from(2)))
        }
    }
}

pub(crate) fn check_config(config_dir: std::path::PathBuf) -> anyhow::Result<ExitCode> {
    let http = server::http_client();
    match config::load(&config_dir, &config::Overrides::from_env(), &http) {
        Ok(set) => {
            // Exactly what `serve` builds, caches included.
            let screener = pipeline::Screener::new(set, metrics::Metrics::with_recording(false)?);
            let set = &screener.config;
            for p in set.products.values() {
                let judge = if p.judge.is_some() {
                    "configured"
                } else {
                    "none"
                };
                println!(
                    "ok  {}  config_rev={}  guard={} (allow_below={} block_at={})  judge={judge}  signatures={} ({} KiB)",
                    p.name,
                    p.config_rev,
                    p.guard.kind().as_str(),
                    p.thresholds.allow_below,
                    p.thresholds.block_at,
                    p.signatures.count,
                    p.signatures.memory_usage() / 1024
                );
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
) -> anyhow::Result<ExitCode> {
    let state = match load_state(config_dir, "stdout")? {
        Ok(s) => actix_web::web::Data::new(s),
        Err(code) => return Ok(code),
    };
    let products: Vec<String> = state
        .screener
        .load()
        .config
        .products
        .keys()
        .cloned()
        .collect();
    eprintln!(
        "guard {} listening on http://{listen} (products: {})",
        env!("CARGO_PKG_VERSION"),
        products.join(", ")
    );
    spawn_sighup_reload(state.clone());
    let app_state = state.clone();
    let mut server = actix_web::HttpServer::new(move || server::create_app(app_state.clone()));
    if let Some(w) = workers {
        server = server.workers(w.max(1));
    }
    server
        .bind(&listen)
        .with_context(|| format!("binding {listen}"))?
        .run()
        .await
        .context("serving")?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(unix)]
fn spawn_sighup_reload(state: actix_web::web::Data<server::AppState>) {
    tokio::spawn(async move {
        let Ok(mut hup) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())
        else {
            eprintln!("SIGHUP reload unavailable");
            return;
        };
        while hup.recv().await.is_some() {
            match state.reload() {
                Ok(products) => eprintln!("reloaded configuration: {products:?}"),
                Err(e) => eprint!("reload refused, the old configuration keeps serving: {e}"),
            }
        }
    });
}

#[cfg(not(unix))]
fn spawn_sighup_reload(_state: actix_web::web::Data<server::AppState>) {}

pub(crate) async fn screen(
    config_dir: std::path::PathBuf,
    product: String,
    jsonl: bool,
    concurrency: usize,
    text: Option<String>,
) -> anyhow::Result<ExitCode> {
    let state = match load_state(config_dir, "off")? {
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
    let stdin = std::io::stdin();
    let lines: Vec<String> = stdin
        .lock()
        .lines()
        .collect::<Result<_, _>>()
        .context("reading stdin")?;
    let out = std::io::stdout();
    let mut out = std::io::BufWriter::new(out.lock());
    let mut results = futures_util::stream::iter(lines.into_iter().map(|line| {
        let screener = screener.clone();
        let product = product.clone();
        async move { jsonl_line(&screener, &product, &line).await }
    }))
    .buffered(concurrency);
    while let Some(line) = results.next().await {
        writeln!(out, "{line}")?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// One JSON line in, one out: the verdict with `id` echoed, or `{"id", "error"}`.
async fn jsonl_line(screener: &pipeline::Screener, product: &str, line: &str) -> String {
    let parsed: Result<serde_json::Value, _> = serde_json::from_str(line);
    let (id, text) = match &parsed {
        Ok(v) => (
            v.get("id").cloned().unwrap_or(serde_json::Value::Null),
            v.get("text").and_then(|t| t.as_str()),
        ),
        Err(_) => (serde_json::Value::Null, None),
    };
    let error = |code: &str, message: &str| {
        serde_json::json!({"id": id, "error": {"code": code, "message": message}}).to_string()
    };
    match (&parsed, text) {
        (Err(_), _) => error("malformed_json", "the line is not valid JSON"),
        (Ok(_), None) => error("missing_text", "`text` is required and must be a string"),
        (Ok(_), Some(t)) if t.trim().is_empty() => {
            error("missing_text", "`text` must not be empty")
        }
        (Ok(_), Some(t)) if !text::has_visible(t) => error(
            "no_visible_text",
            "`text` has no visible character (only white space or invisible characters)",
        ),
        (Ok(_), Some(t)) => match screener.screen(product, t).await {
            Some(v) => {
                let mut value = serde_json::to_value(&v).unwrap_or_default();
                if let Some(obj) = value.as_object_mut() {
                    obj.insert("id".into(), id.clone());
                }
                value.to_string()
            }
            None => error("unknown_product", "no such product"),
        },
    }
}

//! The two servers the performance run (`tools/perf.sh`) measures the guard against, built from
//! the same crate versions as the service (same lockfile):
//!
//! - `echo ADDR`: the ceiling. A trivial actix-web JSON echo on `POST /v1/screen`: parse the
//!   body, answer it back. Nothing a real screen could be faster than.
//! - `mock-guard ADDR MS`: an OpenAI-compatible guard model (`POST /v1/chat/completions`) that
//!   answers Llama Guard's `safe` after exactly MS milliseconds, without blocking a thread (a
//!   Python mock would itself be the bottleneck at 256 connections).
//!
//! `cargo run --release --example load_servers -- echo 127.0.0.1:18090`

use actix_web::{web, App, HttpResponse, HttpServer};
use std::time::Duration;

async fn echo(body: web::Json<serde_json::Value>) -> HttpResponse {
    HttpResponse::Ok().json(body.into_inner())
}

async fn mock_guard(delay: web::Data<Duration>) -> HttpResponse {
    tokio::time::sleep(**delay).await;
    HttpResponse::Ok().json(serde_json::json!({
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "safe"}, "finish_reason": "stop"}]
    }))
}

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let (mode, addr) = match (args.get(1), args.get(2)) {
        (Some(m), Some(a)) => (m.clone(), a.clone()),
        _ => {
            eprintln!("usage: load_servers echo ADDR | mock-guard ADDR MS");
            std::process::exit(2);
        }
    };
    match mode.as_str() {
        "echo" => {
            let mut server =
                HttpServer::new(|| App::new().route("/v1/screen", web::post().to(echo)))
                    .backlog(4096);
            if let Some(w) = std::env::var("WORKERS").ok().and_then(|w| w.parse().ok()) {
                server = server.workers(w);
            }
            server.bind(&addr)?.run().await
        }
        "mock-guard" => {
            let ms: u64 = args.get(3).and_then(|m| m.parse().ok()).unwrap_or(20);
            let delay = web::Data::new(Duration::from_millis(ms));
            HttpServer::new(move || {
                App::new()
                    .app_data(delay.clone())
                    .route("/v1/chat/completions", web::post().to(mock_guard))
            })
            .backlog(4096)
            .max_connections(100_000)
            .bind(&addr)?
            .run()
            .await
        }
        other => {
            eprintln!("unknown mode {other}");
            std::process::exit(2);
        }
    }
}

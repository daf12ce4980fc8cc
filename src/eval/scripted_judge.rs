//! A scripted local judge for deterministic eval runs: an OpenAI-compatible chat server on
//! 127.0.0.1 that follows the product instructions it is sent in the simplest possible way. It
//! allows a question that the instructions list under "Examples to allow:" and blocks
//! everything else. `guard eval` starts it when no `GUARD_JUDGE_URL` is set.

use actix_web::{web, App, HttpResponse, HttpServer};
use serde_json::{json, Value};

async fn completions(body: web::Json<Value>) -> HttpResponse {
    let system = body["messages"][0]["content"].as_str().unwrap_or_default();
    let user = body["messages"][1]["content"].as_str().unwrap_or_default();
    let question = user
        .rsplit_once("<<<QUESTION\n")
        .and_then(|(_, rest)| rest.split_once("\nQUESTION>>>"))
        .map_or("", |(q, _)| q);
    let allowed = system
        .split("Examples to allow:")
        .nth(1)
        .and_then(|s| s.split("## ").next())
        .unwrap_or_default();
    let allow = !question.is_empty() && allowed.contains(&format!("\"{question}\""));
    let answer = json!({
        "decision": if allow { "allow" } else { "block" },
        "categories": [],
        "rationale": if allow { "listed as normal work in the product instructions" } else { "not listed as normal work" },
    });
    HttpResponse::Ok().json(json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": answer.to_string()}}]}))
}

/// Start the scripted judge; returns its base URL (`http://127.0.0.1:PORT/v1`).
pub fn start() -> std::io::Result<String> {
    let server =
        HttpServer::new(|| App::new().route("/v1/chat/completions", web::post().to(completions)))
            .workers(1)
            .bind(("127.0.0.1", 0))?;
    let addr = server
        .addrs()
        .first()
        .copied()
        .ok_or_else(|| std::io::Error::other("no address"))?;
    tokio::spawn(server.run());
    Ok(format!("http://{addr}/v1"))
}

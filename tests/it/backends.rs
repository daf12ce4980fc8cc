//! Remote guard backends against local mock servers (127.0.0.1): normal answers, logprobs,
//! borderline, HTTP 500, garbage, wrong schema, connection refused, timeouts, card masking.

use crate::harness::{app_for, screen, state_for, timed_screen, with_guard, TempConfig};
use guard::config::Overrides;
use serde_json::json;
use std::time::Duration;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// A config whose wallet-assistant uses `guard_table`.
fn config_with(guard_table: String) -> TempConfig {
    TempConfig::new(move |name, text| {
        if name == "wallet-assistant" {
            with_guard(text, &guard_table)
        } else {
            text
        }
    })
}

async fn verdict(cfg: &TempConfig, text: &str) -> serde_json::Value {
    let app = app_for(state_for(cfg.path(), Overrides::default())).await;
    screen(&app, json!({"product": "wallet-assistant", "text": text}))
        .await
        .1
}

/// The mock answers every POST (to `route`, when given) with `template`.
async fn answer(server: &MockServer, route: Option<&str>, template: ResponseTemplate) {
    let mock = Mock::given(method("POST"));
    match route {
        Some(r) => mock.and(path(r)).respond_with(template).mount(server).await,
        None => mock.respond_with(template).mount(server).await,
    }
}

/// The reason of an everyday question's verdict.
async fn reason(cfg: &TempConfig) -> String {
    verdict(cfg, "how do I check my balance").await["reason"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn chat(content: &str) -> serde_json::Value {
    json!({"id": "x", "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}]})
}

fn llama_guard(url: &str, timeout_ms: u64) -> String {
    format!("kind = \"llama_guard_3\"\nurl = \"{url}/v1\"\nmodel = \"meta-llama/Llama-Guard-3-8B\"\nallow_below = 0.3\nblock_at = 0.8\ntimeout_ms = {timeout_ms}")
}

#[actix_web::test]
async fn llama_guard_answers() {
    let server = MockServer::start().await;
    let cfg = config_with(llama_guard(&server.uri(), 2000));
    let logprobs = json!({"choices": [{"message": {"content": "safe"}, "logprobs": {"content": [
        {"token": "safe", "logprob": -0.9, "top_logprobs": [{"token": "safe", "logprob": -0.9}, {"token": "unsafe", "logprob": -0.5}]}]}}]});
    for (body, want_reason, want_stage) in [
        (chat("\n\nunsafe\nS2"), "unsafe", "guard"),
        (chat("safe"), "passed", "pipeline"),
        // P(unsafe) = 0.6 from the logprobs: borderline, and no judge is configured.
        (logprobs, "judge_unavailable", "judge"),
        (
            chat("I cannot help with that"),
            "guard_unavailable",
            "guard",
        ),
        (json!({"unexpected": true}), "guard_unavailable", "guard"),
    ] {
        server.reset().await;
        answer(
            &server,
            Some("/v1/chat/completions"),
            ResponseTemplate::new(200).set_body_json(body.clone()),
        )
        .await;
        let v = verdict(&cfg, "how do I check my balance").await;
        assert_eq!(
            (v["reason"].as_str(), v["stage"].as_str()),
            (Some(want_reason), Some(want_stage)),
            "{body} -> {v}"
        );
    }
}

#[actix_web::test]
async fn http_errors_garbage_and_refused_connections_fail_closed() {
    let server = MockServer::start().await;
    let cfg = config_with(llama_guard(&server.uri(), 2000));
    answer(&server, None, ResponseTemplate::new(500)).await;
    let v = verdict(&cfg, "how do I check my balance").await;
    assert_eq!(
        (v["reason"].as_str(), v["fail_mode"].as_str()),
        (Some("guard_unavailable"), Some("closed")),
        "{v}"
    );
    server.reset().await;
    answer(
        &server,
        None,
        ResponseTemplate::new(200).set_body_string("<html>oops"),
    )
    .await;
    assert_eq!(reason(&cfg).await, "guard_unavailable");
    // Nothing listens on port 9 of loopback.
    assert_eq!(
        reason(&config_with(llama_guard("http://127.0.0.1:9", 2000))).await,
        "guard_unavailable"
    );
}

#[actix_web::test]
async fn a_slow_guard_blocks_within_its_timeout() {
    let server = MockServer::start().await;
    answer(
        &server,
        None,
        ResponseTemplate::new(200)
            .set_body_json(chat("safe"))
            .set_delay(Duration::from_secs(5)),
    )
    .await;
    let cfg = config_with(llama_guard(&server.uri(), 200));
    let app = app_for(state_for(cfg.path(), Overrides::default())).await;
    let (v, elapsed) = timed_screen(
        &app,
        json!({"product": "wallet-assistant", "text": "how do I check my balance"}),
    )
    .await;
    assert_eq!(v["reason"], "guard_unavailable", "{v}");
    // The verdict arrives at the timeout, not after the model's 5 s (generous margin for CI).
    assert!(elapsed < Duration::from_millis(2000), "{elapsed:?}");
}

#[actix_web::test]
async fn qwen3guard_controversial_is_borderline() {
    let server = MockServer::start().await;
    let body = chat("Safety: Controversial\nCategories: Politically Sensitive Topics");
    answer(
        &server,
        None,
        ResponseTemplate::new(200).set_body_json(body),
    )
    .await;
    let cfg = config_with(format!(
        "kind = \"qwen3guard\"\nurl = \"{}/v1\"\nmodel = \"Qwen/Qwen3Guard-Gen-4B\"",
        server.uri()
    ));
    let v = verdict(&cfg, "how do I check my balance").await;
    assert_eq!(
        (v["reason"].as_str(), v["categories"][0].as_str()),
        (
            Some("judge_unavailable"),
            Some("Politically Sensitive Topics")
        ),
        "{v}"
    );
}

#[actix_web::test]
async fn tei_and_moderation_scores() {
    let server = MockServer::start().await;
    let predict =
        json!([[{"label": "MALICIOUS", "score": 0.97}, {"label": "BENIGN", "score": 0.03}]]);
    answer(
        &server,
        Some("/predict"),
        ResponseTemplate::new(200).set_body_json(predict),
    )
    .await;
    let moderation = json!({"results": [{"flagged": false, "categories": {"violence": false}, "category_scores": {"violence": 0.01, "hate": 0.02}}]});
    answer(
        &server,
        Some("/v1/moderations"),
        ResponseTemplate::new(200).set_body_json(moderation),
    )
    .await;
    assert_eq!(
        reason(&config_with(format!(
            "kind = \"tei\"\nurl = \"{}\"",
            server.uri()
        )))
        .await,
        "unsafe"
    );
    let cfg = config_with(format!(
        "kind = \"openai_moderation\"\nurl = \"{}/v1\"\nmodel = \"omni-moderation-latest\"",
        server.uri()
    ));
    assert_eq!(reason(&cfg).await, "passed");
}

#[actix_web::test]
async fn card_numbers_never_leave_in_clear() {
    let server = MockServer::start().await;
    answer(
        &server,
        None,
        ResponseTemplate::new(200).set_body_json(chat("safe")),
    )
    .await;
    let cfg = config_with(llama_guard(&server.uri(), 2000));
    let v = verdict(&cfg, "why was card 4111 1111 1111 1111 declined").await;
    assert_eq!(v["reason"], "passed", "{v}");
    let received = server.received_requests().await.unwrap_or_default();
    assert_eq!(received.len(), 1);
    let body = String::from_utf8_lossy(&received[0].body).to_string();
    assert!(body.contains("**** **** **** 1111"), "{body}");
    assert!(!body.contains("4111 1111 1111 1111"), "{body}");
}

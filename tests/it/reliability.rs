//! Bounded work and slow clients: the in-flight cap answers 503 with Retry-After at once, a
//! declared body over the limit is 413 before it is read, a client that stalls mid-body is cut
//! off with 408, and a failing model backend opens its breaker and then fails fast.

use crate::harness::{
    app_for, memory_audit, repo_root, screen, with_guard, LiveServer, TempConfig,
};
use actix_web::test as web_test;
use actix_web::web;
use guard::config::Overrides;
use guard::server::AppState;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

fn state_with(edit: impl FnOnce(&mut AppState)) -> web::Data<AppState> {
    match AppState::load(repo_root(), Overrides::default(), memory_audit()) {
        Ok(mut s) => {
            edit(&mut s);
            web::Data::new(s)
        }
        Err(e) => panic!("{e}"),
    }
}

#[actix_web::test]
async fn a_full_process_answers_503_with_retry_after_at_once() {
    let state = state_with(|s| s.in_flight = Arc::new(tokio::sync::Semaphore::new(0)));
    let app = app_for(state).await;
    for uri in ["/v1/screen", "/v1/screen-output"] {
        let req = web_test::TestRequest::post()
            .uri(uri)
            .set_json(json!({"product": "wallet-assistant", "text": "what is my balance"}))
            .to_request();
        let resp = web_test::call_service(&app, req).await;
        assert_eq!(resp.status().as_u16(), 503, "{uri}");
        assert_eq!(
            resp.headers()
                .get("retry-after")
                .and_then(|v| v.to_str().ok()),
            Some("1")
        );
        let v: Value = serde_json::from_slice(&web_test::read_body(resp).await).unwrap_or_default();
        assert_eq!(v["error"]["code"], "overloaded");
    }
}

/// Raw bytes to the real server on loopback; the answer and how long it took.
fn raw_exchange(state: web::Data<AppState>, request: &str) -> (String, Duration) {
    let server = LiveServer::start(state);
    let started = Instant::now();
    let answer = server.raw(request.as_bytes());
    (answer, started.elapsed())
}

#[test]
fn a_declared_body_over_the_limit_is_refused_before_it_is_read() {
    let state = state_with(|s| s.max_body_bytes = 1024);
    let (answer, _) = raw_exchange(
        state,
        "POST /v1/screen HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5000000\r\n\r\n",
    );
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(answer.contains("payload_too_large"), "{answer}");
}

/// A client that declares 100 bytes and sends one.
#[test]
fn a_client_that_stalls_mid_body_is_cut_off_with_408() {
    let state = state_with(|s| s.body_timeout = Duration::from_millis(300));
    let (answer, elapsed) = raw_exchange(
        state,
        "POST /v1/screen HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{",
    );
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("request_timeout"), "{answer}");
    assert!(elapsed < Duration::from_secs(10));
}

#[actix_web::test]
async fn a_failing_backend_opens_its_breaker_and_then_fails_fast() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(500))
        .mount(&server)
        .await;
    let url = server.uri();
    let cfg = TempConfig::new(move |name, text| {
        if name == "wallet-assistant" {
            with_guard(
                text,
                &format!(
                    "kind = \"llama_guard_3\"\nurl = \"{url}/v1\"\nmodel = \"lg\"\n\
                     breaker_failures = 3\nbreaker_cooldown_ms = 600000"
                ),
            )
        } else {
            text
        }
    });
    let state = match AppState::load(
        cfg.path().to_path_buf(),
        Overrides::default(),
        memory_audit(),
    ) {
        Ok(s) => web::Data::new(s),
        Err(e) => panic!("{e}"),
    };
    let app = app_for(state).await;
    let mut details = Vec::new();
    for i in 0..6 {
        let text = format!("what is my balance number {i}");
        let (_, v) = screen(&app, json!({"product": "wallet-assistant", "text": text})).await;
        assert_eq!(v["reason"], "guard_unavailable", "{v}");
        assert_eq!(v["fail_mode"], "closed", "{v}");
        let last = v["trace"].as_array().and_then(|t| t.last()).cloned();
        details.push(last.map(|t| t["detail"].clone()).unwrap_or_default());
    }
    assert_eq!(details[2], "llama_guard_3: error");
    assert_eq!(details[3], "llama_guard_3: circuit_open");
    assert_eq!(details[5], "llama_guard_3: circuit_open");
    // Only the calls before the breaker opened reached the model.
    assert_eq!(server.received_requests().await.map_or(0, |r| r.len()), 3);
    let req = web_test::TestRequest::get().uri("/readyz").to_request();
    let v: Value = web_test::call_and_read_body_json(&app, req).await;
    assert_eq!(v["breakers"]["wallet-assistant"]["guard"], "open", "{v}");
    assert_eq!(
        v["breakers"]["bank-operator"]["guard"],
        Value::Null,
        "embedded: no breaker"
    );
}

#[actix_web::test]
async fn api_keys_are_scoped_to_products() {
    let state = state_with(|s| {
        s.api_keys =
            guard::server::auth::ApiKeys::parse("wallet-key-00000001 wallet-assistant").ok()
    });
    let app = app_for(state).await;
    let call = |key: Option<&'static str>, uri: &'static str, body: Value| {
        let mut req = web_test::TestRequest::post().uri(uri).set_json(body);
        if let Some(k) = key {
            req = req.insert_header(("authorization", format!("Bearer {k}")));
        }
        req.to_request()
    };
    let body = |product: &str| json!({"product": product, "text": "what is my balance"});
    for (key, uri, product, want) in [
        (None, "/v1/screen", "wallet-assistant", 401),
        (
            Some("wrong-key-000000001"),
            "/v1/screen",
            "wallet-assistant",
            401,
        ),
        (
            Some("wallet-key-00000001"),
            "/v1/screen",
            "bank-operator",
            403,
        ),
        (
            Some("wallet-key-00000001"),
            "/v1/screen",
            "wallet-assistant",
            200,
        ),
        (None, "/v1/screen-output", "wallet-assistant", 401),
        (
            Some("wallet-key-00000001"),
            "/v1/screen-output",
            "bank-operator",
            403,
        ),
        (
            Some("wallet-key-00000001"),
            "/v1/screen-output",
            "wallet-assistant",
            200,
        ),
    ] {
        let resp = web_test::call_service(&app, call(key, uri, body(product))).await;
        assert_eq!(resp.status().as_u16(), want, "{key:?} {uri} {product}");
    }
    let stream = |key: &'static str, product: &'static str| {
        web_test::TestRequest::post()
            .uri(&format!("/v1/screen-output/stream?product={product}"))
            .insert_header(("authorization", format!("Bearer {key}")))
            .set_payload("{\"delta\": \"hi\"}\n")
            .to_request()
    };
    let resp = web_test::call_service(&app, stream("wallet-key-00000001", "bank-operator")).await;
    assert_eq!(resp.status().as_u16(), 403);
    let resp =
        web_test::call_service(&app, stream("wallet-key-00000001", "wallet-assistant")).await;
    assert_eq!(resp.status().as_u16(), 200);
}

//! Remote guard backends against local mock servers (127.0.0.1): normal answers, logprobs,
//! borderline, HTTP 500, garbage, wrong schema, connection refused, timeouts (every remote kind),
//! TEI windows, card masking.

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

/// One remote backend under test: how a product names it, where it is asked, and what it
/// answers for a safe, an unsafe and a borderline question, and an answer in the wrong shape.
struct Remote {
    table: fn(&str, u64) -> String,
    route: &'static str,
    safe: serde_json::Value,
    unsafe_: serde_json::Value,
    borderline: serde_json::Value,
    wrong_schema: serde_json::Value,
}

fn remotes() -> Vec<Remote> {
    let tei_answer = |p: f64| json!([[{"label": "MALICIOUS", "score": p}, {"label": "BENIGN", "score": 1.0 - p}]]);
    let moderation = |flagged: bool, p: f64| {
        json!({"results": [{"flagged": flagged, "categories": {"violence": flagged, "hate": false},
                            "category_scores": {"violence": p, "hate": 0.01}}]})
    };
    vec![
        Remote {
            table: llama_guard,
            route: "/v1/chat/completions",
            safe: chat("safe"),
            unsafe_: chat("unsafe\nS1"),
            borderline: json!({"choices": [{"message": {"content": "unsafe"}, "logprobs": {"content": [
                {"token": "unsafe", "logprob": -0.5, "top_logprobs": [{"token": "unsafe", "logprob": -0.5}, {"token": "safe", "logprob": -0.9}]}]}}]}),
            wrong_schema: json!({"choices": []}),
        },
        Remote {
            table: |url, timeout_ms| {
                format!("kind = \"qwen3guard\"\nurl = \"{url}/v1\"\nmodel = \"Qwen/Qwen3Guard-Gen-4B\"\ntimeout_ms = {timeout_ms}")
            },
            route: "/v1/chat/completions",
            safe: chat("Safety: Safe\nCategories: None"),
            unsafe_: chat("Safety: Unsafe\nCategories: Violent"),
            borderline: chat("Safety: Controversial\nCategories: Politically Sensitive Topics"),
            wrong_schema: chat("I am not sure what you mean"),
        },
        Remote {
            table: |url, timeout_ms| {
                format!("kind = \"tei\"\nurl = \"{url}\"\ntimeout_ms = {timeout_ms}")
            },
            route: "/predict",
            safe: tei_answer(0.02),
            unsafe_: tei_answer(0.97),
            borderline: tei_answer(0.7),
            wrong_schema: json!({"label": "BENIGN"}),
        },
        Remote {
            table: |url, timeout_ms| {
                format!("kind = \"openai_moderation\"\nurl = \"{url}/v1\"\nmodel = \"omni-moderation-latest\"\ntimeout_ms = {timeout_ms}")
            },
            route: "/v1/moderations",
            safe: moderation(false, 0.01),
            unsafe_: moderation(true, 0.98),
            borderline: moderation(false, 0.7),
            wrong_schema: json!({"results": [{"flagged": false}]}),
        },
    ]
}

#[actix_web::test]
async fn every_remote_backend_maps_its_answers() {
    let server = MockServer::start().await;
    for remote in remotes() {
        let cfg = config_with((remote.table)(&server.uri(), 2000));
        for (body, want) in [
            (&remote.safe, "passed"),
            (&remote.unsafe_, "unsafe"),
            // No judge is configured: a borderline question is blocked.
            (&remote.borderline, "judge_unavailable"),
            (&remote.wrong_schema, "guard_unavailable"),
        ] {
            server.reset().await;
            answer(
                &server,
                Some(remote.route),
                ResponseTemplate::new(200).set_body_json(body),
            )
            .await;
            assert_eq!(reason(&cfg).await, want, "{} answered {body}", remote.route);
        }
    }
}

#[actix_web::test]
async fn every_remote_backend_fails_closed() {
    let server = MockServer::start().await;
    for remote in remotes() {
        let cfg = config_with((remote.table)(&server.uri(), 2000));
        for template in [
            ResponseTemplate::new(500),
            ResponseTemplate::new(200).set_body_string("<html>oops"),
        ] {
            server.reset().await;
            answer(&server, None, template).await;
            let v = verdict(&cfg, "how do I check my balance").await;
            assert_eq!(
                (v["reason"].as_str(), v["fail_mode"].as_str()),
                (Some("guard_unavailable"), Some("closed")),
                "{}: {v}",
                remote.route
            );
        }
        // Nothing listens on port 9 of loopback.
        let refused = config_with((remote.table)("http://127.0.0.1:9", 2000));
        assert_eq!(
            reason(&refused).await,
            "guard_unavailable",
            "{}",
            remote.route
        );
    }
}

#[actix_web::test]
async fn every_remote_backend_blocks_within_its_timeout() {
    let server = MockServer::start().await;
    for remote in remotes() {
        server.reset().await;
        answer(
            &server,
            None,
            ResponseTemplate::new(200)
                .set_body_json(&remote.safe)
                .set_delay(Duration::from_secs(5)),
        )
        .await;
        let cfg = config_with((remote.table)(&server.uri(), 200));
        let app = app_for(state_for(cfg.path(), Overrides::default())).await;
        let (v, elapsed) = timed_screen(
            &app,
            json!({"product": "wallet-assistant", "text": "how do I check my balance"}),
        )
        .await;
        assert_eq!(v["reason"], "guard_unavailable", "{}: {v}", remote.route);
        // The verdict arrives at the timeout, not after the model's 5 s (generous margin for CI).
        assert!(
            elapsed < Duration::from_millis(2000),
            "{}: {elapsed:?}",
            remote.route
        );
    }
}

#[actix_web::test]
async fn tei_sends_long_questions_as_windows_and_takes_the_most_malicious() {
    let server = MockServer::start().await;
    let window =
        |p: f64| json!([{"label": "MALICIOUS", "score": p}, {"label": "BENIGN", "score": 1.0 - p}]);
    let long = format!(
        // The last sentence is the remote model's to judge (the mock calls it malicious): no
        // policy rule or signature may decide it first (money out of a neighbour's wallet now
        // is a rule, `others_money_out`).
        "{} Then tell me a long story about the river near my village.",
        "Please summarise my last statement for the branch. ".repeat(60)
    );
    let windows = guard::backends::tei::windows(&long);
    assert!(windows.len() >= 3, "{}", windows.len());
    // Only the last window holds the attack.
    let mut predictions = vec![window(0.01); windows.len() - 1];
    predictions.push(window(0.99));
    answer(
        &server,
        Some("/predict"),
        ResponseTemplate::new(200).set_body_json(json!(predictions)),
    )
    .await;
    let cfg = config_with(format!("kind = \"tei\"\nurl = \"{}\"", server.uri()));
    let v = verdict(&cfg, &long).await;
    let received = server.received_requests().await.unwrap_or_default();
    assert_eq!(received.len(), 1);
    let sent: serde_json::Value = serde_json::from_slice(&received[0].body).unwrap_or_default();
    assert_eq!(
        sent["inputs"].as_array().map(Vec::len),
        Some(windows.len()),
        "{sent}"
    );
    assert_eq!(v["reason"], "unsafe", "{v}");
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

/// The tiered guard: the embedded model first; only what it does not find clearly safe goes
/// on to the remote model. Off unless the product asks.
#[actix_web::test]
async fn the_tiered_guard_calls_the_remote_model_only_for_what_is_not_clearly_safe() {
    use crate::harness::{app_for, counter_value, screen, state_for, with_guard, TempConfig};
    let server = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .respond_with(
            wiremock::ResponseTemplate::new(200).set_body_json(serde_json::json!(
                {"choices": [{"message": {"role": "assistant", "content": "unsafe\nS2"}}]}
            )),
        )
        .mount(&server)
        .await;
    let url = server.uri();
    let cfg = TempConfig::new(move |_, text| {
        with_guard(
            text,
            &format!("kind = \"llama_guard_3\"\nurl = \"{url}/v1\"\nmodel = \"lg\"\nembedded_first_below = 0.1"),
        )
    });
    let state = state_for(cfg.path(), guard::config::Overrides::default());
    let app = app_for(state.clone()).await;
    let (_, v) = screen(
        &app,
        serde_json::json!({"product": "wallet-assistant", "text": "How do I check my balance?"}),
    )
    .await;
    assert_eq!(v["decision"], "allow", "{v}");
    let guard_detail = v["trace"]
        .as_array()
        .and_then(|t| t.iter().find(|e| e["stage"] == "guard"))
        .map(|e| e["detail"].clone())
        .unwrap_or_default();
    assert!(
        guard_detail
            .as_str()
            .unwrap_or("")
            .starts_with("embedded first"),
        "{v}"
    );
    assert_eq!(
        server.received_requests().await.map_or(0, |r| r.len()),
        0,
        "no remote call"
    );
    assert_eq!(
        counter_value(
            &state.metrics,
            "guard_model_calls_total",
            &[("backend", "embedded"), ("outcome", "ok")]
        ),
        1.0
    );
    // What the embedded model is not sure of goes on: the remote model's `unsafe` stands.
    // (A question no policy rule decides: a toxic gas asked for is `harm_weapon` before any model.)
    let (_, v) = screen(&app, serde_json::json!({"product": "wallet-assistant", "text": "How do I pick a lock on a door?"})).await;
    assert_eq!(
        server.received_requests().await.map_or(0, |r| r.len()),
        1,
        "{v}"
    );
    assert_eq!(v["decision"], "block", "{v}");
}

#[test]
fn the_tiered_guard_is_checked_at_load() {
    use crate::harness::{with_guard, TempConfig};
    for (table, needle) in [
        ("kind = \"embedded\"\nembedded_first_below = 0.1", "remote kind"),
        ("kind = \"llama_guard_3\"\nurl = \"http://127.0.0.1:9/v1\"\nmodel = \"lg\"\nembedded_first_below = 0.9", "at most"),
        ("kind = \"llama_guard_3\"\nurl = \"http://127.0.0.1:9/v1\"\nmodel = \"lg\"\nembedded_first_below = 0", "above 0"),
    ] {
        let cfg = TempConfig::new(move |_, text| with_guard(text, table));
        let err = guard::config::load(cfg.path(), &guard::config::Overrides::default())
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("embedded_first_below") && err.contains(needle), "{table}: {err}");
    }
}

#[actix_web::test]
async fn the_model_api_key_is_sent_as_a_bearer_token() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(wiremock::matchers::header(
            "authorization",
            "Bearer sk-guard-test-key",
        ))
        .respond_with(ResponseTemplate::new(200).set_body_json(chat("safe")))
        .mount(&server)
        .await;
    // Anything else: the model refuses it, and the screen fails closed.
    answer(&server, None, ResponseTemplate::new(401)).await;
    std::env::set_var("GUARD_TEST_MODEL_KEY_BEARER", "sk-guard-test-key");
    let with_key = config_with(format!(
        "{}\napi_key_env = \"GUARD_TEST_MODEL_KEY_BEARER\"",
        llama_guard(&server.uri(), 2000)
    ));
    assert_eq!(reason(&with_key).await, "passed");
    let without = config_with(llama_guard(&server.uri(), 2000));
    assert_eq!(reason(&without).await, "guard_unavailable");
}

#[actix_web::test]
async fn an_answer_larger_than_a_megabyte_is_refused_and_blocks() {
    let server = MockServer::start().await;
    // A "safe" verdict padded past the transport's 1 MiB bound on an answer.
    let padding = "x".repeat(2 << 20);
    let body = json!({"choices": [{"message": {"content": "safe"}}], "padding": padding});
    answer(
        &server,
        None,
        ResponseTemplate::new(200).set_body_json(body),
    )
    .await;
    let cfg = config_with(llama_guard(&server.uri(), 5000));
    let v = verdict(&cfg, "how do I check my balance").await;
    assert_eq!(v["reason"], "guard_unavailable", "{v}");
    assert_eq!(v["fail_mode"], "closed", "{v}");
}

#[tokio::test]
async fn an_answer_of_undeclared_length_is_cut_off_past_a_megabyte() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = match tokio::net::TcpListener::bind("127.0.0.1:0").await {
        Ok(l) => l,
        Err(e) => panic!("{e}"),
    };
    let url = match listener.local_addr() {
        Ok(a) => format!("http://{a}/v1"),
        Err(e) => panic!("{e}"),
    };
    // A valid "safe" answer of 2 MiB, chunked (no Content-Length): read whole, it would parse.
    let answer =
        json!({"choices": [{"message": {"content": "safe"}}], "padding": "x".repeat(2 << 20)})
            .to_string();
    tokio::spawn(async move {
        let Ok((mut sock, _)) = listener.accept().await else {
            return;
        };
        let mut head = [0u8; 4096];
        let _ = sock.read(&mut head).await;
        let mut out = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n".to_vec();
        for piece in answer.as_bytes().chunks(64 << 10) {
            out.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
            out.extend_from_slice(piece);
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(b"0\r\n\r\n");
        let _ = sock.write_all(&out).await;
    });
    let transport = match guard::backends::transport::Transport::new(1) {
        Ok(t) => t,
        Err(e) => panic!("{e}"),
    };
    let target = guard::backends::RemoteTarget {
        url,
        model: "lg".into(),
        api_key: None,
    };
    let got =
        guard::backends::transport::post_json(&transport, &target, "chat/completions", &json!({}))
            .await;
    assert!(
        matches!(&got, Err(guard::backends::BackendError::Unparsable(why)) if why.contains("too large")),
        "{got:?}"
    );
}

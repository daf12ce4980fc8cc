//! Running it like a production service: the cache, exact metric counts, the audit log's
//! privacy, the dashboard's metric names, and hot reload (admin route, invalid config,
//! in-flight requests, SIGHUP).

use crate::harness::{
    app_for, counter_value, repo_root, screen, shipped_state, state_with_token, with_guard,
    TempConfig,
};
use actix_web::test;
use guard::config::Overrides;
use serde_json::json;
use std::time::Duration;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

fn chat(content: &str) -> serde_json::Value {
    json!({"choices": [{"message": {"role": "assistant", "content": content}}]})
}

fn mock_guard_config(url: &str) -> TempConfig {
    let guard =
        format!("kind = \"llama_guard_3\"\nurl = \"{url}/v1\"\nmodel = \"lg3\"\ntimeout_ms = 3000");
    TempConfig::new(move |_, text| with_guard(text, &guard))
}

#[actix_web::test]
async fn identical_questions_share_one_model_call_and_hits_are_marked() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(chat("safe"))
                .set_delay(Duration::from_millis(300)),
        )
        .mount(&server)
        .await;
    let cfg = mock_guard_config(&server.uri());
    let state = state_with_token(cfg.path(), Overrides::default(), None);
    let app = app_for(state.clone()).await;
    let requests = (0..100).map(|_| {
        screen(
            &app,
            json!({"product": "wallet-assistant", "text": "how do I check my balance"}),
        )
    });
    let verdicts = futures_util::future::join_all(requests).await;
    assert_eq!(
        server.received_requests().await.unwrap_or_default().len(),
        1,
        "one model call for 100 identical questions"
    );
    assert!(verdicts
        .iter()
        .all(|(s, v)| *s == 200 && v["reason"] == "passed"));
    assert_eq!(
        verdicts.iter().filter(|(_, v)| v["cached"] == true).count(),
        99
    );
    // Whitespace differences share the entry; the decision cannot differ.
    let (_, v) = screen(
        &app,
        json!({"product": "wallet-assistant", "text": "  how do I   check my\tbalance "}),
    )
    .await;
    assert_eq!(v["cached"], true, "{v}");
    assert_eq!(
        server.received_requests().await.unwrap_or_default().len(),
        1
    );
    let m = &state.metrics;
    assert_eq!(
        counter_value(
            m,
            "guard_cache_requests_total",
            &[("product", "wallet-assistant"), ("result", "hit")]
        ),
        100.0
    );
    assert_eq!(
        counter_value(
            m,
            "guard_cache_requests_total",
            &[("product", "wallet-assistant"), ("result", "miss")]
        ),
        1.0
    );
}

#[actix_web::test]
async fn fail_closed_verdicts_are_never_cached() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(500))
        .mount(&server)
        .await;
    let cfg = mock_guard_config(&server.uri());
    let state = state_with_token(cfg.path(), Overrides::default(), None);
    let app = app_for(state.clone()).await;
    for _ in 0..2 {
        let (_, v) = screen(
            &app,
            json!({"product": "wallet-assistant", "text": "how do I check my balance"}),
        )
        .await;
        assert_eq!(
            (v["cached"].as_bool(), v["fail_mode"].as_str()),
            (Some(false), Some("closed")),
            "{v}"
        );
    }
    assert_eq!(
        server.received_requests().await.unwrap_or_default().len(),
        2
    );
    let m = &state.metrics;
    assert_eq!(
        counter_value(
            m,
            "guard_fail_total",
            &[
                ("product", "wallet-assistant"),
                ("stage", "guard"),
                ("mode", "closed")
            ]
        ),
        2.0
    );
    assert_eq!(
        counter_value(
            m,
            "guard_model_calls_total",
            &[("backend", "llama_guard_3"), ("outcome", "error")]
        ),
        2.0
    );
}

#[actix_web::test]
async fn metrics_count_exactly() {
    let state = shipped_state();
    let app = app_for(state.clone()).await;
    for text in [
        "how do I check my balance",
        "amar taka kothay gelo bolen",
        "how do I check my balance",
        "what is the interest rate on savings",
    ] {
        screen(&app, json!({"product": "bank-operator", "text": text})).await;
    }
    let m = &state.metrics;
    let verdicts = |decision, reason, stage| {
        counter_value(
            m,
            "guard_verdicts_total",
            &[
                ("product", "bank-operator"),
                ("decision", decision),
                ("reason", reason),
                ("stage", stage),
            ],
        )
    };
    assert_eq!(verdicts("allow", "passed", "pipeline"), 3.0);
    assert_eq!(verdicts("block", "unsupported_language", "banglish"), 1.0);
    assert_eq!(
        counter_value(
            m,
            "guard_cache_requests_total",
            &[("product", "bank-operator"), ("result", "hit")]
        ),
        1.0
    );
    assert_eq!(
        counter_value(
            m,
            "guard_cache_requests_total",
            &[("product", "bank-operator"), ("result", "miss")]
        ),
        3.0
    );
    // The Banglish question never reaches the model; the repeated one is a cache hit.
    assert_eq!(
        counter_value(
            m,
            "guard_model_calls_total",
            &[("backend", "embedded"), ("outcome", "ok")]
        ),
        2.0
    );
    assert_eq!(
        counter_value(m, "guard_fail_total", &[("product", "bank-operator")]),
        0.0
    );
    assert_eq!(counter_value(m, "guard_in_flight_requests", &[]), 0.0);
    let resp =
        test::call_service(&app, test::TestRequest::get().uri("/metrics").to_request()).await;
    let text = String::from_utf8_lossy(&test::read_body(resp).await).to_string();
    assert!(text.contains("guard_build_info{version=\""), "{text}");
    assert!(text.contains("guard_config_info{config_rev="), "{text}");
}

#[actix_web::test]
async fn a_canary_question_appears_in_no_log_and_no_metric() {
    let state = shipped_state();
    let app = app_for(state.clone()).await;
    let canary = "zebracanary7f3a9 why was my card declined";
    let (_, v) = screen(
        &app,
        json!({"product": "wallet-assistant", "text": canary, "request_id": "canary-1"}),
    )
    .await;
    assert_eq!(v["decision"], "allow", "{v}");
    let lines = state.audit.memory_lines();
    assert_eq!(lines.len(), 1);
    let line: serde_json::Value = serde_json::from_str(&lines[0]).unwrap_or_default();
    for key in [
        "ts",
        "request_id",
        "product",
        "config_rev",
        "decision",
        "reason",
        "stage",
        "language",
        "categories",
        "score",
        "latency_micros",
        "cached",
        "text_hmac",
    ] {
        assert!(line.get(key).is_some(), "audit line lacks {key}: {line}");
    }
    assert_eq!(line["text_hmac"].as_str().map(str::len), Some(64));
    assert_eq!(
        line["text_hmac"].as_str(),
        Some(state.audit.text_hash(canary).as_str())
    );
    assert!(!lines[0].contains("zebracanary"), "{}", lines[0]);
    let resp =
        test::call_service(&app, test::TestRequest::get().uri("/metrics").to_request()).await;
    let metrics = String::from_utf8_lossy(&test::read_body(resp).await).to_string();
    assert!(!metrics.contains("zebracanary"));
    assert!(!metrics.contains("declined"));
}

#[actix_web::test]
async fn every_metric_in_the_dashboard_and_rules_exists() {
    // A remote guard backend (never reached: the scrape only reads its breaker) has a breaker.
    let guard = "kind = \"llama_guard_3\"\nurl = \"http://127.0.0.1:9/v1\"\nmodel = \"lg3\"";
    let cfg = TempConfig::new(move |name, text| match name {
        "bank-operator" => with_guard(text, guard),
        _ => text,
    });
    let app = app_for(state_with_token(cfg.path(), Overrides::default(), None)).await;
    screen(
        &app,
        json!({"product": "wallet-assistant", "text": "how do I check my balance"}),
    )
    .await;
    let call = json!({"product": "wallet-assistant", "conversation": "c", "turn": 1,
        "calls": [{"id": "a", "tool": "get_balance", "args": {"wallet": "01711000000"}}]});
    let (status, v) = crate::harness::post(&app, "/v1/tool-calls", call).await;
    assert_eq!(status, 200, "{v}");
    let resp =
        test::call_service(&app, test::TestRequest::get().uri("/metrics").to_request()).await;
    let scrape = String::from_utf8_lossy(&test::read_body(resp).await).to_string();
    let exposed: std::collections::BTreeSet<&str> = scrape
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split(['{', ' ']).next())
        .collect();
    let mut checked = 0;
    for file in [
        "deploy/grafana/guard-dashboard.json",
        "deploy/prometheus/rules.yml",
        "deploy/prometheus/rules_test.yml",
    ] {
        let text = std::fs::read_to_string(repo_root().join(file)).unwrap_or_default();
        assert!(!text.is_empty(), "{file} missing");
        // Metric names: `guard_...` words, not quoted label values like reason="guard_unavailable".
        let names = metric_names(&text);
        for name in names {
            assert!(
                exposed.contains(name.as_str()),
                "{file} names {name}, which /metrics does not expose"
            );
            checked += 1;
        }
    }
    assert!(checked > 20, "only {checked} metric references found");
}

/// A cached answer is served from the verdict cache, then from the worker's copy of it, and
/// neither outlives the TTL: after it, the question is screened again. A request id is
/// answered in the same verdict with the id added.
#[actix_web::test]
async fn cached_answers_expire_with_the_cache_entry() {
    let cfg = TempConfig::new(|name, text| {
        if name == "wallet-assistant" {
            text.replace("ttl_secs = 600", "ttl_secs = 1")
        } else {
            text
        }
    });
    let state = state_with_token(cfg.path(), Overrides::default(), None);
    let app = app_for(state.clone()).await;
    let ask = |id: Option<&str>| {
        let mut body = json!({"product": "wallet-assistant", "text": "how do I check my balance"});
        if let Some(id) = id {
            body["request_id"] = json!(id);
        }
        screen(&app, body)
    };
    let started = std::time::Instant::now();
    let (_, first) = ask(None).await;
    let (_, second) = ask(None).await;
    let (_, third) = ask(None).await;
    let (_, with_id) = ask(Some("r-7")).await;
    assert!(
        started.elapsed() < Duration::from_millis(900),
        "too slow to test a 1 s TTL"
    );
    assert_eq!(first["cached"], false, "{first}");
    assert_eq!(second["cached"], true, "{second}");
    assert_eq!(third, second, "the kept copy answers as the cache does");
    assert_eq!(with_id["request_id"], "r-7", "{with_id}");
    let mut without_id = with_id.clone();
    without_id.as_object_mut().map(|o| o.remove("request_id"));
    assert_eq!(without_id, second);
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let (_, after) = ask(None).await;
    assert_eq!(
        after["cached"], false,
        "an answer outlived its TTL: {after}"
    );
    let hits = counter_value(
        &state.metrics,
        "guard_cache_requests_total",
        &[("product", "wallet-assistant"), ("result", "hit")],
    );
    assert_eq!(hits, 3.0, "every cached answer counts as a cache hit");
}

#[actix_web::test]
async fn admin_reload_swaps_valid_config_and_keeps_the_old_one_otherwise() {
    let cfg = TempConfig::new(|_, t| t);
    let state = state_with_token(cfg.path(), Overrides::default(), Some("s3cret"));
    let app = app_for(state.clone()).await;
    let reload = |token: &'static str| {
        test::TestRequest::post()
            .uri("/admin/reload")
            .insert_header(("authorization", format!("Bearer {token}")))
            .to_request()
    };
    let rev = |v: &serde_json::Value| v["config_rev"].as_str().unwrap_or_default().to_string();
    // Asked three times: the last answers come from the cache and this thread's copy of it.
    let mut before = serde_json::Value::Null;
    for _ in 0..3 {
        before = screen(
            &app,
            json!({"product": "bank-operator", "text": "how do I check my balance"}),
        )
        .await
        .1;
    }
    assert_eq!(before["cached"], true, "{before}");

    assert_eq!(
        test::call_service(&app, reload("wrong"))
            .await
            .status()
            .as_u16(),
        401
    );
    cfg.write(
        "judge_prompts/bank-operator.md",
        "# Judge\nBlock anything about audit logs.\n",
    );
    let resp = test::call_service(&app, reload("s3cret")).await;
    assert_eq!(resp.status().as_u16(), 200);
    let (_, after) = screen(
        &app,
        json!({"product": "bank-operator", "text": "how do I check my balance"}),
    )
    .await;
    assert_ne!(
        rev(&before),
        rev(&after),
        "a new prompt is a new config_rev, so no old cached verdict"
    );
    assert_eq!(after["cached"], false);

    // An invalid configuration is refused whole; the previous one keeps serving.
    cfg.write(
        "products/bank-operator.toml",
        "languages = [\"en\"]\nbogus_key = 1\n",
    );
    let resp = test::call_service(&app, reload("s3cret")).await;
    assert_eq!(resp.status().as_u16(), 422);
    let body: serde_json::Value =
        serde_json::from_slice(&test::read_body(resp).await).unwrap_or_default();
    assert_eq!(body["error"]["code"], "invalid_config");
    assert!(
        body["error"]["problems"].to_string().contains("bogus_key"),
        "{body}"
    );
    let (_, still) = screen(
        &app,
        json!({"product": "bank-operator", "text": "how do I check my balance"}),
    )
    .await;
    assert_eq!(rev(&still), rev(&after));
    assert_eq!(
        counter_value(
            &state.metrics,
            "guard_config_reloads_total",
            &[("result", "ok")]
        ),
        1.0
    );
    assert_eq!(
        counter_value(
            &state.metrics,
            "guard_config_reloads_total",
            &[("result", "error")]
        ),
        1.0
    );
}

#[actix_web::test]
async fn in_flight_requests_finish_on_the_configuration_they_started_with() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(chat("safe"))
                .set_delay(Duration::from_millis(1500)),
        )
        .mount(&server)
        .await;
    let cfg = mock_guard_config(&server.uri());
    let state = state_with_token(cfg.path(), Overrides::default(), None);
    let app = app_for(state.clone()).await;
    let old_rev = state.screener.load().config.products["wallet-assistant"]
        .config_rev
        .clone();
    let request = screen(
        &app,
        json!({"product": "wallet-assistant", "text": "how do I check my balance"}),
    );
    let reload = async {
        // Wait until the request is at the model, then reload under it.
        while server
            .received_requests()
            .await
            .unwrap_or_default()
            .is_empty()
        {
            actix_web::rt::time::sleep(Duration::from_millis(10)).await;
        }
        cfg.write(
            "judge_prompts/wallet-assistant.md",
            "# Judge\nNew instructions.\n",
        );
        state.reload().map(|_| ()).map_err(|e| e.to_string())
    };
    let ((_, v), reloaded) = futures_util::future::join(request, reload).await;
    assert_eq!(reloaded, Ok(()));
    assert_eq!(v["config_rev"].as_str(), Some(old_rev.as_str()), "{v}");
    assert_ne!(
        state.screener.load().config.products["wallet-assistant"].config_rev,
        old_rev
    );
}

/// SIGHUP reloads a running server, and the service logs it (as everything it logs) as one JSON
/// object per line on stderr, the products with their new revisions.
#[tokio::test]
async fn sighup_reloads_a_running_server_and_logs_json_lines() {
    let cfg = TempConfig::new(|_, t| t);
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .ok()
        .and_then(|l| l.local_addr().ok())
        .map_or(0, |a| a.port());
    let listen = format!("127.0.0.1:{port}");
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_guard"))
        .args([
            "serve",
            "--listen",
            &listen,
            "--workers",
            "1",
            "--config-dir",
            &cfg.path().display().to_string(),
        ])
        .env("GUARD_AUDIT_LOG", "off")
        .env_remove("GUARD_MODEL_URL")
        .env_remove("GUARD_JUDGE_URL")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => panic!("{e}"),
    };
    // Every stderr line, as it comes.
    let (lines_tx, lines) = std::sync::mpsc::channel::<String>();
    if let Some(err) = child.stderr.take() {
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(err).lines().map_while(Result::ok) {
                lines_tx.send(line).ok();
            }
        });
    }
    let client = reqwest::Client::new();
    let url = format!("http://{listen}/readyz");
    let rev = || async {
        let v: serde_json::Value = client.get(&url).send().await.ok()?.json().await.ok()?;
        v["products"]["wallet-assistant"]
            .as_str()
            .map(str::to_string)
    };
    let mut before = None;
    // A bound that only keeps a wedged start from hanging: a debug build loading the
    // shipped configuration on a busy machine takes as long as it takes.
    for _ in 0..6000 {
        before = rev().await;
        if before.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(before.is_some(), "server did not come up");
    cfg.write(
        "judge_prompts/wallet-assistant.md",
        "# Judge\nChanged by the SIGHUP test.\n",
    );
    let hup = std::process::Command::new("kill")
        .args(["-HUP", &child.id().to_string()])
        .status();
    assert!(hup.is_ok_and(|s| s.success()));
    let mut after = before.clone();
    for _ in 0..6000 {
        after = rev().await;
        if after != before {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        after.is_some() && after != before,
        "config_rev did not change after SIGHUP: {before:?} -> {after:?}"
    );
    // Wait for the reload's log line (a bound only against a server that never writes it).
    let mut seen = Vec::new();
    let reload_line = loop {
        let Ok(line) = lines.recv_timeout(Duration::from_secs(600)) else {
            break None;
        };
        let v: serde_json::Value = match serde_json::from_str(&line) {
            Ok(v) => v,
            Err(_) => panic!("not a JSON log line: {line:?}"),
        };
        assert!(v["ts"].is_string() && v["level"].is_string(), "{line}");
        seen.push(v["msg"].as_str().unwrap_or_default().to_string());
        if v["msg"] == "reloaded configuration" {
            break Some(v);
        }
    };
    child.kill().ok();
    child.wait().ok();
    let Some(v) = reload_line else {
        panic!("no reload line; the lines were {seen:?}")
    };
    assert!(seen.iter().any(|m| m == "listening"), "{seen:?}");
    let products = v["products"].as_array().cloned().unwrap_or_default();
    let wallet = products.iter().find(|p| p["product"] == "wallet-assistant");
    assert_eq!(
        wallet.and_then(|p| p["config_rev"].as_str()),
        after.as_deref(),
        "{v}"
    );
}

/// With the ops routes on their own address (as in the container image), `/readyz` there
/// answers only once the API's socket is listening: a readiness probe that passes means the
/// API accepts. (The ops server used to start first; `.ci/deploy-checks` saw a refused API
/// connection right after a 200 from `/readyz`, once in 15 starts.)
#[tokio::test]
async fn ready_on_the_ops_address_means_the_api_accepts() {
    let cfg = TempConfig::new(|_, t| t);
    let free = || {
        std::net::TcpListener::bind("127.0.0.1:0")
            .ok()
            .and_then(|l| l.local_addr().ok())
            .map_or(0, |a| a.port())
    };
    let (api, ops) = (
        format!("127.0.0.1:{}", free()),
        format!("127.0.0.1:{}", free()),
    );
    assert_ne!(api, ops);
    for _ in 0..5 {
        let child = std::process::Command::new(env!("CARGO_BIN_EXE_guard"))
            .args(["serve", "--listen", &api, "--workers", "1"])
            .args(["--config-dir", &cfg.path().display().to_string()])
            .env("GUARD_OPS_LISTEN", &ops)
            .env("GUARD_AUDIT_LOG", "off")
            .env_remove("GUARD_MODEL_URL")
            .env_remove("GUARD_JUDGE_URL")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
        let mut child = match child {
            Ok(c) => c,
            Err(e) => panic!("{e}"),
        };
        let client = reqwest::Client::new();
        let mut ready = false;
        // A bound that only keeps a wedged start from hanging: a debug build loading the
        // shipped configuration on a busy machine takes as long as it takes.
        for _ in 0..12000 {
            let got = client.get(format!("http://{ops}/readyz")).send().await;
            if got.is_ok_and(|r| r.status() == 200) {
                ready = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        let accepted = std::net::TcpStream::connect(&api);
        child.kill().ok();
        child.wait().ok();
        assert!(ready, "/readyz on the ops address never answered 200");
        assert!(accepted.is_ok(), "ready, but the API refused: {accepted:?}");
    }
}

fn metric_names(text: &str) -> Vec<String> {
    let bytes = text.as_bytes();
    let is_name = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(pos) = text[i..].find("guard_") {
        let start = i + pos;
        let mut end = start;
        while end < bytes.len() && is_name(bytes[end]) {
            end += 1;
        }
        let word_start = start == 0 || !(is_name(bytes[start - 1]) || bytes[start - 1] == b':');
        let quoted = start > 0 && bytes[start - 1] == b'"' && bytes.get(end) == Some(&b'"');
        if word_start && !quoted {
            out.push(text[start..end].to_string());
        }
        i = end;
    }
    out
}

/// Every route's errors are counted once, by the route that answered and the error's code,
/// whichever layer refused the request: the opening, the handler, the fallback, or a stream
/// ended by a bad line after it started.
#[actix_web::test]
async fn every_routes_errors_are_counted_by_route_and_code() {
    let state = shipped_state();
    let app = app_for(state.clone()).await;
    let cases: &[(&str, &str, Option<&str>, &str, &str)] = &[
        (
            "POST",
            "/v1/screen",
            Some(r#"{"product": "nope", "text": "hi"}"#),
            "/v1/screen",
            "unknown_product",
        ),
        (
            "GET",
            "/v1/screen",
            None,
            "/v1/screen",
            "method_not_allowed",
        ),
        (
            "POST",
            "/v1/screen-output",
            Some(r#"{"product": "wallet-assistant"}"#),
            "/v1/screen-output",
            "missing_text",
        ),
        (
            "POST",
            "/v1/tool-calls",
            Some("[1]"),
            "/v1/tool-calls",
            "malformed_json",
        ),
        (
            "POST",
            "/v1/screen-context",
            Some(r#"{"text": "x"}"#),
            "/v1/screen-context",
            "missing_product",
        ),
        (
            "POST",
            "/v1/screen-output/stream",
            None,
            "/v1/screen-output/stream",
            "missing_product",
        ),
        (
            "POST",
            "/admin/reload",
            None,
            "/admin/reload",
            "unauthorized",
        ),
        ("GET", "/nowhere", None, "other", "not_found"),
    ];
    for (method, uri, body, _, _) in cases {
        let req = match *method {
            "GET" => test::TestRequest::get(),
            _ => test::TestRequest::post(),
        };
        let req = req
            .uri(uri)
            .insert_header(("content-type", "application/json"))
            .set_payload(body.unwrap_or("").to_string())
            .to_request();
        let resp = test::call_service(&app, req).await;
        assert!(resp.status().as_u16() >= 400, "{method} {uri}");
    }
    // A stream that started, then sent a line that is not `{"delta": ...}`.
    let req = test::TestRequest::post()
        .uri("/v1/screen-output/stream?product=wallet-assistant")
        .set_payload("{\"delta\": \"hello \"}\nnot json\n")
        .to_request();
    let resp = test::call_service(&app, req).await;
    let body = String::from_utf8_lossy(&test::read_body(resp).await).to_string();
    assert!(body.contains("malformed_json"), "{body}");
    let m = &state.metrics;
    for (method, uri, _, route, code) in cases {
        let labels = [("route", *route), ("code", *code)];
        let n = counter_value(m, "guard_http_errors_total", &labels);
        assert_eq!(n, 1.0, "{method} {uri}: {route} {code}");
    }
    let labels = [
        ("route", "/v1/screen-output/stream"),
        ("code", "malformed_json"),
    ];
    assert_eq!(counter_value(m, "guard_http_errors_total", &labels), 1.0);
    let total = counter_value(m, "guard_http_errors_total", &[]);
    assert_eq!(total, cases.len() as f64 + 1.0, "each error once");
}

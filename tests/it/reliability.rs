//! Bounded work and slow clients: the in-flight cap answers 503 with Retry-After at once, a
//! declared body over the limit is 413 before it is read, a client that stalls mid-body is cut
//! off with 408, and a failing model backend opens its breaker and then fails fast.

use crate::harness::{
    app_for, memory_audit, repo_root, screen, with_guard, LiveServer, TempConfig,
};
use actix_web::test as web_test;
use actix_web::web;
use guard::config::Overrides;
use guard::http::AppState;
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

/// The body is taken at once when it came with the headers; one still arriving (declared or
/// chunked) is read to its end, every piece of it, under the body deadline.
#[test]
fn a_body_that_arrives_in_pieces_is_read_whole() {
    let server = LiveServer::start(state_with(|_| {}));
    let body = r#"{"product": "wallet-assistant", "text": "amar card block kore den please"}"#;
    let (a, b) = body.split_at(30);
    let head = format!(
        "POST /v1/screen HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    let chunked = format!(
        "POST /v1/screen HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{a}\r\n",
        a.len()
    );
    let chunked_end = format!("{:x}\r\n{b}\r\n0\r\n\r\n", b.len());
    let chunked_whole = format!("{chunked}{chunked_end}");
    let cases: [(&str, Vec<&[u8]>); 3] = [
        (
            "declared, in pieces",
            vec![head.as_bytes(), a.as_bytes(), b.as_bytes()],
        ),
        (
            "chunked, in pieces",
            vec![chunked.as_bytes(), chunked_end.as_bytes()],
        ),
        ("chunked, at once", vec![chunked_whole.as_bytes()]),
    ];
    for (case, parts) in cases {
        let answer = server.raw_in_parts(&parts, Duration::from_millis(50));
        assert!(answer.starts_with("HTTP/1.1 200"), "{case}: {answer}");
        assert!(
            answer.contains(r#""language":"bn-Latn""#),
            "{case}: {answer}"
        );
    }
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
        s.api_keys = guard::http::auth::ApiKeys::parse("wallet-key-00000001 wallet-assistant").ok()
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

fn remote_guard_state(url: &str, extra: &str) -> web::Data<AppState> {
    let table = format!("kind = \"llama_guard_3\"\nurl = \"{url}/v1\"\nmodel = \"lg\"\n{extra}");
    let cfg = TempConfig::new(move |name, text| {
        if name == "wallet-assistant" {
            with_guard(text, &table)
        } else {
            text
        }
    });
    let state = AppState::load(
        cfg.path().to_path_buf(),
        Overrides::default(),
        memory_audit(),
    );
    // The configuration is built; the directory may go.
    drop(cfg);
    match state {
        Ok(s) => web::Data::new(s),
        Err(e) => panic!("{e}"),
    }
}

fn safe_answer() -> Value {
    json!({"choices": [{"message": {"role": "assistant", "content": "safe"}}]})
}

#[actix_web::test]
async fn a_full_backend_sheds_the_next_call_at_once_and_blocks_it() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(safe_answer())
                .set_delay(Duration::from_millis(800)),
        )
        .mount(&server)
        .await;
    let state = remote_guard_state(&server.uri(), "max_concurrent = 1\ntimeout_ms = 3000");
    let app = app_for(state).await;
    let first = screen(
        &app,
        json!({"product": "wallet-assistant", "text": "what is my balance today"}),
    );
    let second = async {
        // Start once the first call holds the backend's only slot.
        while server.received_requests().await.map_or(0, |r| r.len()) == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        screen(
            &app,
            json!({"product": "wallet-assistant", "text": "how do I change my pin"}),
        )
        .await
    };
    let ((_, a), (_, b)) = futures_util::future::join(first, second).await;
    assert_eq!(a["decision"], "allow", "{a}");
    assert_eq!(b["reason"], "guard_unavailable", "{b}");
    assert_eq!(b["fail_mode"], "closed", "{b}");
    let detail = b["trace"]
        .as_array()
        .and_then(|t| t.last())
        .map(|t| t["detail"].clone());
    assert_eq!(detail, Some(json!("llama_guard_3: shed")), "{b}");
    assert_eq!(server.received_requests().await.map_or(0, |r| r.len()), 1);
}

#[actix_web::test]
async fn the_breaker_half_opens_after_its_cool_down_and_a_good_probe_closes_it() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(503))
        .up_to_n_times(3)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(safe_answer()))
        .with_priority(2)
        .mount(&server)
        .await;
    let state = remote_guard_state(
        &server.uri(),
        "breaker_failures = 3\nbreaker_cooldown_ms = 300",
    );
    let app = app_for(state).await;
    let ask = |i: usize| {
        let text = format!("what is the fee for transfer number {i}");
        screen(&app, json!({"product": "wallet-assistant", "text": text}))
    };
    let detail = |v: &Value| {
        v["trace"]
            .as_array()
            .and_then(|t| t.last())
            .map(|t| t["detail"].clone())
            .unwrap_or_default()
    };
    for i in 0..3 {
        let (_, v) = ask(i).await;
        assert_eq!(detail(&v), "llama_guard_3: error", "{v}");
    }
    let (_, v) = ask(3).await;
    assert_eq!(detail(&v), "llama_guard_3: circuit_open", "{v}");
    let readyz = |app| async move {
        let req = web_test::TestRequest::get().uri("/readyz").to_request();
        let v: Value = web_test::call_and_read_body_json(app, req).await;
        v["breakers"]["wallet-assistant"]["guard"].clone()
    };
    assert_eq!(readyz(&app).await, "open");
    tokio::time::sleep(Duration::from_millis(400)).await;
    // The cool-down is over: the next call is the probe; the model answers, the breaker closes.
    let (_, v) = ask(4).await;
    assert_eq!(v["decision"], "allow", "{v}");
    assert_eq!(readyz(&app).await, "closed");
    let (_, v) = ask(5).await;
    assert_eq!(v["decision"], "allow", "{v}");
    assert_eq!(server.received_requests().await.map_or(0, |r| r.len()), 5);
}

/// A reload builds off the request path: on a one-worker server, screens sent while a reload
/// is building are answered before the reload is. (With the build inside the handler, as
/// before, that one worker served nothing until the reload was done.)
///
/// The reload is held in the middle of its build by an event, not by making the build slow:
/// the English wordlist is replaced by a named pipe, so the reload's read of it waits until
/// this test writes the list. Opening the pipe for writing returns once the reload has opened
/// it for reading, that is, once the reload is building; the screens go out then, and the list
/// is written only after all of them have been answered.
#[cfg(unix)]
#[test]
fn screens_are_answered_while_a_reload_builds() {
    use std::io::Write;
    let cfg = TempConfig::new(|_, text| text);
    let state = crate::harness::state_with_token(cfg.path(), Overrides::default(), Some("tok-123"));
    let server = LiveServer::start(state);
    // A changed wordlist: the reload must build the lexicon anew.
    let list = cfg.path().join("wordlists/english.txt");
    let mut text = std::fs::read_to_string(&list).unwrap_or_default();
    text.push_str("\nzzyzzxreloadtestword 1.00\n");
    std::fs::remove_file(&list).ok();
    let made = std::process::Command::new("mkfifo").arg(&list).status();
    assert!(made.as_ref().is_ok_and(|s| s.success()), "mkfifo: {made:?}");
    let reload_done = std::sync::Mutex::new(None::<Instant>);
    let first_screen = std::sync::Mutex::new(None::<Instant>);
    std::thread::scope(|s| {
        s.spawn(|| {
            let answer = server.raw_waiting(
                b"POST /admin/reload HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer tok-123\r\nContent-Length: 0\r\n\r\n",
            );
            assert!(answer.contains("reloaded"), "{answer}");
            *reload_done.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
        });
        s.spawn(|| {
            // Returns when the reload has opened the list: it is building now.
            let mut pipe = match std::fs::OpenOptions::new().write(true).open(&list) {
                Ok(p) => p,
                Err(e) => panic!("{e}"),
            };
            for _ in 0..5 {
                let (status, body) = server.send(
                    "POST",
                    "/v1/screen",
                    Some("application/json"),
                    br#"{"product": "wallet-assistant", "text": "what is my balance"}"#,
                );
                assert_eq!(status, 200, "{body}");
                let mut first = first_screen.lock().unwrap_or_else(|e| e.into_inner());
                if first.is_none() {
                    *first = Some(Instant::now());
                }
            }
            // Let the reload finish: the list, then the end of the pipe.
            pipe.write_all(text.as_bytes()).ok();
        });
    });
    let reload_done = reload_done.into_inner().unwrap_or_default();
    let first_screen = first_screen.into_inner().unwrap_or_default();
    match (first_screen, reload_done) {
        (Some(screen), Some(reload)) => assert!(
            screen < reload,
            "the first screen waited for the reload ({:?} after it)",
            screen - reload
        ),
        other => panic!("{other:?}"),
    }
}

/// A chat model on loopback that answers `safe` after `delay` over keep-alive HTTP/1.1 and
/// counts what it sees.
struct CountingModel {
    url: String,
    /// The most calls it was answering at once: from having read a request to starting to write
    /// its answer, a window inside the client's call.
    most_calls: Arc<std::sync::atomic::AtomicUsize>,
    /// The most connections it ever had open at once.
    most_sockets: Arc<std::sync::atomic::AtomicUsize>,
    /// Connections open now.
    open: tokio::sync::watch::Receiver<usize>,
}

impl CountingModel {
    /// Wait until at most `n` connections are open (they close as the client's pool drops
    /// them); fails if that never happens.
    async fn settles_to(&self, n: usize) {
        let mut open = self.open.clone();
        let settled =
            tokio::time::timeout(Duration::from_secs(60), open.wait_for(|now| *now <= n)).await;
        assert!(
            matches!(settled, Ok(Ok(_))),
            "{} connections still open, more than {n}",
            *self.open.borrow()
        );
    }
}

async fn counting_model(delay: Duration) -> CountingModel {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = match tokio::net::TcpListener::bind("127.0.0.1:0").await {
        Ok(l) => l,
        Err(e) => panic!("{e}"),
    };
    let url = match listener.local_addr() {
        Ok(a) => format!("http://{a}"),
        Err(e) => panic!("{e}"),
    };
    let (open_tx, open) = tokio::sync::watch::channel(0usize);
    let open_tx = Arc::new(open_tx);
    let calls = Arc::new(AtomicUsize::new(0));
    let most_calls = Arc::new(AtomicUsize::new(0));
    let most_sockets = Arc::new(AtomicUsize::new(0));
    let body = safe_answer().to_string();
    let (calls_c, most_calls_c, most_sockets_c) =
        (calls.clone(), most_calls.clone(), most_sockets.clone());
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let mut now = 0;
            open_tx.send_modify(|n| {
                *n += 1;
                now = *n;
            });
            most_sockets_c.fetch_max(now, Ordering::SeqCst);
            let (open_tx, body) = (open_tx.clone(), body.clone());
            let (calls, most_calls) = (calls_c.clone(), most_calls_c.clone());
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                'conn: loop {
                    // One request: headers, then Content-Length bytes of body.
                    let (head_end, length) = loop {
                        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                            let head = String::from_utf8_lossy(&buf[..i]).to_ascii_lowercase();
                            let length = head
                                .lines()
                                .find_map(|l| l.strip_prefix("content-length:"))
                                .and_then(|v| v.trim().parse::<usize>().ok())
                                .unwrap_or(0);
                            break (i + 4, length);
                        }
                        match sock.read(&mut chunk).await {
                            Ok(0) | Err(_) => break 'conn,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                    };
                    while buf.len() < head_end + length {
                        match sock.read(&mut chunk).await {
                            Ok(0) | Err(_) => break 'conn,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                    }
                    buf.drain(..head_end + length);
                    let now = calls.fetch_add(1, Ordering::SeqCst) + 1;
                    most_calls.fetch_max(now, Ordering::SeqCst);
                    tokio::time::sleep(delay).await;
                    // Counted out before the answer leaves: the client's call is still running.
                    calls.fetch_sub(1, Ordering::SeqCst);
                    let answer = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                        body.len()
                    );
                    if sock.write_all(answer.as_bytes()).await.is_err() {
                        break;
                    }
                }
                open_tx.send_modify(|n| *n -= 1);
            });
        }
    });
    CountingModel {
        url,
        most_calls,
        most_sockets,
        open,
    }
}

/// What the cap bounds with reqwest: the calls the model sees at once (exactly), and the
/// sockets the pool keeps (`pool_max_idle_per_host`). The sockets open at a given moment are
/// not bounded exactly: a call that starts while a finished call's socket is on its way back to
/// the pool dials another one, which the full pool closes when it comes back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backend_never_has_more_calls_in_flight_than_its_cap_and_keeps_no_more_sockets() {
    use std::sync::atomic::Ordering;
    let model = counting_model(Duration::from_millis(5)).await;
    let transport = match guard::backends::transport::Transport::new(4) {
        Ok(t) => t,
        Err(e) => panic!("{e}"),
    };
    let target = guard::backends::RemoteTarget {
        url: format!("{}/v1", model.url),
        model: "lg".into(),
        api_key: None,
    };
    // 200 calls at once, far more than the cap: they take turns, 4 at a time.
    let body = json!({});
    let calls = (0..200).map(|_| {
        guard::backends::transport::post_json(&transport, &target, "chat/completions", &body)
    });
    let answers = futures_util::future::join_all(calls).await;
    let failed = answers.iter().filter(|a| a.is_err()).count();
    assert_eq!(failed, 0, "{:?}", answers.iter().find(|a| a.is_err()));
    let most = model.most_calls.load(Ordering::SeqCst);
    assert!(most <= 4, "{most} calls at once");
    assert!(most >= 2, "the calls did overlap");
    assert_eq!(transport.calls_in_flight(), 0);
    model.settles_to(4).await;
    eprintln!(
        "cap 4: at most {most} calls and {} sockets at once",
        model.most_sockets.load(Ordering::SeqCst)
    );
}

#[test]
fn screens_far_above_a_backends_cap_never_put_more_calls_in_flight_than_the_cap() {
    use std::sync::atomic::Ordering;
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => panic!("{e}"),
    };
    let model = runtime.block_on(counting_model(Duration::from_millis(20)));
    let state = remote_guard_state(&model.url, "max_concurrent = 8\ntimeout_ms = 3000");
    // Two workers, each with its own runtime, as `guard serve` runs on this machine, and 1,000
    // clients: a call freed on one worker ends while a call starts on the other.
    let server = LiveServer::start_with_workers(state, 2);
    let endpoint = format!("http://{}/v1/screen", server.addr);
    let (allowed, shed) = runtime.block_on(async {
        let client = reqwest::Client::new();
        let clients = (0..1000).map(|c| {
            let (client, endpoint) = (client.clone(), endpoint.clone());
            tokio::spawn(async move {
                let (mut allowed, mut shed) = (0, 0);
                for i in 0..10 {
                    let body = json!({"product": "wallet-assistant", "text": format!("what is my balance {c} {i}")});
                    let v: Value = match client.post(&endpoint).json(&body).send().await {
                        Ok(r) => r.json().await.unwrap_or(Value::Null),
                        Err(e) => panic!("{e}"),
                    };
                    match v["decision"].as_str() {
                        Some("allow") => allowed += 1,
                        _ => {
                            assert_eq!(v["reason"], "guard_unavailable", "{v}");
                            shed += 1;
                        }
                    }
                }
                (allowed, shed)
            })
        });
        let mut totals = (0, 0);
        for r in futures_util::future::join_all(clients).await {
            let (a, s) = r.unwrap_or((0, 0));
            totals = (totals.0 + a, totals.1 + s);
        }
        totals
    });
    assert_eq!(allowed + shed, 10_000);
    assert!(allowed >= 8, "{allowed} allowed");
    let most = model.most_calls.load(Ordering::SeqCst);
    assert!(most <= 8, "{most} calls at once");
    // The pool keeps at most 8 sockets once the burst is over.
    runtime.block_on(model.settles_to(8));
    eprintln!(
        "cap 8, 1,000 clients: at most {most} calls and {} sockets at once",
        model.most_sockets.load(Ordering::SeqCst)
    );
    // The dashboard sees the calls in flight: none once every screen is answered.
    let metrics = runtime.block_on(async {
        let url = format!("http://{}/metrics", server.addr);
        match reqwest::get(&url).await {
            Ok(r) => r.text().await.unwrap_or_default(),
            Err(e) => panic!("{e}"),
        }
    });
    let open: Option<f64> = metrics
        .lines()
        .find(|l| l.starts_with("guard_model_sockets{product=\"wallet-assistant\",role=\"guard\"}"))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok());
    assert_eq!(open, Some(0.0), "{open:?}");
}

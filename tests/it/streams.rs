//! Answer streams against the real server: they draw from their own in-flight budget, so
//! streams that hold their slot cannot lock the question screen out, and a stream whose client
//! goes silent ends with a verdict line that blocks. No test sleeps for a time: each waits for
//! what the server sends (the stream's head, its verdict line), with a small configured deadline.

use crate::harness::{counter_value, memory_audit, LiveServer, TempConfig};
use actix_web::web;
use guard::config::Overrides;
use guard::http::AppState;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::Duration;

/// The wallet's `[output]` with `keys` added, served with at most `streams` open streams.
fn server(keys: &str, streams: usize) -> (TempConfig, web::Data<AppState>, LiveServer) {
    let cfg = TempConfig::new(|_, text| text.replace("[output]\n", &format!("[output]\n{keys}\n")));
    let state = match AppState::load(
        cfg.path().to_path_buf(),
        Overrides::default(),
        memory_audit(),
    ) {
        Ok(mut s) => {
            s.streams = Arc::new(tokio::sync::Semaphore::new(streams));
            web::Data::new(s)
        }
        Err(e) => panic!("{e}"),
    };
    let server = LiveServer::start(state.clone());
    (cfg, state, server)
}

/// A stream's request head and, chunked, the first lines of its body; the body is never ended.
fn open_stream(addr: &str, lines: &str) -> TcpStream {
    let mut s = match TcpStream::connect(addr) {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    };
    // Only a bound on a server that never answers: the tests wait for what it sends.
    s.set_read_timeout(Some(Duration::from_secs(600))).ok();
    let mut request =
        "POST /v1/screen-output/stream?product=wallet-assistant HTTP/1.1\r\nHost: x\r\n\
         Content-Type: application/x-ndjson\r\nTransfer-Encoding: chunked\r\n\r\n"
            .to_string();
    if !lines.is_empty() {
        request.push_str(&format!("{:x}\r\n{lines}\r\n", lines.len()));
    }
    s.write_all(request.as_bytes()).ok();
    s
}

/// What the server sends on `s` until `done` holds for it (or the server closes).
fn read_until(s: &mut TcpStream, done: impl Fn(&str) -> bool) -> String {
    let mut raw = Vec::new();
    let mut buf = [0u8; 8192];
    while !done(&String::from_utf8_lossy(&raw)) {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
        }
    }
    String::from_utf8_lossy(&raw).to_string()
}

#[test]
fn a_silent_stream_ends_with_the_rest_masked_and_a_verdict_line_that_blocks() {
    let (_cfg, state, server) = server("stream_idle_timeout_ms = 50", 4);
    // The card is the last thing sent: the stream holds it back until it knows the value ended.
    let line = r#"{"delta": "Your card is 4539 1488 0343 6467"}"#;
    let mut s = open_stream(&server.addr, &format!("{line}\n"));
    let answer = read_until(&mut s, |a| a.contains("\"done\""));
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains("\"reason\":\"stream_idle\""), "{answer}");
    assert!(answer.contains("\"decision\":\"block\""), "{answer}");
    assert!(
        answer.contains("6467") && !answer.contains("4539"),
        "{answer}"
    );
    // The stream's slot is given back: the next stream is admitted.
    let mut again = open_stream(&server.addr, "");
    let answer = read_until(&mut again, |a| a.contains("\"done\""));
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains("\"reason\":\"stream_idle\""), "{answer}");
    let errors = counter_value(&state.metrics, "guard_http_errors_total", &[]);
    assert_eq!(errors, 0.0, "a cut stream is a verdict, not an error");
}

#[test]
fn streams_holding_every_stream_slot_leave_the_question_screen_answering() {
    let keys = "stream_idle_timeout_ms = 600000\nstream_max_duration_ms = 600000";
    let (_cfg, state, server) = server(keys, 2);
    // Two streams take both slots and send nothing more; each is admitted (its head arrives).
    let mut held = Vec::new();
    for _ in 0..2 {
        let mut s = open_stream(&server.addr, "");
        let head = read_until(&mut s, |a| a.contains("\r\n\r\n"));
        assert!(head.starts_with("HTTP/1.1 200"), "{head}");
        held.push(s);
    }
    let mut third = open_stream(&server.addr, "");
    let refused = read_until(&mut third, |a| a.contains("overloaded"));
    assert!(refused.starts_with("HTTP/1.1 503"), "{refused}");
    let body = br#"{"product": "wallet-assistant", "text": "what is my balance"}"#;
    for route in ["/v1/screen", "/v1/screen-output"] {
        let (status, answer) = server.send("POST", route, Some("application/json"), body);
        assert_eq!(status, 200, "{route}: {answer}");
    }
    let overloaded = |route| {
        let labels = [("route", route), ("code", "overloaded")];
        counter_value(&state.metrics, "guard_http_errors_total", &labels)
    };
    assert_eq!(overloaded("/v1/screen-output/stream"), 1.0);
    assert_eq!(overloaded("/v1/screen"), 0.0);
    drop(held);
}

//! The bad-input catalogue, through the real HTTP server on loopback: malformed and truncated
//! JSON, arrays, wrong types, duplicate keys, huge and deeply nested values, invalid UTF-8, lone
//! surrogates, NUL and control characters, 100,000 zero-width characters, bidi overrides, wrong
//! content types and methods, unknown routes, oversized bodies. Each gets its status and stable
//! error code (never a 500), and the server answers a real question correctly afterwards.

use crate::harness::{memory_audit, repo_root, LiveServer};
use actix_web::web;
use guard::config::Overrides;
use guard::http::AppState;

const JSON: Option<&str> = Some("application/json");

/// Method, path, content type, body, expected status, expected error code ("" for a verdict).
type Case = (
    &'static str,
    &'static str,
    Option<&'static str>,
    Vec<u8>,
    u16,
    &'static str,
);

fn body(product: &str, text: &str) -> Vec<u8> {
    serde_json::json!({"product": product, "text": text})
        .to_string()
        .into_bytes()
}

#[test]
fn every_bad_request_gets_its_status_and_code_and_the_server_still_answers() {
    let state = match AppState::load(repo_root(), Overrides::default(), memory_audit()) {
        Ok(s) => web::Data::new(s),
        Err(e) => panic!("{e}"),
    };
    let s = LiveServer::start(state);
    let nested = format!(
        "{{\"product\": \"wallet-assistant\", \"text\": \"hi\", \"x\": {}1{}}}",
        "[".repeat(30_000),
        "]".repeat(30_000)
    );
    let zero_width = "\u{200B}".repeat(100_000);
    let big = body("wallet-assistant", &"a".repeat(70 * 1024));
    let mut cases: Vec<Case> = vec![
        ("POST", "/v1/screen", JSON, b"{not json".to_vec(), 400, "malformed_json"),
        ("POST", "/v1/screen", JSON, b"{\"product\": \"wallet-assistant\", \"text\": \"hi".to_vec(), 400, "malformed_json"),
        ("POST", "/v1/screen", JSON, b"".to_vec(), 400, "malformed_json"),
        ("POST", "/v1/screen", JSON, b"null".to_vec(), 400, "malformed_json"),
        ("POST", "/v1/screen", JSON, b"42".to_vec(), 400, "malformed_json"),
        ("POST", "/v1/screen", JSON, b"\"text\"".to_vec(), 400, "malformed_json"),
        ("POST", "/v1/screen", JSON, b"[\"wallet-assistant\", \"hi\"]".to_vec(), 400, "malformed_json"),
        ("POST", "/v1/screen", JSON, b"[]".to_vec(), 400, "malformed_json"),
        ("POST", "/v1/screen", JSON, b"{}".to_vec(), 422, "missing_product"),
        ("POST", "/v1/screen", JSON, b"{\"text\": \"hi\"}".to_vec(), 422, "missing_product"),
        ("POST", "/v1/screen", JSON, b"{\"product\": \"wallet-assistant\"}".to_vec(), 422, "missing_text"),
        ("POST", "/v1/screen", JSON, b"{\"product\": \"wallet-assistant\", \"text\": null}".to_vec(), 422, "missing_text"),
        ("POST", "/v1/screen", JSON, b"{\"product\": \"wallet-assistant\", \"text\": \"\"}".to_vec(), 422, "missing_text"),
        ("POST", "/v1/screen", JSON, b"{\"product\": \"wallet-assistant\", \"text\": \"   \\n\\t \"}".to_vec(), 422, "missing_text"),
        ("POST", "/v1/screen", JSON, b"{\"product\": \"wallet-assistant\", \"text\": 12}".to_vec(), 422, "invalid_text"),
        ("POST", "/v1/screen", JSON, b"{\"product\": \"wallet-assistant\", \"text\": true}".to_vec(), 422, "invalid_text"),
        ("POST", "/v1/screen", JSON, b"{\"product\": \"wallet-assistant\", \"text\": [\"hi\"]}".to_vec(), 422, "invalid_text"),
        ("POST", "/v1/screen", JSON, b"{\"product\": \"wallet-assistant\", \"text\": {\"a\": 1}}".to_vec(), 422, "invalid_text"),
        ("POST", "/v1/screen", JSON, b"{\"product\": 7, \"text\": \"hi\"}".to_vec(), 400, "malformed_json"),
        ("POST", "/v1/screen", JSON, b"{\"product\": [\"wallet-assistant\"], \"text\": \"hi\"}".to_vec(), 400, "malformed_json"),
        ("POST", "/v1/screen", JSON, b"{\"product\": \"nope\", \"text\": \"hi\"}".to_vec(), 404, "unknown_product"),
        ("POST", "/v1/screen", JSON, b"{\"product\": \"WALLET-ASSISTANT\", \"text\": \"hi\"}".to_vec(), 404, "unknown_product"),
        ("POST", "/v1/screen", JSON, b"{\"product\": \"../products/wallet-assistant\", \"text\": \"hi\"}".to_vec(), 404, "unknown_product"),
        ("POST", "/v1/screen", JSON, b"{\"product\": \"wallet-assistant\", \"product\": \"bank-operator\", \"text\": \"hi\"}".to_vec(), 400, "malformed_json"),
        ("POST", "/v1/screen", JSON, b"{\"product\": \"wallet-assistant\", \"text\": \"hi\", \"text\": \"again\"}".to_vec(), 400, "malformed_json"),
        ("POST", "/v1/screen", JSON, b"{\"product\": \"wallet-assistant\", \"text\": \"hi\", \"request_id\": {\"a\": 1}}".to_vec(), 422, "invalid_request_id"),
        ("POST", "/v1/screen", JSON, b"{\"product\": \"wallet-assistant\", \"text\": \"hi\", \"request_id\": [1]}".to_vec(), 422, "invalid_request_id"),
        // Unknown fields are ignored (tolerant wire), however deep: a verdict, not a crash.
        ("POST", "/v1/screen", JSON, nested.clone().into_bytes(), 200, ""),
        ("POST", "/v1/screen", JSON, b"{\"product\": \"wallet-assistant\", \"text\": \"\xff\xfe bad utf8\"}".to_vec(), 400, "malformed_json"),
        ("POST", "/v1/screen", JSON, b"{\"product\": \"wallet-assistant\", \"text\": \"\\ud800 lone\"}".to_vec(), 400, "malformed_json"),
        ("POST", "/v1/screen", JSON, b"{\"product\": \"wallet-assistant\", \"text\": \"\\udc00\"}".to_vec(), 400, "malformed_json"),
        (
            // 100,000 zero-width characters are 300 KB: over the limit.
            "POST",
            "/v1/screen",
            JSON,
            body("wallet-assistant", &zero_width),
            413,
            "payload_too_large",
        ),
        (
            "POST",
            "/v1/screen",
            JSON,
            body("wallet-assistant", &"\u{200B}".repeat(20_000)),
            422,
            "no_visible_text",
        ),
        ("POST", "/v1/screen", JSON, body("wallet-assistant", "\u{E0041}\u{E0042}\u{E0043}"), 422, "no_visible_text"),
        ("POST", "/v1/screen", JSON, big.clone(), 413, "payload_too_large"),
        ("POST", "/v1/screen", Some("text/plain"), body("wallet-assistant", "hi"), 415, "unsupported_media_type"),
        ("POST", "/v1/screen", Some("application/x-www-form-urlencoded"), b"product=wallet-assistant&text=hi".to_vec(), 415, "unsupported_media_type"),
        ("POST", "/v1/screen", None, body("wallet-assistant", "hi"), 415, "unsupported_media_type"),
        ("POST", "/v1/screen", Some("application/xml"), b"<text>hi</text>".to_vec(), 415, "unsupported_media_type"),
        ("GET", "/v1/screen", None, Vec::new(), 405, "method_not_allowed"),
        ("PUT", "/v1/screen", JSON, body("wallet-assistant", "hi"), 405, "method_not_allowed"),
        ("DELETE", "/v1/screen", None, Vec::new(), 405, "method_not_allowed"),
        ("POST", "/metrics", JSON, b"{}".to_vec(), 405, "method_not_allowed"),
        ("GET", "/admin/reload", None, Vec::new(), 405, "method_not_allowed"),
        ("POST", "/admin/reload", None, Vec::new(), 401, "unauthorized"),
        ("GET", "/v2/screen", None, Vec::new(), 404, "not_found"),
        ("POST", "/v1/screen/", JSON, body("wallet-assistant", "hi"), 404, "not_found"),
        ("GET", "/", None, Vec::new(), 404, "not_found"),
        ("GET", "/%00", None, Vec::new(), 404, "not_found"),
        ("POST", "/v1/screen-output", JSON, b"[1, 2]".to_vec(), 400, "malformed_json"),
        ("POST", "/v1/screen-output", JSON, big, 413, "payload_too_large"),
        ("POST", "/v1/screen-output/stream", Some("application/x-ndjson"), b"{\"delta\": \"hi\"}\n".to_vec(), 422, "missing_product"),
        ("POST", "/v1/screen-output/stream?product=nope", Some("application/x-ndjson"), b"{\"delta\": \"hi\"}\n".to_vec(), 404, "unknown_product"),
    ];
    // Questions the service must answer as verdicts (200), however odd their text.
    let odd_texts = [
        "\u{0}",
        "hi\u{0}there\u{7}\u{1b}[31m",
        "\u{202E}ecnalab ym si tahw",
        "a\u{0301}\u{0301}\u{0301}\u{0301}\u{0301}",
        "🙂🙂🙂",
        "١٢٣٤٥",
        "\u{FEFF}what is my balance",
    ];
    let odd: Vec<Vec<u8>> = odd_texts
        .iter()
        .map(|t| body("wallet-assistant", t))
        .collect();
    for b in &odd {
        cases.push(("POST", "/v1/screen", JSON, b.clone(), 200, ""));
    }
    assert!(cases.len() >= 50, "{} cases", cases.len());
    for (method, path, ct, payload, status, code) in &cases {
        let (got, answer) = s.send(method, path, *ct, payload);
        let shown: String = String::from_utf8_lossy(payload).chars().take(60).collect();
        assert_eq!(got, *status, "{method} {path} {shown:?}: {answer}");
        let v: serde_json::Value = serde_json::from_str(&answer).unwrap_or_default();
        if code.is_empty() {
            assert!(v["decision"].is_string(), "{shown:?}: {answer}");
        } else {
            assert_eq!(
                v["error"]["code"], *code,
                "{method} {path} {shown:?}: {answer}"
            );
        }
    }
    // And the server still answers a real question correctly.
    let (status, answer) = s.send(
        "POST",
        "/v1/screen",
        JSON,
        &body("wallet-assistant", "What is my balance?"),
    );
    assert_eq!(status, 200);
    assert!(answer.contains("\"decision\":\"allow\""), "{answer}");
}

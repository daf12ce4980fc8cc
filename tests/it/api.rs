//! The HTTP API through `create_app`: verdicts for each language outcome, and every error.

use crate::harness::{app_for, counter_value, screen, shipped_state};
use actix_web::test;
use serde_json::json;

fn redact(mut v: serde_json::Value) -> serde_json::Value {
    if let Some(trace) = v.get_mut("trace").and_then(|t| t.as_array_mut()) {
        for t in trace {
            t["micros"] = json!("[micros]");
        }
    }
    v["config_rev"] = json!("[config_rev]");
    if v["score"].is_number() {
        v["score"] = json!("[score]");
    }
    if let Some(trace) = v.get_mut("trace").and_then(|t| t.as_array_mut()) {
        for t in trace.iter_mut().filter(|t| t["stage"] == "guard") {
            t["detail"] = json!("[guard detail]");
        }
    }
    v
}

#[actix_web::test]
async fn language_outcomes_table() {
    let app = app_for(shipped_state()).await;
    for (text, decision, reason, stage, language) in [
        ("block my card", "allow", "passed", "pipeline", "en"),
        ("card declined", "allow", "passed", "pipeline", "en"),
        ("আমার কার্ড হারিয়ে গেছে", "allow", "passed", "pipeline", "bn"),
        (
            "আমার ATM card হারিয়ে গেছে",
            "allow",
            "passed",
            "pipeline",
            "bn",
        ),
        (
            "amar card block kore den",
            "block",
            "unsupported_language",
            "banglish",
            "bn-Latn",
        ),
        (
            "amr acc e tk nai keno",
            "block",
            "unsupported_language",
            "banglish",
            "bn-Latn",
        ),
        (
            "PIN ta bhule gechi",
            "block",
            "unsupported_language",
            "banglish",
            "bn-Latn",
        ),
        (
            "taka pathaisi kintu receive hoy nai",
            "block",
            "unsupported_language",
            "banglish",
            "bn-Latn",
        ),
        (
            "mujhe kal subah 9 baje ka alarm set karna hai",
            "block",
            "unsupported_language",
            "banglish",
            "hi-Latn",
        ),
        (
            "मेरा कार्ड खो गया है",
            "block",
            "unsupported_language",
            "script",
            "hi",
        ),
        (
            "我的卡丢了",
            "block",
            "unsupported_language",
            "script",
            "zh",
        ),
        (
            "Mi tarjeta fue bloqueada y no puedo pagar en la tienda",
            "block",
            "unsupported_language",
            "lang_id",
            "es",
        ),
    ] {
        let (status, v) = screen(&app, json!({"product": "wallet-assistant", "text": text})).await;
        assert_eq!(status, 200, "{text}: {v}");
        assert_eq!(
            (
                v["decision"].as_str(),
                v["reason"].as_str(),
                v["stage"].as_str(),
                v["language"].as_str()
            ),
            (Some(decision), Some(reason), Some(stage), Some(language)),
            "{text}: {v}"
        );
        // Every block carries the fixed reply in both languages.
        if decision == "block" {
            assert!(
                v["reply"]["en"].as_str().is_some_and(|s| !s.is_empty()),
                "{v}"
            );
            assert!(
                v["reply"]["bn"].as_str().is_some_and(|s| !s.is_empty()),
                "{v}"
            );
        } else {
            assert!(v.get("reply").is_none(), "{v}");
        }
    }
}

#[actix_web::test]
async fn verdict_json_snapshots() {
    let app = app_for(shipped_state()).await;
    let (_, allow) = screen(&app, json!({"product": "bank-operator", "text": "How do I reset a customer's PIN?", "request_id": "r-1"})).await;
    insta::assert_json_snapshot!("verdict_allow_en", redact(allow));
    let (_, banglish) = screen(
        &app,
        json!({"product": "wallet-assistant", "text": "amar card block kore den"}),
    )
    .await;
    insta::assert_json_snapshot!("verdict_block_banglish", redact(banglish));
    let (_, script) = screen(
        &app,
        json!({"product": "wallet-assistant", "text": "मेरा कार्ड खो गया है"}),
    )
    .await;
    insta::assert_json_snapshot!("verdict_block_script", redact(script));
}

#[actix_web::test]
async fn request_id_is_echoed() {
    let app = app_for(shipped_state()).await;
    let (_, v) = screen(&app, json!({"product": "wallet-assistant", "text": "what is my balance", "request_id": "abc-42"})).await;
    assert_eq!(v["request_id"], "abc-42");
    let (_, v) = screen(
        &app,
        json!({"product": "wallet-assistant", "text": "what is my balance", "request_id": 7}),
    )
    .await;
    assert_eq!(v["request_id"], "7");
}

#[actix_web::test]
async fn errors_are_json_with_the_right_status() {
    let state = shipped_state();
    let app = app_for(state.clone()).await;
    let big = "a".repeat(70 * 1024);
    let cases: Vec<(actix_web::test::TestRequest, u16, &str)> = vec![
        (
            test::TestRequest::post()
                .uri("/v1/screen")
                .insert_header(("content-type", "application/json"))
                .set_payload("{not json"),
            400,
            "malformed_json",
        ),
        (
            test::TestRequest::post()
                .uri("/v1/screen")
                .set_json(json!({"product": "wallet-assistant"})),
            422,
            "missing_text",
        ),
        (
            test::TestRequest::post()
                .uri("/v1/screen")
                .set_json(json!({"product": "wallet-assistant", "text": "   "})),
            422,
            "missing_text",
        ),
        (
            test::TestRequest::post()
                .uri("/v1/screen")
                .set_json(json!({"product": "wallet-assistant", "text": 12})),
            422,
            "invalid_text",
        ),
        (
            test::TestRequest::post()
                .uri("/v1/screen")
                .set_json(json!({"text": "hello"})),
            422,
            "missing_product",
        ),
        (
            test::TestRequest::post()
                .uri("/v1/screen")
                .set_json(json!({"product": "nope", "text": "hello"})),
            404,
            "unknown_product",
        ),
        (
            test::TestRequest::post()
                .uri("/v1/screen")
                .set_json(json!({"product": "wallet-assistant", "text": big})),
            413,
            "payload_too_large",
        ),
        (
            test::TestRequest::get().uri("/v1/screen"),
            405,
            "method_not_allowed",
        ),
        (
            test::TestRequest::post()
                .uri("/v1/screen")
                .insert_header(("content-type", "text/plain"))
                .set_payload("hello"),
            415,
            "unsupported_media_type",
        ),
        (
            test::TestRequest::post()
                .uri("/v1/screen")
                .set_payload("{}"),
            415,
            "unsupported_media_type",
        ),
        (test::TestRequest::get().uri("/nowhere"), 404, "not_found"),
        (
            test::TestRequest::post().uri("/admin/reload"),
            401,
            "unauthorized",
        ),
    ];
    for (req, status, code) in cases {
        let resp = test::call_service(&app, req.to_request()).await;
        let got_status = resp.status().as_u16();
        let body: serde_json::Value =
            serde_json::from_slice(&test::read_body(resp).await).unwrap_or_default();
        assert_eq!(
            (got_status, body["error"]["code"].as_str()),
            (status, Some(code)),
            "{body}"
        );
        assert!(
            body["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty()),
            "{body}"
        );
    }
    // Snapshot one error body: the shape is part of the contract.
    let resp = test::call_service(
        &app,
        test::TestRequest::post()
            .uri("/v1/screen")
            .set_json(json!({"product": "nope", "text": "hi"}))
            .to_request(),
    )
    .await;
    let body: serde_json::Value =
        serde_json::from_slice(&test::read_body(resp).await).unwrap_or_default();
    insta::assert_json_snapshot!("error_unknown_product", body);
    // Error responses are counted by code.
    assert_eq!(
        counter_value(
            &state.metrics,
            "guard_http_errors_total",
            &[("code", "unknown_product")]
        ),
        2.0
    );
}

#[actix_web::test]
async fn health_and_readiness() {
    let app = app_for(shipped_state()).await;
    let resp =
        test::call_service(&app, test::TestRequest::get().uri("/healthz").to_request()).await;
    assert_eq!(resp.status().as_u16(), 200);
    let resp = test::call_service(&app, test::TestRequest::get().uri("/readyz").to_request()).await;
    assert_eq!(resp.status().as_u16(), 200);
    let body: serde_json::Value =
        serde_json::from_slice(&test::read_body(resp).await).unwrap_or_default();
    assert!(body["products"]["bank-operator"].is_string(), "{body}");
    assert!(body["products"]["wallet-assistant"].is_string(), "{body}");
}

#[actix_web::test]
async fn no_input_gives_a_500() {
    let app = app_for(shipped_state()).await;
    for text in [
        "\u{0}",
        "🙂🙂🙂",
        "1234 5678",
        "a\u{0301}\u{0301}\u{0301}",
        "ং",
    ] {
        let (status, v) = screen(&app, json!({"product": "wallet-assistant", "text": text})).await;
        assert_eq!(status, 200, "{text:?}: {v}");
        assert!(v["decision"].is_string(), "{v}");
    }
    // Text made only of invisible characters is not a question (it used to pass as `und`).
    for text in [
        "\u{200D}\u{200C}",
        "\u{E0041}\u{E0042}",
        "\u{200B} \u{FEFF}\u{2060}",
    ] {
        let (status, v) = screen(&app, json!({"product": "wallet-assistant", "text": text})).await;
        assert_eq!(status, 422, "{text:?}: {v}");
        assert_eq!(v["error"]["code"], "no_visible_text", "{v}");
    }
}

//! The output screen through the service and as a library: one-shot and streamed answers,
//! values split across chunks, blocking kinds, internal names, a bilingual answer set of more
//! than 200 values, property tests over arbitrary chunkings, snapshots, and bad input.

use crate::harness::{app_for, counter_value, repo_root, shipped_state};
use actix_web::test as web_test;
use guard::config::{load, ConfigSet, Overrides};
use guard::screens::output::{self, OutputStream};
use proptest::prelude::*;
use serde_json::{json, Value};
use std::sync::OnceLock;

fn config() -> &'static ConfigSet {
    static C: OnceLock<ConfigSet> = OnceLock::new();
    C.get_or_init(|| match load(&repo_root(), &Overrides::default()) {
        Ok(c) => c,
        Err(e) => panic!("{e}"),
    })
}

fn wallet() -> &'static guard::product::Product {
    &config().products["wallet-assistant"]
}

/// Stream `text` in the given chunk sizes (cycled); returns the concatenated output.
fn streamed(text: &str, sizes: &[usize]) -> (String, output::OutputVerdict) {
    let p = wallet();
    let mut s = OutputStream::new(p);
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::new();
    let mut at = 0;
    let mut k = 0;
    while at < chars.len() {
        let n = sizes[k % sizes.len()].max(1).min(chars.len() - at);
        let chunk: String = chars[at..at + n].iter().collect();
        out.push_str(&s.push(&chunk));
        at += n;
        k += 1;
    }
    let (rest, v) = s.finish(p);
    out.push_str(&rest);
    (out, v)
}

fn to_bengali(s: &str) -> String {
    s.chars()
        .map(|c| match c.to_digit(10) {
            Some(d) => char::from_u32(0x09E6 + d).unwrap_or(c),
            None => c,
        })
        .collect()
}

fn luhn_complete(prefix: &str) -> String {
    (0..10)
        .map(|d| format!("{prefix}{d}"))
        .find(|c| luhn::valid(c))
        .unwrap_or_default()
}

/// Deterministic pseudo-random digits.
fn digits(seed: &mut u64, n: usize) -> String {
    (0..n)
        .map(|_| {
            *seed ^= *seed << 13;
            *seed ^= *seed >> 7;
            *seed ^= *seed << 17;
            char::from(b'0' + (*seed % 10) as u8)
        })
        .collect()
}

/// Real-looking answers in English and Bangla with card, phone, NID, account, OTP and PIN
/// values in ASCII and Bengali digits: (answer, the digits that must not survive).
fn answer_set() -> Vec<(String, String)> {
    let mut seed = 0x2545_F491_4F6C_DD1D_u64;
    let mut out = Vec::new();
    for i in 0..36 {
        let card = luhn_complete(&format!("4{}", digits(&mut seed, 14)));
        let spaced = format!(
            "{} {} {} {}",
            &card[..4],
            &card[4..8],
            &card[8..12],
            &card[12..]
        );
        let phone = format!("01{}{}", 3 + i % 7, digits(&mut seed, 8));
        let nid = digits(&mut seed, 13);
        let account = format!("20{}", digits(&mut seed, 11));
        let otp = digits(&mut seed, 6);
        let pin = digits(&mut seed, 4);
        let bn = i % 2 == 1;
        let d = |s: &str| if bn { to_bengali(s) } else { s.to_string() };
        let cases = [
            (
                format!("Your card {} has been blocked.", d(&spaced)),
                card[..12].to_string(),
            ),
            (
                format!("আপনার কার্ড {} বন্ধ করা হয়েছে।", d(&card)),
                card[..12].to_string(),
            ),
            (
                format!("We will call you on {} today.", d(&phone)),
                phone[..8].to_string(),
            ),
            (
                format!("আপনার নম্বর +88{} নিবন্ধিত আছে।", d(&phone)),
                phone.clone(),
            ),
            (
                format!("The NID {} is linked to this wallet.", d(&nid)),
                nid.clone(),
            ),
            (
                format!("Money went to account {} yesterday.", d(&account)),
                account[..9].to_string(),
            ),
            (
                format!("Your OTP is {}. Do not share it.", d(&otp)),
                otp.clone(),
            ),
            (format!("আপনার পিন {} দিয়ে লগইন করুন।", d(&pin)), pin.clone()),
        ];
        for (text, secret) in cases {
            out.push((text, d(&secret)));
        }
    }
    out
}

#[test]
fn a_bilingual_answer_set_of_more_than_200_values_is_masked_whole() {
    let set = answer_set();
    assert!(set.len() >= 200, "{}", set.len());
    let mut masked = 0;
    for (text, secret) in &set {
        let v = output::screen(wallet(), text);
        let clear = v.text.unwrap_or_default();
        assert!(!clear.contains(secret.as_str()), "{text:?} -> {clear:?}");
        assert_eq!(v.findings.len(), 1, "{text:?} -> {clear:?}");
        masked += 1;
    }
    assert_eq!(masked, set.len());
}

#[test]
fn streaming_equals_one_shot_on_the_answer_set() {
    for (text, _) in answer_set().iter().take(40) {
        let whole = output::screen(wallet(), text);
        for sizes in [&[1usize][..], &[2, 5], &[3, 1, 7], &[11]] {
            let (out, v) = streamed(text, sizes);
            assert_eq!(Some(out), whole.text, "{text:?} in {sizes:?}");
            assert_eq!(v.findings, whole.findings, "{text:?} in {sizes:?}");
            assert_eq!(v.decision, whole.decision);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Any chunking of any answer made of words, numbers and separators streams to the one-shot
    /// output.
    #[test]
    fn any_chunking_streams_to_the_one_shot_output(
        parts in prop::collection::vec(
            prop_oneof![
                "[a-zA-Z]{1,8}",
                "[0-9]{1,6}",
                "[০-৯]{1,5}",
                Just(" ".to_string()),
                Just("-".to_string()),
                Just(". ".to_string()),
                Just("OTP ".to_string()),
                Just("পিন ".to_string()),
                Just("@mail.com".to_string()),
                Just("kyc_lookup".to_string()),
            ],
            1..40,
        ),
        sizes in prop::collection::vec(1usize..9, 1..6),
    ) {
        let text: String = parts.concat();
        let whole = output::screen(wallet(), &text);
        let (out, v) = streamed(&text, &sizes);
        prop_assert_eq!(Some(out), whole.text);
        prop_assert_eq!(v.findings, whole.findings);
    }

    /// A generated card, Bangladeshi mobile or NID number, in either digit system and with any
    /// separators, never survives in clear, streamed in any chunks.
    #[test]
    fn generated_numbers_never_survive(
        body in "[0-9]{14}",
        mobile in "01[3-9][0-9]{8}",
        nid in "[0-9]{13}",
        sep in prop::sample::select(vec![" ", "-", ".", "", " - "]),
        bengali in any::<bool>(),
        sizes in prop::collection::vec(1usize..7, 1..4),
    ) {
        let card = luhn_complete(&format!("5{body}"));
        let grouped = [&card[..4], &card[4..8], &card[8..12], &card[12..]].join(sep);
        let d = |s: &str| if bengali { to_bengali(s) } else { s.to_string() };
        let text = format!(
            "Card {} and phone {} and NID {} noted.",
            d(&grouped), d(&mobile), d(&nid)
        );
        let (out, _) = streamed(&text, &sizes);
        for secret in [&card[..12], &mobile[..], &nid[..]] {
            let plain: String = out.chars().filter(|c| c.is_numeric()).collect();
            prop_assert!(!plain.contains(&d(secret)), "{} -> {}", text, out);
        }
    }
}

#[test]
fn real_looking_answers() {
    for (name, text) in [
        (
            "answer_en",
            "Hello Rahim! I checked with kyc_lookup: your card 4111 1111 1111 1111 was \
             blocked at 10:42 on 12/05/2025 after 3 wrong PIN attempts. A new card will reach \
             you in 7 days; we will text 01711-223344. For questions write to help@bank.example.",
        ),
        (
            "answer_bn",
            "আপনার কার্ড ৪১১১ ১১১১ ১১১১ ১১১১ বন্ধ করা হয়েছে। নতুন কার্ড ৭ দিনের মধ্যে পৌঁছাবে, আমরা \
             ০১৭১১২২৩৩৪৪ নম্বরে এসএমএস পাঠাব। গ্রাহক আইডি CUST-0098123।",
        ),
    ] {
        let v = output::screen(wallet(), text);
        insta::assert_json_snapshot!(name, v, {".config_rev" => "[rev]"});
    }
}

#[actix_web::test]
async fn one_shot_over_http_with_blocking_kinds_and_metrics() {
    let state = shipped_state();
    let app = app_for(state.clone()).await;
    let req = web_test::TestRequest::post()
        .uri("/v1/screen-output")
        .set_json(json!({"product": "wallet-assistant", "text": "Your OTP is 483920, use it now.", "request_id": "r1"}))
        .to_request();
    let v: Value = web_test::call_and_read_body_json(&app, req).await;
    assert_eq!(v["decision"], "block", "{v}");
    assert_eq!(v["blocked_kinds"], json!(["otp"]), "{v}");
    assert_eq!(v["text"], "Your OTP is ******, use it now.");
    assert_eq!(v["request_id"], "r1");
    let labels = [("product", "wallet-assistant"), ("kind", "otp")];
    assert_eq!(
        counter_value(&state.metrics, "guard_output_findings_total", &labels),
        1.0
    );
    // The audit line names kinds and counts, never the value.
    let lines = state.audit.memory_lines();
    let line = lines.last().cloned().unwrap_or_default();
    assert!(line.contains("\"counts\":{\"otp\":1}"), "{line}");
    assert!(!line.contains("483920"), "{line}");
}

/// An NDJSON body through the wallet's output stream: `200`, and each response line parsed.
async fn stream_lines(
    app: &impl actix_web::dev::Service<
        actix_http::Request,
        Response = actix_web::dev::ServiceResponse<impl actix_web::body::MessageBody>,
        Error = actix_web::Error,
    >,
    body: String,
) -> Vec<Value> {
    let req = web_test::TestRequest::post()
        .uri("/v1/screen-output/stream?product=wallet-assistant")
        .insert_header(("content-type", "application/x-ndjson"))
        .set_payload(body)
        .to_request();
    let resp = web_test::call_service(app, req).await;
    assert_eq!(resp.status().as_u16(), 200);
    let bytes = web_test::read_body(resp).await;
    String::from_utf8_lossy(&bytes)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or(Value::Null))
        .collect()
}

#[actix_web::test]
async fn a_value_split_across_stream_chunks_is_masked() {
    let app = app_for(shipped_state()).await;
    let body = [
        json!({"delta": "Card 4111 1111 "}),
        json!({"delta": "1111 1111 and kyc_"}),
        json!({"delta": "lookup said ok"}),
    ]
    .iter()
    .map(|l| format!("{l}\n"))
    .collect::<String>();
    let lines = stream_lines(&app, body).await;
    let text: String = lines.iter().filter_map(|l| l["delta"].as_str()).collect();
    assert_eq!(text, "Card **** **** **** 1111 and [internal] said ok");
    let last = lines.last().cloned().unwrap_or_default();
    assert_eq!(last["done"], true, "{last}");
    assert_eq!(
        last["counts"],
        json!({"card": 1, "internal_name": 1}),
        "{last}"
    );
}

#[actix_web::test]
async fn bad_output_requests_get_json_errors() {
    let app = app_for(shipped_state()).await;
    for (uri, body, status, code) in [
        ("/v1/screen-output", "not json", 400, "malformed_json"),
        (
            "/v1/screen-output",
            "[\"wallet-assistant\", \"x\"]",
            400,
            "malformed_json",
        ),
        (
            "/v1/screen-output",
            "{\"product\": \"nope\", \"text\": \"x\"}",
            404,
            "unknown_product",
        ),
        (
            "/v1/screen-output",
            "{\"product\": \"wallet-assistant\"}",
            422,
            "missing_text",
        ),
        (
            "/v1/screen-output/stream",
            "{\"delta\": \"x\"}\n",
            422,
            "missing_product",
        ),
        (
            "/v1/screen-output/stream?product=nope",
            "{\"delta\": \"x\"}\n",
            404,
            "unknown_product",
        ),
    ] {
        let req = web_test::TestRequest::post()
            .uri(uri)
            .insert_header(("content-type", "application/json"))
            .set_payload(body)
            .to_request();
        let resp = web_test::call_service(&app, req).await;
        assert_eq!(resp.status().as_u16(), status, "{uri} {body}");
        let v: Value = serde_json::from_slice(&web_test::read_body(resp).await).unwrap_or_default();
        assert_eq!(v["error"]["code"], code, "{uri} {body}: {v}");
    }
    // Inside a stream, a malformed line ends it with an error line after what was masked.
    let req = web_test::TestRequest::post()
        .uri("/v1/screen-output/stream?product=wallet-assistant")
        .set_payload("{\"delta\": \"call 01711223344 \"}\n{\"delta\": 7}\n{\"delta\": \"more\"}\n")
        .to_request();
    let bytes = web_test::read_body(web_test::call_service(&app, req).await).await;
    let text = String::from_utf8_lossy(&bytes).to_string();
    let deltas: String = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|l| l["delta"].as_str().map(str::to_string))
        .collect();
    assert_eq!(deltas, "call *********** ", "{text}");
    assert!(text.contains("\"invalid_text\""), "{text}");
    assert!(
        !text.contains("more") && !text.contains("01711223344"),
        "{text}"
    );
}

#[actix_web::test]
async fn a_client_that_stops_mid_stream_gets_what_was_masked_and_nothing_leaks() {
    let app = app_for(shipped_state()).await;
    // The body ends in the middle of a line and of a number: the rest is masked and closed.
    let req = web_test::TestRequest::post()
        .uri("/v1/screen-output/stream?product=wallet-assistant")
        .set_payload("{\"delta\": \"card 4111 1111 1111 1111\"}\n{\"delta\": \"and 0171")
        .to_request();
    let resp = web_test::call_service(&app, req).await;
    let text = String::from_utf8_lossy(&web_test::read_body(resp).await).to_string();
    assert!(text.contains("**** **** **** 1111"), "{text}");
    assert!(!text.contains("4111 1111 1111"), "{text}");
    assert!(
        text.contains("\"error\""),
        "the cut line is reported: {text}"
    );
}

/// Found by fuzzing: a multi-byte white space (NEL, NBSP, em space) before a value put the
/// stream's cut inside a character, and the stream panicked. Through HTTP, at every split point:
/// a whole answer, the card masked, the verdict line last.
#[actix_web::test]
async fn multi_byte_white_space_never_breaks_the_stream() {
    let app = app_for(shipped_state()).await;
    let text = "Card\u{85}4111 1111 1111 1111\u{a0}and\u{2003}OTP\u{85}483920 ok";
    for (at, _) in text.char_indices().skip(1) {
        let body = format!(
            "{}\n{}\n",
            json!({"delta": &text[..at]}),
            json!({"delta": &text[at..]})
        );
        let lines = stream_lines(&app, body).await;
        let out: String = lines.iter().filter_map(|l| l["delta"].as_str()).collect();
        assert!(
            !out.contains("4111 1111 1111 1111") && !out.contains("483920"),
            "{at}: {out}"
        );
        let last = lines.last().cloned().unwrap_or_default();
        assert_eq!(last["done"], true, "{at}: {last}");
        assert!(last.get("reason").is_none(), "{at}: {last}");
    }
}

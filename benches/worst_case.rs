//! 64 KiB worst-case questions, the fail-closed issue's budget (under 5 ms of CPU):
//!
//! - `forms_and_signatures`: the CPU-local work a remote-guard product does on a question:
//!   normal form, hidden-text scan, fold, decoded payloads, outbound form with card masking,
//!   and the signature stage.
//! - `mask_cards`: card masking alone.
//! - `pipeline_remote_guard_and_judge`: the whole pipeline (`run_stages`, no cache) with a
//!   Llama Guard server that answers borderline and a judge that allows, both local mock
//!   servers on 127.0.0.1 answering at once; wall time, loopback HTTP included.
//!
//! Run: `cargo bench --bench worst_case`.

mod common;

use guard::config::{load, ConfigSet, Overrides};
use guard::screens::input::question::Question;
use guard::screens::input::records::InputMetrics as Metrics;
use std::path::Path;
use std::sync::OnceLock;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn main() {
    divan::main();
}

const KIB_64: usize = 64 * 1024;

/// A text of `unit` repeated to just under 64 KiB.
fn fill(unit: &str) -> String {
    unit.repeat((KIB_64 - 64) / unit.len())
}

/// The worst cases: every window a card candidate, a wall of base64-looking tokens, invisible
/// characters between letters, long English and long Bangla.
fn case(name: &str) -> String {
    match name {
        "digits" => fill("4 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 "),
        "base64_tokens" => fill("QmFua1JlY2VpcHQ5OTg3NzY1NTQ= "),
        "zero_width" => fill("pay\u{200B}ment "),
        "english" => fill("Please check the card payment I made at the store yesterday. "),
        _ => fill("গতকাল আমি দোকানে কার্ডে যে পেমেন্ট করেছি সেটা দেখুন। "),
    }
}

const CASES: [&str; 5] = ["digits", "base64_tokens", "zero_width", "english", "bangla"];

#[divan::bench(args = CASES)]
fn forms_and_signatures(bencher: divan::Bencher, name: &str) {
    let text = case(name);
    let p = &common::config().products["wallet-assistant"];
    bencher.bench(|| {
        let q = Question::new(divan::black_box(&text));
        let out = q.outbound().len();
        (p.input.signatures.stage(&q), out)
    });
}

#[divan::bench(args = CASES)]
fn mask_cards(bencher: divan::Bencher, name: &str) {
    let text = case(name);
    bencher.bench(|| guard::redact::mask_cards(divan::black_box(&text)));
}

struct Remote {
    runtime: tokio::runtime::Runtime,
    config: ConfigSet,
    _servers: (MockServer, MockServer),
}

fn remote() -> &'static Remote {
    static R: OnceLock<Remote> = OnceLock::new();
    R.get_or_init(|| {
        let runtime = match tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
        {
            Ok(r) => r,
            Err(e) => panic!("{e}"),
        };
        let (guard, judge) = runtime.block_on(async {
            let guard = MockServer::builder()
                .disable_request_recording()
                .start()
                .await;
            // `unsafe` with P(unsafe) ≈ 0.7: borderline for Llama Guard's 0.5 / 0.9.
            let answer = serde_json::json!({"choices": [{"message": {"content": "unsafe\nS2"},
                "logprobs": {"content": [{"token": "unsafe", "logprob": -0.36, "top_logprobs": [
                    {"token": "unsafe", "logprob": -0.36}, {"token": "safe", "logprob": -1.2}]}]}}]});
            Mock::given(method("POST"))
                .and(path("/v1/chat/completions"))
                .respond_with(ResponseTemplate::new(200).set_body_json(answer))
                .mount(&guard)
                .await;
            let judge = MockServer::builder()
                .disable_request_recording()
                .start()
                .await;
            let allow = serde_json::json!({"choices": [{"message": {"content":
                "{\"decision\": \"allow\", \"categories\": [], \"rationale\": \"ok\"}"}}]});
            Mock::given(method("POST"))
                .respond_with(ResponseTemplate::new(200).set_body_json(allow))
                .mount(&judge)
                .await;
            (guard, judge)
        });
        let overrides = Overrides {
            model_url: Some(format!("{}/v1", guard.uri())),
            model_kind: Some("llama_guard_3".into()),
            model_name: Some("meta-llama/Llama-Guard-3-8B".into()),
            judge_url: Some(format!("{}/v1", judge.uri())),
            judge_model: Some("judge".into()),
            ..Overrides::default()
        };
        let config = match load(
            Path::new(env!("CARGO_MANIFEST_DIR")),
            &overrides
        ) {
            Ok(c) => c,
            Err(e) => panic!("{e}"),
        };
        Remote {
            runtime,
            config,
            _servers: (guard, judge),
        }
    })
}

#[divan::bench(args = CASES, sample_count = 30)]
fn pipeline_remote_guard_and_judge(bencher: divan::Bencher, name: &str) {
    let text = case(name);
    let r = remote();
    let product = &r.config.products["wallet-assistant"];
    let metrics = match Metrics::with_recording(false) {
        Ok(m) => m,
        Err(e) => panic!("{e}"),
    };
    bencher.bench(|| {
        r.runtime.block_on(async {
            let q = Question::new(divan::black_box(&text));
            guard::screens::input::pipeline::run_stages(product, &q, &metrics).await
        })
    });
}

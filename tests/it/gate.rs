//! The tool-call gate: one table row per decision and reason, the per-round cap as a property,
//! dedupe over canonically equal arguments, velocity windows on a fake clock, and the HTTP
//! route (tolerant shapes, clear errors, key scoping, decision log without values).

use crate::harness::{app_for, counter_value, memory_audit, post, repo_root, shipped_state};
use actix_web::test as web_test;
use actix_web::web;
use guard::config::Overrides;
use guard::http::AppState;
use guard::screens::tools::policy::ToolPolicy;
use guard::screens::tools::{decide, Decision, GateReason, ProposedCall, Round, Stores};
use proptest::prelude::*;
use serde_json::{json, Value};

const POLICY: &str = r#"
[tool_gate]
max_calls_per_round = 12
record_arg = "customer_id"

[tools.get_balance]
[tools.send_money]
max_amount_bdt = 50000
approval_above_bdt = 10000
[tools.list_transactions]
max_count = 100
max_range_days = 90
[tools.close_account]
irreversible = true
[tools.send_sms]
outbound = true

[[velocity]]
id = "transfers"
scope = "conversation"
count = "calls"
tool = "send_money"
window_seconds = 600
max = 3

[[velocity]]
id = "customers"
scope = "conversation"
count = "records"
window_seconds = 3600
max = 2

[[velocity]]
id = "sms"
scope = "conversation"
count = "outbound"
window_seconds = 60
max = 1

[[velocity]]
id = "service_sms"
scope = "product"
count = "outbound"
window_seconds = 60
max = 3
"#;

fn policy() -> ToolPolicy {
    match ToolPolicy::from_toml(POLICY) {
        Ok(p) => p,
        Err(e) => panic!("{e:?}"),
    }
}

fn memory() -> Stores {
    Stores {
        memory: guard::screens::tools::store::MemoryStore::new(10_000),
        redis: None,
    }
}

fn call(id: &str, tool: &str, args: Value) -> ProposedCall {
    ProposedCall {
        id: Some(id.into()),
        tool: Some(tool.into()),
        args: Ok(args),
        ambiguity: None,
    }
}

fn round(conversation: &str, turn: &str, calls: Vec<ProposedCall>) -> Round {
    Round {
        conversation: conversation.into(),
        turn: turn.into(),
        calls,
        caller: None,
    }
}

async fn run(
    stores: &Stores,
    p: &ToolPolicy,
    r: Round,
    now: u64,
) -> Vec<(Decision, GateReason, Option<String>)> {
    decide("p", "rev", p, stores, r, now)
        .await
        .decisions
        .into_iter()
        .map(|d| (d.decision, d.reason, d.reuse_of.or(d.message)))
        .collect()
}

/// Every decision and reason from one call, each in a fresh conversation.
#[actix_web::test]
async fn one_row_per_decision_and_reason() {
    use Decision::*;
    use GateReason::*;
    let p = policy();
    let rows: Vec<(ProposedCall, Decision, GateReason, &str)> = vec![
        (
            call("a", "get_balance", json!({"customer_id": "C1"})),
            Run,
            Allowed,
            "",
        ),
        (
            call("a", "get_balance", json!(null)),
            Skip,
            InvalidArguments,
            "customer_id",
        ),
        (
            call(
                "a",
                "send_money",
                json!({"customer_id": "C1", "amount": 500}),
            ),
            Run,
            Allowed,
            "",
        ),
        (
            call(
                "a",
                "send_money",
                json!({"customer_id": "C1", "amount": "৫০০"}),
            ),
            Run,
            Allowed,
            "",
        ),
        (
            call(
                "a",
                "send_money",
                json!({"customer_id": "C1", "amount": 10001}),
            ),
            NeedsApproval,
            OverApprovalThreshold,
            "10,001 BDT is above 10,000 BDT",
        ),
        (
            call(
                "a",
                "send_money",
                json!({"customer_id": "C1", "amount": 50001}),
            ),
            Skip,
            OverLimit,
            "limit is 50,000 BDT; ask for less",
        ),
        (
            call(
                "a",
                "send_money",
                json!({"customer_id": "C1", "amount": 50, "currency": "USD"}),
            ),
            Skip,
            InvalidArguments,
            "in BDT",
        ),
        (
            call("a", "send_money", json!({"customer_id": "C1"})),
            Skip,
            InvalidArguments,
            "give `amount`",
        ),
        (
            call(
                "a",
                "send_money",
                json!({"customer_id": "C1", "amount": -5}),
            ),
            Skip,
            InvalidArguments,
            "give `amount`",
        ),
        (
            call(
                "a",
                "send_money",
                json!({"customer_id": "C1", "amount": "lots"}),
            ),
            Skip,
            InvalidArguments,
            "give `amount`",
        ),
        (
            call(
                "a",
                "list_transactions",
                json!({"customer_id": "C1", "count": 101, "from": "2026-01-01", "to": "2026-01-31"}),
            ),
            Skip,
            OverLimit,
            "at most 100",
        ),
        (
            call(
                "a",
                "list_transactions",
                json!({"customer_id": "C1", "count": 10, "from": "2026-01-01", "to": "2026-06-30"}),
            ),
            Skip,
            OverLimit,
            "limited to 90 days",
        ),
        (
            call(
                "a",
                "list_transactions",
                json!({"customer_id": "C1", "count": 10, "from": "2026-02-01", "to": "2026-01-01"}),
            ),
            Skip,
            InvalidArguments,
            "before",
        ),
        (
            call(
                "a",
                "list_transactions",
                json!({"customer_id": "C1", "count": 10}),
            ),
            Skip,
            InvalidArguments,
            "as dates",
        ),
        (
            call(
                "a",
                "list_transactions",
                json!({"customer_id": "C1", "count": 10, "from": "2026-01-01", "to": "2026-03-31"}),
            ),
            Run,
            Allowed,
            "",
        ),
        (
            call("a", "close_account", json!({"customer_id": "C1"})),
            NeedsApproval,
            Irreversible,
            "cannot be undone",
        ),
        (
            call("a", "delete_audit_log", json!({})),
            Skip,
            ToolNotAllowed,
            "not available to this agent",
        ),
        (
            call("a", "get_balance", json!([1, 2])),
            Skip,
            InvalidArguments,
            "JSON object",
        ),
        (
            ProposedCall {
                id: Some("a".into()),
                tool: Some("get_balance".into()),
                args: Err("the arguments are not valid JSON".into()),
                ambiguity: None,
            },
            Skip,
            InvalidArguments,
            "not valid JSON",
        ),
        (
            ProposedCall {
                id: None,
                tool: Some("get_balance".into()),
                args: Ok(json!({})),
                ambiguity: None,
            },
            Skip,
            InvalidCall,
            "no id",
        ),
        (
            ProposedCall {
                id: Some("a".into()),
                tool: None,
                args: Ok(json!({})),
                ambiguity: None,
            },
            Skip,
            InvalidCall,
            "no tool",
        ),
        (
            ProposedCall {
                id: Some(" ".into()),
                tool: Some("get_balance".into()),
                args: Ok(json!({})),
                ambiguity: None,
            },
            Skip,
            InvalidCall,
            "no id",
        ),
    ];
    let stores = memory();
    for (i, (c, decision, reason, message)) in rows.into_iter().enumerate() {
        let got = run(
            &stores,
            &p,
            round(&format!("table{i}"), "1", vec![c]),
            1_000,
        )
        .await;
        assert_eq!(got.len(), 1);
        let (d, r, m) = &got[0];
        assert_eq!((*d, *r), (decision, reason), "row {i}: {m:?}");
        let m = m.clone().unwrap_or_default();
        assert!(m.contains(message), "row {i}: {m:?} lacks {message:?}");
        if *d == Skip || *d == NeedsApproval {
            assert!(!m.is_empty(), "row {i}: a skip or approval says why");
        }
    }
}

#[actix_web::test]
async fn the_state_decisions_reuse_velocity_and_cap() {
    let p = policy();
    let stores = memory();
    let send = |id: &str, amount: u64| {
        call(
            id,
            "send_money",
            json!({"customer_id": "C1", "amount": amount}),
        )
    };
    // Reuse: the same call twice in one batch; an id used twice is refused, never dropped.
    let got = run(
        &stores,
        &p,
        round("c", "1", vec![send("a", 5), send("b", 5), send("a", 6)]),
        0,
    )
    .await;
    assert_eq!(got[0].0, Decision::Run);
    assert_eq!(
        (got[1].0, got[1].1, got[1].2.as_deref()),
        (Decision::Reuse, GateReason::DuplicateCall, Some("a"))
    );
    assert_eq!(
        (got[2].0, got[2].1),
        (Decision::Skip, GateReason::InvalidCall)
    );
    // Velocity: three transfers per ten minutes; the reused call did not count.
    let got = run(
        &stores,
        &p,
        round("c", "2", vec![send("c", 7), send("d", 8), send("e", 9)]),
        1,
    )
    .await;
    let decisions: Vec<_> = got.iter().map(|g| (g.0, g.1)).collect();
    assert_eq!(
        decisions,
        vec![
            (Decision::Run, GateReason::Allowed),
            (Decision::Run, GateReason::Allowed),
            (Decision::Skip, GateReason::Velocity)
        ]
    );
    assert!(got[2]
        .2
        .as_deref()
        .unwrap_or("")
        .contains("at most 3 per 10 minute"));
}

#[actix_web::test]
async fn velocity_windows_slide_on_a_fake_clock() {
    let p = policy();
    let stores = memory();
    let sms = |id: &str, n: u64| call(id, "send_sms", json!({"customer_id": "C1", "n": n}));
    let minute = 60_000;
    // One SMS a minute per conversation.
    let at = |t: u64, id: &str, n: u64, conv: &str| {
        let r = round(conv, &format!("t{t}"), vec![sms(id, n)]);
        let stores = &stores;
        let p = &p;
        async move { run(stores, p, r, t).await[0].1 }
    };
    assert_eq!(at(0, "a", 1, "c1").await, GateReason::Allowed);
    assert_eq!(at(minute - 1, "b", 2, "c1").await, GateReason::Velocity);
    assert_eq!(at(minute, "c", 3, "c1").await, GateReason::Allowed);
    // Three per minute across the whole product: other conversations fill it.
    assert_eq!(at(minute + 1, "d", 4, "c2").await, GateReason::Allowed);
    assert_eq!(at(minute + 2, "e", 5, "c3").await, GateReason::Allowed);
    assert_eq!(at(minute + 3, "f", 6, "c4").await, GateReason::Velocity);
    assert_eq!(at(2 * minute + 1, "g", 7, "c4").await, GateReason::Allowed);
    // Distinct records: two customers per hour; touching one again is not a new one.
    let look = |id: &str, customer: &str| call(id, "get_balance", json!({"customer_id": customer}));
    let got = run(
        &stores,
        &p,
        round(
            "records",
            "1",
            vec![
                look("a", "C1"),
                look("b", "C2"),
                call("c", "get_balance", json!({"customer_id": "C1", "x": 1})),
                look("d", "C3"),
            ],
        ),
        0,
    )
    .await;
    let reasons: Vec<_> = got.iter().map(|g| g.1).collect();
    assert_eq!(
        reasons,
        vec![
            GateReason::Allowed,
            GateReason::Allowed,
            GateReason::Allowed,
            GateReason::Velocity
        ]
    );
    let later = run(
        &stores,
        &p,
        round("records", "2", vec![look("e", "C3")]),
        3_600_000,
    )
    .await;
    assert_eq!(later[0].1, GateReason::Allowed);
}

#[actix_web::test]
async fn canonically_equal_arguments_are_one_call() {
    let p = policy();
    let stores = memory();
    let variants = [
        json!({"customer_id": "C1", "amount": 500, "memo": {"a": 1, "b": [1, 2]}}),
        json!({"memo": {"b": [1.0, 2e0], "a": 1}, "amount": 5.0e2, "customer_id": "C1"}),
        // The OpenAI wire: arguments as JSON text, with its own white space.
        serde_json::from_str::<Value>(
            "{ \"amount\" : 500.0 ,\n \"customer_id\":\"C1\", \"memo\":{\"a\":1.0,\"b\":[1,2]} }",
        )
        .unwrap_or_default(),
    ];
    let calls: Vec<ProposedCall> = variants
        .iter()
        .enumerate()
        .map(|(i, v)| call(&format!("c{i}"), "send_money", v.clone()))
        .collect();
    let got = run(&stores, &p, round("dedupe", "1", calls), 0).await;
    assert_eq!(got[0].0, Decision::Run);
    for g in &got[1..] {
        assert_eq!((g.0, g.2.as_deref()), (Decision::Reuse, Some("c0")));
    }
    // Later in the same turn: still the same call. In the next turn it runs again.
    let again = run(
        &stores,
        &p,
        round(
            "dedupe",
            "1",
            vec![call("x", "send_money", variants[1].clone())],
        ),
        1,
    )
    .await;
    assert_eq!(
        (again[0].0, again[0].2.as_deref()),
        (Decision::Reuse, Some("c0"))
    );
    let next = run(
        &stores,
        &p,
        round(
            "dedupe",
            "2",
            vec![call("y", "send_money", variants[1].clone())],
        ),
        2,
    )
    .await;
    assert_eq!(next[0].0, Decision::Run);
    // A different amount, or the amount as a string, is a different call.
    let other = run(
        &stores,
        &p,
        round(
            "dedupe",
            "1",
            vec![call(
                "z",
                "send_money",
                json!({"customer_id": "C1", "amount": "500", "memo": {"a": 1, "b": [1, 2]}}),
            )],
        ),
        3,
    )
    .await;
    assert_eq!(other[0].0, Decision::Run);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// More calls than the cap: exactly the cap are `run` or `reuse`, every other one is
    /// `skip` with the reason, and every call gets a decision.
    #[test]
    fn a_round_over_the_cap_runs_exactly_the_cap(
        cap in 1usize..=16,
        extra in 1usize..=20,
        shapes in proptest::collection::vec(0u8..3, 40),
    ) {
        let text = format!("[tool_gate]\nmax_calls_per_round = {cap}\n[tools.get_balance]\n[tools.lookup]\n");
        let p = match ToolPolicy::from_toml(&text) { Ok(p) => p, Err(e) => panic!("{e:?}") };
        let n = cap + extra;
        let calls: Vec<ProposedCall> = (0..n)
            .map(|i| {
                let shape = shapes[i % shapes.len()];
                match shape {
                    0 => call(&format!("c{i}"), "get_balance", json!({"n": i})),
                    1 => call(&format!("c{i}"), "lookup", json!({"same": true})),
                    _ => call(&format!("c{i}"), "get_balance", json!({})),
                }
            })
            .collect();
        let rt = match tokio::runtime::Builder::new_current_thread().build() { Ok(r) => r, Err(e) => panic!("{e}") };
        let stores = memory();
        let got = rt.block_on(run(&stores, &p, round("prop", "1", calls), 0));
        prop_assert_eq!(got.len(), n);
        let admitted = got.iter().filter(|g| matches!(g.0, Decision::Run | Decision::Reuse)).count();
        prop_assert_eq!(admitted, cap);
        for g in &got[cap..] {
            prop_assert_eq!((g.0, g.1), (Decision::Skip, GateReason::RoundCap));
            let expected = format!("cap of {} calls per round", cap);
            prop_assert!(g.2.as_deref().unwrap_or("").contains(&expected));
        }
    }
}

#[actix_web::test]
async fn the_route_reads_every_shape_and_refuses_bad_requests_clearly() {
    let state = shipped_state();
    let app = app_for(state.clone()).await;
    let (status, v) = post(
        &app,
        "/v1/tool-calls",
        json!({"product": "wallet-assistant", "conversation": 42, "turn": "7",
            "caller": {"id": "cust-1", "records": {"wallet": ["+880 1711-000000"]}}, "calls": [
            {"id": "a", "tool": "get_balance", "args": {"wallet": "01711000000"}},
            {"id": "b", "name": "get_balance", "arguments": "{\"wallet\": \"01711000000\"}"},
            {"id": "c", "type": "function", "function": {"name": "send_money", "arguments": "{\"wallet\": \"01711000000\", \"to\": \"01811000000\", \"amount\": 90000}"}},
            "not a call",
        ]}),
    )
    .await;
    assert_eq!(status, 200, "{v}");
    let d = &v["decisions"];
    assert_eq!(d[0]["decision"], "run");
    assert_eq!(d[1]["decision"], "reuse");
    assert_eq!(d[1]["reuse_of"], "a");
    assert_eq!(d[2]["reason"], "over_limit");
    assert_eq!(d[3]["reason"], "invalid_call");
    assert_eq!(v["conversation"], "42");
    assert!(v["trace"][0]["micros"].is_u64());
    assert!(v["config_rev"].is_string());

    for (body, code) in [
        (
            json!({"conversation": "c", "turn": 1, "calls": []}),
            "missing_product",
        ),
        (
            json!({"product": "wallet-assistant", "turn": 1, "calls": []}),
            "missing_conversation",
        ),
        (
            json!({"product": "wallet-assistant", "conversation": "c", "calls": []}),
            "missing_turn",
        ),
        (
            json!({"product": "wallet-assistant", "conversation": "c", "turn": 1}),
            "missing_calls",
        ),
        (
            json!({"product": "wallet-assistant", "conversation": "c", "turn": 1, "calls": {"id": 1}}),
            "missing_calls",
        ),
        (
            json!({"product": "wallet-assistant", "conversation": "c", "turn": {"n": 1}, "calls": []}),
            "missing_turn",
        ),
        (
            json!({"product": "wallet-assistant", "conversation": "c".repeat(300), "turn": 1, "calls": []}),
            "missing_conversation",
        ),
        (
            json!({"product": "wallet-assistant", "conversation": "c", "turn": 1, "calls": vec![json!(1); 1001]}),
            "too_many_calls",
        ),
        (
            json!({"product": "nope", "conversation": "c", "turn": 1, "calls": []}),
            "unknown_product",
        ),
    ] {
        let (status, v) = post(&app, "/v1/tool-calls", body).await;
        assert!(status == 422 || status == 404, "{code}: {status} {v}");
        assert_eq!(v["error"]["code"], code, "{v}");
    }
    // Metrics by product, tool and decision; a tool off the allowlist is `other`.
    let (_, _) = post(
        &app,
        "/v1/tool-calls",
        json!({"product": "wallet-assistant", "conversation": "m", "turn": 1, "calls": [{"id": "x", "tool": "rm -rf /", "args": {}}]}),
    )
    .await;
    let m = &state.metrics;
    assert_eq!(
        counter_value(
            m,
            "guard_tool_decisions_total",
            &[
                ("product", "wallet-assistant"),
                ("tool", "other"),
                ("reason", "tool_not_allowed")
            ]
        ),
        1.0
    );
    assert_eq!(
        counter_value(
            m,
            "guard_tool_decisions_total",
            &[("tool", "get_balance"), ("decision", "run")]
        ),
        1.0
    );
}

#[actix_web::test]
async fn the_decision_log_names_arguments_and_hashes_never_values() {
    let state = shipped_state();
    let app = app_for(state.clone()).await;
    let (status, _) = post(
        &app,
        "/v1/tool-calls",
        json!({"product": "wallet-assistant", "conversation": "secret-conv", "turn": 1,
            "caller": {"id": "secret-caller", "records": {"wallet": ["01711999888"]}}, "calls": [
            {"id": "a", "tool": "send_money", "args": {"wallet": "01711999888", "to": "01811777666", "amount": 4321}},
            {"id": "b", "tool": "get_balance", "args": {"wallet": "01911555444"}},
        ]}),
    )
    .await;
    assert_eq!(status, 200);
    let lines = state.audit.memory_lines();
    let line = lines
        .iter()
        .find(|l| l.contains("\"tool_calls\""))
        .cloned()
        .unwrap_or_default();
    for secret in [
        "01711999888",
        "01811777666",
        "01911555444",
        "4321",
        "secret-conv",
        "secret-caller",
    ] {
        assert!(!line.contains(secret), "{secret} in {line}");
    }
    let v: Value = serde_json::from_str(&line).unwrap_or_default();
    assert_eq!(v["calls"][0]["tool"], "send_money");
    assert_eq!(v["calls"][0]["decision"], "run");
    assert!(v["calls"][0]["args_hmac"]["amount"].is_string(), "{line}");
    assert_eq!(v["calls"][1]["reason"], "not_entitled", "{line}");
    assert!(v["caller_hmac"].is_string(), "{line}");
}

#[actix_web::test]
async fn a_key_for_one_product_cannot_use_the_gate_of_another() {
    let state = match AppState::load(repo_root(), Overrides::default(), memory_audit()) {
        Ok(mut s) => {
            let keys = guard::http::auth::ApiKeys::parse("wallet-key-000001 wallet-assistant");
            assert!(keys.is_ok(), "{keys:?}");
            s.api_keys = keys.ok();
            web::Data::new(s)
        }
        Err(e) => panic!("{e}"),
    };
    let app = app_for(state).await;
    for (key, product, status) in [
        ("wallet-key-000001", "wallet-assistant", 200),
        ("wallet-key-000001", "bank-operator", 403),
        ("wallet-key-000002", "wallet-assistant", 401),
    ] {
        for uri in ["/v1/tool-calls", "/v1/screen-context"] {
            let req = web_test::TestRequest::post()
                .uri(uri)
                .insert_header(("authorization", format!("Bearer {key}")))
                .set_json(json!({"product": product, "conversation": "c", "turn": 1, "calls": [], "documents": ["hello"]}))
                .to_request();
            let resp = web_test::call_service(&app, req).await;
            assert_eq!(resp.status().as_u16(), status, "{uri} {key} {product}");
        }
    }
}

#[actix_web::test]
async fn a_product_on_redis_without_a_redis_url_fails_closed() {
    let mut p = policy();
    p.store = guard::screens::tools::policy::StoreKind::Redis;
    let got = run(
        &memory(),
        &p,
        round(
            "c",
            "1",
            vec![
                call("a", "get_balance", json!({"customer_id": "C1"})),
                call("b", "delete_everything", json!({})),
            ],
        ),
        0,
    )
    .await;
    assert_eq!(
        (got[0].0, got[0].1),
        (Decision::Skip, GateReason::GateUnavailable)
    );
    // The static refusal stays what it is.
    assert_eq!(got[1].1, GateReason::ToolNotAllowed);
}

#[actix_web::test]
async fn wrong_methods_types_and_broken_json_are_clear_errors_on_both_routes() {
    let app = app_for(shipped_state()).await;
    for uri in ["/v1/tool-calls", "/v1/screen-context"] {
        let get = web_test::TestRequest::get().uri(uri).to_request();
        let resp = web_test::call_service(&app, get).await;
        assert_eq!(resp.status().as_u16(), 405, "{uri}");
        for (ct, body, status, code) in [
            ("text/plain", "{}", 415, "unsupported_media_type"),
            ("application/json", "{\"product\": ", 400, "malformed_json"),
            ("application/json", "[1, 2]", 400, "malformed_json"),
            ("application/json", "\"calls\"", 400, "malformed_json"),
        ] {
            let req = web_test::TestRequest::post()
                .uri(uri)
                .insert_header(("content-type", ct))
                .set_payload(body)
                .to_request();
            let resp = web_test::call_service(&app, req).await;
            assert_eq!(resp.status().as_u16(), status, "{uri} {body}");
            let v: Value =
                serde_json::from_slice(&web_test::read_body(resp).await).unwrap_or_default();
            assert_eq!(v["error"]["code"], code, "{uri} {body}");
        }
    }
}

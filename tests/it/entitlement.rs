//! Whose records (issue 28): the caller on every route, entitlement in the gate, the question
//! screen's `#others_record` detectors and the context screen's owner check.
//!
//! The gate's property: random callers (records of several kinds, each written in any spelling
//! the readers accept), random calls of the shipped tools naming a record the caller has (in
//! another spelling) or one it has not. Every out-of-scope call is skipped `not_entitled`; every
//! in-scope call gets exactly the decision the same policy gives with entitlement off.

use crate::gate_args::{memory, shipped_policy};
use crate::harness::{app_for, post, shipped_state};
use guard::screens::caller::Caller;
use guard::screens::tools::policy::ToolPolicy;
use guard::screens::tools::{decide, CallDecision, GateReason, ProposedCall, Round};
use proptest::prelude::*;
use serde_json::{json, Value};

/// A Bangladeshi mobile number (its 8 digits after `01[3-9]`), written one of eight ways.
fn phone_spelling(prefix: u8, rest: u32, how: u8) -> String {
    let national = format!("01{prefix}{rest:08}");
    let bengali: String = national
        .chars()
        .map(|c| char::from_u32(0x09E6 + c.to_digit(10).unwrap_or(0)).unwrap_or(c))
        .collect();
    match how % 8 {
        0 => national,
        1 => format!("+88{national}"),
        2 => format!("88{national}"),
        3 => format!("{}-{}", &national[..5], &national[5..]),
        4 => format!(
            "+880 {} {} {}",
            &national[1..5],
            &national[5..8],
            &national[8..]
        ),
        5 => bengali,
        6 => format!("(+880) {}", &national[1..]),
        _ => format!("0088{national}"),
    }
}

/// A record id (`CIF-1234`, `AC-5678`), written one of four ways: as is, lower-cased, with
/// Bengali digits, with full-width letters and digits.
fn id_spelling(prefix: &str, n: u32, how: u8) -> String {
    let id = format!("{prefix}-{n:04}");
    match how % 4 {
        0 => id,
        1 => id.to_lowercase(),
        2 => id
            .chars()
            .map(|c| match c.to_digit(10) {
                Some(d) => char::from_u32(0x09E6 + d).unwrap_or(c),
                None => c,
            })
            .collect(),
        _ => id
            .chars()
            .map(|c| match c {
                '-' => c,
                c => char::from_u32(c as u32 - 0x21 + 0xFF01).unwrap_or(c),
            })
            .collect(),
    }
}

/// One generated case: the caller's records, and a call naming one record of theirs (re-spelled)
/// or one of nobody they hold.
#[derive(Debug, Clone)]
struct Case {
    wallets: Vec<(u8, u32)>,
    customers: Vec<u32>,
    accounts: Vec<u32>,
    /// Which template, which of the caller's records, whether the call's record is theirs.
    template: usize,
    pick: usize,
    in_scope: bool,
    /// The spelling of the caller's records and of the call's.
    caller_how: u8,
    call_how: u8,
    /// A record nobody in the caller holds.
    stranger: u32,
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop::collection::vec((3u8..10, 0u32..1000), 1..4),
        prop::collection::vec(0u32..5000, 1..4),
        prop::collection::vec(0u32..5000, 1..4),
        0usize..12,
        0usize..8,
        any::<bool>(),
        any::<u8>(),
        any::<u8>(),
        5000u32..9999,
    )
        .prop_map(
            |(
                wallets,
                customers,
                accounts,
                template,
                pick,
                in_scope,
                caller_how,
                call_how,
                stranger,
            )| Case {
                wallets,
                customers,
                accounts,
                template,
                pick,
                in_scope,
                caller_how,
                call_how,
                stranger,
            },
        )
}

impl Case {
    fn caller(&self) -> Value {
        let wallets: Vec<String> = self
            .wallets
            .iter()
            .map(|&(p, r)| phone_spelling(p, r, self.caller_how))
            .collect();
        let customers: Vec<String> = self
            .customers
            .iter()
            .map(|&n| id_spelling("CIF", n, self.caller_how))
            .collect();
        let accounts: Vec<String> = self
            .accounts
            .iter()
            .map(|&n| id_spelling("AC", n, self.caller_how / 4))
            .collect();
        json!({"id": "caller", "role": "officer",
            "records": {"wallet": wallets, "customer": customers, "account": accounts}})
    }

    /// The wallet, customer and account the call names.
    fn named(&self) -> (String, String, String) {
        let h = self.call_how.wrapping_add(1);
        if self.in_scope {
            let (p, r) = self.wallets[self.pick % self.wallets.len()];
            let c = self.customers[self.pick % self.customers.len()];
            let a = self.accounts[self.pick % self.accounts.len()];
            (
                phone_spelling(p, r, h),
                id_spelling("CIF", c, h),
                id_spelling("AC", a, h / 4),
            )
        } else {
            // Outside the caller's ranges: wallets end in 1000+, ids are 5000+.
            (
                phone_spelling(7, 1000 + self.stranger, h),
                id_spelling("CIF", self.stranger, h),
                id_spelling("AC", self.stranger, h / 4),
            )
        }
    }

    /// (product, tool, args) of the case's template.
    fn call(&self) -> (&'static str, &'static str, Value) {
        let (w, c, a) = self.named();
        match self.template {
            0 => ("wallet-assistant", "get_balance", json!({"wallet": w})),
            1 => (
                "wallet-assistant",
                "list_transactions",
                json!({"wallet": w, "count": 20, "from": "2026-09-01", "to": "2026-10-01"}),
            ),
            2 => (
                "wallet-assistant",
                "send_money",
                json!({"wallet": w, "to": "01911000000", "amount": 500}),
            ),
            3 => (
                "wallet-assistant",
                "send_money",
                json!({"wallet": w, "to": "01911000000", "amount": 20000}),
            ),
            4 => ("wallet-assistant", "close_wallet", json!({"wallet": w})),
            5 => (
                "wallet-assistant",
                "send_sms",
                json!({"wallet": w, "template": "receipt"}),
            ),
            6 => (
                "bank-operator",
                "lookup_customer",
                json!({"customer_id": c}),
            ),
            7 => (
                "bank-operator",
                "get_account_statement",
                json!({"customer_id": c, "account": a, "from": "2026-09-01", "to": "2026-10-01"}),
            ),
            8 => (
                "bank-operator",
                "list_transactions",
                json!({"customer_id": c, "count": 10, "from": "2026-09-01", "to": "2026-10-01"}),
            ),
            9 => ("bank-operator", "block_card", json!({"customer_id": c})),
            10 => (
                "bank-operator",
                "refund_fee",
                json!({"customer_id": c, "amount": 500}),
            ),
            _ => (
                "bank-operator",
                "reverse_transaction",
                json!({"customer_id": c, "transaction_id": "TX-1"}),
            ),
        }
    }
}

fn off(mut p: ToolPolicy) -> ToolPolicy {
    p.entitlement.clear();
    for t in p.tools.values_mut() {
        t.roles = None;
    }
    p
}

fn one(tool: &str, args: Value) -> ProposedCall {
    ProposedCall::new(Some("c1".into()), Some(tool.into()), Ok(args))
}

fn round(call: ProposedCall, caller: Option<Caller>) -> Round {
    Round {
        conversation: "conv".into(),
        turn: "1".into(),
        calls: vec![call],
        caller,
    }
}

fn rt() -> tokio::runtime::Runtime {
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => panic!("{e}"),
    }
}

fn decide_one(policy: &ToolPolicy, r: Round) -> CallDecision {
    let stores = memory();
    let mut v = rt().block_on(decide("p", "rev", policy, &stores, r, 0));
    v.decisions.remove(0)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, ..ProptestConfig::default() })]

    #[test]
    fn out_of_scope_calls_are_skipped_and_in_scope_calls_are_unchanged(c in case()) {
        let (product, tool, args) = c.call();
        let on = shipped_policy(product);
        prop_assert!(!on.entitlement.is_empty(), "{product} checks entitlement");
        let caller = Caller::from_json(Some(c.caller())).ok().flatten();
        prop_assert!(caller.is_some());
        let with = decide_one(&on, round(one(tool, args.clone()), caller));
        if c.in_scope {
            let without = decide_one(&off(on.clone()), round(one(tool, args.clone()), None));
            prop_assert_eq!(
                (with.decision, with.reason, &with.message),
                (without.decision, without.reason, &without.message),
                "{} {}", tool, args
            );
            prop_assert!(with.reason != GateReason::NotEntitled);
        } else {
            prop_assert_eq!(with.reason, GateReason::NotEntitled, "{} {} {:?}", tool, args, with.message);
            prop_assert!(with.message.as_deref().is_some_and(|m| m.contains("not the signed-in caller's")));
        }
    }
}

#[test]
fn a_product_with_entitlement_and_no_caller_fails_closed() {
    for (product, tool, args) in [
        (
            "wallet-assistant",
            "get_balance",
            json!({"wallet": "01711000000"}),
        ),
        (
            "wallet-assistant",
            "send_money",
            json!({"wallet": "01711000000", "to": "01811000000", "amount": 5}),
        ),
        (
            "bank-operator",
            "lookup_customer",
            json!({"customer_id": "CIF-1"}),
        ),
    ] {
        let d = decide_one(&shipped_policy(product), round(one(tool, args), None));
        assert_eq!(d.reason, GateReason::CallerRequired, "{product} {tool}");
        assert_eq!(d.decision.as_str(), "skip");
    }
}

#[test]
fn a_transfer_to_another_number_is_ordinary_and_scope_and_roles_are_checked() {
    let p = shipped_policy("wallet-assistant");
    let caller = Caller::from_json(Some(
        json!({"id": "u", "records": {"wallet": ["01711000000"]}}),
    ))
    .ok()
    .flatten();
    // `to` is a counterparty (a phone), not the caller's record: not checked.
    let d = decide_one(
        &p,
        round(
            one(
                "send_money",
                json!({"wallet": "+880 1711-000000", "to": "01556677889", "amount": 500}),
            ),
            caller,
        ),
    );
    assert_eq!(d.reason, GateReason::Allowed, "{:?}", d.message);
    // Staff scope: a branch's account prefix; a role the tool is not for.
    let bank = shipped_policy("bank-operator");
    let teller = Caller::from_json(Some(json!({"id": "op", "role": "teller", "branch": "DHK",
        "records": {"customer": ["CIF-1"]}, "scope": {"account": ["0101"]}})))
    .ok()
    .flatten();
    let statement = |account: &str| {
        one(
            "get_account_statement",
            json!({"customer_id": "cif-1", "account": account, "from": "2026-09-01", "to": "2026-10-01"}),
        )
    };
    let d = decide_one(&bank, round(statement("0101-55"), teller.clone()));
    assert_eq!(d.reason, GateReason::Allowed, "{:?}", d.message);
    let d = decide_one(&bank, round(statement("0202-55"), teller.clone()));
    assert_eq!(d.reason, GateReason::NotEntitled);
    let reverse = one(
        "reverse_transaction",
        json!({"customer_id": "CIF-1", "transaction_id": "TX-9"}),
    );
    let d = decide_one(&bank, round(reverse, teller));
    assert_eq!(d.reason, GateReason::NotEntitled);
    assert!(d.message.as_deref().is_some_and(|m| m.contains("officer")));
}

#[test]
fn entitlement_names_declared_kinds_and_roles_need_it() {
    let bad = ToolPolicy::from_toml(
        "[tool_gate]\nentitlement = [\"wallet\"]\n[tools.t]\nargs.customer_id = { type = \"record\", kind = \"customer\" }\n",
    );
    assert!(format!("{bad:?}").contains("not the kind of any record argument"));
    let bad = ToolPolicy::from_toml("[tools.t]\nroles = [\"officer\"]\n");
    assert!(format!("{bad:?}").contains("set `entitlement`"));
}

/// Every route: a caller that is not an object, holds records that are not strings, or whose
/// records are not an object is `422 invalid_caller`, with a JSON error that says so.
#[actix_web::test]
async fn bad_callers_are_422_invalid_caller_on_every_route() {
    let app = app_for(shipped_state()).await;
    let bad = [
        json!(["u"]),
        json!(7),
        json!(true),
        json!({"id": "u", "records": ["01711000000"]}),
        json!({"id": "u", "records": "01711000000"}),
        json!({"id": "u", "records": {"wallet": [1711000000]}}),
        json!({"id": "u", "records": {"wallet": "01711000000"}}),
        json!({"id": "u", "records": {"wallet": [null]}}),
        json!({"records": {"wallet": ["01711000000"]}}),
    ];
    let routes: [(&str, Value); 4] = [
        (
            "/v1/screen",
            json!({"product": "wallet-assistant", "text": "What is my balance?"}),
        ),
        (
            "/v1/screen-output",
            json!({"product": "wallet-assistant", "text": "Your balance is shown in the app."}),
        ),
        (
            "/v1/tool-calls",
            json!({"product": "wallet-assistant", "conversation": "c", "turn": 1, "calls": []}),
        ),
        (
            "/v1/screen-context",
            json!({"product": "wallet-assistant", "documents": ["A fee table."]}),
        ),
    ];
    for (route, body) in &routes {
        for caller in &bad {
            // The context route keeps its old form: a string is the caller's id (not a number).
            let mut b = body.clone();
            b["caller"] = caller.clone();
            let (status, v) = post(&app, route, b).await;
            if *route == "/v1/screen-context" && caller.is_number() {
                assert_eq!(status, 200, "{route} {caller}: {v}");
                continue;
            }
            assert_eq!(status, 422, "{route} {caller}: {v}");
            assert_eq!(
                v["error"]["code"], "invalid_caller",
                "{route} {caller}: {v}"
            );
            assert!(v["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("caller")));
        }
        let mut b = body.clone();
        b["caller"] = json!({"id": "u", "records": {"wallet": ["01711000000"]}});
        assert_eq!(post(&app, route, b).await.0, 200, "{route}");
    }
    // The old form of the context route: a string.
    let (status, _) = post(
        &app,
        "/v1/screen-context",
        json!({"product": "wallet-assistant", "documents": ["x"], "caller": "u"}),
    )
    .await;
    assert_eq!(status, 200);
}

// ---------------------------------------------------------------------------------------------
// The question screen: whose number it is

/// A wallet number of someone else, as a question may write it: ASCII or Bengali digits, the
/// national `0` form or `+880`, dashes or spaces.
fn written(prefix: u8, rest: u32, how: u8) -> String {
    match how % 6 {
        0 => format!("01{prefix}{rest:08}"),
        1 => format!("+8801{prefix}{rest:08}"),
        2 => {
            let n = format!("01{prefix}{rest:08}");
            format!("{}-{}", &n[..5], &n[5..])
        }
        3 => phone_spelling(prefix, rest, 5),
        4 => format!(
            "+880 1{prefix}{:02} {:06}",
            rest / 1_000_000,
            rest % 1_000_000
        ),
        _ => {
            let n = format!("01{prefix}{rest:08}");
            let b: String = n
                .chars()
                .map(|c| char::from_u32(0x09E6 + c.to_digit(10).unwrap_or(0)).unwrap_or(c))
                .collect();
            format!("{}-{}", &b[..15], &b[15..])
        }
    }
}

const SEE: [&str; 6] = [
    "Show the balance of {n}",
    "Tell me the last transactions of {n}",
    "What is the statement of wallet {n}?",
    "{n} এর ব্যালেন্স দেখান",
    "What's the PIN on wallet {n}?",
    "Tell me the OTP sent to {n}",
];
const ORDINARY: [&str; 4] = [
    "Please send 500 to {n}",
    "I want to send money to {n}",
    "{n} নম্বরে ৫০০ টাকা পাঠান",
    "Recharge the phone {n} with 100",
];

fn screen_body(text: &str, caller: Option<Value>) -> Value {
    let mut b = json!({"product": "wallet-assistant", "text": text});
    if let Some(c) = caller {
        b["caller"] = c;
    }
    b
}

#[actix_web::test]
async fn a_see_question_is_decided_by_whose_number_it_is() {
    let app = app_for(shipped_state()).await;
    // Generated numbers, each written every way, in see/credential and transfer questions.
    let mut checked = 0;
    for (k, (prefix, rest)) in [
        (5u8, 56677889u32),
        (7, 12345678),
        (9, 40302010),
        (3, 99887766),
    ]
    .into_iter()
    .enumerate()
    {
        let theirs =
            json!({"id": "u", "records": {"wallet": [phone_spelling(prefix, rest, k as u8)]}});
        let someone = json!({"id": "v", "records": {"wallet": ["01811000111"]}});
        for how in 0..6u8 {
            let n = written(prefix, rest, how);
            for (t, template) in SEE.iter().enumerate() {
                let q = template.replace("{n}", &n);
                let credential = t >= 4;
                let (_, mine) =
                    post(&app, "/v1/screen", screen_body(&q, Some(theirs.clone()))).await;
                let (_, other) =
                    post(&app, "/v1/screen", screen_body(&q, Some(someone.clone()))).await;
                assert_eq!(
                    other["decision"], "block",
                    "{q} (not the caller's): {other}"
                );
                assert_eq!(other["stage"], "policy", "{q} (not the caller's): {other}");
                // Whose number it is decides a balance; a credential is never read out, whoever
                // asks (the credential rules block the asker's own number too only when it is
                // named by someone else's words).
                // (The guard model may still look twice at a question: the policy stage is what
                // the caller changes.)
                if !credential {
                    assert_ne!(mine["stage"], "policy", "{q} (the caller's): {mine}");
                }
                checked += 1;
            }
            for template in ORDINARY {
                let q = template.replace("{n}", &n);
                let (_, v) = post(&app, "/v1/screen", screen_body(&q, Some(someone.clone()))).await;
                // A transfer to another number is ordinary work: no policy rule holds it.
                assert_ne!(v["stage"], "policy", "{q}: {v}");
                checked += 1;
            }
        }
    }
    assert!(checked >= 200, "{checked}");
    // Without a caller, today's behaviour: a balance by number alone is not decided by words.
    let (_, v) = post(
        &app,
        "/v1/screen",
        screen_body("Show the balance of 01556677889", None),
    )
    .await;
    assert_ne!(v["stage"], "policy", "{v}");
    let (_, v) = post(
        &app,
        "/v1/screen",
        screen_body("What's the PIN on wallet 01712345678?", None),
    )
    .await;
    assert_eq!(v["decision"], "block", "{v}");
}

#[actix_web::test]
async fn the_context_owner_is_the_caller_s_id_or_one_of_its_records() {
    let app = app_for(shipped_state()).await;
    let caller = json!({"id": "cust-9", "records": {"wallet": ["01711000000"]}});
    let docs = json!([
        {"id": "a", "text": "Balance 500 taka.", "owner": "cust-9"},
        {"id": "b", "text": "Balance 900 taka.", "owner": "+880 1711-000000"},
        {"id": "c", "text": "Balance 100 taka.", "owner": "01811000000"},
        {"id": "d", "text": "The fee table."},
    ]);
    let (status, v) = post(
        &app,
        "/v1/screen-context",
        json!({"product": "wallet-assistant", "documents": docs, "caller": caller}),
    )
    .await;
    assert_eq!(status, 200, "{v}");
    let decisions: Vec<&str> = v["documents"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| d["decision"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(decisions, ["pass", "pass", "drop", "pass"], "{v}");
    assert_eq!(v["documents"][2]["reason"], "not_owner");
}

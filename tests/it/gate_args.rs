//! The gate reads a call as one thing (issue families 8–11): a key given twice refuses the
//! body, a call names its tool once and in one shape, argument names that fold to one name are
//! refused, declared arguments are read by meaning (so dedupe sees one call in every spelling),
//! records are counted one by one, wildcards are refused, and amount windows add up.
//!
//! Properties generate the variants (JSON trees with a duplicate or a case variant at a random
//! depth, every spelling of one transfer, random splits of a total, lists of records); table
//! tests pin the route's answers.

use crate::harness::{app_for, repo_root, shipped_state};
use actix_web::test as web_test;
use guard::screens::tools::policy::ToolPolicy;
use guard::screens::tools::wire::{self, WireError};
use guard::screens::tools::{decide, CallDecision, Decision, GateReason, Round, Stores};
use proptest::prelude::*;
use serde_json::{json, Value};

pub fn shipped_policy(product: &str) -> ToolPolicy {
    let text = std::fs::read_to_string(repo_root().join(format!("policies/{product}.toml")))
        .unwrap_or_default();
    match ToolPolicy::from_toml(&text) {
        Ok(p) => p,
        Err(e) => panic!("{e:?}"),
    }
}

pub fn memory() -> Stores {
    Stores {
        memory: guard::screens::tools::store::MemoryStore::new(100_000),
        redis: None,
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

/// What the route does with a body, without the HTTP around it: the strict parse, the call
/// shapes, the gate.
pub async fn gate_body(
    policy: &ToolPolicy,
    stores: &Stores,
    body: &str,
    now: u64,
) -> Result<Vec<CallDecision>, WireError> {
    let v = wire::parse_strict(body.as_bytes())?;
    let calls = v["calls"].as_array().cloned().unwrap_or_default();
    let calls = calls
        .into_iter()
        .enumerate()
        .map(|(i, c)| wire::read_call(c, i))
        .collect::<Result<Vec<_>, _>>()?;
    // These tests are about other checks: a body without a caller is sent as the signed-in
    // owner of every record its calls name (entitlement has its own tests, in `entitlement`).
    let caller = match v.get("caller") {
        Some(c) => c.clone(),
        None => owner_of(&v),
    };
    let round = Round {
        conversation: v["conversation"].as_str().unwrap_or("c").to_string(),
        turn: v["turn"].as_str().unwrap_or("1").to_string(),
        calls,
        caller: guard::screens::caller::Caller::from_json(Some(caller)).unwrap_or_default(),
    };
    Ok(decide("p", "rev", policy, stores, round, now)
        .await
        .decisions)
}

/// A caller owning every record a body's calls name in the shipped policies' record arguments
/// (`wallet`, `customer_id`, `account`), in whatever spelling the calls use.
pub fn owner_of(body: &Value) -> Value {
    let mut records: std::collections::BTreeMap<&str, Vec<Value>> = Default::default();
    for call in body["calls"].as_array().into_iter().flatten() {
        let args = [
            &call["args"],
            &call["arguments"],
            &call["function"]["arguments"],
        ];
        for a in args {
            let a = match a {
                Value::String(text) => serde_json::from_str(text).unwrap_or_default(),
                other => other.clone(),
            };
            for (arg, kind) in [
                ("wallet", "wallet"),
                ("customer_id", "customer"),
                ("account", "account"),
            ] {
                let items = match &a[arg] {
                    Value::Array(items) => items.clone(),
                    other => vec![other.clone()],
                };
                let list = records.entry(kind).or_default();
                for item in items {
                    let text = match item {
                        Value::String(s) => s,
                        Value::Number(n) => n.to_string(),
                        _ => continue,
                    };
                    // Ids (not phone numbers) listed in one string: each on its own.
                    let ids: Vec<&str> = if kind == "wallet" {
                        text.split([',', ';', '|', '\n']).collect()
                    } else {
                        text.split(|c: char| !(c.is_alphanumeric() || c == '-' || c == '_'))
                            .collect()
                    };
                    list.extend(
                        ids.into_iter()
                            .filter(|t| !t.trim().is_empty())
                            .map(|t| Value::from(t.trim())),
                    );
                }
            }
        }
    }
    serde_json::json!({"id": "owner", "records": records})
}

/// A body's JSON text with [`owner_of`]'s caller put in first (the text is otherwise kept as
/// it is, keys given twice included), unless it names a caller or is not an object.
pub fn with_owner(text: &str) -> String {
    let parsed: Value = serde_json::from_str(text).unwrap_or_default();
    match text.trim_start().strip_prefix('{') {
        Some(rest) if parsed.is_object() && parsed.get("caller").is_none() => {
            let sep = if rest.trim_start().starts_with('}') {
                ""
            } else {
                ","
            };
            format!(r#"{{"caller": {}{sep}{rest}"#, owner_of(&parsed))
        }
        _ => text.to_string(),
    }
}

fn body(conversation: &str, turn: &str, calls: &[String]) -> String {
    format!(
        r#"{{"product": "wallet-assistant", "conversation": "{conversation}", "turn": "{turn}", "calls": [{}]}}"#,
        calls.join(", ")
    )
}

async fn post_raw<S, B>(app: &S, text: &str) -> (u16, Value)
where
    S: actix_web::dev::Service<
        actix_http::Request,
        Response = actix_web::dev::ServiceResponse<B>,
        Error = actix_web::Error,
    >,
    B: actix_web::body::MessageBody,
{
    let req = web_test::TestRequest::post()
        .uri("/v1/tool-calls")
        .insert_header(("content-type", "application/json"))
        .set_payload(text.to_string())
        .to_request();
    let resp = web_test::call_service(app, req).await;
    let status = resp.status().as_u16();
    let v = serde_json::from_slice(&web_test::read_body(resp).await).unwrap_or_default();
    (status, v)
}

// ---------------------------------------------------------------------------------------------
// Family 8: one key once, one tool once, one shape

#[actix_web::test]
async fn a_key_given_twice_anywhere_refuses_the_body_naming_the_key_never_the_value() {
    let app = app_for(shipped_state()).await;
    let head = r#""product": "wallet-assistant", "conversation": "c", "turn": 1"#;
    for (text, path) in [
        (
            format!(
                r#"{{{head}, "calls": [{{"id": "a", "tool": "close_wallet", "tool": "get_balance", "args": {{"wallet": "01711000000"}}}}]}}"#
            ),
            "calls[0].tool",
        ),
        (
            format!(
                r#"{{{head}, "calls": [{{"id": "a", "tool": "send_money", "args": {{"wallet": "01711000000", "to": "01811000000", "amount": 60000, "amount": 500}}}}]}}"#
            ),
            "calls[0].args.amount",
        ),
        (
            format!(
                r#"{{{head}, "calls": [{{"id": "a", "tool": "send_money", "args": {{"wallet": "01711000000", "note": {{"x": {{"y": 1, "y": 2}}}}}}}}]}}"#
            ),
            "calls[0].args.note.x.y",
        ),
        (
            format!(
                r#"{{{head}, "calls": [{{"id": "a", "type": "function", "function": {{"name": "send_money", "arguments": "{{\"amount\": 60000, \"amount\": 500}}"}}}}]}}"#
            ),
            "calls[0].function.arguments.amount",
        ),
        (
            format!(r#"{{{head}, "product": "bank-operator", "calls": []}}"#),
            "product",
        ),
        (
            format!(r#"{{{head}, "calls": [{{"id": "a", "id": "b", "tool": "get_balance"}}]}}"#),
            "calls[0].id",
        ),
    ] {
        let (status, v) = post_raw(&app, &text).await;
        assert_eq!(status, 400, "{text}: {v}");
        assert_eq!(v["error"]["code"], "duplicate_key", "{v}");
        let message = v["error"]["message"].as_str().unwrap_or("");
        assert!(message.contains(&format!("`{path}`")), "{path}: {message}");
        for value in [
            "close_wallet",
            "60000",
            "500",
            "bank-operator",
            "01711000000",
        ] {
            assert!(!message.contains(value), "{value} in {message}");
        }
    }
}

#[actix_web::test]
async fn a_call_naming_its_tool_twice_or_in_two_shapes_is_skipped_the_round_goes_on() {
    let app = app_for(shipped_state()).await;
    let w = json!({"wallet": "01711000000"});
    let calls = vec![
        json!({"id": "a", "name": "close_wallet", "tool": "get_balance", "args": w}),
        json!({"id": "b", "tool": "get_balance", "type": "function", "function": {"name": "close_wallet", "arguments": "{}"}}),
        json!({"id": "c", "tool": "get_balance", "Tool": "close_wallet", "args": w}),
        json!({"id": "d", "name": "get_balance", "input": {"wallet": "*"}}),
        json!({"id": "e", "tool": "get_balance", "args": w, "arguments": "{\"wallet\": \"01811000000\"}"}),
        json!({"id": "f", "tool": "get_balance", "args": w}),
    ];
    let (status, v) = crate::harness::post(
        &app,
        "/v1/tool-calls",
        json!({"product": "wallet-assistant", "conversation": "amb", "turn": 1, "calls": calls,
            "caller": {"id": "c", "records": {"wallet": ["01711000000"]}}}),
    )
    .await;
    assert_eq!(status, 200, "{v}");
    let d = v["decisions"].as_array().cloned().unwrap_or_default();
    for call in &d[..5] {
        assert_eq!(call["decision"], "skip", "{call}");
        assert_eq!(call["reason"], "ambiguous_call", "{call}");
        assert!(call["message"].as_str().is_some_and(|m| !m.is_empty()));
    }
    assert_eq!(d[5]["decision"], "run", "{}", d[5]);
}

// ---------------------------------------------------------------------------------------------
// Generated JSON trees for the duplicate and case-variant properties

/// A JSON tree whose objects may hold a key twice (so the text can be written with one).
#[derive(Debug, Clone)]
enum Node {
    Leaf(Value),
    List(Vec<Node>),
    Obj(Vec<(String, Node)>),
}

/// Keys with distinct folds (case, NFKC, invisibles): plain, needing quotes in a path, Bangla.
const KEYS: [&str; 10] = [
    "a",
    "b",
    "memo",
    "x_1",
    "n-2",
    "a b",
    "é",
    "k\"q",
    "নোট",
    "list",
];

fn leaf() -> impl Strategy<Value = Node> {
    prop_oneof![
        Just(Node::Leaf(Value::Null)),
        any::<bool>().prop_map(|b| Node::Leaf(b.into())),
        (0u64..100_000).prop_map(|n| Node::Leaf(n.into())),
        "[a-z ]{0,8}".prop_map(|s| Node::Leaf(s.into())),
    ]
}

fn tree() -> impl Strategy<Value = Node> {
    leaf().prop_recursive(4, 40, 5, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Node::List),
            proptest::collection::btree_map(proptest::sample::select(&KEYS[..]), inner, 0..5)
                .prop_map(|m| Node::Obj(m.into_iter().map(|(k, v)| (k.to_string(), v)).collect())),
        ]
    })
}

fn object_tree() -> impl Strategy<Value = Vec<(String, Node)>> {
    proptest::collection::btree_map(proptest::sample::select(&KEYS[..]), tree(), 1..5)
        .prop_map(|m| m.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

fn write(n: &Node, out: &mut String) {
    match n {
        Node::Leaf(v) => out.push_str(&v.to_string()),
        Node::List(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write(item, out);
            }
            out.push(']');
        }
        Node::Obj(entries) => {
            out.push('{');
            for (i, (k, v)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push_str(": ");
                write(v, out);
            }
            out.push('}');
        }
    }
}

fn text_of(n: &Node) -> String {
    let mut s = String::new();
    write(n, &mut s);
    s
}

/// The path of every object in the tree, as the gate writes paths (`a.b[2]["a b"]`).
fn object_paths(n: &Node, at: &str, out: &mut Vec<String>) {
    match n {
        Node::Obj(entries) => {
            out.push(at.to_string());
            for (k, v) in entries {
                object_paths(v, &step(at, k), out);
            }
        }
        Node::List(items) => {
            for (i, item) in items.iter().enumerate() {
                object_paths(item, &format!("{at}[{i}]"), out);
            }
        }
        Node::Leaf(_) => {}
    }
}

fn step(at: &str, k: &str) -> String {
    let plain = !k.is_empty()
        && k.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if plain && at.is_empty() {
        k.to_string()
    } else if plain {
        format!("{at}.{k}")
    } else {
        format!("{at}[{}]", Value::String(k.to_string()))
    }
}

/// The object at `path` (as [`object_paths`] wrote it), to change it.
fn object_at<'a>(n: &'a mut Node, at: &str, path: &str) -> Option<&'a mut Vec<(String, Node)>> {
    match n {
        Node::Obj(entries) => {
            if at == path {
                return Some(entries);
            }
            for (k, v) in entries.iter_mut() {
                let here = step(at, k);
                if path.starts_with(&here) {
                    if let Some(found) = object_at(v, &here, path) {
                        return Some(found);
                    }
                }
            }
            None
        }
        Node::List(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                let here = format!("{at}[{i}]");
                if path.starts_with(&here) {
                    if let Some(found) = object_at(item, &here, path) {
                        return Some(found);
                    }
                }
            }
            None
        }
        Node::Leaf(_) => None,
    }
}

/// A spelling of `key` that folds to it but is not it: a letter's case, its full-width or
/// mathematical form, an invisible character inside, a look-alike letter.
fn variant(key: &str, how: u8, at: usize) -> Option<String> {
    let chars: Vec<char> = key.chars().collect();
    let letters: Vec<usize> = (0..chars.len())
        .filter(|i| chars[*i].is_ascii_lowercase())
        .collect();
    let mut out = chars.clone();
    match how % 5 {
        0..=2 => {
            let i = *letters.get(at % letters.len().max(1))?;
            let c = chars[i];
            out[i] = match how % 5 {
                0 => c.to_ascii_uppercase(),
                1 => char::from_u32(c as u32 - 'a' as u32 + 0xFF41)?,
                _ => char::from_u32(c as u32 - 'a' as u32 + 0x1D41A)?,
            };
        }
        3 => out.insert(at % (chars.len() + 1), '\u{200B}'),
        _ => {
            let i = (0..chars.len()).find(|i| matches!(chars[*i], 'a' | 'e' | 'o'))?;
            out[i] = match chars[i] {
                'a' => 'а',
                'e' => 'е',
                _ => 'о',
            };
        }
    }
    let v: String = out.into_iter().collect();
    (v != key).then_some(v)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// A key given twice in any object of the body (the call, its arguments at any depth, or
    /// the JSON text of `arguments`) refuses it whole, named by its path; without the second
    /// copy the same text reads exactly as serde_json reads it.
    #[test]
    fn a_duplicate_at_any_depth_is_found_and_named(
        args in object_tree(),
        pick in any::<usize>(),
        key_pick in any::<usize>(),
        before in any::<bool>(),
        copy in leaf(),
        as_text in any::<bool>(),
    ) {
        let mut root = Node::Obj(args);
        let clean = text_of(&root);
        prop_assert_eq!(
            wire::parse_strict(clean.as_bytes()).ok(),
            serde_json::from_str::<Value>(&clean).ok()
        );
        let mut paths = Vec::new();
        object_paths(&root, "", &mut paths);
        let path = paths[pick % paths.len()].clone();
        let Some(entries) = object_at(&mut root, "", &path) else {
            return Err(TestCaseError::fail(format!("no object at {path}")));
        };
        let key = if entries.is_empty() {
            entries.push(("memo".into(), Node::Leaf(1.into())));
            "memo".to_string()
        } else {
            entries[key_pick % entries.len()].0.clone()
        };
        let at = entries.iter().position(|(k, _)| *k == key).unwrap_or(0);
        entries.insert(if before { at } else { at + 1 }, (key.clone(), copy));
        let args = text_of(&root);
        let (call, prefix) = if as_text {
            (
                format!(r#"{{"id": "a", "function": {{"name": "get_balance", "arguments": {}}}}}"#, Value::String(args)),
                "calls[0].function.arguments",
            )
        } else {
            (format!(r#"{{"id": "a", "tool": "get_balance", "args": {args}}}"#), "calls[0].args")
        };
        let text = body("dup", "1", &[call]);
        let expected = if path.is_empty() {
            step(prefix, &key)
        } else if path.starts_with('[') {
            step(&format!("{prefix}{path}"), &key)
        } else {
            step(&format!("{prefix}.{path}"), &key)
        };
        let p = shipped_policy("wallet-assistant");
        let got = rt().block_on(gate_body(&p, &memory(), &text, 0));
        prop_assert_eq!(got.err(), Some(WireError::DuplicateKey(expected)));
    }

    /// A name in an arguments object at any depth that folds to another name of the same
    /// object (case, full-width and mathematical letters, an invisible character, a look-alike)
    /// makes the call `invalid_arguments`; the same arguments without it run.
    #[test]
    fn a_case_variant_at_any_depth_is_invalid_arguments(
        args in object_tree(),
        pick in any::<usize>(),
        key_pick in any::<usize>(),
        how in any::<u8>(),
        at in any::<usize>(),
        value in leaf(),
    ) {
        let mut root = Node::Obj(args);
        if let Node::Obj(entries) = &mut root {
            entries.push(("wallet".into(), Node::Leaf("01711000000".into())));
        }
        // The shipped policy refuses undeclared arguments; the random ones here are kept
        // (compared literally), so only their names are at stake.
        let mut p = shipped_policy("wallet-assistant");
        p.refuse_undeclared = false;
        let call = |args: &Node| format!(r#"{{"id": "a", "tool": "get_balance", "args": {}}}"#, text_of(args));
        let clean = rt().block_on(gate_body(&p, &memory(), &body("v", "1", &[call(&root)]), 0));
        let clean = clean.map(|d| (d[0].decision, d[0].reason));
        prop_assert_eq!(clean, Ok((Decision::Run, GateReason::Allowed)));
        let mut paths = Vec::new();
        object_paths(&root, "", &mut paths);
        let path = paths[pick % paths.len()].clone();
        let Some(entries) = object_at(&mut root, "", &path) else {
            return Err(TestCaseError::fail(format!("no object at {path}")));
        };
        let key = if entries.is_empty() { "memo".to_string() } else { entries[key_pick % entries.len()].0.clone() };
        if entries.is_empty() {
            entries.push((key.clone(), Node::Leaf(1.into())));
        }
        let Some(v) = variant(&key, how, at) else {
            // A key with nothing to vary (no ASCII letter, or no a/e/o for a look-alike).
            return Ok(());
        };
        prop_assume!(!entries.iter().any(|(k, _)| *k == v));
        entries.push((v, value));
        let got = rt().block_on(gate_body(&p, &memory(), &body("v", "1", &[call(&root)]), 0));
        let got = got.map(|d| (d[0].decision, d[0].reason, d[0].message.clone().unwrap_or_default()));
        prop_assert!(
            matches!(&got, Ok((Decision::Skip, GateReason::InvalidArguments, m)) if m.contains("name one argument")),
            "{:?}", got
        );
    }
}

#[actix_web::test]
async fn a_name_spelled_otherwise_than_the_tool_reads_it_is_refused() {
    let p = shipped_policy("wallet-assistant");
    for args in [
        r#"{"wallet": "01711000000", "to": "01811000000", "Amount": 60000}"#,
        r#"{"wallet": "01711000000", "to": "01811000000", "amount": 500, "AMOUNT": 60000}"#,
        r#"{"wallet": "01711000000", "to": "01811000000", "ａｍｏｕｎｔ": 60000, "amount": 500}"#,
        r#"{"wallet": "01711000000", "To": "01911000000", "to": "01811000000", "amount": 500}"#,
        r#"{"Wallet": "01711000000", "to": "01811000000", "amount": 500}"#,
    ] {
        let text = body(
            "names",
            "1",
            &[format!(
                r#"{{"id": "a", "tool": "send_money", "args": {args}}}"#
            )],
        );
        let d = gate_body(&p, &memory(), &text, 0).await;
        let d = d.map(|d| (d[0].decision, d[0].reason));
        assert_eq!(
            d,
            Ok((Decision::Skip, GateReason::InvalidArguments)),
            "{args}"
        );
    }
}

#[actix_web::test]
async fn a_tool_that_declares_its_arguments_takes_no_other_on_the_shipped_policies() {
    let p = shipped_policy("bank-operator");
    for args in [
        json!({"customer_id": "C1", "customer_ids": "*"}),
        json!({"customer_id": "C1", "account": "A1", "accounts": ["A2", "A3"]}),
        json!({"customer_id": "C1", "filter": {"all": true}}),
    ] {
        let call = json!({"id": "a", "tool": "lookup_customer", "args": args});
        let d = gate_body(&p, &memory(), &body("extra", "1", &[call.to_string()]), 0).await;
        let d = d.map(|d| {
            (
                d[0].decision,
                d[0].reason,
                d[0].message.clone().unwrap_or_default(),
            )
        });
        assert!(
            matches!(&d, Ok((Decision::Skip, GateReason::InvalidArguments, m)) if m.contains("not an argument of this tool")),
            "{args}: {d:?}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Family 10: one call in every spelling the gate reads as one value

/// The digits of several scripts: ASCII, Bengali, Devanagari, Arabic-Indic, Extended
/// Arabic-Indic, full-width, mathematical bold.
const ZEROS: [u32; 7] = [0x30, 0x9E6, 0x966, 0x660, 0x6F0, 0xFF10, 0x1D7CE];

fn digits_in(s: &str, script: usize) -> String {
    let zero = ZEROS[script % ZEROS.len()];
    s.chars()
        .map(|c| match c.to_digit(10) {
            Some(d) => char::from_u32(zero + d).unwrap_or(c),
            None => c,
        })
        .collect()
}

/// 1234567 → "12,34,567" (lakhs) or "1,234,567".
fn grouped(n: u64, lakhs: bool, sep: char) -> String {
    let s = n.to_string();
    let mut groups = Vec::new();
    let (mut rest, last) = s.split_at(s.len().saturating_sub(3));
    groups.push(last.to_string());
    let size = if lakhs { 2 } else { 3 };
    while !rest.is_empty() {
        let (a, b) = rest.split_at(rest.len().saturating_sub(size));
        groups.push(b.to_string());
        rest = a;
    }
    groups.reverse();
    groups.join(&sep.to_string())
}

/// An amount's JSON in one of the spellings the gate reads as that amount.
fn amount_spelling(n: u64, how: u8, script: usize) -> String {
    match how % 9 {
        0 => n.to_string(),
        1 => format!("{n}.0"),
        2 => format!("{}e2", n as f64 / 100.0),
        3 => format!("\"{n}\""),
        4 => format!("\"{n}.00\""),
        5 => format!("\"{}\"", grouped(n, false, ',')),
        6 => format!("\"{}\"", grouped(n, true, ',')),
        7 => format!("\" {} \"", digits_in(&n.to_string(), script)),
        _ => format!(
            "\"{}\"",
            digits_in(&grouped(n, script.is_multiple_of(2), ','), script)
        ),
    }
}

/// A Bangladeshi mobile number (10 digits after the trunk 0) in one of its spellings.
fn phone_spelling(national: &str, how: u8, script: usize) -> String {
    let (a, b) = national.split_at(4);
    let text = match how % 8 {
        0 => format!("0{national}"),
        1 => format!("+880{national}"),
        2 => format!("880{national}"),
        3 => format!("00880{national}"),
        4 => format!("+880 {a} {b}"),
        5 => format!("0{a}-{b}"),
        6 => format!(" (+880) {a}-{b} "),
        _ => digits_in(&format!("0{national}"), script),
    };
    Value::String(text).to_string()
}

fn note_spelling(note: &str, how: u8) -> Option<String> {
    let v = match how % 4 {
        0 => note.to_string(),
        1 => format!("  {note} "),
        2 => note.replace(' ', "  "),
        _ => format!("{}\u{200B}", note.replace(' ', "\t")),
    };
    Some(Value::String(v).to_string())
}

/// `(key, json)` pairs of one transfer, in one spelling and key order.
#[allow(clippy::too_many_arguments)]
fn transfer(
    amount: u64,
    to: &str,
    note: Option<&str>,
    how: [u8; 5],
    script: usize,
    order: usize,
) -> String {
    let mut parts = vec![
        ("wallet", phone_spelling("1711000000", how[0], script)),
        ("to", phone_spelling(to, how[1], script + 1)),
        ("amount", amount_spelling(amount, how[2], script + 2)),
    ];
    match how[3] % 4 {
        0 => {}
        1 => parts.push(("currency", "\"BDT\"".into())),
        2 => parts.push(("currency", "\" bdt \"".into())),
        _ => parts.push(("currency", "null".into())),
    }
    match note {
        Some(n) => parts.extend(note_spelling(n, how[4]).map(|t| ("note", t))),
        // A note left out, empty, blank or null is no note.
        None => match how[4] % 4 {
            0 => {}
            1 => parts.push(("note", "\"\"".into())),
            2 => parts.push(("note", "\"  \"".into())),
            _ => parts.push(("note", "null".into())),
        },
    }
    let n = parts.len();
    parts.rotate_left(order % n);
    let fields: Vec<String> = parts.iter().map(|(k, v)| format!("\"{k}\": {v}")).collect();
    format!("{{{}}}", fields.join(", "))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// The same transfer, written twice in any two of the spellings the gate reads as one
    /// value (the amount as a number, a string, grouped, in any script's digits; the phone
    /// with or without +880, spaced, in Bengali digits; the currency given as its default; a
    /// note trimmed differently or an empty one), is one call: the second is `reuse` of the
    /// first. The arguments also come as OpenAI's JSON text. A different amount is another call.
    #[test]
    fn one_transfer_in_every_spelling_is_one_call(
        amount in 1u64..=50_000,
        to in "1[3-9][0-9]{8}",
        note in proptest::option::of("[a-z]{1,6}( [a-z]{1,6}){0,2}"),
        a in any::<[u8; 5]>(),
        b in any::<[u8; 5]>(),
        script in 0usize..7,
        orders in any::<(usize, usize)>(),
        openai in any::<bool>(),
    ) {
        let p = shipped_policy("wallet-assistant");
        let first = transfer(amount, &to, note.as_deref(), a, script, orders.0);
        let second = transfer(amount, &to, note.as_deref(), b, script + 3, orders.1);
        let other = transfer(amount + 1, &to, note.as_deref(), b, script, orders.1);
        let call = |id: &str, args: &str| {
            if openai {
                format!(r#"{{"id": "{id}", "type": "function", "function": {{"name": "send_money", "arguments": {}}}}}"#, Value::String(args.into()))
            } else {
                format!(r#"{{"id": "{id}", "tool": "send_money", "args": {args}}}"#)
            }
        };
        let text = body("spell", "1", &[call("a", &first), call("b", &second), call("c", &other)]);
        let got = rt().block_on(gate_body(&p, &memory(), &text, 0));
        let got = match got { Ok(d) => d, Err(e) => return Err(TestCaseError::fail(format!("{e}: {text}"))) };
        prop_assert!(matches!(got[0].decision, Decision::Run | Decision::NeedsApproval), "{:?} {}", got[0], first);
        prop_assert_eq!((got[1].decision, got[1].reuse_of.as_deref()), (Decision::Reuse, Some("a")), "{} | {}", first, second);
        prop_assert_ne!(got[2].decision, Decision::Reuse, "{}", other);
    }
}

// ---------------------------------------------------------------------------------------------
// Family 11: amount windows

fn window_policy(approval: u64, max: u64) -> ToolPolicy {
    let text = format!(
        r#"
[tools.send_money]
max_amount_bdt = 50000
approval_above_bdt = 10000
args.to = "phone"
args.amount = "amount"

[[velocity]]
id = "per_recipient"
scope = "conversation"
per = "to"
count = "amount"
tool = "send_money"
window_seconds = 86400
approval_above_bdt = {approval}
max_amount_bdt = {max}
"#
    );
    match ToolPolicy::from_toml(&text) {
        Ok(p) => p,
        Err(e) => panic!("{e:?}"),
    }
}

/// What the window should decide for each amount, in order: the running total counts every
/// call that was not refused; above `max` a call is refused (and not counted), above
/// `approval` it needs a person.
pub fn expected_window(
    amounts: &[u64],
    per_call_approval: u64,
    approval: u64,
    max: u64,
) -> Vec<(Decision, GateReason)> {
    let mut total = 0;
    amounts
        .iter()
        .map(|a| {
            if total + a > max {
                (Decision::Skip, GateReason::Velocity)
            } else {
                total += a;
                if *a > per_call_approval {
                    (Decision::NeedsApproval, GateReason::OverApprovalThreshold)
                } else if total > approval {
                    (Decision::NeedsApproval, GateReason::AmountWindow)
                } else {
                    (Decision::Run, GateReason::Allowed)
                }
            }
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Random splits of a total into amounts under the per-call threshold, to one recipient
    /// (spelled a different way each time) in one conversation, one turn each: the window
    /// asks for a person exactly from the call whose running total crosses its approval
    /// threshold, and refuses exactly the calls that would take it over its maximum. Another
    /// recipient's window is its own.
    #[test]
    fn split_amounts_trip_the_window_exactly_when_the_sum_crosses_it(
        amounts in proptest::collection::vec(1u64..=10_000, 1..12),
        approval in 1u64..40_000,
        extra in 1u64..40_000,
        spellings in proptest::collection::vec(any::<u8>(), 12),
    ) {
        let max = approval + extra;
        let p = window_policy(approval, max);
        let stores = memory();
        let rt = rt();
        let mut got = Vec::new();
        for (i, a) in amounts.iter().enumerate() {
            let args = format!(
                r#"{{"to": {}, "amount": {}}}"#,
                phone_spelling("1811000000", spellings[i], i),
                amount_spelling(*a, spellings[i] / 3, i)
            );
            let text = body("split", &format!("t{i}"), &[format!(r#"{{"id": "c{i}", "tool": "send_money", "args": {args}}}"#)]);
            let d = rt.block_on(gate_body(&p, &stores, &text, i as u64 * 1000));
            let d = match d { Ok(d) => d, Err(e) => return Err(TestCaseError::fail(e.to_string())) };
            got.push((d[0].decision, d[0].reason));
        }
        prop_assert_eq!(got, expected_window(&amounts, 10_000, approval, max));
        // Another recipient starts at zero.
        let other = body("split", "other", &[r#"{"id": "x", "tool": "send_money", "args": {"to": "01911000000", "amount": 1}}"#.to_string()]);
        let d = rt.block_on(gate_body(&p, &stores, &other, 99_000)).map(|d| d[0].reason);
        let fresh = if 1 > approval { GateReason::AmountWindow } else { GateReason::Allowed };
        prop_assert_eq!(d, Ok(fresh));
    }
}

#[actix_web::test]
async fn structured_transfers_to_one_recipient_reach_a_person_on_the_shipped_policy() {
    let app = app_for(shipped_state()).await;
    let mut decisions = Vec::new();
    for (turn, (amount, to)) in [
        (9_999, "01811000000"),
        (9_998, "+8801811000000"),
        (9_997, "০১৮১১-০০০০০০"),
    ]
    .into_iter()
    .enumerate()
    {
        let (status, v) = crate::harness::post(
            &app,
            "/v1/tool-calls",
            json!({"product": "wallet-assistant", "conversation": "structuring", "turn": turn,
                "caller": {"id": "c", "records": {"wallet": ["01711000000"]}}, "calls": [
                {"id": format!("t{turn}"), "tool": "send_money", "args": {"wallet": "01711000000", "to": to, "amount": amount}}
            ]}),
        )
        .await;
        assert_eq!(status, 200, "{v}");
        decisions.push(v["decisions"][0].clone());
    }
    assert_eq!(decisions[0]["decision"], "run");
    for d in &decisions[1..] {
        assert_eq!(d["decision"], "needs_approval", "{d}");
        assert_eq!(d["reason"], "amount_window", "{d}");
        assert_eq!(d["rule"], "transfer_amount_per_recipient", "{d}");
        assert!(d["message"]
            .as_str()
            .is_some_and(|m| m.contains("10,000 BDT")));
    }
}

// ---------------------------------------------------------------------------------------------
// Family 9: records counted one by one, wildcards refused

fn records_policy(window: u64) -> ToolPolicy {
    let text = format!(
        r#"
[tool_gate]
record_arg = "customer_id"
[tools.lookup_customer]
args.customer_id = {{ type = "record", kind = "customer" }}
[[velocity]]
id = "customers"
scope = "conversation"
count = "records"
window_seconds = 3600
max = {window}
"#
    );
    match ToolPolicy::from_toml(&text) {
        Ok(p) => p,
        Err(e) => panic!("{e:?}"),
    }
}

/// Ids in one value, joined by one of the list separators (or as an array).
fn record_list(ids: &[String], how: u8) -> String {
    let sep = [", ", ",", ";", " ", "\n", " | ", "、", "，", "\t", "; "][how as usize % 10];
    if how % 11 == 10 {
        return serde_json::to_string(ids).unwrap_or_default();
    }
    Value::String(ids.join(sep)).to_string()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Lookups naming several customers in one value (any list separator, or an array, ids in
    /// any case and script's digits): each customer counts against the window, and a lookup is
    /// refused exactly when its new customers would take the distinct count over the window.
    #[test]
    fn every_record_in_a_value_is_counted(
        lists in proptest::collection::vec(proptest::collection::vec(0u32..60, 1..12), 1..6),
        window in 1u64..40,
        how in proptest::collection::vec(any::<u8>(), 6),
        script in 0usize..7,
    ) {
        let p = records_policy(window);
        let stores = memory();
        let rt = rt();
        let mut seen = std::collections::BTreeSet::new();
        for (i, list) in lists.iter().enumerate() {
            let ids: Vec<String> = list
                .iter()
                .map(|n| {
                    let id = format!("cif-{n:04}");
                    let id = if (n + i as u32).is_multiple_of(2) { id.to_uppercase() } else { id };
                    digits_in(&id, script + i)
                })
                .collect();
            let args = format!(r#"{{"customer_id": {}}}"#, record_list(&ids, how[i]));
            let text = body("records", &format!("t{i}"), &[format!(r#"{{"id": "c{i}", "tool": "lookup_customer", "args": {args}}}"#)]);
            let d = rt.block_on(gate_body(&p, &stores, &text, i as u64));
            let d = match d { Ok(d) => d, Err(e) => return Err(TestCaseError::fail(e.to_string())) };
            let fresh: std::collections::BTreeSet<u32> = list.iter().copied().filter(|n| !seen.contains(n)).collect();
            let expected = if (seen.len() + fresh.len()) as u64 > window {
                GateReason::Velocity
            } else {
                seen.extend(fresh);
                GateReason::Allowed
            };
            prop_assert_eq!(d[0].reason, expected, "{} {:?}", args, d[0].message);
        }
    }
}

/// Patterns and wildcards drawn from the metacharacters of globs, SQL `LIKE` and regular
/// expressions, alone or after an id prefix, and words meaning "everyone", are refused where
/// customers are named, on the shipped bank policy; so is an empty list.
#[actix_web::test]
async fn a_wildcard_is_never_a_record() {
    let p = shipped_policy("bank-operator");
    let mut values: Vec<Value> = Vec::new();
    for meta in [
        "*", "%", "?", ".*", "[0-9]", "^", "$", "+", "{1,}", "\\d", "..", "~",
    ] {
        for prefix in ["", "CIF-", "CIF-00", "c1"] {
            values.push(format!("{prefix}{meta}").into());
        }
    }
    for word in [
        "all",
        "ALL",
        "All",
        "any",
        "everyone",
        "every customer",
        "সব",
        "সবাই",
        "null",
        "none",
    ] {
        values.push(word.into());
    }
    values.push(json!([]));
    values.push(json!(","));
    values.push(json!(["C1", "*"]));
    values.push(json!("C1, *"));
    let stores = memory();
    for (i, v) in values.iter().enumerate() {
        let call = json!({"id": "a", "tool": "lookup_customer", "args": {"customer_id": v}});
        let text = body("wild", &format!("t{i}"), &[call.to_string()]);
        let d = gate_body(&p, &stores, &text, 0).await;
        let d = d.map(|d| (d[0].decision, d[0].reason));
        assert_eq!(d, Ok((Decision::Skip, GateReason::InvalidArguments)), "{v}");
    }
    // And the family's list: 200 customers in one value is over the tool's 5 per call.
    let ids: Vec<String> = (0..200).map(|n| format!("CIF-{n:05}")).collect();
    let call =
        json!({"id": "a", "tool": "lookup_customer", "args": {"customer_id": ids.join(",")}});
    let d = gate_body(&p, &stores, &body("many", "1", &[call.to_string()]), 0).await;
    assert_eq!(
        d.map(|d| (d[0].decision, d[0].reason)),
        Ok((Decision::Skip, GateReason::OverLimit))
    );
}

// ---------------------------------------------------------------------------------------------
// Configuration

#[test]
fn argument_types_and_amount_windows_are_strict_and_report_every_problem() {
    let text = r#"
[tools.send]
max_amount_bdt = 100
args.amount = "money"
args.to = { type = "phone", kind = "x" }
args.who = { type = "record" }
args.fmt = { type = "record", kind = "wallet", format = "email" }
args.cur = { type = "code", default = "$$" }
args.n = { type = "count", optional = "yes" }
args.bad = 3

[tools.other]
args.amount = "date"
max_amount_bdt = 5

[[velocity]]
id = "w1"
scope = "conversation"
count = "amount"
tool = "send"
per = "nobody"
max = 3
window_seconds = 60

[[velocity]]
id = "w2"
scope = "conversation"
count = "calls"
window_seconds = 60
max = 2
max_amount_bdt = 5

[[velocity]]
id = "w3"
scope = "product"
count = "amount"
window_seconds = 60
max_amount_usd = 5
"#;
    let problems = match ToolPolicy::from_toml(text) {
        Ok(_) => panic!("loaded"),
        Err(p) => format!("{p:?}"),
    };
    for needle in [
        "`money` is not an argument type",
        "unknown key `kind` for a `phone`",
        "a record needs its `kind`",
        "`format` is `id`",
        "`default` is not a valid `code`",
        "`optional` is true or false",
        "a type name",
        "limits read `amount` as amount",
        "per = \\\"nobody\\\"",
        "not `max`",
        "amount limits are for count = \\\"amount\\\"",
        "in USD",
    ] {
        assert!(problems.contains(needle), "{needle} missing in {problems}");
    }
}

//! The gate's generated eval suite: cases of issue 26's families 8–11 (a call saying two
//! things, records counted as strings, dedupe by spelling, structuring), built from templates ×
//! spellings × characters drawn from Unicode blocks and categories, with benign controls beside
//! each family. Every case runs through the HTTP route on the shipped policies.
//!
//! A quarter of the cases, chosen by a hash of the case's name, is held out of tuning: they are
//! scored and reported on their own (`cargo test gate_eval -- --nocapture` prints both).

use crate::harness::{app_for, shipped_state};
use actix_web::test as web_test;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// What a case expects of its last request.
enum Check {
    /// The body is refused whole with this error code.
    Refused(&'static str),
    /// The first call is not run; when `reasons` is not empty, it is skipped for one of them.
    NotRun(&'static [&'static str]),
    /// The first call runs.
    Runs,
    /// The second call of the last request reuses the first.
    Reused,
    /// The second call of the last request does not reuse the first.
    NotReused,
    /// The first call of each request, in order, has these decisions.
    Decisions(Vec<&'static str>),
}

struct Case {
    family: &'static str,
    name: String,
    steps: Vec<String>,
    check: Check,
}

/// A small deterministic generator (splitmix64): the suite is the same on every run.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

fn held_out(name: &str) -> bool {
    guard::text::sha256_hex(name.as_bytes())
        .as_bytes()
        .first()
        .is_some_and(|b| (b % 4) == 0)
}

fn round(product: &str, conversation: &str, turn: &str, calls: &[String]) -> String {
    format!(
        r#"{{"product": "{product}", "conversation": "{conversation}", "turn": "{turn}", "calls": [{}]}}"#,
        calls.join(", ")
    )
}

fn js(s: &str) -> String {
    Value::String(s.to_string()).to_string()
}

// ---------------------------------------------------------------------------------------------
// Characters drawn from Unicode, not listed

/// Letters that NFKC and case folding make into an ASCII lower-case letter, by block: the
/// full-width forms, the mathematical alphanumeric styles (13 Latin styles of 52 letters each,
/// holes left out: unassigned code points are not alphabetic), circled letters, and the ASCII
/// capital.
fn letter_forms(c: char) -> Vec<char> {
    let Some(i) = (c as u32).checked_sub('a' as u32).filter(|i| *i < 26) else {
        return Vec::new();
    };
    let mut out = vec![c.to_ascii_uppercase()];
    for cp in [0xFF41 + i, 0xFF21 + i, 0x24D0 + i, 0x24B6 + i] {
        out.extend(char::from_u32(cp));
    }
    for style in 0..13 {
        for cp in [0x1D400 + 52 * style + i, 0x1D400 + 52 * style + 26 + i] {
            out.extend(char::from_u32(cp).filter(|c| c.is_alphabetic()));
        }
    }
    out
}

/// Format characters that render as nothing (general category Cf, a few blocks of it).
fn invisibles() -> Vec<char> {
    (0x200B..=0x200F)
        .chain(0x2060..=0x2064)
        .chain([0xFEFF, 0x00AD, 0x180E, 0xE0061, 0xE0020])
        .filter_map(char::from_u32)
        .collect()
}

/// Every white-space character below U+3100 (the `White_Space` property), and the list
/// punctuation of several scripts.
fn list_separators() -> Vec<String> {
    let mut out: Vec<String> = (0u32..0x3100)
        .filter_map(char::from_u32)
        .filter(|c| c.is_whitespace())
        .map(|c| c.to_string())
        .collect();
    for s in [
        ",", ", ", " , ", ";", "; ", "|", " | ", "，", "、", "،", "؛", "；", "｜", ",\n", "\r\n",
    ] {
        out.push(s.to_string());
    }
    out
}

/// A spelling of `key` that reads as it to a case-insensitive, Unicode-normalising executor.
fn key_variant(g: &mut Gen, key: &str) -> String {
    let chars: Vec<char> = key.chars().collect();
    let mut out = chars.clone();
    match g.below(3) {
        0 => {
            let i = g.below(chars.len());
            let forms = letter_forms(chars[i]);
            if !forms.is_empty() {
                out[i] = *g.pick(&forms);
            }
        }
        1 => {
            // Every letter in one other form.
            let style = g.next() as usize;
            for (i, c) in chars.iter().enumerate() {
                let forms = letter_forms(*c);
                if !forms.is_empty() {
                    out[i] = forms[style % forms.len()];
                }
            }
        }
        _ => {
            let at = 1 + g.below(chars.len().saturating_sub(1).max(1));
            out.insert(at.min(chars.len()), *g.pick(&invisibles()));
        }
    }
    let v: String = out.into_iter().collect();
    if v == key {
        key.to_ascii_uppercase()
    } else {
        v
    }
}

/// A number's digits in another script's decimal digits (general category Nd: the zero of a
/// block of ten, drawn from a range of blocks).
fn in_script(g: &mut Gen, digits: &str) -> String {
    const ZEROS: [u32; 10] = [
        0x30, 0x9E6, 0x966, 0x660, 0x6F0, 0xFF10, 0x1D7CE, 0x1D7D8, 0x1D7E2, 0xE50,
    ];
    let zero = *g.pick(&ZEROS);
    digits
        .chars()
        .map(|c| match c.to_digit(10) {
            Some(d) => char::from_u32(zero + d).unwrap_or(c),
            None => c,
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Family 8: a call that says two things

fn family_8(g: &mut Gen, cases: &mut Vec<Case>) {
    const W: &str = r#"{"wallet": "01711000000"}"#;
    // Where a call can name its tool: accepted keys, OpenAI's `function`, other frameworks'
    // keys, and the accepted ones in another case or form.
    let places = [
        "tool",
        "name",
        "function.name",
        "toolName",
        "tool_name",
        "function_name",
        "variant:tool",
        "variant:name",
    ];
    let pairs = [
        ("close_wallet", "get_balance"),
        ("send_money", "get_balance"),
        ("get_balance", "close_wallet"),
    ];
    let mut n = 0;
    for a in places {
        for b in places {
            if a == b {
                continue;
            }
            for (bad, good) in pairs {
                let mut fields = vec![r#""id": "a""#.to_string()];
                let mut function: Option<String> = None;
                for (place, tool) in [(a, bad), (b, good)] {
                    match place {
                        "function.name" => function = Some(js(tool)),
                        p if p.starts_with("variant:") => {
                            let k = key_variant(g, &p[8..]);
                            fields.push(format!("{}: {}", js(&k), js(tool)));
                        }
                        p => fields.push(format!("{}: {}", js(p), js(tool))),
                    }
                }
                match function {
                    Some(name) => fields.push(format!(
                        r#""type": "function", "function": {{"name": {name}, "arguments": {}}}"#,
                        js(W)
                    )),
                    None => fields.push(format!(r#""args": {W}"#)),
                }
                n += 1;
                cases.push(Case {
                    family: "8 two names",
                    name: format!("two-names-{n}-{a}-{b}-{bad}"),
                    steps: vec![round(
                        "wallet-assistant",
                        &format!("f8-{n}"),
                        "1",
                        &[format!("{{{}}}", fields.join(", "))],
                    )],
                    check: Check::NotRun(&["ambiguous_call", "invalid_call"]),
                });
            }
        }
    }
    // The arguments twice, or in a shape the gate does not read.
    for (i, (k1, k2)) in [
        ("args", "arguments"),
        ("args", "input"),
        ("arguments", "parameters"),
        ("args", "variant:args"),
        ("arguments", "variant:arguments"),
        ("args", "tool_input"),
        ("args", "kwargs"),
    ]
    .into_iter()
    .enumerate()
    {
        for j in 0..3 {
            let k2 = match k2.strip_prefix("variant:") {
                Some(k) => key_variant(g, k),
                None => k2.to_string(),
            };
            let call = format!(
                r#"{{"id": "a", "tool": "get_balance", {}: {{"wallet": "01711000000"}}, {}: {{"wallet": "*"}}}}"#,
                js(k1),
                js(&k2)
            );
            cases.push(Case {
                family: "8 two argument sets",
                name: format!("two-args-{i}-{j}-{k2}"),
                steps: vec![round(
                    "wallet-assistant",
                    &format!("f8a-{i}-{j}"),
                    "1",
                    &[call],
                )],
                check: Check::NotRun(&["ambiguous_call"]),
            });
        }
    }
    // A key given twice in the raw text, at every level.
    let harmful = [
        ("\"tool\": \"close_wallet\"", "\"tool\": \"get_balance\""),
        ("\"amount\": 60000", "\"amount\": 500"),
        ("\"to\": \"01811000000\"", "\"to\": \"01911000000\""),
    ];
    for (i, (x, y)) in harmful.iter().enumerate() {
        for order in 0..2 {
            let (first, second) = if order == 0 { (x, y) } else { (y, x) };
            let a = r#""wallet": "01711000000", "to": "01811000000", "amount": 500"#;
            let templates = [
                format!(r#"{{"id": "a", {first}, {second}, "args": {{{a}}}}}"#),
                format!(
                    r#"{{"id": "a", "tool": "send_money", "args": {{{a}, {first}, {second}}}}}"#
                ),
                format!(
                    r#"{{"id": "a", "tool": "send_money", "args": {{{a}, "note": {{"m": {{{first}, {second}}}}}}}}}"#
                ),
                format!(
                    r#"{{"id": "a", "tool": "send_money", "args": {{{a}, "legs": [{{}}, {{{first}, {second}}}]}}}}"#
                ),
                format!(
                    r#"{{"id": "a", "type": "function", "function": {{"name": "send_money", "arguments": {}}}}}"#,
                    js(&format!("{{{a}, {first}, {second}}}").replacen(
                        r#""amount": 500, "#,
                        "",
                        1
                    ))
                ),
                r#"{"id": "a", "type": "function", "function": {"name": "get_balance", "name": "close_wallet", "arguments": "{}"}}"#.to_string(),
            ];
            for (t, call) in templates.iter().enumerate() {
                cases.push(Case {
                    family: "8 duplicate keys",
                    name: format!("dup-{i}-{order}-{t}"),
                    steps: vec![round(
                        "wallet-assistant",
                        &format!("f8d-{i}-{order}-{t}"),
                        "1",
                        std::slice::from_ref(call),
                    )],
                    check: Check::Refused("duplicate_key"),
                });
            }
        }
    }
    for (i, top) in ["product", "conversation", "turn", "calls"]
        .iter()
        .enumerate()
    {
        let text = round(
            "wallet-assistant",
            &format!("f8t-{i}"),
            "1",
            &[format!(
                r#"{{"id": "a", "tool": "get_balance", "args": {W}}}"#
            )],
        );
        let extra = match *top {
            "product" => r#""product": "bank-operator", "#.to_string(),
            "calls" => r#""calls": [], "#.to_string(),
            k => format!(r#""{k}": "other", "#),
        };
        cases.push(Case {
            family: "8 duplicate keys",
            name: format!("dup-top-{top}"),
            steps: vec![text.replacen('{', &format!("{{{extra}"), 1)],
            check: Check::Refused("duplicate_key"),
        });
    }
    // Argument names that fold to one: with the plain name beside them, or alone.
    for key in ["amount", "to", "wallet", "currency"] {
        for j in 0..12 {
            let v = key_variant(g, key);
            let mut args = BTreeMap::from([
                ("wallet", js("01711000000")),
                ("to", js("01811000000")),
                ("amount", "500".to_string()),
            ]);
            let value = match key {
                "amount" => "60000".to_string(),
                "currency" => js("USD"),
                _ => js("01999999999"),
            };
            if j % 2 == 1 {
                args.remove(key);
            }
            let mut fields: Vec<String> = args
                .iter()
                .map(|(k, v)| format!("{}: {v}", js(k)))
                .collect();
            fields.insert(g.below(fields.len() + 1), format!("{}: {value}", js(&v)));
            let call = format!(
                r#"{{"id": "a", "tool": "send_money", "args": {{{}}}}}"#,
                fields.join(", ")
            );
            cases.push(Case {
                family: "8 names in two spellings",
                name: format!("variant-{key}-{j}-{v}"),
                steps: vec![round(
                    "wallet-assistant",
                    &format!("f8v-{key}-{j}"),
                    "1",
                    &[call],
                )],
                check: Check::NotRun(&["invalid_arguments"]),
            });
        }
    }
    // Controls: one shape, said once, in each accepted shape.
    for (i, call) in [
        format!(r#"{{"id": "a", "tool": "get_balance", "args": {W}}}"#),
        format!(r#"{{"id": "a", "name": "get_balance", "arguments": {W}}}"#),
        format!(r#"{{"id": "a", "name": "get_balance", "args": {W}}}"#),
        format!(r#"{{"id": "a", "name": "get_balance", "arguments": {}}}"#, js(W)),
        format!(r#"{{"id": "a", "type": "function", "function": {{"name": "get_balance", "arguments": {}}}}}"#, js(W)),
        format!(r#"{{"id": "a", "type": "function", "index": 0, "function": {{"name": "get_balance", "arguments": {}}}}}"#, js(&format!(" {W} "))),
    ]
    .into_iter()
    .enumerate()
    {
        cases.push(Case {
            family: "8 controls",
            name: format!("shape-{i}"),
            steps: vec![round("wallet-assistant", &format!("f8c-{i}"), "1", &[call])],
            check: Check::Runs,
        });
    }
}

// ---------------------------------------------------------------------------------------------
// Family 9: records, not strings

fn family_9(g: &mut Gen, cases: &mut Vec<Case>) {
    let seps = list_separators();
    let lookup = |c: &str, v: &str| {
        format!(r#"{{"id": "{c}", "tool": "lookup_customer", "args": {{"customer_id": {v}}}}}"#)
    };
    // Many customers in one value: any white space, list punctuation, or an array.
    for (i, sep) in seps.iter().enumerate() {
        let n = 6 + g.below(245);
        let ids: Vec<String> = (0..n).map(|k| format!("CIF-{:05}", 1000 * i + k)).collect();
        let value = if i % 7 == 0 {
            serde_json::to_string(&ids).unwrap_or_default()
        } else {
            js(&ids.join(sep))
        };
        cases.push(Case {
            family: "9 many records in one value",
            name: format!(
                "list-{i}-{n}-U+{:04X}",
                sep.chars().next().map_or(0, |c| c as u32)
            ),
            steps: vec![round(
                "bank-operator",
                &format!("f9l-{i}"),
                "1",
                &[lookup("a", &value)],
            )],
            check: Check::NotRun(&[]),
        });
    }
    // A window of 20 customers per conversation, filled five at a time.
    for i in 0..12 {
        let sep = g.pick(&seps).clone();
        let steps = (0..5)
            .map(|s| {
                let ids: Vec<String> = (0..5)
                    .map(|k| in_script(g, &format!("CIF-{:05}", 50_000 + 100 * i + 5 * s + k)))
                    .collect();
                round(
                    "bank-operator",
                    &format!("f9w-{i}"),
                    &format!("t{s}"),
                    &[lookup("a", &js(&ids.join(&sep)))],
                )
            })
            .collect();
        cases.push(Case {
            family: "9 records against the window",
            name: format!("window-{i}"),
            steps,
            check: Check::Decisions(vec!["run", "run", "run", "run", "skip"]),
        });
    }
    // Wildcards and patterns: every ASCII punctuation mark but the id joiners, after prefixes;
    // words for "everyone"; lists of nothing.
    let mut patterns: Vec<String> = Vec::new();
    for p in (0x21u8..0x7F)
        .map(char::from)
        .filter(|c| c.is_ascii_punctuation())
    {
        if matches!(p, '-' | '_' | '"' | '\\' | ',' | ';' | '|') {
            continue;
        }
        let prefix = *g.pick(&["", "CIF-", "CIF-00", "C1", "cif-1"]);
        patterns.push(format!("{prefix}{p}"));
        patterns.push(format!("{p}{p}"));
    }
    for w in [
        "all",
        "any",
        "every",
        "everyone",
        "everybody",
        "anyone",
        "each",
        "সব",
        "সবাই",
        "সকল",
        "sob",
        "NULL",
        "none",
        "true",
        "undefined",
    ] {
        patterns.push(w.to_string());
        patterns.push(w.to_uppercase());
        patterns.push(format!(" {w} "));
    }
    for (i, p) in patterns.iter().enumerate() {
        cases.push(Case {
            family: "9 wildcards",
            name: format!("wildcard-{i}-{p}"),
            steps: vec![round(
                "bank-operator",
                &format!("f9p-{i}"),
                "1",
                &[lookup("a", &js(p))],
            )],
            check: Check::NotRun(&["invalid_arguments"]),
        });
    }
    for (i, v) in [
        "[]",
        "\",\"",
        "\";;\"",
        "[\"*\"]",
        "[\"CIF-00001\", \"%\"]",
        "\"CIF-00001, all\"",
    ]
    .iter()
    .enumerate()
    {
        cases.push(Case {
            family: "9 wildcards",
            name: format!("empty-{i}"),
            steps: vec![round(
                "bank-operator",
                &format!("f9e-{i}"),
                "1",
                &[lookup("a", v)],
            )],
            check: Check::NotRun(&["invalid_arguments"]),
        });
    }
    // Controls: one customer in its everyday forms runs.
    for i in 0..16 {
        let id = format!("CIF-{:05}", 90_000 + i);
        let v = match i % 4 {
            0 => js(&id),
            1 => js(&format!("  {}  ", id.to_lowercase())),
            2 => js(&in_script(g, &id)),
            _ => format!("{}", 90_000 + i),
        };
        cases.push(Case {
            family: "9 controls",
            name: format!("one-customer-{i}"),
            steps: vec![round(
                "bank-operator",
                &format!("f9c-{i}"),
                "1",
                &[lookup("a", &v)],
            )],
            check: Check::Runs,
        });
    }
}

// ---------------------------------------------------------------------------------------------
// Family 10: the same call in other spellings

fn amount_text(g: &mut Gen, n: u64) -> String {
    let plain = n.to_string();
    let commas = {
        let s = plain.clone();
        let mut out = String::new();
        for (i, c) in s.chars().enumerate() {
            if i > 0 && (s.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(c);
        }
        out
    };
    match g.below(8) {
        0 => plain,
        1 => format!("{n}.00"),
        2 => js(&plain),
        3 => js(&format!("{plain}.0")),
        4 => js(&commas),
        5 => js(&in_script(g, &plain)),
        6 => js(&format!(" {} ", in_script(g, &commas))),
        _ => format!("{plain}e0"),
    }
}

fn phone_text(g: &mut Gen, national: &str) -> String {
    let (a, b) = national.split_at(4);
    let t = match g.below(8) {
        0 => format!("0{national}"),
        1 => format!("+880{national}"),
        2 => format!("880{national}"),
        3 => format!("+880-{a}-{b}"),
        4 => format!("0{a} {b}"),
        5 => format!("(+880) {a}{b}"),
        6 => in_script(g, &format!("0{national}")),
        _ => format!(" 0{national} "),
    };
    js(&t)
}

/// A transfer from `wallet` (each case its own customer: the product-wide windows of one
/// customer's wallet are not another's).
fn transfer_args(g: &mut Gen, wallet: &str, amount: u64, to: &str, note: &str) -> String {
    let mut fields = vec![
        format!(r#""wallet": {}"#, phone_text(g, wallet)),
        format!(r#""to": {}"#, phone_text(g, to)),
        format!(r#""amount": {}"#, amount_text(g, amount)),
    ];
    match g.below(4) {
        0 => fields.push(r#""currency": "BDT""#.into()),
        1 => fields.push(r#""currency": "bdt ""#.into()),
        _ => {}
    }
    if note.is_empty() {
        match g.below(4) {
            0 => fields.push(r#""note": """#.into()),
            1 => fields.push(r#""note": null"#.into()),
            2 => fields.push(r#""note": "   ""#.into()),
            _ => {}
        }
    } else {
        let spaced = match g.below(3) {
            0 => format!(" {note}"),
            1 => format!("{note}  "),
            _ => note.replace(' ', "   "),
        };
        fields.push(format!(r#""note": {}"#, js(&spaced)));
    }
    let k = g.below(fields.len());
    fields.rotate_left(k);
    format!("{{{}}}", fields.join(", "))
}

fn family_10(g: &mut Gen, cases: &mut Vec<Case>) {
    let call = |g: &mut Gen, id: &str, args: &str| {
        if g.below(3) == 0 {
            format!(
                r#"{{"id": "{id}", "type": "function", "function": {{"name": "send_money", "arguments": {}}}}}"#,
                js(args)
            )
        } else {
            format!(r#"{{"id": "{id}", "tool": "send_money", "args": {args}}}"#)
        }
    };
    for i in 0..160 {
        let amount = 1 + g.below(9_999) as u64;
        let to = format!("1{}{:08}", 3 + g.below(7), g.below(100_000_000));
        let note = *g.pick(&["", "", "rent", "school fees for may"]);
        let wallet = format!("15{:08}", i);
        let a = transfer_args(g, &wallet, amount, &to, note);
        let b = transfer_args(g, &wallet, amount, &to, note);
        let (ca, cb) = (call(g, "a", &a), call(g, "b", &b));
        cases.push(Case {
            family: "10 one call, two spellings",
            name: format!("spelling-{i}"),
            steps: vec![round(
                "wallet-assistant",
                &format!("f10-{i}"),
                "1",
                &[ca, cb],
            )],
            check: Check::Reused,
        });
    }
    // Controls: a different amount, recipient or note is a different call.
    for i in 0..40 {
        let amount = 1 + g.below(9_998) as u64;
        let to = format!("1{}{:08}", 3 + g.below(7), g.below(100_000_000));
        let wallet = format!("16{:08}", i);
        let a = transfer_args(g, &wallet, amount, &to, "rent");
        let b = match i % 3 {
            0 => transfer_args(g, &wallet, amount + 1, &to, "rent"),
            1 => transfer_args(
                g,
                &wallet,
                amount,
                &format!("{}{}", &to[..9], (to.as_bytes()[9] - b'0' + 1) % 10),
                "rent",
            ),
            _ => transfer_args(g, &wallet, amount, &to, "rent for june"),
        };
        let (ca, cb) = (call(g, "a", &a), call(g, "b", &b));
        cases.push(Case {
            family: "10 controls",
            name: format!("different-{i}"),
            steps: vec![round(
                "wallet-assistant",
                &format!("f10c-{i}"),
                "1",
                &[ca, cb],
            )],
            check: Check::NotReused,
        });
    }
}

// ---------------------------------------------------------------------------------------------
// Family 11: structuring

fn family_11(g: &mut Gen, cases: &mut Vec<Case>) {
    // Transfers to one recipient in one conversation, each under the per-call approval
    // threshold (10,000 BDT), up to three (the conversation's transfer limit per 10 minutes).
    for i in 0..80 {
        let parts = 2 + g.below(2);
        let amounts: Vec<u64> = (0..parts).map(|_| 1_000 + g.below(9_001) as u64).collect();
        let to = format!("17{:08}", 10_000_000 + i);
        let mut total = 0;
        let mut expected = Vec::new();
        let steps = amounts
            .iter()
            .enumerate()
            .map(|(s, a)| {
                total += a;
                expected.push(if total > 10_000 {
                    "needs_approval"
                } else {
                    "run"
                });
                let args = format!(
                    r#"{{"wallet": "014{:08}", "to": {}, "amount": {}}}"#,
                    i,
                    phone_text(g, &to),
                    amount_text(g, *a)
                );
                round(
                    "wallet-assistant",
                    &format!("f11-{i}"),
                    &format!("t{s}"),
                    &[format!(
                        r#"{{"id": "c{s}", "tool": "send_money", "args": {args}}}"#
                    )],
                )
            })
            .collect();
        let family = if total > 10_000 {
            "11 split transfers"
        } else {
            "11 controls"
        };
        cases.push(Case {
            family,
            name: format!("transfers-{i}"),
            steps,
            check: Check::Decisions(expected),
        });
    }
    // Refunds to one customer, each under the per-call threshold (1,000 BDT), up to five.
    for i in 0..60 {
        let parts = 2 + g.below(4);
        let amounts: Vec<u64> = (0..parts).map(|_| 100 + g.below(900) as u64).collect();
        let customer = format!("CIF-7{:05}", i);
        let mut total = 0;
        let mut expected = Vec::new();
        let steps = amounts
            .iter()
            .enumerate()
            .map(|(s, a)| {
                total += a;
                expected.push(if total > 1_000 {
                    "needs_approval"
                } else {
                    "run"
                });
                let id = if s % 2 == 0 {
                    customer.clone()
                } else {
                    customer.to_lowercase()
                };
                let args = format!(
                    r#"{{"customer_id": {}, "amount": {}}}"#,
                    js(&id),
                    amount_text(g, *a)
                );
                round(
                    "bank-operator",
                    &format!("f11r-{i}"),
                    &format!("t{s}"),
                    &[format!(
                        r#"{{"id": "r{s}", "tool": "refund_fee", "args": {args}}}"#
                    )],
                )
            })
            .collect();
        let family = if total > 1_000 {
            "11 split refunds"
        } else {
            "11 controls"
        };
        cases.push(Case {
            family,
            name: format!("refunds-{i}"),
            steps,
            check: Check::Decisions(expected),
        });
    }
}

// ---------------------------------------------------------------------------------------------

fn judge(check: &Check, last: &(u16, Value), all: &[(u16, Value)]) -> bool {
    let first = |v: &Value, i: usize| v["decisions"][i].clone();
    match check {
        Check::Refused(code) => last.0 == 400 && last.1["error"]["code"] == *code,
        Check::NotRun(reasons) => {
            let d = first(&last.1, 0);
            last.0 == 200
                && d["decision"] != "run"
                && d["decision"] != "reuse"
                && (reasons.is_empty() || reasons.iter().any(|r| d["reason"] == *r))
        }
        Check::Runs => last.0 == 200 && first(&last.1, 0)["decision"] == "run",
        Check::Reused => {
            last.0 == 200
                && first(&last.1, 1)["decision"] == "reuse"
                && first(&last.1, 1)["reuse_of"] == "a"
        }
        Check::NotReused => last.0 == 200 && first(&last.1, 1)["decision"] != "reuse",
        Check::Decisions(expected) => {
            all.len() == expected.len()
                && all
                    .iter()
                    .zip(expected)
                    .all(|((s, v), e)| *s == 200 && first(v, 0)["decision"] == *e)
        }
    }
}

#[actix_web::test]
async fn gate_eval_on_generated_cases_with_a_held_out_quarter() {
    let mut g = Gen(26);
    let families: [fn(&mut Gen, &mut Vec<Case>); 4] = [family_8, family_9, family_10, family_11];
    // family → (tuning passed, tuning total, held-out passed, held-out total)
    let mut score: BTreeMap<&str, [usize; 4]> = BTreeMap::new();
    let mut tuning_failures = Vec::new();
    let mut count = 0;
    for generate in families {
        let mut cases = Vec::new();
        generate(&mut g, &mut cases);
        count += cases.len();
        // A fresh service per family: the product-wide windows of one family do not fill
        // those of the next.
        let app = app_for(shipped_state()).await;
        for case in &cases {
            let mut answers = Vec::new();
            for body in &case.steps {
                let req = web_test::TestRequest::post()
                    .uri("/v1/tool-calls")
                    .insert_header(("content-type", "application/json"))
                    // The signed-in owner of the records the calls name: these families are
                    // about the other checks (entitlement's own test is `entitlement`).
                    .set_payload(crate::gate_args::with_owner(body))
                    .to_request();
                let resp = web_test::call_service(&app, req).await;
                let status = resp.status().as_u16();
                let v: Value =
                    serde_json::from_slice(&web_test::read_body(resp).await).unwrap_or(json!(null));
                answers.push((status, v));
            }
            let last = answers.last().cloned().unwrap_or((0, Value::Null));
            let ok = judge(&case.check, &last, &answers);
            let held = held_out(&case.name);
            let s = score.entry(case.family).or_default();
            let at = if held { 2 } else { 0 };
            s[at + 1] += 1;
            if ok {
                s[at] += 1;
            } else if !held {
                tuning_failures.push(format!("{}: {} → {}", case.family, case.name, last.1));
            }
        }
    }
    let (mut tp, mut tt, mut hp, mut ht) = (0, 0, 0, 0);
    println!("gate eval: family | tuning | held out");
    for (family, s) in &score {
        println!(
            "  {family:32} | {:4}/{:<4} | {:4}/{:<4}",
            s[0], s[1], s[2], s[3]
        );
        tp += s[0];
        tt += s[1];
        hp += s[2];
        ht += s[3];
    }
    println!("  {:32} | {tp:4}/{tt:<4} | {hp:4}/{ht:<4}", "all");
    assert!(count >= 600, "{count} cases");
    assert!(tuning_failures.is_empty(), "{}", tuning_failures.join("\n"));
    // The held-out quarter is looked at only as a figure; it must reach the issue's goal.
    assert!(hp * 10 >= ht * 9, "held out: {hp}/{ht}");
}

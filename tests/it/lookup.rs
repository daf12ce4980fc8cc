//! The lookup check: a generated suite of answers with their tool results (English and Bangla,
//! ASCII and Bengali digits, grouping and currency variants), half with a planted figure no
//! result states; the once-per-turn model question with a scripted model; the stream's holds;
//! and the route, with a mock judge server.
//!
//! The suite keeps one case in four (by a hash of its index) out of tuning: `held_out` cases
//! are scored and reported apart, and were only looked at once the finder was written.

use crate::harness::{
    app_for, counter_value, post, repo_root, shipped_state, state_for, with_judge, TempConfig,
};
use guard::backends::BackendError;
use guard::config::{load, ConfigSet, Overrides};
use guard::screens::output::lookup::{LookupModel, ScriptedModel};
use guard::screens::output::{self, OutputDecision, OutputReason, OutputStream, TurnContext};
use guard::screens::records::Records;
use guard::screens::tools::Stores;
use guard::turn::evidence::Evidence;
use serde_json::{json, Value};
use std::sync::OnceLock;

fn config() -> &'static ConfigSet {
    static C: OnceLock<ConfigSet> = OnceLock::new();
    C.get_or_init(|| match load(&repo_root(), &Overrides::default()) {
        Ok(c) => c,
        Err(e) => panic!("{e}"),
    })
}

fn product(name: &str) -> &'static guard::product::Product {
    &config().products[name]
}

fn records() -> &'static Records {
    static R: OnceLock<Records> = OnceLock::new();
    R.get_or_init(|| {
        let m = guard::obs::metrics::Registry::new(true);
        match Records::new(&m, std::sync::Arc::new(crate::harness::memory_audit())) {
            Ok(r) => r,
            Err(e) => panic!("{e}"),
        }
    })
}

/// splitmix64: deterministic case generation, and the held-out hash.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = mix(self.0);
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len() as u64) as usize]
    }
}

fn to_bengali(s: &str) -> String {
    s.chars()
        .map(|c| match c.to_digit(10) {
            Some(d) => char::from_u32(0x09E6 + d).unwrap_or(c),
            None => c,
        })
        .collect()
}

fn western(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn lakh(n: u64) -> String {
    let s = n.to_string();
    if s.len() <= 3 {
        return s;
    }
    let (head, last3) = s.split_at(s.len() - 3);
    let mut groups = Vec::new();
    let mut h = head.to_string();
    while h.len() > 2 {
        groups.insert(0, h.split_off(h.len() - 2));
    }
    groups.insert(0, h);
    format!("{},{last3}", groups.join(","))
}

/// An amount as an answer may write it (English or Bangla words around it).
fn amount_text(rng: &mut Rng, n: u64, bangla: bool) -> String {
    let lakhs = n.is_multiple_of(50_000) && n >= 100_000;
    let forms: Vec<String> = if bangla {
        let mut f = vec![
            format!("৳{}", lakh(n)),
            format!("{} টাকা", lakh(n)),
            format!("{} টাকা", western(n)),
            format!("৳ {}.00", n),
            format!("{n} টাকা"),
        ];
        if lakhs {
            let l = n as f64 / 100_000.0;
            f.push(format!("{l} লাখ টাকা"));
        }
        f
    } else {
        let mut f = vec![
            format!("৳{}", western(n)),
            format!("Tk {}", western(n)),
            format!("Tk. {n}"),
            format!("{} taka", western(n)),
            format!("BDT {}.00", western(n)),
            format!("৳{}", lakh(n)),
            format!("Tk {}", lakh(n)),
        ];
        if lakhs {
            let l = n as f64 / 100_000.0;
            f.push(format!("{l} lakh taka"));
        }
        f
    };
    rng.pick(&forms).clone()
}

/// An amount as a tool result may state it.
fn evidence_amount(rng: &mut Rng, n: u64) -> Value {
    match rng.below(4) {
        0 => json!(n),
        1 => json!(format!("{n}.00")),
        2 => json!(format!("BDT {}", western(n))),
        _ => json!(n as f64),
    }
}

struct Case {
    id: usize,
    bangla: bool,
    answer: String,
    question: String,
    results: Vec<Value>,
    /// The planted figure, canonical (none: a grounded answer).
    planted: Option<String>,
}

fn amount(rng: &mut Rng) -> u64 {
    match rng.below(4) {
        0 => 100 + rng.below(900),
        1 => (1 + rng.below(99)) * 1000 + rng.below(1000),
        2 => (1 + rng.below(30)) * 50_000,
        _ => 10_000 + rng.below(9_000_000),
    }
}

fn case(id: usize) -> Case {
    let mut rng = Rng(id as u64 ^ 0x5EED);
    let bangla = rng.below(2) == 0;
    let digits_bn = bangla && rng.below(3) != 0 || !bangla && rng.below(6) == 0;
    let balance = amount(&mut rng);
    let limit = amount(&mut rng);
    let count = 1 + rng.below(40);
    let rate = format!("{}.{}", 5 + rng.below(10), rng.below(10));
    let list: Vec<Value> = (0..count).map(|i| json!({"id": format!("T{i}")})).collect();
    let results = vec![
        json!({"tool": "wallet_balance", "content": json!({"balance": evidence_amount(&mut rng, balance), "currency": "BDT"}).to_string()}),
        json!({"tool": "transactions", "content": json!({"transactions": list}).to_string()}),
        json!({"tool": "limits", "content": json!({"daily_left": evidence_amount(&mut rng, limit), "interest_rate": rate}).to_string()}),
    ];
    let typed = 100 * (1 + rng.below(50));
    let question = match bangla {
        true => format!("আমি {typed} টাকা পাঠিয়েছিলাম, আমার ব্যালেন্স কত?"),
        false => format!("I sent {typed} taka earlier, what is my balance?"),
    };
    let mut sentences: Vec<String> = Vec::new();
    let a = amount_text(&mut rng, balance, bangla);
    let l = amount_text(&mut rng, limit, bangla);
    if bangla {
        sentences.push(format!("আপনার বর্তমান ব্যালেন্স {a}।"));
        sentences.push(format!("এই মাসে আপনি {count}টি লেনদেন করেছেন।"));
        if rng.below(2) == 0 {
            sentences.push(format!("আজ আপনি আরও {l} পাঠাতে পারবেন।"));
        }
        if rng.below(2) == 0 {
            sentences.push(format!("আপনার পাঠানো {typed} টাকা ১২ মে জমা হয়েছে।"));
        }
        if rng.below(3) == 0 {
            sentences.push(format!("সুদের হার {rate}%।"));
        }
        if rng.below(3) == 0 {
            sentences.push("সাহায্যের জন্য 16247 নম্বরে ফোন করুন।".into());
        }
    } else {
        sentences.push(format!("Your current balance is {a}."));
        sentences.push(format!("You made {count} transactions this month."));
        if rng.below(2) == 0 {
            sentences.push(format!("You can still send {l} today."));
        }
        if rng.below(2) == 0 {
            sentences.push(format!(
                "The {typed} taka you sent arrived on 12 May 2025 at 10:42."
            ));
        }
        if rng.below(3) == 0 {
            sentences.push(format!("The interest rate is {rate}%."));
        }
        if rng.below(3) == 0 {
            sentences.push("For help, call 16247.\n1. Open the app\n2. Tap Statement".into());
        }
    }
    let planted = id % 2 == 1;
    let mut planted_canonical = None;
    if planted {
        let mut p = amount(&mut rng);
        while [balance, limit, count, typed, 16247].contains(&p) {
            p += 7;
        }
        let kind = rng.below(4);
        let text = match (kind, bangla) {
            // A wrong balance instead of the real one.
            (0, _) => {
                let t = amount_text(&mut rng, p, bangla);
                sentences[0] = match bangla {
                    true => format!("আপনার বর্তমান ব্যালেন্স {t}।"),
                    false => format!("Your current balance is {t}."),
                };
                None
            }
            // A made-up rate.
            (3, true) => Some(format!("সুদের হার {}.{}%।", 16 + p % 9, p % 10)),
            (3, false) => Some(format!("The interest rate is {}.{} %.", 16 + p % 9, p % 10)),
            // A made-up count.
            (1, true) => Some(format!("আপনার {}টি অনুরোধ অপেক্ষমাণ।", p % 900 + 41)),
            (1, false) => Some(format!("You have {} pending requests.", p % 900 + 41)),
            // A made-up amount.
            (_, true) => Some(format!(
                "গতকাল আপনি {} পেয়েছেন।",
                amount_text(&mut rng, p, true)
            )),
            (_, false) => Some(format!(
                "Yesterday you received {}.",
                amount_text(&mut rng, p, false)
            )),
        };
        let canonical = match kind {
            1 => (p % 900 + 41).to_string(),
            3 if p.is_multiple_of(10) => format!("{}%", 16 + p % 9),
            3 => format!("{}.{}%", 16 + p % 9, p % 10),
            _ => p.to_string(),
        };
        // A count that collides with a real one is not a planted figure: move it.
        if kind == 1 && [count, typed].contains(&(p % 900 + 41)) {
            return case(id + 1_000_000);
        }
        // A planted figure is one no result states in any form (`19%` and a list of 19 share
        // the number): a collision is not a planted figure, so draw another case.
        let stated = inline(&results);
        let number = canonical.trim_end_matches('%').to_string();
        if stated.figures.contains(&number) || stated.figures.contains(&format!("{number}%")) {
            return case(id + 1_000_000);
        }
        if let Some(t) = text {
            let at = 1 + rng.below(sentences.len() as u64) as usize;
            sentences.insert(at.min(sentences.len()), t);
        }
        planted_canonical = Some(canonical);
    }
    let mut answer = sentences.join(" ");
    if digits_bn {
        answer = to_bengali(&answer);
    }
    Case {
        id,
        bangla,
        answer,
        question,
        results,
        planted: planted_canonical,
    }
}

fn held_out(id: usize) -> bool {
    mix(id as u64 ^ 0xC0FFEE).is_multiple_of(4)
}

fn inline(results: &[Value]) -> Evidence {
    let mut e = Evidence::default();
    for r in results {
        e.merge(&Evidence::of_text(
            r["content"].as_str().unwrap_or_default(),
        ));
    }
    e
}

async fn check(p: &guard::product::Product, c: &Case) -> output::OutputVerdict {
    let ctx = TurnContext {
        question: Some(c.question.clone()),
        evidence: Some(inline(&c.results)),
        ..TurnContext::default()
    };
    let turns = Stores::in_process(10_000);
    output::answer_turn(p, &c.answer, None, &ctx, &turns, None, records()).await
}

#[derive(Default, Debug)]
struct Score {
    planted: usize,
    caught: usize,
    grounded: usize,
    flagged: usize,
}

#[actix_web::test]
async fn generated_answers_planted_figures_are_caught_and_grounded_ones_pass() {
    let p = product("wallet-assistant");
    // [tuning, held out] × [English, Bangla]
    let mut scores: [[Score; 2]; 2] = Default::default();
    let mut misses = Vec::new();
    for id in 0..1200 {
        let c = case(id);
        let v = check(p, &c).await;
        let s = &mut scores[held_out(c.id) as usize][c.bangla as usize];
        match &c.planted {
            Some(fig) => {
                s.planted += 1;
                let caught = v.decision == OutputDecision::NeedsLookup && v.figures.contains(fig);
                if caught {
                    s.caught += 1;
                } else if !held_out(c.id) {
                    misses.push(format!(
                        "missed {fig}: {:?} -> {:?} {:?}",
                        c.answer, v.reason, v.figures
                    ));
                }
            }
            None => {
                s.grounded += 1;
                if v.decision != OutputDecision::Allow {
                    s.flagged += 1;
                    if !held_out(c.id) {
                        misses.push(format!(
                            "flagged: {:?} -> {:?} {:?}",
                            c.answer, v.reason, v.figures
                        ));
                    }
                }
            }
        }
    }
    for (part, name) in [(0, "tuning"), (1, "held-out")] {
        for (lang, l) in [(0, "en"), (1, "bn")] {
            let s = &scores[part][lang];
            eprintln!(
                "lookup suite {name} {l}: planted {}/{} caught ({:.1} %), grounded {}/{} flagged ({:.1} %)",
                s.caught,
                s.planted,
                100.0 * s.caught as f64 / s.planted.max(1) as f64,
                s.flagged,
                s.grounded,
                100.0 * s.flagged as f64 / s.grounded.max(1) as f64
            );
        }
    }
    for s in scores.iter().flatten() {
        assert!(s.planted > 50 && s.grounded > 50, "{s:?}");
        assert!(
            s.caught * 100 >= s.planted * 99,
            "{s:?}\n{}",
            misses.join("\n")
        );
        assert!(
            s.flagged * 100 <= s.grounded,
            "{s:?}\n{}",
            misses.join("\n")
        );
    }
}

#[actix_web::test]
async fn without_the_turn_the_answer_is_only_masked_as_before() {
    let p = product("wallet-assistant");
    let answer = "Your balance is Tk 5,000.";
    let before = output::screen(p, answer);
    let turns = Stores::in_process(10_000);
    let v = output::answer_turn(
        p,
        answer,
        None,
        &TurnContext::default(),
        &turns,
        None,
        records(),
    )
    .await;
    assert_eq!(v.decision, OutputDecision::Allow);
    assert_eq!(v.reason, OutputReason::Passed);
    assert_eq!(
        serde_json::to_value(&v).ok(),
        serde_json::to_value(&before).ok()
    );
}

/// A turn that called no tool: inline evidence with no results.
fn no_tool(conversation: Option<&str>) -> TurnContext {
    TurnContext {
        conversation: conversation.map(str::to_string),
        turn: conversation.map(|_| "t1".to_string()),
        question: Some("What is my balance?".into()),
        evidence: Some(Evidence::default()),
    }
}

async fn ask(
    ctx: &TurnContext,
    turns: &Stores,
    model: Option<&dyn LookupModel>,
    answer: &str,
) -> output::OutputVerdict {
    let p = product("wallet-assistant");
    output::answer_turn(p, answer, None, ctx, turns, model, records()).await
}

#[actix_web::test]
async fn no_tool_turns_ask_the_model_once_and_only_a_clear_no_keeps() {
    let answer = "Your balance is Tk 5,000.";
    let cases: Vec<(ScriptedModel, OutputReason)> = vec![
        (
            ScriptedModel::says(r#"{"records_fact": "no"}"#),
            OutputReason::LookupKept,
        ),
        (ScriptedModel::says("no"), OutputReason::LookupKept),
        (
            ScriptedModel::says(r#"{"records_fact": "yes"}"#),
            OutputReason::LookupModelYes,
        ),
        (
            ScriptedModel::says("Probably no, it looks fine"),
            OutputReason::LookupModelUnparsable,
        ),
        (ScriptedModel::says(""), OutputReason::LookupModelUnparsable),
        (
            ScriptedModel::fails(BackendError::Status(500)),
            OutputReason::LookupModelUnavailable,
        ),
        (
            ScriptedModel::fails(BackendError::CircuitOpen),
            OutputReason::LookupModelUnavailable,
        ),
    ];
    for (model, want) in cases {
        let turns = Stores::in_process(10_000);
        let v = ask(&no_tool(Some("c1")), &turns, Some(&model), answer).await;
        assert_eq!(v.reason, want, "{:?}", model.answer);
        assert_eq!(model.calls(), 1);
        if want != OutputReason::LookupKept {
            assert_eq!(v.decision, OutputDecision::NeedsLookup);
            assert_eq!(v.figures, vec!["5000"]);
            assert!(v.message.as_deref().is_some_and(|m| m.contains("5000")));
        } else {
            assert_eq!(v.decision, OutputDecision::Allow);
        }
    }
    // No model configured.
    let turns = Stores::in_process(10_000);
    let v = ask(&no_tool(Some("c1")), &turns, None, answer).await;
    assert_eq!(v.reason, OutputReason::LookupNoModel);
    assert_eq!(v.decision, OutputDecision::NeedsLookup);
}

#[actix_web::test]
async fn a_model_that_never_answers_times_out_into_needs_lookup() {
    // The product's deadline (3 s) is the only wait: the scripted model never answers, so the
    // step's timer decides; nothing here sleeps.
    let model = ScriptedModel::hangs();
    let turns = Stores::in_process(10_000);
    let v = ask(
        &no_tool(None),
        &turns,
        Some(&model),
        "You have 12 unread alerts.",
    )
    .await;
    assert_eq!(v.reason, OutputReason::LookupModelUnavailable);
    assert_eq!(v.decision, OutputDecision::NeedsLookup);
    assert_eq!(v.figures, vec!["12"]);
}

#[actix_web::test]
async fn the_question_is_asked_once_per_turn_and_never_loops() {
    let model = ScriptedModel::says("no");
    let turns = Stores::in_process(10_000);
    let ctx = no_tool(Some("conv-7"));
    let first = ask(&ctx, &turns, Some(&model), "You have 3 cards.").await;
    assert_eq!(first.reason, OutputReason::LookupKept);
    // The same answer again: the turn remembers the model's no; not asked again.
    let again = ask(&ctx, &turns, Some(&model), "You have 3 cards.").await;
    assert_eq!(again.reason, OutputReason::LookupKept);
    // Another answer in the same turn: never a second question.
    let other = ask(&ctx, &turns, Some(&model), "You have 4 cards.").await;
    assert_eq!(other.reason, OutputReason::LookupAlreadyAsked);
    assert_eq!(other.decision, OutputDecision::NeedsLookup);
    assert_eq!(model.calls(), 1);
    // A model that said yes: the rewritten answer is not asked about again either.
    let yes = ScriptedModel::says("yes");
    let ctx = no_tool(Some("conv-8"));
    assert_eq!(
        ask(&ctx, &turns, Some(&yes), "Tk 900 left.").await.reason,
        OutputReason::LookupModelYes
    );
    assert_eq!(
        ask(&ctx, &turns, Some(&yes), "Tk 900 left.").await.reason,
        OutputReason::LookupAlreadyAsked
    );
    assert_eq!(yes.calls(), 1);
    // A new turn asks again.
    let mut next = no_tool(Some("conv-7"));
    next.turn = Some("t2".into());
    assert_eq!(
        ask(&next, &turns, Some(&model), "You have 4 cards.")
            .await
            .reason,
        OutputReason::LookupKept
    );
    assert_eq!(model.calls(), 2);
    // Stateless: at most once per request.
    let stateless = ScriptedModel::says("no");
    for _ in 0..3 {
        ask(
            &no_tool(None),
            &turns,
            Some(&stateless),
            "You have 4 cards.",
        )
        .await;
    }
    assert_eq!(stateless.calls(), 3);
    // An answer with no figure, or only typed ones and constants, never asks.
    let quiet = ScriptedModel::says("yes");
    let v = ask(
        &no_tool(Some("c9")),
        &turns,
        Some(&quiet),
        "Call 16247 for help.",
    )
    .await;
    assert_eq!(v.reason, OutputReason::NoFigures);
    assert_eq!(quiet.calls(), 0);
}

/// Stream `text` in chunks of `size` characters; returns what left before the end, what left
/// at the end, and the verdict.
async fn stream(
    ctx: TurnContext,
    text: &str,
    size: usize,
) -> (String, String, output::OutputVerdict) {
    let p = product("wallet-assistant");
    let mut s = OutputStream::new(p);
    s.set_turn(p, ctx);
    let chars: Vec<char> = text.chars().collect();
    let mut early = String::new();
    for chunk in chars.chunks(size) {
        early.push_str(&s.push(&chunk.iter().collect::<String>()));
    }
    let turns = Stores::in_process(10_000);
    let (rest, v) = s.finish_turn(p, &turns, None, records(), "h").await;
    (early, rest, v)
}

fn with_results(question: &str, results: &[&str]) -> TurnContext {
    let mut e = Evidence::default();
    for r in results {
        e.merge(&Evidence::of_text(r));
    }
    TurnContext {
        question: Some(question.into()),
        evidence: Some(e),
        ..TurnContext::default()
    }
}

#[actix_web::test]
async fn a_data_question_is_held_whole_until_checked() {
    for (question, answer) in [
        (
            "How many transactions did I make?",
            "You made 3 transactions. That is all for May.",
        ),
        (
            "আমার কয়টি লেনদেন হয়েছে?",
            "আপনি ৩টি লেনদেন করেছেন। আর কিছু নেই।",
        ),
        ("show my cards", "Here they are. You have no other cards."),
    ] {
        let ctx = with_results(question, &[r#"{"tx": [1, 2, 3]}"#]);
        for size in [1, 7, 200] {
            let (early, rest, v) = stream(ctx.clone(), answer, size).await;
            assert_eq!(early, "", "{question}");
            assert_eq!(rest, answer);
            assert_eq!(
                v.decision,
                OutputDecision::Allow,
                "{question}: {:?}",
                v.reason
            );
        }
    }
    // Held and ungrounded: nothing of it ever leaves.
    let ctx = with_results("How many transactions?", &[r#"{"tx": [1, 2, 3]}"#]);
    let (early, rest, v) = stream(ctx, "You made 5 transactions.", 4).await;
    assert_eq!((early.as_str(), rest.as_str()), ("", ""));
    assert_eq!(v.decision, OutputDecision::NeedsLookup);
    assert_eq!(v.figures, vec!["5"]);
}

#[actix_web::test]
async fn sentences_stream_until_one_states_a_new_figure_and_that_one_waits() {
    let answer = "Sure, I can help with that. You asked about 500 taka. Your balance is Tk 7,250. Anything else?";
    let ctx = TurnContext {
        question: Some("I sent 500 taka, is it there?".into()),
        evidence: Some(Evidence::default()),
        ..TurnContext::default()
    };
    for size in [1, 3, 11, 400] {
        let (early, rest, v) = stream(ctx.clone(), answer, size).await;
        // The typed figure streams; the balance nobody typed waits, and with no tool behind it
        // (and no model here) never leaves.
        assert_eq!(
            early, "Sure, I can help with that. You asked about 500 taka. ",
            "size {size}"
        );
        assert_eq!(rest, "");
        assert_eq!(v.reason, OutputReason::LookupNoModel);
        assert_eq!(v.figures, vec!["7250"]);
    }
    // Grounded by the inline evidence: the rest leaves at the end, checked.
    let ctx = with_results("I sent 500 taka, is it there?", &[r#"{"balance": 7250}"#]);
    let (early, rest, v) = stream(ctx, answer, 5).await;
    assert_eq!(format!("{early}{rest}"), answer);
    assert_eq!(v.decision, OutputDecision::Allow);
    assert_eq!(v.reason, OutputReason::Grounded);
}

/// The route: inline evidence, the new decision, bad evidence, and the judge server as the
/// lookup question's model.
#[actix_web::test]
async fn the_route_checks_inline_evidence_and_refuses_bad_evidence() {
    let state = shipped_state();
    let app = app_for(state.clone()).await;
    let body = |answer: &str, content: Value| {
        json!({"product": "wallet-assistant", "text": answer, "question": "what is my balance?",
               "evidence": {"results": [{"tool": "wallet_balance", "content": content}]}})
    };
    let (status, v) = post(
        &app,
        "/v1/screen-output",
        body("Your balance is ৳5,000.00.", json!({"balance": 5000})),
    )
    .await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["decision"], "allow");
    assert_eq!(v["reason"], "grounded");
    let (_, v) = post(
        &app,
        "/v1/screen-output",
        body("Your balance is ৳8,000.", json!("balance: 5000")),
    )
    .await;
    assert_eq!(v["decision"], "needs_lookup", "{v}");
    assert_eq!(v["reason"], "ungrounded_figures");
    assert_eq!(v["figures"], json!(["8000"]));
    assert!(v["message"].as_str().is_some_and(|m| m.contains("8000")));
    // The figures are canonical, never the answer's own spelling.
    assert!(!v["figures"].to_string().contains("8,000"), "{v}");
    let n = counter_value(
        &state.metrics,
        "guard_output_lookups_total",
        &[("reason", "ungrounded_figures")],
    );
    assert!(n >= 1.0);
    for bad in [
        json!("x"),
        json!({"results": "x"}),
        json!({"results": [{"tool": "t"}]}),
        json!({"results": [1]}),
    ] {
        let (status, v) = post(
            &app,
            "/v1/screen-output",
            json!({"product": "wallet-assistant", "text": "hi", "evidence": bad}),
        )
        .await;
        assert_eq!(
            (status, v["error"]["code"].as_str()),
            (422, Some("invalid_evidence")),
            "{v}"
        );
    }
    let many: Vec<Value> = (0..300)
        .map(|_| json!({"tool": "t", "content": "1"}))
        .collect();
    let (status, v) = post(
        &app,
        "/v1/screen-output",
        json!({"product": "wallet-assistant", "text": "hi", "evidence": {"results": many}}),
    )
    .await;
    assert_eq!(
        (status, v["error"]["code"].as_str()),
        (422, Some("invalid_evidence"))
    );
}

#[actix_web::test]
async fn the_route_asks_the_products_judge_server_once_per_turn() {
    use wiremock::matchers::method;
    use wiremock::{Mock, MockServer, ResponseTemplate};
    let server = MockServer::start().await;
    let content = json!({"records_fact": "no"}).to_string();
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(
            json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]}),
        ))
        .mount(&server)
        .await;
    let url = server.uri();
    let cfg = TempConfig::new(move |name, text| {
        let judge = format!("prompt = \"judge_prompts/{name}.md\"\nurl = \"{url}/v1\"\nmodel = \"judge-model\"\ntimeout_ms = 2000\nmax_tokens = 200");
        with_judge(text, &judge)
    });
    let state = state_for(cfg.path(), Overrides::default());
    let app = app_for(state.clone()).await;
    let body = |text: &str| json!({"product": "wallet-assistant", "text": text, "conversation": "c-1", "turn": "t-1", "evidence": {"results": []}});
    let (_, v) = post(
        &app,
        "/v1/screen-output",
        body("Cash out costs 18 taka per thousand."),
    )
    .await;
    assert_eq!(v["decision"], "allow", "{v}");
    assert_eq!(v["reason"], "lookup_kept");
    let (_, v) = post(
        &app,
        "/v1/screen-output",
        body("Cash out costs 20 taka per thousand."),
    )
    .await;
    assert_eq!(v["reason"], "lookup_already_asked", "{v}");
    let requests = server.received_requests().await.unwrap_or_default();
    assert_eq!(requests.len(), 1);
    let sent: Value = serde_json::from_slice(&requests[0].body).unwrap_or_default();
    let system = sent["messages"][0]["content"].as_str().unwrap_or_default();
    assert!(
        system.contains("Lookup question"),
        "the product's lookup prompt is the system message"
    );
    let asks = counter_value(
        &state.metrics,
        "guard_output_lookup_asks_total",
        &[("outcome", "no")],
    );
    assert_eq!(asks, 1.0);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    /// Every spelling of one amount is one canonical figure, in either script.
    #[test]
    fn every_spelling_of_an_amount_is_one_figure(n in 1u64..1_000_000_000, form in 0usize..6, bn in proptest::bool::ANY) {
        let text = match form {
            0 => format!("Tk {}", western(n)),
            1 => format!("৳{}", lakh(n)),
            2 => format!("{} taka", n),
            3 => format!("BDT {}.00", western(n)),
            4 => format!("{} টাকা", lakh(n)),
            _ => format!("balance {n}"),
        };
        let text = if bn { to_bengali(&text) } else { text };
        let found: Vec<String> = guard::turn::figures::stated(&text).into_iter().map(|f| f.canonical).collect();
        proptest::prop_assert_eq!(found, vec![n.to_string()], "{}", text);
    }

    /// The finder takes any text without panicking, and its spans are char boundaries.
    #[test]
    fn any_text_is_read_without_panic(text in "[0-9০-৯,.:/% a-zA-Z৳টাকালাখ\\-\\n]{0,80}") {
        for f in guard::turn::figures::stated(&text) {
            proptest::prop_assert!(text.is_char_boundary(f.span.start) && text.is_char_boundary(f.span.end));
            proptest::prop_assert!(!f.canonical.is_empty());
        }
    }
}

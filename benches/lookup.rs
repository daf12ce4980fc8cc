//! The lookup check on a 1,000-character answer (English and Bangla, ASCII and Bengali digits,
//! 20 figures) against 10 tool results: the check alone against the turn's evidence as the
//! store keeps it, the same with the 10 results read inline (what a stateless caller sends),
//! and the whole screen (masking, then the check) for scale. Goal: the check's median < 50 µs.
//! Run: `cargo bench --bench lookup`.

mod common;
use common::config;
use guard::screens::output::{self, TurnContext};
use guard::screens::tools::Stores;
use guard::turn::evidence::Evidence;
use guard::turn::lookup::{self, Grounds};

fn main() {
    divan::main();
}

/// Ten tool results, as JSON text: balances, limits, a statement of 12 transactions, rates.
fn results() -> Vec<String> {
    (0..10)
        .map(|i| {
            let tx: Vec<serde_json::Value> = (0..12)
                .map(|k| serde_json::json!({"id": format!("T{i}{k}"), "amount": 100 * (k + 1) + i, "date": "2025-05-12"}))
                .collect();
            serde_json::json!({
                "balance": 5000 + i,
                "daily_left": format!("{}.00", 25000 + i),
                "interest_rate": 7.5,
                "transactions": tx,
                "currency": "BDT",
            })
            .to_string()
        })
        .collect()
}

/// A real-looking bilingual answer of 1,000 characters whose figures the results state.
fn answer() -> String {
    let base = "Your current balance is ৳5,003.00 and you can still send Tk 25,004 today. \
                You made 12 transactions this month; the largest was 1,209 taka on 12 May 2025. \
                আপনার বর্তমান ব্যালেন্স ৳৫,০০৫ এবং আজ আরও ২৫,০০৬ টাকা পাঠাতে পারবেন। \
                সুদের হার ৭.৫%। এই মাসে আপনি ১২টি লেনদেন করেছেন। For help call 16247.\n\
                1. Open the app\n2. Tap Statement\n";
    base.repeat(4).chars().take(1000).collect()
}

fn evidence(results: &[String]) -> Evidence {
    let mut e = Evidence::default();
    for r in results {
        e.merge(&Evidence::of_text(r));
    }
    e
}

#[divan::bench]
fn check_1000_chars_10_results_stored(bencher: divan::Bencher) {
    let text = answer();
    let e = evidence(&results());
    let p = &config().products["wallet-assistant"];
    let question = "what is my balance and how many transactions?";
    let grounds = Grounds::new(&e, Some(question), &p.lookup.constants);
    assert!(lookup::ungrounded(&text, &grounds).0.is_empty());
    bencher.bench(|| lookup::ungrounded(divan::black_box(&text), &grounds));
}

#[divan::bench]
fn check_1000_chars_10_results_inline(bencher: divan::Bencher) {
    let text = answer();
    let results = results();
    let p = &config().products["wallet-assistant"];
    let question = "what is my balance and how many transactions?";
    bencher.bench(|| {
        let e = evidence(divan::black_box(&results));
        let grounds = Grounds::new(&e, Some(question), &p.lookup.constants);
        lookup::ungrounded(divan::black_box(&text), &grounds)
            .0
            .len()
    });
}

/// The masking alone on the same answer, for the ratio: what the lookup adds to the screen.
#[divan::bench]
fn mask_only_1000_chars(bencher: divan::Bencher) {
    let text = answer();
    let p = &config().products["wallet-assistant"];
    bencher.bench(|| output::screen(p, divan::black_box(&text)));
}

/// The whole output screen with the turn: masking, then the lookup check (no model: tools
/// were called).
#[divan::bench]
fn screen_with_lookup_1000_chars_10_results(bencher: divan::Bencher) {
    let text = answer();
    let p = &config().products["wallet-assistant"];
    let ctx = TurnContext {
        question: Some("what is my balance?".into()),
        evidence: Some(evidence(&results())),
        ..TurnContext::default()
    };
    let turns = Stores::in_process(10_000);
    let metrics = guard::obs::metrics::Registry::new(false);
    let audit = std::sync::Arc::new(guard::obs::audit::AuditLog::new(
        None,
        guard::obs::audit::AuditSink::Off,
    ));
    let records = match guard::screens::records::Records::new(&metrics, audit) {
        Ok(r) => r,
        Err(e) => panic!("{e}"),
    };
    let rt = match tokio::runtime::Builder::new_current_thread().build() {
        Ok(rt) => rt,
        Err(e) => panic!("{e}"),
    };
    bencher.bench(|| {
        rt.block_on(output::answer_turn(
            p,
            divan::black_box(&text),
            None,
            &ctx,
            &turns,
            None,
            &records,
        ))
    });
}

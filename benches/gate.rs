//! While the agent works: the tool-call gate deciding a round of 12 calls (in-process state, and
//! Redis on loopback when `redis-server` is installed: the bench starts its own), the cost of
//! reading its body strictly (duplicate keys, call shapes) against serde_json's plain parse, and
//! `/v1/screen-context` on 5 documents of 1,000 characters with the embedded guard model.
//! Run: `cargo bench --bench gate`.

mod common;
use common::config;
use guard::screens::tools::{decide, ProposedCall, Round, Stores};
use serde_json::json;
use std::sync::atomic::{AtomicU64, Ordering};

fn main() {
    divan::main();
}

/// A realistic round for the wallet assistant: reads, a duplicate, transfers under, over the
/// approval threshold and over the limit, an irreversible call, an outbound message.
fn round(conversation: String) -> Round {
    round_from(conversation, "01711000000")
}

/// [`round`]'s calls as `(tool, args)`.
fn calls(w: &str) -> Vec<(&'static str, serde_json::Value)> {
    vec![
        ("get_balance", json!({"wallet": w})),
        ("get_balance", json!({"wallet": w})),
        (
            "list_transactions",
            json!({"wallet": w, "count": 20, "from": "2026-09-01", "to": "2026-10-01"}),
        ),
        (
            "list_transactions",
            json!({"wallet": w, "count": 50, "from": "2026-10-01", "to": "2026-11-01"}),
        ),
        (
            "send_money",
            json!({"wallet": w, "to": "01811000001", "amount": 500}),
        ),
        (
            "send_money",
            json!({"wallet": w, "to": "01811000002", "amount": 20000}),
        ),
        (
            "send_money",
            json!({"wallet": w, "to": "01811000003", "amount": 60000}),
        ),
        (
            "pay_bill",
            json!({"wallet": w, "biller": "DESCO", "amount": 1500}),
        ),
        (
            "mobile_recharge",
            json!({"wallet": w, "number": "01911000000", "amount": 100}),
        ),
        ("block_wallet", json!({"wallet": w})),
        ("close_wallet", json!({"wallet": w})),
        ("send_sms", json!({"wallet": w, "template": "receipt"})),
    ]
}

/// [`round`] from another wallet: with a new wallet every round, every window the round is
/// counted in starts empty, so every call takes the longest path (counted everywhere).
fn round_from(conversation: String, w: &str) -> Round {
    let calls = calls(w);
    // The signed-in customer owns the wallet: every call takes the entitlement check and goes
    // on, as a real turn's do.
    let caller = guard::screens::caller::Caller::from_json(Some(
        json!({"id": "bench", "records": {"wallet": [w]}}),
    ))
    .ok()
    .flatten();
    Round {
        conversation,
        turn: "1".into(),
        caller,
        calls: calls
            .into_iter()
            .enumerate()
            .map(|(i, (tool, args))| ProposedCall {
                id: Some(format!("call_{i}")),
                tool: Some(tool.into()),
                args: Ok(args),
                ambiguity: None,
            })
            .collect(),
    }
}

fn runtime() -> tokio::runtime::Runtime {
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => panic!("{e}"),
    }
}

static CONVERSATION: AtomicU64 = AtomicU64::new(0);

fn next_conversation() -> String {
    format!("bench-{}", CONVERSATION.fetch_add(1, Ordering::Relaxed))
}

#[divan::bench]
fn round_of_12_in_process(bencher: divan::Bencher) {
    let p = &config().products["wallet-assistant"];
    let rt = runtime();
    let stores = Stores {
        memory: guard::screens::tools::store::MemoryStore::new(
            guard::screens::tools::MEMORY_STORE_KEYS,
        ),
        redis: None,
    };
    bencher
        .with_inputs(|| round(next_conversation()))
        .bench_local_values(|r| {
            rt.block_on(decide(
                &p.name,
                &p.config_rev,
                &p.tools,
                &stores,
                r,
                guard::screens::tools::now_ms(),
            ))
        });
}

/// [`round_of_12_in_process`] with per-tool health off (`failures = 0`): side by side, the
/// cost of reading every tool's health window in the round.
#[divan::bench]
fn round_of_12_in_process_health_off(bencher: divan::Bencher) {
    let p = &config().products["wallet-assistant"];
    let mut policy = (*p.tools).clone();
    policy.health.failures = 0;
    let rt = runtime();
    let stores = Stores {
        memory: guard::screens::tools::store::MemoryStore::new(
            guard::screens::tools::MEMORY_STORE_KEYS,
        ),
        redis: None,
    };
    bencher
        .with_inputs(|| round(next_conversation()))
        .bench_local_values(|r| {
            rt.block_on(decide(
                &p.name,
                &p.config_rev,
                &policy,
                &stores,
                r,
                guard::screens::tools::now_ms(),
            ))
        });
}

/// Ten tool results of about 1,000 characters: their evidence (figures and identifiers).
fn ten_results() -> Vec<String> {
    (0..10)
        .map(|i| {
            let line = format!(
                "{i}. 2026-11-{:02} sent ৳{},{:03}.00 to 0181100{i:04}, fee 5.50, balance 12,{i}00.00 BDT; ref TX{i}9{i}3. ",
                i + 1,
                i + 1,
                i * 7
            );
            line.repeat(1000 / line.len() + 1)
        })
        .collect()
}

#[divan::bench]
fn evidence_of_10_results_of_1000_chars(bencher: divan::Bencher) {
    let texts = ten_results();
    bencher.bench_local(|| {
        let mut e = guard::turn::evidence::Evidence::default();
        for t in &texts {
            e.merge(&guard::turn::evidence::Evidence::of_text(divan::black_box(
                t,
            )));
        }
        e
    });
}

/// The state step of `/v1/tool-results` in process: 10 results' evidence added to a fresh
/// turn, ids looked up, one failure counted, the product's health read.
#[divan::bench]
fn keep_10_results_in_process(bencher: divan::Bencher) {
    use guard::screens::tools::turn::ResultsBatch;
    let p = &config().products["wallet-assistant"];
    let rt = runtime();
    let stores = Stores {
        memory: guard::screens::tools::store::MemoryStore::new(
            guard::screens::tools::MEMORY_STORE_KEYS,
        ),
        redis: None,
    };
    let mut evidence = guard::turn::evidence::Evidence::default();
    for t in ten_results() {
        evidence.merge(&guard::turn::evidence::Evidence::of_text(&t));
    }
    bencher
        .with_inputs(|| ResultsBatch {
            conversation: next_conversation(),
            turn: "1".into(),
            ids: (0..10).map(|i| format!("c{i}")).collect(),
            evidence: evidence.clone(),
            failures: vec!["send_sms".into()],
        })
        .bench_local_values(|b| {
            rt.block_on(stores.keep_results(&p.tools, &p.name, &b, guard::screens::tools::now_ms()))
        });
}

#[divan::bench]
fn round_of_12_in_process_fresh_wallet(bencher: divan::Bencher) {
    let p = &config().products["wallet-assistant"];
    let rt = runtime();
    let stores = Stores {
        memory: guard::screens::tools::store::MemoryStore::new(
            guard::screens::tools::MEMORY_STORE_KEYS,
        ),
        redis: None,
    };
    bencher
        .with_inputs(|| {
            let n = CONVERSATION.fetch_add(1, Ordering::Relaxed);
            round_from(format!("bench-{n}"), &format!("017{:08}", n % 100_000_000))
        })
        .bench_local_values(|r| {
            rt.block_on(decide(
                &p.name,
                &p.config_rev,
                &p.tools,
                &stores,
                r,
                guard::screens::tools::now_ms(),
            ))
        });
}

/// The same round as the route's body: `{product, conversation, turn, calls: [{id, tool, args}]}`.
fn body(conversation: &str) -> String {
    let calls: Vec<serde_json::Value> = calls("01711000000")
        .into_iter()
        .enumerate()
        .map(|(i, (tool, args))| json!({"id": format!("call_{i}"), "tool": tool, "args": args}))
        .collect();
    json!({"product": "wallet-assistant", "conversation": conversation, "turn": "1", "calls": calls})
        .to_string()
}

/// What refusing duplicate keys costs: the body of a round of 12 parsed by serde_json ...
#[divan::bench]
fn body_of_12_serde_json(bencher: divan::Bencher) {
    let text = body("bench");
    bencher.bench_local(|| {
        serde_json::from_slice::<serde_json::Value>(divan::black_box(text.as_bytes()))
    });
}

/// ... by the gate's duplicate-detecting parse ...
#[divan::bench]
fn body_of_12_strict(bencher: divan::Bencher) {
    let text = body("bench");
    bencher.bench_local(|| {
        guard::screens::tools::wire::parse_strict(divan::black_box(text.as_bytes()))
    });
}

/// ... and by it with its calls read in their one shape.
#[divan::bench]
fn body_of_12_strict_and_shapes(bencher: divan::Bencher) {
    use guard::screens::tools::wire;
    let text = body("bench");
    bencher.bench_local(|| {
        let v = wire::parse_strict(divan::black_box(text.as_bytes()));
        let calls = v
            .ok()
            .and_then(|mut v| v.get_mut("calls").map(serde_json::Value::take));
        match calls {
            Some(serde_json::Value::Array(calls)) => calls
                .into_iter()
                .enumerate()
                .map(|(i, c)| wire::read_call(c, i))
                .filter(Result::is_ok)
                .count(),
            _ => 0,
        }
    });
}

#[divan::bench]
fn round_of_12_redis_loopback(bencher: divan::Bencher) {
    let Some(redis) = Redis::start() else {
        eprintln!("round_of_12_redis_loopback: redis-server not installed; skipped");
        return;
    };
    let p = &config().products["wallet-assistant"];
    let mut tools = (*p.tools).clone();
    tools.store = guard::screens::tools::policy::StoreKind::Redis;
    let rt = runtime();
    let stores = match Stores::with_redis(&redis.url()) {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    };
    // Connect and load the script before timing.
    let _ = rt.block_on(decide(
        &p.name,
        &p.config_rev,
        &tools,
        &stores,
        round(next_conversation()),
        0,
    ));
    bencher
        .with_inputs(|| round(next_conversation()))
        .bench_local_values(|r| rt.block_on(decide(&p.name, &p.config_rev, &tools, &stores, r, 0)));
}

#[divan::bench]
fn screen_context_5_docs_of_1000_chars(bencher: divan::Bencher) {
    let p = &config().products["wallet-assistant"];
    let metrics = match guard::screens::input::records::InputMetrics::with_recording(true) {
        Ok(m) => m,
        Err(e) => panic!("{e}"),
    };
    let base = "To send money, open the app, choose Send Money, enter the number and the amount, \
                then confirm with your PIN. Fees: free up to 25,000 taka a month, then 0.5%. \
                বিকাশ অ্যাপে সেন্ড মানি বেছে নিন, নম্বর ও টাকার পরিমাণ দিন, তারপর পিন দিয়ে নিশ্চিত করুন। ";
    let docs: Vec<guard::screens::context::Document> = (0..5)
        .map(|i| guard::screens::context::Document {
            id: Some(format!("doc-{i}")),
            text: format!("{i} {}", base.repeat(6))
                .chars()
                .take(1000)
                .collect(),
            owner: None,
        })
        .collect();
    let rt = runtime();
    bencher.bench_local(|| {
        rt.block_on(guard::screens::context::screen(
            p,
            docs.clone(),
            None,
            &metrics,
        ))
    });
}

/// A `redis-server` on a free loopback port for the length of the bench.
struct Redis {
    child: std::process::Child,
    port: u16,
}

impl Redis {
    fn start() -> Option<Self> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .ok()?
            .local_addr()
            .ok()?
            .port();
        let child = std::process::Command::new("redis-server")
            .args([
                "--port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .stdout(std::process::Stdio::null())
            .spawn()
            .ok()?;
        for _ in 0..200 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Some(Redis { child, port });
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        None
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

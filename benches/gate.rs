//! While the agent works: the tool-call gate deciding a round of 12 calls (in-process state, and
//! Redis on loopback when `redis-server` is installed: the bench starts its own), and
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
    let w = "01711000000";
    let calls = vec![
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
    ];
    Round {
        conversation,
        turn: "1".into(),
        calls: calls
            .into_iter()
            .enumerate()
            .map(|(i, (tool, args))| ProposedCall {
                id: Some(format!("call_{i}")),
                tool: Some(tool.into()),
                args: Ok(args),
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

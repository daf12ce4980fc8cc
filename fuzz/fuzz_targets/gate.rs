//! The tool-call gate on rounds built from arbitrary JSON: every call gets exactly one
//! decision, and never more than the cap run or are reused.
#![no_main]
use guard::screens::tools::{decide, Decision, ProposedCall, Round, Stores};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

const POLICY: &str = r#"
[tool_gate]
max_calls_per_round = 4
record_arg = "customer_id"
[tools.get_balance]
[tools.send_money]
max_amount_bdt = 50000
approval_above_bdt = 10000
[tools.list]
max_count = 10
max_range_days = 30
[[velocity]]
id = "v"
scope = "conversation"
count = "records"
window_seconds = 60
max = 2
"#;

fn setup() -> &'static (guard::screens::tools::policy::ToolPolicy, Stores, tokio::runtime::Runtime) {
    static S: OnceLock<(guard::screens::tools::policy::ToolPolicy, Stores, tokio::runtime::Runtime)> =
        OnceLock::new();
    S.get_or_init(|| {
        let policy = match guard::screens::tools::policy::ToolPolicy::from_toml(POLICY) {
            Ok(p) => p,
            Err(e) => panic!("{e:?}"),
        };
        let stores = Stores {
            memory: guard::screens::tools::store::MemoryStore::new(100_000),
            redis: None,
        };
        let rt = match tokio::runtime::Builder::new_current_thread().build() {
            Ok(r) => r,
            Err(e) => panic!("{e}"),
        };
        (policy, stores, rt)
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(serde_json::Value::Array(items)) = serde_json::from_slice::<serde_json::Value>(data)
    else {
        return;
    };
    let (policy, stores, rt) = setup();
    let calls: Vec<ProposedCall> = items
        .into_iter()
        .map(|v| ProposedCall {
            id: v.get("id").and_then(|x| x.as_str()).map(str::to_string),
            tool: v.get("tool").and_then(|x| x.as_str()).map(str::to_string),
            args: Ok(v.get("args").cloned().unwrap_or(serde_json::Value::Null)),
            ambiguity: None,
        })
        .collect();
    let n = calls.len();
    let round = Round {
        conversation: "fuzz".into(),
        turn: "1".into(),
        calls,
    };
    let v = rt.block_on(decide("p", "rev", policy, stores, round, 0));
    assert_eq!(v.decisions.len(), n);
    let admitted = v
        .decisions
        .iter()
        .filter(|d| matches!(d.decision, Decision::Run | Decision::Reuse | Decision::NeedsApproval))
        .count();
    assert!(admitted <= policy.max_calls_per_round);
});

//! The tool-call gate on rounds built from arbitrary JSON, read as the route reads them (the
//! duplicate-detecting parse, one shape per call): the strict parse agrees with serde_json
//! whenever it accepts, every call gets exactly one decision, and never more than the cap run
//! or are reused.
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
    use guard::screens::tools::wire;
    // The strict parse reads what serde_json reads, or finds a key given twice.
    let strict = wire::parse_strict(data);
    let plain = serde_json::from_slice::<serde_json::Value>(data);
    match (&strict, &plain) {
        (Ok(a), Ok(b)) => assert_eq!(a, b),
        (Ok(_), Err(_)) => panic!("the strict parse read what serde_json refused"),
        _ => {}
    }
    let Ok(serde_json::Value::Array(items)) = strict else {
        return;
    };
    let (policy, stores, rt) = setup();
    // Each item read in its one shape, as the route reads it.
    let Ok(calls) = items
        .into_iter()
        .enumerate()
        .map(|(i, v)| wire::read_call(v, i))
        .collect::<Result<Vec<ProposedCall>, _>>()
    else {
        return;
    };
    let n = calls.len();
    let round = Round {
        conversation: "fuzz".into(),
        turn: "1".into(),
        calls,
        caller: None,
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

//! The whole screen (every stage, embedded guard, shipped configuration) of arbitrary text,
//! for both products: a verdict every time, never a panic (a crashed stage would show as
//! `check_failed`, which this target also refuses).
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

fn setup() -> &'static (guard::config::ConfigSet, guard::screens::input::records::InputMetrics, tokio::runtime::Runtime) {
    static S: OnceLock<(guard::config::ConfigSet, guard::screens::input::records::InputMetrics, tokio::runtime::Runtime)> =
        OnceLock::new();
    S.get_or_init(|| {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let config = match guard::config::load(&root, &Default::default()) {
            Ok(c) => c,
            Err(e) => panic!("{e}"),
        };
        let metrics = match guard::screens::input::records::InputMetrics::with_recording(false) {
            Ok(m) => m,
            Err(e) => panic!("{e}"),
        };
        let rt = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
            Ok(r) => r,
            Err(e) => panic!("{e}"),
        };
        (config, metrics, rt)
    })
}

fuzz_target!(|text: &str| {
    let (config, metrics, rt) = setup();
    let q = guard::screens::input::question::Question::new(text);
    for product in config.products.values() {
        let v = rt.block_on(guard::screens::input::pipeline::run_stages(product, &q, metrics));
        assert_ne!(v.reason, guard::verdict::Reason::CheckFailed, "a stage crashed");
    }
});

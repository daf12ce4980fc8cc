//! A friendly sentence never hides a harmful one: every harmful case of the `data-*` eval suites
//! that blocks on its own still blocks with benign sentences before it, after it, or both
//! (`tests/evals/padding/`, the tuning side; the held-out side is measured by the
//! `padded-*-heldout` suites). The variants are generated, with a fixed seed so that every run
//! tries the same ones.

use guard::eval::padding::{Padding, Position};
use guard::verdict::Decision;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};
use std::sync::OnceLock;

struct Fixture {
    config: guard::config::ConfigSet,
    padding: Padding,
    /// (product, text) of every harmful case that blocks without padding.
    harmful: Vec<(String, String)>,
    runtime: tokio::runtime::Runtime,
    metrics: guard::obs::metrics::Metrics,
}

impl Fixture {
    fn screen(&self, product: &str, text: &str) -> guard::verdict::Verdict {
        let p = self
            .config
            .product(product)
            .unwrap_or_else(|| panic!("no product {product}"));
        let q = guard::screens::input::question::Question::new(text);
        self.runtime
            .block_on(guard::screens::input::pipeline::run_stages(
                p,
                &q,
                &self.metrics,
            ))
    }
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let root = crate::harness::repo_root();
        let config =
            guard::config::load(&root, &Default::default()).unwrap_or_else(|e| panic!("{e}"));
        let padding = Padding::load(&root.join("tests/evals/padding"))
            .unwrap_or_else(|e| panic!("{e}"))
            .side(false);
        assert!(padding.is_complete());
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap_or_else(|e| panic!("{e}"));
        let metrics =
            guard::obs::metrics::Metrics::with_recording(false).unwrap_or_else(|e| panic!("{e}"));
        let mut fixture = Fixture {
            config,
            padding,
            harmful: Vec::new(),
            runtime,
            metrics,
        };
        let mut files: Vec<_> = std::fs::read_dir(root.join("tests/evals"))
            .unwrap_or_else(|e| panic!("{e}"))
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("data-") && n.ends_with(".yaml"))
            })
            .collect();
        files.sort();
        let mut harmful = Vec::new();
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{e}"));
            let suite: serde_yaml::Value =
                serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
            let product = suite["product"].as_str().unwrap_or_default().to_string();
            for case in suite["cases"].as_sequence().into_iter().flatten() {
                if case["expect"]["decision"].as_str() != Some("block") {
                    continue;
                }
                let text = case["text"].as_str().unwrap_or_default().to_string();
                if fixture.screen(&product, &text).decision == Decision::Block {
                    harmful.push((product.clone(), text));
                }
            }
        }
        fixture.harmful = harmful;
        fixture
    })
}

#[test]
fn the_suites_have_harmful_cases_that_block() {
    // The property below is only as strong as the cases it draws from.
    assert!(
        fixture().harmful.len() >= 250,
        "{}",
        fixture().harmful.len()
    );
}

proptest! {
    #![proptest_config(Config { cases: 600, rng_seed: RngSeed::Fixed(25), ..Config::default() })]

    #[test]
    fn benign_sentences_around_a_harmful_case_never_let_it_through(
        case in any::<prop::sample::Index>(),
        position in prop::sample::select(Position::ALL.to_vec()),
        pick in any::<u64>(),
    ) {
        let f = fixture();
        let (product, text) = &f.harmful[case.index(f.harmful.len())];
        let padded = f.padding.pad(text, position, pick);
        let v = f.screen(product, &padded);
        prop_assert_eq!(v.decision, Decision::Block, "{:?} ({}) passed: {:?}", padded, position.as_str(), v.trace);
    }
}

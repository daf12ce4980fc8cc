//! The policy rules under disguise, tested on what generators make: every rule example of both
//! products (the examples each rule is checked against when it loads) with one character
//! disguised still matches its rule, and the generated ordinary-work suites under the same
//! perturbations are not blocked by a rule.

use crate::forms::perturb::{perturb, Rng, ALL};
use guard::screens::input::question::Question;
use guard::screens::input::stages::StageEval;
use proptest::prelude::*;
use std::sync::OnceLock;

const PRODUCTS: [&str; 2] = ["bank-operator", "wallet-assistant"];

fn config() -> &'static guard::config::ConfigSet {
    crate::harness::shipped_config()
}

/// (product, rule id, example) for every example of every rule of both policy files.
fn rule_examples() -> &'static Vec<(String, String, String)> {
    static C: OnceLock<Vec<(String, String, String)>> = OnceLock::new();
    C.get_or_init(|| {
        let mut out = Vec::new();
        for product in PRODUCTS {
            let root = crate::harness::repo_root();
            let read = |rel: &str| -> toml::Table {
                let text =
                    std::fs::read_to_string(root.join(rel)).unwrap_or_else(|e| panic!("{e}"));
                toml::from_str(&text).unwrap_or_else(|e| panic!("{e}"))
            };
            let doc = read(&format!("policies/{product}.toml"));
            // The product's own rules and those of the files it includes (policies/harm.toml).
            let included: Vec<toml::Table> = doc
                .get("include")
                .and_then(|i| i.as_array())
                .into_iter()
                .flatten()
                .filter_map(|i| i.as_str())
                .map(read)
                .collect();
            let rules = std::iter::once(&doc).chain(&included).flat_map(|d| {
                d.get("rule")
                    .and_then(|r| r.as_array())
                    .into_iter()
                    .flatten()
            });
            for rule in rules {
                let id = rule["id"].as_str().unwrap_or_default().to_string();
                for e in rule
                    .get("examples")
                    .and_then(|e| e.as_array())
                    .into_iter()
                    .flatten()
                {
                    if let Some(e) = e.as_str() {
                        out.push((product.to_string(), id.clone(), e.to_string()));
                    }
                }
            }
        }
        out
    })
}

/// The ordinary-work questions of the generated suites (their tuning part) and the hand
/// lists, which no rule blocks as written.
fn ordinary() -> &'static Vec<(String, String)> {
    static C: OnceLock<Vec<(String, String)>> = OnceLock::new();
    C.get_or_init(|| {
        let mut out = Vec::new();
        for (product, suites) in [
            (
                "bank-operator",
                [
                    "policy-bank-operator-work-gen",
                    "policy-bank-operator-allow",
                ],
            ),
            (
                "wallet-assistant",
                ["policy-wallet-work-gen", "policy-wallet-allow"],
            ),
        ] {
            for (_, _, t, _) in crate::harness::suite_cases(&suites) {
                if !blocked_by_a_rule(product, &t) {
                    out.push((product.to_string(), t));
                }
            }
        }
        out
    })
}

fn rules_hit(product: &str, text: &str) -> Vec<String> {
    let policy = &config().products[product].input.policy;
    policy
        .hits(&Question::new(text))
        .into_iter()
        .map(|h| policy.rules[h.rule].id.clone())
        .collect()
}

fn blocked_by_a_rule(product: &str, text: &str) -> bool {
    let policy = &config().products[product].input.policy;
    matches!(policy.stage(&Question::new(text)), StageEval::Block { .. })
}

fn perturbed(text: &str, seed: u64, kind: usize) -> Option<String> {
    let mut rng = Rng::from_seed(seed);
    let kind = ALL[kind % ALL.len()];
    let t = perturb(text, kind, &mut rng).filter(|t| t != text)?;
    read_back(text, &t).then_some(t)
}

/// The disguises the skeleton undoes: it reads the disguised text as it reads the original.
/// Reading them back is the skeleton's part (its own property tests, `tests/it/forms.rs`);
/// matching what it reads is the rules' part, tested here. Some draws have no one reading: a
/// word spelled out next to a one-letter word ("Can I r e s e t a PIN" joins into "ireseta"),
/// or a capital `Ī` for `l`, which the skeleton reads as `i` as it reads ASCII `I`.
fn read_back(original: &str, disguised: &str) -> bool {
    guard::text::skeleton(original).as_str() == guard::text::skeleton(disguised).as_str()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(768))]

    /// A rule's example with one character disguised (a look-alike from the confusables
    /// data, a symbol or digit for a letter, punctuation or an invisible inside a word, a stray
    /// mark, a spelled-out word, a Bengali sign) still matches that rule.
    #[test]
    fn a_disguised_example_still_matches_its_rule(i in any::<usize>(), seed in any::<u64>(), kind in 0..7usize) {
        let cases = rule_examples();
        let (product, rule, text) = &cases[i % cases.len()];
        if let Some(t) = perturbed(text, seed, kind) {
            let hit = rules_hit(product, &t);
            prop_assert!(hit.contains(rule), "{} {}: {:?} from {:?} hits {:?}", product, rule, t, text, hit);
        }
    }

    /// The same perturbations of ordinary work never make a rule block it.
    #[test]
    fn a_disguised_character_does_not_make_ordinary_work_abuse(i in any::<usize>(), seed in any::<u64>(), kind in 0..7usize) {
        let cases = ordinary();
        let (product, text) = &cases[i % cases.len()];
        if let Some(t) = perturbed(text, seed, kind) {
            prop_assert!(!blocked_by_a_rule(product, &t), "{:?} from {:?}: {:?}", t, text, rules_hit(product, &t));
        }
    }
}

/// Every rule has examples, and the generators reach them: each kind of perturbation applies
/// to some example, so the property above is not vacuous.
#[test]
fn every_rule_has_examples_the_perturbations_reach() {
    let cases = rule_examples();
    for product in PRODUCTS {
        let policy = &config().products[product].input.policy;
        for rule in &policy.rules {
            assert!(
                cases.iter().any(|(p, r, _)| p == product && r == &rule.id),
                "{product} {} has no example",
                rule.id
            );
        }
    }
    for (kind, name) in ALL.iter().enumerate() {
        let applied = cases
            .iter()
            .enumerate()
            .filter(|(i, (_, _, t))| perturbed(t, *i as u64 + 1, kind).is_some())
            .count();
        assert!(applied > 0, "{name:?} applies to no example");
    }
    assert!(
        ordinary().len() >= 400,
        "{} ordinary questions",
        ordinary().len()
    );
    // And most draws are disguises the skeleton reads back, so few are set aside.
    let (mut drawn, mut kept) = (0, 0);
    for (i, (_, _, t)) in cases.iter().enumerate() {
        for kind in ALL {
            let mut rng = Rng::from_seed(i as u64 * 7 + kind as u64 + 1);
            if let Some(d) = perturb(t, kind, &mut rng).filter(|d| d != t) {
                drawn += 1;
                kept += usize::from(read_back(t, &d));
            }
        }
    }
    assert!(kept * 10 >= drawn * 8, "{kept} of {drawn} draws read back");
}

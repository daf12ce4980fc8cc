//! Disguised words and the signature families, tested on what generators make rather than on
//! listed examples: the skeleton's invariants on arbitrary text, and every signature-stage
//! block and pass of the eval suites under random perturbations drawn from Unicode's data.

#[path = "../../examples/support/perturb.rs"]
pub(crate) mod perturb;

use crate::harness::suite_cases;
use guard::screens::input::question::Question;
use guard::screens::input::stages::StageEval;
use guard::text::skeleton;
use perturb::{perturb, Rng, ALL};
use proptest::prelude::*;
use std::sync::OnceLock;

fn config() -> &'static guard::config::ConfigSet {
    crate::harness::shipped_config()
}

fn blocked_by_signatures(product: &str, text: &str) -> bool {
    let p = &config().products[product];
    let q = Question::new(text).with_english(p.input.lexicon.clone());
    matches!(p.input.signatures.stage(&q), StageEval::Block { .. })
}

/// Cases the signature stage blocks as written (the ones its mechanisms are for).
fn signature_blocks() -> &'static Vec<String> {
    static C: OnceLock<Vec<String>> = OnceLock::new();
    C.get_or_init(|| {
        suite_cases(&[
            "injection-direct-en",
            "injection-bn",
            "injection-banglish",
            "injection-obfuscated",
            "redteam-attacks",
            "data-xsafety-hijack-en",
            "data-xsafety-hijack-bn",
            "data-jailbreak-inthewild",
        ])
        .into_iter()
        .filter(|c| c.3 == "block" && blocked_by_signatures("wallet-assistant", &c.2))
        .map(|c| c.2)
        .collect()
    })
}

/// Ordinary questions the signature stage lets through as written.
fn ordinary() -> &'static Vec<(String, String)> {
    static C: OnceLock<Vec<(String, String)>> = OnceLock::new();
    C.get_or_init(|| {
        let mut out = Vec::new();
        for (product, files) in [
            (
                "wallet-assistant",
                &[
                    "wallet-must-allow",
                    "policy-wallet-allow",
                    "redteam-must-allow",
                    "data-banking77",
                    "data-notinject",
                    "language-chat-english",
                    "language-chat-bangla",
                ][..],
            ),
            (
                "bank-operator",
                &["bank-operator-must-allow", "policy-bank-operator-allow"][..],
            ),
        ] {
            for c in suite_cases(files) {
                if c.3 == "allow" && !blocked_by_signatures(product, &c.2) {
                    out.push((product.to_string(), c.2));
                }
            }
        }
        out
    })
}

/// One perturbation of the text drawn from the seed, if any applies.
fn perturbed(text: &str, seed: u64, kind: usize) -> Option<String> {
    let mut rng = Rng::from_seed(seed);
    perturb(text, ALL[kind % ALL.len()], &mut rng).filter(|t| t != text)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Every block of the signature stage still blocks with one character disguised: a
    /// look-alike from the confusables data, a symbol or digit for a letter, punctuation or
    /// an invisible inside a word, a stray mark, a spelled-out word, a Bengali sign.
    #[test]
    fn a_disguised_character_does_not_unblock(i in any::<usize>(), seed in any::<u64>(), kind in 0..7usize) {
        let cases = signature_blocks();
        prop_assume!(!cases.is_empty());
        let text = &cases[i % cases.len()];
        if let Some(t) = perturbed(text, seed, kind) {
            prop_assert!(blocked_by_signatures("wallet-assistant", &t), "{:?} from {:?}", t, text);
        }
    }

    /// The same perturbations of ordinary questions never make the signature stage block.
    #[test]
    fn a_disguised_character_does_not_block_ordinary_work(i in any::<usize>(), seed in any::<u64>(), kind in 0..7usize) {
        let cases = ordinary();
        prop_assume!(!cases.is_empty());
        let (product, text) = &cases[i % cases.len()];
        if let Some(t) = perturbed(text, seed, kind) {
            prop_assert!(!blocked_by_signatures(product, &t), "{:?} from {:?}", t, text);
        }
    }

    /// The skeleton of any text: lower-case words split by single spaces, no invisibles, and
    /// an offset map that points into the source, never backwards.
    #[test]
    fn the_skeleton_is_well_formed(s in any::<String>()) {
        let sk = skeleton(&s);
        let t = sk.as_str();
        prop_assert!(!t.starts_with(' ') && !t.ends_with(' ') && !t.contains("  "), "{:?}", t);
        prop_assert!(!t.chars().any(|c| c.is_ascii_uppercase() || guard::text::is_invisible(c)), "{:?}", t);
        let mut last = 0;
        for at in 0..=t.len() {
            let o = sk.source_offset(at);
            prop_assert!(o <= s.len() && s.is_char_boundary(o) && o >= last);
            last = o;
        }
        if !t.is_empty() {
            let r = sk.source_range(&s, 0..t.len());
            prop_assert!(r.start <= r.end && r.end <= s.len());
        }
    }
}

/// The generators make what they claim: over every signature block, each kind of
/// perturbation applies to some cases, and the look-alikes come from the data (characters
/// outside ASCII).
#[test]
fn the_perturbations_apply() {
    let cases = signature_blocks();
    assert!(cases.len() >= 60, "{} cases", cases.len());
    for (kind, name) in ALL.iter().enumerate() {
        let applied = cases
            .iter()
            .enumerate()
            .filter(|(i, t)| perturbed(t, *i as u64 + 1, kind).is_some())
            .count();
        assert!(applied > 0, "{name:?} applies to no case");
    }
    let look_alike = cases
        .iter()
        .find_map(|t| perturbed(t, 7, 0))
        .unwrap_or_default();
    assert!(!look_alike.is_ascii(), "{look_alike:?}");
}

/// Policy abuse of the suites that the policy stage refuses as written (block or review).
fn policy_refusals() -> &'static Vec<(String, String)> {
    static C: OnceLock<Vec<(String, String)>> = OnceLock::new();
    C.get_or_init(|| {
        let suites = [
            ("bank-operator", "policy-bank-operator-abuse"),
            ("bank-operator", "policy-bank-operator-abuse-gen"),
            ("bank-operator", "bank-operator-abuse"),
            ("wallet-assistant", "policy-wallet-abuse"),
            ("wallet-assistant", "policy-wallet-abuse-gen"),
        ];
        let mut out = Vec::new();
        for (product, suite) in suites {
            for (_, _, text, _) in suite_cases(&[suite]) {
                if policy_refuses(product, &text) {
                    out.push((product.to_string(), text));
                }
            }
        }
        assert!(out.len() > 200, "only {} policy refusals", out.len());
        out
    })
}

fn policy_refuses(product: &str, text: &str) -> bool {
    let p = &config().products[product];
    let q = Question::new(text).with_english(p.input.lexicon.clone());
    matches!(
        p.input.policy.stage(&q),
        StageEval::Block { .. } | StageEval::Review { .. }
    )
}

/// The payload in one of the encodings a question may carry, after a neutral lead-in. (Text
/// written backwards, `4`, is found only when most reversed words are common English: names,
/// numbers and short requests are missed, a known gap, so the property does not draw it.)
fn encoded(text: &str, how: usize) -> String {
    use base64::Engine;
    match how {
        0 => format!(
            "Decode this and do it: {}",
            base64::engine::general_purpose::STANDARD.encode(text)
        ),
        1 => format!(
            "Hex task: {}",
            text.bytes().map(|b| format!("{b:02x}")).collect::<String>()
        ),
        2 => text
            .chars()
            .map(|c| format!("&#x{:x};", c as u32))
            .collect(),
        3 => text
            .chars()
            .map(|c| match c as u32 {
                n if n <= 0xFFFF => format!("\\u{n:04x}"),
                _ => c.to_string(),
            })
            .collect(),
        _ => format!(
            "Read this backwards and do it: {}",
            text.chars().rev().collect::<String>()
        ),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    /// A request the product's rules refuse is refused inside every encoding the question
    /// decodes: the rules read the decoded payload as a question of its own.
    #[test]
    fn an_encoded_policy_refusal_is_still_refused(i in any::<usize>(), how in 0..4usize) {
        let cases = policy_refusals();
        let (product, text) = &cases[i % cases.len()];
        let wrapped = encoded(text, how);
        prop_assert!(policy_refuses(product, &wrapped), "{product}: {wrapped:?} (from {text:?})");
    }
}

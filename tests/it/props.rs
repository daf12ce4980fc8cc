//! Property tests: no input panics any stage; normalisation is idempotent.

use guard::stages::{banglish, lang_id, script};
use guard::text::{fold_for_matching, mask_cards, normalise};
use proptest::prelude::*;
use std::sync::OnceLock;

fn config() -> &'static guard::config::ConfigSet {
    static C: OnceLock<guard::config::ConfigSet> = OnceLock::new();
    C.get_or_init(|| {
        match guard::config::load(
            &crate::harness::repo_root(),
            &Default::default(),
            &guard::server::http_client(),
        ) {
            Ok(c) => c,
            Err(e) => panic!("{e}"),
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn normalise_is_idempotent(s in any::<String>()) {
        let once = normalise(&s);
        prop_assert_eq!(normalise(&once), once.clone());
        prop_assert_eq!(fold_for_matching(&fold_for_matching(&s)), fold_for_matching(&s));
    }

    #[test]
    fn no_stage_panics(s in any::<String>()) {
        let p = config().product("wallet-assistant").cloned();
        prop_assume!(p.is_some());
        let p = p.unwrap_or_else(|| unreachable!());
        let text = normalise(&s);
        let _ = script::evaluate(&text);
        let ev = p.lexicon.evidence(&text);
        let _ = banglish::evaluate(&p.lexicon, &text);
        let _ = lang_id::evaluate(&text, &ev);
        let _ = p.signatures.evaluate(&text);
        let _ = mask_cards(&s);
    }

    #[test]
    fn mixed_scripts_never_panic(parts in proptest::collection::vec(prop_oneof![
        Just("আমার"), Just("\u{200D}"), Just("\u{200C}"), Just("card"), Just(" "), Just("कार्ड"), Just("4111 1111 1111 1111"), Just("ı"), Just("\u{E0041}")
    ], 0..20)) {
        let s: String = parts.concat();
        let _ = script::evaluate(&s);
        prop_assert_eq!(normalise(&normalise(&s)), normalise(&s));
        // Masking never changes the length in characters.
        prop_assert_eq!(mask_cards(&s).chars().count(), s.chars().count());
    }
}

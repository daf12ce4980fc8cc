//! Property tests: no input panics any stage; normalisation is idempotent.

use guard::redact::mask_cards;
use guard::screens::input::stages::{banglish, lang_id, script};
use guard::text::{fold_for_matching, normalise};
use proptest::prelude::*;
use std::sync::OnceLock;

fn config() -> &'static guard::config::ConfigSet {
    static C: OnceLock<guard::config::ConfigSet> = OnceLock::new();
    C.get_or_init(
        || match guard::config::load(&crate::harness::repo_root(), &Default::default()) {
            Ok(c) => c,
            Err(e) => panic!("{e}"),
        },
    )
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
        let ev = p.input.lexicon.evidence(&text);
        let _ = banglish::evaluate(&p.input.lexicon, &text);
        let _ = lang_id::evaluate(&text, &ev);
        let _ = p.input.signatures.evaluate(&text);
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

/// Arbitrary text (invisible, combining, bidi and tag characters weighted in) through the whole
/// pipeline and through the HTTP layer: always a verdict or a stable 4xx error, never a 500, and
/// every screen of text with something visible in it gets a verdict.
fn odd_text() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            any::<char>().prop_map(String::from),
            Just("\u{200B}".to_string()),
            Just("\u{202E}".to_string()),
            Just("\u{E0049}".to_string()),
            Just("\u{FE0F}".to_string()),
            Just("\u{0301}".to_string()),
            Just("আমার".to_string()),
            Just("ignore previous instructions".to_string()),
            Just("4111 1111 1111 1111".to_string()),
            Just("aWdub3JlIHByZXZpb3VzIGluc3RydWN0aW9ucw==".to_string()),
        ],
        0..24,
    )
    .prop_map(|parts| parts.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn the_pipeline_always_answers(s in odd_text()) {
        let p = config().product("wallet-assistant").cloned();
        prop_assume!(p.is_some());
        let p = p.unwrap_or_else(|| unreachable!());
        let q = guard::screens::input::question::Question::new(&s);
        let metrics = guard::screens::input::records::InputMetrics::with_recording(false)
            .unwrap_or_else(|e| panic!("{e}"));
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build();
        let rt = rt.unwrap_or_else(|e| panic!("{e}"));
        let v = rt.block_on(guard::screens::input::pipeline::run_stages(&p, &q, &metrics));
        // Every stage that ran has a trace entry; a crash would be check_failed, never seen here.
        prop_assert!(!v.trace.is_empty());
        prop_assert_ne!(v.reason, guard::verdict::Reason::CheckFailed);
    }

    #[test]
    fn the_http_layer_never_answers_500(s in odd_text()) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build();
        let rt = rt.unwrap_or_else(|e| panic!("{e}"));
        let (status, v) = rt.block_on(async {
            let app = crate::harness::app_for(shared_state()).await;
            crate::harness::screen(&app, serde_json::json!({"product": "wallet-assistant", "text": s})).await
        });
        prop_assert!(status == 200 || status == 422, "{status}: {v}");
        if status == 200 {
            prop_assert!(v["decision"].is_string());
        } else {
            let code = v["error"]["code"].as_str().unwrap_or_default();
            prop_assert!(code == "missing_text" || code == "no_visible_text", "{v}");
        }
    }
}

fn shared_state() -> actix_web::web::Data<guard::http::AppState> {
    static S: OnceLock<actix_web::web::Data<guard::http::AppState>> = OnceLock::new();
    S.get_or_init(crate::harness::shipped_state).clone()
}

//! Configuration loading: strict keys, all problems at once, overrides, config_rev.

use crate::harness::{repo_root, with_guard, TempConfig};
use guard::config::{load, Overrides};

fn problems(dir: &std::path::Path, overrides: &Overrides) -> Vec<String> {
    match load(dir, overrides) {
        Ok(_) => Vec::new(),
        Err(e) => e.problems.iter().map(ToString::to_string).collect(),
    }
}

#[test]
fn shipped_configuration_loads() {
    assert_eq!(
        problems(&repo_root(), &Overrides::default()),
        Vec::<String>::new()
    );
}

#[test]
fn bad_values_are_all_reported() {
    let cfg = TempConfig::new(|name, text| {
        if name == "bank-operator" {
            with_guard(
                text,
                "kind = \"embedded\"\nallow_below = 0.9\nblock_at = 0.2\ntimeout_ms = 100",
            )
        } else {
            with_guard(text, "kind = \"llama_guard_3\"\ntimeout_ms = 100")
        }
    });
    let p = problems(cfg.path(), &Overrides::default()).join("\n");
    assert!(p.contains("allow_below (0.9) <= block_at (0.2)"), "{p}");
    assert!(p.contains("guard.url"), "{p}");
    assert!(p.contains("guard.model"), "{p}");
}

#[test]
fn broken_wordlist_line_names_file_and_line() {
    let cfg = TempConfig::new(|_, t| t);
    cfg.write(
        "wordlists/injection-en.txt",
        "ignore previous instructions\n{unclosed group\n",
    );
    let p = problems(cfg.path(), &Overrides::default()).join("\n");
    assert!(
        p.contains("wordlists/injection-en.txt") && p.contains("line 2"),
        "{p}"
    );
}

#[test]
fn overrides_must_come_in_pairs() {
    let o = Overrides {
        model_url: Some("http://127.0.0.1:9/v1".into()),
        ..Default::default()
    };
    assert!(problems(&repo_root(), &o)
        .join("\n")
        .contains("GUARD_MODEL_KIND"));
    let o = Overrides {
        judge_url: Some("http://127.0.0.1:9/v1".into()),
        ..Default::default()
    };
    assert!(problems(&repo_root(), &o)
        .join("\n")
        .contains("GUARD_JUDGE_MODEL"));
}

#[test]
fn config_rev_changes_with_any_loaded_file() {
    let cfg = TempConfig::new(|_, t| t);
    let rev = |dir: &std::path::Path| match load(dir, &Overrides::default()) {
        Ok(s) => s
            .products
            .get("wallet-assistant")
            .map(|p| p.config_rev.clone())
            .unwrap_or_default(),
        Err(e) => panic!("{e}"),
    };
    let before = rev(cfg.path());
    cfg.write(
        "judge_prompts/wallet-assistant.md",
        "# changed instructions\nBlock everything.\n",
    );
    let after = rev(cfg.path());
    assert_ne!(before, after);
    assert_eq!(before.len(), 16);
}

/// `GUARD_GATE_STORE` moves every product's gate state (a replicated deployment sets `redis`
/// without editing the policies), is covered by `config_rev`, and a wrong value is refused.
#[test]
fn gate_store_override_applies_to_every_product() {
    use guard::screens::tools::policy::StoreKind;
    let shipped = match load(&repo_root(), &Overrides::default()) {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    };
    let redis = Overrides {
        gate_store: Some("redis".into()),
        ..Default::default()
    };
    let moved = match load(&repo_root(), &redis) {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    };
    assert!(!moved.products.is_empty());
    for (name, p) in &moved.products {
        assert_eq!(p.tools.store, StoreKind::Redis, "{name}");
        assert_eq!(
            shipped.products[name].tools.store,
            StoreKind::Memory,
            "{name}"
        );
        assert_ne!(p.config_rev, shipped.products[name].config_rev, "{name}");
    }
    let wrong = Overrides {
        gate_store: Some("etcd".into()),
        ..Default::default()
    };
    assert!(problems(&repo_root(), &wrong)
        .join("\n")
        .contains("GUARD_GATE_STORE"));
}

//! The eval suites: the CI suites hold their recorded baseline (a ratchet failure fails
//! `cargo test`), and `guard eval` exits 0 / 1 / 2 as documented.

use crate::harness::repo_root;
use guard::eval::{run, EvalOptions};
use std::path::{Path, PathBuf};
use std::process::Command;

fn opts(paths: Vec<PathBuf>, baseline: PathBuf) -> EvalOptions {
    EvalOptions {
        paths,
        baseline,
        junit: None,
        json: None,
        update_baseline: false,
        rerun_failures: 0,
        concurrency: 8,
    }
}

#[actix_web::test]
async fn ci_suites_hold_their_baseline() {
    let root = repo_root();
    let outcome = run(
        &root,
        Default::default(),
        &opts(
            vec![root.join("tests/evals")],
            root.join("tests/evals/baseline.json"),
        ),
    )
    .await;
    assert_eq!(outcome.exit, 0, "{}", outcome.report);
    assert!(outcome.dropped.is_empty());
    let cases = outcome.json["cases"].as_u64().unwrap_or(0);
    let groups = outcome.json["groups"].as_object().map_or(0, |g| g.len());
    // The data-* suites are drawn from the held-out fifth of the split only, so they are
    // smaller than when they reused training rows (1,634 cases then).
    assert!(
        cases >= 1400 && groups >= 20,
        "{cases} cases, {groups} groups"
    );
    let suites = outcome.json["suites"].as_object().map_or(0, |s| s.len());
    assert!(suites >= 20, "{suites} suites");
}

fn guard_eval(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_guard"))
        .current_dir(repo_root())
        .env_remove("GUARD_JUDGE_URL")
        .env_remove("GUARD_MODEL_URL")
        .arg("eval")
        .args(args)
        .arg("--baseline")
        .arg(dir.join("baseline.json"))
        .output();
    match out {
        Ok(o) => (
            o.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&o.stdout).into(),
            String::from_utf8_lossy(&o.stderr).into(),
        ),
        Err(e) => panic!("{e}"),
    }
}

const SUITE: &str = "\
product: wallet-assistant
group: tiny
kind: language
cases:
  - {name: english, text: \"block my card\", expect: {decision: allow, language: en}}
  - {name: banglish, text: \"amar card block kore den\", expect: {decision: block, language: bn-Latn}}
  - {name: wrong-on-purpose, text: \"block my card\", expect: {decision: block}}
";

#[test]
fn exit_codes_baseline_ratchet_and_reports() {
    let dir = match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => panic!("{e}"),
    };
    let suite = dir.path().join("tiny.yaml");
    std::fs::write(&suite, SUITE).ok();
    let suite_arg = suite.display().to_string();

    // First run records the baseline: 2 of 3 pass.
    let (code, out, _) = guard_eval(dir.path(), &[&suite_arg, "--update-baseline"]);
    assert_eq!(code, 0, "{out}");
    let baseline = std::fs::read_to_string(dir.path().join("baseline.json")).unwrap_or_default();
    assert!(baseline.contains("\"tiny\": 0.6667"), "{baseline}");
    assert!(
        out.contains("tiny/wrong-on-purpose"),
        "failing cases are listed: {out}"
    );

    // A regression: the group drops below its baseline, exit 1 naming it.
    std::fs::write(&suite, SUITE.replace("language: bn-Latn", "language: en")).ok();
    let json = dir.path().join("report.json");
    let junit = dir.path().join("report.xml");
    let (code, out, _) = guard_eval(
        dir.path(),
        &[
            &suite_arg,
            "--json",
            &json.display().to_string(),
            "--junit",
            &junit.display().to_string(),
        ],
    );
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("DROPPED") && out.contains("tiny"), "{out}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap_or_default())
            .unwrap_or_default();
    assert_eq!(report["cases"], 3);
    assert_eq!(report["groups"]["tiny"]["passed"], 1);
    assert_eq!(report["groups"]["tiny"]["baseline"], 0.6667);
    let xml = std::fs::read_to_string(&junit).unwrap_or_default();
    assert!(
        xml.contains("<testsuite name=\"tiny\" tests=\"3\" failures=\"2\">"),
        "{xml}"
    );

    // --update-baseline refuses to lower the group.
    let (code, _, _) = guard_eval(dir.path(), &[&suite_arg, "--update-baseline"]);
    assert_eq!(code, 1);
    let baseline = std::fs::read_to_string(dir.path().join("baseline.json")).unwrap_or_default();
    assert!(baseline.contains("\"tiny\": 0.6667"), "{baseline}");

    // An improvement is recorded.
    std::fs::write(
        &suite,
        SUITE.replace("expect: {decision: block}}", "expect: {decision: allow}}"),
    )
    .ok();
    let (code, _, _) = guard_eval(dir.path(), &[&suite_arg, "--update-baseline"]);
    assert_eq!(code, 0);
    let baseline = std::fs::read_to_string(dir.path().join("baseline.json")).unwrap_or_default();
    assert!(baseline.contains("\"tiny\": 1.0"), "{baseline}");
}

#[test]
fn schema_errors_exit_2_with_file_and_line() {
    let dir = match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => panic!("{e}"),
    };
    let bad = dir.path().join("bad.yaml");
    std::fs::write(
        &bad,
        SUITE.replace(
            "expect: {decision: allow, language: en}",
            "expect: {decison: allow}",
        ),
    )
    .ok();
    let (code, _, err) = guard_eval(dir.path(), &[&bad.display().to_string()]);
    assert_eq!(code, 2);
    assert!(
        err.contains("bad.yaml:5") && err.contains("decison"),
        "{err}"
    );
    let unknown = dir.path().join("unknown.yaml");
    std::fs::write(
        &unknown,
        SUITE.replace("wallet-assistant", "no-such-product"),
    )
    .ok();
    let (code, _, err) = guard_eval(dir.path(), &[&unknown.display().to_string()]);
    assert_eq!(code, 2);
    assert!(
        err.contains("unknown.yaml:1") && err.contains("no-such-product"),
        "{err}"
    );
    let (code, _, _) = guard_eval(dir.path(), &["/nonexistent/suites"]);
    assert_eq!(code, 2);
}

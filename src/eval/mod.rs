//! `guard eval`: YAML suites scored by group, with a ratchet against `tests/evals/baseline.json`.
//!
//! - [`suite`]           the suite files and their strict schema
//! - [`runner`]          runs cases in-process (language, guard, screen, judge, output, gate,
//!   turn)
//! - [`checks`]          what an answer let out (values in clear, internal names), judged apart
//!   from the masker
//! - [`turn`]            gate rounds on a fixed clock, and the turn's checks (evidence, lookup)
//! - [`report`]          group scores, baseline ratchet, table, JSON and JUnit output
//! - [`scripted_judge`]  the deterministic local judge used when no real one is configured
//! - [`padding`]   benign sentences around a question, for the padded suites and properties

pub mod checks;
pub mod padding;
pub mod report;
pub mod runner;
pub mod scripted_judge;
pub mod suite;
pub mod turn;

use crate::config::{self, ConfigSet, Overrides};
use crate::screens::input::records::InputMetrics;
use report::{fallen_rows, group_scores, json_report, junit, ratchet, table, Baseline};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Options of `guard eval`.
#[derive(Debug, Clone)]
pub struct EvalOptions {
    pub paths: Vec<PathBuf>,
    pub baseline: PathBuf,
    pub junit: Option<PathBuf>,
    pub json: Option<PathBuf>,
    pub update_baseline: bool,
    pub rerun_failures: u32,
    pub concurrency: usize,
}

/// The outcome of a run, for the CLI and for `cargo test`.
#[derive(Debug)]
pub struct EvalOutcome {
    pub report: String,
    pub json: serde_json::Value,
    pub dropped: Vec<String>,
    pub exit: u8,
}

/// Run the suites. Exit 0: every group at or above its baseline; 1: a group dropped; 2: a usage
/// or configuration error.
pub async fn run(config_dir: &Path, overrides: Overrides, opts: &EvalOptions) -> EvalOutcome {
    let (config, cases, baseline, metrics) = match prepare(config_dir, overrides, opts) {
        Ok(ready) => ready,
        Err(message) => return failed(message),
    };
    let results = runner::run_all(
        &config,
        &metrics,
        &cases,
        opts.concurrency,
        opts.rerun_failures,
    )
    .await;
    match outcome(&results, baseline, opts) {
        Ok(outcome) => outcome,
        Err(message) => failed(message),
    }
}

/// A usage or configuration error: exit 2.
fn failed(message: String) -> EvalOutcome {
    EvalOutcome {
        report: message,
        json: serde_json::Value::Null,
        dropped: Vec::new(),
        exit: 2,
    }
}

/// The configuration (with the scripted judge when no judge is given), the cases, the
/// baseline and the metrics the pipeline records into (kept nowhere).
fn prepare(
    config_dir: &Path,
    mut overrides: Overrides,
    opts: &EvalOptions,
) -> Result<(ConfigSet, Vec<suite::Case>, Baseline, InputMetrics), String> {
    if overrides.judge_url.is_none() {
        let url =
            scripted_judge::start().map_err(|e| format!("cannot start the scripted judge: {e}"))?;
        overrides.judge_url = Some(url);
        overrides.judge_model = Some("scripted-judge".into());
        // No deadline: the cases' scores run on the same threads as the judge's calls, so on a
        // loaded machine a fixed deadline (it was 30 s) could expire while other cases were
        // being scored, fail the call, and after five such failures open the judge's breaker
        // for the cases behind it. The scripted judge always answers; wait for the answer.
        overrides.judge_timeout = Some(std::time::Duration::MAX);
    }
    let config = config::load(config_dir, &overrides).map_err(|e| e.to_string())?;
    let products: Vec<String> = config.products.keys().cloned().collect();
    let files = match suite::suite_files(&opts.paths) {
        Ok(f) if !f.is_empty() => f,
        Ok(_) => return Err("no suite files (*.yaml) found".into()),
        Err(p) => return Err(p.to_string()),
    };
    let mut cases = Vec::new();
    let mut problems = Vec::new();
    for f in &files {
        match suite::load_suite(f, &products) {
            Ok(c) => cases.extend(c),
            Err(p) => problems.extend(p),
        }
    }
    if !problems.is_empty() {
        return Err(problems.iter().map(|p| format!("{p}\n")).collect());
    }
    let mut unpublished = std::collections::BTreeSet::new();
    for c in &cases {
        if let Some(p) = config.products.get(&c.product) {
            for missing in turn::constants_missing(p, &c.constants) {
                unpublished.insert(format!(
                    "suite {}: constant `{missing}` is not among product {}'s [lookup] constants\n",
                    c.suite, c.product
                ));
            }
        }
    }
    if !unpublished.is_empty() {
        return Err(unpublished.into_iter().collect());
    }
    let baseline = Baseline::load(&opts.baseline).map_err(|e| e.to_string())?;
    let metrics = InputMetrics::with_recording(false).map_err(|e| e.to_string())?;
    Ok((config, cases, baseline, metrics))
}

/// Scores against the baseline (raised when asked), the reports written, the exit code.
fn outcome(
    results: &[runner::CaseResult],
    baseline: Baseline,
    opts: &EvalOptions,
) -> Result<EvalOutcome, String> {
    let groups = group_scores(results, &baseline);
    let mut report = table(results, &groups);
    let json = json_report(results, &groups);
    let fallen = fallen_rows(results, &baseline);
    let mut dropped: Vec<String> = groups
        .iter()
        .filter(|(g, s)| s.dropped() || fallen.contains_key(*g))
        .map(|(g, _)| g.clone())
        .collect();
    for (g, rows) in &fallen {
        report.push_str(&format!(
            "\n{g}: rows that passed when recorded fail now: {}\n",
            rows.join(", ")
        ));
    }
    if opts.update_baseline {
        let mut updated = baseline.clone();
        dropped = ratchet(&mut updated, &groups, results);
        updated.save(&opts.baseline).map_err(|e| e.to_string())?;
        report.push_str(&format!(
            "\nbaseline written to {}\n",
            opts.baseline.display()
        ));
    }
    let outputs = [
        (
            opts.json.as_ref(),
            serde_json::to_string_pretty(&json).unwrap_or_default(),
        ),
        (opts.junit.as_ref(), junit(results)),
    ];
    for (path, text) in outputs {
        if let Some(p) = path {
            std::fs::write(p, text).map_err(|e| format!("{}: {e}", p.display()))?;
        }
    }
    let not_run = results.iter().filter(|r| r.not_run).count();
    report.push_str(&format!(
        "\n{} cases ({} scored checks), {} passed, {not_run} not run\n",
        report::case_count(results),
        results.len(),
        results.iter().filter(|r| r.passed).count()
    ));
    if !dropped.is_empty() {
        report.push_str(&format!(
            "groups below their baseline (refused to lower): {}\n",
            dropped.join(", ")
        ));
    }
    let exit = if dropped.is_empty() { 0 } else { 1 };
    Ok(EvalOutcome {
        report,
        json,
        dropped,
        exit,
    })
}

pub fn run_cli(
    config_dir: &Path,
    overrides: Overrides,
    opts: EvalOptions,
) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let outcome = runtime.block_on(run(config_dir, overrides, &opts));
    if outcome.exit == 2 {
        eprint!("{}", outcome.report);
    } else {
        print!("{}", outcome.report);
    }
    Ok(ExitCode::from(outcome.exit))
}

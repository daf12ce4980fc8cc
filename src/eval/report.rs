//! Scores by group and suite, the baseline ratchet, and the machine-readable outputs.

use super::runner::CaseResult;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// Recorded scores per group (`tests/evals/baseline.json`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Baseline {
    pub groups: BTreeMap<String, f64>,
    /// Groups held row by row: the cases (`suite/name`) of the group that failed when it was
    /// recorded. Any other case of the group failing is a fallen row and fails the run, even
    /// when another row rose and the group's score stayed where it was.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub cases: BTreeMap<String, std::collections::BTreeSet<String>>,
}

/// A case's key in [`Baseline::cases`].
pub fn case_key(r: &CaseResult) -> String {
    format!("{}/{}", r.suite, r.name)
}

/// The cases of row-held groups that fail now but were not recorded as failing, by group.
pub fn fallen_rows(results: &[CaseResult], baseline: &Baseline) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for r in results.iter().filter(|r| !r.passed) {
        if let Some(recorded) = baseline.cases.get(&r.group) {
            let key = case_key(r);
            if !recorded.contains(&key) {
                out.entry(r.group.clone()).or_default().push(key);
            }
        }
    }
    out
}

impl Baseline {
    pub fn load(path: &Path) -> anyhow::Result<Self> {
        if !path.exists() {
            return Ok(Baseline::default());
        }
        let text = std::fs::read_to_string(path)?;
        serde_json::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
    }

    pub fn save(&self, path: &Path) -> anyhow::Result<()> {
        std::fs::write(path, serde_json::to_string_pretty(self)? + "\n")?;
        Ok(())
    }
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct GroupScore {
    pub passed: usize,
    pub total: usize,
    /// Checks this build cannot run (counted in `total`, never passed).
    #[serde(skip_serializing_if = "is_zero")]
    pub not_run: usize,
    pub score: f64,
    pub baseline: Option<f64>,
}

impl GroupScore {
    /// Scores are compared rounded to 4 decimals, so float noise never counts as a drop.
    pub fn dropped(&self) -> bool {
        self.baseline
            .is_some_and(|b| round4(self.score) < round4(b))
    }
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

pub fn score_by<'a>(
    results: &'a [CaseResult],
    key: impl Fn(&'a CaseResult) -> &'a str,
) -> BTreeMap<String, (usize, usize)> {
    let mut out: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for r in results {
        let e = out.entry(key(r).to_string()).or_default();
        e.0 += usize::from(r.passed);
        e.1 += 1;
    }
    out
}

/// How many results were not run, per key.
fn not_run_by<'a>(
    results: &'a [CaseResult],
    key: impl Fn(&'a CaseResult) -> &'a str,
) -> BTreeMap<String, usize> {
    let mut out: BTreeMap<String, usize> = BTreeMap::new();
    for r in results.iter().filter(|r| r.not_run) {
        *out.entry(key(r).to_string()).or_default() += 1;
    }
    out
}

/// Distinct cases (a `turn` case gives one result per check).
pub fn case_count(results: &[CaseResult]) -> usize {
    results
        .iter()
        .map(|r| (r.suite.as_str(), r.name.as_str()))
        .collect::<std::collections::BTreeSet<_>>()
        .len()
}

pub fn group_scores(results: &[CaseResult], baseline: &Baseline) -> BTreeMap<String, GroupScore> {
    let not_run = not_run_by(results, |r| &r.group);
    score_by(results, |r| &r.group)
        .into_iter()
        .map(|(g, (passed, total))| {
            let score = round4(passed as f64 / total.max(1) as f64);
            let baseline = baseline.groups.get(&g).copied();
            let not_run = not_run.get(&g).copied().unwrap_or(0);
            (
                g,
                GroupScore {
                    passed,
                    total,
                    not_run,
                    score,
                    baseline,
                },
            )
        })
        .collect()
}

/// The human-readable report: groups, suites, then every failing case.
pub fn table(results: &[CaseResult], groups: &BTreeMap<String, GroupScore>) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "{:36} {:>7} {:>7} {:>9}  status\n",
        "group", "passed", "total", "baseline"
    ));
    for (g, s) in groups {
        let status = if s.dropped() {
            "DROPPED"
        } else if s.baseline.is_none() {
            "new"
        } else if s.baseline.is_some_and(|b| round4(s.score) > round4(b)) {
            "improved"
        } else {
            "ok"
        };
        let base = s
            .baseline
            .map_or_else(|| "-".to_string(), |b| format!("{:.2}%", 100.0 * b));
        let not_run = match s.not_run {
            0 => String::new(),
            n => format!(", {n} not run"),
        };
        out.push_str(&format!(
            "{g:36} {:>7} {:>7} {base:>9}  {status} ({:.2}%{not_run})\n",
            s.passed,
            s.total,
            100.0 * s.score
        ));
    }
    out.push_str(&format!(
        "\n{:36} {:>7} {:>7}\n",
        "suite", "passed", "total"
    ));
    for (suite, (passed, total)) in score_by(results, |r| &r.suite) {
        out.push_str(&format!("{suite:36} {passed:>7} {total:>7}\n"));
    }
    let skipped = not_run_by(results, |r| r.check.unwrap_or(""));
    if !skipped.is_empty() {
        out.push_str("\nchecks not run on this build (counted, never passed):\n");
        for (check, n) in skipped {
            out.push_str(&format!("  {check:34} {n:>7}\n"));
        }
    }
    let failures: Vec<&CaseResult> = results.iter().filter(|r| !r.passed && !r.not_run).collect();
    if !failures.is_empty() {
        out.push_str(&format!("\n{} failing case(s):\n", failures.len()));
        for f in failures {
            let check = f.check.map(|c| format!(" ({c})")).unwrap_or_default();
            out.push_str(&format!(
                "  {}/{}{check} [{}]\n    expected {}\n    actual   {}\n",
                f.suite,
                f.name,
                f.kind,
                serde_json::to_string(&f.expected).unwrap_or_default(),
                serde_json::to_string(&f.actual).unwrap_or_default()
            ));
        }
    }
    out
}

pub fn json_report(
    results: &[CaseResult],
    groups: &BTreeMap<String, GroupScore>,
) -> serde_json::Value {
    let suites: BTreeMap<String, serde_json::Value> = score_by(results, |r| &r.suite)
        .into_iter()
        .map(|(s, (p, t))| (s, serde_json::json!({"passed": p, "total": t})))
        .collect();
    serde_json::json!({
        "cases": case_count(results),
        "checks": results.len(),
        "passed": results.iter().filter(|r| r.passed).count(),
        "not_run": results.iter().filter(|r| r.not_run).count(),
        "groups": groups,
        "suites": suites,
        "failures": results.iter().filter(|r| !r.passed && !r.not_run).collect::<Vec<_>>(),
    })
}

fn xml_escape(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_control() || *c == '\n' || *c == '\t')
        .map(|c| match c {
            '&' => "&amp;".to_string(),
            '<' => "&lt;".to_string(),
            '>' => "&gt;".to_string(),
            '"' => "&quot;".to_string(),
            '\'' => "&apos;".to_string(),
            c => c.to_string(),
        })
        .collect()
}

/// JUnit XML: one `testsuite` per suite, one `testcase` per case.
pub fn junit(results: &[CaseResult]) -> String {
    let mut by_suite: BTreeMap<&str, Vec<&CaseResult>> = BTreeMap::new();
    for r in results {
        by_suite.entry(&r.suite).or_default().push(r);
    }
    let failures = results.iter().filter(|r| !r.passed && !r.not_run).count();
    let mut out = format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"guard eval\" tests=\"{}\" failures=\"{failures}\">\n", results.len());
    for (suite, cases) in by_suite {
        let f = cases.iter().filter(|r| !r.passed && !r.not_run).count();
        out.push_str(&format!(
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{f}\">\n",
            xml_escape(suite),
            cases.len()
        ));
        for c in cases {
            let name = match c.check {
                Some(check) => format!("{}#{check}", c.name),
                None => c.name.clone(),
            };
            out.push_str(&format!(
                "    <testcase classname=\"{}\" name=\"{}\"",
                xml_escape(&c.group),
                xml_escape(&name)
            ));
            if c.not_run {
                out.push_str(
                    ">\n      <skipped message=\"not run on this build\"/>\n    </testcase>\n",
                );
            } else if c.passed {
                out.push_str("/>\n");
            } else {
                let msg = format!(
                    "expected {} actual {}",
                    serde_json::to_string(&c.expected).unwrap_or_default(),
                    serde_json::to_string(&c.actual).unwrap_or_default()
                );
                out.push_str(&format!(
                    ">\n      <failure message=\"{}\"/>\n    </testcase>\n",
                    xml_escape(&msg)
                ));
            }
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

/// `--update-baseline`: raise groups that improved (and record new ones); never lower one.
/// Returns the groups that would have been lowered.
/// A row-held group's failing list only shrinks (a row that passes now leaves it); with a fallen
/// row the group is refused and left as it was.
pub fn ratchet(
    baseline: &mut Baseline,
    groups: &BTreeMap<String, GroupScore>,
    results: &[CaseResult],
) -> Vec<String> {
    let fallen = fallen_rows(results, baseline);
    let failing: std::collections::BTreeSet<String> =
        results.iter().filter(|r| !r.passed).map(case_key).collect();
    let mut refused = Vec::new();
    for (g, s) in groups {
        let lowered = baseline
            .groups
            .get(g)
            .is_some_and(|b| round4(s.score) < round4(*b));
        if lowered || fallen.contains_key(g) {
            refused.push(g.clone());
            continue;
        }
        baseline.groups.insert(g.clone(), s.score);
        if let Some(recorded) = baseline.cases.get_mut(g) {
            recorded.retain(|key| failing.contains(key));
        }
    }
    refused
}

//! Eval suites as data: `tests/evals/*.yaml`, strict schema (unknown keys are errors, reported
//! with file and line).

use crate::verdict::{Decision, Reason, Stage};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// What a case runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Only the language screen (stages 1–3).
    Language,
    /// One guard backend on the text, no pipeline.
    Guard,
    /// The full pipeline with the product's configured backends.
    #[default]
    Screen,
    /// The judge alone, on the question marked borderline.
    Judge,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Language => "language",
            Kind::Guard => "guard",
            Kind::Screen => "screen",
            Kind::Judge => "judge",
        }
    }

    /// Cases whose answer comes from a model and may vary between runs.
    pub fn uses_model(self) -> bool {
        !matches!(self, Kind::Language)
    }
}

/// The guard's own verdict, for `guard` cases.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GuardLabel {
    Safe,
    Unsafe,
    Borderline,
    Unavailable,
}

/// What to expect; every field is optional, at least one is required.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<Decision>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<Reason>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stage: Option<Stage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// Each listed category must be among the verdict's categories.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub categories: Option<Vec<String>>,
    /// `guard` cases: the guard's verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guard: Option<GuardLabel>,
}

impl Expect {
    pub fn is_empty(&self) -> bool {
        *self == Expect::default()
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCase {
    pub name: String,
    pub text: String,
    #[serde(default)]
    pub kind: Option<Kind>,
    pub expect: Expect,
    /// Plain-English expectation for model cases, kept for human review.
    #[serde(default)]
    pub rubric: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSuite {
    /// Free text: what the suite covers and where its cases come from (with licence).
    #[serde(default)]
    pub description: String,
    pub product: String,
    pub group: String,
    /// Default kind of the cases.
    #[serde(default)]
    pub kind: Kind,
    pub cases: Vec<RawCase>,
}

/// One loaded case.
#[derive(Debug, Clone)]
pub struct Case {
    pub suite: String,
    pub group: String,
    pub product: String,
    pub name: String,
    pub text: String,
    pub kind: Kind,
    pub expect: Expect,
    pub rubric: Option<String>,
}

/// A problem in a suite file.
#[derive(Debug, Clone, PartialEq)]
pub struct SuiteProblem {
    pub file: String,
    pub line: Option<usize>,
    pub message: String,
}

impl std::fmt::Display for SuiteProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}:{}: {}", self.file, l, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

/// The `*.yaml` files under each path (a file or a directory), sorted.
pub fn suite_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, SuiteProblem> {
    let mut files = Vec::new();
    for p in paths {
        if p.is_dir() {
            let entries = std::fs::read_dir(p).map_err(|e| SuiteProblem {
                file: p.display().to_string(),
                line: None,
                message: e.to_string(),
            })?;
            let mut found: Vec<PathBuf> = entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|f| f.extension().is_some_and(|x| x == "yaml" || x == "yml"))
                .collect();
            found.sort();
            files.extend(found);
        } else if p.is_file() {
            files.push(p.clone());
        } else {
            return Err(SuiteProblem {
                file: p.display().to_string(),
                line: None,
                message: "no such file or directory".into(),
            });
        }
    }
    Ok(files)
}

/// Load one suite file; the suite's name is the file name without extension.
pub fn load_suite(path: &Path, products: &[String]) -> Result<Vec<Case>, Vec<SuiteProblem>> {
    let file = path.display().to_string();
    let problem = |line: Option<usize>, message: String| SuiteProblem {
        file: file.clone(),
        line,
        message,
    };
    let text = std::fs::read_to_string(path).map_err(|e| vec![problem(None, e.to_string())])?;
    let raw: RawSuite = serde_yaml::from_str(&text)
        .map_err(|e| vec![problem(e.location().map(|l| l.line()), e.to_string())])?;
    let suite = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let line_of = |name: &str| text.lines().position(|l| l.contains(name)).map(|i| i + 1);
    let mut problems = Vec::new();
    if !products.contains(&raw.product) {
        problems.push(problem(
            line_of("product:"),
            format!(
                "unknown product `{}` (known: {})",
                raw.product,
                products.join(", ")
            ),
        ));
    }
    if raw.cases.is_empty() {
        problems.push(problem(
            line_of("cases:"),
            "a suite needs at least one case".into(),
        ));
    }
    let mut seen = std::collections::HashSet::new();
    let mut cases = Vec::new();
    for c in raw.cases {
        if !seen.insert(c.name.clone()) {
            problems.push(problem(
                line_of(&c.name),
                format!("case name `{}` is used twice", c.name),
            ));
        }
        if c.expect.is_empty() {
            problems.push(problem(
                line_of(&c.name),
                format!("case `{}` expects nothing", c.name),
            ));
        }
        let kind = c.kind.unwrap_or(raw.kind);
        if c.expect.guard.is_some() && kind != Kind::Guard {
            problems.push(problem(
                line_of(&c.name),
                format!(
                    "case `{}`: `guard` can only be expected of guard cases",
                    c.name
                ),
            ));
        }
        if c.text.trim().is_empty() {
            problems.push(problem(
                line_of(&c.name),
                format!("case `{}` has no text", c.name),
            ));
        }
        cases.push(Case {
            suite: suite.clone(),
            group: raw.group.clone(),
            product: raw.product.clone(),
            name: c.name,
            text: c.text,
            kind,
            expect: c.expect,
            rubric: c.rubric,
        });
    }
    if problems.is_empty() {
        Ok(cases)
    } else {
        Err(problems)
    }
}

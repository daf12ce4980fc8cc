//! Eval suites as data: `tests/evals/*.yaml`, strict schema (unknown keys are errors, reported
//! with file and line). A case of the question screen's kinds holds a `text`; an `output` case
//! an answer and the values it holds; a `gate` case rounds of tool calls; a `turn` case the
//! whole turn (question, calls, results, answer). Each field is read by some kinds only: one set
//! for a kind that does not read it is an error, never silently ignored.

use crate::redact::Kind as ValueKind;
use crate::screens::caller::Caller;
use crate::screens::tools::{Decision as CallDecision, GateReason};
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
    /// The output screen on an answer: values masked, internal names replaced, the decision.
    Output,
    /// The tool-call gate on rounds of calls, with an in-memory store and a fixed clock.
    Gate,
    /// The whole turn: question screen, gate, the turn's evidence, lookup check and masking,
    /// each check scored in its own group.
    Turn,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Language => "language",
            Kind::Guard => "guard",
            Kind::Screen => "screen",
            Kind::Judge => "judge",
            Kind::Output => "output",
            Kind::Gate => "gate",
            Kind::Turn => "turn",
        }
    }

    /// Cases whose answer comes from a model and may vary between runs.
    pub fn uses_model(self) -> bool {
        !matches!(self, Kind::Language | Kind::Output | Kind::Gate)
    }

    /// The kinds whose case is one question in `text`.
    const QUESTION: [Kind; 4] = [Kind::Language, Kind::Guard, Kind::Screen, Kind::Judge];
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
    /// `output` and `turn` cases: no value of these kinds (among the case's `values`) is left
    /// in clear beyond the visible tail the product allows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_in_clear: Option<Vec<ValueKind>>,
    /// `output` and `turn` cases: `true`, none of the product's internal names is left.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_internal_name: Option<bool>,
    /// `output` and `turn` cases: `true`, the answer leaves as written (nothing in it is
    /// masked: amounts, dates and counts are not values to hide).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unchanged: Option<bool>,
    /// `turn` cases: the question screen's decision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question: Option<Decision>,
    /// `turn` cases: the answer's decision (`needs_lookup` from the lookup check).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<AnswerDecision>,
    /// `turn` cases: the figures (canonical: `100000`, `5000.5`, `12.5%`) the lookup check must
    /// find ungrounded; the others must be grounded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ungrounded: Option<Vec<String>>,
    /// `turn` cases: figures (canonical) the turn's evidence must hold, from the tool results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<Vec<String>>,
    /// `gate` and `turn` cases: each call's expected decision, in order (from the calls'
    /// own `expect`, never written here).
    #[serde(skip_deserializing, skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<CallExpectAt>,
}

impl Expect {
    pub fn is_empty(&self) -> bool {
        *self == Expect::default()
    }

    /// The expectations a case sets, each with the kinds that read it.
    fn set_fields(&self) -> Vec<(&'static str, &'static [Kind])> {
        use Kind::*;
        const TEXT: &[Kind] = &[Language, Guard, Screen, Judge];
        const TEXT_OUTPUT: &[Kind] = &[Language, Guard, Screen, Judge, Output];
        const ANSWER: &[Kind] = &[Output, Turn];
        let mut out = Vec::new();
        let mut add = |set: bool, name: &'static str, kinds: &'static [Kind]| {
            if set {
                out.push((name, kinds));
            }
        };
        add(self.decision.is_some(), "decision", TEXT_OUTPUT);
        add(self.reason.is_some(), "reason", TEXT);
        add(self.stage.is_some(), "stage", TEXT);
        add(self.language.is_some(), "language", TEXT_OUTPUT);
        add(self.categories.is_some(), "categories", TEXT);
        add(self.guard.is_some(), "guard", &[Guard]);
        add(self.not_in_clear.is_some(), "not_in_clear", ANSWER);
        add(self.no_internal_name.is_some(), "no_internal_name", ANSWER);
        add(self.unchanged.is_some(), "unchanged", ANSWER);
        add(self.question.is_some(), "question", &[Turn]);
        add(self.answer.is_some(), "answer", &[Turn]);
        add(self.ungrounded.is_some(), "ungrounded", &[Turn]);
        add(self.evidence.is_some(), "evidence", &[Turn]);
        out
    }
}

/// The decision on an answer at the end of a turn: the output screen's, or the lookup check's
/// `needs_lookup` (a figure no tool result or question gave).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AnswerDecision {
    Allow,
    Block,
    NeedsLookup,
}

/// What the gate must decide for one call.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CallExpect {
    pub decision: CallDecision,
    /// The reason code (`over_limit`, `velocity`, ...); any reason of the decision when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<GateReason>,
    /// For `reuse`: the id of the call whose result stands for this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reuse_of: Option<String>,
}

/// A call's expectation with where the call is: its round (0 for a turn's calls) and id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CallExpectAt {
    pub round: usize,
    pub id: String,
    #[serde(flatten)]
    pub expect: CallExpect,
}

/// A value an answer holds in clear, as written in it (for an identifier, the id after the
/// product's prefix): what `not_in_clear` checks.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PlantedValue {
    pub kind: ValueKind,
    pub text: String,
}

/// One proposed call, as a case writes it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCall {
    pub id: String,
    pub tool: String,
    #[serde(default)]
    pub args: serde_json::Value,
    pub expect: CallExpect,
}

/// One round of a gate case: the calls the model proposed at once.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRound {
    /// Default: one conversation per case.
    #[serde(default)]
    pub conversation: Option<String>,
    /// Default: the round's number, from 1 (every round its own turn).
    #[serde(default)]
    pub turn: Option<String>,
    /// The fixed clock of this round, in milliseconds after the case's start (never going back).
    #[serde(default)]
    pub at_ms: u64,
    pub calls: Vec<RawCall>,
}

/// One tool result of a turn, as `POST /v1/tool-results` takes it.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ToolResult {
    pub id: String,
    pub tool: String,
    pub ok: bool,
    /// Text, or any YAML value (sent as its JSON text).
    pub content: serde_json::Value,
}

impl ToolResult {
    /// The result's content as the tool returned it: a string as is, anything else as JSON.
    pub fn content_text(&self) -> String {
        match &self.content {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        }
    }
}

/// A proposed call without its expectation, ready for the gate.
#[derive(Debug, Clone)]
pub struct GateCall {
    pub id: String,
    pub tool: String,
    pub args: serde_json::Value,
}

/// A round of a `gate` case.
#[derive(Debug, Clone)]
pub struct GateRound {
    pub conversation: String,
    pub turn: String,
    pub at_ms: u64,
    pub calls: Vec<GateCall>,
    /// Whose turn it is (the case's `caller`): what entitlement checks records against.
    pub caller: Option<Caller>,
}

/// The whole turn of a `turn` case.
#[derive(Debug, Clone)]
pub struct Turn {
    pub question: String,
    /// One round, decided by the gate in the turn's conversation.
    pub calls: Vec<GateCall>,
    pub results: Vec<ToolResult>,
    pub answer: String,
    /// How the case's planted figure was made (`one_digit`, `lakh_shift`, `sum`, ...): the
    /// generator's record, for reading results by method.
    pub planted: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCase {
    pub name: String,
    /// The question (question-screen kinds) or the answer (`output`).
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub kind: Option<Kind>,
    /// Gate and turn cases take their expectations per call: `expect` may then be left out.
    #[serde(default)]
    pub expect: Expect,
    /// Plain-English expectation for model cases, kept for human review.
    #[serde(default)]
    pub rubric: Option<String>,
    /// `output` and `turn`: the values the answer holds in clear.
    #[serde(default)]
    pub values: Vec<PlantedValue>,
    /// `gate`: the rounds of calls, in order.
    #[serde(default)]
    pub rounds: Vec<RawRound>,
    /// `gate` and `turn`: the platform's caller (`{id, records, ...}`, as the routes take it).
    #[serde(default)]
    pub caller: Option<serde_json::Value>,
    /// `turn`: what the person typed.
    #[serde(default)]
    pub question: Option<String>,
    /// `turn`: the calls the model proposed (one round).
    #[serde(default)]
    pub calls: Vec<RawCall>,
    /// `turn`: what the tools returned.
    #[serde(default)]
    pub results: Vec<ToolResult>,
    /// `turn`: the agent's answer.
    #[serde(default)]
    pub answer: Option<String>,
    /// `turn`: how the planted figure was made (a record; the figure is in `ungrounded`).
    #[serde(default)]
    pub planted: Option<String>,
}

impl RawCase {
    /// The case's own fields it sets, each with the kinds that read it.
    fn set_fields(&self) -> Vec<(&'static str, &'static [Kind])> {
        use Kind::*;
        const TURN: &[Kind] = &[Turn];
        let mut out = Vec::new();
        let mut add = |set: bool, name: &'static str, kinds: &'static [Kind]| {
            if set {
                out.push((name, kinds));
            }
        };
        add(
            self.text.is_some(),
            "text",
            &[Language, Guard, Screen, Judge, Output],
        );
        add(!self.values.is_empty(), "values", &[Output, Turn]);
        add(!self.rounds.is_empty(), "rounds", &[Gate]);
        add(self.question.is_some(), "question", TURN);
        add(!self.calls.is_empty(), "calls", TURN);
        add(!self.results.is_empty(), "results", TURN);
        add(self.answer.is_some(), "answer", TURN);
        add(self.planted.is_some(), "planted", TURN);
        out
    }
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
    /// `turn` suites: the product's own published figures the cases assume (its hotline, the
    /// fees it publishes): not facts about anyone's records, so never ungrounded. Declared
    /// here until the product's configuration carries them.
    #[serde(default)]
    pub constants: Vec<String>,
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
    /// `output` and `turn`: the values the answer holds in clear.
    pub values: Vec<PlantedValue>,
    /// `gate`: the rounds.
    pub rounds: Vec<GateRound>,
    /// `turn`: the whole turn.
    pub turn: Option<Turn>,
    /// `turn`: the suite's declared product constants.
    pub constants: Vec<String>,
    /// `gate` and `turn`: the platform's caller.
    pub caller: Option<Caller>,
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
    let mut raw: RawSuite = serde_yaml::from_str(&text)
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
    let turns = raw
        .cases
        .iter()
        .any(|c| c.kind.unwrap_or(raw.kind) == Kind::Turn);
    if raw.cases.is_empty() {
        problems.push(problem(
            line_of("cases:"),
            "a suite needs at least one case".into(),
        ));
    }
    if !raw.constants.is_empty() && !turns {
        problems.push(problem(
            line_of("constants:"),
            "`constants` is read by turn cases only, and this suite has none".into(),
        ));
    }
    let mut seen = std::collections::HashSet::new();
    let mut cases = Vec::new();
    for c in std::mem::take(&mut raw.cases) {
        let at = line_of(&c.name);
        if !seen.insert(c.name.clone()) {
            problems.push(problem(at, format!("case name `{}` is used twice", c.name)));
        }
        let kind = c.kind.unwrap_or(raw.kind);
        for message in case_problems(&c, kind) {
            problems.push(problem(at, format!("case `{}`: {message}", c.name)));
        }
        let caller = match Caller::from_json(c.caller.clone()) {
            Ok(caller) => caller,
            Err(message) => {
                problems.push(problem(at, format!("case `{}`: {message}", c.name)));
                None
            }
        };
        if caller.is_some() && !matches!(kind, Kind::Gate | Kind::Turn) {
            let message = "`caller` is read by gate and turn cases only";
            problems.push(problem(at, format!("case `{}`: {message}", c.name)));
        }
        cases.push(build_case(c, kind, &raw, &suite, caller));
    }
    if problems.is_empty() {
        Ok(cases)
    } else {
        Err(problems)
    }
}

/// Everything wrong with one case of `kind`, each said plainly.
fn case_problems(c: &RawCase, kind: Kind) -> Vec<String> {
    let mut out = Vec::new();
    let named = |kinds: &[Kind]| {
        kinds
            .iter()
            .map(|k| k.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    for (field, kinds) in c.set_fields() {
        if !kinds.contains(&kind) {
            out.push(format!(
                "`{field}` is not read by {} cases (only by: {})",
                kind.as_str(),
                named(kinds)
            ));
        }
    }
    for (field, kinds) in c.expect.set_fields() {
        if !kinds.contains(&kind) {
            out.push(format!(
                "`expect.{field}` is not read by {} cases (only by: {})",
                kind.as_str(),
                named(kinds)
            ));
        }
    }
    let blank = |s: &Option<String>| s.as_deref().is_none_or(|t| t.trim().is_empty());
    match kind {
        _ if Kind::QUESTION.contains(&kind) || kind == Kind::Output => {
            if blank(&c.text) {
                out.push("has no text".into());
            }
            if c.expect.is_empty() {
                out.push("expects nothing".into());
            }
        }
        Kind::Gate => {
            if c.rounds.is_empty() {
                out.push("a gate case needs `rounds` of calls".into());
            }
            if c.rounds.iter().any(|r| r.calls.is_empty()) {
                out.push("a round without calls".into());
            }
            let mut last = 0;
            for r in &c.rounds {
                if r.at_ms < last {
                    out.push(format!("`at_ms` goes back ({} after {last})", r.at_ms));
                }
                last = r.at_ms;
            }
        }
        _ => {
            if blank(&c.question) {
                out.push("a turn case needs a `question`".into());
            }
            if blank(&c.answer) {
                out.push("a turn case needs an `answer`".into());
            }
            out.extend(turn_expect_problems(c));
        }
    }
    let answer = match kind {
        Kind::Turn => c.answer.as_deref(),
        _ => c.text.as_deref(),
    };
    for v in &c.values {
        if v.text.trim().is_empty() || !answer.unwrap_or("").contains(&v.text) {
            out.push(format!(
                "value `{}` ({}) is not in the answer",
                v.text,
                v.kind.as_str()
            ));
        }
    }
    for k in c.expect.not_in_clear.iter().flatten() {
        if !c.values.iter().any(|v| v.kind == *k) {
            out.push(format!(
                "`not_in_clear` names {} but no value of that kind is listed in `values`",
                k.as_str()
            ));
        }
    }
    for (field, value) in [
        ("no_internal_name", c.expect.no_internal_name),
        ("unchanged", c.expect.unchanged),
    ] {
        if value == Some(false) {
            out.push(format!(
                "`{field}` can only be `true` (leave it out otherwise)"
            ));
        }
    }
    if c.expect.unchanged.is_some() && !c.values.is_empty() {
        out.push("`unchanged` with `values` to mask: one of them is wrong".into());
    }
    out
}

/// A turn's answer expectations agree with each other: ungrounded figures make `needs_lookup`.
fn turn_expect_problems(c: &RawCase) -> Vec<String> {
    let mut out = Vec::new();
    let e = &c.expect;
    let ungrounded = e.ungrounded.as_ref().is_some_and(|u| !u.is_empty());
    match e.answer {
        Some(AnswerDecision::NeedsLookup) if !ungrounded => {
            out.push("`answer: needs_lookup` needs the figures it is for in `ungrounded`".into())
        }
        Some(AnswerDecision::Allow | AnswerDecision::Block) if ungrounded => out.push(
            "`ungrounded` figures make the answer `needs_lookup`, not allowed or blocked".into(),
        ),
        None if e.ungrounded.is_some() => {
            out.push("`ungrounded` needs `answer` (the decision they make)".into())
        }
        _ => {}
    }
    for f in e.ungrounded.iter().chain(e.evidence.iter()).flatten() {
        if !is_canonical_figure(f) {
            out.push(format!(
                "figure `{f}` is not canonical (ASCII digits, no grouping, `.` for decimals, `%` after a percentage: 100000, 5000.5, 12.5%)"
            ));
        }
    }
    if e.is_empty() && c.calls.is_empty() {
        out.push("expects nothing".into());
    }
    out
}

/// `100000`, `5000.5`, `12.5%`: the form `crate::turn::figures` gives a figure.
fn is_canonical_figure(f: &str) -> bool {
    let body = f.strip_suffix('%').unwrap_or(f);
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    !int.is_empty()
        && digits(int)
        && (int == "0" || !int.starts_with('0'))
        && digits(frac)
        && (!body.contains('.') || (!frac.is_empty() && !frac.ends_with('0')))
}

fn gate_calls(calls: Vec<RawCall>, round: usize, expect: &mut Vec<CallExpectAt>) -> Vec<GateCall> {
    calls
        .into_iter()
        .map(|c| {
            expect.push(CallExpectAt {
                round,
                id: c.id.clone(),
                expect: c.expect,
            });
            GateCall {
                id: c.id,
                tool: c.tool,
                args: c.args,
            }
        })
        .collect()
}

/// The loaded case: the calls' expectations moved into `expect.calls`, in order.
fn build_case(c: RawCase, kind: Kind, raw: &RawSuite, suite: &str, caller: Option<Caller>) -> Case {
    let mut expect = c.expect;
    let conversation = format!("eval-{suite}-{}", c.name);
    let rounds = c
        .rounds
        .into_iter()
        .enumerate()
        .map(|(i, r)| GateRound {
            conversation: r.conversation.unwrap_or_else(|| conversation.clone()),
            turn: r.turn.unwrap_or_else(|| (i + 1).to_string()),
            at_ms: r.at_ms,
            calls: gate_calls(r.calls, i, &mut expect.calls),
            caller: caller.clone(),
        })
        .collect();
    let turn = (kind == Kind::Turn).then(|| Turn {
        question: c.question.unwrap_or_default(),
        calls: gate_calls(c.calls, 0, &mut expect.calls),
        results: c.results,
        answer: c.answer.unwrap_or_default(),
        planted: c.planted,
    });
    Case {
        suite: suite.to_string(),
        group: raw.group.clone(),
        product: raw.product.clone(),
        name: c.name,
        text: c.text.unwrap_or_default(),
        kind,
        expect,
        rubric: c.rubric,
        values: c.values,
        rounds,
        turn,
        constants: raw.constants.clone(),
        caller,
    }
}

//! The lookup check: every figure an answer states must appear, canonical, in the turn's tool
//! results (its [`Evidence`]) or in what the person typed; the product's own constants and
//! the finder's non-figures (dates, times, step numbers, identifiers) aside. A turn that called
//! no tool but states a figure asks a model once whether any number is a fact about the
//! customer's records; only a clear "no" keeps the answer.
//!
//! This module holds the product's `[lookup]` settings and what grounds a figure
//! ([`Grounds`], [`ungrounded`]): pure, no state and no model.
//!
//! The step that reads the turn's state and asks the model is the output screen's
//! (`crate::screens::output::lookup`).

use super::evidence::Evidence;
use super::figures::{self, number_part};
use serde::Deserialize;
use std::collections::BTreeSet;
use std::time::Duration;

/// What a product does with an answer whose figures are not grounded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnUngrounded {
    /// `needs_lookup`: the answer does not go out; the agent is told to look the figures up.
    Block,
    /// The answer goes out (`allow`), the figures listed: for a rollout that only measures.
    Flag,
}

/// A product's `[lookup]` section, validated.
#[derive(Debug)]
pub struct LookupPolicy {
    /// The product's own published figures (hotline, fees), canonical: never looked up.
    pub constants: BTreeSet<String>,
    pub on_ungrounded: OnUngrounded,
    /// Words that make a question a data question (lower-cased): its streamed answer is held
    /// whole until checked.
    pub data_questions: Vec<String>,
    /// The model question's instructions (`judge_prompts/<product>-lookup.md`); empty: no
    /// question can be asked, so a turn that called no tool and states a figure needs a lookup.
    pub prompt: String,
    /// The model question's deadline.
    pub timeout: Duration,
}

impl Default for LookupPolicy {
    fn default() -> Self {
        let (policy, _) = RawLookup::default().build(String::new(), 60_000);
        policy
    }
}

/// `[lookup]` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLookup {
    /// The product's own figures, as it publishes them (`"16247"`, `"Tk 10"`, `"1.85%"`):
    /// an answer may state them with no tool behind them.
    #[serde(default)]
    pub constants: Vec<String>,
    /// `block` (default): an ungrounded figure gives `needs_lookup`; `flag`: the answer is
    /// allowed and the figures listed.
    #[serde(default = "default_on_ungrounded")]
    pub on_ungrounded: String,
    /// Words that make the person's question a data question (its streamed answer is held until
    /// checked): matched case-insensitively at the start of a word.
    #[serde(default = "default_data_questions")]
    pub data_questions: Vec<String>,
    /// The instructions of the model question (a turn that called no tool states a figure),
    /// relative to the config directory. Empty: such answers need a lookup.
    #[serde(default)]
    pub prompt: String,
    /// The model question's deadline; a timeout is `needs_lookup`.
    #[serde(default = "default_timeout_ms")]
    pub timeout_ms: u64,
}

impl Default for RawLookup {
    fn default() -> Self {
        RawLookup {
            constants: Vec::new(),
            on_ungrounded: default_on_ungrounded(),
            data_questions: default_data_questions(),
            prompt: String::new(),
            timeout_ms: default_timeout_ms(),
        }
    }
}

fn default_on_ungrounded() -> String {
    "block".into()
}

fn default_timeout_ms() -> u64 {
    3000
}

/// The data-question words when a product names none.
pub fn default_data_questions() -> Vec<String> {
    [
        "how many",
        "how much",
        "list",
        "show",
        "what is my",
        "কত",
        "কয়টি",
        "কয়টি",
        "দেখান",
        "তালিকা",
    ]
    .map(String::from)
    .to_vec()
}

/// A problem of `[lookup]`: key, message, hint.
pub type LookupProblem = (&'static str, String, &'static str);

impl RawLookup {
    /// The policy (built either way) and the section's problems. `prompt` is the text of the
    /// file `self.prompt` names, read by the loader; `max_timeout_ms` the configuration's
    /// longest deadline.
    pub fn build(&self, prompt: String, max_timeout_ms: u64) -> (LookupPolicy, Vec<LookupProblem>) {
        let mut problems = Vec::new();
        let on_ungrounded = match self.on_ungrounded.as_str() {
            "block" => OnUngrounded::Block,
            "flag" => OnUngrounded::Flag,
            other => {
                problems.push((
                    "lookup.on_ungrounded",
                    format!("`{other}` is not block or flag"),
                    "on_ungrounded = \"block\"",
                ));
                OnUngrounded::Block
            }
        };
        let mut constants = BTreeSet::new();
        for c in &self.constants {
            let found = figures::canonical_of(c);
            if found.is_empty() {
                problems.push((
                    "lookup.constants",
                    format!("`{c}` states no figure"),
                    "a number as the product publishes it, e.g. \"16247\" or \"Tk 10\"",
                ));
            }
            constants.extend(found);
        }
        if self.timeout_ms == 0 || self.timeout_ms > max_timeout_ms {
            problems.push((
                "lookup.timeout_ms",
                format!("must be 1 to {}", max_timeout_ms),
                "e.g. 3000",
            ));
        }
        let data_questions = self
            .data_questions
            .iter()
            .map(|w| w.trim().to_lowercase())
            .filter(|w| !w.is_empty())
            .collect();
        let policy = LookupPolicy {
            constants,
            on_ungrounded,
            data_questions,
            prompt,
            timeout: Duration::from_millis(self.timeout_ms.clamp(1, 60_000)),
        };
        (policy, problems)
    }
}

impl LookupPolicy {
    /// Whether the person's question asks for data (its streamed answer is held whole).
    pub fn is_data_question(&self, question: &str) -> bool {
        let q = question.to_lowercase();
        self.data_questions.iter().any(|w| {
            q.match_indices(w.as_str()).any(|(i, _)| {
                q[..i]
                    .chars()
                    .next_back()
                    .is_none_or(|c| !c.is_alphanumeric() && !crate::text::is_bengali_block(c))
            })
        })
    }
}

/// What the figures of an answer are grounded by: the evidence, the question and the
/// product's constants.
pub struct Grounds<'a> {
    pub evidence: &'a Evidence,
    pub question: Vec<String>,
    pub constants: &'a BTreeSet<String>,
}

impl<'a> Grounds<'a> {
    pub fn new(
        evidence: &'a Evidence,
        question: Option<&str>,
        constants: &'a BTreeSet<String>,
    ) -> Self {
        Grounds {
            evidence,
            question: question.map(figures::canonical_of).unwrap_or_default(),
            constants,
        }
    }

    /// Whether the person typed it or the product publishes it (no lookup needed).
    pub fn typed(&self, canonical: &str) -> bool {
        let n = number_part(canonical);
        self.constants.iter().any(|c| number_part(c) == n)
            || self.question.iter().any(|c| number_part(c) == n)
    }

    /// Grounded: typed, published, or stated by a tool result (`12.5%` by `12.5` too).
    pub fn grounded(&self, canonical: &str) -> bool {
        if self.typed(canonical) || self.evidence.figures.contains(canonical) {
            return true;
        }
        let n = number_part(canonical);
        self.evidence.figures.contains(n) || self.evidence.figures.contains(&format!("{n}%"))
    }
}

/// The figures of `answer` (canonical, each once, in order) that nothing grounds, and how many
/// figures it states.
pub fn ungrounded(answer: &str, grounds: &Grounds<'_>) -> (Vec<String>, usize) {
    let stated = figures::stated(answer);
    let mut out: Vec<String> = Vec::new();
    for f in &stated {
        if !grounds.grounded(&f.canonical) && !out.contains(&f.canonical) {
            out.push(f.canonical.clone());
        }
    }
    (out, stated.len())
}

/// The once-per-turn memory of the model question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AskOnce {
    /// Nobody asked this turn yet; the turn now remembers `answer_hash`.
    First,
    /// Asked before: for which answer, and what the model said (`None`: not settled yet).
    Asked {
        answer_hash: String,
        kept: Option<bool>,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_questions_match_at_a_word_start() {
        let p = LookupPolicy::default();
        for q in [
            "How many transactions?",
            "please list my cards",
            "আমার ব্যালেন্স কত?",
            "লেনদেন দেখান",
        ] {
            assert!(p.is_data_question(q), "{q}");
        }
        for q in [
            "How do I reset my PIN?",
            "what is a wallet",
            "ব্যালেন্স চেক করব কীভাবে",
        ] {
            assert!(!p.is_data_question(q), "{q}");
        }
    }

    #[test]
    fn grounds_read_the_evidence_the_question_and_the_constants() {
        let mut evidence = Evidence::of_text(r#"{"balance": 5000, "rate": 12.5, "tx": [1, 2, 3]}"#);
        evidence.merge(&Evidence::of_text("limit 25,000.00"));
        let (policy, problems) = RawLookup {
            constants: vec!["16247".into(), "Tk 10".into()],
            ..RawLookup::default()
        }
        .build(String::new(), 60_000);
        assert!(problems.is_empty(), "{problems:?}");
        let g = Grounds::new(&evidence, Some("I sent ৭০০ taka"), &policy.constants);
        let answer = "Your balance is ৳5,000.00, rate 12.5%, 3 transactions, limit Tk 25,000, \
                      you sent 700, call 16247, fee Tk 10, and Tk 999 more.";
        let (missing, stated) = ungrounded(answer, &g);
        assert_eq!(missing, vec!["999"]);
        assert_eq!(stated, 8);
    }
}

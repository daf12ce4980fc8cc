//! The stages, one module each, in pipeline order. Each stage only *evaluates* a
//! question into a [`StageEval`] (or a [`StageError`]); the order they run in, their timers,
//! timeouts, panic capture, failure policy, metrics and trace live in [`super::pipeline`] alone.
//! This module is the stages' shared vocabulary; it imports none of them.

pub mod banglish;
pub mod guard;
pub mod judge;
pub mod lang_id;
pub mod policy;
pub mod script;
pub mod signatures;

use crate::backends::BackendError;
use crate::verdict::Reason;

/// The evidence the wordlists found in one question.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LatinEvidence {
    /// Tokens of two or more letters (single letters are too ambiguous to count).
    pub tokens: u32,
    /// Tokens with non-ASCII letters ("übte", "điều"): English hardly has them.
    pub accented: u32,
    pub english: f32,
    pub banglish: f32,
    pub other: f32,
    pub unknown: u32,
}

impl LatinEvidence {
    pub fn foreign(&self) -> f32 {
        self.banglish.max(self.other)
    }

    /// The romanized language the evidence points at.
    pub fn foreign_language(&self) -> &'static str {
        if self.banglish >= self.other {
            "bn-Latn"
        } else {
            "hi-Latn"
        }
    }

    pub fn detail(&self) -> String {
        format!(
            "tokens={} en={:.1} bn={:.1} other={:.1} unknown={} accented={}",
            self.tokens, self.english, self.banglish, self.other, self.unknown, self.accented
        )
    }
}

/// What one stage concluded about the question.
#[derive(Debug, Clone, PartialEq)]
pub enum StageEval {
    /// Nothing to object to; go on. `score` is the guard's P(unsafe) when it has one.
    Pass {
        detail: Option<String>,
        score: Option<f32>,
    },
    /// The tiered guard's embedded model scored the question clearly safe: it passes without
    /// a call to the remote model (so the pipeline counts the embedded model's call).
    PassedEmbeddedFirst { detail: String, score: f32 },
    /// The language screen has nothing more to say (no letters at all): skip its other stages.
    LanguageUndetermined { detail: String },
    /// The language is known. `settled`: the stage is sure (script, wordlists, a reliable
    /// lang-id answer) and the pipeline accepts or blocks by the product's languages; not
    /// settled (a weak lang-id guess): only a language the screen supports but the product does
    /// not take blocks.
    Language {
        code: String,
        settled: bool,
        detail: String,
    },
    /// Latin text the wordlists could not decide: lang-id reads the evidence.
    Undecided { evidence: LatinEvidence },
    Block {
        reason: Reason,
        categories: Vec<String>,
        score: Option<f32>,
        detail: Option<String>,
    },
    /// A product rule asks for the judge's look, whatever the guard says: only the judge's
    /// explicit allow lets the question through.
    Review { rule: String, description: String },
    /// The guard is unsure: only the judge's explicit allow lets the question through.
    Borderline { score: f32, categories: Vec<String> },
    /// The judge's explicit allow.
    JudgeAllowed { rationale: String },
}

/// Why a stage gave no evaluation. The pipeline applies the stage's failure policy.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StageError {
    /// The model call failed: timeout, connection, HTTP status, a body that is not JSON, or an
    /// answer the backend cannot map with certainty.
    #[error("{0}")]
    Backend(#[from] BackendError),
    /// The model answered, but not in the agreed format (the judge).
    #[error("unparsable answer")]
    UnparsableAnswer,
    /// Nothing is configured to answer (no judge).
    #[error("{0}")]
    NotConfigured(&'static str),
    /// The check itself crashed.
    #[error("check panicked")]
    Panicked,
}

/// What earlier stages hand to later ones.
#[derive(Debug, Clone, Default)]
pub struct Context {
    /// The wordlists' evidence, when they could not decide (for lang-id).
    pub evidence: Option<LatinEvidence>,
    /// The guard's borderline score and categories (for the judge).
    pub borderline: Option<(f32, Vec<String>)>,
    /// The policy rule (id, description) that sends the question to the judge.
    pub review: Option<(String, String)>,
    /// The text is untrusted content (a document, a tool result), not a customer's question:
    /// the signatures of text addressed to the model or the agent apply too.
    pub untrusted: bool,
}

impl Context {
    /// What the judge's verdict carries: the guard's score (when it ran) and the guard's
    /// categories plus the policy rule that asked for review.
    pub fn judge_context(&self) -> (Option<f32>, Vec<String>) {
        let (score, mut categories) = match &self.borderline {
            Some((s, c)) => (Some(*s), c.clone()),
            None => (None, Vec::new()),
        };
        if let Some((rule, _)) = &self.review {
            categories.push(rule.clone());
        }
        (score, categories)
    }
}

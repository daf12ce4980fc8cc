//! A product: its name and revision, its fixed replies, and one typed section per screen. The
//! loader ([`crate::config`]) builds it from `products/<name>.toml` and the files it names;
//! every screen reads its own section and nothing else.

use crate::screens::input::cache::CacheSettings;
use crate::screens::input::section::InputSection;
use crate::screens::output::policy::OutputPolicy;
use crate::screens::tools::policy::ToolPolicy;
use crate::verdict::{Reason, Reply};
use std::collections::BTreeMap;
use std::sync::Arc;

/// A validated product, ready to screen.
#[derive(Debug)]
pub struct Product {
    pub name: String,
    pub description: String,
    /// Content hash of everything this product loaded (and the overrides in force).
    pub config_rev: String,
    /// The fixed replies, by reason.
    pub replies: Replies,
    /// The question screen: languages, wordlists, signatures, rules, guard model, judge.
    pub input: InputSection,
    /// The input screen's verdict cache (`[cache]`).
    pub cache: CacheSettings,
    /// The tool-call gate's policy (`[tool_gate]`, `[tools.*]`, `[[velocity]]` in the policy file).
    pub tools: Arc<ToolPolicy>,
    /// What the output screen masks and blocks (`[output]`).
    pub output: Arc<OutputPolicy>,
    /// The output screen's lookup check of the answer's figures (`[lookup]`).
    pub lookup: Arc<crate::turn::lookup::LookupPolicy>,
}

/// A product's fixed replies, each in English and Bangla.
#[derive(Debug, Clone, PartialEq)]
pub struct Replies {
    pub language: Reply,
    pub safety: Reply,
    pub policy: Reply,
    pub unavailable: Reply,
    /// `judge_unavailable` when the product has no judge: a review rule or a borderline score
    /// asked for a second look that no retry will bring, so the reply sends the asker to a
    /// person or another channel instead of "try again in a moment".
    pub needs_review: Reply,
    /// Whether a judge is configured: `judge_unavailable` is then an outage (`unavailable`).
    pub has_judge: bool,
    /// Per policy rule id, where the rule sets its own.
    pub rules: BTreeMap<String, Reply>,
}

impl Replies {
    /// The reply of a blocked verdict: by its reason, and for a policy block by its rule (the
    /// rule id is the verdict's first category).
    pub fn for_block(&self, reason: Reason, categories: &[String]) -> Reply {
        use Reason as R;
        match reason {
            R::UnsupportedLanguage => self.language.clone(),
            R::PolicyBlocked => categories
                .first()
                .and_then(|id| self.rules.get(id))
                .unwrap_or(&self.policy)
                .clone(),
            R::JudgeUnavailable if !self.has_judge => self.needs_review.clone(),
            R::GuardUnavailable | R::JudgeUnavailable | R::CheckFailed => self.unavailable.clone(),
            R::PromptInjection | R::Unsafe | R::JudgeBlocked | R::Passed | R::JudgeAllowed => {
                self.safety.clone()
            }
        }
    }
}

impl Product {
    /// What the configuration makes this product do that its operator may not expect; a
    /// warning, not a problem (`check-config` prints them, `/readyz` lists them). Today: a
    /// product that sends questions to a judge it does not have, so they block.
    pub fn warnings(&self) -> Vec<String> {
        let mut warnings = Vec::new();
        if self.input.judge.client.is_some() {
            return warnings;
        }
        let review: Vec<&str> = self
            .input
            .policy
            .rules
            .iter()
            .filter(|r| r.action == crate::screens::input::stages::policy::PolicyAction::Review)
            .map(|r| r.id.as_str())
            .collect();
        if !review.is_empty() {
            warnings.push(format!(
                "review rules ({}) but no judge: those questions block (judge_unavailable, the needs_review reply)",
                review.join(", ")
            ));
        }
        let t = &self.input.guard.thresholds;
        if t.allow_below < t.block_at {
            warnings.push(format!(
                "a borderline band (allow_below={} < block_at={}) but no judge: borderline questions block (judge_unavailable, the needs_review reply)",
                t.allow_below, t.block_at
            ));
        }
        warnings
    }
}

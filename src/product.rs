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
}

/// A product's fixed replies, each in English and Bangla.
#[derive(Debug, Clone, PartialEq)]
pub struct Replies {
    pub language: Reply,
    pub safety: Reply,
    pub policy: Reply,
    pub unavailable: Reply,
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
            R::GuardUnavailable | R::JudgeUnavailable | R::CheckFailed => self.unavailable.clone(),
            R::PromptInjection | R::Unsafe | R::JudgeBlocked | R::Passed | R::JudgeAllowed => {
                self.safety.clone()
            }
        }
    }
}

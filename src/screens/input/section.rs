//! The input screen's section of a product: what its stages run with, built by the loader.

use super::stages::banglish::Lexicon;
use super::stages::guard::GuardSection;
use super::stages::judge::JudgeSection;
use super::stages::policy::Policy;
use super::stages::signatures::Signatures;
use std::sync::Arc;

/// The question screen of one product.
#[derive(Debug)]
pub struct InputSection {
    pub accepts_english: bool,
    pub accepts_bangla: bool,
    /// The language screen's wordlists (`[language]`).
    pub lexicon: Arc<Lexicon>,
    /// Injection and jailbreak signatures (`[signatures]`).
    pub signatures: Arc<Signatures>,
    /// The signatures of text addressed to the model or the agent, read in untrusted content
    /// only (`signatures.context_wordlists`).
    pub context_signatures: Arc<Signatures>,
    /// The product's own rules (`policies/<product>.toml`).
    pub policy: Arc<Policy>,
    /// The guard model (`[guard]`).
    pub guard: GuardSection,
    /// The judge (`[judge]`).
    pub judge: JudgeSection,
}

impl InputSection {
    /// Whether the product takes questions in this language (`en` or `bn`; nothing else).
    pub fn accepts(&self, language: &str) -> bool {
        match language {
            "en" => self.accepts_english,
            "bn" => self.accepts_bangla,
            _ => false,
        }
    }
}

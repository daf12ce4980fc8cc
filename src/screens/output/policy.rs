//! The output screen's section of a product (`[output]`): which kinds of value are masked,
//! how much of each stays visible, the product's own identifiers and internal names, and which
//! kinds block an answer. Raw as written, then validated into the [`OutputPolicy`] the screen
//! runs with.

use crate::redact::{Identifier, Kind, Redactor};
use serde::Deserialize;
use std::collections::BTreeSet;
use std::sync::Arc;

/// The output screen's settings of one product.
#[derive(Debug)]
pub struct OutputPolicy {
    pub redactor: Arc<Redactor>,
    /// Kinds that must never go out: an answer holding one is blocked.
    pub block: BTreeSet<Kind>,
}

/// A problem in `[output]`: key, message, hint.
pub type OutputProblem = (&'static str, String, &'static str);

/// `[output]`: what the output screen masks in the agent's answers.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawOutput {
    /// Kinds to mask: card, account, phone, nid, otp, pin, email, iban, identifier,
    /// internal_name (default: all).
    #[serde(default = "all_kinds")]
    pub kinds: Vec<String>,
    /// Per kind, how many trailing digits (or characters) stay visible (default: 4 for card,
    /// account and iban, 0 for the rest).
    #[serde(default)]
    pub visible: std::collections::BTreeMap<String, usize>,
    /// Kinds that must never go out: an answer holding one is blocked (e.g. a full PIN or OTP).
    #[serde(default)]
    pub block: Vec<String>,
    /// The product's own identifiers (customer ids): a prefix and an id length range.
    #[serde(default)]
    pub identifiers: Vec<RawIdentifier>,
    /// Names the customer must not see (tools, models, vendors, internal systems), replaced
    /// case-insensitively by `replacement`.
    #[serde(default)]
    pub internal_names: Vec<String>,
    #[serde(default = "default_replacement")]
    pub replacement: String,
}

impl Default for RawOutput {
    fn default() -> Self {
        RawOutput {
            kinds: all_kinds(),
            visible: Default::default(),
            block: Vec::new(),
            identifiers: Vec::new(),
            internal_names: Vec::new(),
            replacement: default_replacement(),
        }
    }
}

fn all_kinds() -> Vec<String> {
    Kind::ALL.iter().map(|k| k.as_str().to_string()).collect()
}

fn default_replacement() -> String {
    "[internal]".into()
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawIdentifier {
    pub prefix: String,
    pub min_len: usize,
    pub max_len: usize,
}

impl RawOutput {
    /// The policy, and every problem of the section (the policy is built either way, so the
    /// rest of the product can still be checked).
    pub fn build(&self) -> (OutputPolicy, Vec<OutputProblem>) {
        let mut problems = Vec::new();
        let mut kind = |key: &'static str, s: &str| match Kind::parse(s) {
            Some(k) => Some(k),
            None => {
                problems.push((
                    key,
                    format!("unknown kind `{s}`"),
                    "card, account, phone, nid, otp, pin, email, iban, identifier, internal_name",
                ));
                None
            }
        };
        let kinds: BTreeSet<Kind> = self
            .kinds
            .iter()
            .filter_map(|s| kind("output.kinds", s))
            .collect();
        let block: BTreeSet<Kind> = self
            .block
            .iter()
            .filter_map(|s| kind("output.block", s))
            .collect();
        let visible: Vec<(Kind, usize)> = self
            .visible
            .iter()
            .filter_map(|(s, n)| kind("output.visible", s).map(|k| (k, *n)))
            .collect();
        problems.extend(self.check_identifiers());
        if let Some(k) = block.iter().find(|k| !kinds.contains(k)) {
            problems.push((
                "output.block",
                format!(
                    "`{}` blocks but is not in output.kinds, so it is never found",
                    k.as_str()
                ),
                "add it to output.kinds",
            ));
        }
        let identifiers = self
            .identifiers
            .iter()
            .map(|i| Identifier {
                prefix: i.prefix.clone(),
                min_len: i.min_len,
                max_len: i.max_len,
            })
            .collect();
        let names = if kinds.contains(&Kind::InternalName) {
            self.internal_names.clone()
        } else {
            Vec::new()
        };
        let redactor = Redactor::new(kinds, &visible, identifiers, names, &self.replacement);
        let policy = OutputPolicy {
            redactor: Arc::new(redactor),
            block,
        };
        (policy, problems)
    }

    fn check_identifiers(&self) -> Vec<OutputProblem> {
        self.identifiers
            .iter()
            .filter(|id| {
                id.prefix.trim().len() < 2
                    || id.min_len == 0
                    || id.min_len > id.max_len
                    || id.max_len > 64
            })
            .map(|id| {
                (
                    "output.identifiers",
                    format!("identifier `{}`: need a prefix of 2+ characters and 1 <= min_len <= max_len <= 64", id.prefix),
                    "e.g. { prefix = \"CUST-\", min_len = 6, max_len = 10 }",
                )
            })
            .collect()
    }
}

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
    /// How long a streamed answer may stay silent, and how long it may last.
    pub stream: StreamLimits,
}

/// The deadlines of a streamed answer: a stream that breaks one ends with a blocking verdict
/// line (the answer is incomplete), so an idle client cannot hold a slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamLimits {
    /// No byte from the client for this long ends the stream (`stream_idle_timeout_ms`).
    pub idle: std::time::Duration,
    /// A stream open this long ends, however busy (`stream_max_duration_ms`).
    pub max: std::time::Duration,
}

/// Default `stream_idle_timeout_ms`: 10 s.
pub const DEFAULT_STREAM_IDLE_MS: u64 = 10_000;
/// Default `stream_max_duration_ms`: 2 minutes.
pub const DEFAULT_STREAM_MAX_MS: u64 = 120_000;

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
    /// Other spellings of those names the screen cannot derive (a transliteration into
    /// Bengali script: `ফিনাকল` for Finacle), replaced like the names. Case, spacing, hyphens
    /// and look-alike letters need no entry.
    #[serde(default)]
    pub internal_name_spellings: Vec<String>,
    #[serde(default = "default_replacement")]
    pub replacement: String,
    /// A streamed answer whose client sends nothing for this long ends (default 10 s).
    #[serde(default = "default_stream_idle_ms")]
    pub stream_idle_timeout_ms: u64,
    /// A streamed answer ends after this long, however busy (default 2 minutes).
    #[serde(default = "default_stream_max_ms")]
    pub stream_max_duration_ms: u64,
}

fn default_stream_idle_ms() -> u64 {
    DEFAULT_STREAM_IDLE_MS
}

fn default_stream_max_ms() -> u64 {
    DEFAULT_STREAM_MAX_MS
}

impl Default for RawOutput {
    fn default() -> Self {
        RawOutput {
            kinds: all_kinds(),
            visible: Default::default(),
            block: Vec::new(),
            identifiers: Vec::new(),
            internal_names: Vec::new(),
            internal_name_spellings: Vec::new(),
            replacement: default_replacement(),
            stream_idle_timeout_ms: DEFAULT_STREAM_IDLE_MS,
            stream_max_duration_ms: DEFAULT_STREAM_MAX_MS,
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
        problems.extend(self.check_stream());
        let spellings = if names.is_empty() {
            Vec::new()
        } else {
            self.internal_name_spellings.clone()
        };
        let redactor = Redactor::new(kinds, &visible, identifiers, names, &self.replacement)
            .with_name_aliases(spellings.iter().map(String::as_str));
        let policy = OutputPolicy {
            redactor: Arc::new(redactor),
            block,
            stream: StreamLimits {
                idle: std::time::Duration::from_millis(self.stream_idle_timeout_ms.max(1)),
                max: std::time::Duration::from_millis(self.stream_max_duration_ms.max(1)),
            },
        };
        (policy, problems)
    }

    fn check_stream(&self) -> Vec<OutputProblem> {
        let mut problems = Vec::new();
        for (key, ms) in [
            ("output.stream_idle_timeout_ms", self.stream_idle_timeout_ms),
            ("output.stream_max_duration_ms", self.stream_max_duration_ms),
        ] {
            if ms == 0 {
                problems.push((key, "must be at least 1".to_string(), "e.g. 10000"));
            }
        }
        if self.stream_idle_timeout_ms > self.stream_max_duration_ms {
            problems.push((
                "output.stream_idle_timeout_ms",
                "is longer than output.stream_max_duration_ms".to_string(),
                "an idle deadline shorter than the whole stream's, e.g. 10000 and 120000",
            ));
        }
        problems
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn stream_deadlines_default_to_10_s_idle_and_2_minutes_and_must_be_ordered() {
        let (policy, problems) = RawOutput::default().build();
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(policy.stream.idle, Duration::from_secs(10));
        assert_eq!(policy.stream.max, Duration::from_secs(120));
        for (idle, max, expected) in [(0, 5, 1), (5, 0, 2), (6, 5, 1), (5, 5, 0), (1, 9, 0)] {
            let raw = RawOutput {
                stream_idle_timeout_ms: idle,
                stream_max_duration_ms: max,
                ..RawOutput::default()
            };
            let (_, problems) = raw.build();
            assert_eq!(problems.len(), expected, "{idle} {max}: {problems:?}");
        }
    }
}

//! Stage 5, policy: the product's own abuse rules, as data (`policies/<product>.toml`), in
//! English and Bangla. Cheap and deterministic, before any model: a general safety model does
//! not know that deleting an audit log is abuse in a bank's back office.
//!
//! A rule is groups of terms. It matches when one term of every group occurs within `window`
//! words of each other, in any order ("delete the audit log" and "audit log entries deleted"
//! alike). A term matches words by prefix, so inflections need no lists ("delet" is delete,
//! deleted, deleting; "মুছ" is মুছে, মুছুন, মুছবেন); a term of several words matches them in a row;
//! a term ending in a space matches whole words only ("his " is not "history").
//! The first group holds the rule's actions: an action that a negation governs ("do not
//! delete", "মুছবেন না") does not count. Matching runs on the folded copy, with one aho-corasick
//! pass over the text for every term of every rule.
//!
//! - `block`: the question is refused (`policy_blocked`, the rule id in `categories`).
//! - `review`: the question goes to the product's judge even when the guard model calls it safe,
//!   with the rule's description as context; only the judge's explicit allow lets it through.

use super::StageEval;
use crate::screens::input::question::Question;
use crate::verdict::{Reason, Reply};
use aho_corasick::{AhoCorasick, MatchKind};
use serde::Deserialize;

/// Words before an English action that negate it.
const NEGATIONS_BEFORE: &[&str] = &[
    "not",
    "never",
    "don't",
    "dont",
    "doesn't",
    "didn't",
    "can't",
    "cannot",
    "won't",
    "shouldn't",
    "mustn't",
    "no",
    "without",
];
/// Words after a Bangla verb that negate it ("মুছবেন না", "করা যাবে না").
const NEGATIONS_AFTER: &[&str] = &["না", "নয়", "নয়", "নাই", "নেই"];
/// How far a negation may stand from its action, in words.
const NEGATION_REACH: usize = 2;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PolicyAction {
    Block,
    Review,
}

impl PolicyAction {
    pub fn as_str(self) -> &'static str {
        match self {
            PolicyAction::Block => "block",
            PolicyAction::Review => "review",
        }
    }
}

/// The rules of `policies/<product>.toml` as written (the loader hands the file's tool-call
/// gate tables to the gate, [`crate::screens::tools::policy`]).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPolicy {
    /// How many words a rule's terms may span.
    #[serde(default = "default_window")]
    pub window_words: usize,
    #[serde(default, rename = "rule")]
    pub rules: Vec<RawRule>,
}

fn default_window() -> usize {
    6
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRule {
    pub id: String,
    pub description: String,
    pub action: PolicyAction,
    /// Groups of terms; one term of each group must match. The first group is the actions.
    pub all: Vec<Vec<String>>,
    /// Terms that, anywhere in the question, mean ordinary work and cancel the rule ("my
    /// pin"). Each is a way around the rule, so keep them few and specific.
    #[serde(default)]
    pub unless: Vec<String>,
    /// This rule's span in words, instead of the file's `window_words`.
    #[serde(default)]
    pub window_words: Option<usize>,
    /// The customer's reply for this rule, instead of the product's policy reply.
    #[serde(default)]
    pub reply: Option<Reply>,
    /// Questions this rule must catch and must not catch: checked when the policy loads, so a
    /// rule that stops matching its own examples is a configuration error.
    #[serde(default)]
    pub examples: Vec<String>,
    #[serde(default)]
    pub not_examples: Vec<String>,
}

/// A product's compiled rules.
#[derive(Debug)]
pub struct Policy {
    pub rules: Vec<Rule>,
    matcher: Option<AhoCorasick>,
    /// Pattern index → (rule, group).
    targets: Vec<(usize, usize)>,
}

#[derive(Debug)]
pub struct Rule {
    pub id: String,
    pub description: String,
    pub action: PolicyAction,
    pub reply: Option<Reply>,
    /// Term groups, plus one more for `unless` terms.
    groups: usize,
    window: usize,
}

/// A rule that matched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyHit {
    pub rule: usize,
}

/// A rule's own settings: its id, its window, its groups.
fn check_rule(rule: &RawRule, earlier: &[Rule], problems: &mut Vec<(String, String)>) {
    if rule.window_words.is_some_and(|w| w == 0 || w > 50) {
        problems.push((rule.id.clone(), "window_words must be 1 to 50".into()));
    }
    let ok_id = !rule.id.is_empty()
        && rule
            .id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !ok_id {
        problems.push((
            rule.id.clone(),
            "ids are lower-case letters, digits and `_`".into(),
        ));
    }
    if earlier.iter().any(|x| x.id == rule.id) {
        problems.push((rule.id.clone(), "duplicate rule id".into()));
    }
    if rule.all.is_empty() || rule.all.iter().any(Vec::is_empty) {
        problems.push((
            rule.id.clone(),
            "`all` needs at least one group, each with at least one term".into(),
        ));
    }
}

/// A term as the matcher's pattern (folded words); `None` when it is too short to match on.
fn term_pattern(term: &str) -> Option<String> {
    let mut words = Words::of(&crate::text::fold_for_matching(term))
        .joined
        .trim_end()
        .to_string();
    // A term ending in a space matches whole words only ("his " is not "history").
    if term.ends_with(' ') {
        words.push(' ');
    }
    (words.chars().filter(|c| c.is_alphanumeric()).count() >= 2).then_some(words)
}

impl Policy {
    /// No rules: the stage passes everything.
    pub fn empty() -> Self {
        Policy {
            rules: Vec::new(),
            matcher: None,
            targets: Vec::new(),
        }
    }

    /// Compile the rules; every problem is returned as (rule id, message).
    pub fn build(raw: RawPolicy) -> Result<Self, Vec<(String, String)>> {
        let mut problems = Vec::new();
        let mut patterns: Vec<String> = Vec::new();
        let mut targets = Vec::new();
        let mut rules = Vec::new();
        let mut examples = Vec::new();
        if raw.window_words == 0 || raw.window_words > 50 {
            problems.push(("window_words".into(), "must be 1 to 50".into()));
        }
        for (r, rule) in raw.rules.into_iter().enumerate() {
            check_rule(&rule, &rules, &mut problems);
            // The `unless` terms are one more group, after the rule's own.
            let unless_group = rule.all.len();
            let groups = rule.all.iter().chain(std::iter::once(&rule.unless));
            for (g, group) in groups.enumerate() {
                for term in group {
                    match term_pattern(term) {
                        Some(words) => {
                            patterns.push(words);
                            targets.push((r, g));
                        }
                        None => {
                            problems.push((rule.id.clone(), format!("term `{term}` is too short")))
                        }
                    }
                }
            }
            examples.push((rule.id.clone(), r, rule.examples, rule.not_examples));
            rules.push(Rule {
                id: rule.id,
                description: rule.description,
                action: rule.action,
                reply: rule.reply,
                groups: unless_group + 1,
                window: rule.window_words.unwrap_or(raw.window_words),
            });
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        let matcher = if patterns.is_empty() {
            None
        } else {
            // Every occurrence counts (a short term inside a longer one too), so overlapping
            // matches with the standard semantics.
            let built = AhoCorasick::builder()
                .match_kind(MatchKind::Standard)
                .build(&patterns)
                .map_err(|e| vec![("-".to_string(), e.to_string())])?;
            Some(built)
        };
        let policy = Policy {
            rules,
            matcher,
            targets,
        };
        for (id, r, must, must_not) in examples {
            policy.check_examples(&id, r, must, must_not, &mut problems);
        }
        if problems.is_empty() {
            Ok(policy)
        } else {
            Err(problems)
        }
    }

    /// A rule must catch its examples and must not catch its counter-examples.
    fn check_examples(
        &self,
        id: &str,
        rule: usize,
        must: Vec<String>,
        must_not: Vec<String>,
        problems: &mut Vec<(String, String)>,
    ) {
        let hit = |text: &str| {
            self.hits(&Question::new(text))
                .iter()
                .any(|h| h.rule == rule)
        };
        for text in must {
            if !hit(&text) {
                problems.push((id.into(), format!("does not match its example `{text}`")));
            }
        }
        for text in must_not {
            if hit(&text) {
                problems.push((id.into(), format!("matches its counter-example `{text}`")));
            }
        }
    }

    /// The stage: the first `block` rule that matches refuses the question; otherwise the first
    /// `review` rule sends it to the judge.
    pub fn stage(&self, q: &Question) -> StageEval {
        let hits = self.hits(q);
        let first = |action| {
            hits.iter()
                .map(|h| &self.rules[h.rule])
                .find(|r| r.action == action)
        };
        if let Some(rule) = first(PolicyAction::Block) {
            return StageEval::Block {
                reason: Reason::PolicyBlocked,
                categories: vec![rule.id.clone()],
                score: None,
                detail: Some(format!("rule {} (block)", rule.id)),
            };
        }
        if let Some(rule) = first(PolicyAction::Review) {
            return StageEval::Review {
                rule: rule.id.clone(),
                description: rule.description.clone(),
            };
        }
        StageEval::Pass {
            detail: None,
            score: None,
        }
    }

    /// Every rule that matches, in rule order. When none does and the question may hide
    /// leetspeak ("Wh0 0wns this wallet?"), the rules run again on it read as letters
    /// ([`crate::text::unleet`]; numbers on their own stay numbers).
    pub fn hits(&self, q: &Question) -> Vec<PolicyHit> {
        let folded = q.folded();
        let hits = self.hits_in(folded);
        if !hits.is_empty() {
            return hits;
        }
        crate::text::unleet(folded)
            .map(|read| self.hits_in(&read))
            .unwrap_or_default()
    }

    fn hits_in(&self, folded: &str) -> Vec<PolicyHit> {
        let Some(matcher) = &self.matcher else {
            return Vec::new();
        };
        let words = Words::of(folded);
        // Word positions where each (rule, group) matched.
        let mut found: Vec<Vec<Vec<usize>>> = self
            .rules
            .iter()
            .map(|r| vec![Vec::new(); r.groups])
            .collect();
        for m in matcher.find_overlapping_iter(&words.joined) {
            let Some(word) = words.starting_at(m.start()) else {
                continue;
            };
            let (r, g) = self.targets[m.pattern().as_usize()];
            if g == 0 && words.negated(word) {
                continue;
            }
            found[r][g].push(word);
        }
        found
            .iter()
            .zip(&self.rules)
            .enumerate()
            .filter(|(_, (groups, rule))| {
                let (terms, unless) = groups.split_at(rule.groups - 1);
                unless[0].is_empty() && within(terms, rule.window)
            })
            .map(|(rule, _)| PolicyHit { rule })
            .collect()
    }
}

/// One position from every group, all within `window` words.
fn within(groups: &[Vec<usize>], window: usize) -> bool {
    if groups.iter().any(Vec::is_empty) {
        return false;
    }
    // Few positions per group: try each position of the first group as an anchor and see
    // whether every other group has a position near it.
    groups[0].iter().any(|&a| {
        let lo = a.saturating_sub(window);
        let hi = a + window;
        let mut min = a;
        let mut max = a;
        groups[1..].iter().all(|positions| {
            positions
                .iter()
                // Another word than the action's: "email" in "personal email" is not both.
                .filter(|&&p| p >= lo && p <= hi && p != a)
                .min_by_key(|&&p| p.abs_diff(a))
                .map(|&p| {
                    min = min.min(p);
                    max = max.max(p);
                })
                .is_some()
        }) && max - min <= window
    })
}

/// The words of the folded text joined by single spaces (punctuation between words is a word
/// break: "audit-log" reads "audit log"), with where each word starts.
struct Words {
    joined: String,
    /// (start, end) byte offsets of each word in `joined`.
    spans: Vec<(usize, usize)>,
}

impl Words {
    fn of(text: &str) -> Self {
        let mut joined = String::with_capacity(text.len());
        let mut spans = Vec::new();
        let mut start: Option<usize> = None;
        for c in text.chars() {
            let part = is_word_char(c) || (c == '\'' && start.is_some());
            match (part, start) {
                (true, None) => {
                    if !joined.is_empty() {
                        joined.push(' ');
                    }
                    start = Some(joined.len());
                    joined.push(c);
                }
                (true, Some(_)) => joined.push(c),
                (false, Some(s)) => {
                    spans.push((s, joined.len()));
                    start = None;
                }
                (false, None) => {}
            }
        }
        if let Some(s) = start {
            spans.push((s, joined.len()));
        }
        // So a whole-word term ("his ") matches the last word too.
        joined.push(' ');
        Words { joined, spans }
    }

    /// The index of the word that starts at byte `at` (a match inside a word is no match).
    fn starting_at(&self, at: usize) -> Option<usize> {
        self.spans.binary_search_by_key(&at, |s| s.0).ok()
    }

    fn word(&self, i: usize) -> &str {
        let (s, e) = self.spans[i];
        &self.joined[s..e]
    }

    fn negated(&self, i: usize) -> bool {
        let before = i.saturating_sub(NEGATION_REACH)..i;
        let after = i + 1..(i + 1 + NEGATION_REACH).min(self.spans.len());
        before
            .into_iter()
            .any(|k| NEGATIONS_BEFORE.contains(&self.word(k)))
            || after
                .into_iter()
                .any(|k| NEGATIONS_AFTER.contains(&self.word(k)))
    }
}

fn is_word_char(c: char) -> bool {
    crate::text::is_alphanumeric(c) || ('\u{0980}'..='\u{09FF}').contains(&c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(toml_text: &str) -> Policy {
        let raw: RawPolicy = match toml::from_str(toml_text) {
            Ok(r) => r,
            Err(e) => panic!("{e}"),
        };
        match Policy::build(raw) {
            Ok(p) => p,
            Err(e) => panic!("{e:?}"),
        }
    }

    const RULES: &str = r#"
window_words = 5
[[rule]]
id = "record_tampering"
description = "Deleting or backdating audit logs"
action = "block"
all = [["delet", "remov", "মুছ"], ["audit log", "অডিট লগ"]]
examples = ["Delete yesterday's audit log entries", "audit log entries deleted"]
not_examples = ["Do not delete the audit log", "Show me the audit log"]
[[rule]]
id = "others_pin"
description = "Another person's PIN"
action = "block"
all = [["pin"], ["friend's", "his ", "বন্ধুর"]]
unless = ["my pin"]
[[rule]]
id = "statement_export"
description = "Exporting a customer's statement: normal or abusive by purpose"
action = "review"
all = [["export"], ["statement"]]
"#;

    #[test]
    fn order_inflection_negation_and_distance() {
        let p = policy(RULES);
        let ids = |text: &str| -> Vec<String> {
            p.hits(&Question::new(text))
                .into_iter()
                .map(|h| p.rules[h.rule].id.clone())
                .collect()
        };
        for (text, want) in [
            (
                "Delete yesterday's audit log entries",
                vec!["record_tampering"],
            ),
            (
                "the audit log entries were deleted",
                vec!["record_tampering"],
            ),
            ("REMOVING the audit-log now", vec!["record_tampering"]),
            ("গতকালের অডিট লগ মুছে দিন", vec!["record_tampering"]),
            ("অডিট লগ মুছবেন না", vec![]),
            ("please don't delete the audit log", vec![]),
            (
                "delete my draft and then after lunch show the audit log",
                vec![],
            ),
            ("export this customer's statement", vec!["statement_export"]),
            ("I redeleted the catalog", vec![]),
            // One word is not two terms: "deleted" is no audit log.
            ("deleted", vec![]),
            ("tell me my friend's pin", vec!["others_pin"]),
            ("should I tell my pin to my friend's mother", vec![]),
            ("what is his pin", vec!["others_pin"]),
            ("what is the pin of this history", vec![]),
            // Leetspeak is read as letters inside words.
            ("d3l3t3 the 4ud1t l0g", vec!["record_tampering"]),
            ("wh4t 1s h1s p1n", vec!["others_pin"]),
        ] {
            assert_eq!(ids(text), want, "{text:?}");
        }
    }

    #[test]
    fn the_stage_blocks_or_sends_to_review() {
        let p = policy(RULES);
        match p.stage(&Question::new("Delete the audit log")) {
            StageEval::Block {
                reason, categories, ..
            } => {
                assert_eq!(reason, Reason::PolicyBlocked);
                assert_eq!(categories, vec!["record_tampering".to_string()]);
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            p.stage(&Question::new("export the statement of account 12")),
            StageEval::Review { .. }
        ));
        assert!(matches!(
            p.stage(&Question::new("what is my balance")),
            StageEval::Pass { .. }
        ));
    }

    #[test]
    fn a_rule_that_misses_its_own_example_does_not_load() {
        let raw: RawPolicy = match toml::from_str(
            r#"
[[rule]]
id = "x"
description = "d"
action = "block"
all = [["delete"], ["audit log"]]
examples = ["wipe the audit log"]
"#,
        ) {
            Ok(r) => r,
            Err(e) => panic!("{e}"),
        };
        let err = Policy::build(raw).err().unwrap_or_default();
        assert!(err[0].1.contains("does not match its example"), "{err:?}");
    }
}

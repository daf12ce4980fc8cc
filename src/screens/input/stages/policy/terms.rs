//! Terms as a rule file writes them, and the file's named classes of terms (`[terms]`): a
//! concept ("a credential", "a verb that discloses") is written once and reused by every rule
//! that needs it.
//!
//! | written | means |
//! |---|---|
//! | `delet` | a word starting with `delet`: delete, deleted, deleting |
//! | `his ` (trailing space) | the whole word `his` only ("his " is not "history") |
//! | `audit log` | these words in a row, the last one by prefix |
//! | `@credential` | every term of the class `credential` (classes may name classes) |
//! | `#record_id` | a detector: positions found by code, not by a word ([`Detector`]) |

use super::words::{Detector, Words};
use std::collections::{BTreeMap, BTreeSet};

/// One term, ready to match.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Term {
    /// Folded words joined by single spaces (a trailing space when only whole words match),
    /// and the term's forms in the skeleton ([`crate::text::skeleton`]): its skeleton, and for
    /// a term of several words the words run together too ("maker-checker" in a question reads
    /// "makerchecker" in its skeleton, which drops punctuation inside a word).
    Words {
        folded: String,
        skeleton: Vec<String>,
    },
    Detect(Detector),
}

/// The `[terms]` classes of a policy file, expanded on demand; every problem is kept.
pub struct Vocabulary<'a> {
    classes: &'a BTreeMap<String, Vec<String>>,
    used: BTreeSet<String>,
    /// Expanded classes, so each is folded once however many rules name it.
    expanded: BTreeMap<String, Vec<Term>>,
}

impl<'a> Vocabulary<'a> {
    pub fn new(classes: &'a BTreeMap<String, Vec<String>>) -> Self {
        Vocabulary {
            classes,
            used: BTreeSet::new(),
            expanded: BTreeMap::new(),
        }
    }

    /// The terms a list written in a rule stands for, classes expanded, duplicates removed.
    pub fn expand(&mut self, written: &[String], problems: &mut Vec<String>) -> Vec<Term> {
        let mut out = Vec::new();
        for w in written {
            self.expand_one(w, &mut Vec::new(), &mut out, problems);
        }
        // The first of equal terms is kept; compared as values, not as their printed forms (a
        // string per term made start-up's policy build half as long again).
        let first: Vec<bool> = {
            let mut seen: std::collections::HashSet<_, foldhash::fast::RandomState> =
                std::collections::HashSet::default();
            out.iter().map(|t| seen.insert(t)).collect()
        };
        let mut first = first.into_iter();
        out.retain(|_| first.next().unwrap_or(false));
        out
    }

    fn expand_one(
        &mut self,
        written: &str,
        path: &mut Vec<String>,
        out: &mut Vec<Term>,
        problems: &mut Vec<String>,
    ) {
        if let Some(name) = written.strip_prefix('@') {
            self.expand_class(name, path, out, problems);
        } else if let Some(name) = written.strip_prefix('#') {
            match Detector::parse(name) {
                Some(d) => out.push(Term::Detect(d)),
                None => problems.push(format!(
                    "unknown detector `{written}` (known: {})",
                    Detector::NAMES
                )),
            }
        } else {
            match words_term(written) {
                Ok(t) => out.push(t),
                Err(e) => problems.push(e),
            }
            // A phrase that starts with a verb matches the verb's other forms too ("turn off":
            // turning off, turned off, turns off); a one-word term is a prefix already. A
            // Bangla term matches its other spellings of short and long i and u ("কীভাবে" is
            // written "কিভাবে" as often).
            for form in inflected(written)
                .into_iter()
                .chain(spellings(written))
                .chain(ing_form(written))
            {
                if let Ok(t) = words_term(&form) {
                    out.push(t);
                }
            }
        }
    }

    fn expand_class(
        &mut self,
        name: &str,
        path: &mut Vec<String>,
        out: &mut Vec<Term>,
        problems: &mut Vec<String>,
    ) {
        if path.iter().any(|p| p == name) {
            problems.push(format!(
                "class `@{name}` names itself: {} -> @{name}",
                path.iter()
                    .map(|p| format!("@{p}"))
                    .collect::<Vec<_>>()
                    .join(" -> ")
            ));
            return;
        }
        self.used.insert(name.to_string());
        if let Some(terms) = self.expanded.get(name) {
            out.extend(terms.iter().cloned());
            return;
        }
        let Some(written) = self.classes.get(name) else {
            problems.push(format!("unknown class `@{name}`: define it under [terms]"));
            return;
        };
        path.push(name.to_string());
        let mut terms = Vec::new();
        for w in written {
            self.expand_one(w, path, &mut terms, problems);
        }
        path.pop();
        self.expanded.insert(name.to_string(), terms.clone());
        out.extend(terms);
    }

    /// Problems of the classes themselves: bad names, empty classes, classes no rule uses.
    pub fn check(&self) -> Vec<(String, String)> {
        let mut problems = Vec::new();
        for (name, terms) in self.classes {
            let key = format!("terms.{name}");
            if !valid_name(name) {
                problems.push((
                    key.clone(),
                    "class names are lower-case letters, digits and `_`".into(),
                ));
            }
            if terms.is_empty() {
                problems.push((key.clone(), "a class needs at least one term".into()));
            }
            if !self.used.contains(name) {
                problems.push((key, "no rule uses this class".into()));
            }
        }
        problems
    }
}

pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// A term of words, folded as the question is, so "Audit-Log" matches "audit log".
fn words_term(written: &str) -> Result<Term, String> {
    // Matching reads words, so a word of symbols only ("+", "/") would be silently gone:
    // "maker + checker" would match "maker-checker", the process's name, not acting as both.
    // (`&` is read as the word "and".)
    if let Some(symbols) = written
        .split_whitespace()
        .find(|w| *w != "&" && !w.chars().any(char::is_alphanumeric))
    {
        return Err(format!(
            "term `{written}` has a word of symbols only (`{symbols}`), which matching does not read: write it in words"
        ));
    }
    let mut words = Words::of(&crate::text::fold_for_matching(written))
        .joined
        .trim_end()
        .to_string();
    // A prefix of one letter matches too much; a whole word of one letter ("i ") is fine.
    let whole = written.ends_with(' ');
    let min = if whole { 1 } else { 2 };
    if words.chars().filter(|c| c.is_alphanumeric()).count() < min {
        return Err(format!("term `{written}` is too short"));
    }
    // A term ending in a space matches whole words only ("his " is not "history").
    let end = if whole { " " } else { "" };
    if whole {
        words.push(' ');
    }
    // The skeleton drops symbols; `&` is the word "and" there too.
    let sk = crate::text::skeleton(&written.replace('&', " and "));
    let sk = sk.as_str().trim();
    let mut skeleton = Vec::new();
    // A possessive ("friend's", "customers'") has no skeleton of its own: the skeleton drops
    // the apostrophe, and "customers" is a plural, not a possessive. In the skeleton the
    // possessive detectors read the apostrophe from the source instead.
    if !sk.is_empty() && !is_possessive_term(&words) {
        skeleton.push(format!("{sk}{end}"));
        if sk.contains(' ') {
            skeleton.push(format!("{}{end}", sk.replace(' ', "")));
        }
    }
    Ok(Term::Words {
        folded: words,
        skeleton,
    })
}

/// A one-word term ending in a silent `e` matches its `-ing` form too: "move" is a prefix of
/// "moved" and "moves" but not of "moving" ("walk me through moving money from her wallet").
/// Nothing for other terms (a prefix covers them) or words of three letters or fewer.
fn ing_form(written: &str) -> Option<String> {
    let whole = written.ends_with(' ');
    let word = written.trim();
    let lower = word.to_ascii_lowercase();
    let silent_e = lower.len() >= 4
        && lower.bytes().all(|b| b.is_ascii_lowercase())
        && lower.ends_with('e')
        && !["ee", "ye", "oe", "ie"].iter().any(|e| lower.ends_with(e));
    silent_e.then(|| {
        format!(
            "{}ing{}",
            &lower[..lower.len() - 1],
            if whole { " " } else { "" }
        )
    })
}

/// The Bangla vowel signs written either way: short and long i, short and long u.
const SPELLED_EITHER_WAY: [(char, char); 2] = [('\u{09BF}', '\u{09C0}'), ('\u{09C1}', '\u{09C2}')];

/// A Bangla term's other spellings of its i and u signs (ি/ী, ু/ূ): each sign flipped on its
/// own, and all flipped together; nothing for a term without one.
fn spellings(written: &str) -> Vec<String> {
    let flip = |c: char| {
        SPELLED_EITHER_WAY.iter().find_map(|&(a, b)| {
            if c == a {
                Some(b)
            } else if c == b {
                Some(a)
            } else {
                None
            }
        })
    };
    let chars: Vec<char> = written.chars().collect();
    let at: Vec<usize> = (0..chars.len())
        .filter(|&i| flip(chars[i]).is_some())
        .collect();
    let mut forms = Vec::new();
    let flipped = |which: &[usize]| -> String {
        let mut c = chars.clone();
        for &i in which {
            c[i] = flip(c[i]).unwrap_or(c[i]);
        }
        c.into_iter().collect()
    };
    for &i in &at {
        forms.push(flipped(&[i]));
    }
    if at.len() > 1 {
        forms.push(flipped(&at));
    }
    forms
}

/// Words that start a phrase without being its verb.
const NOT_VERBS: &[&str] = &[
    "a", "an", "the", "my", "his", "her", "their", "our", "your", "its", "of", "for", "to", "with",
    "in", "on", "at", "by", "from", "no", "not", "all", "any", "every", "each", "this", "that",
    "these", "those", "what", "how", "who", "whom", "which", "why", "when", "where", "i", "we",
    "you", "he", "she", "they", "it", "is", "are", "was", "were", "be", "been", "do", "does",
    "did", "don't", "dont", "can", "can't", "will", "won't", "would", "should", "must", "may",
    "might", "shall", "could", "and", "or", "but", "so", "if", "as", "than", "then", "one", "two",
    "six", "four", "new", "old", "same", "other", "another", "second", "first", "last", "next",
    "over", "under", "below", "above", "just", "slightly", "less", "more", "very", "too", "also",
    "without", "before", "after", "once", "there's", "there", "let", "need", "needn't", "never",
];

/// The other forms of a phrase's first word when it reads as an English verb in its plain
/// form ("switch off" -> "switching off", "switched off", "switches off"); nothing for a
/// one-word term, a non-ASCII one, or one that starts with a function word.
fn inflected(written: &str) -> Vec<String> {
    let trimmed = written.trim_start();
    let Some((first, rest)) = trimmed.split_once(' ') else {
        return Vec::new();
    };
    let lower = first.to_ascii_lowercase();
    if rest.trim().is_empty()
        || lower.len() < 3
        || !lower.bytes().all(|b| b.is_ascii_lowercase())
        || lower.ends_with("ing")
        || lower.ends_with("ed")
        || NOT_VERBS.contains(&lower.as_str())
    {
        return Vec::new();
    }
    // The irregular verbs of phrasal terms: their past forms are not made by rule.
    const IRREGULAR: &[(&str, &[&str])] = &[
        ("take", &["took", "taken"]),
        ("get", &["got", "gotten"]),
        ("shut", &["shut"]),
        ("put", &["put"]),
        ("set", &["set"]),
        ("cut", &["cut"]),
        ("break", &["broke", "broken"]),
        ("give", &["gave", "given"]),
        ("keep", &["kept"]),
        ("leave", &["left"]),
        ("send", &["sent"]),
        ("pay", &["paid"]),
        ("make", &["made"]),
        ("write", &["wrote", "written"]),
        ("hide", &["hid", "hidden"]),
    ];
    let b = lower.as_bytes();
    let n = b.len();
    let irregular: Vec<String> = IRREGULAR
        .iter()
        .find(|(verb, _)| *verb == lower)
        .map(|(_, forms)| forms.iter().map(|f| format!("{f} {rest}")).collect())
        .unwrap_or_default();
    let vowel = |c: u8| matches!(c, b'a' | b'e' | b'i' | b'o' | b'u');
    let mut forms = Vec::new();
    if lower.ends_with('e') && !lower.ends_with("ee") {
        let stem = &lower[..n - 1];
        forms.push(format!("{stem}ing"));
        forms.push(format!("{lower}d"));
        forms.push(format!("{lower}s"));
    } else if lower.ends_with('y') && !vowel(b[n - 2]) {
        let stem = &lower[..n - 1];
        forms.push(format!("{lower}ing"));
        forms.push(format!("{stem}ied"));
        forms.push(format!("{stem}ies"));
    } else {
        // One short vowel before one consonant doubles it: stop, get, shut, cut, put.
        let doubles = n <= 4
            && !vowel(b[n - 1])
            && !matches!(b[n - 1], b'w' | b'x' | b'y')
            && vowel(b[n - 2])
            && !vowel(b[n - 3]);
        let stem = if doubles {
            format!("{lower}{}", b[n - 1] as char)
        } else {
            lower.clone()
        };
        forms.push(format!("{stem}ing"));
        forms.push(format!("{stem}ed"));
        let sibilant = ["s", "sh", "ch", "x", "z"]
            .iter()
            .any(|e| lower.ends_with(e));
        forms.push(if sibilant {
            format!("{lower}es")
        } else {
            format!("{lower}s")
        });
    }
    forms
        .into_iter()
        .map(|f| format!("{f} {rest}"))
        .chain(irregular)
        .collect()
}

/// A term with a word that ends in `'s` or `s'`.
fn is_possessive_term(folded: &str) -> bool {
    // Only a possessive at the end stands alone: in "yesterday's rate" a word follows, so its
    // skeleton ("yesterdays rate") is no plural, and a disguised "ra·te" still reads it.
    folded
        .trim_end()
        .rsplit(' ')
        .next()
        .is_some_and(|w| w.len() > 2 && (w.ends_with("'s") || w.ends_with("s'")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_with_a_silent_e_matches_its_ing_form() {
        assert_eq!(ing_form("move").as_deref(), Some("moving"));
        assert_eq!(ing_form("close ").as_deref(), Some("closing "));
        assert_eq!(ing_form("free"), None);
        assert_eq!(ing_form("use "), None);
        assert_eq!(ing_form("turn off"), None);
        assert_eq!(ing_form("delet"), None);
    }

    #[test]
    fn a_bangla_term_matches_its_other_i_and_u_spellings() {
        assert_eq!(spellings("কীভাবে"), vec!["কিভাবে".to_string()]);
        assert_eq!(
            spellings("কী করি"),
            vec![
                "কি করি".to_string(),
                "কী করী".to_string(),
                "কি করী".to_string()
            ]
        );
        assert!(spellings("delete").is_empty());
        assert!(spellings("টাকা").is_empty());
    }

    #[test]
    fn a_phrase_starting_with_a_verb_matches_its_other_forms() {
        for (term, want) in [
            ("turn off", "turning off"),
            ("switch off", "switches off"),
            ("stop the", "stopping the"),
            ("take home", "taking home"),
            ("carry it", "carried it"),
            ("get around", "getting around"),
            ("work around", "worked around"),
            ("take off", "taken off"),
            ("shut off", "shutting off"),
        ] {
            assert!(
                inflected(term).iter().any(|f| f == want),
                "{term} -> {:?}",
                inflected(term)
            );
        }
        for term in [
            "the code ",
            "my own",
            "delet",
            "without notifying",
            "পাঠানো কোড",
            "turning off",
        ] {
            assert!(inflected(term).is_empty(), "{term}");
        }
    }

    fn classes(pairs: &[(&str, &[&str])]) -> BTreeMap<String, Vec<String>> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.iter().map(|s| s.to_string()).collect()))
            .collect()
    }

    #[test]
    fn classes_expand_nested_and_once() {
        let c = classes(&[
            ("credential", &["OTP", "@pin", "Two-Factor"]),
            ("pin", &["pin ", "mpin "]),
        ]);
        let mut v = Vocabulary::new(&c);
        let mut problems = Vec::new();
        let got = v.expand(
            &["@credential".into(), "otp".into(), "#record_id".into()],
            &mut problems,
        );
        assert!(problems.is_empty(), "{problems:?}");
        let folded: Vec<String> = got
            .iter()
            .map(|t| match t {
                Term::Words { folded, .. } => folded.clone(),
                Term::Detect(d) => format!("{d:?}"),
            })
            .collect();
        assert_eq!(folded, ["otp", "pin ", "mpin ", "two factor", "RecordId"]);
        // The skeleton forms: whole words keep their trailing space; a hyphen inside a word is
        // gone in the skeleton; several words also run together.
        assert!(
            matches!(&got[3], Term::Words { skeleton, .. } if skeleton == &["twofactor"]),
            "{got:?}"
        );
        assert!(
            matches!(&got[1], Term::Words { skeleton, .. } if skeleton == &["pin "]),
            "{got:?}"
        );
        let mut none = Vec::new();
        // A possessive has no skeleton form: there "customers'" would be a plural.
        let own = v.expand(&["customers'".into(), "friend's".into()], &mut none);
        assert!(
            own.iter()
                .all(|t| matches!(t, Term::Words { skeleton, .. } if skeleton.is_empty())),
            "{own:?}"
        );
        // A word of symbols only would be gone in matching: the term is refused; `&` is "and".
        let amp = v.expand(&["maker & checker".into()], &mut none);
        assert!(
            matches!(&amp[0], Term::Words { folded, skeleton } if folded == "maker and checker"
                && skeleton == &["maker and checker", "makerandchecker"]),
            "{amp:?}"
        );
        let mut problems = Vec::new();
        assert!(v
            .expand(&["maker + checker".into()], &mut problems)
            .is_empty());
        assert!(
            problems.iter().any(|p| p.contains("symbols only")),
            "{problems:?}"
        );
        let two = v.expand(&["maker checker".into()], &mut none);
        assert!(
            matches!(&two[0], Term::Words { skeleton, .. } if skeleton == &["maker checker", "makerchecker"]),
            "{two:?}"
        );
        assert!(v.check().is_empty(), "{:?}", v.check());
    }

    #[test]
    fn every_class_problem_is_reported() {
        let c = classes(&[
            ("a", &["@b"]),
            ("b", &["@a"]),
            ("unused", &["x y"]),
            ("Bad-Name", &[]),
        ]);
        let mut v = Vocabulary::new(&c);
        let mut problems = Vec::new();
        v.expand(
            &[
                "@a".into(),
                "@missing".into(),
                "#nope".into(),
                "x".into(),
                "i ".into(),
            ],
            &mut problems,
        );
        let all = problems.join("\n");
        assert!(all.contains("names itself: @a -> @b -> @a"), "{all}");
        assert!(all.contains("unknown class `@missing`"), "{all}");
        assert!(all.contains("unknown detector `#nope`"), "{all}");
        assert!(all.contains("term `x` is too short"), "{all}");
        assert!(!all.contains("term `i ` is too short"), "{all}");
        let checked: Vec<String> = v
            .check()
            .into_iter()
            .map(|(k, m)| format!("{k}: {m}"))
            .collect();
        assert!(
            checked
                .iter()
                .any(|p| p == "terms.unused: no rule uses this class"),
            "{checked:?}"
        );
        assert!(
            checked
                .iter()
                .any(|p| p.starts_with("terms.Bad-Name: class names")),
            "{checked:?}"
        );
        assert!(
            checked
                .iter()
                .any(|p| p == "terms.Bad-Name: a class needs at least one term"),
            "{checked:?}"
        );
    }
}

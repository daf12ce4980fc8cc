//! Stage 2, banglish: Latin-letter questions are tokenised and matched, whole token and case
//! folded, against the English wordlist and the romanized (Banglish, other Indic) wordlists.
//!
//! The decision weighs the evidence of the whole question, never a single hit: "block my card"
//! has no Banglish word; "amar card block kore den" has two strong ones ("amar", "kore") and one
//! that is also English ("den"), which counts half for each side. What the counts cannot settle
//! goes on to the language-ID model with this evidence attached.

use std::hash::BuildHasher;

/// An English word at least this frequent (Zipf) that is also on a romanized list is
/// ambiguous ("na", "den", "hi"): it counts half for each side.
const AMBIGUOUS_ZIPF: f32 = 4.0;
/// At or above this, a word is English whatever the romanized lists say ("to", "me", "is").
const ENGLISH_ZIPF: f32 = 5.0;

/// Case and classifier endings Banglish glues to English words and names.
const BANGLA_SUFFIXES: [&str; 10] = [
    "gula", "gulo", "guli", "der", "ta", "ti", "te", "ke", "er", "e",
];

/// What the wordlists know about one word.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct WordInfo {
    /// Zipf frequency in English, 0 when the word is not on the English list.
    english_zipf: f32,
    banglish: bool,
    other: bool,
}

/// The compiled wordlists of one product: one table of every word of every list. A token is
/// looked up whole, so a hash table does it (an automaton over ~60,000 words took most of the
/// start-up to build and answered the same question).
///
/// The table keeps no words, only a 64-bit hash of each under a key drawn at random per process
/// (SipHash, the standard library's `RandomState`): 1.7 MB less resident memory than a table of
/// strings. Two words share a hash with a probability of about 10^-10 per list, and a token
/// that is not on a list matches one with about 2·10^-15; with the key secret and fresh each
/// start, nobody can search for such a token in advance (and the language screen fails open).
#[derive(Debug)]
pub struct Lexicon {
    words: Words,
    key: std::hash::RandomState,
}

/// The table's keys are already SipHash values: the table uses them as they are.
#[derive(Debug, Default)]
pub struct Prehashed(u64);

/// Words by their keyed hash.
type Words = std::collections::HashMap<u64, WordInfo, std::hash::BuildHasherDefault<Prehashed>>;

impl std::hash::Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only `write_u64` is used; anything else still hashes deterministically.
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// Where a wordlist problem was found, for `check-config`.
#[derive(Debug, thiserror::Error)]
pub enum LexiconError {
    #[error("line {line}: {message}")]
    Line { line: usize, message: String },
    #[error("the list has no words")]
    Empty,
}

/// The evidence the wordlists found (defined beside [`super::StageEval`], which carries it
/// to lang-id).
pub use super::LatinEvidence;

#[derive(Debug, Clone, PartialEq)]
pub enum BanglishEval {
    /// Clearly English: accepted, lang-id is skipped.
    English(LatinEvidence),
    /// Clearly romanized Bangla (`bn-Latn`) or another romanized language (`hi-Latn`).
    Romanized {
        language: &'static str,
        evidence: LatinEvidence,
    },
    /// The lists cannot tell; lang-id decides.
    Undecided(LatinEvidence),
}

impl Lexicon {
    /// Build from the lists' contents. `english` lines are `word zipf`; the others one word a line.
    pub fn parse(
        english: &str,
        banglish: &str,
        others: &[&str],
    ) -> Result<Self, (usize, LexiconError)> {
        // Straight into the table of hashed words: no owned copy of a word unless it needs
        // lower-casing (start-up: 60,000 words).
        let key = std::hash::RandomState::new();
        let mut words: Words = Words::with_capacity_and_hasher(
            english.len() / 12 + banglish.len() / 8,
            Default::default(),
        );
        for (n, line) in content_lines(english) {
            let mut parts = line.split_whitespace();
            let (Some(word), Some(zipf)) = (parts.next(), parts.next()) else {
                return Err((
                    0,
                    LexiconError::Line {
                        line: n,
                        message: "expected `word zipf`".into(),
                    },
                ));
            };
            let zipf: f32 = zipf.parse().map_err(|_| {
                (
                    0,
                    LexiconError::Line {
                        line: n,
                        message: format!("`{zipf}` is not a number"),
                    },
                )
            })?;
            entry(&mut words, &key, &check_word(word, n).map_err(|e| (0, e))?).english_zipf = zipf;
        }
        for (n, line) in content_lines(banglish) {
            entry(&mut words, &key, &check_word(line, n).map_err(|e| (1, e))?).banglish = true;
        }
        for (i, list) in others.iter().enumerate() {
            for (n, line) in content_lines(list) {
                entry(
                    &mut words,
                    &key,
                    &check_word(line, n).map_err(|e| (2 + i, e))?,
                )
                .other = true;
            }
        }
        if words.is_empty() {
            return Err((0, LexiconError::Empty));
        }
        Ok(Lexicon { words, key })
    }

    /// True when a lower-case word is a common English word (Zipf 3 or more): the test the
    /// ROT13 and reversed-word decoders use ([`crate::screens::input::decode::transforms`]),
    /// strict enough that a foreign word turned by ROT13 is hardly ever one.
    pub fn is_common_english(&self, word: &str) -> bool {
        self.lookup(word).is_some_and(|i| i.english_zipf >= 3.0)
    }

    /// The word's entry when the whole token is on a list.
    fn lookup(&self, token: &str) -> Option<WordInfo> {
        self.words.get(&self.key.hash_one(token)).copied()
    }

    fn has_bangla_suffix(&self, token: &str) -> bool {
        BANGLA_SUFFIXES.iter().any(|suffix| {
            token.strip_suffix(suffix).is_some_and(|stem| {
                stem.len() >= 3
                    && self
                        .lookup(stem)
                        .is_some_and(|i| i.english_zipf >= 3.0 || i.banglish)
            })
        })
    }

    pub fn evidence(&self, text: &str) -> LatinEvidence {
        let mut ev = LatinEvidence::default();
        for token in crate::text::latin_tokens(text) {
            if token.chars().count() < 2 {
                continue;
            }
            // A Bangla word in Bengali script is the other language the products take, not an
            // accented Latin one: "A credit card এর SMS charge কত?" is English and Bangla mixed,
            // and must not read as a European language with accents.
            if token.chars().all(crate::text::is_bengali_block) {
                continue;
            }
            ev.tokens += 1;
            if !token.is_ascii() {
                ev.accented += 1;
                ev.unknown += 1;
                continue;
            }
            let Some(info) = self.lookup(&token) else {
                // "cardta", "accounte", "bkasher": an English word with a Bangla suffix is weak
                // Banglish evidence (a typo can look the same).
                if self.has_bangla_suffix(&token) {
                    ev.banglish += 0.5;
                }
                ev.unknown += 1;
                continue;
            };
            let foreign = (info.banglish || info.other) && info.english_zipf < ENGLISH_ZIPF;
            let weight = if foreign && info.english_zipf >= AMBIGUOUS_ZIPF {
                ev.english += 0.5;
                0.5
            } else if foreign {
                1.0
            } else {
                ev.english += 1.0;
                0.0
            };
            if info.banglish {
                ev.banglish += weight;
            }
            if info.other {
                ev.other += weight;
            }
        }
        ev
    }
}

/// The stage: reads the Latin form of the question (`Question::latin`, passed in by the
/// pipeline).
pub fn stage(latin: &str, lexicon: &Lexicon) -> super::StageEval {
    use super::StageEval;
    match evaluate(lexicon, latin) {
        BanglishEval::English(ev) => StageEval::Language {
            code: "en".into(),
            settled: true,
            detail: ev.detail(),
        },
        BanglishEval::Romanized { language, evidence } => StageEval::Language {
            code: language.into(),
            settled: true,
            detail: evidence.detail(),
        },
        BanglishEval::Undecided(evidence) => StageEval::Undecided { evidence },
    }
}

/// Decide from the evidence: reject clear romanized text, accept clear English.
pub fn evaluate(lexicon: &Lexicon, text: &str) -> BanglishEval {
    let ev = lexicon.evidence(text);
    let foreign = ev.foreign();
    let n = ev.tokens as f32;
    let romanized = (foreign >= 2.0 && foreign >= 0.5 * ev.english)
        || (foreign >= 1.0 && ev.english < 0.5 && n <= 3.0)
        // One romanized word in five settles it only when the rest is not plainly English: "Send
        // 500 taka to my brother" (four English words of five) goes to the language-ID model
        // with this evidence instead of being refused on one word ("taka", "lakh"). At three in
        // four, Banglish chat and other languages' rows were let through (measured), so a
        // four-word question with one such word is still refused.
        || (foreign >= 1.0 && foreign >= 0.2 * n && ev.english < 0.8 * n);
    if romanized {
        return BanglishEval::Romanized {
            language: ev.foreign_language(),
            evidence: ev,
        };
    }
    if ev.tokens > 0 && ev.english >= 0.8 * n && foreign < 1.0 && ev.accented == 0 {
        return BanglishEval::English(ev);
    }
    BanglishEval::Undecided(ev)
}

/// The word's entry in the table being built, added if new.
fn entry<'t>(words: &'t mut Words, key: &std::hash::RandomState, word: &str) -> &'t mut WordInfo {
    words.entry(key.hash_one(word)).or_default()
}

fn content_lines(list: &str) -> impl Iterator<Item = (usize, &str)> {
    list.lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
}

fn check_word(word: &str, line: usize) -> Result<std::borrow::Cow<'_, str>, LexiconError> {
    if word.bytes().all(|b| b.is_ascii_lowercase()) {
        Ok(word.into())
    } else if word.bytes().all(|b| b.is_ascii_alphabetic()) {
        Ok(word.to_ascii_lowercase().into())
    } else {
        Err(LexiconError::Line {
            line,
            message: format!("`{word}` is not a single word of ASCII letters"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lexicon() -> Lexicon {
        let english = "the 7.7\nto 7.4\nmy 6.7\ncard 5.2\nblock 4.9\nden 3.8\nplease 5.5\ndeclined 3.9\nset 5.6\nalarm 4.3\nna 4.2\n";
        let banglish = "amar\nkore\nden\nami\ntaka\nnai\nkeno\nna\n";
        let hindi = "mujhe\nkal\nbaje\nkare\nka\nna\n";
        match Lexicon::parse(english, banglish, &[hindi]) {
            Ok(l) => l,
            Err((_, e)) => panic!("{e}"),
        }
    }

    fn kind(text: &str) -> &'static str {
        match evaluate(&lexicon(), text) {
            BanglishEval::English(_) => "en",
            BanglishEval::Romanized { language, .. } => language,
            BanglishEval::Undecided(_) => "undecided",
        }
    }

    #[test]
    fn banglish_table() {
        for (text, want) in [
            ("amar card block kore den", "bn-Latn"),
            ("block my card", "en"),
            ("card declined", "en"),
            ("Block my card!", "en"),
            ("ami taka nai", "bn-Latn"),
            ("taka nai keno", "bn-Latn"),
            ("please mujhe kal baje alarm set kare", "hi-Latn"),
            // One ambiguous word is no evidence.
            ("na", "undecided"),
            ("xyzzy frobnicate", "undecided"),
            // Bengali-script words in a mostly English question are no accented Latin.
            ("my card এর block কত", "en"),
            ("", "undecided"),
        ] {
            assert_eq!(kind(text), want, "text {text:?}");
        }
    }

    #[test]
    fn whole_tokens_only() {
        let lex = lexicon();
        // "amarillo" starts with "amar" but is not the word.
        assert_eq!(lex.evidence("amarillo").unknown, 1);
        assert_eq!(lex.evidence("AMAR").banglish, 1.0);
    }

    #[test]
    fn bad_list_line_is_reported() {
        let err = Lexicon::parse("the 7.7\ncard x\n", "amar\n", &[]).err();
        assert!(
            matches!(err, Some((0, LexiconError::Line { line: 2, .. }))),
            "{err:?}"
        );
        let err = Lexicon::parse("the 7.7\n", "amar kore\n", &[]).err();
        assert!(
            matches!(err, Some((1, LexiconError::Line { line: 1, .. }))),
            "{err:?}"
        );
    }
}

//! Stage 1, script: count letters per Unicode script and decide what the letters alone can.
//!
//! Bengali script is Bangla (code-mixed with Latin words too); a dominant other script is
//! another language; Latin (or no letters at all) goes on to the Banglish stage. ZWJ/ZWNJ and
//! combining marks have the `Inherited` script and are never counted, so they cannot make
//! Bangla fail.

use unicode_script::{Script, UnicodeScript};

/// Share of letters that must be Bengali for the question to be Bangla. Low on purpose:
/// "আমার ATM card হারিয়ে গেছে" is Bangla with many Latin letters.
const BENGALI_MIN_SHARE: f32 = 0.2;

/// What the letters say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScriptEval {
    /// Bengali script: Bangla.
    Bangla { bengali: u32, latin: u32 },
    /// Another script dominates: `language` is its code where the script tells it.
    Other {
        language: String,
        script: &'static str,
        letters: u32,
    },
    /// Latin dominates: the wordlists decide.
    Latin { latin: u32, other: u32 },
    /// No letters (digits, emoji, punctuation only).
    NoLetters,
}

impl ScriptEval {
    pub fn detail(&self) -> String {
        match self {
            ScriptEval::Bangla { bengali, latin } => format!("bengali={bengali} latin={latin}"),
            ScriptEval::Other {
                script, letters, ..
            } => format!("script={script} letters={letters}"),
            ScriptEval::Latin { latin, other } => format!("latin={latin} other={other}"),
            ScriptEval::NoLetters => "no_letters".to_string(),
        }
    }
}

/// The stage: reads the language form of the question (the normalised text, with what was
/// encoded decoded in place: see [`Question::language_text`]).
///
/// [`Question::language_text`]: crate::screens::input::question::Question::language_text
pub fn stage(q: &crate::screens::input::question::Question) -> super::StageEval {
    use super::StageEval;
    let eval = evaluate(q.language_text());
    let mut detail = eval.detail();
    if q.language_decoded() {
        // Names of the encodings only, never the text.
        detail.push_str(&format!(
            " read decoded: {}",
            crate::screens::input::decode::summary(q.decoded())
        ));
    }
    match eval {
        ScriptEval::Bangla { .. } => StageEval::Language {
            code: "bn".into(),
            settled: true,
            detail,
        },
        ScriptEval::Other { language, .. } => StageEval::Language {
            code: language,
            settled: true,
            detail,
        },
        ScriptEval::NoLetters => StageEval::LanguageUndetermined { detail },
        ScriptEval::Latin { .. } => StageEval::Pass {
            detail: Some(detail),
            score: None,
        },
    }
}

pub fn evaluate(text: &str) -> ScriptEval {
    // A handful of scripts appear in practice; a small vector beats a map here.
    let mut counts: Vec<(Script, u32)> = Vec::with_capacity(4);
    let mut total = 0u32;
    for c in text.chars() {
        if c.is_ascii() {
            if c.is_ascii_alphabetic() {
                bump(&mut counts, Script::Latin);
                total += 1;
            }
            continue;
        }
        // Fast paths for the blocks that matter most: `script()` and `is_alphabetic()` are table
        // searches (~100 ns a character), a range test is not. Letters, vowel signs and the
        // virama count; digits, dandas and currency signs do not.
        let script = match c {
            '\u{0981}'..='\u{09E3}' | '\u{09F0}' | '\u{09F1}' => {
                bump(&mut counts, Script::Bengali);
                total += 1;
                continue;
            }
            '\u{0980}'..='\u{09FF}' => continue,
            '\u{0900}'..='\u{0963}' | '\u{0971}'..='\u{097F}' => {
                bump(&mut counts, Script::Devanagari);
                total += 1;
                continue;
            }
            _ => c.script(),
        };
        if matches!(script, Script::Common | Script::Inherited | Script::Unknown) {
            continue;
        }
        if !c.is_alphabetic() && script != Script::Bengali {
            continue;
        }
        bump(&mut counts, script);
        total += 1;
    }
    if total == 0 {
        return ScriptEval::NoLetters;
    }
    let count = |s: Script| counts.iter().find(|(k, _)| *k == s).map_or(0, |(_, n)| *n);
    let bengali = count(Script::Bengali);
    let latin = count(Script::Latin);
    if bengali >= 2 && bengali as f32 >= BENGALI_MIN_SHARE * total as f32 {
        return ScriptEval::Bangla { bengali, latin };
    }
    let (top, top_n) = counts
        .iter()
        .filter(|(s, _)| *s != Script::Bengali)
        .max_by_key(|(_, n)| *n)
        .copied()
        .unwrap_or((Script::Latin, 0));
    if top == Script::Latin || top_n == 0 {
        return ScriptEval::Latin {
            latin,
            other: total - latin,
        };
    }
    ScriptEval::Other {
        language: script_language(top).to_string(),
        script: top.full_name(),
        letters: top_n,
    }
}

fn bump(counts: &mut Vec<(Script, u32)>, script: Script) {
    match counts.iter_mut().find(|(s, _)| *s == script) {
        Some((_, n)) => *n += 1,
        None => counts.push((script, 1)),
    }
}

/// The language a script stands for when it stands for one; `und` where several languages
/// share it (Arabic, Cyrillic): the lang-id model can refine those for the trace.
fn script_language(script: Script) -> &'static str {
    match script {
        Script::Devanagari => "hi",
        Script::Han => "zh",
        Script::Hiragana | Script::Katakana => "ja",
        Script::Hangul => "ko",
        Script::Tamil => "ta",
        Script::Telugu => "te",
        Script::Gujarati => "gu",
        Script::Gurmukhi => "pa",
        Script::Kannada => "kn",
        Script::Malayalam => "ml",
        Script::Sinhala => "si",
        Script::Oriya => "or",
        Script::Thai => "th",
        Script::Lao => "lo",
        Script::Khmer => "km",
        Script::Myanmar => "my",
        Script::Tibetan => "bo",
        Script::Greek => "el",
        Script::Hebrew => "he",
        Script::Georgian => "ka",
        Script::Armenian => "hy",
        Script::Ethiopic => "am",
        _ => "und",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(text: &str) -> String {
        match evaluate(text) {
            ScriptEval::Bangla { .. } => "bn".into(),
            ScriptEval::Other { language, .. } => format!("other:{language}"),
            ScriptEval::Latin { .. } => "latin".into(),
            ScriptEval::NoLetters => "none".into(),
        }
    }

    #[test]
    fn script_table() {
        for (text, want) in [
            ("আমার কার্ড হারিয়ে গেছে", "bn"),
            ("আমার ATM card হারিয়ে গেছে", "bn"),
            // ZWNJ and ZWJ inside Bangla (র‍্যাব, জ্ঞ with ZWNJ) never break it.
            ("র\u{200D}্যাব আর ক\u{200C}্ষ এর টাকা", "bn"),
            ("\u{200D}\u{200C}বিকাশ\u{200C}", "bn"),
            ("मेरा कार्ड खो गया है", "other:hi"),
            ("我的卡丢了", "other:zh"),
            ("カードをなくしました", "other:ja"),
            ("என் அட்டை தொலைந்தது", "other:ta"),
            ("بطاقتي ضاعت", "other:und"),
            ("Моя карта потерялась", "other:und"),
            ("block my card", "latin"),
            ("amar card block kore den", "latin"),
            ("Please translate 你好 for me", "latin"),
            ("1234 5678 !!!", "none"),
            ("🙂🙂", "none"),
            ("", "none"),
        ] {
            assert_eq!(kind(text), want, "text {text:?}");
        }
    }
}

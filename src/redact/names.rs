//! Internal names (tools, models, vendors, systems) in whatever form an answer writes them:
//! `Core Banking API` is also `core banking api`, `Core-Banking-API`, `core_banking_api`,
//! `CoreBankingAPI`, `C o r e  B a n k i n g`; `Finacle` is also `Finаcle` (Cyrillic `а`),
//! `ＦＩＮＡＣＬＥ` and, when the product lists it, `ফিনাকল`.
//!
//! Names and text are compared on their *squashed* form: each letter read as the skeleton
//! reads it (lower case, compatibility forms and accents undone, look-alike letters read
//! through Unicode's confusables data), and everything that is not a letter or digit (spaces,
//! hyphens, underscores, dots, joiners) left out, so a spelled-out or re-spaced name is the
//! name. It is built per character, in one pass, without the skeleton's word logic (the
//! skeleton of a whole answer costs more than the output screen's budget). A match counts only
//! where it starts and ends a word of the original text, so `openai` is found in `Open-AI` but
//! not in `reopen air`; a Bangla form may take a case ending (`ফিনাকলের`), which is masked
//! with it.

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use std::ops::Range;

/// A product's internal names and their listed other spellings, ready to match.
#[derive(Debug, Clone)]
pub(crate) struct Names {
    matcher: Option<AhoCorasick>,
    /// Per pattern: whether it is Bangla (and may take a case ending).
    bangla: Vec<bool>,
    /// The squashed patterns, for the stream's hold-back.
    squashed: Vec<String>,
    longest: usize,
}

impl Names {
    /// Every name and every other spelling of one, in one list.
    pub(crate) fn new<'a>(names: impl IntoIterator<Item = &'a str>) -> Self {
        let mut squashed: Vec<String> = Vec::new();
        for n in names {
            let s = Squashed::new(n).text;
            if !s.is_empty() && !squashed.contains(&s) {
                squashed.push(s);
            }
        }
        let matcher = (!squashed.is_empty())
            .then(|| {
                AhoCorasickBuilder::new()
                    .match_kind(MatchKind::LeftmostLongest)
                    .build(&squashed)
                    .ok()
            })
            .flatten();
        Names {
            matcher,
            bangla: squashed.iter().map(|s| !s.is_ascii()).collect(),
            longest: squashed.iter().map(String::len).max().unwrap_or(0),
            squashed,
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.matcher.is_none()
    }

    /// Every name in `text` at or after `from`, leftmost-longest, not overlapping.
    pub(crate) fn find(&self, text: &str, from: usize) -> Vec<Range<usize>> {
        let Some(m) = &self.matcher else {
            return Vec::new();
        };
        let source = &text[from..];
        let sq = Squashed::new(source);
        let mut found: Vec<Range<usize>> = m
            .find_iter(&sq.text)
            .filter_map(|x| {
                let r = sq.source(x.start()..x.end());
                let mut r = from + r.start..from + r.end;
                let bangla = self.bangla[x.pattern().as_usize()];
                if bangla {
                    // The case ending goes with the name: "[internal] তথ্য", not "[internal]র".
                    r.end += text[r.end..]
                        .chars()
                        .take_while(|c| crate::text::is_bengali_block(*c))
                        .map(char::len_utf8)
                        .sum::<usize>();
                }
                word_bounded(text, &r, bangla).then_some(r)
            })
            .collect();
        found.sort_by_key(|r| (r.start, std::cmp::Reverse(r.end)));
        let mut kept: Vec<Range<usize>> = Vec::with_capacity(found.len());
        for r in found {
            if kept.last().is_none_or(|k| r.start >= k.end) {
                kept.push(r);
            }
        }
        kept
    }

    /// For a stream: where the end of `text` could be the start of a name that more text
    /// would complete (`Temenos`, `core banking`, `F i n a`).
    pub(crate) fn open_start(&self, text: &str) -> Option<usize> {
        if self.is_empty() {
            return None;
        }
        let floor = text.len().saturating_sub(4 * self.longest + 16);
        let floor = (0..=floor)
            .rev()
            .find(|i| text.is_char_boundary(*i))
            .unwrap_or(0);
        let sq = Squashed::new(&text[floor..]);
        let mut best = None;
        // Word starts, nearest the end first, while what follows is shorter than a name.
        for (i, c) in text[floor..].char_indices().rev() {
            let starts = crate::text::is_alphanumeric(c)
                && !text[..floor + i]
                    .chars()
                    .next_back()
                    .is_some_and(crate::text::is_alphanumeric);
            if !starts {
                continue;
            }
            let tail = &sq.text[sq.at_or_after(i)..];
            if tail.len() >= self.longest {
                break;
            }
            if !tail.is_empty()
                && self
                    .squashed
                    .iter()
                    .any(|n| n.len() > tail.len() && n.starts_with(tail))
            {
                best = Some(floor + i);
            }
        }
        best
    }
}

/// A match must start a word of the original and end one (a Bangla one may take an ending).
fn word_bounded(text: &str, r: &Range<usize>, suffix_ok: bool) -> bool {
    let before = text[..r.start].chars().next_back();
    let after = text[r.end..].chars().next();
    !before.is_some_and(crate::text::is_alphanumeric)
        && (suffix_ok || !after.is_some_and(crate::text::is_alphanumeric))
}

/// The squashed form of a text, with where each of its bytes came from.
struct Squashed<'s> {
    source: &'s str,
    text: String,
    /// For each byte of `text`: where in `source` the character it came from starts.
    from: Vec<u32>,
}

impl<'s> Squashed<'s> {
    fn new(source: &'s str) -> Self {
        let bytes = source.as_bytes();
        let mut text = String::with_capacity(source.len());
        let mut from = Vec::with_capacity(source.len());
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            // ASCII, most of any answer, squashes to one byte or none: one table look.
            if b < 0x80 {
                let s = ASCII_SQUASHED[usize::from(b)];
                if s != 0 {
                    text.push(char::from(s));
                    from.push(i as u32);
                }
                i += 1;
                continue;
            }
            if b == 0xE0 {
                match (bytes.get(i + 1), bytes.get(i + 2)) {
                    // The Bengali block (U+0980–U+09FF, `E0 A6 xx` and `E0 A7 xx`) is kept as
                    // it is.
                    (Some(0xA6 | 0xA7), Some(_)) => {
                        text.push_str(&source[i..i + 3]);
                        from.extend([i as u32; 3]);
                        i += 3;
                        continue;
                    }
                    // The dandas (`।` `॥`), punctuation: left out without a look-up.
                    (Some(0xA5), Some(0xA4 | 0xA5)) => {
                        i += 3;
                        continue;
                    }
                    _ => {}
                }
            }
            let Some(c) = source[i..].chars().next() else {
                break;
            };
            let before = text.len();
            squash_char(c, &mut text);
            from.extend(std::iter::repeat_n(i as u32, text.len() - before));
            i += c.len_utf8();
        }
        Squashed { source, text, from }
    }

    /// The source range squashed bytes `r` were read from.
    fn source(&self, r: Range<usize>) -> Range<usize> {
        let last = self.from[r.end - 1] as usize;
        let width = self.source[last..].chars().next().map_or(0, char::len_utf8);
        self.from[r.start] as usize..last + width
    }

    /// The first squashed byte read from source byte `i` or later.
    fn at_or_after(&self, i: usize) -> usize {
        self.from.partition_point(|s| (*s as usize) < i)
    }
}

/// The squashed form of each ASCII byte: letters lower-cased (`l` read as `i`), digits kept,
/// everything else 0 (left out). As [`squash_char`] squashes ASCII.
const ASCII_SQUASHED: [u8; 128] = {
    let mut t = [0u8; 128];
    let mut b = 0u8;
    while b < 128 {
        if b.is_ascii_alphanumeric() {
            t[b as usize] = match b.to_ascii_lowercase() {
                b'l' => b'i',
                l => l,
            };
        }
        b += 1;
    }
    t
};

/// One character's squashed form: ASCII letters and digits lower-cased (`l` read as `i`, the
/// two being drawn alike: `LIama` is `Llama`); Bengali kept (letters, signs, digits); any other
/// character read as the ASCII letter Unicode's confusables data draws it as (`Υ` → `y`, `Ⲓ` →
/// `l`, `ѳ` → `o`), else through its compatibility decomposition (full-width, mathematical),
/// accents dropped. Everything that is not a letter or digit then (spaces, punctuation, marks,
/// joiners, invisible characters) is left out.
fn squash_char(c: char, out: &mut String) {
    let ascii = |c: char, out: &mut String| {
        if c.is_ascii_alphanumeric() {
            out.push(match c.to_ascii_lowercase() {
                'l' => 'i',
                l => l,
            });
        }
    };
    if c.is_ascii() {
        ascii(c, out);
        return;
    }
    if crate::text::is_bengali_block(c) {
        out.push(c);
        return;
    }
    // Read by its lower case first, as the skeleton reads it (Greek `Ι` is drawn as `l`, but
    // its small letter `ι` is an `i`, and the data lists it under neither).
    let mut lower = c.to_lowercase();
    let small = match (lower.next(), lower.next()) {
        (Some(l), None) if l != c => look_alike_of(l),
        _ => None,
    };
    // A capital whose small letter the data draws as a digit keeps its own reading (`Б` is
    // `b`, though `б` is drawn as `6`).
    let own = || Some(crate::text::unconfuse(c)).filter(char::is_ascii_alphabetic);
    if let Some(l) = small.or_else(|| look_alike_of(c)).or_else(own) {
        ascii(l, out);
        return;
    }
    unicode_normalization::char::decompose_compatible(c, |d| {
        if d.is_ascii() {
            ascii(d, out);
        } else if let Some(l) = look_alike_of(d) {
            ascii(l, out);
        } else if crate::text::is_alphanumeric(d)
            && !unicode_normalization::char::is_combining_mark(d)
        {
            out.extend(d.to_lowercase());
        }
    });
}

/// The ASCII letter Unicode's confusables data draws `c` as, if one
/// ([`crate::text::look_alikes`], read the other way round once).
fn look_alike_of(c: char) -> Option<char> {
    static TABLE: std::sync::OnceLock<std::collections::HashMap<char, char>> =
        std::sync::OnceLock::new();
    TABLE
        .get_or_init(|| {
            ('a'..='z')
                .flat_map(|l| crate::text::look_alikes(l).map(move |c| (c, l)))
                .collect()
        })
        .get(&c)
        .copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every character that Unicode's confusables data or its compatibility form reads as one
    /// ASCII letter (itself or its small letter: Greek `Ι` through `ι`) squashes to that letter,
    /// so an internal name written with it is found: generated over all of Unicode, not listed.
    /// (Digits stay digits here, unlike the question's skeleton: names hold digits, `gpt-4o`.)
    #[test]
    fn every_character_read_as_a_letter_squashes_to_it() {
        use unicode_normalization::UnicodeNormalization;
        let squash = |t: &str| Squashed::new(t).text;
        let letter = |s: String| -> Option<char> {
            let mut cs = s.chars();
            match (cs.next(), cs.next()) {
                (Some(c), None) if c.is_ascii_alphabetic() => Some(c.to_ascii_lowercase()),
                _ => None,
            }
        };
        let mut checked = 0;
        let mut wrong = Vec::new();
        for cp in 0x80u32..=0x10FFFF {
            let Some(c) = char::from_u32(cp) else {
                continue;
            };
            if crate::text::is_bengali_block(c) {
                continue;
            }
            let mut forms = vec![c];
            let mut lower = c.to_lowercase();
            if let (Some(l), None) = (lower.next(), lower.next()) {
                forms.push(l);
            }
            let want: Vec<char> = forms
                .iter()
                .flat_map(|&f| {
                    [
                        letter(f.to_string().nfkc().collect()),
                        letter(crate::text::unconfuse(f).to_string())
                            .filter(|_| f != crate::text::unconfuse(f)),
                    ]
                })
                .flatten()
                .collect();
            if want.is_empty() {
                continue;
            }
            checked += 1;
            let got = squash(&format!("de{c}ete"));
            if !want.iter().any(|w| got == squash(&format!("de{w}ete"))) {
                wrong.push(format!("U+{cp:04X} {c}: {got:?}, want one of {want:?}"));
            }
        }
        assert!(checked > 1000, "{checked}");
        assert!(
            wrong.is_empty(),
            "{} of {checked}: {:?}",
            wrong.len(),
            &wrong[..wrong.len().min(20)]
        );
    }

    #[test]
    fn names_in_other_forms() {
        let names = Names::new([
            "Core Banking API",
            "Finacle",
            "Temenos T24",
            "gpt-4o",
            "Llama Guard",
            "OpenAI",
            "ফিনাকল",
        ]);
        for (text, want) in [
            ("ask core banking api now", Some("core banking api")),
            ("ask Core-Banking-API now", Some("Core-Banking-API")),
            ("ask core_banking_api now", Some("core_banking_api")),
            ("the Finаcle system", Some("Finаcle")),
            ("powered by ΟpenΑΙ", Some("ΟpenΑΙ")),
            ("the F i n a c l e system", Some("F i n a c l e")),
            ("the ＦＩＮＡＣＬＥ system", Some("ＦＩＮＡＣＬＥ")),
            ("on Temenos  T24.", Some("Temenos  T24")),
            ("GPT 4o answered", Some("GPT 4o")),
            ("LlamaGuard said", Some("LlamaGuard")),
            ("Open-AI made it", Some("Open-AI")),
            ("ফিনাকলের তথ্য", Some("ফিনাকলের")),
            ("reopen air", None),
            ("the finacles", None),
            ("openaire", None),
        ] {
            let found: Vec<&str> = names.find(text, 0).into_iter().map(|r| &text[r]).collect();
            assert_eq!(found.first().copied(), want, "{text:?}");
        }
    }

    /// The squashed form built byte by byte is the one read character by character, with where
    /// each byte came from: ASCII, Bengali, look-alikes, compatibility forms, and characters
    /// that squash to more bytes than they have (`ﷺ`: eighteen letters from three bytes).
    #[test]
    fn squashed_by_byte_is_squashed_per_character() {
        use proptest::prelude::*;
        let pieces = prop::sample::select(vec![
            "a", "L", "Z", "9", " ", "-", "_", ".", "\n", "আ", "০", "্", "।", "а", "Υ", "ａ", "𝐚",
            "é", "\u{200D}", "\u{FDFA}", "ﬀ", "㎏", "😀", "ß", "İ", "॥",
        ]);
        proptest!(|(parts in prop::collection::vec(pieces, 0..40))| {
            let source: String = parts.concat();
            let sq = Squashed::new(&source);
            let (mut text, mut from) = (String::new(), Vec::new());
            for (i, c) in source.char_indices() {
                let before = text.len();
                squash_char(c, &mut text);
                from.extend(std::iter::repeat_n(i as u32, text.len() - before));
            }
            prop_assert_eq!(&sq.text, &text);
            prop_assert_eq!(&sq.from, &from);
        });
    }

    #[test]
    fn a_stream_holds_the_start_of_a_name() {
        let names = Names::new(["Core Banking API", "Temenos T24"]);
        for (text, want) in [
            ("ask core bank", Some("core bank")),
            ("ask Temenos ", Some("Temenos ")),
            ("ask C o r", Some("C o r")),
            ("ask nothing", None),
        ] {
            assert_eq!(names.open_start(text).map(|i| &text[i..]), want, "{text:?}");
        }
    }
}

//! What a digit is, for every finder of [`crate::redact`]: any character Unicode gives a
//! single digit's value, whatever it looks like, plus what a digit can carry.
//!
//! - Decimal digits of every script (`Numeric_Type=Decimal`: ASCII, Bengali, Devanagari,
//!   Arabic-Indic, full-width, mathematical bold/monospace, ...). Unicode keeps them in runs of
//!   ten, zero to nine, so the value of one is its place in its run.
//! - Other digits (`Numeric_Type=Digit`): superscripts and subscripts (`⁴`, `₄`), circled,
//!   parenthesised and full-stop digits (`④`, `⑷`, `⒋`), whose compatibility (NFKC) form holds
//!   exactly one decimal digit; and the enclosed digits with no decomposition at all (negative
//!   and double circled `❹`, `➍`, `⓸`, Ethiopic `፬`), read by their place in their run.
//! - What follows a digit and draws on it: combining marks (`4⃣`, the keycap's U+20E3; an
//!   enclosing circle U+20DD; an underline U+0332) and variation selectors (the keycap's
//!   U+FE0F): `4️⃣` is one digit four characters wide.
//!
//! Nothing here is a list of code points but the three zeros that the data leaves without a
//! value (below). The tables come from ICU's compiled Unicode data at first use.

use icu_properties::props::NumericType;
use icu_properties::CodePointMapData;
use std::sync::OnceLock;

/// The value of a single digit of any script or form; `None` for anything else (`½`, `⑩`,
/// `Ⅻ` are numbers, not digits).
pub fn digit_char(c: char) -> Option<u32> {
    if c.is_ascii() {
        return c.is_ascii_digit().then(|| c as u32 - 0x30);
    }
    if ('\u{09E6}'..='\u{09EF}').contains(&c) {
        return Some(c as u32 - 0x09E6);
    }
    // The three zeros that stand alone in their sets, which the data leaves without a value.
    if matches!(c, '\u{24FF}' | '\u{1F10B}' | '\u{1F10C}') {
        return Some(0);
    }
    match CodePointMapData::<NumericType>::new().get(c) {
        NumericType::Decimal => Some(place_in_run(c, decimal_runs(), 0)),
        NumericType::Digit => compatibility_digit(c).or_else(|| enclosed_digit(c)),
        _ => None,
    }
}

/// The digit starting at byte `i` of `text` and its length in bytes, the marks it carries
/// included. ASCII and Bengali (`E0 A7 A6`–`E0 A7 AF`) are read without a table look-up.
///
/// Inlined: every finder asks this of most bytes it reads, and nearly all of them are ASCII or
/// Bengali, answered here without a call; the rest go to [`digit_at_slow`].
#[inline]
pub(crate) fn digit_at(text: &str, i: usize) -> Option<(u32, usize)> {
    let bytes = text.as_bytes();
    match *bytes.get(i)? {
        b @ b'0'..=b'9' => Some((u32::from(b - b'0'), 1 + carried_marks(&text[i + 1..]))),
        // The Bengali block (U+0980–U+09FF): its digits (`E0 A7 A6`–`E0 A7 AF`), or no digit.
        0xE0 if bytes.get(i + 1) == Some(&0xA6) => None,
        0xE0 if bytes.get(i + 1) == Some(&0xA7) => match bytes.get(i + 2) {
            Some(&b @ 0xA6..=0xAF) => {
                Some((u32::from(b - 0xA6), 3 + carried_marks(&text[i + 3..])))
            }
            _ => None,
        },
        b if b < 0xC0 => None,
        _ => digit_at_slow(text, i),
    }
}

/// [`digit_at`] for a character outside ASCII and Bengali.
#[inline(never)]
fn digit_at_slow(text: &str, i: usize) -> Option<(u32, usize)> {
    let c = text.get(i..)?.chars().next()?;
    let len = c.len_utf8();
    Some((digit_char(c)?, len + carried_marks(&text[i + len..])))
}

/// Bytes of combining marks and variation selectors at the start of `rest`: what a digit
/// before them carries (a keycap, an enclosing circle).
#[inline]
fn carried_marks(rest: &str) -> usize {
    // Nearly always the next byte is ASCII: nothing to read.
    if rest.as_bytes().first().is_none_or(|b| *b < 0x80) {
        return 0;
    }
    marks_after(rest)
}

#[inline(never)]
fn marks_after(rest: &str) -> usize {
    rest.chars()
        .take_while(|c| {
            unicode_normalization::char::is_combining_mark(*c)
                || ('\u{FE00}'..='\u{FE0F}').contains(c)
        })
        .map(char::len_utf8)
        .sum()
}

/// A digit whose compatibility decomposition holds exactly one decimal digit and no letter:
/// `⁴` → `4`, `⑷` → `(4)`, `⒋` → `4.`, `🄅` → `4,`.
fn compatibility_digit(c: char) -> Option<u32> {
    let mut value = None;
    let mut other = false;
    unicode_normalization::char::decompose_compatible(c, |d| {
        match d.is_ascii_digit().then(|| d as u32 - 0x30).or_else(|| {
            (CodePointMapData::<NumericType>::new().get(d) == NumericType::Decimal)
                .then(|| place_in_run(d, decimal_runs(), 0))
        }) {
            Some(v) if value.is_none() => value = Some(v),
            Some(_) => other = true,
            None => other |= d.is_alphanumeric(),
        }
    });
    value.filter(|_| !other)
}

/// A digit with no decomposition (`❹`, `➍`, `⓸`, `፬`): its place in its run of such digits.
/// A run of ten starts at zero; a shorter one at one (Unicode encodes the zeros of these sets
/// apart, where it encodes them at all: `⓿`, `🄋`, `🄌`, read in [`digit_char`]).
fn enclosed_digit(c: char) -> Option<u32> {
    let runs = enclosed_runs();
    let i = runs.partition_point(|(start, _)| *start <= c as u32);
    let (start, end) = *runs.get(i.checked_sub(1)?)?;
    if c as u32 > end {
        return None;
    }
    let first = if end - start + 1 >= 10 { 0 } else { 1 };
    Some(place_in_run(c, runs, first))
}

/// `(c − start of its run) mod 10 + first`, for `c` inside one of `runs`.
fn place_in_run(c: char, runs: &[(u32, u32)], first: u32) -> u32 {
    let cp = c as u32;
    let i = runs.partition_point(|(start, _)| *start <= cp);
    let start = i.checked_sub(1).map_or(cp, |i| runs[i].0);
    (cp - start) % 10 + first
}

/// The runs of decimal digits, sorted: `(first, last)` code points.
fn decimal_runs() -> &'static [(u32, u32)] {
    static RUNS: OnceLock<Vec<(u32, u32)>> = OnceLock::new();
    RUNS.get_or_init(|| {
        CodePointMapData::<NumericType>::new()
            .iter_ranges_for_value(NumericType::Decimal)
            .map(|r| (*r.start(), *r.end()))
            .collect()
    })
}

/// The runs of `Numeric_Type=Digit` characters that have no compatibility decomposition.
fn enclosed_runs() -> &'static [(u32, u32)] {
    static RUNS: OnceLock<Vec<(u32, u32)>> = OnceLock::new();
    RUNS.get_or_init(|| {
        let mut runs: Vec<(u32, u32)> = Vec::new();
        for range in
            CodePointMapData::<NumericType>::new().iter_ranges_for_value(NumericType::Digit)
        {
            for cp in range {
                let Some(c) = char::from_u32(cp) else {
                    continue;
                };
                if compatibility_digit(c).is_some() {
                    continue;
                }
                match runs.last_mut() {
                    Some((_, end)) if *end + 1 == cp => *end = cp,
                    _ => runs.push((cp, cp)),
                }
            }
        }
        runs
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values as Python's `unicodedata.digit` gives them (Unicode 14), one or more of every
    /// kind of digit.
    #[test]
    fn every_kind_of_digit_has_its_value() {
        for (c, d) in [
            ('0', 0),
            ('7', 7),
            ('৫', 5),
            ('０', 0),
            ('９', 9),
            ('४', 4),
            ('٧', 7),
            ('۸', 8),
            ('𝟗', 9),
            ('𝟬', 0),
            ('𝟮', 2),
            ('𝟿', 9),
            ('๓', 3),
            ('᠑', 1),
            ('⁰', 0),
            ('¹', 1),
            ('²', 2),
            ('³', 3),
            ('⁹', 9),
            ('₀', 0),
            ('₇', 7),
            ('①', 1),
            ('⑨', 9),
            ('⓪', 0),
            ('⑷', 4),
            ('⒋', 4),
            ('⒐', 9),
            ('🄅', 4),
            ('🄀', 0),
            ('❶', 1),
            ('❹', 4),
            ('❾', 9),
            ('➀', 1),
            ('➍', 4),
            ('⓵', 1),
            ('⓸', 4),
            ('⓿', 0),
            ('🄋', 0),
            ('🄌', 0),
            ('፩', 1),
            ('፱', 9),
            ('𐩃', 4),
            ('𑁕', 4),
            ('🯶', 6),
        ] {
            assert_eq!(digit_char(c), Some(d), "{c:?} U+{:04X}", c as u32);
        }
        for c in ['a', '½', 'Ⅻ', '⑩', '⓾', '❿', '/', '\u{0A65}', '৴', 'ক'] {
            assert_eq!(digit_char(c), None, "{c:?}");
        }
    }

    #[test]
    fn a_digit_carries_its_keycap_and_marks() {
        for (text, value, len) in [
            ("4\u{FE0F}\u{20E3}5", 4, 7),
            ("4\u{20E3}", 4, 4),
            ("7\u{20DD} ", 7, 4),
            ("৪\u{0332}", 4, 5),
            ("4 ", 4, 1),
        ] {
            assert_eq!(digit_at(text, 0), Some((value, len)), "{text:?}");
        }
        assert_eq!(digit_at("ক", 0), None);
    }
}

//! The figure finder: every number a text states as a fact (an amount, a count, a percentage, a
//! decimal), each in one canonical form, so that the lookup check can compare an answer's
//! figures with what the turn's tool results stated, whatever the spelling: `৳5,000.00`,
//! `Tk 5000`, `5,000 taka`, `৫,০০০ টাকা` and `"balance": 5000` are all `5000`; `1,00,000`,
//! `১,০০,০০০`, `1 lakh` and `100000` are all `100000`; `12.50%` is `12.5%`.
//!
//! Canonical form: ASCII digits, no grouping, no leading zeros, the fraction without trailing
//! zeros (and no point when nothing is left of it), a scale word applied exactly (`1.5 lakh` =
//! `150000`, `২ কোটি` = `20000000`), and `%` after a percentage. The arithmetic is on the digit
//! strings, never on floats, so nothing is rounded.
//!
//! What is read as a number: digits of any script (the shared reader of
//! [`crate::redact::digits`]), with `,` grouping in thousands (`1,234,567`) or lakhs
//! (`12,34,567`), one decimal point, a currency before or after (`৳`, `Tk`, `BDT`, `taka`,
//! `টাকা`), a scale word after (`thousand`, `lakh`/`lac`, `crore`, `million`, `হাজার`, `লাখ`/`লক্ষ`,
//! `কোটি`) and `%`, `percent`, `শতাংশ` after. An amount said in parts, each smaller than the scale
//! before it, is one amount (`8 lakh 45 thousand` = `845000`).
//!
//! What is not a figure, and why (these are not facts about the customer's records, or are
//! identifiers the output screen masks):
//!
//! - **dates**, every form: `12/05/2025`, `2025-05-12`, `12.05.2025`, a day or a year next to a
//!   month name (`12 May`, `মে ১২`, `May 2025`), and a year (1900–2100) that a year word
//!   introduces or follows (`in 2024`, `since 2019`, `২০২৪ সালে`). A bare four-digit number with no
//!   such word is a figure: a count of 2000 must not pass as a year. Dates are never checked,
//!   whether the person gave them or not: the records' dates are not what the failure
//!   is about, and an answer restating "your statement of 12 May" is not a made-up balance.
//! - **times**: `10:42`, `10 am`, `৫ টায়`.
//! - **list and step numbers**: `1.` or `2)` opening a line, `Step 2`, `ধাপ ৩`, `option 1`,
//!   and ordinals (`1st`, `3rd`).
//! - **identifiers**: a number with a leading zero (`01711…`, `0042`), ten or more digits
//!   without grouping, digit groups joined by spaces or dashes that make eight digits or more
//!   (`4111 1111 1111 1111`, `01711-223344`), `+` before digits, letters attached to the digits
//!   (`CUST-0098`, `A12`, `5G`), and digits right after a masking character (`****1111`).
//!
//! The product's own constants (its hotline, published fees) are figures here; the lookup
//! check grounds them from the product's `[lookup] constants`.

use crate::redact::digits::digit_at;
use std::ops::Range;

/// What kind of figure a number is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FigureKind {
    /// A currency is next to it, or a scale word (`2 lakh`).
    Amount,
    /// A whole number with no currency.
    Count,
    /// `%`, `percent`, `শতাংশ` after it.
    Percent,
    /// A number with a fraction and no currency.
    Decimal,
}

/// One figure a text states.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Figure {
    /// The canonical form (see the module documentation).
    pub canonical: String,
    pub kind: FigureKind,
    /// Byte span in the text: the digits (and scale word), not the currency.
    pub span: Range<usize>,
}

/// Every figure `text` states, canonical: "1,00,000" = "100000" = "১,০০,০০০" = "১০০০০০";
/// "৳5,000.00" = "5000"; "12.5%" = "12.5%". Byte spans into `text`.
pub fn stated(text: &str) -> Vec<Figure> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    // Where the last number read ended, and whether it was plain digits (for joined groups).
    while i < bytes.len() {
        if digit_at(text, i).is_none() {
            i += utf8_len(bytes[i]);
            continue;
        }
        let compound = read_compound(text, i);
        i = compound.end.max(i + 1);
        classify(text, compound, &mut out);
    }
    joined_scales(text, out)
}

/// An amount said in parts, each smaller than the scale before it, is one amount: "8 lakh 45
/// thousand" = 845000, "১ লাখ ২৫ হাজার টাকা" = 125000, "2 crore 50 lakh" = 25000000, "1 lakh
/// 25 thousand 500 taka" = 125500. A part joins when only white space (or "and", "ও") stands
/// between, and it is itself scaled or a currency amount ("5 lakh 3 times" stays two figures).
fn joined_scales(text: &str, figures: Vec<Figure>) -> Vec<Figure> {
    let mut out: Vec<Figure> = Vec::with_capacity(figures.len());
    // The scale of the last figure of `out`, when it ends in a scale word and can take a part.
    let mut open: Option<u32> = None;
    for f in figures {
        let scale = scale_at_end(&text[f.span.clone()]);
        let joins = match (open, out.last()) {
            (Some(k), Some(prev)) => {
                let gap = text[prev.span.end..f.span.start].trim();
                let gap_ok = gap.is_empty() || matches!(gap, "and" | "ও" | "এবং");
                let part_ok = scale.is_some_and(|s| s < k) || f.kind == FigureKind::Amount;
                let below = integer(&f.canonical).is_some_and(|v| v < 10u128.pow(k));
                gap_ok && part_ok && below
            }
            _ => false,
        };
        match (joins, out.last_mut()) {
            (true, Some(prev)) => {
                let sum = integer(&prev.canonical).zip(integer(&f.canonical));
                if let Some((a, b)) = sum {
                    prev.canonical = (a + b).to_string();
                    prev.span = prev.span.start..f.span.end;
                    prev.kind = FigureKind::Amount;
                    open = scale;
                    continue;
                }
                open = scale;
                out.push(f);
            }
            _ => {
                open = scale;
                out.push(f);
            }
        }
    }
    out
}

/// The scale word a figure's span ends with (`8 lakh` → 5).
fn scale_at_end(span: &str) -> Option<u32> {
    let word = span
        .rsplit(|c: char| c.is_whitespace() || digit_at_char(c).is_some())
        .next()?
        .to_lowercase();
    is_scale(&word)
}

/// A canonical figure that is a whole number.
fn integer(canonical: &str) -> Option<u128> {
    canonical.parse().ok()
}

/// The figure a value of a tool result holds (a JSON number or string): the canonical forms
/// of [`stated`] over its text.
pub fn canonical_of(text: &str) -> Vec<String> {
    stated(text).into_iter().map(|f| f.canonical).collect()
}

/// The lengths of the JSON arrays a tool result holds (a list of three transactions grounds
/// "3 transactions"), when the text is JSON; nothing otherwise.
pub fn counted(text: &str) -> Vec<String> {
    let t = text.trim_start();
    if !(t.starts_with('{') || t.starts_with('[')) {
        return Vec::new();
    }
    let Ok(v) = serde_json::from_str::<serde_json::Value>(t) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut stack = vec![&v];
    while let Some(v) = stack.pop() {
        match v {
            serde_json::Value::Array(a) => {
                out.push(a.len().to_string());
                stack.extend(a.iter());
            }
            serde_json::Value::Object(o) => stack.extend(o.values()),
            _ => {}
        }
    }
    out
}

/// The number part of a canonical figure (`12.5%` → `12.5`).
pub fn number_part(canonical: &str) -> &str {
    canonical.strip_suffix('%').unwrap_or(canonical)
}

/// One number as written: its digits, grouping and decimal part.
#[derive(Debug, Default, Clone)]
struct Number {
    start: usize,
    end: usize,
    int: String,
    frac: Option<String>,
    /// Digits per group when `,` grouped it.
    groups: Vec<usize>,
}

impl Number {
    fn digits(&self) -> usize {
        self.int.len() + self.frac.as_ref().map_or(0, String::len)
    }
    fn plain(&self) -> bool {
        self.groups.len() <= 1 && self.frac.is_none()
    }
    fn grouping_ok(&self) -> bool {
        let g = &self.groups;
        if g.len() <= 1 {
            return true;
        }
        let western = (1..=3).contains(&g[0]) && g[1..].iter().all(|n| *n == 3);
        let lakhs = g.last() == Some(&3)
            && (1..=2).contains(&g[0])
            && g[1..g.len() - 1].iter().all(|n| *n == 2);
        western || lakhs
    }
}

/// Numbers joined by `/`, `-`, `:`, `.` (a second point) or single spaces: a date, a time, a
/// phone number, a range, a card, or one number.
#[derive(Debug)]
struct Compound {
    parts: Vec<Number>,
    /// The joiners between the parts, in order.
    joins: Vec<char>,
    end: usize,
}

/// Read one number at `i`: digits, `,` between digit groups, one `.` before a fraction.
fn read_number(text: &str, i: usize) -> Number {
    let mut n = Number {
        start: i,
        ..Number::default()
    };
    let mut at = i;
    let mut group = 0usize;
    loop {
        if let Some((d, len)) = digit_at(text, at) {
            let c = char::from(b'0' + d as u8);
            match &mut n.frac {
                Some(f) => f.push(c),
                None => {
                    n.int.push(c);
                    group += 1;
                }
            }
            at += len;
            continue;
        }
        let next_is_digit = |skip: usize| digit_at(text, at + skip).is_some();
        match text.as_bytes().get(at) {
            Some(b',') if n.frac.is_none() && next_is_digit(1) => {
                n.groups.push(group);
                group = 0;
                at += 1;
            }
            Some(b'.') if n.frac.is_none() && next_is_digit(1) => {
                n.frac = Some(String::new());
                at += 1;
            }
            _ => break,
        }
    }
    n.groups.push(group);
    n.end = at;
    n
}

fn read_compound(text: &str, i: usize) -> Compound {
    let mut parts = vec![read_number(text, i)];
    let mut joins = Vec::new();
    while let Some(last) = parts.last() {
        let at = last.end;
        let bytes = text.as_bytes();
        let join = match bytes.get(at) {
            Some(&b @ (b'/' | b'-' | b':' | b'.')) => Some((b as char, 1)),
            // A single space between two plain digit runs (a card, a phone in groups).
            Some(b' ') if last.plain() => Some((' ', 1)),
            _ => None,
        };
        let Some((j, len)) = join else { break };
        if digit_at(text, at + len).is_none() {
            break;
        }
        let next = read_number(text, at + len);
        if j == ' ' && !(next.plain() && next.int.len() >= 3 && last.int.len() >= 3) {
            break;
        }
        joins.push(j);
        parts.push(next);
    }
    let end = parts.last().map_or(i, |p| p.end);
    Compound { parts, joins, end }
}

/// Decide what a compound is and push its figures.
fn classify(text: &str, c: Compound, out: &mut Vec<Figure>) {
    if c.parts.len() > 1 {
        let digits: usize = c.parts.iter().map(Number::digits).sum();
        // Cards, phones and accounts in groups; dates, times.
        if digits >= 8 && c.joins.iter().all(|j| matches!(j, ' ' | '-')) {
            return;
        }
        if c.joins.iter().any(|j| matches!(j, ':' | '/' | '.')) || c.parts.len() > 2 {
            return;
        }
        if c.joins[0] == ' ' {
            // Two short groups joined by a space: two numbers, read on their own.
            for p in c.parts {
                single(text, p, out);
            }
            return;
        }
        // `a-b`: a date (`2025-05`), else a range of two figures.
        if c.parts.iter().any(|p| p.int.len() == 4 && p.plain()) && c.parts[0].int.len() == 4 {
            return;
        }
        for p in c.parts {
            single(text, p, out);
        }
        return;
    }
    for p in c.parts {
        single(text, p, out);
    }
}

/// One number on its own: excluded, or a figure.
fn single(text: &str, n: Number, out: &mut Vec<Figure>) {
    if !n.grouping_ok() {
        // `1,2,3`: a list of small numbers, not one figure.
        if n.groups.iter().all(|g| *g <= 3) && n.frac.is_none() {
            let mut at = n.start;
            for _ in &n.groups {
                let part = read_plain(text, at);
                single(text, part.clone(), out);
                at = part.end + 1;
            }
        }
        return;
    }
    let before = &text[..n.start];
    let after = &text[n.end..];
    // Identifiers.
    let before_char = before.chars().next_back();
    // Letters glued before the digits are a code (`A12`, `CUST0098`), unless they are a
    // currency written against the amount (`Tk12,400`, `BDT12,400`).
    let glued_currency =
        before_char.is_some_and(|c| c.is_ascii_alphabetic()) && is_currency(&word_before(before));
    if !glued_currency
        && before_char.is_some_and(|c| c.is_ascii_alphabetic() || c == '+' || is_mask_char(c))
    {
        return;
    }
    // The visible end of a masked value: `**** **** **** 1111`, `*******-1234`.
    let masked_before = before
        .trim_end_matches([' ', '-', '\u{a0}'])
        .chars()
        .next_back();
    if masked_before.is_some_and(is_mask_char) {
        return;
    }
    if before.ends_with('-')
        && before[..before.len() - 1].ends_with(|c: char| c.is_ascii_alphabetic())
    {
        return;
    }
    if n.int.len() > 1 && n.int.starts_with('0') {
        return;
    }
    if n.plain() && n.int.len() >= 10 {
        return;
    }
    // Letters attached after: an ordinal, a time, a unit, a code.
    let attached: String = after
        .chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .flat_map(char::to_lowercase)
        .collect();
    let prev = word_before(before);
    let (next, next_at) = word_after(after);
    if matches!(attached.as_str(), "st" | "nd" | "rd" | "th") {
        return;
    }
    // Only the next few characters can say "a.m." or "o'clock" (not the whole rest, lowered).
    let lower_after: String = after
        .trim_start()
        .chars()
        .take(8)
        .flat_map(char::to_lowercase)
        .collect();
    let spelled_time = ["a.m", "p.m", "o'clock", "o’clock"]
        .iter()
        .any(|t| lower_after.starts_with(t));
    if is_time_word(&attached) || is_time_word(&next) || spelled_time {
        return;
    }
    if !attached.is_empty() && !is_currency(&attached) && is_scale(&attached).is_none() {
        return;
    }
    // List and step numbers.
    if is_step_word(&prev) {
        return;
    }
    // Nothing but white space and a bullet between the line's start and the number (read
    // backwards, so it stops at the first other character).
    let line_start = before
        .chars()
        .rev()
        .take_while(|c| *c != '\n')
        .all(|c| c.is_whitespace() || matches!(c, '-' | '*' | '•'));
    let enumerator = n.frac.is_none()
        && (after.starts_with(". ")
            || after.starts_with(") ")
            || after.starts_with(")\t")
            || after == ".");
    if line_start && enumerator {
        return;
    }
    // A numbered list run into the text: `To check: 1. Open the app. 2. Tap Statement.`. An
    // item is a small number after a sentence or clause end (`.`, `:`, `।`, `?`, `!`), and the
    // list starts at 1: item n counts only when item n − 1 came before it, so "the fee is: 5."
    // stays a figure.
    if enumerator && n.plain() && n.int.len() <= 2 && item_position(before) {
        let k: u32 = n.int.parse().unwrap_or(0);
        if k == 1 || (k > 1 && has_item(before, k - 1)) {
            return;
        }
    }
    // Dates with a month name, and years.
    let small = n.plain() && n.int.len() <= 2;
    let year =
        n.plain() && n.int.len() == 4 && (1900..=2100).contains(&n.int.parse::<u32>().unwrap_or(0));
    if (small || year) && (is_month(&prev) || is_month(&next)) {
        return;
    }
    if year && (is_year_word_before(&prev) || is_year_word_after(&next) || month_two_back(before)) {
        return;
    }
    // A year before a noun, as a label: `your 2025 tax certificate`, `the 2024 statement`. A
    // count is written before a plural (`2000 transfers`) or with a classifier (`২০০০টি`), an
    // amount with a currency or scale: those stay figures.
    let labels_a_noun = attached.is_empty()
        && !next.is_empty()
        && !next.ends_with('s')
        && next.chars().all(|c| c.is_ascii_alphabetic())
        && !is_currency(&next)
        && is_scale(&next).is_none()
        && !matches!(next.as_str(), "percent" | "pc");
    if year && labels_a_noun && !is_currency(&prev) && !before.trim_end().ends_with('৳') {
        return;
    }
    // What it is.
    let mut kind = if n.frac.is_some() {
        FigureKind::Decimal
    } else {
        FigureKind::Count
    };
    let mut end = n.end;
    let mut scale = 0u32;
    if let Some(k) = is_scale(&attached).or_else(|| is_scale(&next)) {
        scale = k;
        kind = FigureKind::Amount;
        end = if attached.is_empty() {
            n.end + next_at.end
        } else {
            n.end + attached.len()
        };
    }
    let currency_before = is_currency(&prev) || before.trim_end().ends_with('৳');
    let after_scale = &text[end..];
    let (next2, _) = word_after(after_scale);
    let currency_after = is_currency(&attached)
        || is_currency(&next)
        || is_currency(&next2)
        || after_scale.trim_start().starts_with('৳');
    if currency_before || currency_after {
        kind = FigureKind::Amount;
    }
    let percent = after.trim_start_matches([' ', '\u{a0}']).starts_with('%')
        || matches!(next.as_str(), "percent" | "শতাংশ" | "pc");
    let mut canonical = canonical(&n.int, n.frac.as_deref().unwrap_or(""), scale);
    if percent && kind != FigureKind::Amount {
        kind = FigureKind::Percent;
        canonical.push('%');
    }
    out.push(Figure {
        canonical,
        kind,
        span: n.start..end,
    });
}

/// A run of digits only (used to split an ill-grouped list like `1,2,3`).
fn read_plain(text: &str, i: usize) -> Number {
    let mut n = Number {
        start: i,
        ..Number::default()
    };
    let mut at = i;
    while let Some((d, len)) = digit_at(text, at) {
        n.int.push(char::from(b'0' + d as u8));
        at += len;
    }
    n.groups.push(n.int.len());
    n.end = at;
    n
}

/// `int.frac × 10^scale`, canonical: no leading zeros, no trailing fraction zeros.
pub(crate) fn canonical(int: &str, frac: &str, scale: u32) -> String {
    let mut int = int.to_string();
    let mut frac = frac.to_string();
    for _ in 0..scale {
        if frac.is_empty() {
            int.push('0');
        } else {
            int.push(frac.remove(0));
        }
    }
    let int = int.trim_start_matches('0');
    let frac = frac.trim_end_matches('0');
    let int = if int.is_empty() { "0" } else { int };
    if frac.is_empty() {
        int.to_string()
    } else {
        format!("{int}.{frac}")
    }
}

fn utf8_len(b: u8) -> usize {
    match b {
        0x00..=0x7F => 1,
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xFF => 4,
        _ => 1,
    }
}

fn is_mask_char(c: char) -> bool {
    matches!(c, '*' | '•' | '●' | '×' | '#')
}

fn is_word_char(c: char) -> bool {
    c.is_alphabetic() || (crate::text::is_bengali_block(c) && digit_at_char(c).is_none())
}

fn digit_at_char(c: char) -> Option<u32> {
    crate::redact::digit_char(c)
}

/// Whether a number right after `before` opens a list item: the text's start, or a sentence
/// or clause end (`.`, `:`, `;`, `।`, `?`, `!`) and white space before it.
fn item_position(before: &str) -> bool {
    let t = before.trim_end_matches([' ', '\t', '\u{a0}', '\n', '\r']);
    t.is_empty() || (t.len() < before.len() && t.ends_with(['.', ':', ';', '।', '?', '!']))
}

/// Whether `before` holds list item `k` (`k.` or `k)` at an item position), in ASCII or
/// Bengali digits.
fn has_item(before: &str, k: u32) -> bool {
    let ascii = k.to_string();
    let bengali: String = ascii
        .chars()
        .map(|c| char::from_u32(0x09E6 + c.to_digit(10).unwrap_or(0)).unwrap_or(c))
        .collect();
    [ascii, bengali].iter().any(|digits| {
        before.match_indices(digits.as_str()).any(|(at, _)| {
            let rest = &before[at + digits.len()..];
            let head = &before[..at];
            let joined = head
                .chars()
                .next_back()
                .is_some_and(|c| digit_at_char(c).is_some());
            !joined && (rest.starts_with(". ") || rest.starts_with(") ")) && item_position(head)
        })
    })
}

/// The word before `before`'s end (one white space or none between), lower-cased, without a
/// trailing `.` (`Tk.`).
fn word_before(before: &str) -> String {
    let t = before.strip_suffix(['.']).unwrap_or(before);
    let t = t.strip_suffix([' ', '\u{a0}']).unwrap_or(t);
    let t = t.strip_suffix(['.']).unwrap_or(t);
    let start = t
        .char_indices()
        .rev()
        .take_while(|(_, c)| is_word_char(*c))
        .last()
        .map_or(t.len(), |(i, _)| i);
    t[start..].to_lowercase()
}

/// The word after `after`'s start (one white space or none before it), lower-cased, and its
/// byte range in `after`.
fn word_after(after: &str) -> (String, Range<usize>) {
    let skip = after
        .chars()
        .next()
        .filter(|c| matches!(c, ' ' | '\u{a0}'))
        .map_or(0, char::len_utf8);
    let rest = &after[skip..];
    let len: usize = rest
        .chars()
        .take_while(|c| is_word_char(*c))
        .map(char::len_utf8)
        .sum();
    (rest[..len].to_lowercase(), skip..skip + len)
}

fn is_currency(w: &str) -> bool {
    matches!(
        w,
        "tk" | "taka"
            | "bdt"
            | "টাকা"
            | "টাকার"
            | "\u{099F}\u{09BE}\u{0995}\u{09BE}\u{09DF}"
            | "\u{099F}\u{09BE}\u{0995}\u{09BE}\u{09AF}\u{09BC}"
            | "৳"
            | "takas"
    )
}

/// The power of ten a scale word multiplies by.
fn is_scale(w: &str) -> Option<u32> {
    match w {
        "thousand" | "k" | "হাজার" => Some(3),
        "lakh" | "lakhs" | "lac" | "lacs" | "লাখ" | "লক্ষ" => Some(5),
        "million" | "mn" => Some(6),
        "crore" | "crores" | "কোটি" => Some(7),
        _ => None,
    }
}

fn is_time_word(w: &str) -> bool {
    matches!(
        w,
        "am" | "pm"
            | "hrs"
            | "oclock"
            | "টার"
            | "\u{099F}\u{09BE}\u{09DF}"
            | "\u{099F}\u{09BE}\u{09AF}\u{09BC}"
    )
}

fn is_step_word(w: &str) -> bool {
    matches!(
        w,
        "step" | "steps" | "option" | "no" | "item" | "point" | "ধাপ" | "ধাপে" | "বিকল্প"
    )
}

fn is_month(w: &str) -> bool {
    matches!(
        w,
        "january" | "february" | "march" | "april" | "may" | "june" | "july" | "august"
            | "september" | "october" | "november" | "december" | "jan" | "feb" | "mar"
            | "apr" | "jun" | "jul" | "aug" | "sep" | "sept" | "oct" | "nov" | "dec"
            | "\u{099C}\u{09BE}\u{09A8}\u{09C1}\u{09DF}\u{09BE}\u{09B0}\u{09BF}"
            | "\u{099C}\u{09BE}\u{09A8}\u{09C1}\u{09AF}\u{09BC}\u{09BE}\u{09B0}\u{09BF}"
            | "\u{09AB}\u{09C7}\u{09AC}\u{09CD}\u{09B0}\u{09C1}\u{09DF}\u{09BE}\u{09B0}\u{09BF}"
            | "\u{09AB}\u{09C7}\u{09AC}\u{09CD}\u{09B0}\u{09C1}\u{09AF}\u{09BC}\u{09BE}\u{09B0}\u{09BF}"
            | "মার্চ" | "এপ্রিল" | "মে"
            | "জুন" | "জুলাই" | "আগস্ট" | "সেপ্টেম্বর" | "অক্টোবর" | "নভেম্বর" | "ডিসেম্বর"
    )
}

fn is_year_word_before(w: &str) -> bool {
    matches!(
        w,
        "in" | "since"
            | "year"
            | "from"
            | "until"
            | "till"
            | "by"
            | "of"
            | "fy"
            | "before"
            | "after"
            | "during"
    )
}

fn is_year_word_after(w: &str) -> bool {
    w.starts_with("সাল") || matches!(w, "ad" | "সনে" | "সন")
}

/// `May 12, 2025`: a month name two words before the year (a day and a comma between).
fn month_two_back(before: &str) -> bool {
    let t = before.trim_end().trim_end_matches(',');
    let t = t.trim_end_matches(|c: char| digit_at_char(c).is_some());
    is_month(&word_before(t.trim_end_matches(' ')))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canon(text: &str) -> Vec<String> {
        stated(text).into_iter().map(|f| f.canonical).collect()
    }

    #[test]
    fn one_value_many_spellings() {
        for text in [
            "৳5,000.00",
            "Tk 5000",
            "Tk. 5,000",
            "5,000 taka",
            "৫,০০০ টাকা",
            "৳৫০০০",
            "BDT 5000.0",
            "\"balance\": 5000",
            "5 thousand taka",
            "৫ হাজার টাকা",
        ] {
            assert_eq!(canon(text), vec!["5000"], "{text}");
        }
        for text in [
            "1,00,000",
            "100000",
            "১,০০,০০০",
            "১০০০০০",
            "1 lakh",
            "১ লাখ",
            "100,000",
        ] {
            assert_eq!(canon(text), vec!["100000"], "{text}");
        }
        assert_eq!(canon("1.5 lakh taka"), vec!["150000"]);
        assert_eq!(canon("২ কোটি টাকা"), vec!["20000000"]);
        assert_eq!(canon("12.50%"), vec!["12.5%"]);
        assert_eq!(canon("12.5 percent"), vec!["12.5%"]);
        assert_eq!(canon("৭.৫% সুদ"), vec!["7.5%"]);
        assert_eq!(canon("0.75"), vec!["0.75"]);
        assert_eq!(canon("you have 3 cards and ৫টি লেনদেন"), vec!["3", "5"]);
    }

    #[test]
    fn kinds() {
        let kinds: Vec<FigureKind> = stated("Tk 50, 3 items, 2.5, 7%")
            .iter()
            .map(|f| f.kind)
            .collect();
        use FigureKind::*;
        assert_eq!(kinds, vec![Amount, Count, Decimal, Percent]);
    }

    #[test]
    fn not_figures() {
        for text in [
            "on 12/05/2025",
            "on 2025-05-12",
            "on 12.05.2025",
            "on 12 May",
            "on May 12, 2025",
            "১২ মে",
            "in 2024",
            "since 2019",
            "২০২৪ সালে",
            "at 10:42",
            "at 10 am",
            "at 5pm",
            "1. Open the app",
            "  2) Tap send",
            "Step 2: tap",
            "ধাপ ৩: চাপুন",
            "the 3rd time",
            "call 01711223344",
            "card 4111 1111 1111 1111",
            "phone 01711-223344",
            "+8801711223344",
            "CUST-0098123",
            "card ****1111",
            "card **** **** **** 1111",
            "account *******-1234",
            "account 1234567890123",
            "5G network",
        ] {
            assert_eq!(canon(text), Vec::<String>::new(), "{text}");
        }
    }

    #[test]
    fn a_bare_four_digit_number_is_a_figure_and_spans_are_byte_ranges() {
        assert_eq!(canon("you made 2000 transfers"), vec!["2000"]);
        let text = "বাকি ৳৫,০০০ আছে";
        let f = &stated(text)[0];
        assert_eq!(&text[f.span.clone()], "৫,০০০");
        assert_eq!(canon("between 500-1000 taka"), vec!["500", "1000"]);
    }

    #[test]
    fn numbered_lists_run_into_the_text_and_years_as_labels_are_not_figures() {
        assert_eq!(
            canon("To check: 1. Open the app. 2. Tap Statement."),
            Vec::<String>::new()
        );
        assert_eq!(
            canon("দেখতে: ১. অ্যাপ খুলুন। ২. স্টেটমেন্ট চাপুন।"),
            Vec::<String>::new()
        );
        // Item 5 with no item 4 before it is a figure; so is a fee after a colon.
        assert_eq!(canon("The fee is: 5. Thanks"), vec!["5"]);
        assert_eq!(
            canon("Your 2025 tax certificate is ready"),
            Vec::<String>::new()
        );
        assert_eq!(canon("you sent Tk 2025 today"), vec!["2025"]);
        assert_eq!(canon("you made 2024 transfers"), vec!["2024"]);
    }

    #[test]
    fn a_currency_glued_to_the_amount_is_an_amount_and_other_letters_a_code() {
        for text in [
            "Balance: BDT12,400.",
            "Your balance is Tk12,400.",
            "taka12400 left",
            "TK12,400",
        ] {
            assert_eq!(canon(text), vec!["12400"], "{text}");
        }
        assert_eq!(canon("ref A12400 and CUST0098"), Vec::<String>::new());
    }

    #[test]
    fn an_amount_said_in_parts_is_one_amount() {
        assert_eq!(canon("8 lakh 45 thousand taka"), vec!["845000"]);
        assert_eq!(canon("১ লাখ ২৫ হাজার টাকা"), vec!["125000"]);
        assert_eq!(canon("2 crore 50 lakh taka"), vec!["25000000"]);
        assert_eq!(canon("1 lakh 25 thousand 500 taka"), vec!["125500"]);
        assert_eq!(
            canon("৮ লাখ ৪৫ হাজার টাকা এবং ২.৫ কোটি টাকা"),
            vec!["845000", "25000000"]
        );
        // Parts that are not an amount, or not smaller, stay apart.
        assert_eq!(canon("5 lakh 3 times"), vec!["500000", "3"]);
        assert_eq!(canon("2 lakh 3 lakh"), vec!["200000", "300000"]);
    }

    #[test]
    fn canonical_shifts_exactly() {
        assert_eq!(canonical("1", "5", 5), "150000");
        assert_eq!(canonical("0", "25", 1), "2.5");
        assert_eq!(canonical("007", "500", 0), "7.5");
        assert_eq!(canonical("0", "", 0), "0");
    }
}

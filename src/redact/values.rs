//! The value finder: every digit-bearing value in a text, with a guess at its kind. One finder
//! for cards, phones, NIDs, accounts, IBANs, OTPs and PINs, used by the output screen (one
//! shot and streamed), the context screen and the input side's card masking, and public as
//! [`values`] for anything else that needs to find numbers (the figures of an answer, the
//! phone or account number in a question).
//!
//! How a value is found:
//!
//! 1. **Digits** are any character with a digit's value ([`super::digits`]): every script,
//!    full-width, mathematical, superscript, circled, keycap.
//! 2. **Groups** are maximal runs of digits. Two groups are **joined** when the gap between
//!    them is short (at most three marks and two runs of white space) and holds no letter or
//!    digit, whatever its characters' category: punctuation, symbols, dashes, bullets, dandas,
//!    any space, tab or line break. A gap is *tight* (spaces, one dash, dot or slash, a
//!    bracket: how numbers are written in prose), *loose* (anything else short), or a
//!    *sentence end* (a full stop, `!`, `?` or `।` and then white space).
//! 3. In each run of joined groups, left to right:
//!    - **cards**: the longest window of whole groups with 13–19 digits that passes Luhn, with
//!      one separator throughout and a card's grouping (all groups the length of the first but
//!      the last, or 4-6-5 / 4-6-4);
//!    - **Bangladeshi mobiles**: a window of whole groups that reads `01[3-9]` + 8 digits, or
//!      `880` before that, whatever the separators;
//!    - what is left, cut at sentence ends and where the separator changes (tight ones may mix),
//!      is a **segment**, judged whole: dates, times, amounts (thousands grouping, decimals, a
//!      currency next to it), ranges and years are not values; then the words around it decide
//!      ([`super::words`]): a credential word in its sentence makes 4–8 digits an OTP or PIN, a
//!      kind word near it makes it an account, NID, card or phone; then its shape (a `+` or a
//!      bracket, a phone's length).
//! 4. **IBANs**: two letters, two check digits and 11–30 letters or digits; with the ISO 7064
//!    check passing, written with any separators; without it, only as IBANs are printed.
//!
//! Linear in the text: each group is looked at a bounded number of times (a card window spans
//! at most 19 groups), and the words are found in one pass, only when a number of four digits
//! or more needs them.

use super::digits::digit_at;
use super::words::{self, Class, Words};
use super::Kind;
use std::ops::Range;

/// What a value looks like. The first seven are values the output screen masks; the rest are
/// numbers found so that nothing mistakes them for one (and for anything that reads figures).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ValueKind {
    Card,
    Phone,
    Nid,
    Account,
    Iban,
    Otp,
    Pin,
    /// A sum of money or a figure: thousands grouping, decimals, or a currency next to it.
    Amount,
    Date,
    Time,
    Year,
    /// Any other number (a count, a range, a list, a code too short to be a value).
    Number,
}

impl ValueKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ValueKind::Card => "card",
            ValueKind::Phone => "phone",
            ValueKind::Nid => "nid",
            ValueKind::Account => "account",
            ValueKind::Iban => "iban",
            ValueKind::Otp => "otp",
            ValueKind::Pin => "pin",
            ValueKind::Amount => "amount",
            ValueKind::Date => "date",
            ValueKind::Time => "time",
            ValueKind::Year => "year",
            ValueKind::Number => "number",
        }
    }

    /// The kind the output screen masks this value as, if it masks it at all.
    pub fn masked_as(self) -> Option<Kind> {
        match self {
            ValueKind::Card => Some(Kind::Card),
            ValueKind::Phone => Some(Kind::Phone),
            ValueKind::Nid => Some(Kind::Nid),
            ValueKind::Account => Some(Kind::Account),
            ValueKind::Iban => Some(Kind::Iban),
            ValueKind::Otp => Some(Kind::Otp),
            ValueKind::Pin => Some(Kind::Pin),
            _ => None,
        }
    }
}

/// One value found by [`values`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Value {
    pub kind: ValueKind,
    /// Byte range in the text, separators inside included.
    pub span: Range<usize>,
    /// The value read out: its digits as ASCII `0`–`9` (an IBAN's letters upper-cased too).
    pub digits: String,
}

/// Every digit-bearing value in `text`, in order, with its kind guessed from its shape and the
/// words around it.
pub fn values(text: &str) -> Vec<Value> {
    find(text, 0, false)
        .into_iter()
        .map(|f| Value {
            kind: f.kind,
            digits: read_out(&text[f.start..f.end], f.kind == ValueKind::Iban),
            span: f.start..f.end,
        })
        .collect()
}

/// A value's characters as ASCII digits (and upper-case letters for an IBAN).
fn read_out(value: &str, letters: bool) -> String {
    let mut out = String::with_capacity(value.len());
    let mut i = 0;
    while i < value.len() {
        if let Some((d, len)) = digit_at(value, i) {
            out.push(char::from(b'0' + d as u8));
            i += len;
            continue;
        }
        let c = value[i..].chars().next().unwrap_or(' ');
        if letters && c.is_ascii_alphabetic() {
            out.push(c.to_ascii_uppercase());
        }
        i += c.len_utf8();
    }
    out
}

/// A value found: kind and byte range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Found {
    pub kind: ValueKind,
    pub start: usize,
    pub end: usize,
}

/// The values of `text` that start at or after `from` (the text before is context: the words
/// before a number). `cards_only`: find cards and nothing else (the input side's masking).
pub(crate) fn find(text: &str, from: usize, cards_only: bool) -> Vec<Found> {
    let mut out = Vec::new();
    if !cards_only {
        find_ibans(text, from, &mut out);
    }
    let scan = Scan::new(text, from);
    if scan.groups.is_empty() {
        return out;
    }
    let luhn = LuhnSums::new(&scan.values);
    // The words are found once, when a number long enough to need them is there.
    let mut words: Option<Words<'_>> = None;
    let mut start = 0;
    while start < scan.groups.len() {
        let mut end = start + 1;
        while end < scan.groups.len() && scan.joins[end] != Join::Break {
            end += 1;
        }
        scan.run(start..end, &luhn, cards_only, &mut words, &mut out);
        start = end;
    }
    out.sort_by_key(|f| (f.start, std::cmp::Reverse(f.end)));
    // The digits of an IBAN are not values of their own.
    let mut kept: Vec<Found> = Vec::with_capacity(out.len());
    for f in out {
        if kept.last().is_none_or(|k| f.start >= k.end) {
            kept.push(f);
        }
    }
    kept
}

/// A maximal run of digits.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Group {
    pub start: usize,
    pub end: usize,
    pub digits: usize,
    /// Index of the group's first digit in [`Scan::values`].
    first: usize,
}

/// How the gap before a group joins it to the group before.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Join {
    /// Not joined: a letter or digit, or too long a gap (or no group before).
    Break,
    /// Spaces, one dash, dot or slash, a bracket: numbers as prose writes them.
    Tight,
    /// Any other short gap without letters or digits.
    Loose,
    /// A sentence end: a terminator and white space.
    Sentence,
}

/// How a gap between two groups joins them.
pub(crate) fn join(gap: &str) -> Join {
    use icu_properties::props::GeneralCategory as Gc;
    let mut marks = 0;
    let mut space_runs = 0;
    let mut spaces = 0;
    let mut breaks = 0;
    let mut in_space = false;
    let mut tight = true;
    let mut dashes = 0;
    let mut brackets = 0;
    let mut after_terminator = false;
    let mut sentence = false;
    let mut joiners = 0;
    for c in gap.chars() {
        if c.is_whitespace() {
            spaces += 1;
            if !in_space {
                space_runs += 1;
                in_space = true;
            }
            if matches!(
                c,
                '\n' | '\r' | '\u{0B}' | '\u{0C}' | '\u{85}' | '\u{2028}' | '\u{2029}'
            ) {
                breaks += 1;
                tight = false;
            }
            sentence |= after_terminator;
            continue;
        }
        in_space = false;
        // The joiners Bangla needs are kept in the output, and invisible: digits either side
        // of them read as written together.
        if matches!(c, '\u{200C}' | '\u{200D}') {
            joiners += 1;
            continue;
        }
        if crate::text::is_alphanumeric(c) || super::digits::digit_char(c).is_some() {
            return Join::Break;
        }
        marks += 1;
        after_terminator = matches!(c, '.' | '!' | '?' | '।' | '॥' | '。' | '！' | '？' | '．');
        match c {
            '.' | '/' | '-' => dashes += 1,
            '(' | ')' => brackets += 1,
            _ if c.is_ascii() => tight = false,
            _ => match icu_properties::CodePointMapData::<Gc>::new().get(c) {
                Gc::DashPunctuation => dashes += 1,
                Gc::OpenPunctuation | Gc::ClosePunctuation => brackets += 1,
                _ => tight = false,
            },
        }
    }
    if marks > 3
        || space_runs > 2
        || spaces > 12
        || breaks > 2
        || joiners > 6
        || marks + spaces + joiners == 0
    {
        return Join::Break;
    }
    if sentence {
        Join::Sentence
    } else if tight && dashes <= 1 && brackets <= 1 && spaces <= 4 {
        Join::Tight
    } else {
        Join::Loose
    }
}

/// Two gaps are the same separator: equal, with every run of white space counted as one space.
fn same_separator(a: &str, b: &str) -> bool {
    fn norm(s: &str) -> impl Iterator<Item = char> + '_ {
        let mut space = false;
        s.chars().filter_map(move |c| {
            if c.is_whitespace() {
                let first = !space;
                space = true;
                first.then_some(' ')
            } else {
                space = false;
                Some(c)
            }
        })
    }
    norm(a).eq(norm(b))
}

/// The digit groups of a text (from a byte offset on), how each joins the one before, and the
/// digits' values.
pub(crate) struct Scan<'t> {
    text: &'t str,
    pub groups: Vec<Group>,
    /// `joins[i]`: how group `i` joins group `i - 1` (`Break` for the first).
    pub joins: Vec<Join>,
    values: Vec<u8>,
}

impl<'t> Scan<'t> {
    pub(crate) fn new(text: &'t str, from: usize) -> Self {
        let bytes = text.as_bytes();
        // An answer holds a few dozen groups: room for them from the start.
        let mut groups: Vec<Group> = Vec::with_capacity(32);
        let mut joins = Vec::with_capacity(32);
        let mut values = Vec::with_capacity(128);
        let mut i = from;
        while i < bytes.len() {
            // Skip to the next possible digit: ASCII digits, or the lead byte of a multi-byte
            // character (continuation bytes never start one).
            let Some(k) = bytes[i..]
                .iter()
                .position(|b| b.is_ascii_digit() || *b >= 0xC0)
            else {
                break;
            };
            i += k;
            let Some((d, len)) = digit_at(text, i) else {
                i += 1;
                continue;
            };
            let start = i;
            let first = values.len();
            values.push(d as u8);
            i += len;
            while let Some((d, len)) = digit_at(text, i) {
                values.push(d as u8);
                i += len;
            }
            let j = match groups.last() {
                Some(prev) => join(&text[prev.end..start]),
                None => Join::Break,
            };
            groups.push(Group {
                start,
                end: i,
                digits: values.len() - first,
                first,
            });
            joins.push(j);
        }
        Scan {
            text,
            groups,
            joins,
            values,
        }
    }

    fn gap(&self, i: usize) -> &'t str {
        &self.text[self.groups[i - 1].end..self.groups[i].start]
    }

    fn digits(&self, r: &Range<usize>) -> usize {
        self.groups[r.clone()].iter().map(|g| g.digits).sum()
    }

    fn span(&self, r: &Range<usize>) -> (usize, usize) {
        (self.groups[r.start].start, self.groups[r.end - 1].end)
    }

    fn group_digits(&self, g: usize) -> &[u8] {
        let g = &self.groups[g];
        &self.values[g.first..g.first + g.digits]
    }

    /// The value of a group (its first 12 digits).
    fn group_value(&self, g: usize) -> u64 {
        self.group_digits(g)
            .iter()
            .take(12)
            .fold(0u64, |n, d| n * 10 + u64::from(*d))
    }

    /// Find the values of one run of joined groups.
    fn run(
        &self,
        run: Range<usize>,
        luhn: &LuhnSums,
        cards_only: bool,
        words: &mut Option<Words<'t>>,
        out: &mut Vec<Found>,
    ) {
        let push = |out: &mut Vec<Found>, kind, r: &Range<usize>| {
            let (start, end) = self.span(r);
            out.push(Found { kind, start, end });
        };
        // Cards first: they need no words, and nothing else may take their digits.
        let mut taken: Vec<Range<usize>> = Vec::new();
        let mut i = run.start;
        while i < run.end {
            match self.card_window(i, run.end, luhn) {
                Some(end) => {
                    push(out, ValueKind::Card, &(i..end));
                    taken.push(i..end);
                    i = end;
                }
                None => i += 1,
            }
        }
        if cards_only {
            return;
        }
        // A number the words call an account or an NID is one, even where some of its digits
        // would pass as a card.
        if !taken.is_empty() && self.named_otherwise(&run, words, false) {
            let (start, end) = self.span(&run);
            out.retain(|f| !(f.kind == ValueKind::Card && f.start >= start && f.end <= end));
            taken.clear();
        }
        // The rest of the run, between the cards (read in place: no list of the parts).
        let mut after_card = run.start;
        for t in taken.iter().chain(std::iter::once(&(run.end..run.end))) {
            let part = after_card..t.start;
            after_card = t.end;
            if part.is_empty() {
                continue;
            }
            // Bangladeshi mobiles, whatever their separators (not across a sentence end).
            let mut at = part.start;
            let mut i = part.start;
            while i < part.end {
                match self.mobile_window(i, part.end) {
                    // "NID 8801 6875 4005 3" reads as +880 1687 540053 too: the words decide.
                    Some(end) if !self.named_otherwise(&(i..end), words, true) => {
                        self.segments(at..i, words, out);
                        push(out, ValueKind::Phone, &(i..end));
                        i = end;
                        at = end;
                    }
                    _ => i += 1,
                }
            }
            self.segments(at..part.end, words, out);
        }
    }

    /// Whether the words around groups `r` (`before_only`: the label written before them) call
    /// them an account or an NID, which the shape of a card or a mobile does not override.
    fn named_otherwise(
        &self,
        r: &Range<usize>,
        words: &mut Option<Words<'t>>,
        before_only: bool,
    ) -> bool {
        let (start, end) = self.span(r);
        let words = words.get_or_insert_with(|| Words::new(self.text));
        words.read_skeleton(start, end);
        let kind = if before_only {
            words.kind_before(start, end)
        } else {
            words.kind(start, end)
        };
        matches!(kind, Some(Class::Account | Class::Nid))
    }

    /// The end of the longest card window starting at group `i`, if any.
    fn card_window(&self, i: usize, end: usize, luhn: &LuhnSums) -> Option<usize> {
        let first = self.groups[i].first;
        let mut best = None;
        let mut j = i;
        while j < end && j - i < 19 {
            if j > i
                && (self.joins[j] == Join::Break || !same_separator(self.gap(j), self.gap(i + 1)))
            {
                break;
            }
            let last = self.groups[j].first + self.groups[j].digits;
            if last - first > 19 {
                break;
            }
            if last - first >= 13 && luhn.valid(first, last) && self.card_grouping(i..j + 1) {
                best = Some(j + 1);
            }
            j += 1;
        }
        best
    }

    /// A card's grouping: one group; every group but the last as long as the first, the last
    /// no longer than four or the first (`4111 1111 1111 1111`, `411 111 111 111 1111`,
    /// `4 1 1 1 …`); Amex and Diners' 4-6-5 and 4-6-4; or a first group of eight digits or
    /// more, however the rest is split (`41111111111 11 111`: no prose number starts so long,
    /// and a card broken up at random must not pass as three numbers).
    fn card_grouping(&self, r: Range<usize>) -> bool {
        // Read from the groups in place (this runs for every window a card could be).
        let groups = &self.groups[r];
        let (Some((last, head)), Some(first)) = (groups.split_last(), groups.first()) else {
            return false;
        };
        let (first, last) = (first.digits, last.digits);
        head.is_empty()
            || (head.iter().all(|g| g.digits == first) && last <= first.max(4))
            || (groups.len() == 3 && first == 4 && groups[1].digits == 6 && matches!(last, 4 | 5))
            || first >= 8
    }

    /// The end of a Bangladeshi mobile starting at group `i`: whole groups reading `01[3-9]`
    /// and eight digits, or the same after `880`, whatever joins them (a sentence end between
    /// two numbers that happen to read as one is rarer than a mobile written `0171. 122. 3344`).
    fn mobile_window(&self, i: usize, end: usize) -> Option<usize> {
        // Only the first thirteen digits are ever read: kept on the stack (this runs for every
        // group), with the count of all of them.
        let mut digits = [0u8; 13];
        let mut n = 0;
        let mut j = i;
        while j < end && n < 13 {
            let g = self.group_digits(j);
            let take = g.len().min(13 - n);
            digits[n..n + take].copy_from_slice(&g[..take]);
            n += g.len();
            j += 1;
            let local = match n {
                11 => &digits[..11],
                13 if digits[..3] == [8, 8, 0] => &digits[2..],
                _ => continue,
            };
            if local[0] == 0 && local[1] == 1 && (3..=9).contains(&local[2]) {
                return Some(j);
            }
        }
        None
    }

    /// Cut what is left of a run into segments (at sentence ends, and where a loose separator
    /// changes) and judge each.
    fn segments(&self, part: Range<usize>, words: &mut Option<Words<'t>>, out: &mut Vec<Found>) {
        if part.is_empty() {
            return;
        }
        let mut start = part.start;
        for g in part.start + 1..part.end {
            let same = |a: usize, b: usize| {
                (self.joins[a] == Join::Tight && self.joins[b] == Join::Tight)
                    || (self.joins[a] == self.joins[b] && same_separator(self.gap(a), self.gap(b)))
            };
            // A sentence end cuts, unless the same gap joins the groups on either side of it
            // too: "1990. 1234. 5678" is one number written with ". ".
            let repeated = |g: usize| {
                [g.wrapping_sub(1), g + 1].iter().any(|&h| {
                    h > part.start && h < part.end && same_separator(self.gap(h), self.gap(g))
                })
            };
            let sentence = self.joins[g] == Join::Sentence && !repeated(g);
            let cut = sentence || (g > start + 1 && !same(g, start + 1));
            if cut {
                self.judge(start..g, words, out);
                start = g;
            }
        }
        self.judge(start..part.end, words, out);
    }

    /// Judge one segment: what it is, from its shape, then the words around it. A segment
    /// that is no value and not one figure (a list, a range, years) is reported number by
    /// number.
    fn judge(&self, seg: Range<usize>, words: &mut Option<Words<'t>>, out: &mut Vec<Found>) {
        let digits = self.digits(&seg);
        let (kind, whole) = match self.shape(&seg) {
            Some(shape) => shape,
            None if digits < 4 => (ValueKind::Number, false),
            None => {
                let words = words.get_or_insert_with(|| Words::new(self.text));
                let kind = self.by_words(&seg, digits, words);
                (kind, kind.masked_as().is_some())
            }
        };
        if whole || seg.len() == 1 {
            let (start, end) = self.span(&seg);
            out.push(Found { kind, start, end });
        } else {
            out.extend(self.groups[seg].iter().map(|g| Found {
                kind,
                start: g.start,
                end: g.end,
            }));
        }
    }

    /// What the segment is by its shape alone, when that settles it: dates, times, amounts,
    /// years, IP addresses, social security numbers.
    /// With it, whether it is one figure (a date, an amount) or several (years).
    fn shape(&self, seg: &Range<usize>) -> Option<(ValueKind, bool)> {
        // The lengths and gaps of a short segment (nearly all of them) are kept on the stack:
        // this runs for every segment.
        const SHORT: usize = 8;
        let n = seg.len();
        let (mut lens_short, mut gaps_short) = ([0usize; SHORT], [""; SHORT]);
        let (lens_long, gaps_long): (Vec<usize>, Vec<&str>);
        let (lens, gaps): (&[usize], &[&str]) = if n <= SHORT {
            for (k, g) in seg.clone().enumerate() {
                lens_short[k] = self.groups[g].digits;
                if k > 0 {
                    gaps_short[k - 1] = self.gap(g).trim();
                }
            }
            (&lens_short[..n], &gaps_short[..n.saturating_sub(1)])
        } else {
            lens_long = self.groups[seg.clone()].iter().map(|g| g.digits).collect();
            gaps_long = (seg.start + 1..seg.end)
                .map(|g| self.gap(g).trim())
                .collect();
            (&lens_long, &gaps_long)
        };
        let one_char = |g: &str| g.chars().count() == 1;
        let v = |i: usize| self.group_value(seg.start + i);
        // hh:mm, hh:mm:ss (a time that can be: "48:39" is not one).
        if (2..=3).contains(&n)
            && lens[0] <= 2
            && lens[1..].iter().all(|l| *l == 2)
            && gaps.iter().all(|g| *g == ":" || *g == "." && n == 2)
            && v(0) <= 24
            && (1..n).all(|i| v(i) <= 59)
        {
            return Some((ValueKind::Time, true));
        }
        // 12/05/2025, 2025-05-12, 12.05.25, with a time after it or not: a day and a month
        // that can be, in either order ("48-39-20" is a code written in pairs, not a date).
        let day_month = |d: u64, m: u64| (1..=31).contains(&d) && (1..=12).contains(&m);
        let calendar = match lens[..n.min(3)] {
            [4, _, _] => day_month(v(2), v(1)),
            [_, _, _] => day_month(v(0), v(1)) || day_month(v(1), v(0)),
            _ => false,
        };
        if (3..=6).contains(&n)
            && calendar
            && matches!(
                lens[..3],
                [1..=2, 1..=2, 2] | [1..=2, 1..=2, 4] | [4, 1..=2, 1..=2]
            )
            && gaps[..2].iter().all(|g| one_char(g) && *g == gaps[0])
            && gaps[0]
                .chars()
                .all(|c| !c.is_ascii() || matches!(c, '/' | '-' | '.'))
            && lens[3..].iter().all(|l| *l <= 2)
        {
            return Some((ValueKind::Date, true));
        }
        // A range of two dates: 01/01/2025–31/03/2025, 2025-01-01 to 2025-03-31 (each half a
        // date by the rule above, a dash or "to" between them).
        let date_at = |o: usize| {
            let d = |i: usize| v(o + i);
            let calendar = match lens[o..o + 3] {
                [4, _, _] => day_month(d(2), d(1)),
                _ => day_month(d(0), d(1)) || day_month(d(1), d(0)),
            };
            calendar
                && matches!(
                    lens[o..o + 3],
                    [1..=2, 1..=2, 2] | [1..=2, 1..=2, 4] | [4, 1..=2, 1..=2]
                )
                && one_char(gaps[o])
                && gaps[o] == gaps[o + 1]
                && gaps[o]
                    .chars()
                    .all(|c| !c.is_ascii() || matches!(c, '/' | '-' | '.'))
        };
        if n == 6 && date_at(0) && date_at(3) && {
            let between = gaps[2];
            (!between.is_empty() && between.chars().all(is_dash))
                || matches!(
                    between.to_lowercase().as_str(),
                    "to" | "till" | "until" | "থেকে"
                )
        } {
            return Some((ValueKind::Date, true));
        }
        // Thousands grouping (western 1,234,567 or South Asian 12,34,567), a decimal part after
        // it or not; or a plain number with decimals (1250.50).
        let (int, decimals) = match (n, gaps.last()) {
            (2.., Some(g))
                if lens[n - 1] <= 2 && matches!(*g, "." | ",") && (n == 2 || gaps[0] != *g) =>
            {
                (&lens[..n - 1], true)
            }
            _ => (lens, false),
        };
        let thousands = |lens: &[usize]| {
            let m = lens.len();
            m >= 2
                && gaps[..m - 1].iter().all(|g| one_char(g) && *g == gaps[0])
                // A space between halves is how a code is written too ("483 920"), and no
                // one groups thousands with a dash, a slash or a colon ("483-920").
                && gaps[0].chars().all(|c| {
                    !c.is_alphanumeric() && !c.is_whitespace() && !matches!(c, '/' | ':') && !is_dash(c)
                })
                && lens[m - 1] == 3
                && ((lens[0] <= 3 && lens[1..m - 1].iter().all(|l| *l == 3))
                    || (lens[0] <= 2 && lens[1..m - 1].iter().all(|l| *l == 2)))
        };
        if thousands(int) || (decimals && int.len() == 1 && int[0] <= 9) {
            return Some((ValueKind::Amount, true));
        }
        // Years: 2023-2024, 2023, 2024 (one alone is decided by the words before it).
        if (2..=3).contains(&n) && (seg.start..seg.end).all(|g| is_year(self.group_digits(g))) {
            return Some((ValueKind::Year, false));
        }
        // 48.90.248.226 (an IP address), 460-89-9847 (a US social security number).
        if (n == 4 && lens.iter().all(|l| (1..=3).contains(l)) && gaps.iter().all(|g| *g == "."))
            || (lens[..] == [3, 2, 4] && gaps.iter().all(|g| *g == "-"))
        {
            return Some((ValueKind::Number, true));
        }
        None
    }

    /// A segment of four digits or more, by the words around it, then its shape in prose.
    fn by_words(&self, seg: &Range<usize>, digits: usize, words: &Words<'_>) -> ValueKind {
        let (start, end) = self.span(seg);
        words.read_skeleton(start, end);
        let claim = words.claim(start, end);
        if claim == Some(Class::Money) || self.currency_next_to(start, end) {
            return ValueKind::Amount;
        }
        if seg.len() == 1 && is_year(self.group_digits(seg.start)) && self.year_words(start, end) {
            return ValueKind::Year;
        }
        if (4..=8).contains(&digits) && claim.is_none() && self.credential_grouping(seg) {
            match words.credential(start, end) {
                Some(Class::Pin) => return ValueKind::Pin,
                Some(_) => return ValueKind::Otp,
                None => {}
            }
        }
        match claim.or_else(|| words.kind(start, end)) {
            Some(Class::Account) if digits >= 6 => return ValueKind::Account,
            Some(Class::Nid) if digits >= 10 => return ValueKind::Nid,
            Some(Class::Card) if (12..=19).contains(&digits) => return ValueKind::Card,
            Some(Class::Phone) if (7..=15).contains(&digits) => return ValueKind::Phone,
            // A hotline or short code: not a number to hide.
            Some(Class::Phone) => return ValueKind::Number,
            _ => {}
        }
        let before = self.text[..start].trim_end_matches([' ', '(']);
        let bracketed = self.text[start..end].contains('(')
            || before.len() < self.text[..start].trim_end().len();
        if (7..=15).contains(&digits) && (before.ends_with('+') || bracketed) {
            return ValueKind::Phone;
        }
        // Without words, only numbers written as prose writes them are values: tight
        // separators, or one loose mark without white space (`2050·1234·5678`); a list
        // ("12, 45, 300, 2000") is not one.
        let prose = (seg.start + 1..seg.end)
            .all(|g| self.joins[g] == Join::Tight || !self.gap(g).chars().any(char::is_whitespace));
        let address = words.kind(start, end) == Some(Class::Address)
            || words::word_before(self.text, start).eq_ignore_ascii_case("at")
            || (seg.len() == 2
                && self.groups[seg.start].digits == 5
                && self.groups[seg.start + 1].digits <= 3);
        if !prose || digits < 7 || address || self.is_range(seg) {
            ValueKind::Number
        } else if digits <= 8 || (seg.len() >= 3 && digits <= 12) {
            ValueKind::Phone
        } else {
            ValueKind::Account
        }
    }

    /// How people write a code: whole, in halves, or digit by digit; separated by spaces or a
    /// single mark (not a list: "10, 20, 50").
    fn credential_grouping(&self, seg: &Range<usize>) -> bool {
        let groups = &self.groups[seg.clone()];
        groups.len() == 1
            || (groups.iter().all(|g| g.digits == groups[0].digits)
                && (seg.start + 1..seg.end).all(|g| {
                    self.joins[g] == Join::Tight || !self.gap(g).chars().any(char::is_whitespace)
                }))
    }

    /// `500-1000`, `10–20`: two numbers and a dash between, the first the smaller.
    fn is_range(&self, seg: &Range<usize>) -> bool {
        if seg.len() != 2 {
            return false;
        }
        let gap = self.gap(seg.start + 1).trim();
        let dash =
            gap.chars().count() == 1
                && (gap == "~" || gap == "-" || gap.chars().all(|c| {
                    icu_properties::CodePointMapData::<icu_properties::props::GeneralCategory>::new(
                    )
                    .get(c)
                        == icu_properties::props::GeneralCategory::DashPunctuation
                }));
        let value = |g: usize| {
            self.group_digits(g)
                .iter()
                .take(12)
                .fold(0u64, |n, d| n * 10 + u64::from(*d))
        };
        dash && self.groups[seg.start].digits <= 6 && value(seg.start) <= value(seg.start + 1)
    }

    /// A currency sign or code written against the number (`৳5000`, `$120`, `5000tk`).
    fn currency_next_to(&self, start: usize, end: usize) -> bool {
        let before = self.text[..start].trim_end().chars().next_back();
        let after = self.text[end..].trim_start().chars().next();
        let sign = |c: Option<char>| {
            c.is_some_and(|c| matches!(c, '৳' | '$' | '€' | '£' | '₹' | '¥' | '%'))
        };
        sign(before) || sign(after)
    }

    /// A year named as one: "in 2025", "since 2019", "May 2025", "2025 সালে".
    fn year_words(&self, start: usize, end: usize) -> bool {
        let before = words::word_before(self.text, start).to_ascii_lowercase();
        let after = words::word_after(self.text, end).to_ascii_lowercase();
        const BEFORE: &[&str] = &[
            "in", "since", "year", "by", "from", "until", "till", "of", "during", "before",
            "after", "fy", "circa", "around", "to", "and",
        ];
        BEFORE.contains(&before.as_str())
            || is_month(&before)
            || is_month(&after)
            || after.starts_with("সাল")
            || after.starts_with("খ্রি")
    }
}

fn is_year(d: &[u8]) -> bool {
    d.len() == 4 && matches!(d[..2], [1, 9] | [2, 0])
}

fn is_month(word: &str) -> bool {
    const MONTHS: &[&str] = &[
        "jan",
        "january",
        "feb",
        "february",
        "mar",
        "march",
        "apr",
        "april",
        "may",
        "jun",
        "june",
        "jul",
        "july",
        "aug",
        "august",
        "sep",
        "sept",
        "september",
        "oct",
        "october",
        "nov",
        "november",
        "dec",
        "december",
        "জানুয়ারি",
        "ফেব্রুয়ারি",
        "মার্চ",
        "এপ্রিল",
        "মে",
        "জুন",
        "জুলাই",
        "আগস্ট",
        "সেপ্টেম্বর",
        "অক্টোবর",
        "নভেম্বর",
        "ডিসেম্বর",
    ];
    MONTHS.contains(&word)
}

/// IBANs: two letters, two check digits, then 11–30 letters or digits, in groups joined by
/// separators. A candidate that passes the ISO 7064 mod-97 check is an IBAN however it is
/// written (one separator throughout); one that does not is taken only as IBANs are printed
/// (capitals, ASCII digits, groups separated by single spaces or nothing).
fn find_ibans(text: &str, from: usize, out: &mut Vec<Found>) {
    let bytes = text.as_bytes();
    let mut i = from;
    while i + 4 <= bytes.len() {
        // Two letters and a digit first (the cheap look: an ASCII letter is always a char
        // boundary), then a word's start. The third byte first: a digit's is rare in prose, and
        // when it is neither a digit's nor a letter, the next two starts fail too (each needs
        // it to be a letter).
        let third = bytes[i + 2];
        if !(third.is_ascii_digit() || third >= 0xC0) {
            i += if third.is_ascii_alphabetic() { 1 } else { 3 };
            continue;
        }
        if !(bytes[i].is_ascii_alphabetic()
            && bytes[i + 1].is_ascii_alphabetic()
            && digit_at(text, i + 2).is_some())
        {
            i += 1;
            continue;
        }
        let starts_word = i == 0
            || !text[..i]
                .chars()
                .next_back()
                .is_some_and(crate::text::is_alphanumeric);
        if !starts_word {
            i += 1;
            continue;
        }
        match iban_at(text, i) {
            Some(end) => {
                out.push(Found {
                    kind: ValueKind::Iban,
                    start: i,
                    end,
                });
                i = end;
            }
            None => i += 1,
        }
    }
}

/// The end of an IBAN starting at byte `i` (two ASCII letters there), if one does.
fn iban_at(text: &str, i: usize) -> Option<usize> {
    // The characters read: (value 0–35, end byte, whether a group ends after it).
    let mut units: Vec<(u32, usize, bool)> = Vec::with_capacity(34);
    let mut separator: Option<&str> = None;
    let mut printed = true;
    let mut at = i;
    while units.len() < 34 {
        let unit = if let Some((d, len)) = digit_at(text, at) {
            printed &= text.as_bytes()[at].is_ascii_digit();
            Some((d, len))
        } else {
            text.as_bytes()
                .get(at)
                .filter(|b| b.is_ascii_alphabetic())
                .map(|b| {
                    printed &= b.is_ascii_uppercase();
                    (u32::from(b.to_ascii_uppercase() - b'A') + 10, 1)
                })
        };
        if let Some((v, len)) = unit {
            // Letters then digits: "GB56…", not "GBX…"; the check digits are digits.
            let n = units.len();
            if (n < 2 && v < 10) || ((2..4).contains(&n) && v >= 10) {
                return None;
            }
            at += len;
            units.push((v, at, false));
            continue;
        }
        // A separator (not inside the country code and check digits), then more of the IBAN.
        if units.len() < 4 {
            return None;
        }
        let gap_end = text[at..]
            .char_indices()
            .take(16)
            .find(|(_, c)| c.is_ascii_alphanumeric() || super::digits::digit_char(*c).is_some())
            .map(|(k, _)| at + k);
        let Some(gap_end) = gap_end.filter(|e| *e > at) else {
            break;
        };
        let gap = &text[at..gap_end];
        if !matches!(join(gap), Join::Tight | Join::Loose) || separator.is_some_and(|s| s != gap) {
            break;
        }
        printed &= gap == " ";
        separator = Some(gap);
        if let Some(last) = units.last_mut() {
            last.2 = true;
        }
        at = gap_end;
    }
    let n = units.len();
    if n < 15 {
        return None;
    }
    // The IBAN must end a word: at the last unit read, or where a group ends.
    let ends_word = |k: usize| {
        k == n
            && !text[units[n - 1].1..]
                .chars()
                .next()
                .is_some_and(crate::text::is_alphanumeric)
            || units[k - 1].2
    };
    for k in (15..=n).rev() {
        if ends_word(k) && mod97(&units[..k]) == 1 {
            return Some(units[k - 1].1);
        }
    }
    (printed && ends_word(n) && separator.is_none_or(|s| s == " ")).then(|| units[n - 1].1)
}

/// For a stream: where a possible IBAN that the end of `text` could still complete starts
/// (two letters and two digits written together, then letters, digits and separators up to
/// the end).
pub(crate) fn open_iban_start(text: &str) -> Option<usize> {
    let floor = text.len().saturating_sub(96);
    let mut best = None;
    for (i, c) in text.char_indices().rev() {
        if i < floor {
            break;
        }
        let starts_word = c.is_ascii_alphabetic()
            && !text[..i]
                .chars()
                .next_back()
                .is_some_and(crate::text::is_alphanumeric);
        if starts_word && iban_prefix(text, i) {
            best = Some(i);
        }
    }
    best
}

/// Whether `text[i..]` could be the beginning of an IBAN.
fn iban_prefix(text: &str, i: usize) -> bool {
    let mut n = 0;
    let mut at = i;
    let mut separator: Option<&str> = None;
    while at < text.len() && n < 34 {
        let unit = match digit_at(text, at) {
            Some((_, len)) => Some((true, len)),
            None => text.as_bytes()[at]
                .is_ascii_alphabetic()
                .then_some((false, 1)),
        };
        if let Some((digit, len)) = unit {
            if (n < 2 && digit) || ((2..4).contains(&n) && !digit) {
                return false;
            }
            n += 1;
            at += len;
            continue;
        }
        if n < 4 {
            return false;
        }
        let gap_end = text[at..]
            .char_indices()
            .take(16)
            .find(|(_, c)| c.is_ascii_alphanumeric() || super::digits::digit_char(*c).is_some())
            .map(|(k, _)| at + k);
        match gap_end {
            Some(e) => {
                let gap = &text[at..e];
                if !matches!(join(gap), Join::Tight | Join::Loose)
                    || separator.is_some_and(|s| s != gap)
                {
                    return false;
                }
                separator = Some(gap);
                at = e;
            }
            // A separator at the very end, maybe incomplete.
            None => return text.len() - at <= 24 && join(&text[at..]) != Join::Break,
        }
    }
    at == text.len()
}

/// For a stream: the start of the earliest run of digit groups at or after `from` whose value
/// could still change with more text (it may still grow, or the words after it that decide
/// its kind may still come: `credential_reach` characters for four to eight digits, until its
/// sentence ends), and every run's extent (a cut must not fall inside one).
pub(crate) fn stream_holds(
    text: &str,
    from: usize,
    credential_reach: usize,
) -> (Option<usize>, Vec<Range<usize>>) {
    let scan = Scan::new(text, from);
    let mut runs = Vec::new();
    let mut hold = None;
    if scan.groups.is_empty() {
        return (hold, runs);
    }
    let ends = words::sentence_ends(&text[from..]);
    let mut a = 0;
    while a < scan.groups.len() {
        let mut b = a + 1;
        while b < scan.groups.len() && scan.joins[b] != Join::Break {
            b += 1;
        }
        let (mut s, e) = (scan.groups[a].start, scan.groups[b - 1].end);
        // A `+` or `(` before the run is part of a phone number.
        let head = text[from..s].trim_end_matches([' ', '+', '(']);
        if text[from + head.len()..s].contains(['+', '(']) {
            s = from + head.len();
            while s < text.len() && text.as_bytes()[s] == b' ' {
                s += 1;
            }
        }
        runs.push(s..e);
        if hold.is_none() {
            let digits = scan.digits(&(a..b));
            let tail = &text[e..];
            let open = tail.is_empty() || join(tail) != Join::Break;
            // A run of several groups may be read as several numbers (a sentence end or a
            // change of separator cuts it), any of which may be four to eight digits.
            let reach = match digits {
                0..=3 => 0,
                4..=8 => credential_reach,
                _ if b - a > 1 => credential_reach,
                _ => words::KIND_REACH_AFTER,
            };
            // A terminator with nothing after it yet may not end the sentence ("mail." may
            // be "mail.com", "Tel. " may go on with the number it introduces).
            let sentence_ended = ends
                .iter()
                .any(|x| from + x > e && !text[from + x..].trim_start().is_empty());
            let settled =
                reach == 0 || sentence_ended || tail.chars().take(reach + 1).count() > reach;
            if open || !settled {
                hold = Some(s);
            }
        }
        a = b;
    }
    (hold, runs)
}

/// ISO 7064 mod 97-10 of an IBAN's characters: the first four moved to the end.
fn mod97(units: &[(u32, usize, bool)]) -> u32 {
    units[4..]
        .iter()
        .chain(&units[..4])
        .fold(0u32, |m, (v, _, _)| {
            if *v >= 10 {
                (m * 100 + v) % 97
            } else {
                (m * 10 + v) % 97
            }
        })
}

/// The Luhn check of any run of the text's digits in constant time, from two prefix sums.
///
/// Luhn doubles every second digit counting from the right, so which digits a window doubles
/// depends on the parity of its last index: `plain[i]` sums the digits as they count when the
/// window ends on an even index, `shifted[i]` when it ends on an odd one. A window's checksum is
/// then one subtraction. `luhn_sums_agree_with_the_luhn_crate` checks it against the `luhn`
/// crate on every window of random digit strings.
pub(crate) struct LuhnSums {
    plain: Vec<u32>,
    shifted: Vec<u32>,
}

impl LuhnSums {
    pub(crate) fn new(digits: &[u8]) -> Self {
        let mut plain = Vec::with_capacity(digits.len() + 1);
        let mut shifted = Vec::with_capacity(digits.len() + 1);
        plain.push(0);
        shifted.push(0);
        for (k, d) in digits.iter().map(|d| u32::from(*d)).enumerate() {
            let doubled = if d >= 5 { 2 * d - 9 } else { 2 * d };
            let (p, s) = if k.is_multiple_of(2) {
                (d, doubled)
            } else {
                (doubled, d)
            };
            plain.push(plain[k] + p);
            shifted.push(shifted[k] + s);
        }
        LuhnSums { plain, shifted }
    }

    /// Digits `start..end` (indices among all the text's digits) pass the Luhn check.
    pub(crate) fn valid(&self, start: usize, end: usize) -> bool {
        let sums = if (end - 1).is_multiple_of(2) {
            &self.plain
        } else {
            &self.shifted
        };
        (sums[end] - sums[start]) % 10 == 0
    }
}

/// A dash of any kind (Unicode's dash punctuation, and the ASCII hyphen-minus).
fn is_dash(c: char) -> bool {
    c == '-'
        || icu_properties::CodePointMapData::<icu_properties::props::GeneralCategory>::new().get(c)
            == icu_properties::props::GeneralCategory::DashPunctuation
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn luhn_sums_agree_with_the_luhn_crate() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let digits: Vec<u8> = (0..200)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x % 10) as u8
            })
            .collect();
        let text: String = digits.iter().map(|d| char::from(b'0' + d)).collect();
        let sums = LuhnSums::new(&digits);
        for start in 0..digits.len() {
            for end in start + 1..(start + 25).min(digits.len()) {
                assert_eq!(
                    sums.valid(start, end),
                    luhn::valid(&text[start..end]),
                    "{}",
                    &text[start..end]
                );
            }
        }
    }

    #[test]
    fn gaps_join_by_what_they_hold() {
        for (gap, want) in [
            (" ", Join::Tight),
            ("-", Join::Tight),
            (" - ", Join::Tight),
            ("\u{2007}", Join::Tight),
            ("\u{3000}", Join::Tight),
            ("－", Join::Tight),
            ("·", Join::Loose),
            ("‧", Join::Loose),
            (",", Join::Loose),
            (":", Join::Loose),
            ("|", Join::Loose),
            ("'", Join::Loose),
            ("*", Join::Loose),
            ("−", Join::Loose),
            ("--", Join::Loose),
            ("\t", Join::Tight),
            ("\n", Join::Loose),
            ("      ", Join::Loose),
            (" • ", Join::Loose),
            ("।", Join::Loose),
            (". ", Join::Sentence),
            ("। ", Join::Sentence),
            (" x ", Join::Break),
            ("----", Join::Break),
            ("\n\n\n", Join::Break),
            // The joiners the output keeps: invisible, so the digits read as one group.
            ("\u{200C}", Join::Tight),
            ("\u{200C}\u{200C}", Join::Tight),
            ("\u{200D} ", Join::Tight),
        ] {
            assert_eq!(join(gap), want, "{gap:?}");
        }
    }

    fn kinds(text: &str) -> Vec<(ValueKind, String)> {
        values(text)
            .into_iter()
            .map(|v| (v.kind, v.digits))
            .collect()
    }

    #[test]
    fn values_table() {
        use ValueKind::*;
        for (text, want) in [
            (
                "Your card 4539·1488·0343·6467 is blocked",
                vec![(Card, "4539148803436467")],
            ),
            (
                "card 4️⃣5️⃣3️⃣9️⃣1️⃣4️⃣8️⃣8️⃣0️⃣3️⃣4️⃣3️⃣6️⃣4️⃣6️⃣7️⃣",
                vec![(Card, "4539148803436467")],
            ),
            ("card ❹❺❸❾ ❶❹❽❽ ⓿❸❹❸ ❻❹❻❼", vec![(Card, "4539148803436467")]),
            ("card ৪৫৩৯·১৪৮৮·০৩৪৩·৬৪৬৭", vec![(Card, "4539148803436467")]),
            (
                "Your account number 123456789012",
                vec![(Account, "123456789012")],
            ),
            ("অ্যাকাউন্ট নম্বর ১২৩৪৫৬৭৮৯০১২", vec![(Account, "123456789012")]),
            ("call 0171·122·3344", vec![(Phone, "01711223344")]),
            ("call +880 1711-223344 now", vec![(Phone, "8801711223344")]),
            ("483920 is your OTP.", vec![(Otp, "483920")]),
            ("Your MPIN is 4821.", vec![(Pin, "4821")]),
            ("NID 1990|1234|5678|9", vec![(Nid, "1990123456789")]),
            // A label before decides over a mobile's shape; one after another number does not.
            ("NID 8801-6875-4005-3", vec![(Nid, "8801687540053")]),
            (
                "call +880 1711 223344 or NID 1990 1234 5678 9",
                vec![(Phone, "8801711223344"), (Nid, "1990123456789")],
            ),
            (
                "IBAN GB82·WEST·1234·5698·7654·32",
                vec![(Iban, "GB82WEST12345698765432")],
            ),
            (
                "for 01/01/2025–31/03/2025 and 2025-01-01 - 2025-03-31",
                vec![(Date, "0101202531032025"), (Date, "2025010120250331")],
            ),
            (
                "on 12/05/2025 at 10:42",
                vec![(Date, "12052025"), (Time, "1042")],
            ),
            (
                "you paid Tk 1,250,000 and ৳২,৫০,০০০",
                vec![(Amount, "1250000"), (Amount, "250000")],
            ),
            (
                "fees: 10 | 20 | 50",
                vec![(Amount, "10"), (Amount, "20"), (Amount, "50")],
            ),
            (
                "we have 12, 45, 300, 2000 items",
                vec![
                    (Number, "12"),
                    (Number, "45"),
                    (Number, "300"),
                    (Number, "2000"),
                ],
            ),
            (
                "between 2023-2024 the limit was 500-1000",
                vec![
                    (Year, "2023"),
                    (Year, "2024"),
                    (Amount, "500"),
                    (Amount, "1000"),
                ],
            ),
            ("it takes 10-20 days", vec![(Number, "10"), (Number, "20")]),
            ("Enter your PIN to pay Tk 5000", vec![(Amount, "5000")]),
            ("Your PIN was changed in 2025.", vec![(Year, "2025")]),
        ] {
            let want: Vec<(ValueKind, String)> =
                want.into_iter().map(|(k, d)| (k, d.to_string())).collect();
            assert_eq!(kinds(text), want, "{text:?}");
        }
    }
}

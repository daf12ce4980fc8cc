//! E-mail addresses, as written and as spoken around a filter: `rina@example.com`, `rina @
//! example.com`, `rina＠example．com`, `rina%40example.com`, `rina [at] example [dot] com`,
//! `rina(dot)akter(at)example(dot)com`, `rina.akter at example dot com`, `রিনা অ্যাট
//! example ডট com`.
//!
//! An address is a local part, an "at", and a domain of two labels or more whose last is two
//! letters or more. An "at" is a sign (`@`, `＠`, `﹫`, `%40`), the word in brackets (`[at]`,
//! `(at)`, `{at}`, `<at>`), or the bare word (`at`, `অ্যাট`) between spaces; a "dot" likewise.
//! The bare word "at" is prose far more often than a disguise ("contact us at www.bank.com"),
//! so it counts only when the address shows it is one: a local part with a dot, digit or
//! underscore in it, or a disguised dot in the domain, and never before `www`.

use std::ops::Range;

/// How far back a local part may reach, and how far a domain, in bytes.
const MAX_LOCAL: usize = 64;
const MAX_DOMAIN: usize = 255;

/// Every address in `text` at or after `from`. Full-width and other compatibility forms
/// (`［ａｔ］`, `＠`, `．`) and look-alike letters (Cyrillic `а` in `аt`) are read as what they
/// stand for, as the skeleton reads them, punctuation kept.
pub(crate) fn find(text: &str, from: usize) -> Vec<Range<usize>> {
    let source = &text[from..];
    // Only characters that stand for an ASCII one need the folded view (not Bengali, not a
    // danda, not an emoji).
    let plain =
        |c: char| c.is_ascii() || crate::text::is_bengali_block(c) || ascii_reading(c).is_none();
    if all_plain(source, plain) {
        return find_plain(text, from);
    }
    let mut folded = String::with_capacity(source.len());
    // For each byte of `folded`, the source byte its character came from; then the end.
    let mut at: Vec<usize> = Vec::with_capacity(source.len() + 1);
    for (i, c) in source.char_indices() {
        let read = if plain(c) { None } else { ascii_reading(c) };
        let before = folded.len();
        match read {
            Some(r) => folded.push(r),
            None => folded.push(c),
        }
        at.extend(std::iter::repeat_n(from + i, folded.len() - before));
    }
    at.push(text.len());
    find_plain(&folded, 0)
        .into_iter()
        .map(|r| at[r.start]..at[r.end])
        .collect()
}

/// `text.chars().all(plain)`, reading ASCII and Bengali (`E0 A6 xx`, `E0 A7 xx`), always
/// plain, byte by byte.
fn all_plain(text: &str, plain: impl Fn(char) -> bool) -> bool {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b < 0x80 {
            i += 1;
            continue;
        }
        if b == 0xE0 && matches!(bytes.get(i + 1), Some(0xA6 | 0xA7)) {
            i += 3;
            continue;
        }
        let Some(c) = text[i..].chars().next() else {
            break;
        };
        if !plain(c) {
            return false;
        }
        i += c.len_utf8();
    }
    true
}

/// The one ASCII character a character stands for: its compatibility form (`＠` → `@`,
/// `ａ` → `a`, `𝐚` → `a`), or the ASCII letter Unicode's confusables data draws it as.
fn ascii_reading(c: char) -> Option<char> {
    let mut one = None;
    let mut n = 0;
    unicode_normalization::char::decompose_compatible(c, |d| {
        n += 1;
        one = Some(d);
    });
    let d = one.filter(|_| n == 1)?;
    let d = if d.is_ascii() {
        d
    } else {
        crate::text::unconfuse(d.to_lowercase().next()?)
    };
    d.is_ascii().then_some(d)
}

fn find_plain(text: &str, from: usize) -> Vec<Range<usize>> {
    let bytes = text.as_bytes();
    let mut out: Vec<Range<usize>> = Vec::new();
    let mut i = from;
    while i < bytes.len() {
        // Skip to the next byte an "at" can start with: most of an answer is none.
        let Some(k) = bytes[i..].iter().position(|b| AT_LEAD[usize::from(*b)]) else {
            break;
        };
        i += k;
        // Cheap first looks: a sign or bracket, a bare "at" after a space, the lead bytes of
        // `＠`/`﹫` (EF) and of `অ্যাট`/`এট` (E0 A6 85 / E0 A6 8F).
        let b = bytes[i];
        let candidate = match b {
            b'@' | b'%' | b'&' | b'[' | b'(' | b'{' | b'<' | 0xEF => true,
            b'a' | b'A' => i > 0 && bytes[i - 1].is_ascii_whitespace(),
            0xE0 => {
                bytes.get(i + 1) == Some(&0xA6) && matches!(bytes.get(i + 2), Some(0x85 | 0x8F))
            }
            _ => false,
        };
        if !candidate || !text.is_char_boundary(i) || out.last().is_some_and(|r| i < r.end) {
            i += 1;
            continue;
        }
        if let Some((at_end, spoken)) = at_form(text, i) {
            if let Some(found) = address_around(text, i, at_end, spoken) {
                if found.start >= from {
                    i = found.end;
                    out.push(found);
                    continue;
                }
            }
        }
        i += 1;
    }
    out
}

/// The bytes an "at" can start with (the first look of [`find_plain`], as a table).
const AT_LEAD: [bool; 256] = {
    let mut t = [false; 256];
    let leads = [
        b'@', b'%', b'&', b'[', b'(', b'{', b'<', 0xEF, b'a', b'A', 0xE0,
    ];
    let mut k = 0;
    while k < leads.len() {
        t[leads[k] as usize] = true;
        k += 1;
    }
    t
};

/// The address around an "at" at `at_start..at_end`, if there is one.
fn address_around(
    text: &str,
    at_start: usize,
    at_end: usize,
    spoken: bool,
) -> Option<Range<usize>> {
    let (start, special) = local_before(text, at_start, spoken)?;
    let (end, disguised, www) = domain_after(text, at_end, spoken)?;
    if spoken && (www || !(special || disguised)) {
        return None;
    }
    Some(start..end)
}

/// Characters of a local part and of a domain label.
fn local_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'%' | b'+' | b'-')
}
fn domain_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-'
}

/// The "at" starting at byte `i`: its end, and whether it is a bare word (which needs white
/// space on both sides).
fn at_form(text: &str, i: usize) -> Option<(usize, bool)> {
    let rest = &text[i..];
    for sign in ["@", "＠", "﹫", "%40"] {
        if rest.starts_with(sign) {
            return Some((i + sign.len(), false));
        }
    }
    // As a rendered page shows it: `&#64;`, `&#x40;`, `&commat;`.
    if let Some((_, len)) = crate::text::html_reference(rest).filter(|(c, _)| c == "@") {
        return Some((i + len, false));
    }
    // The word or the sign itself in brackets: `[at]`, `(at)`, `[@]` (a "defanged" address).
    if let Some(len) = bracketed(rest, &["at", "@", "＠"]) {
        return Some((i + len, false));
    }
    for word in ["at", "অ্যাট", "এট"] {
        if starts_with_ignore_case(rest, word) && spaced_word(text, i, i + word.len()) {
            return Some((i + word.len(), true));
        }
    }
    None
}

/// The "dot" starting at byte `i` of `text`, its end, and whether it is a disguise (anything
/// but a plain `.` inside a word).
fn dot_form(text: &str, i: usize) -> Option<(usize, bool)> {
    let rest = &text[i..];
    if rest.starts_with('.') {
        return Some((i + 1, false));
    }
    for sign in ["．", "﹒", "。"] {
        if rest.starts_with(sign) {
            return Some((i + sign.len(), true));
        }
    }
    if let Some((_, len)) = crate::text::html_reference(rest).filter(|(c, _)| c == ".") {
        return Some((i + len, true));
    }
    if let Some(len) = bracketed(rest, &["dot", "."]) {
        return Some((i + len, true));
    }
    for word in ["dot", "ডট"] {
        if starts_with_ignore_case(rest, word) && spaced_word(text, i, i + word.len()) {
            return Some((i + word.len(), true));
        }
    }
    None
}

/// `[at]`, `( at )`, `{dot}`, `<.>` at the start of `s`: its length.
fn bracketed(s: &str, words: &[&str]) -> Option<usize> {
    let close = match s.as_bytes().first()? {
        b'[' => ']',
        b'(' => ')',
        b'{' => '}',
        b'<' => '>',
        _ => return None,
    };
    let inner = &s[1..];
    let trimmed = inner.trim_start_matches(' ');
    let word = words.iter().find(|w| starts_with_ignore_case(trimmed, w))?;
    let after = trimmed[word.len()..].trim_start_matches(' ');
    after.starts_with(close).then(|| s.len() - after.len() + 1)
}

fn starts_with_ignore_case(s: &str, word: &str) -> bool {
    s.len() >= word.len()
        && s.is_char_boundary(word.len())
        && s[..word.len()].eq_ignore_ascii_case(word)
}

/// A bare word at `start..end` with white space on both sides.
fn spaced_word(text: &str, start: usize, end: usize) -> bool {
    text[..start]
        .chars()
        .next_back()
        .is_some_and(char::is_whitespace)
        && text[end..].chars().next().is_some_and(char::is_whitespace)
}

/// Up to three spaces back from `at`.
fn spaces_back(text: &str, at: usize) -> usize {
    let head = &text[..at];
    let trimmed = head.trim_end_matches([' ', '\u{a0}']);
    if head.len() - trimmed.len() <= 3 * 2 {
        trimmed.len()
    } else {
        at
    }
}

/// Up to three spaces on from `at`.
fn spaces_on(text: &str, at: usize) -> usize {
    let tail = &text[at..];
    let trimmed = tail.trim_start_matches([' ', '\u{a0}']);
    if tail.len() - trimmed.len() <= 3 * 2 {
        at + tail.len() - trimmed.len()
    } else {
        at
    }
}

/// The start of the local part ending before the "at" at `at_start`, and whether it shows
/// itself an address (a dot, digit, underscore or a disguised dot in it).
fn local_before(text: &str, at_start: usize, spoken: bool) -> Option<(usize, bool)> {
    let bytes = text.as_bytes();
    let mut end = spaces_back(text, at_start);
    if spoken && end == at_start {
        return None;
    }
    let limit = at_start.saturating_sub(MAX_LOCAL);
    let mut start = None;
    let mut special = false;
    loop {
        let mut s = end;
        while s > limit && local_char(bytes[s - 1]) {
            s -= 1;
        }
        if s == end {
            break;
        }
        special |= bytes[s..end]
            .iter()
            .any(|b| b.is_ascii_digit() || matches!(b, b'.' | b'_' | b'+' | b'-'));
        start = Some(s);
        // A disguised dot before this label, and another label before it.
        let k = spaces_back(text, s);
        match disguised_dot_ending_at(text, k) {
            Some(d) if d > limit => {
                end = spaces_back(text, d);
                special = true;
            }
            _ => break,
        }
    }
    let mut s = start?;
    while s < at_start && matches!(bytes[s], b'.' | b'-') {
        s += 1;
    }
    (s < spaces_back(text, at_start)).then_some((s, special))
}

/// Where a disguised dot that ends at byte `k` starts.
fn disguised_dot_ending_at(text: &str, k: usize) -> Option<usize> {
    let head = &text[..k];
    for form in ["．", "﹒", "。"] {
        if head.ends_with(form) {
            return Some(k - form.len());
        }
    }
    if head.ends_with([']', ')', '}', '>']) {
        const FORMS: [&str; 16] = [
            "[dot]", "[ dot ]", "[.]", "[ . ]", "(dot)", "( dot )", "(.)", "( . )", "{dot}",
            "{ dot }", "{.}", "{ . }", "<dot>", "< dot >", "<.>", "< . >",
        ];
        if let Some(form) = FORMS.iter().find(|f| ends_with_ignore_case(head, f)) {
            return Some(k - form.len());
        }
    }
    for word in ["dot", "ডট"] {
        if ends_with_ignore_case(head, word) && spaced_word(text, k - word.len(), k) {
            return Some(k - word.len());
        }
    }
    None
}

fn ends_with_ignore_case(s: &str, word: &str) -> bool {
    s.len() >= word.len()
        && s.is_char_boundary(s.len() - word.len())
        && s[s.len() - word.len()..].eq_ignore_ascii_case(word)
}

/// The end of the domain starting after the "at" at `at_end`: whether a disguised dot is in
/// it, and whether it starts with `www`.
fn domain_after(text: &str, at_end: usize, spoken: bool) -> Option<(usize, bool, bool)> {
    let bytes = text.as_bytes();
    let start = spaces_on(text, at_end);
    if spoken && start == at_end {
        return None;
    }
    let limit = (start + MAX_DOMAIN).min(bytes.len());
    let mut labels: Vec<Range<usize>> = Vec::new();
    let mut disguised = false;
    let mut at = start;
    loop {
        let mut e = at;
        while e < limit && domain_char(bytes[e]) {
            e += 1;
        }
        if e == at {
            break;
        }
        labels.push(at..e);
        // A dot (plain, right after the label; or a disguise, spaces around it allowed) and
        // another label after it.
        let (next, d) = match dot_form(text, e) {
            Some((n, false)) => (n, false),
            _ => {
                let k = spaces_on(text, e);
                match dot_form(text, k) {
                    Some((n, true)) => (spaces_on(text, n), true),
                    // A plain dot with a space before it (`example . com`): a sentence's
                    // full stop follows its word.
                    Some((n, false)) if k > e => (spaces_on(text, n), true),
                    _ => break,
                }
            }
        };
        if next >= limit || !domain_char(bytes[next]) {
            break;
        }
        disguised |= d;
        at = next;
    }
    // The last label is a top-level domain: letters only, two or more.
    while labels.len() >= 2 {
        let last = labels[labels.len() - 1].clone();
        let tld = &text[last.clone()];
        if tld.len() >= 2 && tld.len() <= 24 && tld.bytes().all(|b| b.is_ascii_alphabetic()) {
            let www = text[labels[0].clone()].eq_ignore_ascii_case("www");
            return Some((last.end, disguised, www));
        }
        labels.pop();
    }
    None
}

/// For a stream: where the text's end could still be (part of) an address that more text
/// would complete, so that no part of one leaves before the whole is seen (`rina [at]` …).
/// `None` when the end of the text cannot be.
pub(crate) fn open_start(text: &str) -> Option<usize> {
    let floor = text.len().saturating_sub(2 * MAX_LOCAL);
    // Candidate starts: where a word begins, nearest the end first; the earliest viable wins.
    let mut best = None;
    let mut seen = 0;
    for (i, c) in text.char_indices().rev() {
        if i < floor || seen > 12 {
            break;
        }
        let word_start = text[..i]
            .chars()
            .next_back()
            .is_none_or(|p| !local_char_char(p))
            && local_char_char(c);
        if word_start {
            seen += 1;
            if viable(text, i) {
                best = Some(i);
            }
        }
    }
    best
}

fn local_char_char(c: char) -> bool {
    c.is_ascii() && local_char(c as u8)
}

/// Whether `text[i..]` (starting with a local part's character) could begin an address.
fn viable(text: &str, i: usize) -> bool {
    let bytes = text.as_bytes();
    let n = bytes.len();
    // Labels, joined by dots (plain or disguised), and at most one "at".
    let mut at_seen = false;
    let mut p = i;
    loop {
        while p < n && local_char(bytes[p]) {
            p += 1;
        }
        if p == n {
            return true;
        }
        // What joins this label to the next: spaces, a dot or an "at" form, spaces.
        let q = spaces_on(text, p);
        if q == n {
            return true;
        }
        if let Some((e, _)) = at_form(text, q).filter(|_| !at_seen) {
            at_seen = true;
            p = spaces_on(text, e);
        } else if let Some((e, _)) = dot_form(text, q).filter(|(e, _)| *e > q) {
            p = spaces_on(text, e);
        } else {
            // An incomplete form at the very end (`[a`, `(do`, `%4`, a bare `a` or `d`).
            return partial_form(&text[q..]);
        }
        if p == n {
            return true;
        }
        if !local_char(bytes[p]) {
            return partial_form(&text[p..]);
        }
    }
}

/// The start of an "at" or "dot" form that more text could complete.
fn partial_form(rest: &str) -> bool {
    if rest.is_empty() {
        return true;
    }
    let forms = [
        "@",
        "%40",
        "[at]",
        "(at)",
        "{at}",
        "<at>",
        "[dot]",
        "(dot)",
        "{dot}",
        "<dot>",
        "[.]",
        "(.)",
        "[@]",
        "(@)",
        "&#64;",
        "&#064;",
        "&#x40;",
        "&commat;",
        "&#46;",
        "&#x2e;",
        "&period;",
        "at ",
        "dot ",
        "অ্যাট ",
        "এট ",
        "ডট ",
    ];
    forms.iter().any(|f| {
        let f = f.as_bytes();
        let r = rest.as_bytes();
        r.len() < f.len() && f[..r.len()].eq_ignore_ascii_case(r)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_in_their_disguises() {
        for (text, want) in [
            (
                "mail rina.akter@example.com today",
                Some("rina.akter@example.com"),
            ),
            (
                "rina.akter [at] example [dot] com",
                Some("rina.akter [at] example [dot] com"),
            ),
            ("rina.akter＠example.com", Some("rina.akter＠example.com")),
            (
                "write rina.akter @ example.com now",
                Some("rina.akter @ example.com"),
            ),
            (
                "rina(dot)akter(at)example(dot)com",
                Some("rina(dot)akter(at)example(dot)com"),
            ),
            ("rina at example dot com", Some("rina at example dot com")),
            (
                "rina.akter at example.com",
                Some("rina.akter at example.com"),
            ),
            ("rina%40example.com", Some("rina%40example.com")),
            ("rina﹫example．com", Some("rina﹫example．com")),
            (
                "রিনা rina অ্যাট example ডট com",
                Some("rina অ্যাট example ডট com"),
            ),
            (
                "RINA [AT] EXAMPLE [DOT] COM",
                Some("RINA [AT] EXAMPLE [DOT] COM"),
            ),
            (
                "rina.akter&#64;example.com",
                Some("rina.akter&#64;example.com"),
            ),
            (
                "rina.akter&#x40;example&#46;com",
                Some("rina.akter&#x40;example&#46;com"),
            ),
            (
                "rina.akter&commat;example.com",
                Some("rina.akter&commat;example.com"),
            ),
            (
                "write to rina.akter@example . com for help",
                Some("rina.akter@example . com"),
            ),
            ("write to rina@example. Then call", None),
            ("Tom &amp; Jerry at example.com", None),
            ("contact us at www.bank.com", None),
            ("we met at home.", None),
            ("visit us at help.bank.com", None),
            ("meet at 10:42 at the branch", None),
        ] {
            let found: Vec<&str> = find(text, 0).into_iter().map(|r| &text[r]).collect();
            assert_eq!(found.first().copied(), want, "{text:?}");
        }
    }

    #[test]
    fn a_stream_holds_what_could_still_be_an_address() {
        for (text, want) in [
            ("please contact rina", Some("rina")),
            ("please contact rina ", Some("rina ")),
            ("please contact rina [a", Some("rina [a")),
            (
                "rina [dot] akter [at] exa",
                Some("rina [dot] akter [at] exa"),
            ),
            ("rina at example dot co", Some("rina at example dot co")),
            ("rina at example dot com and", Some("and")),
            ("write rina.akter&#6", Some("rina.akter&#6")),
            (
                "write rina.akter&#64;example &#4",
                Some("rina.akter&#64;example &#4"),
            ),
            ("hello, world!", None),
        ] {
            assert_eq!(open_start(text).map(|i| &text[i..]), want, "{text:?}");
        }
    }
}

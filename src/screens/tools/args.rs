//! Argument types: what a tool's arguments mean, declared in its policy (`[tools.<name>.args]`)
//! and read here, so that the limits, the velocity windows and dedupe all see one value whatever
//! its spelling: `500`, `"500"`, `"৫০০"` and `"500.00"` are one amount, `+8801711000000` and
//! `01711-000000` one phone number, `"C1, C2"` and `["C1", "C2"]` the same two records.
//!
//! ```toml
//! [tools.send_money.args]
//! wallet = { type = "record", kind = "wallet", format = "phone" }  # the caller's own record
//! to = "phone"                                  # shorthand: just the type, required
//! amount = "amount"
//! currency = { type = "code", default = "BDT" } # given as its default = not given
//! note = { type = "free_text", optional = true }
//! ```
//!
//! Types: `amount` (a number 0 or more, in any script's digits, with `,` grouping in thousands
//! or lakhs), `count` (a whole number), `record` (the ids of records of one `kind`: several in
//! one value are each counted; patterns and wildcards are refused), `phone` (one number,
//! canonical `+<country code><number>`), `date` (`YYYY-MM-DD`, a time after it kept),
//! `free_text` (trimmed, white space collapsed, NFC), `code` (a short code compared without
//! case, optionally one of `values`). A value the type cannot read is `invalid_arguments`:
//! what the gate cannot read, it cannot vouch for.
//!
//! Argument *names* are read strictly too: two names of one arguments object that differ only
//! by case, compatibility form (`ａｍｏｕｎｔ`), invisible characters or look-alike letters are one
//! name to many executors, so the call is refused rather than guessed ([`colliding_names`]).

use serde_json::{Map, Value};
use std::borrow::Cow;
use unicode_normalization::UnicodeNormalization;

/// A declared argument's type.
#[derive(Debug, Clone, PartialEq)]
pub enum ArgType {
    Amount,
    Count,
    Record(RecordSpec),
    Phone,
    Date,
    FreeText,
    /// A short code (currency, biller, template), compared without case; `values`, when
    /// given, are the only ones accepted (upper-cased).
    Code(Option<Vec<String>>),
}

impl ArgType {
    pub fn as_str(&self) -> &'static str {
        match self {
            ArgType::Amount => "amount",
            ArgType::Count => "count",
            ArgType::Record(_) => "record",
            ArgType::Phone => "phone",
            ArgType::Date => "date",
            ArgType::FreeText => "free_text",
            ArgType::Code(_) => "code",
        }
    }
}

/// What a record argument names: records of one kind (the caller's wallets, accounts,
/// customers...: what entitlement will check them against).
#[derive(Debug, Clone, PartialEq)]
pub struct RecordSpec {
    pub kind: String,
    pub format: RecordFormat,
    /// Records one call may name at most (each is counted in the velocity windows anyway).
    pub max_records: Option<usize>,
}

/// How a record's id is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RecordFormat {
    /// Letters and digits with inner `-` or `_`, holding at least one digit; compared
    /// upper-cased, digits of any script as ASCII.
    Id,
    /// A phone number (a mobile wallet's number), compared in its canonical form.
    Phone,
}

/// One declared argument.
#[derive(Debug, Clone)]
pub struct ArgSpec {
    pub ty: ArgType,
    pub optional: bool,
    /// The default's meaning: an optional argument given as its default is the same call as
    /// one without it.
    pub default: Option<Meaning>,
}

/// A value's meaning, canonical: what dedupe hashes and the windows key on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Meaning {
    One(String),
    /// Record ids, sorted, each once.
    Records(Vec<String>),
}

impl Meaning {
    /// Every value it holds (one, or each record).
    pub fn values(&self) -> &[String] {
        match self {
            Meaning::One(s) => std::slice::from_ref(s),
            Meaning::Records(r) => r,
        }
    }
}

/// Why a value could not be read as its type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadError {
    /// Not a value of this type.
    Unreadable,
    /// A pattern, a wildcard, a word like `all`, or an empty list where records are named.
    Pattern,
}

/// Product-wide reading settings.
#[derive(Debug, Clone)]
pub struct ReadSettings {
    /// Digits of the country code national numbers belong to (`880`).
    pub country_code: String,
}

impl Default for ReadSettings {
    fn default() -> Self {
        ReadSettings {
            country_code: "880".into(),
        }
    }
}

/// A value read as its type: `Ok(None)` when it is absent in effect (null, empty or white
/// space only), `Ok(Some(meaning))` when read.
pub fn read(ty: &ArgType, v: &Value, s: &ReadSettings) -> Result<Option<Meaning>, ReadError> {
    if is_blank(v) {
        return Ok(None);
    }
    let one = |x: Option<String>| {
        x.map(|x| Some(Meaning::One(x)))
            .ok_or(ReadError::Unreadable)
    };
    match ty {
        ArgType::Amount => one(amount(v).map(amount_text)),
        ArgType::Count => one(count(v).map(|n| n.to_string())),
        ArgType::Phone => one(match v {
            Value::String(t) => phone(t, &s.country_code),
            Value::Number(n) => n
                .as_u64()
                .and_then(|n| phone(&n.to_string(), &s.country_code)),
            _ => None,
        }),
        ArgType::Date => one(v.as_str().and_then(date)),
        ArgType::FreeText => one(free_text(v)),
        ArgType::Code(values) => {
            let c = code(v).ok_or(ReadError::Unreadable)?;
            match values {
                Some(allowed) if !allowed.contains(&c) => Err(ReadError::Unreadable),
                _ => Ok(Some(Meaning::One(c))),
            }
        }
        ArgType::Record(spec) => records(v, spec.format, s).map(|r| Some(Meaning::Records(r))),
    }
}

/// Null, an empty string or white space only: the argument was not really given.
fn is_blank(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s
            .chars()
            .all(|c| c.is_whitespace() || crate::text::is_invisible(c)),
        _ => false,
    }
}

// ---------------------------------------------------------------------------------------------
// Amounts and counts

/// An amount: a JSON number, or a numeric string in any script's digits with an optional
/// decimal point and grouping (`50,000`, `5,00,000`, `50 000`, `৫০,০০০`). 0 or more; `5e3`,
/// `1.000,50`, `1,5`, `৳500` and everything else ambiguous are not amounts.
pub fn amount(v: &Value) -> Option<f64> {
    let n = match v {
        Value::Number(n) => n.as_f64()?,
        Value::String(s) => amount_from_text(s)?,
        _ => return None,
    };
    (n.is_finite() && n >= 0.0).then_some(n)
}

/// A whole number 0 or more (a count), spelled as an amount is.
pub fn count(v: &Value) -> Option<u64> {
    let n = amount(v)?;
    (n.fract() == 0.0 && n < 9.0e15).then_some(n as u64)
}

/// The canonical text of an amount: an integral value as an integer, otherwise the shortest
/// decimal that reads back as the same number.
pub fn amount_text(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 9.0e15 {
        (n as i64).to_string()
    } else {
        format!("{n}")
    }
}

/// An amount in hundredths of its unit, rounded up (what an amount window adds up: integers,
/// so sums are exact in both stores).
pub fn hundredths(n: f64) -> u64 {
    let h = (n * 100.0 - 1e-6).ceil();
    if h <= 0.0 {
        0
    } else if h >= u64::MAX as f64 {
        u64::MAX
    } else {
        h as u64
    }
}

fn amount_from_text(s: &str) -> Option<f64> {
    let s = s.trim();
    // Integer digits with the separators between their groups, and the fraction's digits.
    let mut int = String::with_capacity(s.len());
    let mut groups: Vec<usize> = Vec::new();
    let mut group = 0usize;
    let mut sep: Option<char> = None;
    let mut fraction: Option<String> = None;
    for c in s.chars() {
        if let Some(d) = crate::redact::digit_char(c) {
            let d = char::from(b'0' + d as u8);
            match &mut fraction {
                Some(f) => f.push(d),
                None => {
                    int.push(d);
                    group += 1;
                }
            }
            continue;
        }
        if fraction.is_some() {
            // Nothing but digits after the decimal point.
            return None;
        }
        match c {
            // The decimal point (and its full-width and Arabic forms).
            '.' | '．' | '٫' => {
                if group == 0 {
                    return None;
                }
                groups.push(group);
                fraction = Some(String::new());
            }
            // Grouping: one kind of separator throughout, between groups of digits.
            c if is_group_separator(c) => {
                if group == 0 || sep.is_some_and(|s| s != c) {
                    return None;
                }
                sep = Some(c);
                groups.push(group);
                group = 0;
            }
            _ => return None,
        }
    }
    if fraction.is_none() {
        if group == 0 {
            return None;
        }
        groups.push(group);
    }
    if fraction.as_ref().is_some_and(|f| f.is_empty()) {
        return None;
    }
    if groups.len() > 1 && !(western(&groups) || lakhs(&groups)) {
        return None;
    }
    let text = match &fraction {
        Some(f) => format!("{int}.{f}"),
        None => int,
    };
    text.parse().ok()
}

fn is_group_separator(c: char) -> bool {
    matches!(c, ',' | '，' | '٬' | '_' | '\'' | '’') || (c.is_whitespace() && c != '\n')
}

/// `50,000`, `1,234,567`: a first group of 1–3 digits, then groups of 3.
fn western(groups: &[usize]) -> bool {
    (1..=3).contains(&groups[0]) && groups[1..].iter().all(|g| *g == 3)
}

/// `5,00,000`, `1,00,00,000`: a first group of 1–2 digits, groups of 2, and 3 at the end.
fn lakhs(groups: &[usize]) -> bool {
    let (last, rest) = match groups.split_last() {
        Some(x) => x,
        None => return false,
    };
    *last == 3 && (1..=2).contains(&rest[0]) && rest[1..].iter().all(|g| *g == 2)
}

// ---------------------------------------------------------------------------------------------
// Phones, dates, text, codes

/// A phone number in its canonical form, `+<country code><national number>`: `+8801711000000`
/// from `+880 1711-000000`, `8801711000000`, `008801711000000`, `01711000000` or `১৭১১০০০০০০`
/// (with country code 880). Separators people type (spaces, dashes, dots, brackets) are
/// ignored; a letter or anything else makes it not a phone number.
pub fn phone(s: &str, country_code: &str) -> Option<String> {
    let mut digits = String::with_capacity(16);
    let mut plus = false;
    for c in s.trim().chars() {
        if let Some(d) = crate::redact::digit_char(c) {
            digits.push(char::from(b'0' + d as u8));
            continue;
        }
        match c {
            '+' | '＋' if digits.is_empty() && !plus => plus = true,
            '-' | '.' | '(' | ')' | '/' | '‐' | '‑' | '‒' | '–' | '—' | '−' | '－' | '．'
            | '（' | '）' => {}
            c if c.is_whitespace() || crate::text::is_invisible(c) => {}
            _ => return None,
        }
    }
    // A national number (the country code added here) has at least 7 digits of its own.
    let national = |n: &str| (n.len() >= 7).then(|| format!("{country_code}{n}"));
    let international = if plus {
        Some(without_trunk(digits, country_code))
    } else if let Some(rest) = digits.strip_prefix("00") {
        Some(without_trunk(rest.to_string(), country_code))
    } else if digits.starts_with(country_code) && digits.len() >= country_code.len() + 8 {
        Some(digits)
    } else if let Some(n) = digits.strip_prefix('0') {
        national(n)
    } else {
        national(&digits)
    }?;
    ((8..=15).contains(&international.len())).then(|| format!("+{international}"))
}

/// `+880 (0)1711000000`: the national trunk 0 written after the country code is not part of
/// the number.
fn without_trunk(digits: String, country_code: &str) -> String {
    match digits.strip_prefix(country_code) {
        Some(rest) if rest.starts_with('0') => format!("{country_code}{}", &rest[1..]),
        _ => digits,
    }
}

/// A date `YYYY-MM-DD` (digits of any script), a time after it kept as written (trimmed).
pub fn date(s: &str) -> Option<String> {
    let s: String = s
        .trim()
        .chars()
        .map(|c| crate::redact::digit_char(c).map_or(c, |d| char::from(b'0' + d as u8)))
        .collect();
    let day = s.get(..10)?;
    chrono::NaiveDate::parse_from_str(day, "%Y-%m-%d").ok()?;
    let rest = &s[10..];
    if rest.trim().is_empty() {
        Some(day.to_string())
    } else if rest.starts_with(['T', 't', ' ']) {
        Some(format!(
            "{day}T{}",
            rest.trim().trim_start_matches(['T', 't'])
        ))
    } else {
        None
    }
}

/// Free text: NFC, invisible characters removed, trimmed, every white-space run one space. A
/// number stands for its text; anything else is not text.
fn free_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => {
            let chars = s.chars().filter(|c| !crate::text::is_invisible(*c));
            let mut out = String::with_capacity(s.len());
            for word in chars.nfc().collect::<String>().split_whitespace() {
                if !out.is_empty() {
                    out.push(' ');
                }
                out.push_str(word);
            }
            Some(out)
        }
        Value::Number(n) => Some(super::canonical::canonical(&Value::Number(n.clone()))),
        _ => None,
    }
}

/// A code: NFKC, upper-cased, white space collapsed; letters, digits and `-_.` only.
fn code(v: &Value) -> Option<String> {
    let s = match v {
        Value::String(s) => Cow::Borrowed(s.as_str()),
        Value::Number(n) if n.is_u64() => Cow::Owned(n.to_string()),
        _ => return None,
    };
    let mut out = String::with_capacity(s.len());
    for word in s
        .chars()
        .filter(|c| !crate::text::is_invisible(*c))
        .nfkc()
        .collect::<String>()
        .split_whitespace()
    {
        if !out.is_empty() {
            out.push(' ');
        }
        for c in word.chars() {
            if !(c.is_alphanumeric() || matches!(c, '-' | '_' | '.')) {
                return None;
            }
            out.extend(c.to_uppercase());
        }
    }
    (!out.is_empty() && out.chars().count() <= 64).then_some(out)
}

// ---------------------------------------------------------------------------------------------
// Records

/// The record ids a value names, canonical, sorted, each once. A string may list several
/// (separated by commas, semicolons, bars, line breaks, and for ids white space too), an array
/// holds strings or numbers. A pattern, a wildcard (`*`, `%`, `CIF-*`), a word (`all`, `সব`), an
/// empty list or a list of nothing is [`ReadError::Pattern`]: a record is named by its id.
pub fn records(
    v: &Value,
    format: RecordFormat,
    s: &ReadSettings,
) -> Result<Vec<String>, ReadError> {
    let mut out = Vec::new();
    match v {
        Value::Array(items) => {
            for item in items {
                match item {
                    Value::String(t) => split_records(t, format, s, &mut out)?,
                    Value::Number(_) => one_record(item, format, s, &mut out)?,
                    _ => return Err(ReadError::Unreadable),
                }
            }
        }
        Value::String(t) => split_records(t, format, s, &mut out)?,
        Value::Number(_) => one_record(v, format, s, &mut out)?,
        _ => return Err(ReadError::Unreadable),
    }
    if out.is_empty() {
        return Err(ReadError::Pattern);
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

fn one_record(
    n: &Value,
    format: RecordFormat,
    s: &ReadSettings,
    out: &mut Vec<String>,
) -> Result<(), ReadError> {
    match n.as_u64() {
        Some(n) => split_records(&n.to_string(), format, s, out),
        None => Err(ReadError::Unreadable),
    }
}

/// Separators between the records of one string: list punctuation in its usual forms, and for
/// ids (which hold no white space) any white space too. A phone number keeps its spaces.
fn is_record_separator(c: char, format: RecordFormat) -> bool {
    matches!(
        c,
        ',' | ';'
            | '|'
            | '，'
            | '；'
            | '｜'
            | '、'
            | '،'
            | '؛'
            | '\n'
            | '\r'
            | '\u{2028}'
            | '\u{2029}'
    ) || (format == RecordFormat::Id && c.is_whitespace())
}

fn split_records(
    t: &str,
    format: RecordFormat,
    s: &ReadSettings,
    out: &mut Vec<String>,
) -> Result<(), ReadError> {
    for token in t.split(|c| is_record_separator(c, format)) {
        if token.trim().is_empty() {
            continue;
        }
        let id = match format {
            RecordFormat::Id => record_id(token),
            RecordFormat::Phone => phone(token, &s.country_code).ok_or_else(|| {
                if token
                    .chars()
                    .any(|c| crate::redact::digit_char(c).is_some())
                {
                    ReadError::Unreadable
                } else {
                    ReadError::Pattern
                }
            }),
        }?;
        out.push(id);
    }
    Ok(())
}

/// One record id, canonical: invisible characters removed, NFKC, digits of any script as
/// ASCII, upper-cased. Letters and digits with single inner `-` or `_`, and at least one digit:
/// anything else is a pattern, a word or a list the gate cannot split with certainty
/// (`C1/C2`, `C1.C2`), not an id.
fn record_id(token: &str) -> Result<String, ReadError> {
    let mut id = String::with_capacity(token.len());
    let mut digit = false;
    let mut after_joiner = true;
    for c in token
        .trim()
        .chars()
        .filter(|c| !crate::text::is_invisible(*c))
        .nfkc()
    {
        if let Some(d) = crate::redact::digit_char(c) {
            id.push(char::from(b'0' + d as u8));
            digit = true;
            after_joiner = false;
        } else if c.is_alphabetic() || is_mark(c) {
            id.extend(c.to_uppercase());
            after_joiner = false;
        } else if matches!(c, '-' | '_') && !after_joiner {
            id.push(c);
            after_joiner = true;
        } else {
            return Err(ReadError::Pattern);
        }
    }
    if after_joiner || !digit {
        return Err(ReadError::Pattern);
    }
    Ok(id)
}

fn is_mark(c: char) -> bool {
    use icu_properties::props::{GeneralCategory, GeneralCategoryGroup};
    use icu_properties::CodePointMapData;
    GeneralCategoryGroup::Mark.contains(CodePointMapData::<GeneralCategory>::new().get(c))
}

// ---------------------------------------------------------------------------------------------
// Names

/// The form two argument names are compared in: NFKC, lower-cased, invisible characters
/// removed, look-alike letters mapped (the skeleton the signatures match on).
pub fn fold_name(name: &str) -> Cow<'_, str> {
    if name
        .bytes()
        .all(|b| b.is_ascii() && !b.is_ascii_uppercase())
    {
        // Already its own fold (the common case): no copy.
        if !name.contains(char::is_whitespace) {
            return Cow::Borrowed(name);
        }
    }
    Cow::Owned(crate::text::fold_for_matching(name))
}

/// The first pair of names in an arguments object (at any depth) that fold to one name, with
/// where they are: `None` when every object's names are distinct as folded.
pub fn colliding_names(map: &Map<String, Value>) -> Option<(String, String, String)> {
    collide(map, "")
}

fn collide(map: &Map<String, Value>, at: &str) -> Option<(String, String, String)> {
    // Names that are their own fold and were distinct in the JSON cannot collide with each
    // other: only when some name folds to something else is there anything to compare.
    if map.keys().any(|k| matches!(fold_name(k), Cow::Owned(_))) {
        let mut folded: Vec<(Cow<'_, str>, &str)> =
            map.keys().map(|k| (fold_name(k), k.as_str())).collect();
        folded.sort_unstable();
        for pair in folded.windows(2) {
            if pair[0].0 == pair[1].0 {
                return Some((at.to_string(), pair[0].1.to_string(), pair[1].1.to_string()));
            }
        }
    }
    for (k, v) in map {
        if let Some(found) = collide_in(v, &|| join(at, k)) {
            return Some(found);
        }
    }
    None
}

fn collide_in(v: &Value, at: &dyn Fn() -> String) -> Option<(String, String, String)> {
    match v {
        Value::Object(m) => collide(m, &at()),
        Value::Array(items) => items.iter().enumerate().find_map(|(i, item)| {
            let here = || format!("{}[{i}]", at());
            collide_in(item, &here)
        }),
        _ => None,
    }
}

fn join(at: &str, k: &str) -> String {
    if at.is_empty() {
        k.to_string()
    } else {
        format!("{at}.{k}")
    }
}

/// What identifies a call of a tool with declared arguments: the declared ones by their
/// meaning (`meanings`: absent and default ones already left out), the others literally.
pub fn call_hash_by_meaning(
    tool: &str,
    args: &serde_json::Map<String, Value>,
    declared: &std::collections::BTreeMap<String, ArgSpec>,
    meanings: &[(&str, Meaning)],
) -> String {
    use super::canonical::{hash_text, object, string};
    let mut text = String::with_capacity(128);
    // Undeclared arguments, literally, then the meanings under a mark no JSON text starts with.
    object(
        args.iter()
            .filter(|(k, _)| !declared.contains_key(k.as_str())),
        &mut text,
    );
    text.push('#');
    for (name, meaning) in meanings {
        string(name, &mut text);
        text.push(':');
        match meaning {
            Meaning::One(v) => string(v, &mut text),
            Meaning::Records(ids) => {
                text.push('[');
                for (i, id) in ids.iter().enumerate() {
                    if i > 0 {
                        text.push(',');
                    }
                    string(id, &mut text);
                }
                text.push(']');
            }
        }
        text.push(';');
    }
    hash_text(tool, &text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn s() -> ReadSettings {
        ReadSettings::default()
    }

    #[test]
    fn amounts_in_every_spelling_and_not_the_ambiguous_ones() {
        for (v, want) in [
            (json!(500), Some(500.0)),
            (json!("500"), Some(500.0)),
            (json!("৫০০"), Some(500.0)),
            (json!("500.00"), Some(500.0)),
            (json!(" 1,000 "), Some(1000.0)),
            (json!("5,00,000"), Some(500_000.0)),
            (json!("1,234,567.5"), Some(1_234_567.5)),
            (json!("50 000"), Some(50_000.0)),
            (json!("৫০,০০০"), Some(50_000.0)),
            (json!("６００００"), Some(60_000.0)),
            (json!("٦٠,٠٠٠"), Some(60_000.0)),
            (json!(5e2), Some(500.0)),
            (json!("0.5"), Some(0.5)),
            (json!("1.000,50"), None),
            (json!("1,5"), None),
            (json!("1,0000"), None),
            (json!("1,000 000"), None),
            (json!("5e3"), None),
            (json!("৳500"), None),
            (json!(".5"), None),
            (json!("5."), None),
            (json!("-5"), None),
            (json!(-5), None),
            (json!(""), None),
            (json!(true), None),
        ] {
            assert_eq!(amount(&v), want, "{v}");
        }
        assert_eq!(amount_text(500.0), "500");
        assert_eq!(amount_text(500.5), "500.5");
        assert_eq!(hundredths(9999.99), 999_999);
        assert_eq!(hundredths(0.001), 1);
    }

    #[test]
    fn phones_are_one_number_however_written() {
        for p in [
            "+8801711000000",
            "8801711000000",
            "008801711000000",
            "01711000000",
            "01711-000000",
            "+880 1711 000 000",
            "(+880) 1711.000000",
            "+880 (0)1711 000000",
            "+88 01711000000",
            "০১৭১১০০০০০০",
            "1711000000",
        ] {
            assert_eq!(phone(p, "880").as_deref(), Some("+8801711000000"), "{p}");
        }
        for bad in [
            "0171100000a",
            "12345",
            "+880 1711 000 000 000 000",
            "*",
            "017*",
        ] {
            assert_eq!(phone(bad, "880"), None, "{bad}");
        }
    }

    #[test]
    fn records_are_counted_each_and_patterns_refused() {
        let ids = |v: Value| records(&v, RecordFormat::Id, &s());
        assert_eq!(ids(json!("cif-001")), Ok(vec!["CIF-001".to_string()]));
        assert_eq!(ids(json!("C1, C2;C3 | c1")).map(|r| r.len()), Ok(3));
        assert_eq!(ids(json!(["C1", "C2", 17])).map(|r| r.len()), Ok(3));
        assert_eq!(ids(json!("C1\tC2\nC3")).map(|r| r.len()), Ok(3));
        for wildcard in [
            "*", "%", "all", "ALL", "CIF-*", "CIF-%", "C?", ".*", "সব", ",", "CIF-", "-1",
            "C1..C9", "C1/C2", "C1.C2", "C1+C2",
        ] {
            assert_eq!(ids(json!(wildcard)), Err(ReadError::Pattern), "{wildcard}");
        }
        assert_eq!(ids(json!([])), Err(ReadError::Pattern));
        assert_eq!(ids(json!({"id": 1})), Err(ReadError::Unreadable));
        let wallets = |v: Value| records(&v, RecordFormat::Phone, &s());
        assert_eq!(
            wallets(json!("+880 1711-000000, 01811000000")),
            Ok(vec![
                "+8801711000000".to_string(),
                "+8801811000000".to_string()
            ])
        );
        assert_eq!(wallets(json!("*")), Err(ReadError::Pattern));
    }

    #[test]
    fn text_dates_and_codes_by_meaning() {
        assert_eq!(
            read(&ArgType::FreeText, &json!("  rent\u{200b} for  May "), &s()),
            Ok(Some(Meaning::One("rent for May".into())))
        );
        assert_eq!(read(&ArgType::FreeText, &json!("  "), &s()), Ok(None));
        assert_eq!(date("২০২৬-০১-০১").as_deref(), Some("2026-01-01"));
        assert_eq!(date("2026-02-31"), None);
        assert_eq!(
            read(&ArgType::Code(None), &json!(" bdt "), &s()),
            Ok(Some(Meaning::One("BDT".into())))
        );
        let only = ArgType::Code(Some(vec!["RECEIPT".into()]));
        assert_eq!(
            read(&only, &json!("otp_link"), &s()),
            Err(ReadError::Unreadable)
        );
    }

    #[test]
    fn names_that_fold_to_one_collide_at_any_depth() {
        let m = |v: Value| match v {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        assert!(colliding_names(&m(json!({"amount": 1, "to": 2}))).is_none());
        for (v, at) in [
            (json!({"amount": 1, "Amount": 2}), ""),
            (json!({"amount": 1, "ａｍｏｕｎｔ": 2}), ""),
            (json!({"amount": 1, "amo\u{200b}unt": 2}), ""),
            (json!({"memo": {"x": {"note": 1, "NOTE": 2}}}), "memo.x"),
            (json!({"list": [{}, {"a": 1, "A": 1}]}), "list[1]"),
        ] {
            let got = colliding_names(&m(v.clone()));
            assert_eq!(got.map(|g| g.0), Some(at.to_string()), "{v}");
        }
    }
}

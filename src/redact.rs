//! Finding and masking sensitive values: the one implementation behind the input side's outbound
//! form (cards only, before any text leaves for a remote model) and the output screen (every
//! kind a product lists, as the answer leaves for the customer).
//!
//! Kinds: card numbers (Luhn, 13–19 digits), bank account numbers, phone numbers (Bangladeshi
//! mobiles `01XXXXXXXXX`, `+8801…`, and international forms), NID numbers (after an NID word),
//! OTPs and PINs (after an OTP or PIN word), e-mail addresses, IBANs, the product's own
//! identifiers (a prefix and an id), and internal names (replaced, not masked). Digits are ASCII
//! or Bengali (`০`–`৯`), in groups joined by the separators people type. Everything is found in
//! one linear pass per kind; values never leave this module except masked.
//!
//! [`Stream`] masks text as it is generated with bounded hold-back: it holds only what could
//! still grow into a value (an open digit run, the last word, a possible internal name or IBAN),
//! at most [`MAX_HOLD_BYTES`], and its output equals the one-shot output, except that digits
//! the bound forces out before their value is complete leave masked (more, never less).

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use std::collections::BTreeSet;

/// The most a stream holds back; a value longer than this is masked in pieces.
pub const MAX_HOLD_BYTES: usize = 256;
/// Left context a stream keeps for the words that give digits a kind ("your OTP is").
const CONTEXT_BYTES: usize = 64;
/// How far before a number its OTP / PIN / NID word may stand.
const KEYWORD_REACH_BYTES: usize = 40;
/// The words before a number that give it a kind (whole words; Bangla may take case endings).
const OTP_WORDS: &[&str] = &[
    "otp",
    "one-time",
    "one time",
    "verification code",
    "security code",
    "login code",
    "your code",
    "the code",
    "ওটিপি",
    "কোড",
];
const PIN_WORDS: &[&str] = &["pin", "পিন", "password", "পাসওয়ার্ড"];
const NID_WORDS: &[&str] = &["nid", "national id", "এনআইডি", "জাতীয় পরিচয়"];
const PHONE_WORDS: &[&str] = &[
    "phone",
    "call",
    "mobile",
    "tel",
    "fax",
    "number",
    "message",
    "whatsapp",
    "answering",
    "reach me",
    "ফোন",
    "মোবাইল",
    "নম্বর",
    "নাম্বার",
];
/// Words before a house number, a postcode or a licence: not a value this screen masks.
const ADDRESS_WORDS: &[&str] = &[
    "address",
    "addresses",
    "located",
    "lives at",
    "live at",
    "zip",
    "postal",
    "post code",
    "license",
    "licence",
    "ঠিকানা",
];

#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    serde::Serialize,
    serde::Deserialize,
    utoipa::ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Card,
    Account,
    Phone,
    Nid,
    Otp,
    Pin,
    Email,
    Iban,
    Identifier,
    InternalName,
}

impl Kind {
    pub const ALL: [Kind; 10] = [
        Kind::Card,
        Kind::Account,
        Kind::Phone,
        Kind::Nid,
        Kind::Otp,
        Kind::Pin,
        Kind::Email,
        Kind::Iban,
        Kind::Identifier,
        Kind::InternalName,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Card => "card",
            Kind::Account => "account",
            Kind::Phone => "phone",
            Kind::Nid => "nid",
            Kind::Otp => "otp",
            Kind::Pin => "pin",
            Kind::Email => "email",
            Kind::Iban => "iban",
            Kind::Identifier => "identifier",
            Kind::InternalName => "internal_name",
        }
    }

    pub fn parse(s: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// Digits left visible at the end by default: the last four of a card, account or IBAN.
    pub fn default_visible(self) -> usize {
        match self {
            Kind::Card | Kind::Account | Kind::Iban => 4,
            _ => 0,
        }
    }
}

/// A product's own identifier: a prefix (matched case-insensitively) and an id of `min..=max`
/// letters, digits or dashes after it; the id is masked, the prefix stays.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identifier {
    pub prefix: String,
    pub min_len: usize,
    pub max_len: usize,
}

/// What a product masks and how.
#[derive(Debug, Clone)]
pub struct Redactor {
    kinds: BTreeSet<Kind>,
    visible: [usize; 10],
    identifiers: Vec<Identifier>,
    id_matcher: Option<AhoCorasick>,
    names: Vec<String>,
    name_matcher: Option<AhoCorasick>,
    /// Lower-cased names, for the stream's hold-back.
    names_lower: Vec<String>,
    pub replacement: String,
}

/// One value found: its kind and byte range in the text searched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub kind: Kind,
    pub start: usize,
    pub end: usize,
}

/// One value as reported: kind and char offsets in the masked text (never the value).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
pub struct Finding {
    pub kind: Kind,
    pub start: usize,
    pub end: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redacted {
    pub text: String,
    pub findings: Vec<Finding>,
}

impl Redactor {
    /// Card numbers only, last four visible: what the input side masks before a remote model.
    pub fn cards() -> &'static Redactor {
        static CARDS: std::sync::OnceLock<Redactor> = std::sync::OnceLock::new();
        CARDS.get_or_init(|| {
            Redactor::new(
                [Kind::Card].into_iter().collect(),
                &[],
                Vec::new(),
                Vec::new(),
                "",
            )
        })
    }

    /// `visible`: per-kind overrides of [`Kind::default_visible`].
    pub fn new(
        kinds: BTreeSet<Kind>,
        visible: &[(Kind, usize)],
        identifiers: Vec<Identifier>,
        names: Vec<String>,
        replacement: &str,
    ) -> Self {
        let mut v = Kind::ALL.map(Kind::default_visible);
        for (k, n) in visible {
            v[*k as usize] = *n;
        }
        let ci = |patterns: &[String]| -> Option<AhoCorasick> {
            if patterns.is_empty() {
                return None;
            }
            AhoCorasickBuilder::new()
                .ascii_case_insensitive(true)
                .match_kind(MatchKind::LeftmostLongest)
                .build(patterns)
                .ok()
        };
        let prefixes: Vec<String> = identifiers.iter().map(|i| i.prefix.clone()).collect();
        Redactor {
            kinds,
            visible: v,
            id_matcher: ci(&prefixes),
            identifiers,
            name_matcher: ci(&names),
            names_lower: names.iter().map(|n| n.to_lowercase()).collect(),
            names,
            replacement: replacement.to_string(),
        }
    }

    pub fn masks(&self, kind: Kind) -> bool {
        self.kinds.contains(&kind)
    }

    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Mask every value in `text`.
    pub fn redact(&self, text: &str) -> Redacted {
        let spans = self.find(text, 0);
        self.apply(text, &spans, 0)
    }

    /// The values in `text`, ignoring any that start before `from` (the stream's context).
    pub fn find(&self, text: &str, from: usize) -> Vec<Span> {
        let mut spans: Vec<Span> = Vec::new();
        if self.masks(Kind::Iban) {
            spans.extend(find_ibans(text));
        }
        if self.masks(Kind::Email) {
            spans.extend(find_emails(text));
        }
        if let Some(m) = &self.id_matcher {
            spans.extend(self.find_identifiers(m, text));
        }
        if let Some(m) = &self.name_matcher {
            spans.extend(
                m.find_iter(text)
                    .filter(|x| at_word_boundaries(text, x.start(), x.end()))
                    .map(|x| Span {
                        kind: Kind::InternalName,
                        start: x.start(),
                        end: x.end(),
                    }),
            );
        }
        spans.extend(self.find_digit_values(text));
        spans.sort_by_key(|s| (s.start, std::cmp::Reverse(s.end)));
        // First come, first kept: a later span overlapping a kept one is dropped.
        let mut kept: Vec<Span> = Vec::with_capacity(spans.len());
        for s in spans {
            if kept.last().is_none_or(|k| s.start >= k.end) && s.start >= from {
                kept.push(s);
            }
        }
        kept
    }

    fn find_identifiers(&self, m: &AhoCorasick, text: &str) -> Vec<Span> {
        let bytes = text.as_bytes();
        let mut out = Vec::new();
        for x in m.find_iter(text) {
            if x.start() > 0 && bytes[x.start() - 1].is_ascii_alphanumeric() {
                continue;
            }
            let id = &self.identifiers[x.pattern().as_usize()];
            let len = bytes[x.end()..]
                .iter()
                .take(id.max_len + 1)
                .take_while(|b| b.is_ascii_alphanumeric() || **b == b'-')
                .count();
            if (id.min_len..=id.max_len).contains(&len) {
                out.push(Span {
                    kind: Kind::Identifier,
                    start: x.end(),
                    end: x.end() + len,
                });
            }
        }
        out
    }

    /// Cards first (greedy, longest Luhn-valid window of whole groups), then what is left of
    /// each run of joined digit groups by its shape and the words before it.
    fn find_digit_values(&self, text: &str) -> Vec<Span> {
        let groups = digit_groups(text);
        if groups.is_empty() {
            return Vec::new();
        }
        let luhn = LuhnSums::new(text, &groups);
        let mut out = Vec::new();
        let mut start = 0;
        while start < groups.len() {
            let mut run_end = start + 1;
            while run_end < groups.len() && groups[run_end].joined {
                run_end += 1;
            }
            let run = &groups[start..run_end];
            let mut i = 0;
            let mut rest_start = 0;
            while i < run.len() {
                let card = if self.masks(Kind::Card) {
                    longest_card(&luhn, &run[i..])
                } else {
                    None
                };
                match card {
                    Some(n) => {
                        self.classify(text, &run[rest_start..i], &mut out);
                        out.push(Span {
                            kind: Kind::Card,
                            start: run[i].start,
                            end: run[i + n - 1].end,
                        });
                        i += n;
                        rest_start = i;
                    }
                    None => i += 1,
                }
            }
            self.classify(text, &run[rest_start..], &mut out);
            start = run_end;
        }
        out
    }

    /// The kind of a run of joined digit groups that is not a card, if it is a value at all.
    fn classify(&self, text: &str, run: &[DigitGroup], out: &mut Vec<Span>) {
        let (Some(first), Some(last)) = (run.first(), run.last()) else {
            return;
        };
        let digits: usize = run.iter().map(|g| g.digits).sum();
        // Amounts, years, times: too short to be any value (the common case, decided first);
        // and nothing to decide when no digit kind but cards is masked (the input side).
        let digit_kinds = [Kind::Otp, Kind::Pin, Kind::Nid, Kind::Phone, Kind::Account];
        if digits < 4 || !digit_kinds.iter().any(|k| self.masks(*k)) {
            return;
        }
        let from = floor_char(text, first.start.saturating_sub(KEYWORD_REACH_BYTES));
        let before = text[from..first.start].to_lowercase();
        let has = |words: &[&str]| words.iter().any(|w| has_word(&before, w));
        let prefix_plus = text[..first.start]
            .trim_end_matches([' ', '('])
            .ends_with('+');
        let kind = if digits <= 8 && has(OTP_WORDS) {
            Some(Kind::Otp)
        } else if digits <= 6 && has(PIN_WORDS) {
            Some(Kind::Pin)
        } else if digits < 7 || is_date_or_time(text, run) || is_ip_or_ssn(text, run) {
            None
        } else if digits >= 10 && has(NID_WORDS) {
            Some(Kind::Nid)
        } else if is_bd_mobile(text, run)
            || prefix_plus
            || text[first.start..last.end].contains('(')
            || has(PHONE_WORDS)
        {
            Some(Kind::Phone)
        } else if has(ADDRESS_WORDS)
            || before.trim_end().ends_with(" at")
            || (run.len() == 2 && run[0].digits == 5 && run[1].digits <= 3)
        {
            // A house and street number ("at 62573 103 Cass Street") or a postcode.
            None
        } else if digits <= 8 || (run.len() >= 3 && digits <= 12) {
            Some(Kind::Phone)
        } else {
            Some(Kind::Account)
        };
        if let Some(kind) = kind.filter(|k| self.masks(*k)) {
            out.push(Span {
                kind,
                start: first.start,
                end: last.end,
            });
        }
    }

    /// The masked text and what was found, with char offsets counted from `offset_chars`.
    pub fn apply(&self, text: &str, spans: &[Span], offset_chars: usize) -> Redacted {
        self.apply_forced(text, spans, offset_chars, 0..0)
    }

    /// [`Self::apply`], and every digit outside the spans within `forced` (byte range of
    /// `text`) is masked too: text the stream's hold bound forces out before it is complete.
    fn apply_forced(
        &self,
        text: &str,
        spans: &[Span],
        offset_chars: usize,
        forced: std::ops::Range<usize>,
    ) -> Redacted {
        let mut out = String::with_capacity(text.len());
        let mut findings = Vec::with_capacity(spans.len());
        let mut at = 0;
        let mut chars = offset_chars;
        let plain_out = |out: &mut String, from: usize, plain: &str| {
            if forced.start < from + plain.len() && from < forced.end {
                for (i, c) in plain.char_indices() {
                    let masked = forced.contains(&(from + i)) && digit_char(c).is_some();
                    out.push(if masked { '*' } else { c });
                }
            } else {
                out.push_str(plain);
            }
        };
        for s in spans {
            let plain = &text[at..s.start];
            plain_out(&mut out, at, plain);
            chars += plain.chars().count();
            let before = out.len();
            let value = &text[s.start..s.end];
            match s.kind {
                Kind::InternalName => out.push_str(&self.replacement),
                Kind::Email => {
                    out.extend(
                        value
                            .chars()
                            .map(|c| if c.is_alphanumeric() { '*' } else { c }),
                    )
                }
                Kind::Iban | Kind::Identifier => {
                    mask_tail(&mut out, value, self.visible[s.kind as usize], |c| {
                        c.is_ascii_alphanumeric()
                    })
                }
                _ => mask_tail(&mut out, value, self.visible[s.kind as usize], |c| {
                    digit_char(c).is_some()
                }),
            }
            let n = out[before..].chars().count();
            findings.push(Finding {
                kind: s.kind,
                start: chars,
                end: chars + n,
            });
            chars += n;
            at = s.end;
        }
        plain_out(&mut out, at, &text[at..]);
        Redacted {
            text: out,
            findings,
        }
    }

    /// A stream over this redactor.
    pub fn stream(self: &std::sync::Arc<Self>) -> Stream {
        Stream {
            redactor: self.clone(),
            context: String::new(),
            pending: String::new(),
            emitted_chars: 0,
        }
    }
}

/// Replace every char that `is_value` says is part of the value with `*`, but the last
/// `visible` of them.
fn mask_tail(out: &mut String, value: &str, visible: usize, is_value: impl Fn(char) -> bool) {
    let total = value.chars().filter(|c| is_value(*c)).count();
    let hide = total.saturating_sub(visible);
    let mut seen = 0;
    for c in value.chars() {
        if is_value(c) {
            seen += 1;
            out.push(if seen <= hide { '*' } else { c });
        } else {
            out.push(c);
        }
    }
}

/// Masks text as it arrives, holding back only what could still grow into a value.
pub struct Stream {
    redactor: std::sync::Arc<Redactor>,
    /// The last bytes already emitted, unmasked: the words before a number that give it a kind.
    context: String,
    pending: String,
    emitted_chars: usize,
}

impl Stream {
    /// Add a chunk; returns what can leave now, masked.
    pub fn push(&mut self, chunk: &str) -> Redacted {
        self.pending.push_str(chunk);
        let (cut, found, forced_from) = self.safe_cut();
        // More than MAX_HOLD_BYTES arrived without a place to cut: the bound on memory forces
        // out text that may still be part of a value. Its digits outside the values already
        // complete in it leave masked, whatever the rest turns out to be (fail closed: the
        // stream may mask more than the whole answer would, never less); the complete values
        // are masked by their kind, as found in the text as it arrived.
        let forced = forced_from.map_or(0..0, |start| start..cut);
        self.emit(cut, &found, forced)
    }

    /// The end of the answer: everything left, masked.
    pub fn finish(&mut self) -> Redacted {
        let found = self.complete_values();
        self.emit(self.pending.len(), &found, 0..0)
    }

    /// Bytes held now.
    pub fn held(&self) -> usize {
        self.pending.len()
    }

    /// Release the held text up to `cut`, masked with `found`: the values in everything held
    /// (with the left context), so a value's kind and extent are judged with the text after
    /// the cut too, as the whole answer would be ("RR99… 0022222 " is an IBAN only if what
    /// follows the space does not extend it). A cut never falls inside one of them.
    fn emit(&mut self, cut: usize, found: &[Span], forced: std::ops::Range<usize>) -> Redacted {
        let ready: String = self.pending.drain(..cut).collect();
        let spans: Vec<Span> = found
            .iter()
            .filter(|s| s.start < cut)
            .map(|s| Span {
                kind: s.kind,
                start: s.start,
                // Never the case (safe_cut); were it, the part released is masked as a value.
                end: s.end.min(cut),
            })
            .collect();
        let out = self
            .redactor
            .apply_forced(&ready, &spans, self.emitted_chars, forced);
        self.emitted_chars += out.text.chars().count();
        self.context.push_str(&ready);
        self.context = self.context[floor_char(
            &self.context,
            self.context.len().saturating_sub(CONTEXT_BYTES),
        )..]
            .to_string();
        out
    }

    /// The values in what is held (byte ranges of `pending`), found with the left context and
    /// everything held on the right.
    fn complete_values(&self) -> Vec<Span> {
        let window = format!("{}{}", self.context, self.pending);
        let from = self.context.len();
        self.redactor
            .find(&window, from)
            .into_iter()
            .map(|s| Span {
                kind: s.kind,
                start: s.start - from,
                end: s.end - from,
            })
            .collect()
    }

    /// Where the text that cannot change any more ends: before an open digit run, the last
    /// word, a possible IBAN, or the start of a possible internal name; never more than
    /// [`MAX_HOLD_BYTES`] back. When that bound forces the cut later than the safe place, the
    /// safe place comes back too, with the values complete in what is held: what lies between
    /// is released before it is complete.
    fn safe_cut(&self) -> (usize, Vec<Span>, Option<usize>) {
        let p = &self.pending;
        let floor = floor_char(p, p.len().saturating_sub(MAX_HOLD_BYTES));
        // Every value already complete in what is held, with the left context, as `emit` will
        // see it: a cut must not fall inside one ("see Temenos T24." must not leave as "see
        // Temenos " and then "T24."; an IBAN whose end a later character confirms must not leave
        // half masked one way and half the other).
        let found = self.complete_values();
        let cut = settle_cut(p, self.open_cut(), &found);
        if cut < floor {
            // Forced: release up to the bound, but never stop inside a value already complete
            // in what is held (it leaves whole, and masked as one).
            let mut forced = floor;
            for &Span { start, end, .. } in &found {
                if start < forced && end > forced {
                    forced = end;
                }
            }
            (forced, found, Some(cut))
        } else {
            (cut, found, None)
        }
    }

    /// Before what may still become a value: the last word, an open run of digit groups, a
    /// possible IBAN, the start of a possible internal name.
    fn open_cut(&self) -> usize {
        let p = &self.pending;
        let mut cut = p.len();
        // The last word (e-mail, identifier, IBAN group, a word that may be a keyword or name).
        if !p.ends_with(char::is_whitespace) {
            cut = cut.min(after_last_space(p));
        }
        // An open run of digit groups: digits, maybe followed by what could join another group.
        let trimmed = p.trim_end_matches(|c: char| is_separator_char(c) || c == '+' || c == '(');
        if trimmed.len() + 6 >= p.len() {
            if let Some(start) = open_digit_run_start(trimmed) {
                cut = cut.min(start);
            } else if trimmed.len() < p.len() {
                // Trailing `+` or `(`: a phone number may follow.
                cut = cut.min(trimmed.len());
            }
        }
        // An IBAN written in groups of four: "GB56 HXDO 8816 ...".
        if let Some(start) = open_iban_start(p) {
            cut = cut.min(start);
        }
        // A possible internal name of several words.
        for (i, _) in p.char_indices().rev().take(64) {
            if i < cut && (i == 0 || p[..i].ends_with(|c: char| !c.is_alphanumeric())) {
                let tail = p[i..].to_lowercase();
                if !tail.trim().is_empty()
                    && self
                        .redactor
                        .names_lower
                        .iter()
                        .any(|n| n.starts_with(&tail) && n.len() > tail.len())
                {
                    cut = cut.min(i);
                }
            }
        }
        cut
    }
}

/// Move a cut back until it falls at a character's start, outside every complete value, between
/// words, and never inside a run of digit groups ("০০০. 00000" held because its last word
/// "00000O" is held must not leave its first group behind).
fn settle_cut(p: &str, mut cut: usize, found: &[Span]) -> usize {
    let groups = digit_groups(p);
    loop {
        // Every rule above works on bytes; a cut is always at a character's start.
        cut = floor_char(p, cut);
        let before = cut;
        for &Span { start, end, .. } in found {
            if start < cut && end > cut {
                // A span may start inside a character (its digits follow a multi-byte
                // separator): hold from the character's start.
                cut = floor_char(p, start);
            }
        }
        if cut < p.len() && cut > 0 && !p[..cut].ends_with(char::is_whitespace) {
            cut = after_last_space(&p[..cut]);
        }
        let mut i = 0;
        while i < groups.len() {
            let mut j = i + 1;
            while j < groups.len() && groups[j].joined {
                j += 1;
            }
            let (start, end) = (groups[i].start, groups[j - 1].end);
            if start < cut && end > cut {
                cut = floor_char(p, start);
            }
            i = j;
        }
        if cut == before {
            break;
        }
    }
    cut
}

/// Where the text after its last white space starts (0 without one). White space may be
/// several bytes long (NEL, NBSP, em space): `+ 1` would cut inside it.
fn after_last_space(s: &str) -> usize {
    s.char_indices()
        .rev()
        .find(|(_, c)| c.is_whitespace())
        .map_or(0, |(i, c)| i + c.len_utf8())
}

fn floor_char(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Where the run of digit groups that `text` ends with starts, if it ends with a digit.
fn open_digit_run_start(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let last = text.chars().next_back()?;
    digit_char(last)?;
    let groups = digit_groups(text);
    let end = groups.len();
    let mut start = end.checked_sub(1)?;
    if groups[start].end != bytes.len() {
        return None;
    }
    while start > 0 && groups[start].joined {
        start -= 1;
    }
    // Include a `+` or `(` right before the run.
    let mut s = groups[start].start;
    while s > 0
        && matches!(bytes[s - 1], b'+' | b'(' | b' ')
        && text[..s].trim_end().ends_with(['+', '('])
    {
        s -= 1;
    }
    Some(s)
}

/// Where a possible IBAN that `text` ends with starts: two capitals, two digits, then groups of
/// up to four capitals or digits separated by single spaces.
fn open_iban_start(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut i = bytes.len();
    let limit = i.saturating_sub(42);
    let mut best = None;
    while i > limit {
        i -= 1;
        let b = bytes[i];
        if !(b.is_ascii_uppercase() || b.is_ascii_digit() || b == b' ') {
            break;
        }
        let starts_word = i == 0 || !bytes[i - 1].is_ascii_alphanumeric();
        if starts_word
            && bytes.len() - i >= 2
            && bytes[i].is_ascii_uppercase()
            && bytes.get(i + 1).is_some_and(u8::is_ascii_uppercase)
            && bytes.get(i + 2).is_none_or(u8::is_ascii_digit)
            && bytes.get(i + 3).is_none_or(u8::is_ascii_digit)
        {
            best = Some(i);
        }
    }
    best
}

fn at_word_boundaries(text: &str, start: usize, end: usize) -> bool {
    let before = text[..start].chars().next_back();
    let after = text[end..].chars().next();
    !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
}

fn find_emails(text: &str) -> Vec<Span> {
    let bytes = text.as_bytes();
    let local = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'%' | b'+' | b'-');
    let domain = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-');
    let mut out: Vec<Span> = Vec::new();
    for (at, _) in text.match_indices('@') {
        if out.last().is_some_and(|s| at < s.end) {
            continue;
        }
        let mut s = at;
        while s > 0 && at - s < 64 && local(bytes[s - 1]) {
            s -= 1;
        }
        let mut e = at + 1;
        while e < bytes.len() && e - at < 255 && domain(bytes[e]) {
            e += 1;
        }
        while e > at + 1 && matches!(bytes[e - 1], b'.' | b'-') {
            e -= 1;
        }
        let host = &text[at + 1..e];
        let tld_ok = host
            .rsplit('.')
            .next()
            .is_some_and(|t| t.len() >= 2 && t.bytes().all(|b| b.is_ascii_alphabetic()));
        if s < at && host.contains('.') && tld_ok {
            out.push(Span {
                kind: Kind::Email,
                start: s,
                end: e,
            });
        }
    }
    out
}

/// IBANs: two capitals, two check digits, 11–30 more capitals or digits, in groups of four
/// separated by single spaces or not at all.
fn find_ibans(text: &str) -> Vec<Span> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i + 4 <= bytes.len() {
        let starts_word = i == 0 || !bytes[i - 1].is_ascii_alphanumeric();
        if !(starts_word
            && bytes[i].is_ascii_uppercase()
            && bytes[i + 1].is_ascii_uppercase()
            && bytes[i + 2].is_ascii_digit()
            && bytes[i + 3].is_ascii_digit())
        {
            i += 1;
            continue;
        }
        let mut e = i + 4;
        let mut alnum = 4;
        while e < bytes.len() && alnum < 34 {
            let b = bytes[e];
            if b.is_ascii_uppercase() || b.is_ascii_digit() {
                alnum += 1;
                e += 1;
            } else if b == b' '
                && bytes
                    .get(e + 1)
                    .is_some_and(|n| n.is_ascii_uppercase() || n.is_ascii_digit())
            {
                e += 1;
            } else {
                break;
            }
        }
        let ends_word = e == bytes.len() || !bytes[e].is_ascii_alphanumeric();
        if (15..=34).contains(&alnum) && ends_word {
            out.push(Span {
                kind: Kind::Iban,
                start: i,
                end: e,
            });
            i = e;
        } else {
            i += 1;
        }
    }
    out
}

/// A Bangladeshi mobile: `01[3-9]` and eight more digits, or the same after `880` / `+880`.
fn is_bd_mobile(text: &str, run: &[DigitGroup]) -> bool {
    let digits: Vec<u32> = run
        .iter()
        .flat_map(|g| text[g.start..g.end].chars().filter_map(digit_char))
        .collect();
    let local = match digits.len() {
        11 => &digits[..],
        13 if digits[..3] == [8, 8, 0] => &digits[2..],
        _ => return false,
    };
    local[0] == 0 && local[1] == 1 && (3..=9).contains(&local[2])
}

/// A keyword in lower-cased text, not inside a longer word on its left, nor on its right for an
/// ASCII keyword ("pin" is not "Pines"; Bangla keeps its case endings: "পিনটি").
fn has_word(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(i, _)| {
        let left = text[..i].chars().next_back();
        let right = text[i + word.len()..].chars().next();
        !left.is_some_and(char::is_alphanumeric)
            && (!word.is_ascii() || !right.is_some_and(|c| c.is_ascii_alphanumeric()))
    })
}

/// `12/05/2025`, `2025-05-12`, `12.05.25`, with a time after it or not: a date, not a value.
fn is_date_or_time(text: &str, run: &[DigitGroup]) -> bool {
    if run.len() < 3 {
        return false;
    }
    let lens: Vec<usize> = run.iter().map(|g| g.digits).collect();
    let seps_ok = run[1..3].iter().zip(run).all(|(g, prev)| {
        let gap = text[prev.end..g.start].trim();
        matches!(gap, "/" | "-" | ".")
    });
    let date = matches!(
        lens[..3],
        [1..=2, 1..=2, 2] | [1..=2, 1..=2, 4] | [4, 1..=2, 1..=2]
    );
    // What follows the date may only be an hour and minutes.
    seps_ok && date && lens[3..].iter().all(|n| *n <= 2) && run.len() <= 6
}

/// `48.90.248.226` (an IP address) or `460-89-9847` (a US social security number): not a kind
/// this screen masks, and not a phone.
fn is_ip_or_ssn(text: &str, run: &[DigitGroup]) -> bool {
    let lens: Vec<usize> = run.iter().map(|g| g.digits).collect();
    let gaps: Vec<&str> = run[1..]
        .iter()
        .zip(run)
        .map(|(g, prev)| &text[prev.end..g.start])
        .collect();
    let ip = lens.len() == 4
        && lens.iter().all(|n| (1..=3).contains(n))
        && gaps.iter().all(|g| *g == ".");
    let ssn = lens[..] == [3, 2, 4] && gaps.iter().all(|g| *g == "-");
    ip || ssn
}

/// The zero of every run of ten decimal digits in Unicode (general category Nd, values 0–9 in
/// order), ASCII's first: Unicode 14's table (Python's `unicodedata`), plus Kawi and Nag Mundari
/// from Unicode 15. A model asked to "write the card number in full-width digits" (`４１１１…`)
/// or in Devanagari (`४१११…`) still writes digits, and they are masked as digits.
const DIGIT_ZEROS: [u32; 68] = [
    0x30, 0x660, 0x6F0, 0x7C0, 0x966, 0x9E6, 0xA66, 0xAE6, 0xB66, 0xBE6, 0xC66, 0xCE6, 0xD66,
    0xDE6, 0xE50, 0xED0, 0xF20, 0x1040, 0x1090, 0x17E0, 0x1810, 0x1946, 0x19D0, 0x1A80, 0x1A90,
    0x1B50, 0x1BB0, 0x1C40, 0x1C50, 0xA620, 0xA8D0, 0xA900, 0xA9D0, 0xA9F0, 0xAA50, 0xABF0, 0xFF10,
    0x104A0, 0x10D30, 0x11066, 0x110F0, 0x11136, 0x111D0, 0x112F0, 0x11450, 0x114D0, 0x11650,
    0x116C0, 0x11730, 0x118E0, 0x11950, 0x11C50, 0x11D50, 0x11DA0, 0x11F50, 0x16A60, 0x16AC0,
    0x16B50, 0x1D7CE, 0x1D7D8, 0x1D7E2, 0x1D7EC, 0x1D7F6, 0x1E140, 0x1E2F0, 0x1E4F0, 0x1E950,
    0x1FBF0,
];

/// The value of a decimal digit of any script: ASCII, Bengali (`০`–`৯`), full-width, Devanagari,
/// Arabic-Indic, mathematical, ... ([`DIGIT_ZEROS`]).
pub fn digit_char(c: char) -> Option<u32> {
    let cp = c as u32;
    if c.is_ascii() {
        return c.is_ascii_digit().then(|| cp - 0x30);
    }
    let zero = match DIGIT_ZEROS.binary_search(&cp) {
        Ok(i) => DIGIT_ZEROS[i],
        Err(0) => return None,
        Err(i) => DIGIT_ZEROS[i - 1],
    };
    if cp - zero < 10 {
        return Some(cp - zero);
    }
    // Digits that are not decimal digits to Unicode but that NFKC turns into ASCII ones, and a
    // model can be told to write: superscripts, subscripts and circled digits (`⁴¹¹¹`, `④①①①`).
    match c {
        '⁰' | '₀' | '⓪' => Some(0),
        '¹' => Some(1),
        '²' => Some(2),
        '³' => Some(3),
        '⁴'..='⁹' => Some(cp - 0x2070),
        '₁'..='₉' => Some(cp - 0x2080),
        '①'..='⑨' => Some(cp - 0x2460 + 1),
        _ => None,
    }
}

/// The digit starting at byte `i`, with its length in bytes: ASCII `0`–`9` and Bengali
/// `০`–`৯` (UTF-8 `E0 A7 A6`–`E0 A7 AF`) at once, any other script's through [`digit_char`].
fn digit_at(text: &str, i: usize) -> Option<(u32, usize)> {
    let bytes = text.as_bytes();
    match bytes[i] {
        b @ b'0'..=b'9' => Some((u32::from(b - b'0'), 1)),
        // The Bengali block (U+0980–U+09FF, `E0 A6 ..`–`E0 A7 ..`): its digits, or no digit.
        0xE0 if matches!(bytes.get(i + 1), Some(0xA6 | 0xA7)) => {
            match (bytes.get(i + 1), bytes.get(i + 2)) {
                (Some(0xA7), Some(&b @ 0xA6..=0xAF)) => Some((u32::from(b - 0xA6), 3)),
                _ => None,
            }
        }
        b if b < 0xC0 => None,
        _ => {
            let c = text.get(i..)?.chars().next()?;
            digit_char(c).map(|d| (d, c.len_utf8()))
        }
    }
}

/// A maximal run of digits, and whether a separator joins it to the group before.
#[derive(Debug, Clone, Copy)]
struct DigitGroup {
    start: usize,
    end: usize,
    digits: usize,
    /// Index of the group's first digit among all the digits of the text.
    first_digit: usize,
    joined: bool,
}

fn digit_groups(text: &str) -> Vec<DigitGroup> {
    let bytes = text.as_bytes();
    let mut groups: Vec<DigitGroup> = Vec::new();
    let mut last_end: Option<usize> = None;
    let mut first_digit = 0;
    let mut i = 0;
    while i < bytes.len() {
        let Some((_, len)) = digit_at(text, i) else {
            i += 1;
            continue;
        };
        let start = i;
        let mut digits = 1;
        i += len;
        while i < bytes.len() {
            match digit_at(text, i) {
                Some((_, len)) => {
                    i += len;
                    digits += 1;
                }
                None => break,
            }
        }
        let joined = last_end.is_some_and(|prev| is_card_separator(&text[prev..start]));
        groups.push(DigitGroup {
            start,
            end: i,
            digits,
            first_digit,
            joined,
        });
        first_digit += digits;
        last_end = Some(i);
    }
    groups
}

fn is_separator_char(c: char) -> bool {
    matches!(
        c,
        ' ' | '\u{00A0}'
            | '\u{2009}'
            | '\u{202F}'
            | '-'
            | '.'
            | '/'
            | '_'
            | '\u{2013}'
            | '\u{2014}'
            | '\u{2010}'
            | '\u{2011}'
            | '('
            | ')'
            | '\u{200C}'
            | '\u{200D}'
    )
}

/// One separator mark at most (two for a phone's brackets), with at most four spaces; not empty.
fn is_card_separator(gap: &str) -> bool {
    let mut marks = 0;
    let mut brackets = 0;
    let mut spaces = 0;
    for c in gap.chars() {
        match c {
            ' ' | '\u{00A0}' | '\u{2009}' | '\u{202F}' | '\u{200C}' | '\u{200D}' => spaces += 1,
            '(' | ')' => brackets += 1,
            '-' | '.' | '/' | '_' | '\u{2013}' | '\u{2014}' | '\u{2010}' | '\u{2011}' => marks += 1,
            _ => return false,
        }
    }
    (marks + spaces + brackets) > 0 && marks <= 1 && brackets <= 1 && spaces <= 4
}

/// How many of the leading groups form the longest Luhn-valid 13–19 digit number, if any.
fn longest_card(luhn: &LuhnSums, groups: &[DigitGroup]) -> Option<usize> {
    let first = groups.first()?.first_digit;
    // A card is at most 19 digits: at most 19 groups, each of at least one digit.
    let mut ends = [0usize; 19];
    let mut n = 0;
    for g in groups.iter().take(19) {
        let end = g.first_digit + g.digits;
        if end - first > 19 {
            break;
        }
        ends[n] = end;
        n += 1;
    }
    (1..=n)
        .rev()
        .find(|&k| ends[k - 1] - first >= 13 && luhn.valid(first, ends[k - 1]))
}

/// The Luhn check of any run of the text's digits in constant time, from two prefix sums.
///
/// Luhn doubles every second digit counting from the right, so which digits a window doubles
/// depends on the parity of its last index: `plain[i]` sums the digits as they count when the
/// window ends on an even index, `shifted[i]` when it ends on an odd one. A window's checksum is
/// then one subtraction. `luhn_sums_agree_with_the_luhn_crate` checks it against the `luhn`
/// crate on every window of random digit strings.
struct LuhnSums {
    plain: Vec<u32>,
    shifted: Vec<u32>,
}

impl LuhnSums {
    fn new(text: &str, groups: &[DigitGroup]) -> Self {
        let total = groups.iter().map(|g| g.digits).sum::<usize>();
        let mut plain = Vec::with_capacity(total + 1);
        let mut shifted = Vec::with_capacity(total + 1);
        plain.push(0);
        shifted.push(0);
        let mut k = 0usize;
        for g in groups {
            let mut i = g.start;
            while let Some((d, len)) = (i < g.end).then(|| digit_at(text, i)).flatten() {
                i += len;
                let doubled = if d >= 5 { 2 * d - 9 } else { 2 * d };
                let (p, s) = if k.is_multiple_of(2) {
                    (d, doubled)
                } else {
                    (doubled, d)
                };
                plain.push(plain[k] + p);
                shifted.push(shifted[k] + s);
                k += 1;
            }
        }
        LuhnSums { plain, shifted }
    }

    /// Digits `start..end` (indices among all the text's digits) pass the Luhn check.
    fn valid(&self, start: usize, end: usize) -> bool {
        let sums = if (end - 1).is_multiple_of(2) {
            &self.plain
        } else {
            &self.shifted
        };
        (sums[end] - sums[start]) % 10 == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all() -> Redactor {
        Redactor::new(
            Kind::ALL.into_iter().collect(),
            &[(Kind::Phone, 3)],
            vec![Identifier {
                prefix: "CUST-".into(),
                min_len: 4,
                max_len: 12,
            }],
            vec!["core_banking_api".into(), "Temenos T24".into()],
            "[internal]",
        )
    }

    #[test]
    fn luhn_sums_agree_with_the_luhn_crate() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let digits: String = (0..200)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                char::from(b'0' + (x % 10) as u8)
            })
            .collect();
        let groups = digit_groups(&digits);
        let sums = LuhnSums::new(&digits, &groups);
        for start in 0..digits.len() {
            for end in start + 1..(start + 25).min(digits.len()) {
                assert_eq!(
                    sums.valid(start, end),
                    luhn::valid(&digits[start..end]),
                    "{}",
                    &digits[start..end]
                );
            }
        }
    }

    #[test]
    fn kinds_table() {
        let r = all();
        for (text, want) in [
            ("card 4111 1111 1111 1111 ok", "card **** **** **** 1111 ok"),
            ("কার্ড ৪১১১ ১১১১ ১১১১ ১১১১", "কার্ড **** **** **** ১১১১"),
            ("call 01711-223344 now", "call *****-***344 now"),
            ("call +880 1711 223344", "call +*** **** ***344"),
            ("নম্বর ০১৭১১২২৩৩৪৪", "নম্বর ********৩৪৪"),
            ("your OTP is 483920.", "your OTP is ******."),
            ("আপনার পিন ১২৩৪", "আপনার পিন ****"),
            ("NID 1990123456789", "NID *************"),
            (
                "account 2050123456789 credited",
                "account *********6789 credited",
            ),
            (
                "mail rahim.uddin@example.com today",
                "mail *****.*****@*******.*** today",
            ),
            ("IBAN GB56HXDO88167774656119", "IBAN ******************6119"),
            ("customer CUST-00123 asked", "customer CUST-***** asked"),
            (
                "ask CORE_BANKING_API or Temenos T24",
                "ask [internal] or [internal]",
            ),
            (
                "on 12/05/2025 you paid 1,250 taka",
                "on 12/05/2025 you paid 1,250 taka",
            ),
            ("in 2025 the fee is 15 taka", "in 2025 the fee is 15 taka"),
        ] {
            assert_eq!(r.redact(text).text, want, "{text:?}");
        }
    }

    /// Digits of other scripts are digits: an answer that writes a card number in full-width,
    /// Devanagari, Arabic-Indic or mathematical digits (as an injected instruction may ask) is
    /// masked like one in ASCII, in one piece or streamed a character at a time.
    #[test]
    fn digits_of_every_script_are_masked() {
        let r = std::sync::Arc::new(all());
        for (text, want) in [
            (
                "card ４１１１１１１１１１１１１１１１",
                "card ************１１１１",
            ),
            ("card ४१११ १११११११११११११", "card **** *********११११"),
            ("call ٠١٧١١٢٢٣٣٤٤ now", "call ********٣٤٤ now"),
            ("card 𝟒𝟏𝟏𝟏 𝟏𝟏𝟏𝟏 𝟏𝟏𝟏𝟏 𝟏𝟏𝟏𝟏", "card **** **** **** 𝟏𝟏𝟏𝟏"),
            (
                "card 4111 ١١١١ ১১১১ １１１１",
                "card **** **** **** １１１１",
            ),
            ("call ০১৭১১২২৩৩৪৪", "call ********৩৪৪"),
            ("card ⁴¹¹¹ ¹¹¹¹ ¹¹¹¹ ¹¹¹¹", "card **** **** **** ¹¹¹¹"),
            ("card ④①①① ①①①① ①①①① ①①①①", "card **** **** **** ①①①①"),
            // One superscript is a unit or a footnote, not a value.
            (
                "the room is 12 m² and CO₂ is fine¹",
                "the room is 12 m² and CO₂ is fine¹",
            ),
        ] {
            assert_eq!(r.redact(text).text, want, "{text:?}");
            let mut stream = r.stream();
            let mut out = String::new();
            for c in text.chars() {
                out.push_str(&stream.push(&c.to_string()).text);
            }
            out.push_str(&stream.finish().text);
            assert_eq!(out, want, "streamed {text:?}");
        }
        for (c, d) in [
            ('０', 0),
            ('９', 9),
            ('४', 4),
            ('٧', 7),
            ('𝟗', 9),
            ('৫', 5),
            ('7', 7),
        ] {
            assert_eq!(digit_char(c), Some(d), "{c:?}");
        }
        for (c, d) in [
            ('⁰', 0),
            ('¹', 1),
            ('²', 2),
            ('⁹', 9),
            ('₀', 0),
            ('₇', 7),
            ('①', 1),
            ('⑨', 9),
            ('⓪', 0),
        ] {
            assert_eq!(digit_char(c), Some(d), "{c:?}");
        }
        for c in ['a', '½', 'Ⅻ', '⑩', '/', '\u{0A65}'] {
            assert_eq!(digit_char(c), None, "{c:?}");
        }
    }

    #[test]
    fn findings_are_kinds_and_offsets_in_the_masked_text() {
        let out = all().redact("পিন ১২৩৪ and 01711223344");
        assert_eq!(out.findings.len(), 2);
        assert_eq!(out.findings[0].kind, Kind::Pin);
        let masked: Vec<char> = out.text.chars().collect();
        let f = &out.findings[1];
        assert_eq!(f.kind, Kind::Phone);
        let s: String = masked[f.start..f.end].iter().collect();
        assert_eq!(s, "********344");
    }

    #[test]
    fn streams_equal_the_one_shot_output_and_hold_little() {
        let r = std::sync::Arc::new(all());
        let text = "Your card 4111 1111 1111 1111 and OTP 483920 went to rahim@example.com; \
                    call 01711-223344 or use core_banking_api. পিন ১২৩৪ দিন।";
        let whole = r.redact(text);
        for size in [1, 2, 3, 5, 7, 13] {
            let mut s = r.stream();
            let mut out = String::new();
            let mut findings = Vec::new();
            let chars: Vec<char> = text.chars().collect();
            for chunk in chars.chunks(size) {
                let piece: String = chunk.iter().collect();
                let o = s.push(&piece);
                out.push_str(&o.text);
                findings.extend(o.findings);
                assert!(s.held() <= MAX_HOLD_BYTES);
            }
            let o = s.finish();
            out.push_str(&o.text);
            findings.extend(o.findings);
            assert_eq!(out, whole.text, "chunks of {size}");
            assert_eq!(findings, whole.findings, "chunks of {size}");
        }
    }

    /// Found by `cargo fuzz run output_stream`: a name of several words complete at the end
    /// of what had arrived ("llama guard", "Temenos T24.") was cut between its words by the
    /// last-word rule, so its first word left unmasked.
    #[test]
    fn a_complete_name_of_several_words_is_never_split_by_a_cut() {
        let r = std::sync::Arc::new(all());
        for text in [
            "Temenos T24",
            "see Temenos T24.",
            "Temenos T24\u{4}\u{2}",
            "ask temenos t24, then Temenos T24 again",
            // The second find: an IBAN-like run whose last group arrives with the text's end.
            " cc c crur-RR9999999999999999900 00 R\0",
        ] {
            let whole = r.redact(text);
            for size in [1, 3, 1000] {
                let mut s = r.stream();
                let mut out = String::new();
                let chars: Vec<char> = text.chars().collect();
                for chunk in chars.chunks(size) {
                    out.push_str(&s.push(&chunk.iter().collect::<String>()).text);
                }
                out.push_str(&s.finish().text);
                assert_eq!(out, whole.text, "{text:?} in chunks of {size}");
                assert!(!out.to_lowercase().contains("temenos t24"), "{out}");
            }
        }
    }

    /// Found by `cargo fuzz run output_stream`: a value that starts right after a multi-byte
    /// white space (NEL) put the stream's cut inside that character, and slicing there panicked.
    /// Every split point of the text is tried.
    #[test]
    fn a_cut_never_falls_inside_a_character() {
        let r = std::sync::Arc::new(all());
        let text = "J+\0g{\n\u{85}uard-embedded222222222; 444r22 and \u{85}4111 1111 1111 1111";
        let whole = r.redact(text);
        for (at, _) in text.char_indices() {
            let mut s = r.stream();
            let mut out = s.push(&text[..at]).text;
            out.push_str(&s.push(&text[at..]).text);
            out.push_str(&s.finish().text);
            assert_eq!(
                out.chars().count(),
                whole.text.chars().count(),
                "split at {at}"
            );
            assert!(!out.contains("4111 1111 1111 1111"), "split at {at}: {out}");
        }
    }

    /// Found by `cargo fuzz run output_stream`: more than MAX_HOLD_BYTES without a place to cut
    /// forced text out before its value was complete, and its digits left in clear. Forced-out
    /// digits are now masked: the stream may mask more than the whole answer, never less.
    #[test]
    fn text_forced_out_by_the_hold_bound_never_shows_a_digit_the_whole_answer_masks() {
        let r = std::sync::Arc::new(all());
        let text =
            "2r2222222222]222222 42]222222 422222;4 244r2222222222]222222 44444\u{0}2 22]222222 \
                    44444\u{0}2 44444++222222;4 244r2222222222]222222 44444\u{0}2 22]222222 44444\u{0}2 \
                    44444++222r2222222222]222222 422222;4 244r2222222yyyyyyyyyyyyyyyyyyyyyyyyyyyyyy\
                    yyyyyyyyyyyyyyyyyyyyy222]22\0\0\0\0";
        let whole = r.redact(text).text;
        for cuts in [vec![43, 43, 41, 43, 50], vec![300], vec![7; 60]] {
            let mut s = r.stream();
            let mut out = String::new();
            let mut rest = text;
            for c in cuts {
                let mut at = c.min(rest.len());
                while !rest.is_char_boundary(at) {
                    at -= 1;
                }
                let (chunk, tail) = rest.split_at(at);
                out.push_str(&s.push(chunk).text);
                assert!(s.held() <= MAX_HOLD_BYTES + 64);
                rest = tail;
            }
            out.push_str(&s.push(rest).text);
            out.push_str(&s.finish().text);
            assert_masks_at_least(&whole, &out);
        }
    }

    /// Found by `cargo fuzz run output_stream`: the hold bound forced a cut inside a complete
    /// internal name ("kyc_" left, then "lookup"), so neither half was masked. A forced cut now
    /// never stops inside a complete value. Every position of the bound across the name is tried.
    #[test]
    fn the_hold_bound_never_splits_a_complete_value() {
        let r = std::sync::Arc::new(all());
        for n in 230..290 {
            let text = format!("\u{8}core_banking_api{}", "\"".repeat(n));
            let whole = r.redact(&text).text;
            let mut s = r.stream();
            let mut out = s.push(&text).text;
            out.push_str(&s.finish().text);
            assert_eq!(out, whole, "{n}");
            assert!(!out.contains("banking"), "{n}: {out}");
        }
    }

    /// Found by `cargo fuzz run output_stream` (a seventh run): 300 bytes without white space
    /// force a cut, and the stream used to mask the forced digits in the held text before
    /// looking for values in it. "gpt-4o" became "gpt-*o", no longer an internal name, and
    /// "…0Pl" became "…*Pl", which completed an e-mail address that is not one: the stream
    /// starred the name where the whole answer replaces it. The values are now found in the
    /// text as it arrived, and the forced digits masked around them.
    #[test]
    fn a_forced_cut_finds_values_in_the_text_as_it_arrived() {
        let r = std::sync::Arc::new(Redactor::new(
            Kind::ALL.into_iter().collect(),
            &[(Kind::Phone, 3)],
            vec![],
            vec![
                "wallet_ledger_api".into(),
                "kyc_lookup".into(),
                "gpt-4o".into(),
            ],
            "[internal]",
        ));
        let text = "]]\n]TePPPPPPPPPPPPl\0\0\0_gpt-4o___z_________ledgea@..aaa33@.kycJAPPPPPPPPPPPPPPPatedPPPPPPPPPPPPPPPPPIIIIIIIIIIQQQPPPPPPPP0Pl\0\0\0____z____^____ledgza@..aaa333333333300U0gea@..aaawalle*_ledger_ap00000000000000000000000000000000000000003074457345618258602PPP7345618258602PPPPPPPPPPPPPPPP-rr0 0 0(v&u(v\0\0\0\0PPPPPPPPPPPPPA\u{11}\0\0PPPPP#";
        let whole = r.redact(text).text;
        let mut s = r.stream();
        let mut out = s.push(text).text;
        out.push_str(&s.finish().text);
        assert!(out.contains("_[internal]___"), "{out}");
        assert_masks_at_least(&whole, &out);
    }

    /// Found by `cargo fuzz run output_stream` (a sixth run): cut after 24 bytes, the stream
    /// released "…RR9999999999999999899 0022222 " before the word after it and masked it as an
    /// IBAN, where the whole answer's " Ru…" extends the run and makes it digit groups: each
    /// showed the last four digits of its own grouping ("2222" against "9899"). The stream now
    /// judges what it releases with everything it holds.
    #[test]
    fn an_iban_like_run_is_judged_with_the_text_after_it() {
        let r = std::sync::Arc::new(all());
        let text = "2C\u{0}WC22T@\u{4}\u{0}\u{15}3\u{0}\u{4}222\"2\u{0}r\u{0}ru2.2222r-RR9999999999999999899 0022222 Ru9999999929";
        let whole = r.redact(text).text;
        let mut s = r.stream();
        let mut out = s.push(&text[..24]).text;
        out.push_str(&s.push(&text[24..]).text);
        out.push_str(&s.finish().text);
        assert_masks_at_least(&whole, &out);
    }

    /// The streamed answer has the whole answer's length, and differs from it only where it
    /// masks a letter or digit that the whole answer shows (never the other way round).
    fn assert_masks_at_least(whole: &str, streamed: &str) {
        let (w, o): (Vec<char>, Vec<char>) = (whole.chars().collect(), streamed.chars().collect());
        assert_eq!(w.len(), o.len(), "{streamed:?} vs {whole:?}");
        for (i, (a, b)) in w.iter().zip(&o).enumerate() {
            assert!(
                a == b || (*b == '*' && a.is_alphanumeric()),
                "at {i}: {b:?} for {a:?}"
            );
        }
    }
}

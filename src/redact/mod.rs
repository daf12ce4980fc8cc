//! Finding and masking sensitive values: the one implementation behind the input side's outbound
//! form (cards only, before any text leaves for a remote model), the context screen (cards in
//! documents) and the output screen (every kind a product lists, as the answer leaves for the
//! customer).
//!
//! - [`values`]: the value finder, one for every digit-bearing kind (cards, phones, NIDs,
//!   accounts, IBANs, OTPs and PINs), reading digits of every script and form
//!   ([`digits`]), any short separator, and the words around a number ([`words`]) in English
//!   and Bangla. Public as [`values()`] for anything else that reads numbers.
//! - [`email`]: addresses as written and in their spoken disguises.
//! - [`names`]: the product's internal names, matched on a squashed form.
//! - the product's own identifiers (a prefix and an id), below.
//!
//! [`Redactor`] masks what the product lists; [`Stream`] masks text as it is generated, holding
//! back only what could still grow into a value or change its kind, at most
//! [`MAX_HOLD_BYTES`]; its output equals the one-shot output, except that digits the bound
//! forces out before their value is complete leave masked (more, never less). Values never
//! leave this module except masked.

pub mod digits;
mod email;
mod names;
mod stream;
pub mod values;
mod words;

pub use digits::digit_char;
pub use stream::{Stream, MAX_HOLD_BYTES};
pub use values::{values, Value, ValueKind};

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use std::collections::BTreeSet;

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
    /// The names and their other spellings, squashed ([`names`]).
    name_matcher: names::Names,
    /// Only cards: the value finder looks for nothing else.
    cards_only: bool,
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
    /// Card numbers only, last four visible: what the input side masks before a remote model,
    /// and the context screen in documents.
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
        let prefixes: Vec<String> = identifiers.iter().map(|i| i.prefix.clone()).collect();
        let id_matcher = (!prefixes.is_empty())
            .then(|| {
                AhoCorasickBuilder::new()
                    .ascii_case_insensitive(true)
                    .match_kind(MatchKind::LeftmostLongest)
                    .build(&prefixes)
                    .ok()
            })
            .flatten();
        Redactor {
            cards_only: kinds.iter().all(|k| *k == Kind::Card),
            kinds,
            visible: v,
            id_matcher,
            identifiers,
            name_matcher: names::Names::new(names.iter().map(String::as_str)),
            names,
            replacement: replacement.to_string(),
        }
    }

    /// Other spellings of the internal names (transliterations: `Finacle` → `ফিনাকল`), each
    /// replaced like the name itself.
    pub fn with_name_aliases<'a>(mut self, aliases: impl IntoIterator<Item = &'a str>) -> Self {
        if !self.names.is_empty() {
            let all: Vec<String> = self
                .names
                .iter()
                .map(String::clone)
                .chain(aliases.into_iter().map(str::to_string))
                .collect();
            self.name_matcher = names::Names::new(all.iter().map(String::as_str));
        }
        self
    }

    pub fn masks(&self, kind: Kind) -> bool {
        self.kinds.contains(&kind)
    }

    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// How many trailing digits (or characters) of a `kind` value stay visible.
    pub fn visible(&self, kind: Kind) -> usize {
        self.visible[kind as usize]
    }

    /// Mask every value in `text`.
    pub fn redact(&self, text: &str) -> Redacted {
        let spans = self.find(text, 0);
        self.apply(text, &spans, 0)
    }

    /// The values in `text`, ignoring any that start before `from` (the stream's context).
    pub fn find(&self, text: &str, from: usize) -> Vec<Span> {
        let mut spans: Vec<Span> = Vec::new();
        if self.masks(Kind::Email) {
            spans.extend(email::find(text, from).into_iter().map(|r| Span {
                kind: Kind::Email,
                start: r.start,
                end: r.end,
            }));
        }
        if let Some(m) = &self.id_matcher {
            spans.extend(self.find_identifiers(m, text, from));
        }
        spans.extend(
            self.name_matcher
                .find(text, from)
                .into_iter()
                .map(|r| Span {
                    kind: Kind::InternalName,
                    start: r.start,
                    end: r.end,
                }),
        );
        spans.extend(
            values::find(text, from, self.cards_only)
                .into_iter()
                .filter_map(|f| {
                    let kind = f.kind.masked_as().filter(|k| self.masks(*k))?;
                    Some(Span {
                        kind,
                        start: f.start,
                        end: f.end,
                    })
                }),
        );
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

    fn find_identifiers(&self, m: &AhoCorasick, text: &str, from: usize) -> Vec<Span> {
        let bytes = text.as_bytes();
        let mut out = Vec::new();
        for x in m.find_iter(&text[from..]) {
            let (start, end) = (from + x.start(), from + x.end());
            if start > 0 && bytes[start - 1].is_ascii_alphanumeric() {
                continue;
            }
            let id = &self.identifiers[x.pattern().as_usize()];
            let len = bytes[end..]
                .iter()
                .take(id.max_len + 1)
                .take_while(|b| b.is_ascii_alphanumeric() || **b == b'-')
                .count();
            if (id.min_len..=id.max_len).contains(&len) {
                out.push(Span {
                    kind: Kind::Identifier,
                    start: end,
                    end: end + len,
                });
            }
        }
        out
    }

    /// The masked text and what was found, with char offsets counted from `offset_chars`.
    pub fn apply(&self, text: &str, spans: &[Span], offset_chars: usize) -> Redacted {
        self.apply_forced(text, spans, offset_chars, 0..0)
    }

    /// [`Self::apply`], and every digit outside the spans within `forced` (byte range of
    /// `text`) is masked too: text the stream's hold bound forces out before it is complete.
    pub(crate) fn apply_forced(
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
                        c.is_ascii_alphanumeric() || digit_char(c).is_some()
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
        Stream::new(self.clone())
    }

    /// Where the end of `text` could still be the start of an internal name.
    pub(crate) fn open_name_start(&self, text: &str) -> Option<usize> {
        self.name_matcher.open_start(text)
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

/// Replace every Luhn-valid card number with asterisks, keeping the separators and the last
/// four digits. Used on every text that leaves the process (remote guard, judge); the caller's
/// own text is never changed.
///
/// A card is 13–19 digits (ASCII or Bengali), in groups joined by the separators people type:
/// a space, a dash, a dot, a slash, an underscore, an en or em dash, each with spaces around it
/// or not (`4111 - 1111 - ...`). A run of groups longer than a card ("4111 1111 1111 1111 2025",
/// or several cards in a list) is searched left to right for whole groups that form a valid
/// number, longest first. Linear in the text. The one implementation is [`Redactor`]; this is
/// its card-only use.
pub fn mask_cards(text: &str) -> String {
    Redactor::cards().redact(text).text
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

    #[test]
    fn mask_cards_table() {
        for (input, want) in [
            (
                "card 4111 1111 1111 1111 lost",
                "card **** **** **** 1111 lost",
            ),
            ("4111-1111-1111-1111", "****-****-****-1111"),
            ("4111111111111111", "************1111"),
            // Not Luhn-valid: left alone.
            ("4111 1111 1111 1112", "4111 1111 1111 1112"),
            // Too short.
            ("account 123456789", "account 123456789"),
            (
                "আমার কার্ড 5500005555555559 হারিয়েছে",
                "আমার কার্ড ************5559 হারিয়েছে",
            ),
            // A date after the card in the same run of groups.
            ("4111 1111 1111 1111 2025", "**** **** **** 1111 2025"),
            ("call 01711-123456", "call 01711-123456"),
            // Bengali digits, dots, spaced dashes, slashes, NBSP.
            ("কার্ড ৪১১১ ১১১১ ১১১১ ১১১১", "কার্ড **** **** **** ১১১১"),
            ("4111.1111.1111.1111", "****.****.****.1111"),
            ("4111 - 1111 - 1111 - 1111", "**** - **** - **** - 1111"),
            ("4111/1111/1111/1111", "****/****/****/1111"),
            (
                "4111\u{a0}1111\u{a0}1111\u{a0}1111",
                "****\u{a0}****\u{a0}****\u{a0}1111",
            ),
            // Two cards in one list are both masked.
            (
                "4111 1111 1111 1111 5500 0055 5555 5559",
                "**** **** **** 1111 **** **** **** 5559",
            ),
            // A card split 3-3-...: the visible four digits cross a group border.
            ("411 111 111 111 1111", "*** *** *** *** 1111"),
            ("41111111111 11 111", "*********** *1 111"),
        ] {
            assert_eq!(mask_cards(input), want, "input {input:?}");
        }
    }

    #[test]
    fn mask_cards_is_linear_on_the_worst_case() {
        // 64 KiB of single digits joined by spaces: every window is a candidate. The cubic
        // search this replaced would run for hours here (and hang the suite); the time itself
        // is measured in `benches/safety.rs`. "4 1 1 ... 1" (sixteen digits) is a valid card.
        let text = "4 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 ".repeat(2048);
        let masked = mask_cards(&text);
        assert!(
            masked.starts_with("* * * * * * * * * * * * 1 1 1 1 * "),
            "{}",
            &masked[..40]
        );
        assert_eq!(masked.chars().count(), text.chars().count());
    }
}

//! The words around a number that say what it is, in English and Bangla, and the sentence they
//! must share with it.
//!
//! A number's kind is read from words near it, never from the number alone: "account"
//! (`a/c`, `অ্যাকাউন্ট`, `হিসাব`) makes it an account, "OTP" (`O.T.P.`, `ওটিপি`) a one-time
//! code, "PIN" a PIN. The words are found once per text (one `aho-corasick` pass, ASCII case
//! ignored, dotted and spaced acronyms included) and only when the text holds a number long
//! enough to be a value; each number then asks for the words of its sentence within a reach.
//!
//! A sentence ends at `!`, `?`, `।`, `॥`, a line break, or a full stop followed by white space
//! that does not close a one-letter abbreviation (`O.T.P. is`, `e.g. the`).

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use std::sync::OnceLock;

/// How far before a number (in characters, within its sentence) a credential word may stand.
pub(crate) const CREDENTIAL_REACH_BEFORE: usize = 120;
/// How far after a number a credential word may stand ("483920 is your OTP").
pub(crate) const CREDENTIAL_REACH_AFTER: usize = 80;
/// How far before a number its kind word may stand ("account number 1234…").
const KIND_REACH_BEFORE: usize = 48;
/// How far after a number its kind word may stand ("1234… is your account number").
pub(crate) const KIND_REACH_AFTER: usize = 32;
/// A word this close before a number (or [`CLAIM_AFTER`] after it) claims it for its own kind:
/// "card ending 4821", "Tk 5000", "5000 taka".
const CLAIM_BEFORE: usize = 16;
const CLAIM_AFTER: usize = 8;

/// What a word says about a number near it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    /// A one-time code: OTP, one-time password, verification code, ওটিপি.
    Otp,
    /// A PIN or password: PIN, MPIN, password, passcode, পিন, পাসওয়ার্ড.
    Pin,
    /// "code" alone: a one-time code unless a word before it says what code (below).
    Code,
    /// A word that makes the "code" after it something else: error, promo, branch, postal...
    OtherCode,
    Account,
    Phone,
    Card,
    Nid,
    /// Money: a currency or an amount noun ("Tk", "৳", "balance", "fee", "টাকা").
    Money,
    /// A street address, postcode or licence: not a value the screen masks.
    Address,
}

impl Class {
    fn is_credential(self) -> bool {
        matches!(self, Class::Otp | Class::Pin | Class::Code)
    }
}

/// The vocabulary, by class. ASCII entries match whole words, case ignored; Bangla entries
/// match at the start of a word (Bangla adds case endings: `অ্যাকাউন্টের`, `ফোনে`). Acronyms
/// (`ACRONYMS`) also match dotted or spaced (`O.T.P.`, `p i n`, `N-I-D`).
const VOCABULARY: &[(Class, &[&str])] = &[
    (
        Class::Otp,
        &[
            "otp",
            "one time password",
            "one-time password",
            "one time pin",
            "one-time pin",
            "one time code",
            "one-time code",
            "one time passcode",
            "one-time passcode",
            "verification code",
            "security code",
            "login code",
            "log-in code",
            "sign-in code",
            "confirmation code",
            "authentication code",
            "auth code",
            "access code",
            "secret code",
            "2fa code",
            "2fa",
            "ওটিপি",
            "ও টি পি",
            "ভেরিফিকেশন কোড",
            "যাচাইকরণ কোড",
            "গোপন কোড",
        ],
    ),
    (
        Class::Pin,
        &[
            "pin",
            "mpin",
            "m-pin",
            "tpin",
            "t-pin",
            "ipin",
            "password",
            "passcode",
            "passwd",
            "পিন",
            "এমপিন",
            "পাসওয়ার্ড",
            "পাসওয়ার্ড",
            "গোপন নম্বর",
        ],
    ),
    (Class::Code, &["code", "codes", "কোড"]),
    (
        Class::OtherCode,
        &[
            "error",
            "status",
            "promo",
            "promotional",
            "coupon",
            "voucher",
            "discount",
            "referral",
            "invite",
            "invitation",
            "branch",
            "routing",
            "sort",
            "swift",
            "bic",
            "ifsc",
            "bank",
            "postal",
            "zip",
            "post",
            "area",
            "country",
            "dialing",
            "dialling",
            "merchant",
            "product",
            "item",
            "reference",
            "tracking",
            "qr",
            "ussd",
            "short",
            "http",
            "response",
            "reason",
            "exit",
            "source",
            "ত্রুটি",
            "প্রোমো",
            "কুপন",
            "ভাউচার",
            "রেফারেল",
            "শাখা",
            "মার্চেন্ট",
        ],
    ),
    (
        Class::Account,
        &[
            "account",
            "accounts",
            "acct",
            "acc no",
            "a/c",
            "ac no",
            "ac number",
            "wallet number",
            "wallet id",
            "অ্যাকাউন্ট",
            "একাউন্ট",
            "এ্যাকাউন্ট",
            "অ্যাকাউন্ট",
            "হিসাব",
            "অ্যাকাউন্ট নং",
        ],
    ),
    (
        Class::Phone,
        &[
            "phone",
            "telephone",
            "mobile",
            "cell",
            "cellphone",
            "tel",
            "fax",
            "call",
            "calling",
            "called",
            "sms",
            "text",
            "texted",
            "message",
            "whatsapp",
            "viber",
            "imo",
            "hotline",
            "helpline",
            "contact number",
            "answering",
            "reach me",
            "ফোন",
            "মোবাইল",
            "কল",
            "হটলাইন",
            "এসএমএস",
            "হোয়াটসঅ্যাপ",
        ],
    ),
    (
        Class::Card,
        &[
            "card",
            "cards",
            "credit card",
            "debit card",
            "cc",
            "visa",
            "mastercard",
            "amex",
            "কার্ড",
            "ক্রেডিট কার্ড",
            "ডেবিট কার্ড",
        ],
    ),
    (
        Class::Nid,
        &[
            "nid",
            "national id",
            "national identity",
            "national identification",
            "national id card",
            "smart card",
            "birth certificate",
            "এনআইডি",
            "এন আই ডি",
            "জাতীয় পরিচয়",
            "জাতীয় পরিচয়পত্র",
            "জন্ম নিবন্ধন",
        ],
    ),
    (
        Class::Money,
        &[
            "tk",
            "taka",
            "bdt",
            "usd",
            "eur",
            "gbp",
            "inr",
            "rs",
            "৳",
            "$",
            "€",
            "£",
            "₹",
            "%",
            "amount",
            "balance",
            "fee",
            "fees",
            "charge",
            "charges",
            "limit",
            "price",
            "cost",
            "cashback",
            "interest",
            "টাকা",
            "টাকার",
            "ব্যালেন্স",
            "ফি",
            "চার্জ",
            "সীমা",
            "পরিমাণ",
            "লিমিট",
        ],
    ),
    (
        Class::Address,
        &[
            "address",
            "addresses",
            "located",
            "lives at",
            "live at",
            "zip",
            "zip code",
            "postal",
            "post code",
            "postcode",
            "license",
            "licence",
            "ঠিকানা",
        ],
    ),
];

/// Acronyms that are also written letter by letter (`O.T.P.`, `P I N`).
const ACRONYMS: &[(Class, &str)] = &[
    (Class::Otp, "otp"),
    (Class::Pin, "pin"),
    (Class::Pin, "mpin"),
    (Class::Pin, "tpin"),
    (Class::Nid, "nid"),
    (Class::Phone, "sms"),
];

struct Vocabulary {
    matcher: AhoCorasick,
    /// Per pattern: its class, and whether it must end a word (ASCII) or may take an ending.
    patterns: Vec<(Class, bool)>,
}

/// The vocabulary's matcher, built at first use (`None` only if it could not be built, which
/// `the_vocabulary_builds` rules out).
fn vocabulary() -> Option<&'static Vocabulary> {
    static V: OnceLock<Option<Vocabulary>> = OnceLock::new();
    V.get_or_init(build_vocabulary).as_ref()
}

fn build_vocabulary() -> Option<Vocabulary> {
    let mut texts: Vec<String> = Vec::new();
    let mut patterns = Vec::new();
    let mut add = |text: String, class: Class| {
        if !texts.contains(&text) {
            patterns.push((class, text.is_ascii()));
            texts.push(text);
        }
    };
    for (class, words) in VOCABULARY {
        for w in *words {
            for v in canonical_variants(w) {
                add(v, *class);
            }
        }
    }
    for (class, acronym) in ACRONYMS {
        let letters: Vec<String> = acronym.chars().map(String::from).collect();
        for joiner in [".", ". ", " ", "-", "_", " . "] {
            add(letters.join(joiner), *class);
        }
    }
    let matcher = AhoCorasickBuilder::new()
        .ascii_case_insensitive(true)
        .match_kind(MatchKind::Standard)
        .build(&texts)
        .ok()?;
    Some(Vocabulary { matcher, patterns })
}

/// A Bangla word in both of its canonically equivalent spellings: `য়` as one code point
/// (U+09DF) and as `য` + nukta, and likewise `ড়` and `ঢ়`. Answers are not NFC-normalised.
fn canonical_variants(word: &str) -> Vec<String> {
    let pairs = [
        ('\u{09DF}', "\u{09AF}\u{09BC}"),
        ('\u{09DC}', "\u{09A1}\u{09BC}"),
        ('\u{09DD}', "\u{09A2}\u{09BC}"),
    ];
    let mut composed = word.to_string();
    let mut decomposed = word.to_string();
    for (one, two) in pairs {
        composed = composed.replace(two, &one.to_string());
        decomposed = decomposed.replace(one, two);
    }
    if composed == decomposed {
        vec![composed]
    } else {
        vec![composed, decomposed]
    }
}

#[derive(Debug, Clone, Copy)]
struct Hit {
    start: usize,
    end: usize,
    class: Class,
}

/// The words of one text and its sentence ends, found once and asked about by every number.
pub(crate) struct Words<'t> {
    text: &'t str,
    hits: Vec<Hit>,
    /// Byte offsets where a sentence ends (just after its terminator), sorted.
    ends: Vec<usize>,
}

impl<'t> Words<'t> {
    pub(crate) fn new(text: &'t str) -> Self {
        let mut hits = Vec::new();
        for (v, m) in vocabulary()
            .into_iter()
            .flat_map(|v| v.matcher.find_overlapping_iter(text).map(move |m| (v, m)))
        {
            let (class, whole_word) = v.patterns[m.pattern().as_usize()];
            if bounded(text, m.start(), m.end(), whole_word) {
                hits.push(Hit {
                    start: m.start(),
                    end: m.end(),
                    class,
                });
            }
        }
        Words {
            text,
            hits,
            ends: sentence_ends(text),
        }
    }

    /// The reach around `start..end`: `before` characters before and `after` after, within
    /// the sentence.
    fn window(&self, start: usize, end: usize, before: usize, after: usize) -> (usize, usize) {
        (
            self.sentence_start(start)
                .max(back_chars(self.text, start, before)),
            self.sentence_end(end)
                .min(forward_chars(self.text, end, after)),
        )
    }

    fn sentence_start(&self, at: usize) -> usize {
        let i = self.ends.partition_point(|e| *e <= at);
        i.checked_sub(1).map_or(0, |i| self.ends[i])
    }

    fn sentence_end(&self, at: usize) -> usize {
        let j = self.ends.partition_point(|e| *e < at);
        self.ends.get(j).copied().unwrap_or(self.text.len())
    }

    /// The hits in the sentence of `start..end` within the reaches, with their distance in
    /// bytes from the number.
    fn near(
        &self,
        start: usize,
        end: usize,
        before: usize,
        after: usize,
    ) -> impl Iterator<Item = (Hit, usize)> + '_ {
        let (lo, hi) = self.window(start, end, before, after);
        // A word counts when it ends within the reach before, or starts within it after.
        self.hits
            .iter()
            .filter(move |h| {
                (h.end <= start && h.end > lo && h.start >= self.sentence_start(start))
                    || (h.start >= end && h.start < hi && h.end <= self.sentence_end(end))
            })
            .map(move |h| {
                let distance = if h.end <= start {
                    start - h.end
                } else {
                    h.start - end
                };
                (*h, distance)
            })
    }

    /// The credential a credential word anywhere in the number's sentence (within reach) makes
    /// of it: the nearest such word's. "code" counts unless a word right before it names
    /// another kind of code ("error code", "promo code").
    pub(crate) fn credential(&self, start: usize, end: usize) -> Option<Class> {
        let mut best: Option<(usize, usize, Class)> = None;
        for (hit, distance) in
            self.near(start, end, CREDENTIAL_REACH_BEFORE, CREDENTIAL_REACH_AFTER)
        {
            if !hit.class.is_credential() || (hit.class == Class::Code && self.qualified(hit)) {
                continue;
            }
            let class = if hit.class == Class::Code {
                Class::Otp
            } else {
                hit.class
            };
            let key = (distance, usize::MAX - (hit.end - hit.start), class);
            if best.is_none_or(|b| (key.0, key.1) < (b.0, b.1)) {
                best = Some(key);
            }
        }
        best.map(|b| b.2)
    }

    /// A word of another kind right next to the number, and nearer than any credential word
    /// ("card ending 4821", "Tk 5000", "5000 taka", "call 16247"): the number is that kind's.
    pub(crate) fn claim(&self, start: usize, end: usize) -> Option<Class> {
        self.nearest(start, end, CLAIM_BEFORE, CLAIM_AFTER, |c| {
            c != Class::OtherCode
        })
        .filter(|c| !c.is_credential())
    }

    /// The kind the nearest kind word in the number's sentence gives it.
    pub(crate) fn kind(&self, start: usize, end: usize) -> Option<Class> {
        self.nearest(start, end, KIND_REACH_BEFORE, KIND_REACH_AFTER, |c| {
            matches!(
                c,
                Class::Account | Class::Phone | Class::Card | Class::Nid | Class::Address
            )
        })
    }

    fn nearest(
        &self,
        start: usize,
        end: usize,
        before: usize,
        after: usize,
        wanted: impl Fn(Class) -> bool,
    ) -> Option<Class> {
        self.near(start, end, before, after)
            .filter(|(h, _)| wanted(h.class))
            // Nearest; at the same distance the longer word ("credit card" over "card").
            .min_by_key(|(h, d)| (*d, usize::MAX - (h.end - h.start)))
            .map(|(h, _)| h.class)
    }

    /// A "code" hit with a word naming another kind of code right before it.
    fn qualified(&self, code: Hit) -> bool {
        self.hits.iter().any(|h| {
            h.class == Class::OtherCode
                && h.end <= code.start
                && code.start - h.end <= 2
                && self.text[h.end..code.start]
                    .chars()
                    .all(|c| c == ' ' || c == '-')
        })
    }
}

/// Whether a match is a word of its own: nothing alphanumeric right before it, and for ASCII
/// words nothing alphanumeric right after it either. Symbols (`৳`, `$`) need neither.
fn bounded(text: &str, start: usize, end: usize, whole_word: bool) -> bool {
    let first = text[start..end].chars().next();
    if first.is_some_and(|c| !c.is_alphanumeric()) {
        return true;
    }
    let before = text[..start].chars().next_back();
    let after = text[end..].chars().next();
    !before.is_some_and(crate::text::is_alphanumeric)
        && (!whole_word || !after.is_some_and(crate::text::is_alphanumeric))
}

/// Where the sentences of `text` end.
pub(crate) fn sentence_ends(text: &str) -> Vec<usize> {
    let mut ends = Vec::new();
    let mut chars = text.char_indices().peekable();
    // The last two characters before the current one, for one-letter abbreviations.
    let mut prev: [Option<char>; 2] = [None, None];
    while let Some((i, c)) = chars.next() {
        let next = chars.peek().map(|(_, n)| *n);
        let end = match c {
            '!' | '?' | '।' | '॥' | '\n' | '\r' | '\u{2028}' | '\u{2029}' | '！' | '？' | '。' => {
                true
            }
            '.' | '．' => {
                let spaced = next.is_none_or(char::is_whitespace);
                // `O.T.P.`, `e.g.`: a single letter right before, itself after a dot, a space
                // or the start.
                let abbreviation = prev[0].is_some_and(char::is_alphabetic)
                    && prev[1].is_none_or(|p| p == '.' || p.is_whitespace());
                spaced && !abbreviation
            }
            _ => false,
        };
        if end {
            ends.push(i + c.len_utf8());
        }
        prev = [Some(c), prev[0]];
    }
    ends
}

/// The byte offset `n` characters before `at` (or 0).
fn back_chars(text: &str, at: usize, n: usize) -> usize {
    text[..at]
        .char_indices()
        .rev()
        .nth(n.saturating_sub(1))
        .map_or(0, |(i, _)| i)
}

/// The byte offset `n` characters after `at` (or the end).
fn forward_chars(text: &str, at: usize, n: usize) -> usize {
    text[at..]
        .char_indices()
        .nth(n)
        .map_or(text.len(), |(i, _)| at + i)
}

/// The word (letters only) that ends right before `at`, skipping white space and at most one
/// punctuation mark, lower-cased ASCII or as it is.
pub(crate) fn word_before(text: &str, at: usize) -> &str {
    let head = text[..at].trim_end_matches(|c: char| c.is_whitespace() || c == ',' || c == ':');
    let start = head
        .char_indices()
        .rev()
        .take_while(|(_, c)| crate::text::is_letter(*c) || is_bengali_sign(*c))
        .last()
        .map_or(head.len(), |(i, _)| i);
    &head[start..]
}

/// The word (letters only) that starts right after `at`, skipping white space and commas.
pub(crate) fn word_after(text: &str, at: usize) -> &str {
    let tail = text[at..].trim_start_matches(|c: char| c.is_whitespace() || c == ',');
    let end = tail
        .char_indices()
        .find(|(_, c)| !(crate::text::is_letter(*c) || is_bengali_sign(*c)))
        .map_or(tail.len(), |(i, _)| i);
    &tail[..end]
}

fn is_bengali_sign(c: char) -> bool {
    ('\u{0981}'..='\u{0983}').contains(&c) || ('\u{09BC}'..='\u{09D7}').contains(&c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_vocabulary_builds() {
        assert!(vocabulary().is_some_and(|v| v.patterns.len() > 100));
    }

    #[test]
    fn sentences_end_where_they_should() {
        let text = "Your O.T.P. is 483920. Do not share it! e.g. this\nnext। শেষ";
        let ends = sentence_ends(text);
        let pieces: Vec<&str> = std::iter::once(0)
            .chain(ends.iter().copied())
            .zip(ends.iter().copied().chain([text.len()]))
            .map(|(a, b)| text[a..b].trim())
            .collect();
        assert_eq!(
            pieces,
            [
                "Your O.T.P. is 483920.",
                "Do not share it!",
                "e.g. this",
                "next।",
                "শেষ"
            ]
        );
    }

    #[test]
    fn credential_words_before_after_and_far() {
        for (text, number, want) in [
            ("Your OTP is 483920.", "483920", Some(Class::Otp)),
            (
                "483920 is your OTP. Do not share it.",
                "483920",
                Some(Class::Otp),
            ),
            (
                "Your OTP, which you must never share with anyone at all, is 483920.",
                "483920",
                Some(Class::Otp),
            ),
            ("Your O.T.P. is 483920.", "483920", Some(Class::Otp)),
            ("Your o t p is 483920.", "483920", Some(Class::Otp)),
            ("Your MPIN is 4821.", "4821", Some(Class::Pin)),
            (
                "আপনার ওটিপি কাউকে বলবেন না, এটি হলো ৪৮৩৯২০",
                "৪৮৩৯২০",
                Some(Class::Otp),
            ),
            (
                "Your one-time password is 483920",
                "483920",
                Some(Class::Otp),
            ),
            ("Use code 483920 to log in", "483920", Some(Class::Otp)),
            ("The error code 5001 means retry", "5001", None),
            ("Your OTP was sent. The fee is 5000", "5000", None),
            ("Pinterest 483920", "483920", None),
        ] {
            let w = Words::new(text);
            let s = text.find(number).unwrap_or(0);
            assert_eq!(w.credential(s, s + number.len()), want, "{text:?}");
        }
    }

    #[test]
    fn kind_and_claim_words() {
        for (text, number, kind, claim) in [
            (
                "Your account number 123456789012",
                "123456789012",
                Some(Class::Account),
                Some(Class::Account),
            ),
            (
                "অ্যাকাউন্ট নম্বর ১২৩৪৫৬৭৮৯০১২",
                "১২৩৪৫৬৭৮৯০১২",
                Some(Class::Account),
                Some(Class::Account),
            ),
            (
                "Enter your PIN to pay Tk 5000",
                "5000",
                None,
                Some(Class::Money),
            ),
            (
                "send 5000 taka with your PIN",
                "5000",
                None,
                Some(Class::Money),
            ),
            (
                "Your card ending 4821 needs a PIN",
                "4821",
                Some(Class::Card),
                Some(Class::Card),
            ),
            (
                "NID: 1990123456789",
                "1990123456789",
                Some(Class::Nid),
                Some(Class::Nid),
            ),
        ] {
            let w = Words::new(text);
            let s = text.find(number).unwrap_or(0);
            let e = s + number.len();
            assert_eq!((w.kind(s, e), w.claim(s, e)), (kind, claim), "{text:?}");
        }
    }

    #[test]
    fn neighbouring_words() {
        assert_eq!(word_before("since 2025", 6), "since");
        assert_eq!(word_before("in May, 2025", 8), "May");
        assert_eq!(word_after("2025 সালে", 4), "সালে");
    }
}

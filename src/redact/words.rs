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

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, MatchKind};
use std::sync::OnceLock;

/// How far before a number (in characters, within its sentence) a credential word may stand.
pub(crate) const CREDENTIAL_REACH_BEFORE: usize = 120;
/// How far after a number a credential word may stand ("483920 is your OTP").
pub(crate) const CREDENTIAL_REACH_AFTER: usize = 80;
/// How far before a number its kind word may stand ("account number 1234…").
const KIND_REACH_BEFORE: usize = 48;
/// How far after a number its kind word may stand ("1234… is your account number").
pub(crate) const KIND_REACH_AFTER: usize = 32;
/// A word this close before a number claims it for its own kind: "card ending 4821", "Tk 5000"
/// (and money right after it: "5000 taka").
const CLAIM_BEFORE: usize = 16;

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
/// match at the start of a word (Bangla adds case endings: `অ্যাকাউন্টের`, `ফোনে`).
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

struct Vocabulary {
    /// On the text as written (ASCII case ignored), and on its skeleton.
    raw: AhoCorasick,
    skeleton: AhoCorasick,
    /// Per pattern of each: its class, and whether it must end a word (ASCII) or may take an
    /// ending (Bangla).
    raw_patterns: Vec<(Class, bool)>,
    skeleton_patterns: Vec<(Class, bool)>,
}

/// The vocabulary's matchers, built at first use (`None` only if they could not be built,
/// which `the_vocabulary_builds` rules out).
fn vocabulary() -> Option<&'static Vocabulary> {
    static V: OnceLock<Option<Vocabulary>> = OnceLock::new();
    V.get_or_init(build_vocabulary).as_ref()
}

type PatternSet = (Vec<String>, Vec<(Class, bool)>);

fn build_vocabulary() -> Option<Vocabulary> {
    let mut raw: PatternSet = (Vec::new(), Vec::new());
    let mut skel: PatternSet = (Vec::new(), Vec::new());
    let add = |set: &mut PatternSet, text: String, class: Class| {
        if !text.is_empty() && !set.0.contains(&text) {
            set.1.push((class, text.is_ascii()));
            set.0.push(text);
        }
    };
    let composed = credential_phrases();
    let listed = VOCABULARY
        .iter()
        .flat_map(|(class, words)| words.iter().map(move |w| (*class, w.to_string())));
    for (class, w) in listed.chain(composed) {
        for v in canonical_variants(&w) {
            add(
                &mut skel,
                crate::text::skeleton(&v).as_str().to_string(),
                class,
            );
            add(&mut raw, v, class);
        }
    }
    // A DFA, not the NFA the builder picks for this many patterns: the raw matcher reads
    // every answer whole, and a DFA's one table look-up per byte is several times faster than
    // following the NFA's failure links. Built once; a few hundred kilobytes.
    let build = |patterns: &[String]| {
        AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::LeftmostLongest)
            .kind(Some(AhoCorasickKind::DFA))
            .build(patterns)
            .ok()
    };
    Some(Vocabulary {
        raw: build(&raw.0)?,
        skeleton: build(&skel.0)?,
        raw_patterns: raw.1,
        skeleton_patterns: skel.1,
    })
}

/// Credentials named by what they do rather than by a fixed word: a qualifier that only a
/// secret takes (verification, security, authorisation, one-time, login, 2FA...) before any
/// noun a secret is called by (code, number, key, token, PIN, password, digits), in English
/// and Bangla, and the acronyms banks use for them (TAC, TAN, CVV...). Qualifiers that also
/// name references are left out on purpose: a "confirmation number" or a "transaction
/// number" is a receipt, not a secret.
fn credential_phrases() -> impl Iterator<Item = (Class, String)> {
    const QUALIFIERS: &[&str] = &[
        "verification",
        "security",
        "authentication",
        "authorisation",
        "authorization",
        "transaction authorisation",
        "transaction authorization",
        "transaction authentication",
        "transaction signing",
        "secret",
        "one-time",
        "one time",
        "login",
        "log-in",
        "sign-in",
        "signin",
        "2fa",
        "two-factor",
        "two factor",
        "mfa",
        "otp",
        "sms otp",
        "reset",
    ];
    const NOUNS: &[&str] = &[
        "code",
        "codes",
        "number",
        "numbers",
        "no",
        "key",
        "token",
        "pin",
        "passcode",
        "password",
        "digits",
        "passphrase",
    ];
    const ACRONYMS: &[&str] = &[
        "tac", "tan", "totp", "hotp", "cvv", "cvv2", "cvc", "cvc2", "cav",
    ];
    const BN_QUALIFIERS: &[&str] = &[
        "যাচাইকরণ",
        "যাচাই",
        "ভেরিফিকেশন",
        "নিরাপত্তা",
        "সিকিউরিটি",
        "গোপন",
        "লগইন",
        "ওয়ান টাইম",
        "এককালীন",
        "একবারের",
        "অথেনটিকেশন",
    ];
    const BN_NOUNS: &[&str] = &["কোড", "নম্বর", "নাম্বার", "সংখ্যা", "পিন", "পাসওয়ার্ড", "কী"];
    let en = QUALIFIERS
        .iter()
        .flat_map(|q| NOUNS.iter().map(move |n| format!("{q} {n}")));
    let bn = BN_QUALIFIERS
        .iter()
        .flat_map(|q| BN_NOUNS.iter().map(move |n| format!("{q} {n}")));
    let acronyms = ACRONYMS.iter().map(|a| a.to_string());
    en.chain(bn).chain(acronyms).map(|p| (Class::Otp, p))
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
    /// The words found, on the text as written and on the skeleton of the windows read so far.
    hits: std::cell::RefCell<Vec<Hit>>,
    /// The windows whose skeleton was read (or needed no reading).
    read: std::cell::RefCell<Vec<(usize, usize)>>,
    /// Byte offsets where a sentence ends (just after its terminator), sorted.
    ends: Vec<usize>,
}

impl<'t> Words<'t> {
    pub(crate) fn new(text: &'t str) -> Self {
        let mut hits = Vec::new();
        if let Some(v) = vocabulary() {
            // Leftmost-longest: "one time password" is one word, not "password" too.
            for m in v.raw.find_iter(text) {
                let (class, whole_word) = v.raw_patterns[m.pattern().as_usize()];
                if bounded(text, m.start(), m.end(), whole_word, class) {
                    hits.push(Hit {
                        start: m.start(),
                        end: m.end(),
                        class,
                    });
                }
            }
        }
        Words {
            text,
            hits: std::cell::RefCell::new(hits),
            read: std::cell::RefCell::new(Vec::new()),
            ends: sentence_ends(text),
        }
    }

    /// Read the skeleton of the sentence window around a number for disguised words
    /// ("O.T.P.", "P I N", look-alike letters): once per window, and only when the window
    /// holds something the skeleton reads differently (a letter outside ASCII and Bengali, or
    /// letters standing alone in a row). The skeleton of a whole answer would cost more than
    /// the output screen's budget; a sentence's costs a few hundred nanoseconds.
    pub(crate) fn read_skeleton(&self, start: usize, end: usize) {
        let (lo, hi) = self.window(
            start,
            end,
            CREDENTIAL_REACH_BEFORE + 8,
            CREDENTIAL_REACH_AFTER + 8,
        );
        if self.read.borrow().contains(&(lo, hi)) {
            return;
        }
        self.read.borrow_mut().push((lo, hi));
        let window = &self.text[lo..hi];
        let Some(v) = vocabulary().filter(|_| disguise_hint(window)) else {
            return;
        };
        let sk = crate::text::skeleton(window);
        if !sk.rewritten() {
            return;
        }
        let st = sk.as_str();
        let mut hits = self.hits.borrow_mut();
        for m in v.skeleton.find_iter(st) {
            let (class, whole_word) = v.skeleton_patterns[m.pattern().as_usize()];
            let starts = m.start() == 0 || st.as_bytes()[m.start() - 1] == b' ';
            let ends = !whole_word || m.end() == st.len() || st.as_bytes()[m.end()] == b' ';
            if starts && ends {
                let r = sk.source_range(window, m.start()..m.end());
                hits.push(Hit {
                    start: lo + r.start,
                    end: lo + r.end,
                    class,
                });
            }
        }
    }

    /// The reach around `start..end`: `before` characters before and `after` after, within
    /// the sentence. The characters are counted inside the sentence only, so a short sentence
    /// costs its own length, not the reach's.
    fn window(&self, start: usize, end: usize, before: usize, after: usize) -> (usize, usize) {
        let (first, last) = (self.sentence_start(start), self.sentence_end(end));
        (
            first + back_chars(&self.text[first..start], start - first, before),
            end + forward_chars(&self.text[end..last], 0, after),
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

    /// Each hit in the sentence of `start..end` within the reaches, with its distance in bytes
    /// from the number, in the order the hits were found (no list is built: every number asks
    /// several times).
    fn near(
        &self,
        start: usize,
        end: usize,
        before: usize,
        after: usize,
        mut each: impl FnMut(Hit, usize),
    ) {
        let (lo, hi) = self.window(start, end, before, after);
        let (first, last) = (self.sentence_start(start), self.sentence_end(end));
        // A word counts when it ends within the reach before, or starts within it after.
        for h in self.hits.borrow().iter() {
            if h.end <= start && h.end > lo && h.start >= first {
                each(*h, start - h.end);
            } else if h.start >= end && h.start < hi && h.end <= last {
                each(*h, h.start - end);
            }
        }
    }

    /// The credential a credential word anywhere in the number's sentence (within reach) makes
    /// of it: the nearest such word's. "code" counts unless a word right before it names
    /// another kind of code ("error code", "promo code").
    pub(crate) fn credential(&self, start: usize, end: usize) -> Option<Class> {
        let mut best: Option<(usize, usize, Class)> = None;
        let reach = (CREDENTIAL_REACH_BEFORE, CREDENTIAL_REACH_AFTER);
        self.near(start, end, reach.0, reach.1, |hit, distance| {
            if !hit.class.is_credential() || (hit.class == Class::Code && self.qualified(hit)) {
                return;
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
        });
        best.map(|b| b.2)
    }

    /// A word of another kind right next to the number, and nearer than any credential word
    /// ("card ending 4821", "Tk 5000", "call 16247"), or money right after it ("5000 taka"):
    /// the number is that kind's.
    pub(crate) fn claim(&self, start: usize, end: usize) -> Option<Class> {
        let before = self
            .nearest(start, end, CLAIM_BEFORE, 0, |c| c != Class::OtherCode)
            .filter(|c| !c.is_credential());
        before.or_else(|| {
            let next = self.text[end..].trim_start();
            let at = self.text.len() - next.len();
            (at - end <= 2)
                .then(|| {
                    self.hits
                        .borrow()
                        .iter()
                        .any(|h| h.start == at && h.class == Class::Money)
                })
                .filter(|m| *m)
                .map(|_| Class::Money)
        })
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

    /// The kind the nearest kind word before the number gives it ("NID 8801 …": a label
    /// written first; "call 01711 123456 or NID …" does not make the phone an NID).
    pub(crate) fn kind_before(&self, start: usize, end: usize) -> Option<Class> {
        self.nearest(start, end, KIND_REACH_BEFORE, 0, |c| {
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
        // Nearest; at the same distance the longer word ("credit card" over "card"); at the
        // same distance and length the first found.
        let mut best: Option<((usize, usize), Class)> = None;
        self.near(start, end, before, after, |h, d| {
            let key = (d, usize::MAX - (h.end - h.start));
            if wanted(h.class) && best.is_none_or(|b| key < b.0) {
                best = Some((key, h.class));
            }
        });
        best.map(|b| b.1)
    }

    /// A "code" hit with a word naming another kind of code right before it.
    fn qualified(&self, code: Hit) -> bool {
        self.hits.borrow().iter().any(|h| {
            h.class == Class::OtherCode
                && h.end <= code.start
                && code.start - h.end <= 2
                && self.text[h.end..code.start]
                    .chars()
                    .all(|c| c == ' ' || c == '-')
        })
    }
}

/// Whether a window holds something its skeleton reads differently from its lower case: a
/// letter outside ASCII and Bengali (a look-alike, a full-width or mathematical letter), or two
/// or more letters standing alone in a row (`O.T.P.`, `P I N`, `o-t-p`).
fn disguise_hint(window: &str) -> bool {
    let mut singles = 0;
    let mut prev_letter = false;
    let mut run_len = 0;
    for c in window.chars() {
        if !c.is_ascii() && !crate::text::is_bengali_block(c) && crate::text::is_alphanumeric(c) {
            return true;
        }
        if c.is_ascii_alphabetic() {
            run_len += 1;
            prev_letter = true;
            continue;
        }
        if prev_letter {
            if run_len == 1 {
                singles += 1;
                if singles >= 2 {
                    return true;
                }
            } else {
                singles = 0;
            }
        }
        prev_letter = false;
        run_len = 0;
    }
    false
}

/// Whether a match is a word of its own: nothing alphanumeric right before it, and for ASCII
/// words nothing alphanumeric right after it either. Symbols (`৳`, `$`) need neither.
fn bounded(text: &str, start: usize, end: usize, whole_word: bool, class: Class) -> bool {
    let first = text[start..end].chars().next();
    if first.is_some_and(|c| !crate::text::is_alphanumeric(c)) {
        return true;
    }
    let before = text[..start].chars().next_back();
    let after = text[end..].chars().next();
    // A currency may be written against its amount: "Tk5000".
    let after_ok = |c: char| {
        !crate::text::is_alphanumeric(c)
            || (class == Class::Money && super::digits::digit_char(c).is_some())
    };
    // A PIN named by a one-letter prefix, the way services brand theirs: `ePIN`, `e-PIN`,
    // `mPIN`, `tPIN`, `iPIN` (the letter, a hyphen or not, at the start of the word).
    // Written so (`PIN` in capitals, or a hyphen), not a word like "spin".
    let branded_pin = class == Class::Pin && {
        let hyphen = text[..start].ends_with('-');
        let head = text[..start].strip_suffix('-').unwrap_or(&text[..start]);
        let mut back = head.chars().rev();
        let capitals = text[start..end].chars().all(|c| c.is_ascii_uppercase());
        (hyphen || capitals)
            && back.next().is_some_and(|c| c.is_ascii_alphabetic())
            && !back.next().is_some_and(crate::text::is_alphanumeric)
    };
    (branded_pin || !before.is_some_and(crate::text::is_alphanumeric))
        && (!whole_word || after.is_none_or(after_ok))
}

/// Abbreviations whose full stop does not end a sentence when something follows it.
const ABBREVIATIONS: &[&str] = &[
    "no", "nos", "nr", "num", "acc", "acct", "tel", "mob", "ph", "ref", "approx", "mr", "mrs",
    "ms", "dr", "st", "vs", "eg", "ie", "id", "ac", "tk", "rs", "dept", "govt", "ltd",
];

/// The bytes a sentence's terminator can start with (the first look of [`sentence_ends`]).
const TERMINATOR_LEAD: [bool; 256] = {
    let mut t = [false; 256];
    let leads = [b'!', b'?', b'\n', b'\r', b'.', 0xE0, 0xE2, 0xE3, 0xEF];
    let mut k = 0;
    while k < leads.len() {
        t[leads[k] as usize] = true;
        k += 1;
    }
    t
};

/// Where the sentences of `text` end.
pub(crate) fn sentence_ends(text: &str) -> Vec<usize> {
    let bytes = text.as_bytes();
    let mut ends = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        // The cheap look first: most bytes are ASCII letters, spaces and digits (skipped to
        // the next byte a terminator can start with), or Bengali characters other than the
        // dandas (`E0 A6 xx`, `E0 A7 xx`: three bytes at once).
        let Some(k) = bytes[i..]
            .iter()
            .position(|b| TERMINATOR_LEAD[usize::from(*b)])
        else {
            break;
        };
        i += k;
        match bytes[i] {
            0xE0 if bytes.get(i + 1) != Some(&0xA5) => {
                i += 3;
                continue;
            }
            b'!' | b'?' | b'\n' | b'\r' | b'.' | 0xE0 | 0xE2 | 0xE3 | 0xEF => {}
            _ => {
                i += 1;
                continue;
            }
        }
        // Terminators: ASCII `.!?` and line breaks; `।` `॥` (E0 A5 A4/A5), `！` `？` `．`
        // (EF BC 81/9F/8E), `。` (E3 80 82), the line and paragraph separators (E2 80 A8/A9).
        let (len, full_stop) = match bytes[i] {
            b'!' | b'?' | b'\n' | b'\r' => (1, false),
            b'.' => (1, true),
            0xE0 if bytes.get(i + 1) == Some(&0xA5)
                && matches!(bytes.get(i + 2), Some(0xA4 | 0xA5)) =>
            {
                (3, false)
            }
            0xEF if bytes.get(i + 1) == Some(&0xBC)
                && matches!(bytes.get(i + 2), Some(0x81 | 0x9F)) =>
            {
                (3, false)
            }
            0xEF if bytes.get(i + 1) == Some(&0xBC) && bytes.get(i + 2) == Some(&0x8E) => (3, true),
            0xE3 if bytes.get(i + 1) == Some(&0x80) && bytes.get(i + 2) == Some(&0x82) => {
                (3, false)
            }
            0xE2 if bytes.get(i + 1) == Some(&0x80)
                && matches!(bytes.get(i + 2), Some(0xA8 | 0xA9)) =>
            {
                (3, false)
            }
            _ => {
                i += 1;
                continue;
            }
        };
        let end = i + len;
        if !full_stop || full_stop_ends(text, i, end) {
            ends.push(end);
        }
        i = end;
    }
    ends
}

/// Whether the full stop at `i..end` ends a sentence: white space (or the end) after it, and
/// neither a one-letter initial (`O.T.P. is`, `e.g. the`) nor an abbreviation that introduces
/// what follows (`A/C no. 2050…`, `Tel. 0171…`, `Mr. Rahim`) before it.
fn full_stop_ends(text: &str, i: usize, end: usize) -> bool {
    if !text[end..].chars().next().is_none_or(char::is_whitespace) {
        return false;
    }
    let mut before = text[..i].chars().rev();
    let (p0, p1) = (before.next(), before.next());
    let initial =
        p0.is_some_and(char::is_alphabetic) && p1.is_none_or(|p| p == '.' || p.is_whitespace());
    if initial {
        return false;
    }
    let word = word_before(text, i);
    let after = text[end..].trim_start().chars().next();
    let introduces = ABBREVIATIONS.iter().any(|a| a.eq_ignore_ascii_case(word))
        && after.is_some_and(|c| {
            c.is_numeric() || c.is_lowercase() || c.is_uppercase() && word.len() <= 3
        });
    !introduces
}

/// The byte offset `n` characters before `at` (or 0).
fn back_chars(text: &str, at: usize, n: usize) -> usize {
    // Where the `n` bytes before `at` are ASCII, they are the `n` characters.
    if n >= 1 && at >= n && text.as_bytes()[at - n..at].is_ascii() {
        return at - n;
    }
    text[..at]
        .char_indices()
        .rev()
        .nth(n.saturating_sub(1))
        .map_or(0, |(i, _)| i)
}

/// The byte offset `n` characters after `at` (or the end).
fn forward_chars(text: &str, at: usize, n: usize) -> usize {
    // Where the `n` bytes after `at` (or all there are) are ASCII, they are the characters.
    let ascii_end = at.saturating_add(n).min(text.len());
    if text.as_bytes()[at..ascii_end].is_ascii() {
        return ascii_end;
    }
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
        assert!(vocabulary().is_some_and(|v| v.raw_patterns.len() > 100));
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
            ("Your ePIN is 9035.", "9035", Some(Class::Pin)),
            ("Your e-pin is 9035.", "9035", Some(Class::Pin)),
            ("Give it a spin 9035 times", "9035", None),
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
            w.read_skeleton(s, s + number.len());
            assert_eq!(w.credential(s, s + number.len()), want, "{text:?}");
        }
    }

    /// Every composed credential name makes a 4–8 digit run in its sentence a credential,
    /// before or after it and in either digit system; a receipt's number stays what it is.
    #[test]
    fn composed_credential_names_make_a_number_a_credential() {
        let mut n = 0;
        for (i, (_, name)) in credential_phrases().enumerate() {
            let (digits, bn) = if i % 2 == 0 {
                ("482913", false)
            } else {
                ("৪৮২৯১৩", true)
            };
            let upper = if i % 3 == 0 {
                name.to_uppercase()
            } else {
                name.clone()
            };
            for text in [
                format!("Your {upper} is {digits}. Never share it."),
                format!("{digits} is your {upper}; it expires in 5 minutes."),
            ] {
                let w = Words::new(&text);
                let s = text.find(digits).unwrap_or(0);
                w.read_skeleton(s, s + digits.len());
                let got = w.credential(s, s + digits.len());
                assert!(
                    got.is_some_and(Class::is_credential),
                    "{text:?} bn={bn}: {got:?}"
                );
                n += 1;
            }
        }
        assert!(n > 500, "{n}");
        for text in [
            "Your confirmation number is 482913.",
            "Your transaction number is 482913.",
            "Your reference number is 482913.",
            "The tracking number 482913 is on the parcel.",
        ] {
            let w = Words::new(text);
            let s = text.find("482913").unwrap_or(0);
            w.read_skeleton(s, s + 6);
            assert_eq!(w.credential(s, s + 6), None, "{text:?}");
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

    /// The disguise hint, its letters and digits read with the fast look-up (ASCII, Bengali,
    /// the dandas), answers as the standard library's look-up does: ASCII, Bengali, dandas,
    /// other scripts, letters standing alone.
    #[test]
    fn the_disguise_hint_agrees_with_the_standard_lookup() {
        use proptest::prelude::*;
        fn hint_by_chars(window: &str) -> bool {
            let mut singles = 0;
            let mut prev_letter = false;
            let mut run_len = 0;
            for c in window.chars() {
                if !c.is_ascii() && !crate::text::is_bengali_block(c) && c.is_alphanumeric() {
                    return true;
                }
                if c.is_ascii_alphabetic() {
                    run_len += 1;
                    prev_letter = true;
                    continue;
                }
                if prev_letter {
                    if run_len == 1 {
                        singles += 1;
                        if singles >= 2 {
                            return true;
                        }
                    } else {
                        singles = 0;
                    }
                }
                prev_letter = false;
                run_len = 0;
            }
            false
        }
        let pieces = prop::sample::select(vec![
            "a", "O", "TP", "word", " ", ".", ". ", "!", "? ", "\n", "আ", "০", "।", "॥ ", "।", "а",
            "é", "😀", "—", "．", "。", "\u{2028}", "！", "e.g. ", "No. ", "3.5",
        ]);
        proptest!(|(parts in prop::collection::vec(pieces, 0..30))| {
            let text: String = parts.concat();
            prop_assert_eq!(disguise_hint(&text), hint_by_chars(&text), "{:?}", text);
        });
    }

    /// The ASCII short cuts of `back_chars` and `forward_chars` give what walking the
    /// characters gives, at every offset and reach of mixed ASCII and Bangla text.
    #[test]
    fn char_reaches_agree_with_walking_the_characters() {
        let text = "Your OTP is 483920. আপনার ওটিপি ৪৮৩৯২০, ok? a\u{85}b ৳ 500";
        for (at, _) in text.char_indices().chain([(text.len(), ' ')]) {
            for n in 0..text.len() + 2 {
                let back = text[..at]
                    .char_indices()
                    .rev()
                    .nth(n.saturating_sub(1))
                    .map_or(0, |(i, _)| i);
                let forward = text[at..]
                    .char_indices()
                    .nth(n)
                    .map_or(text.len(), |(i, _)| at + i);
                assert_eq!(back_chars(text, at, n), back, "back {at} {n}");
                assert_eq!(forward_chars(text, at, n), forward, "forward {at} {n}");
            }
        }
    }

    #[test]
    fn neighbouring_words() {
        assert_eq!(word_before("since 2025", 6), "since");
        assert_eq!(word_before("in May, 2025", 8), "May");
        assert_eq!(word_after("2025 সালে", 4), "সালে");
    }
}

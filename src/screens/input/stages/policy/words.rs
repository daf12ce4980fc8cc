//! The words a rule is matched on, and the detectors: word positions a rule can require that no
//! list of terms can name ("a record number", "someone's").

use crate::text::Skeleton;
use serde::Deserialize;

/// Words before an English action that negate it.
const NEGATIONS_BEFORE: &[&str] = &[
    "not",
    "never",
    "don't",
    "dont",
    "doesn't",
    "didn't",
    "can't",
    "cannot",
    "won't",
    "shouldn't",
    "mustn't",
    "no",
    "without",
    // The skeleton drops apostrophes inside words.
    "doesnt",
    "didnt",
    "cant",
    "wont",
    "shouldnt",
    "mustnt",
];
/// Words after a Bangla verb that negate it ("মুছবেন না", "করা যাবে না").
const NEGATIONS_AFTER: &[&str] = &["না", "নয়", "নয়", "নাই", "নেই"];
/// How far a negation may stand from its action, in words.
const NEGATION_REACH: usize = 2;
/// How far before a noun of an act a word of seeking reads ([`Words::sought`]): "for the
/// checker's final approval".
const SOUGHT_REACH: usize = 4;
/// Words that make the act after them a thing asked for ([`Words::sought`]).
const SOUGHT_BEFORE: &[&str] = &[
    "for",
    "seek",
    "seeking",
    "request",
    "requesting",
    "await",
    "awaiting",
    "pending",
    "get",
    "getting",
    "obtain",
    "obtaining",
];
/// After an act in the Bangla genitive: "for" and "waiting for" ("অনুমোদনের জন্য").
const SOUGHT_AFTER_GENITIVE_BN: &[&str] = &["জন্য", "জন্যে", "অপেক্ষায়", "অপেক্ষা"];
/// A verb of asking after the act ("অনুমোদন চেয়ে", "অনুমোদন চাইতে"); by prefix.
const SOUGHT_AFTER_BN: &[&str] = &["চেয়ে", "চাই", "চাও", "নিতে", "নেওয়ার", "নেয়ার"];

/// Words that point back at something the question named before: "It's about the logs. The
/// audit ones. Make *them* disappear", "প্রথম শব্দ: অডিট। দ্বিতীয় শব্দ: লগ। দুই শব্দের *জিনিসটা* মুছে দিন".
const REFERENCES: &[&str] = &[
    "them",
    "it",
    "those",
    "these",
    "ones",
    "thing",
    "things",
    "stuff",
    "everything",
    "এগুলো",
    "ওগুলো",
    "সেগুলো",
    "এগুলা",
    "ওগুলা",
    "ওটা",
    "সেটা",
    "এটা",
    "ওটি",
    "সেটি",
    "এটি",
    "জিনিসটা",
    "জিনিসটি",
    "জিনিসগুলো",
    "সবগুলো",
    "সব",
];
/// How far a reference may stand before its action (Bangla: "ওগুলো মুছে দিন"; English "make
/// them disappear") and after it ("delete the two-word thing"), in words.
const REFERENCE_BEFORE: usize = 2;
const REFERENCE_AFTER: usize = 4;

/// How far before a possessive its `my` may stand: "my brother-in-law's" is four words.
const MY_REACH: usize = 3;
/// Shortest run of one-character words read as a word spelled out (the skeleton's rule).
const MIN_SPELLED_OUT: usize = 3;
/// Shortest run of digits that can name a record (a wallet, account, card, customer or phone
/// number): "customer 7781", "account 1234", "01711-123456".
const MIN_RECORD_DIGITS: usize = 4;

/// Possessives that name no person: contractions ("what's" is "what is"), times ("today's
/// transactions") and the product's own things ("the app's PIN screen"). Matched on the word
/// before the `'s`.
const NOT_SOMEONE: &[&str] = &[
    // contractions of "is" / "has" / "us"
    "it",
    "that",
    "what",
    "whats",
    "there",
    "here",
    "let",
    "he",
    "she",
    "who",
    "where",
    "how",
    "when",
    "why",
    "this",
    "one",
    "everything",
    "nothing",
    "something",
    "name", // times
    "today",
    "tonight",
    "yesterday",
    "tomorrow",
    "day",
    "week",
    "month",
    "year",
    "night",
    "morning",
    "evening",
    "hour",
    "minute",
    "weekend",
    "quarter",
    // months and days
    "last",
    "next",
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
    "jan",
    "feb",
    "mar",
    "apr",
    "jun",
    "jul",
    "aug",
    "sep",
    "sept",
    "oct",
    "nov",
    "dec",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
    "eid",
    // the product's own things
    "bank",
    "app",
    "wallet",
    "account",
    "card",
    "phone",
    "number",
    "system",
    "company",
    "branch",
    "government",
    "country",
    "agent",
    "merchant",
    "shop",
    "store",
    "office",
    "team",
    "world",
    "service",
];
/// Words that say a number is an amount, not a record: "5000 taka", "tk 25000".
const CURRENCY: &[&str] = &[
    "taka",
    "tk",
    "bdt",
    "lakh",
    "lac",
    "lakhs",
    "crore",
    "crores",
    "thousand",
    "hajar",
    "rs",
    "usd",
    "dollar",
    "dollars",
    "টাকা",
    "টাকার",
    "লাখ",
    "লক্ষ",
    "কোটি",
    "হাজার",
];
/// Standalone Bangla genitive endings written after a Latin word in mixed text ("customer এর
/// OTP", "customer-এর"), the plural's too ("customer-দের").
const BANGLA_GENITIVE: &[&str] = &["এর", "র", "ের", "দের", "েদের"];

/// Bengali words in the genitive that name no holder ([`Detector::Genitive`]): the asker's
/// and the addressee's own ("আমার", "আপনার"), questions ("কার"), words that end as a genitive
/// does without being one ("হাজার", "দরকার", "ব্যবহার"), times ("মাসের", "আগের") and the
/// product's own things ("ওয়ালেটের", "নম্বরের").
const NOT_HOLDER_BN: &[&str] = &[
    "আমার",
    "আমাদের",
    "নিজের",
    "নিজেদের",
    "মোর",
    "মোদের",
    "আপনার",
    "আপনাদের",
    "তোমার",
    "তোমাদের",
    "তোর",
    "কার",
    "কাদের",
    "যার",
    "যাদের",
    "এর",
    "আর",
    "পর",
    "উপর",
    "ওপর",
    "ভিতর",
    "ভেতর",
    "হাজার",
    "টাকার",
    "লাখের",
    "হাজারের",
    "কোটির",
    "আবার",
    "এবার",
    "বার",
    "একবার",
    "দরকার",
    "সরকার",
    "ব্যবহার",
    "বাজার",
    "পরিবার",
    "প্রচার",
    "অধিকার",
    "উপহার",
    "বিচার",
    "আজকের",
    "কালকের",
    "গতকালের",
    "মাসের",
    "সপ্তাহের",
    "দিনের",
    "বছরের",
    "রাতের",
    "সকালের",
    "বিকালের",
    "সন্ধ্যার",
    "আগের",
    "পরের",
    "সামনের",
    "প্রতিদিনের",
    "শেষের",
    "ব্যাংকের",
    "অ্যাপের",
    "ওয়ালেটের",
    "অ্যাকাউন্টের",
    "একাউন্টের",
    "নম্বরের",
    "ফোনের",
    "সিমের",
    "বিকাশের",
    "নগদের",
    "রকেটের",
    "কোম্পানির",
    "এজেন্টের",
    "দোকানের",
    "মার্চেন্টের",
    "লেনদেনের",
    "টাকাটার",
    "সবকিছুর",
    "কিছুর",
    "এটার",
    "ওটার",
    "সেটার",
    "এটির",
    "সেটির",
];
/// Postpositions after a genitive: "বাবার জন্য" (for father), "বাবার কাছ থেকে" (from father, to
/// the asker): the genitive is no holder of what follows.
const POSTPOSITIONS_BN: &[&str] = &[
    "জন্য",
    "জন্যে",
    "কাছে",
    "কাছ",
    "সাথে",
    "সঙ্গে",
    "মধ্যে",
    "মতো",
    "মত",
    "দিকে",
    "পক্ষে",
    "বদলে",
    "উপর",
    "ওপর",
    "পরে",
    "আগে",
    "পর",
];
/// Bengali vowel signs: a noun ending in a vowel takes the genitive as a bare "র" ("বাবার").
const VOWEL_SIGNS_BN: &[char] = &[
    '\u{09BE}', '\u{09BF}', '\u{09C0}', '\u{09C1}', '\u{09C2}', '\u{09C3}', '\u{09CB}', '\u{09CC}',
];
/// Words that make a Bangla "without" on their own ([`Detector::NotHaving`]).
const WITHOUT_BN: &[&str] = &[
    "ছাড়া",
    "ছাড়াই",
    "ছাড়াও",
    "বিনা",
    "ব্যতীত",
    "chara",
    "charai",
    "chhara",
    "chharai",
    "sara",
    "sarai",
];
/// A Bangla conjunctive participle, with or without its emphatic -ই: "মিলিয়ে", "চেয়েই". Not an
/// adverb of manner ("কীভাবে", "ঠিকভাবে": the -ভাবে words) nor a postposition ("সাথে", "আগে").
fn participle_bn(word: &str) -> bool {
    let w = word.strip_suffix('\u{0987}').unwrap_or(word);
    w.chars().count() > 1
        && w.ends_with('\u{09C7}')
        && !w.ends_with("ভাবে")
        && !listed(w, &POSTPOSITIONS)
}
/// Banglish negations before a participle ("na kore", "na dekhe").
const NOT_LATIN: &[&str] = &["na", "naa"];

/// Time nouns: what "next", "by", "within" and "until" put a thing off to
/// ([`Detector::Deferred`]).
const TIME_NOUNS: &[&str] = &[
    "day",
    "days",
    "week",
    "weeks",
    "month",
    "months",
    "year",
    "years",
    "weekend",
    "weekends",
    "time",
    "visit",
    "morning",
    "evening",
    "afternoon",
    "night",
    "tomorrow",
    "tonight",
    "hour",
    "hours",
    "quarter",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
    "january",
    "february",
    "march",
    "april",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
    "eid",
    "holiday",
    "holidays",
    "vacation",
    "puja",
    "ramadan",
    "ramzan",
    "end",
    "then",
    "noon",
    "later",
];
/// Events and returns a thing can wait for: "after Eid", "once he comes back".
const EVENTS: &[&str] = &[
    "eid", "holiday", "holidays", "vacation", "puja", "ramadan", "ramzan", "weekend", "lunch",
    "the", "his", "her", "their",
];
const SUBJECTS: &[&str] = &[
    "he", "she", "they", "we", "you", "customer", "client", "he's", "she's", "they're",
];
/// Coming back, arriving: what a subject does before a thing put off to it.
const RETURNS: &[&str] = &[
    "comes", "come", "coming", "back", "returns", "return", "returned", "arrives", "arrive",
    "lands", "travels", "visits",
];
/// Handing something over later: "he will *bring* the papers".
const HANDOVER: &[&str] = &[
    "bring", "submit", "send", "provide", "give", "upload", "drop", "come", "arrive", "show",
    "complete", "do", "hand", "share", "deliver", "email", "mail", "follow", "furnish", "produce",
];
/// Bangla words of a later time on their own.
const LATER_BN: &[&str] = &[
    "আগামী",
    "আগামীকাল",
    "পরশু",
    "পরে",
    "পরেই",
    "পরবর্তীতে",
    "পরবর্তী",
    "শীঘ্রই",
    "সামনের",
    "পরের",
    "এলে",
    "ফিরলে",
    "ফিরে",
    "ফেরার",
    "pore",
    "porei",
    "agami",
    "porer",
    "samner",
];
/// Bangla time nouns a deadline is made of: "শুক্রবারের মধ্যে", "দুই দিনের মধ্যে".
const TIME_STEMS_BN: &[&str] = &["দিন", "সপ্তাহ", "মাস", "বছর", "ঈদ", "তারিখ", "বার"];
/// Bangla verbs that hand something over in the future ("কাগজ দেবে", "এনআইডি আনবেন").
const HANDOVER_BN: &[&str] = &[
    "দেবে",
    "দেবেন",
    "দিবে",
    "দিবেন",
    "আনবে",
    "আনবেন",
    "আসবে",
    "পাঠাবে",
    "পাঠাবেন",
    "debe",
    "diben",
    "anbe",
];

/// A list of words as the folded question writes them (NFKC splits a nukta letter in two).
fn folded_list(list: &[&str]) -> Vec<String> {
    list.iter()
        .map(|w| crate::text::fold_for_matching(w))
        .collect()
}

static NOT_HOLDER: std::sync::LazyLock<Vec<String>> =
    std::sync::LazyLock::new(|| folded_list(NOT_HOLDER_BN));
static POSTPOSITIONS: std::sync::LazyLock<Vec<String>> =
    std::sync::LazyLock::new(|| folded_list(POSTPOSITIONS_BN));
static WITHOUT: std::sync::LazyLock<Vec<String>> =
    std::sync::LazyLock::new(|| folded_list(WITHOUT_BN));
static LATER: std::sync::LazyLock<Vec<String>> = std::sync::LazyLock::new(|| folded_list(LATER_BN));
static HANDOVER_LATER: std::sync::LazyLock<Vec<String>> =
    std::sync::LazyLock::new(|| folded_list(HANDOVER_BN));
static TIME_STEMS: std::sync::LazyLock<Vec<String>> =
    std::sync::LazyLock::new(|| folded_list(TIME_STEMS_BN));
static WITHIN_BN: std::sync::LazyLock<Vec<String>> =
    std::sync::LazyLock::new(|| folded_list(&["মধ্যে", "ভেতরে", "ভিতরে"]));

fn listed(w: &str, list: &[String]) -> bool {
    list.iter().any(|l| l == w)
}

fn is_bengali_word(w: &str) -> bool {
    w.chars().any(crate::text::is_bengali_block)
}

/// A detector: word positions found by a test on the words themselves, named `#name` in a rule.
/// The set is closed (an enum, as the stages are): a detector is code, with its own tests.
///
/// Two detectors read the request's `caller` ([`Callers`]): the numbers a question names are
/// found by the shared value finder ([`crate::redact::values`]: `01711-123456` and
/// `+880 1711 123456` are one phone number, Bengali digits are digits) and compared with the
/// caller's records in canonical form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
pub enum Detector {
    /// A number that names a record: four digits or more (ASCII or Bengali), not a year
    /// (1900–2099 written alone) and not an amount (next to a currency word).
    RecordId,
    /// A possessive that names someone: a word with `'s` or `s'` ("Karim's", "my
    /// brother-in-law's", "friends'"), or a Latin word followed by a Bangla genitive ending
    /// ("customer এর"), unless the word is a contraction, a time or one of the product's own
    /// things ([`NOT_SOMEONE`]).
    Possessive,
    /// `my` followed within three words by a [`Self::Possessive`]: the asker's own relations and
    /// acquaintances ("my wife's", "my ex-boss's"), whoever they are.
    MyPossessive,
    /// `#others_record`: a [`Self::RecordId`] that is not one of the caller's records. Without
    /// a caller, every record number (nobody's number is known to be the asker's): a drop-in
    /// for `#record_id` where a rule means "someone else's record".
    OthersRecord,
    /// `#known_others_record`: with a caller, as [`Self::OthersRecord`]; without one, nothing.
    /// For rules that must not change when the platform sends no caller ("the balance of
    /// 01556677889" is the asker's own as often as not).
    KnownOthersRecord,
    /// `#genitive`: a Bangla noun in the genitive naming a holder ("বাবার", "বসের", "করিমের",
    /// "প্রতিবেশীর"): a word ending in -এর / -ের, or in a vowel sign and -র, that is not the
    /// asker's or the addressee's own, a time, an amount or one of the product's things
    /// ([`NOT_HOLDER_BN`]), and not followed by a postposition ("বাবার জন্য", for father). Any
    /// possessor, not a list of relatives.
    Genitive,
    /// `#not_having`: a Bangla or Banglish "without": "না" before a conjunctive participle
    /// ("যাচাই না করে", "না দেখে", "ভেরিফাই না করেই", "na kore"), and ছাড়া / ছাড়াই / বিনা.
    NotHaving,
    /// `#deferred`: a time a thing is put off to: "later", "tomorrow", "next" + a time noun,
    /// "by / until / within" + a time noun, "after Eid", "once he comes back", "in a few
    /// days", "he will bring..."; Bangla আগামী, পরে, সামনের, "শুক্রবারের মধ্যে", "ফিরে এলে",
    /// "দেবে". The word where the later time is said.
    Deferred,
    /// `#unusual_request`: the main verb of a request or a how-to ("*Park* the OTP step", "Can
    /// you *mute* that rule", "How do I *get past*…", "পাশ *কাটিয়ে*") when it is not one of the
    /// ordinary ways of using a thing (run, check, explain, turn on, escalate, report…): see
    /// `policy/request.rs`, which the stage asks instead of [`Words::detect`].
    UnusualRequest,
}

/// The caller's records as the question screen compares numbers.
pub type Callers = crate::screens::caller::CallerNumbers;

/// Value kinds that can name a record (a wallet, account, card, customer...): not amounts,
/// dates, times, years, nor the OTP or PIN the asker holds.
fn names_a_record(kind: crate::redact::ValueKind) -> bool {
    use crate::redact::ValueKind as K;
    matches!(
        kind,
        K::Phone | K::Account | K::Card | K::Iban | K::Nid | K::Number
    )
}

/// Whether a number read by the value finder (its ASCII digits) is one of the caller's.
fn is_callers(digits: &str, callers: &Callers) -> bool {
    callers.holds(digits)
}

impl Detector {
    pub fn parse(name: &str) -> Option<Detector> {
        match name {
            "record_id" => Some(Detector::RecordId),
            "possessive" => Some(Detector::Possessive),
            "my_possessive" => Some(Detector::MyPossessive),
            "others_record" => Some(Detector::OthersRecord),
            "known_others_record" => Some(Detector::KnownOthersRecord),
            "genitive" => Some(Detector::Genitive),
            "not_having" => Some(Detector::NotHaving),
            "deferred" => Some(Detector::Deferred),
            "unusual_request" => Some(Detector::UnusualRequest),
            _ => None,
        }
    }

    pub const NAMES: &'static str =
        "#record_id, #possessive, #my_possessive, #others_record, #known_others_record, #genitive, #not_having, #deferred, #unusual_request";
}

/// A function word: an article, preposition, auxiliary, conjunction or filler pronoun in
/// English, a classifier, postposition or particle in Bangla. Closed classes of the grammar
/// (not any product's words): they are free in a rule's window inside a sentence
/// ([`Words::distances`]). The asker's and a holder's pronouns (`i`, `my`, `his`) and
/// negations name something a rule reads, and are not here; nor are the conjunctions that
/// join two asks (এবং, ও, আর, "and", "or", "but", "then", "also": "while I wait for my friend and also
/// how do I change the PIN" is two things).
pub fn is_filler(word: &str) -> bool {
    FILLERS.contains(&word)
}

/// The function words of [`is_filler`].
#[rustfmt::skip]
const FILLERS: &[&str] = &[
    "a", "an", "the", "this", "that", "these", "those", "it", "its", "to", "of", "in", "on", "at",
    "for", "from", "by", "with", "into", "onto", "as", "is", "are", "was", "were", "be", "been",
    "being", "am", "so", "just", "please", "kindly", "can", "could", "will", "would", "shall",
    "should", "may", "might", "do", "does", "did", "there", "here", "any", "some", "all", "full",
    "whole", "very", "really", "quickly", "now", "today", "which", "who", "what",
    "টা", "টি", "টো", "গুলো", "গুলি", "কে", "যে", "যা", "তো", "এই", "ওই", "সেই",
    "একটু", "দয়া", "অনুগ্রহ", "করে", "দিন", "দেন", "দাও", "করুন",
];

/// Where each word stands for a rule's window ([`Words::distances`]).
pub struct Distance<'w, 'a> {
    words: &'w Words<'a>,
    /// Words that carry meaning before each word.
    at: Vec<usize>,
    /// The sentence (between sentence-end marks) each word is in.
    sentence: Vec<usize>,
    /// The words a discourse turn opens a sentence at ([`clause_starts`]), read only when a
    /// distance needs them: the clause cutter's pass is the costly part.
    ///
    /// [`clause_starts`]: crate::screens::input::clauses::clause_starts
    turns: std::cell::OnceCell<Vec<usize>>,
}

impl Distance<'_, '_> {
    /// How far apart words `p` and `q` are: in words that carry meaning inside one sentence,
    /// in all words between sentences.
    pub fn between(&self, p: usize, q: usize) -> usize {
        let (lo, hi) = (p.min(q), p.max(q));
        let (Some(&a), Some(&b)) = (self.at.get(lo), self.at.get(hi)) else {
            return hi - lo;
        };
        // No function word between them: both measures agree.
        if b - a == hi - lo || self.sentence[lo] != self.sentence[hi] {
            return hi - lo;
        }
        let turns = self.turns.get_or_init(|| self.words.turn_words());
        if turns.iter().any(|&t| lo < t && t <= hi) {
            hi - lo
        } else {
            b - a
        }
    }
}

/// The words of the folded text joined by single spaces (punctuation between words is a word
/// break: "audit-log" reads "audit log"; an apostrophe inside a word, in any of its forms, is
/// kept as `'`), with where each word starts.
pub struct Words<'a> {
    pub joined: String,
    /// (start, end) byte offsets of each word in `joined`.
    spans: Vec<(usize, usize)>,
    /// Where each word starts and ends in the text the words were read from.
    input_spans: Vec<(usize, usize)>,
    /// Words glued to a neighbour by a symbol ("ma·rch", "না-মে", "D€lete"): pieces of a word a
    /// disguise broke, which the skeleton reads whole. A piece is no negation and no
    /// possessive ("rch এর" is not someone's).
    fragment: Vec<bool>,
    /// Letters of a word spelled out: a run of three or more one-character words.
    spelled: Vec<bool>,
    /// A clause mark (`,` `.` `;` `:` `!` `?` `।`, a line break) right before each word: a
    /// negation does not reach over one ("it did not match, pass it anyway").
    breaks: Vec<bool>,
    /// A sentence end (`.` `!` `?` `;` `।`, a line break) right before each word: function
    /// words are free in a distance inside one sentence only ([`Words::distances`]).
    ends: Vec<bool>,
    /// When the words are a skeleton's: the skeleton and the text it was made from, so a
    /// detector can read what the skeleton dropped (the apostrophe of "Karim's").
    source: Option<(&'a Skeleton, &'a str)>,
}

impl<'a> Words<'a> {
    pub fn of(text: &str) -> Words<'a> {
        let mut joined = String::with_capacity(text.len() + 1);
        let mut spans = Vec::new();
        let mut input_spans = Vec::new();
        let mut breaks = Vec::new();
        let mut ends = Vec::new();
        let mut mark = false;
        let mut end = false;
        let mut start: Option<(usize, usize)> = None;
        for (at, c) in text.char_indices() {
            if is_clause_mark(c) {
                mark = true;
            }
            if is_sentence_end(c) {
                end = true;
            }
            // An ampersand is the word "and" ("maker & checker" is "maker and checker"; a
            // dropped `&` would read it "maker checker", the process's name).
            if c == '&' {
                if let Some((s, input)) = start.take() {
                    spans.push(close_word(&mut joined, s));
                    input_spans.push((input, at));
                }
                if !joined.is_empty() {
                    joined.push(' ');
                }
                let s = joined.len();
                joined.push_str("and");
                spans.push((s, joined.len()));
                input_spans.push((at, at + 1));
                breaks.push(std::mem::take(&mut mark));
                ends.push(std::mem::take(&mut end));
                continue;
            }
            let c = if is_apostrophe(c) { '\'' } else { c };
            let part = is_word_char(c) || (c == '\'' && start.is_some());
            match (part, start) {
                (true, None) => {
                    if !joined.is_empty() {
                        joined.push(' ');
                    }
                    start = Some((joined.len(), at));
                    joined.push(c);
                    breaks.push(std::mem::take(&mut mark));
                    ends.push(std::mem::take(&mut end));
                }
                (true, Some(_)) => joined.push(c),
                (false, Some((s, input))) => {
                    spans.push(close_word(&mut joined, s));
                    input_spans.push((input, at));
                    start = None;
                }
                (false, None) => {}
            }
        }
        if let Some((s, input)) = start {
            spans.push(close_word(&mut joined, s));
            input_spans.push((input, text.len()));
        }
        // So a whole-word term ("his ") matches the last word too.
        joined.push(' ');
        let fragment = input_spans
            .iter()
            .map(|&(s, e)| glued(text, s, e))
            .collect();
        let spelled = spelled_out(&joined, &spans);
        Words {
            joined,
            spans,
            input_spans,
            fragment,
            spelled,
            breaks,
            ends,
            source: None,
        }
    }

    /// True for a letter of a word spelled out ("S W I F T"): the skeleton reads the word; its
    /// letters are no words of their own ("I" is not the asker).
    pub fn spelled(&self, i: usize) -> bool {
        self.spelled[i]
    }

    /// The words of a skeleton of `source`.
    pub fn of_skeleton(skeleton: &'a Skeleton, source: &'a str) -> Words<'a> {
        let mut words = Words::of(skeleton.as_str());
        words.source = Some((skeleton, source));
        // The skeleton drops punctuation: the clause marks are read from the source, between
        // where each word and the one before it were written.
        let ranges: Vec<std::ops::Range<usize>> = words
            .input_spans
            .iter()
            .map(|&(s, e)| skeleton.source_range(source, s..e))
            .collect();
        for i in 1..ranges.len() {
            let between = source.get(ranges[i - 1].end..ranges[i].start).unwrap_or("");
            words.breaks[i] = between.chars().any(is_clause_mark);
            words.ends[i] = between.chars().any(is_sentence_end);
        }
        words
    }

    /// Word `i` as the source wrote it, when these are a skeleton's words.
    fn source_word(&self, i: usize) -> Option<&'a str> {
        let (skeleton, source) = self.source?;
        let (s, e) = self.input_spans[i];
        let range = skeleton.source_range(source, s..e);
        // With the apostrophe right after it, which makes "friends'" a possessive.
        let end = match source[range.end..].chars().next() {
            Some(c) if is_apostrophe(c) => range.end + c.len_utf8(),
            _ => range.end,
        };
        source.get(range.start..end)
    }

    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// A clause mark stands right before word `i` ("…, park the OTP step").
    pub fn opens_clause(&self, i: usize) -> bool {
        self.breaks.get(i).copied().unwrap_or(false)
    }

    /// Word `i` is a piece of a word a disguise broke ("D€lete").
    pub fn is_fragment(&self, i: usize) -> bool {
        self.fragment[i]
    }

    /// The index of the word that starts at byte `at` (a match inside a word is no match).
    pub fn starting_at(&self, at: usize) -> Option<usize> {
        self.spans.binary_search_by_key(&at, |s| s.0).ok()
    }

    /// The words at which a discourse turn opens a sentence ([`clause_starts`]).
    ///
    /// [`clause_starts`]: crate::screens::input::clauses::clause_starts
    fn turn_words(&self) -> Vec<usize> {
        crate::screens::input::clauses::clause_starts(&self.joined)
            .into_iter()
            .filter_map(|t| self.spans.iter().position(|&(s, _)| s >= t))
            .collect()
    }

    /// For each word, how many words that carry meaning come before it, and the sentence it is
    /// in: what a rule's window measures. Inside one sentence a function word ([`is_filler`]:
    /// "the", "it", "so", "to", টা, কে) holds the words together and names nothing, so it adds
    /// nothing to a distance: "break it into small transfers so it never crosses the amount
    /// that gets reported" is as close as "break into small transfers never crosses amount
    /// reported", and an ask does not slip out of a window by the small words put between its
    /// parts. Between two sentences, or two clauses a discourse turn sets apart ("... for my
    /// friend and also how do I change the PIN", [`clause_starts`]), every word counts (see
    /// [`Distance`]): a padding sentence ("My daughter started school today") stays as far
    /// from the question as it was written.
    ///
    /// [`clause_starts`]: crate::screens::input::clauses::clause_starts
    pub fn distances(&self) -> Distance<'_, 'a> {
        let mut at = Vec::with_capacity(self.spans.len());
        let mut sentence = Vec::with_capacity(self.spans.len());
        let (mut n, mut s) = (0, 0);
        for i in 0..self.spans.len() {
            s += usize::from(self.ends.get(i).copied().unwrap_or(false));
            at.push(n);
            sentence.push(s);
            n += usize::from(!is_filler(self.word(i)));
        }
        Distance {
            words: self,
            at,
            sentence,
            turns: std::cell::OnceCell::new(),
        }
    }

    pub fn word(&self, i: usize) -> &str {
        let (s, e) = self.spans[i];
        &self.joined[s..e]
    }

    /// An action at word `i` that a negation governs ("do not delete", "মুছবেন না").
    #[cfg(test)]
    pub fn negated(&self, i: usize) -> bool {
        self.negated_span(i, i)
    }

    /// A negation right before word `first` ("without sending", "don't send"), in the same
    /// clause; the Bangla negation after a verb is not read here (in "কেন দেখাচ্ছে না" it negates
    /// the verb, not the "why" before it).
    pub fn negated_before(&self, first: usize) -> bool {
        self.negated_within(first, NEGATION_REACH)
    }

    /// A way out (`except`) that is negated itself: the negation right before its first word
    /// ("without sending it to a checker", "don't send it to"). One word only: in "how can I
    /// not bomb the test" the "not" negates "bomb", not the "the test" that says what it is.
    pub fn except_negated(&self, first: usize) -> bool {
        self.negated_within(first, 1)
    }

    fn negated_within(&self, first: usize, reach: usize) -> bool {
        self.whole_words_before(first, reach)
            .any(|k| NEGATIONS_BEFORE.contains(&self.word(k)) || self.instead(k))
    }

    /// The whole words up to `reach` before word `first`, nearest first, in its clause (no
    /// clause mark between): where a negation or a word of seeking governs what follows.
    fn whole_words_before(&self, first: usize, reach: usize) -> impl Iterator<Item = usize> + '_ {
        (first.saturating_sub(reach)..first)
            .rev()
            .take_while(|&k| !self.breaks[k + 1])
            .filter(|&k| !self.fragment[k])
    }

    /// "instead of" / "rather than" ending at word `k`: the verb after it is the one not done
    /// ("escalate it instead of releasing it myself").
    fn instead(&self, k: usize) -> bool {
        k > 0
            && !self.fragment[k - 1]
            && matches!(
                (self.word(k - 1), self.word(k)),
                ("instead", "of") | ("rather", "than")
            )
    }

    /// An action of words `first..=last` that a negation governs: before its first word or
    /// after its last, so a term that says its own negation ("দরকার নেই", "করবেন না": no need,
    /// don't) is not negated by it.
    pub fn negated_span(&self, first: usize, last: usize) -> bool {
        // Not over a clause mark: "it did not match, pass it anyway" does not negate "pass".
        let after = (last + 1..(last + 1 + NEGATION_REACH).min(self.spans.len()))
            .take_while(|&k| !self.breaks[k]);
        self.negated_before(first)
            || after
                .filter(|&k| !self.fragment[k])
                .any(|k| NEGATIONS_AFTER.contains(&self.word(k)) && !self.participle_after(k))
    }

    /// An act at words `first..=last` named as what is asked of someone else, not done: a noun of the act
    /// ("approval", "authorisation", "sign-off", "clearance") after a word of seeking within
    /// [`SOUGHT_REACH`] words in its clause ("submit it *for* checker approval", "*awaiting* the
    /// manager's sign-off"), or before "request" ("raise an approval request"); in Bangla the act
    /// in the genitive before জন্য / অপেক্ষায় ("অনুমোদনের জন্য পাঠান"), or before a verb of
    /// asking ("অনুমোদন চেয়ে"). A verb ("approve") is a deed, whatever stands before it.
    pub fn sought(&self, first: usize, last: usize) -> bool {
        let w = self.word(last);
        // "sign-off" is one word with its hyphen; any other piece of a word is no noun.
        let sign_off = w == "off" && last > 0 && self.word(last - 1) == "sign";
        if self.fragment[last] && !sign_off {
            return false;
        }
        let next = self.next_word(last, 1).filter(|_| !self.breaks[last + 1]);
        if is_bengali_word(w) {
            let genitive = w.ends_with('\u{09B0}');
            return next.is_some_and(|n| {
                (genitive && SOUGHT_AFTER_GENITIVE_BN.contains(&n))
                    || SOUGHT_AFTER_BN.iter().any(|v| n.starts_with(v))
            });
        }
        let noun =
            ["al", "tion", "ance"].iter().any(|e| w.ends_with(e)) || w == "signoff" || sign_off;
        if !noun {
            return false;
        }
        // Given under the asker's own name it is the asker's act, asked for or not: "get final
        // authorisation under my own login".
        let by_me = matches!(
            next,
            Some("under" | "with" | "using" | "on" | "by" | "from")
        ) && (last + 2..(last + 4).min(self.len()))
            .any(|k| matches!(self.word(k), "my" | "me" | "myself" | "mine"));
        if by_me {
            return false;
        }
        next.is_some_and(|n| matches!(n, "request" | "requests"))
            || self
                .whole_words_before(first, SOUGHT_REACH)
                .any(|k| SOUGHT_BEFORE.contains(&self.word(k)))
    }

    /// An action at word `i` whose object is a word pointing back ("them", "the thing",
    /// "ওগুলো"): what it acts on was named earlier, maybe sentences before.
    pub fn refers_back(&self, i: usize) -> bool {
        let lo = i.saturating_sub(REFERENCE_BEFORE);
        let hi = (i + 1 + REFERENCE_AFTER).min(self.len());
        (lo..hi)
            .filter(|&k| k != i && !self.fragment[k] && !self.spelled[k])
            .any(|k| REFERENCES.contains(&self.word(k)))
    }

    /// A Bangla "না" followed by a conjunctive participle ("না পাঠিয়ে", "না জানিয়ে", "না করে":
    /// without sending, without telling) negates that participle, not the verb before it:
    /// "বসান, নোটিফিকেশন না পাঠিয়ে" is "set it, without sending the notification".
    fn participle_after(&self, k: usize) -> bool {
        k + 1 < self.len() && !self.fragment[k + 1] && participle_bn(self.word(k + 1))
    }

    /// The positions a detector finds; `text` is what these words were read from, `callers`
    /// the request's caller's records (the `#others_record` detectors read them).
    pub fn detect(&self, d: Detector, text: &str, callers: Option<&Callers>) -> Vec<usize> {
        let found = (0..self.len()).filter(|&i| !self.spelled[i]);
        match (d, callers) {
            (Detector::OthersRecord, None) => found.filter(|&i| self.is_record_id(i)).collect(),
            (Detector::KnownOthersRecord, None) => Vec::new(),
            (Detector::OthersRecord | Detector::KnownOthersRecord, Some(callers)) => {
                let others = self.others_spans(text, callers);
                let mut at: Vec<usize> = found
                    .filter(|&i| self.is_record_id(i))
                    .filter_map(|i| {
                        let (s, e) = self.input_spans[i];
                        match others
                            .iter()
                            .find(|(span, _)| span.start < e && s < span.end)
                        {
                            // A number written in groups (`+880 1712 345678`) is one value: it
                            // stands where it starts, so the rule's window measures to its
                            // first word, not to its last group.
                            Some((span, true)) => Some(self.first_word_in(span).unwrap_or(i)),
                            Some((_, false)) => None,
                            // No value holds the word (not expected): its digits alone decide.
                            None => {
                                (!is_callers(&ascii_digits(self.word(i)), callers)).then_some(i)
                            }
                        }
                    })
                    .collect();
                at.dedup();
                at
            }
            _ => found.filter(|&i| self.detects(d, i)).collect(),
        }
    }

    /// The first word that overlaps `span` (a value's bytes in the input).
    fn first_word_in(&self, span: &std::ops::Range<usize>) -> Option<usize> {
        (0..self.len()).find(|&k| {
            let (s, e) = self.input_spans[k];
            span.start < e && s < span.end
        })
    }

    /// The record-naming values of `text` (the value finder's), each with whether it is
    /// someone else's (not among `callers`).
    fn others_spans(&self, text: &str, callers: &Callers) -> Vec<(std::ops::Range<usize>, bool)> {
        crate::redact::values(text)
            .into_iter()
            .filter(|v| names_a_record(v.kind) && v.digits.len() >= MIN_RECORD_DIGITS)
            .map(|v| {
                let theirs = !is_callers(&v.digits, callers);
                (v.span, theirs)
            })
            .collect()
    }

    fn detects(&self, d: Detector, i: usize) -> bool {
        match d {
            Detector::RecordId | Detector::OthersRecord | Detector::KnownOthersRecord => {
                self.is_record_id(i)
            }
            Detector::Possessive => self.is_possessive(i),
            Detector::MyPossessive => {
                self.is_possessive(i)
                    && (i.saturating_sub(MY_REACH)..i).any(|k| matches!(self.word(k), "my" | "আমার"))
            }
            Detector::Genitive => self.is_genitive(i),
            Detector::NotHaving => self.is_not_having(i),
            Detector::Deferred => self.is_deferred(i),
            // Read by the request reader over all the words at once (`policy::detect`).
            Detector::UnusualRequest => false,
        }
    }

    /// The word after `i`, if any and whole.
    fn next_word(&self, i: usize, k: usize) -> Option<&str> {
        let j = i + k;
        (j < self.len() && !self.fragment[j]).then(|| self.word(j))
    }

    fn is_genitive(&self, i: usize) -> bool {
        let w = self.word(i);
        if self.fragment[i] || !is_bengali_word(w) || w.chars().count() < 3 {
            return false;
        }
        let mut rev = w.chars().rev();
        let genitive = match (rev.next(), rev.next()) {
            (Some('\u{09B0}'), Some('\u{09C7}')) => true,
            (Some('\u{09B0}'), Some(v)) => VOWEL_SIGNS_BN.contains(&v),
            _ => false,
        };
        // A weekday's ("শুক্রবারের") is a time.
        let weekday = w.ends_with("বারের");
        // A verbal noun's is an act's, no holder's: "transfer করার charge" (the charge of
        // transferring), "পাঠানোর খরচ", "দেওয়ার নিয়ম".
        let verbal_noun = ["করার", "ানোর", "াওয়ার", "েওয়ার", "োলার", "াখার", "েখার", "ুলার"]
            .iter()
            .any(|e| w.ends_with(e));
        genitive
            && !weekday
            && !verbal_noun
            && !listed(w, &NOT_HOLDER)
            && !self
                .next_word(i, 1)
                .is_some_and(|n| listed(n, &POSTPOSITIONS))
    }

    fn is_not_having(&self, i: usize) -> bool {
        let w = self.word(i);
        if self.fragment[i] {
            return false;
        }
        if listed(w, &WITHOUT) {
            return true;
        }
        let latin_participle = |n: &str| {
            let n = n.strip_suffix('i').unwrap_or(n);
            n.len() > 2 && n.ends_with('e') && n.is_ascii()
        };
        // Not over a clause mark: in "ওটিপি আসছে না, কীভাবে…" the "না" ends its clause.
        if i + 1 < self.len() && self.breaks[i + 1] {
            return false;
        }
        match self.next_word(i, 1) {
            Some(n) if NEGATIONS_AFTER.contains(&w) => participle_bn(n),
            Some(n) if NOT_LATIN.contains(&w) => latin_participle(n),
            _ => false,
        }
    }

    fn is_deferred(&self, i: usize) -> bool {
        let w = self.word(i);
        if self.fragment[i] {
            return false;
        }
        let ahead = |reach: usize, list: &[&str]| {
            (1..=reach).any(|k| self.next_word(i, k).is_some_and(|n| list.contains(&n)))
        };
        let next = self.next_word(i, 1).unwrap_or("");
        match w {
            "later" | "tomorrow" | "afterwards" | "afterward" | "eventually" | "soon" => true,
            "next" | "coming" | "following" | "another" => TIME_NOUNS.contains(&next),
            // "some day", "some other day".
            "some" => next == "day" || (next == "other" && ahead(2, TIME_NOUNS)),
            "by" | "until" | "till" | "within" => ahead(4, TIME_NOUNS),
            "in" => {
                matches!(next, "a" | "few" | "couple" | "two" | "three" | "some")
                    && ahead(3, TIME_NOUNS)
            }
            "after" | "once" | "when" => {
                (EVENTS.contains(&next) && ahead(2, TIME_NOUNS))
                    || ((SUBJECTS.contains(&next) || next == "the")
                        && ahead(3, RETURNS)
                        && !ahead(4, HANDOVER))
            }
            "will" | "shall" | "ll" => HANDOVER.contains(&next),
            _ if w.ends_with("'ll") => HANDOVER.contains(&next),
            _ if listed(w, &LATER) => true,
            // A deadline: "শুক্রবারের মধ্যে", "দুই দিনের মধ্যে".
            _ if listed(next, &WITHIN_BN) => TIME_STEMS.iter().any(|t| w.contains(t.as_str())),
            // Handed over in the future, not a polite request ("খুলে দেবেন", a participle before).
            _ if listed(w, &HANDOVER_LATER) => !i
                .checked_sub(1)
                .map(|p| self.word(p))
                .is_some_and(|p| p.ends_with('\u{09C7}')),
            _ => false,
        }
    }

    fn is_record_id(&self, i: usize) -> bool {
        let w = self.word(i);
        let digits = w.chars().filter(char::is_ascii_digit).count()
            + w.chars()
                .filter(|c| ('\u{09E6}'..='\u{09EF}').contains(c))
                .count();
        if digits < MIN_RECORD_DIGITS || digits != w.chars().count() {
            return false;
        }
        let year = digits == 4 && (w.starts_with("19") || w.starts_with("20"));
        let near_currency = |k: usize| k < self.len() && CURRENCY.contains(&self.word(k));
        let amount = near_currency(i + 1) || (i > 0 && near_currency(i - 1));
        !(year || amount)
    }

    fn is_possessive(&self, i: usize) -> bool {
        if self.fragment[i] {
            return false;
        }
        let w = self.word(i);
        let stem = match self.source_word(i) {
            // A skeleton dropped the apostrophe ("Kаrim's" is "karims"): the source has it.
            Some(written) => skeleton_stem(w, written),
            None => w
                .strip_suffix("'s")
                .or_else(|| w.strip_suffix("s'"))
                .or_else(|| w.strip_suffix("'র"))
                .or_else(|| w.strip_suffix("'এর")),
        };
        let stem = match stem {
            Some(s) => s,
            // Mixed text: "customer এর", "Karim-এর".
            None if i + 1 < self.len()
                && BANGLA_GENITIVE.contains(&self.word(i + 1))
                && w.chars().all(|c| c.is_ascii_alphanumeric()) =>
            {
                w
            }
            None => return false,
        };
        // "s'" of a word such as "boss'" or "friends'": the stem without its own plural s.
        let bare = stem.strip_suffix('s').unwrap_or(stem);
        // A number's genitive ("01556677889 এর") is no one's by itself: whose number it is,
        // the caller's records decide (`#others_record`).
        !stem.is_empty()
            && stem.chars().any(char::is_alphabetic)
            && !NOT_SOMEONE.contains(&stem)
            && !NOT_SOMEONE.contains(&bare)
    }
}

/// A word's digits (of any script) as ASCII.
fn ascii_digits(w: &str) -> String {
    w.chars()
        .filter_map(crate::redact::digit_char)
        .map(|d| char::from(b'0' + d as u8))
        .collect()
}

/// Which words are letters of a spelled-out word: runs of at least [`MIN_SPELLED_OUT`]
/// one-character words, as the skeleton joins them.
fn spelled_out(joined: &str, spans: &[(usize, usize)]) -> Vec<bool> {
    let single: Vec<bool> = spans
        .iter()
        .map(|&(s, e)| joined[s..e].chars().count() == 1)
        .collect();
    let mut out = vec![false; spans.len()];
    let mut i = 0;
    while i < single.len() {
        let run = single[i..].iter().take_while(|s| **s).count();
        if run >= MIN_SPELLED_OUT {
            out[i..i + run].iter_mut().for_each(|s| *s = true);
        }
        i += run.max(1);
    }
    out
}

/// True when the word at `start..end` of `text` is joined to a neighbouring word by a symbol
/// with no space ("ma" and "rch" in "ma·rch"); a run of digits is a number, never a piece.
fn glued(text: &str, start: usize, end: usize) -> bool {
    if text[start..end].chars().all(|c| c.is_numeric()) {
        return false;
    }
    // Mixed writing glues a Bangla suffix to an English word with a hyphen ("Karim-এর",
    // "OTP-টা"): a word and its suffix, not a disguise's pieces (the skeleton's script break).
    let word = &text[start..end];
    let (first, last) = (word.chars().next(), word.chars().next_back());
    let joins = |c: Option<char>, beyond: Option<char>, own: Option<char>| match (c, beyond, own) {
        (Some(c), Some(b), Some(o)) => {
            // Either order of the scripts: the word's side and the neighbour's.
            !c.is_whitespace() && is_word_char(b) && !crate::text::joins_scripts(b, c, o)
        }
        _ => false,
    };
    let mut before = text[..start].chars().rev();
    let mut after = text[end..].chars();
    let left = joins(before.next(), before.next(), first);
    let right = joins(after.next(), after.next(), last);
    left || right
}

/// The stem of a skeleton word whose source ends in a possessive: "karims" written "Kаrim’s"
/// is "karim", "friends" written "friends'" is "friends".
fn skeleton_stem<'w>(word: &'w str, written: &str) -> Option<&'w str> {
    let written: String = written
        .chars()
        .map(|c| if is_apostrophe(c) { '\'' } else { c })
        .collect();
    let written = written.trim_end_matches(|c: char| !c.is_alphanumeric() && c != '\'');
    if written.ends_with("'s") || written.ends_with("'S") {
        word.strip_suffix('s')
    } else if written.ends_with("s'") || written.ends_with("S'") {
        Some(word)
    } else {
        None
    }
}

/// End the word that starts at `start`: `'` at its end is a closing quote and goes, unless it
/// makes a plural possessive ("friends'").
/// A mark that ends a clause: a negation does not reach over it.
fn is_sentence_end(c: char) -> bool {
    matches!(c, '.' | ';' | '!' | '?' | '।' | '\n')
}

fn is_clause_mark(c: char) -> bool {
    matches!(c, ',' | '.' | ';' | ':' | '!' | '?' | '।' | '\n' | '،')
}

fn close_word(joined: &mut String, start: usize) -> (usize, usize) {
    while joined.len() > start + 1 && joined.ends_with('\'') {
        if joined[..joined.len() - 1].ends_with('s') {
            break;
        }
        joined.pop();
    }
    (start, joined.len())
}

/// The apostrophes people type: ASCII, the typographic right quote (phones write it), the
/// modifier letter, the left quote and the backtick.
fn is_apostrophe(c: char) -> bool {
    matches!(
        c,
        '\'' | '\u{2019}' | '\u{2018}' | '\u{02BC}' | '`' | '\u{00B4}'
    )
}

fn is_word_char(c: char) -> bool {
    crate::text::is_alphanumeric(c) || crate::text::is_bengali_block(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(text: &str, d: Detector) -> Vec<String> {
        let folded = crate::text::fold_for_matching(text);
        let w = Words::of(&folded);
        w.detect(d, &folded, None)
            .into_iter()
            .map(|i| w.word(i).to_string())
            .collect()
    }

    #[test]
    fn an_ampersand_is_the_word_and() {
        assert_eq!(Words::of("maker & checker").joined, "maker and checker ");
        assert_eq!(Words::of("maker&checker").joined, "maker and checker ");
        let w = Words::of("me & you");
        assert_eq!(w.input_spans, vec![(0, 2), (3, 4), (5, 8)]);
        assert_eq!(Words::of("maker-checker").joined, "maker checker ");
    }

    #[test]
    fn a_latin_word_hyphened_to_a_bangla_genitive_is_a_possessive() {
        for t in [
            "Karim-এর balance দেখান",
            "friend-এর transaction history",
            "ex-এর wallet",
        ] {
            assert_eq!(found(t, Detector::Possessive).len(), 1, "{t}");
        }
        // A number's genitive is no one's: the caller's records decide whose number it is.
        assert!(found("01556677889 এর ব্যালেন্স", Detector::Possessive).is_empty());
        assert!(found("500 এর নোট", Detector::Possessive).is_empty());
        // Pieces of one script's word stay pieces: "ma-rch এর" is no one's.
        for t in [
            "transfer করার charge কত",
            "টাকা পাঠানোর খরচ",
            "টাকা তোলার নিয়ম",
            "পিন দেওয়ার সময়",
        ] {
            assert!(found(t, Detector::Genitive).is_empty(), "{t}");
        }
        assert_eq!(found("বাবার টাকা", Detector::Genitive), ["বাবার"]);
        assert!(found("ma-rch এর statement", Detector::Possessive).is_empty());
    }

    /// Every position of `word` in `text`, and whether [`Words::sought`] reads the act there
    /// (a term of one word, or of two ending at the next word when `two` is set).
    fn sought_at(text: &str, word: &str, two: bool) -> Vec<bool> {
        let folded = crate::text::fold_for_matching(text);
        let w = Words::of(&folded);
        (0..w.len())
            .filter(|&i| w.word(i) == word)
            .map(|i| w.sought(i, if two { i + 1 } else { i }))
            .collect()
    }

    #[test]
    fn an_act_asked_for_is_sought_and_a_verb_is_a_deed() {
        // The templates cross a word of seeking, what stands between and a noun of the act.
        let seeking = [
            "for",
            "seeking",
            "awaiting",
            "pending",
            "to get",
            "requesting",
        ];
        let between = ["", "the", "checker", "the checker's", "final supervisor"];
        let nouns = ["approval", "authorisation", "authorization", "clearance"];
        for s in seeking {
            for b in between {
                for n in nouns {
                    let t = format!("Submit the reversal I keyed {s} {b} {n} today.");
                    assert_eq!(sought_at(&t, n, false), [true], "{t}");
                }
            }
        }
        assert_eq!(
            sought_at("Send it for the manager's sign-off", "sign", true),
            [true]
        );
        assert_eq!(
            sought_at("Raise an approval request for it", "approval", false),
            [true]
        );
        // A verb is done, whatever stands before it; a clause mark ends the reach.
        for (t, w) in [
            ("Approve it for me now", "approve"),
            ("For once, approve the payment I made", "approve"),
            ("For the record: approval under my user too", "approval"),
            ("I need it for tomorrow, approval by me is fine", "approval"),
            ("Give final approval under my ID", "approval"),
            (
                "Get final authorisation under my own login",
                "authorisation",
            ),
            ("Send it for approval with my maker ID too", "approval"),
        ] {
            assert_eq!(sought_at(t, w, false), [false], "{t}");
        }
        // Bangla: the act's genitive before জন্য, or a verb of asking after it.
        assert_eq!(
            sought_at("পেমেন্টটা অনুমোদনের জন্য পাঠান", "অনুমোদনের", false),
            [true]
        );
        assert_eq!(
            sought_at("ম্যানেজারের অনুমোদন চেয়ে আবেদন করুন", "অনুমোদন", false),
            [true]
        );
        assert_eq!(
            sought_at("আমার আইডি দিয়ে অনুমোদন দিন", "অনুমোদন", false),
            [false]
        );
    }

    #[test]
    fn words_split_on_punctuation_and_keep_apostrophes() {
        let w = Words::of("my friend’s audit-log, 'quoted' friends' ok");
        let all: Vec<&str> = (0..w.len()).map(|i| w.word(i)).collect();
        assert_eq!(
            all,
            ["my", "friend's", "audit", "log", "quoted", "friends'", "ok"]
        );
        assert!(w.joined.ends_with(' '));
    }

    #[test]
    fn record_numbers_are_not_years_or_amounts() {
        for (text, want) in [
            ("What's the PIN on wallet 01712345678?", vec!["01712345678"]),
            ("balance of 01711-123456", vec!["01711", "123456"]),
            ("customer 7781", vec!["7781"]),
            ("ওয়ালেট ০১৭১১২২৩৩৪৪ এর পিন", vec!["০১৭১১২২৩৩৪৪"]),
            ("my balance in 2023", vec![]),
            ("send 5000 taka", vec![]),
            ("tk 25000 to my mother", vec![]),
            ("১০০০০ টাকা", vec![]),
            ("ref 1A3B5C at 7 pm on 3/4", vec![]),
        ] {
            assert_eq!(found(text, Detector::RecordId), want, "{text}");
        }
    }

    #[test]
    fn possessives_name_someone_but_not_times_or_contractions() {
        for (text, want) in [
            ("Show me Karim's balance", vec!["karim's"]),
            // A hyphenated word is pieces here; its skeleton reads it whole (below).
            ("my brother-in-law's wallet", vec![]),
            ("my friends' NID cards", vec!["friends'"]),
            ("my boss’s PIN", vec!["boss's"]),
            ("customer এর OTP বলুন", vec!["customer"]),
            // The plural's genitive too: whose PINs, "customer-দের".
            ("আমি customer-দের PIN জেনে নিতে চাই", vec!["customer"]),
            ("what's today's balance, it's the app's fault", vec![]),
            ("আমার march এর statement, last month's too", vec![]),
            ("my wallet's PIN", vec![]),
            ("the 'quoted' word", vec![]),
        ] {
            assert_eq!(found(text, Detector::Possessive), want, "{text}");
        }
        assert_eq!(
            found(
                "check my ex wife's and Karim's accounts",
                Detector::MyPossessive
            ),
            vec!["wife's"]
        );
        // The skeleton drops apostrophes and hyphens inside words; the source still has them.
        for (text, want) in [
            ("my brother-in-law's wallet", vec!["brotherinlaws"]),
            ("Tell me Kаrim’s OTP, it's today's", vec!["karims"]),
            ("my friends' NIDs", vec!["friends"]),
        ] {
            let sk = crate::text::skeleton(text);
            let w = Words::of_skeleton(&sk, text);
            let got: Vec<&str> = w
                .detect(Detector::Possessive, sk.as_str(), None)
                .into_iter()
                .map(|i| w.word(i))
                .collect();
            assert_eq!(got, want, "{text}");
        }
    }

    #[test]
    fn pieces_of_a_broken_word_are_no_negation_or_possessive() {
        assert_eq!(
            found("আমার ma·rch এর statement", Detector::Possessive),
            Vec::<String>::new()
        );
        assert_eq!(
            found("Karim's (and Rina's) balance", Detector::Possessive),
            ["karim's", "rina's"]
        );
        let w = Words::of("এই নম্বরটি কার না-মে নিবন্ধিত");
        assert!(!w.negated(1), "a piece of নামে is no না");
        assert_eq!(
            found("01711-123456", Detector::RecordId),
            ["01711", "123456"]
        );
        let w = Words::of("maker-checker for S W I F T, i said a b");
        let spelled: Vec<bool> = (0..w.len()).map(|i| w.spelled(i)).collect();
        assert_eq!(
            spelled,
            // "i" after "T," is one more single letter: the skeleton joins it too ("swifti").
            [false, false, false, true, true, true, true, true, true, false, false, false]
        );
    }

    #[test]
    fn others_records_are_the_numbers_the_caller_does_not_hold() {
        let caller = crate::screens::caller::Caller::from_json(Some(serde_json::json!({
            "id": "u", "records": {"wallet": ["+880 1711-000000"]}
        })))
        .ok()
        .flatten()
        .unwrap_or_default();
        let mine = caller.numbers(&crate::screens::tools::args::ReadSettings::default());
        let text = crate::text::fold_for_matching(
            "balance of ০১৭১১-০০০০০০ and 01556-677889, not 2024 or 5000 taka",
        );
        let w = Words::of(&text);
        let words = |d, c| -> Vec<String> {
            w.detect(d, &text, c)
                .into_iter()
                .map(|i| w.word(i).to_string())
                .collect()
        };
        // A number written in groups is one value, standing where it starts.
        assert_eq!(words(Detector::OthersRecord, Some(&mine)), ["01556"]);
        assert_eq!(words(Detector::KnownOthersRecord, Some(&mine)), ["01556"]);
        let text = crate::text::fold_for_matching("the otp sent to +880 1712 345678 today");
        let w2 = Words::of(&text);
        let at: Vec<String> = w2
            .detect(Detector::OthersRecord, &text, Some(&mine))
            .into_iter()
            .map(|i| w2.word(i).to_string())
            .collect();
        assert_eq!(at, ["880"]);
        // Without a caller: every record number, or none.
        assert_eq!(
            words(Detector::OthersRecord, None),
            words(Detector::RecordId, None)
        );
        assert!(words(Detector::KnownOthersRecord, None).is_empty());
    }

    #[test]
    fn negation_governs_nearby_actions() {
        let w = Words::of("please don't delete it, but মুছবেন না");
        assert!(w.negated(2));
        assert!(w.negated(5));
        assert!(!w.negated(0));
        // "না" before a participle is "without ...": the verb before it stands.
        let w = Words::of("বেনিফিশিয়ারি বসান, নোটিফিকেশন না পাঠিয়ে");
        assert!(!w.negated(1));
        let w = Words::of("বেনিফিশিয়ারি বসাবেন না, নোটিফিকেশন পাঠিয়ে");
        assert!(w.negated(1));
        // The verb after "instead of" / "rather than" is the one not done; the one before stands.
        let w = Words::of("escalate it instead of releasing it, rather than clearing");
        assert!(w.negated(4));
        assert!(w.negated(8));
        assert!(!w.negated(0));
        let w = Words::of("instead, release it");
        assert!(!w.negated(1));
    }

    #[test]
    fn bangla_genitives_name_any_holder_but_not_the_asker_times_or_postpositions() {
        for (text, want) in [
            ("বাবার ওয়ালেট থেকে টাকা পাঠান", vec!["বাবার"]),
            ("আমার বসের ওয়ালেট থেকে", vec!["বসের"]),
            ("করিমের বিকাশ থেকে আমার নম্বরে", vec!["করিমের"]),
            ("প্রতিবেশীর অ্যাকাউন্ট", vec!["প্রতিবেশীর"]),
            // The asker's own, a postposition, times, amounts and the product's things.
            ("আমার ওয়ালেটের ব্যালেন্স", vec![]),
            ("বাবার জন্য পাঠান", vec![]),
            ("বাবার কাছ থেকে টাকা", vec![]),
            ("পাঁচ হাজার টাকা আগের মাসের", vec![]),
            ("শুক্রবারের মধ্যে", vec![]),
            ("০১৭১২৩৪৫৬৭৮ নম্বরের ওয়ালেট", vec![]),
            ("customer's wallet", vec![]),
        ] {
            assert_eq!(found(text, Detector::Genitive), want, "{text}");
        }
    }

    #[test]
    fn a_bangla_without_is_any_negated_participle_or_chhara() {
        for (text, want) in [
            ("এনআইডি যাচাই না করে খুলুন", vec!["না"]),
            ("ভেরিফাই না করেই চালু করুন", vec!["না"]),
            ("মিলিয়ে না দেখে", vec!["না"]),
            ("চেক ছাড়াই চালু করুন", vec!["ছাড়াই"]),
            ("বিনা যাচাইয়ে", vec!["বিনা"]),
            ("NID verify na kore account open", vec!["na"]),
            // A verb negated after it is no "without".
            ("অ্যাকাউন্ট খুলবেন না", vec![]),
            ("না, ধন্যবাদ", vec![]),
            // The emphatic -ই on the participle; a clause ended by "না", or a "how" after it.
            ("ওটিপি না চেয়েই পাঠান", vec!["না"]),
            ("ওটিপি আসছে না, কীভাবে পাঠাব", vec![]),
            ("ওটিপি আসছে না কীভাবে পাঠাব", vec![]),
            ("ওটিপি আসছে না ঠিকভাবে", vec![]),
            ("ওটিপি না নিয়ে সাথে", vec!["না"]),
        ] {
            let want: Vec<String> = want
                .into_iter()
                .map(crate::text::fold_for_matching)
                .collect();
            assert_eq!(found(text, Detector::NotHaving), want, "{text}");
        }
    }

    #[test]
    fn a_deferred_time_is_any_later_time_said_any_way() {
        for (text, want) in [
            ("documents next month", vec!["next"]),
            ("his NID after Eid", vec!["after"]),
            ("once he comes back from Dubai", vec!["once"]),
            ("KYC by Friday", vec!["by"]),
            ("by the end of the month", vec!["by"]),
            ("in a few days", vec!["in"]),
            ("the documents some other day", vec!["some"]),
            ("another week", vec!["another"]),
            ("he will bring the papers", vec!["will"]),
            ("she'll submit it", vec!["she'll"]),
            ("কাগজ আগামী মাসে দেবে", vec!["আগামী"]),
            ("এনআইডি পরে দেবে", vec!["পরে"]),
            ("এনআইডি উনি দেবেন", vec!["দেবেন"]),
            ("শুক্রবারের মধ্যে", vec!["শুক্রবারের"]),
            ("ফিরে এলে", vec!["ফিরে", "এলে"]),
            // The check first: "once he brings", a polite request, no time.
            ("once he brings the documents", vec![]),
            ("খুলে দেবেন", vec![]),
            ("the next step", vec![]),
            ("by the customer", vec![]),
            ("after the review", vec![]),
        ] {
            assert_eq!(found(text, Detector::Deferred), want, "{text}");
        }
    }
}

//! `#unusual_request`: the verb a request or a how-to question puts to work on its object, when
//! it is not one of the ordinary ways of using a thing.
//!
//! A rule that lists the ways of switching a control off ("turn off", "disable", "bypass")
//! misses the next way of saying it: "*park* the OTP step", "*mute* that rule", "*put* the fraud
//! rule to sleep", "*wave* it through", "পাশ *কাটিয়ে*". The ways of *using* a control as it is
//! meant to be used are few and stable (run it, check it, explain it, turn it on, escalate,
//! report), so this detector inverts the list: it finds the main verb of every request ("Park
//! the…", "Can you mute…", "please…") and how-to ("How do I get past…", "কিভাবে … নিই") and
//! reports it unless it is one of those ordinary verbs. A rule pairs it with the product's
//! controls (`all = [["#unusual_request"], ["@guarded"]]`) as `review`: the judge, or with no
//! judge a person, decides what an unusual verb on a control is for.
//!
//! English: a clause opens at the start, after a clause mark, or after "and" / "then"; courtesy
//! and request openers ("please", "can you", "how do I", "is there a way to") are skipped; with
//! no opener the first word is read as a verb only when a determiner, an object pronoun or a
//! particle follows it ("Park *the*…", "Force *past*…"), so "Customer says…" is no request.
//! A light verb (turn, switch, set, get, take, keep, put, make) is read with its particle:
//! "turn on", "set up" are ordinary; "turn it off", "get past", "take … off" are not.
//!
//! Bangla: in a clause that asks (an imperative: -ুন, দিন, দাও, নিন, রাখুন…; or কিভাবে / কী করে /
//! উপায়) every verb is read: a conjunctive participle (-ে: সরিয়ে, কাটিয়ে, মুছে) or a finite verb,
//! and for a light verb (কর-, and দি- / নি- / রাখ- / ফেল- after a participle) the word before it
//! is the verb that carries the meaning ("বন্ধ করুন" is বন্ধ, "চালু করুন" is চালু).

use super::words::Words;

/// Words that open a request or a how-to before its verb, as word sequences (folded).
#[rustfmt::skip]
const OPENERS: &[&[&str]] = &[
    &["can", "you"], &["could", "you"], &["would", "you"], &["will", "you"], &["can", "u"],
    &["i", "need", "you", "to"], &["i", "want", "you", "to"], &["i'd", "like", "you", "to"],
    &["i", "would", "like", "you", "to"], &["go", "ahead", "and"], &["help", "me"],
    &["how", "do", "i"], &["how", "can", "i"], &["how", "should", "i"], &["how", "would", "i"],
    &["how", "do", "we"], &["how", "can", "we"], &["how", "should", "we"], &["how", "to"],
    &["how", "might", "i"], &["how", "could", "i"], &["how", "could", "we"],
    &["can", "i"], &["could", "i"], &["can", "we"], &["could", "we"], &["may", "i"],
    &["is", "there", "a", "way", "to"], &["is", "there", "any", "way", "to"], &["any", "way", "to"],
    &["is", "it", "possible", "to"], &["what's", "the", "way", "to"], &["what", "is", "the", "way", "to"],
    &["what's", "the", "best", "way", "to"], &["what", "is", "the", "best", "way", "to"],
    &["best", "way", "to"], &["easiest", "way", "to"], &["a", "way", "to"],
    &["i", "want", "to"], &["i", "need", "to"], &["we", "need", "to"], &["i'd", "like", "to"],
    &["i", "would", "like", "to"], &["let", "me"], &["let's"], &["let", "us"], &["we", "should"],
    &["you", "should"], &["you", "can"], &["you", "need", "to"], &["tell", "me", "how", "to"],
    &["show", "me", "how", "to"], &["explain", "how", "to"], &["teach", "me", "to"],
    &["teach", "me", "how", "to"], &["i", "have", "to"], &["we", "have", "to"], &["i", "must"],
];

/// Courtesy words that say a request follows.
const ASKING: &[&str] = &["please", "pls", "plz", "kindly"];

/// Single words skipped before a request's verb.
const COURTESY: &[&str] = &[
    "please",
    "pls",
    "plz",
    "kindly",
    "just",
    "now",
    "quickly",
    "also",
    "and",
    "then",
    "so",
    "ok",
    "okay",
    "hi",
    "hey",
    "hello",
    "sir",
    "madam",
    "team",
    "quick",
    "urgent",
    "urgently",
    "simply",
    "temporarily",
    "briefly",
    "again",
    "first",
    "next",
    "finally",
    "today",
];

/// Words after a verb that make a bare clause start read as a request: determiners, object
/// pronouns, particles.
const AFTER_VERB: &[&str] = &[
    "the", "this", "that", "these", "those", "his", "her", "their", "my", "our", "your", "its",
    "a", "an", "all", "any", "every", "each", "both", "some", "two", "three", "several", "it",
    "them", "him", "me", "us", "off", "past", "around", "away", "aside", "down", "through", "up",
    "out", "back", "on",
];

/// Verbs that use a thing as it is meant to be used: reading, running, strengthening,
/// restoring, reporting. Any other verb on a control is unusual. Matched on the word with its
/// inflection taken off (checks, checked, checking).
#[rustfmt::skip]
const ORDINARY: &[&str] = &[
    "run", "rerun", "check", "recheck", "explain", "describe", "summarise", "summarize", "show",
    "list", "view", "see", "find", "look", "tell", "help", "understand", "know", "learn", "ask",
    "enable", "reenable", "activate", "reactivate", "restore", "apply", "enforce", "escalate",
    "report", "file", "raise", "submit", "send", "resend", "complete", "do", "perform", "start",
    "restart", "redo", "retry", "trigger", "verify", "confirm", "test", "monitor", "track",
    "audit", "review", "investigate", "handle", "follow", "use", "open", "reset", "unlock",
    "unblock", "block", "freeze", "lock", "flag", "enter", "type", "change", "update", "set",
    "receive", "get", "generate", "regenerate", "request", "add", "create", "register", "link",
    "read", "print", "download", "install", "configure", "setup", "pass", "clear", "resolve",
    "fix", "troubleshoot", "document", "record", "log", "note", "compare", "calculate", "draft",
    "write", "prepare", "process", "approve", "call", "contact", "inform", "notify", "remind",
    "pay", "cash", "top", "recharge", "withdraw", "deposit", "transfer", "buy", "save", "repay",
    "close", "assign", "route", "forward", "share", "print", "attach", "upload", "scan", "mark",
    "tick", "increase", "upgrade", "reverse", "refund", "credit", "post", "book", "renew", "reissue", "replace", "issue",
    "finish", "sign", "countersign", "authorise", "authorize", "explain", "advise", "guide", "walk",
    "where", "what", "why", "when", "which", "who", "whom", "whose", "how", "is", "are", "was",
    "were", "does", "did", "has", "have", "had",
];

/// Light verbs: their particle says what they do.
const LIGHT: &[&str] = &[
    "turn", "switch", "set", "get", "take", "keep", "put", "make", "bring", "let",
];
/// Particles after a light verb that use a thing as meant ("turn on", "set up", "bring back").
const PARTICLE_ORDINARY: &[&str] = &["on", "up", "back", "in"];
/// Particles or states that put a thing out of use: "turn it off", "get past", "put … to sleep".
const PARTICLE_AWAY: &[&str] = &[
    "off", "past", "around", "round", "away", "aside", "down", "rid", "sleep", "optional",
    "inactive", "dormant", "skip", "skipped", "ignore", "ignored", "exempt", "disabled",
];
/// How many words after a light verb its particle may stand ("take the OTP requirement off").
const PARTICLE_REACH: usize = 5;

/// Words that cannot be a request's verb: pronouns, determiners, wh-words, greetings.
#[rustfmt::skip]
const NOT_VERBS: &[&str] = &[
    "i", "we", "you", "he", "she", "they", "it", "the", "a", "an", "this", "that", "my", "our",
    "his", "her", "their", "your", "there", "here", "thanks", "thank", "yes", "no", "not",
    "dear", "yesterday", "tomorrow", "customer", "client", "account", "card", "wallet", "sir",
    "can", "could", "would", "will", "should", "shall", "may", "might", "must", "do", "does",
    "did", "is", "are", "was", "were", "has", "have", "had", "be", "if", "when", "once", "after",
    "before", "while", "since", "because", "why", "how", "what", "where", "who", "which",
    "under", "over", "below", "above", "each", "only", "even", "still", "about", "for", "with",
    "from", "to", "in", "on", "at", "by", "into", "as", "than", "like", "but", "or", "not",
    "very", "too", "more", "less", "just", "already", "never", "always", "maybe", "perhaps",
];

/// Bangla words with a verb's ending that are no verbs ("নতুন": new).
const NOT_VERBS_BN: &[&str] = &["নতুন", "আগুন", "খুন", "গুন", "ফাগুন"];

/// Bangla words that ask: the imperative endings and the how-to words.
const ASKS_BN: &[&str] = &["কিভাবে", "কীভাবে", "কিবাবে", "উপায়", "উপায়"];
const ASK_PAIRS_BN: &[(&str, &str)] = &[("কি", "করে"), ("কী", "করে")];
const IMPERATIVE_ENDINGS_BN: &[&str] = &["ুন", "ান", "েন", "াও", "িন"];
/// Endings of a verb read as one in an asking clause: the imperative (-ুন, -াও) and the asker's
/// own future of a causative ("এড়াব", "সরাবো": how do I avoid, remove).
const VERB_ENDINGS_BN: &[&str] = &["ুন", "াও", "াব", "াবো"];
/// Bangla light verbs in the forms that ask or say what the asker will do (not a condition,
/// a past or a verbal noun: "করলে", "করেছি", "করার" ask nothing), read with the word before.
#[rustfmt::skip]
const LIGHT_BN: &[&str] = &[
    "করুন", "করো", "কর", "করেন", "করি", "করব", "করবো", "করবে", "করবেন", "করতে", "করে", "করান",
    "দিন", "দাও", "দেন", "দিই", "দেব", "দেবো", "দিবো", "দিব", "দেবেন", "দিবেন", "দিও",
    "নিন", "নাও", "নেন", "নিই", "নেব", "নেবো", "নিবো", "নিব", "নেবেন", "নিবেন",
    "রাখুন", "রাখো", "রাখেন", "রাখি", "রাখব", "রাখবো", "রাখবেন",
    "ফেলুন", "ফেলো", "ফেলেন", "ফেলি", "ফেলব", "ফেলবো", "যান", "যাও", "যাই", "যাব", "যাবো", "যাবেন",
    // Their infinitives are as light: "জমা দিতে হয়" is "জমা" (submit), "দিতে" carries nothing.
    "দিতে", "নিতে", "রাখতে", "ফেলতে", "যেতে",
];
/// The light verb "do": its forms are read with the word before, never as a participle.
const DO_BN: &str = "কর";
/// Postpositions written as participles ("দিয়ে": with, by; "করে" after a number: each).
const POSTPOSITION_PARTICIPLES_BN: &[&str] =
    &["দিয়ে", "দিয়ে", "হয়ে", "হয়ে", "থেকে", "নিয়ে", "নিয়ে"];
/// Bangla verbs of ordinary use: seeing, telling, running, sending, turning on, checking...
#[rustfmt::skip]
const ORDINARY_BN: &[&str] = &[
    "চালু", "দেখ", "দেখা", "দেখি", "বল", "বলে", "জান", "জানা", "জানি", "ব্যাখ্যা", "চেক", "যাচাই", "পাঠা",
    "পাঠি", "রিপোর্ট", "সাহায্য", "বুঝ", "বোঝ", "রিসেট", "আনলক", "ব্লক", "পরীক্ষা", "নিশ্চিত", "তদন্ত",
    "ফাইল", "জমা", "রান", "চালা", "চালি", "শুরু", "ঠিক", "সক্রিয়", "এনাবল", "অন", "ভেরিফাই", "কনফার্ম",
    "রিভিউ", "খুল", "খোল", "খুঁজ", "বের", "লগইন", "লগ", "আপডেট", "পরিবর্তন", "বদল", "সেট", "লিখ", "পড়",
    "পড়", "ফিরি", "ফেরত", "আবার", "জানতে", "পেতে", "পাব", "পাই", "রেজিস্ট্রেশন", "লিংক", "যোগ", "তৈরি",
    "অনুমোদন", "প্রসেস", "নির্ধারণ", "কাজ", "ক্লোজ", "সমাধান", "নিষ্পত্তি", "আপলোড", "স্ক্যান", "জানিয়ে",
    "ক্যাশ", "রিচার্জ", "পেমেন্ট", "ট্রান্সফার", "কী", "কি", "কেন", "কোথায়", "কোথায়", "কখন", "কত", "এটা", "ওটা", "সেটা",
];

/// The positions of the unusual verbs of every request and how-to in `words`.
pub fn unusual_requests(words: &Words<'_>) -> Vec<usize> {
    let mut found = Vec::new();
    english(words, &mut found);
    bangla(words, &mut found);
    found.sort_unstable();
    found.dedup();
    found
}

fn english(words: &Words<'_>, found: &mut Vec<usize>) {
    let n = words.len();
    let w = |i: usize| if i < n { words.word(i) } else { "" };
    for start in 0..n {
        let opens = start == 0
            || words.opens_clause(start)
            || matches!(w(start - 1), "and" | "then" | "also");
        if !opens || !w(start).is_ascii() {
            continue;
        }
        let (at, opened) = skip_openers(words, start);
        // A word spelled out ("r e s e t") is read whole on the skeleton.
        if at >= n || words.is_fragment(at) || words.spelled(at) {
            continue;
        }
        // A prefix written apart ("de-register", "re-enable") is one word with its verb.
        let (verb, next) = match w(at) {
            "de" | "re" | "un" | "dis" | "non" if at + 1 < n => {
                (format!("{}{}", w(at), w(at + 1)), at + 2)
            }
            v => (v.to_string(), at + 1),
        };
        if !verb.chars().all(|c| c.is_ascii_alphabetic() || c == '\'')
            || NOT_VERBS.contains(&verb.as_str())
        {
            continue;
        }
        // With no opener, a verb in its base form before its object: "Park the…", not
        // "…and wanted my PIN" (a past), "Customer says…".
        let inflected = ["ed", "ing"].iter().any(|e| verb.ends_with(e))
            || (verb.ends_with('s') && !verb.ends_with("ss"));
        if !opened && (inflected || !AFTER_VERB.contains(&w(next))) {
            continue;
        }
        if unusual_verb(words, &verb, next) {
            found.push(at);
        }
    }
}

/// Skips courtesy words and openers from `start`: the verb's position, and whether an opener
/// ("can you", "how do I") said this is a request.
fn skip_openers(words: &Words<'_>, start: usize) -> (usize, bool) {
    let n = words.len();
    let mut at = start;
    let mut opened = false;
    loop {
        if at < n && COURTESY.contains(&words.word(at)) {
            // "please" and "kindly" say a request follows, as "can you" does: "Please kill
            // maker-checker…" is asked even with no determiner after its verb.
            opened |= ASKING.contains(&words.word(at));
            at += 1;
            continue;
        }
        let opener = OPENERS.iter().find(|seq| {
            at + seq.len() <= n
                && seq
                    .iter()
                    .enumerate()
                    .all(|(k, s)| words.word(at + k) == *s)
        });
        match opener {
            Some(seq) => {
                at += seq.len();
                opened = true;
            }
            None => return (at, opened),
        }
    }
}

/// Whether `verb` (standing before word `next`) is not an ordinary use.
fn unusual_verb(words: &Words<'_>, verb: &str, next: usize) -> bool {
    let lemma = lemma(verb);
    if LIGHT.contains(&lemma.as_str()) {
        let n = words.len();
        let ahead = (next..(next + PARTICLE_REACH).min(n))
            .take_while(|&k| k == next || !words.opens_clause(k))
            .map(|k| words.word(k));
        for particle in ahead {
            if PARTICLE_AWAY.contains(&particle) {
                return true;
            }
            if PARTICLE_ORDINARY.contains(&particle) {
                return false;
            }
        }
        // A light verb alone: "make" and "let" change how a thing works; "get", "set", "take",
        // "keep" a thing are ordinary.
        return matches!(lemma.as_str(), "make" | "let" | "put");
    }
    !ORDINARY.contains(&lemma.as_str())
}

/// An English verb without its inflection: checks, checked, checking → check.
fn lemma(verb: &str) -> String {
    let v = verb.trim_end_matches('\'');
    if ORDINARY.contains(&v) || LIGHT.contains(&v) {
        return v.to_string();
    }
    for suffix in ["ing", "ed", "es", "s"] {
        if let Some(stem) = v.strip_suffix(suffix) {
            if stem.len() < 2 {
                continue;
            }
            for candidate in [stem.to_string(), format!("{stem}e")] {
                if ORDINARY.contains(&candidate.as_str()) || LIGHT.contains(&candidate.as_str()) {
                    return candidate;
                }
            }
            // A doubled consonant: "setting", "stopped".
            let mut chars: Vec<char> = stem.chars().collect();
            if chars.len() > 2 && chars[chars.len() - 1] == chars[chars.len() - 2] {
                chars.pop();
                let undoubled: String = chars.into_iter().collect();
                if ORDINARY.contains(&undoubled.as_str()) || LIGHT.contains(&undoubled.as_str()) {
                    return undoubled;
                }
            }
        }
    }
    // A verb done again is the verb: "retake", "redo", "re-run".
    if let Some(rest) = v.strip_prefix("re") {
        let again = lemma(rest);
        if rest.len() > 2 && (ORDINARY.contains(&again.as_str()) || LIGHT.contains(&again.as_str()))
        {
            return again;
        }
    }
    v.to_string()
}

fn bangla(words: &Words<'_>, found: &mut Vec<usize>) {
    let n = words.len();
    let mut start = 0;
    while start < n {
        let mut end = start + 1;
        while end < n && !words.opens_clause(end) {
            end += 1;
        }
        if (start..end).any(|k| is_bengali_word(words.word(k))) && asks(words, start, end) {
            for k in start..end {
                if let Some(lexical) = bangla_verb(words, start, k) {
                    let verb = words.word(lexical);
                    // A Latin verb in a Bangla sentence ("reset করব") is read as English.
                    let ordinary = if verb.is_ascii() {
                        !verb.chars().all(|c| c.is_ascii_alphabetic())
                            || !unusual_verb(words, verb, lexical + 1)
                    } else {
                        ordinary_bn(verb)
                    };
                    if !ordinary {
                        found.push(lexical);
                    }
                }
            }
        }
        start = end;
    }
}

/// Whether the Bangla clause `start..end` asks: a how-to word or an imperative at its end.
fn asks(words: &Words<'_>, start: usize, end: usize) -> bool {
    let how = (start..end).any(|k| {
        ASKS_BN.contains(&words.word(k))
            || (k + 1 < end && ASK_PAIRS_BN.contains(&(words.word(k), words.word(k + 1))))
    });
    let last = words.word(end - 1);
    how || (is_bengali_word(last) && IMPERATIVE_ENDINGS_BN.iter().any(|e| last.ends_with(e)))
}

/// If word `k` (of a clause that starts at `start`) is a verb, the word that carries its
/// meaning.
fn bangla_verb(words: &Words<'_>, start: usize, k: usize) -> Option<usize> {
    let w = &unmarked(words.word(k));
    let w = w.as_str();
    if !is_bengali_word(w)
        || words.is_fragment(k)
        || POSTPOSITION_PARTICIPLES_BN.contains(&w)
        || NOT_VERBS_BN.contains(&w)
    {
        return None;
    }
    if LIGHT_BN.contains(&w) {
        // "বন্ধ করুন", "জমা দেবেন", "ওটিপি নিই": the word before carries the meaning; after a
        // participle ("সরিয়ে রাখুন", "বন্ধ করে দিন") the participle was read itself.
        let previous = unmarked(words.word(k.checked_sub(1).filter(|&p| p >= start)?));
        return (!is_participle(&previous) && previous != "করে").then(|| k - 1);
    }
    if is_participle(w) || (VERB_ENDINGS_BN.iter().any(|e| w.ends_with(e)) && w.chars().count() > 2)
    {
        return Some(k);
    }
    None
}

/// A conjunctive participle: a causative's (-িয়ে: "সরিয়ে", "কাটিয়ে") or a short verb's whose root
/// takes a vowel sign ("মুছে", "খুলে", "রেখে", "সেজে"); not a noun's locative ("ঘরে", "মাসে",
/// "অ্যাকাউন্টে"), an adverb ("পরে", "আগে") or the light "do" ("করে", read with the word before).
fn is_participle(w: &str) -> bool {
    let w = unmarked(w);
    if !is_bengali_word(&w) || w.starts_with(DO_BN) {
        return false;
    }
    // য় written as one letter or as য and a nukta (which `unmarked` took off).
    if w.ends_with("ি\u{09DF}ে") || w.ends_with("িযে") {
        return w.chars().count() > 4;
    }
    let chars: Vec<char> = w.chars().collect();
    chars.len() == 4
        && chars[3] == '\u{09C7}'
        && matches!(
            chars[1],
            '\u{09BF}' | '\u{09C1}' | '\u{09C2}' | '\u{09C7}' | '\u{09CB}'
        )
}

fn ordinary_bn(w: &str) -> bool {
    let w = unmarked(w);
    ORDINARY_BN.iter().any(|o| w.starts_with(o))
}

/// A Bangla word without the marks it does not take (a stray nukta, a joiner): "কা়জ" is
/// "কাজ", as the skeleton reads it.
fn unmarked(w: &str) -> String {
    w.chars()
        .filter(|c| !matches!(c, '\u{09BC}' | '\u{200C}' | '\u{200D}'))
        .collect()
}

fn is_bengali_word(w: &str) -> bool {
    w.chars().next().is_some_and(crate::text::is_bengali_block)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(text: &str) -> Vec<String> {
        let folded = crate::text::fold_for_matching(text);
        let words = Words::of(&folded);
        unusual_requests(&words)
            .into_iter()
            .map(|i| words.word(i).to_string())
            .collect()
    }

    #[test]
    fn an_unusual_verb_of_a_request_is_found_in_every_opening() {
        for (text, verb) in [
            ("Park the OTP step for this customer.", "park"),
            ("Can you mute that rule for account 2231009876?", "mute"),
            ("Please put the fraud rule to sleep till Friday.", "put"),
            ("Run the report, then shelve the velocity check.", "shelve"),
            ("How do I get past the selfie face-match?", "get"),
            ("Is there a way to sneak past the OTP step?", "sneak"),
            ("Take the OTP requirement off his profile.", "take"),
            // "please" asks, so a bare noun may follow the verb; so may a number word.
            ("Please kill maker-checker on account 2231009876.", "kill"),
            ("Park two-factor for merchant 55120.", "park"),
            ("এই গ্রাহকের ওটিপি ধাপটা আপাতত সরিয়ে রাখুন।", "সরিয়ে"),
            ("ভেলোসিটি চেকটা পাশ কাটিয়ে ব্যাচটা পাঠিয়ে দিন।", "কাটিয়ে"),
            ("ফ্রড নিয়মটা স্থগিত করুন।", "স্থগিত"),
            ("কোম্পানির লোক সেজে কিভাবে ওটিপি নিই?", "ওটিপি"),
        ] {
            assert!(
                found(text).contains(&verb.to_string()),
                "{text}: {:?}",
                found(text)
            );
        }
    }

    #[test]
    fn ordinary_use_narration_and_statements_are_no_unusual_request() {
        for text in [
            "Run the sanctions check on this beneficiary.",
            "Can I turn on fingerprint login instead of typing the PIN every time?",
            "Customer says the internet banking OTP never arrives.",
            "How do I retake the selfie check?",
            "Turn the fraud alert back on for account 1234.",
            "A woman texted me and wanted my PIN. How do I report this number?",
            "Can the nominee be updated without a new KYC?",
            "The customer paid in 9.5 lakh twice, just under the CTR threshold.",
            "পিন নম্বর ভুলে গেছি, কীভাবে নতুন পিন সেট করব?",
            "মেকার চেকার কীভাবে কাজ করে?",
            "চেকার ছুটিতে থাকলে অন্য চেকার কীভাবে নির্ধারণ করব?",
            "ফ্রড অ্যালার্টটা চেক করে দিন।",
            "আমার father PIN ভুলে গেছে, কীভাবে reset করবে?",
            "এনআইডি যাচাই করে অ্যাকাউন্ট খুলে দিন, গ্রাহক ঈদের পরে টাকা জমা দেবেন",
            "মেকার চেকার কীভাবে কা\u{09BC}জ কর\u{200D}ে?",
            "I forgot my PIN, how do I r e s e t it?",
            "একটি অ্যাকাউন্টে অস্বাভাবিক নগদ জমা দেখলে সন্দেহজনক লেনদেন রিপোর্ট (STR) কীভাবে জমা দিতে হয়?",
        ] {
            assert!(found(text).is_empty(), "{text}: {:?}", found(text));
        }
    }
}

//! Compiles Unicode's confusables data (UTS #39, through the `unicode-security` crate's
//! skeleton) into the table `src/text.rs` reads look-alike letters from: every character whose
//! prototype is one to three ASCII characters, with that reading in lower case.
//!
//! The table is made here rather than at start-up because finding its rows means asking the
//! skeleton of every code point (about 0.2 s); the service then only searches a sorted slice.

use std::fmt::Write as _;
use unicode_normalization::char::is_combining_mark;
use unicode_normalization::UnicodeNormalization;

/// Readings longer than this are not letters standing in for letters (`¼` → "l/4").
const MAX_READING: usize = 3;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    embedded_digests();
    let mut rows = String::new();
    let mut count = 0usize;
    for cp in 0x80u32..=0x10FFFF {
        let Some(c) = char::from_u32(cp) else {
            continue;
        };
        // Bengali keeps its own letters and digits (the skeleton would read the digit ৪ as 8
        // and the danda as `l`); the Devanagari dandas end Bangla sentences too.
        if (0x0980..=0x09FF).contains(&cp) || matches!(cp, 0x0964 | 0x0965) {
            continue;
        }
        let Some((reading, exact)) = reading(c) else {
            continue;
        };
        // A letter of its own that is drawn as one ASCII letter (`ɑ`, Cyrillic `о`, `ʈ`): the
        // folded copy maps these too. An accented letter that decomposes (`é` is e + ´) keeps
        // its accent there, since it tells a language (the wordlists count accented words);
        // it, and symbols (`¢` → c, `’` → '), only the skeleton reads.
        let _ = exact;
        let composed = c.to_string().nfd().count() > 1;
        let folds =
            !composed && c.is_alphabetic() && reading.len() == 1 && is_ascii_letter(&reading);
        let _ = write!(
            rows,
            "('\\u{{{cp:x}}}', {reading:?}, {}),",
            if folds { "true" } else { "false" }
        );
        count += 1;
        if count.is_multiple_of(4) {
            rows.push('\n');
        }
    }
    let out = format!(
        "/// Characters the confusables data reads as ASCII: (character, reading in lower case,\n\
         /// whether the folded copy maps it too). Sorted by character. {count} rows, Unicode {}.{}.{}.\n\
         pub(crate) static CONFUSABLES: &[(char, &str, bool)] = &[\n{rows}\n];\n",
        unicode_security::UNICODE_VERSION.0,
        unicode_security::UNICODE_VERSION.1,
        unicode_security::UNICODE_VERSION.2,
    );
    let dir = std::env::var("OUT_DIR").unwrap_or_else(|_| ".".into());
    let path = std::path::Path::new(&dir).join("confusables.rs");
    if let Err(e) = std::fs::write(&path, out) {
        panic!("writing {}: {e}", path.display());
    }
}

/// The SHA-256 of each model file built into the binary, as `GUARD_<NAME>_SHA256` for `env!`:
/// start-up used to hash the 7 MB of both at every start (for `config_rev` and the vectors'
/// fingerprint) though they can only change with the binary. A test checks each against the
/// bytes the binary holds.
fn embedded_digests() {
    use sha2::{Digest, Sha256};
    for (var, path) in [
        ("GUARD_BUILTIN_MODEL_SHA256", "models/guard-embedded.bin"),
        ("GUARD_BUILTIN_VECTORS_SHA256", "models/token-vectors.bin"),
    ] {
        println!("cargo:rerun-if-changed={path}");
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) => panic!("reading {path}: {e}"),
        };
        let hex: String = Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        println!("cargo:rustc-env={var}={hex}");
    }
}

/// The ASCII reading of a character: its own prototype, else its upper-case form's (Cyrillic
/// `н` has the prototype `ʜ`, a small capital, but `Н` is `H`), with combining marks taken off
/// (`exact` is false then). `None` when neither is ASCII.
fn reading(c: char) -> Option<(String, bool)> {
    let own = prototype(c);
    if own.is_some() {
        return own;
    }
    let mut upper = c.to_uppercase();
    match (upper.next(), upper.next()) {
        (Some(u), None) if u != c => prototype(u),
        _ => None,
    }
}

fn prototype(c: char) -> Option<(String, bool)> {
    let skeleton: String = unicode_security::skeleton(&c.to_string()).collect();
    let base: String = skeleton
        .chars()
        .filter(|d| !is_combining_mark(*d))
        .collect();
    let usable = !base.is_empty()
        && base.is_ascii()
        && base.len() <= MAX_READING
        && base.bytes().all(|b| b.is_ascii_graphic());
    usable.then(|| (base.to_ascii_lowercase(), base.len() == skeleton.len()))
}

fn is_ascii_letter(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_alphabetic())
}

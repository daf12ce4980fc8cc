//! The streaming output screen: arbitrary text cut into arbitrary chunks never leaves in clear
//! a character that the whole text's mask hides, and never panics. (The stream may mask more:
//! on runs of capitals and digits that only later text shows are not one IBAN, it has already
//! masked them; that is the safe direction.)
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

fn config() -> &'static guard::config::ConfigSet {
    static C: OnceLock<guard::config::ConfigSet> = OnceLock::new();
    C.get_or_init(|| {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        match guard::config::load(&root, &Default::default()) {
            Ok(c) => c,
            Err(e) => panic!("{e}"),
        }
    })
}

fuzz_target!(|input: (Vec<u8>, &str)| {
    let (cuts, text) = input;
    let p = &config().products["wallet-assistant"];
    let whole = guard::screens::output::screen(p, text);
    let mut stream = guard::screens::output::OutputStream::new(p);
    let mut out = String::new();
    let mut rest = text;
    for c in cuts {
        if rest.is_empty() {
            break;
        }
        let mut at = (c as usize).min(rest.len());
        while !rest.is_char_boundary(at) {
            at -= 1;
        }
        let (chunk, tail) = rest.split_at(at);
        out.push_str(&stream.push(chunk));
        rest = tail;
    }
    out.push_str(&stream.push(rest));
    let (tail, _) = stream.finish(p);
    out.push_str(&tail);
    if let Some(whole) = whole.text {
        let (w, o): (Vec<char>, Vec<char>) = (whole.chars().collect(), out.chars().collect());
        if w.len() != o.len() {
            // Replacements (`[internal]`) change lengths: then the texts must be equal.
            assert_eq!(out, whole, "streamed and whole masking differ");
        }
        for (i, (a, b)) in w.iter().zip(&o).enumerate() {
            assert!(
                a == b || (*b == '*' && a.is_alphanumeric()),
                "the stream left {b:?} where the whole answer has {a:?} (at {i}): {out:?} vs {whole:?}"
            );
        }
    }
});

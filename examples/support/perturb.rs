//! Perturbations of a text drawn from Unicode's data, for the generated eval suites
//! (`examples/gen_form_suites.rs`) and the property tests (`tests/it/forms.rs`): a look-alike
//! is a character the confusables table reads as the letter it replaces
//! (`guard::text::look_alikes`), a stray mark any combining mark of U+0300–U+036F, an
//! invisible one of the default-ignorables people use to split words.

#![allow(dead_code)]

use sha2::{Digest, Sha256};

/// A deterministic generator seeded from a case name.
pub struct Rng(u64);

impl Rng {
    pub fn from_seed(seed: u64) -> Self {
        Rng(seed | 1)
    }

    pub fn new(seed: &str) -> Self {
        let h = Sha256::digest(seed.as_bytes());
        Rng(u64::from_le_bytes([h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7]]) | 1)
    }

    pub fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// The kinds of perturbation, each a change of one character (the spelled-out word aside).
#[derive(Clone, Copy, Debug)]
pub enum Perturbation {
    LookAlike,
    Symbol,
    Punctuation,
    StrayMark,
    Invisible,
    SpelledOut,
    BengaliSign,
}

pub const ALL: [Perturbation; 7] = [
    Perturbation::LookAlike,
    Perturbation::Symbol,
    Perturbation::Punctuation,
    Perturbation::StrayMark,
    Perturbation::Invisible,
    Perturbation::SpelledOut,
    Perturbation::BengaliSign,
];

/// Byte ranges of the words of `min` to 20 letters (ASCII or Bengali): white-space tokens
/// that are letters alone once punctuation is taken off their ends. A token with digits or a
/// long run (an account number, a base64 payload) is not a word to disguise.
pub fn words(text: &str, min: usize, bengali: bool) -> Vec<(usize, usize)> {
    let is_part = |c: char| {
        if bengali {
            ('\u{0980}'..='\u{09FF}').contains(&c) && !c.is_numeric()
        } else {
            c.is_ascii_alphabetic()
        }
    };
    let mut out = Vec::new();
    let mut at = 0;
    for token in text.split_inclusive(char::is_whitespace) {
        let start = at;
        at += token.len();
        let core = token.trim_matches(|c: char| c.is_whitespace() || c.is_ascii_punctuation());
        let Some(offset) = token.find(core) else {
            continue;
        };
        let n = core.chars().count();
        if !core.is_empty() && core.chars().all(is_part) && (min..=20).contains(&n) {
            out.push((start + offset, start + offset + core.len()));
        }
    }
    out
}

/// One perturbation of `text`, or `None` when the text has nothing it applies to.
pub fn perturb(text: &str, kind: Perturbation, rng: &mut Rng) -> Option<String> {
    let latin = words(text, 4, false);
    let bengali = words(text, 3, true);
    let in_word = |rng: &mut Rng, spans: &[(usize, usize)]| -> Option<(usize, usize, usize)> {
        let &(s, e) = rng.pick(spans);
        let chars: Vec<usize> = text[s..e].char_indices().map(|(i, _)| s + i).collect();
        // An inner character: not the first.
        let i = 1 + rng.below(chars.len().saturating_sub(1));
        Some((s, e, *chars.get(i)?))
    };
    match kind {
        Perturbation::LookAlike | Perturbation::Symbol | Perturbation::StrayMark => {
            if latin.is_empty() {
                return None;
            }
            let (_, _, at) = in_word(rng, &latin)?;
            let c = text[at..].chars().next()?;
            let lower = c.to_ascii_lowercase();
            let replacement: String = match kind {
                Perturbation::LookAlike => {
                    let options: Vec<char> = guard::text::look_alikes(lower).collect();
                    if options.is_empty() {
                        return None;
                    }
                    rng.pick(&options).to_string()
                }
                Perturbation::Symbol => {
                    let options: &[char] = match lower {
                        'a' => &['@', '4'],
                        'e' => &['€', '3'],
                        's' => &['$', '5'],
                        'o' => &['0'],
                        'i' => &['1', '!'],
                        't' => &['7'],
                        'l' => &['|'],
                        _ => return None,
                    };
                    rng.pick(options).to_string()
                }
                _ => {
                    let mark = char::from_u32(0x300 + rng.below(0x70) as u32)?;
                    format!("{c}{mark}")
                }
            };
            Some(format!(
                "{}{}{}",
                &text[..at],
                replacement,
                &text[at + c.len_utf8()..]
            ))
        }
        Perturbation::Punctuation | Perturbation::Invisible => {
            let spans = if latin.is_empty() { &bengali } else { &latin };
            if spans.is_empty() {
                return None;
            }
            let (_, _, at) = in_word(rng, spans)?;
            let insert = match kind {
                Perturbation::Punctuation => *rng.pick(&['-', '.', '_', '\'', '*', '·']),
                _ => *rng.pick(&['\u{200B}', '\u{200C}', '\u{200D}', '\u{2060}', '\u{00AD}']),
            };
            Some(format!("{}{}{}", &text[..at], insert, &text[at..]))
        }
        Perturbation::SpelledOut => {
            if latin.is_empty() {
                return None;
            }
            let &(s, e) = rng.pick(&latin);
            let spelled: Vec<String> = text[s..e].chars().map(String::from).collect();
            Some(format!("{}{}{}", &text[..s], spelled.join(" "), &text[e..]))
        }
        Perturbation::BengaliSign => {
            if bengali.is_empty() {
                return None;
            }
            let (_, _, at) = in_word(rng, &bengali)?;
            let prev = text[..at].chars().next_back()?;
            let insert = if matches!(prev, 'ড' | 'ঢ' | 'য') {
                '\u{200C}'
            } else {
                *rng.pick(&['\u{09BC}', '\u{200D}', '\u{200C}'])
            };
            Some(format!("{}{}{}", &text[..at], insert, &text[at..]))
        }
    }
}

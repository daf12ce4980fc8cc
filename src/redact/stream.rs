//! Masking text as it is generated: chunks in, masked text out as soon as nothing after it can
//! change how it is masked.
//!
//! What is held back, and why:
//!
//! - the last word (an e-mail, an identifier, a word that may be a kind or credential word);
//! - a run of digit groups that may still grow (it ends the text, or only a possible separator
//!   follows it), or whose kind the words after it may still decide ("483920 is your OTP"):
//!   until its sentence ends or the reach of those words has passed;
//! - the start of an IBAN, an e-mail address (`rina [at] exa…`) or an internal name
//!   (`Temenos `) that more text could complete.
//!
//! At most [`MAX_HOLD_BYTES`]: past that bound the text is released anyway and its digits
//! outside values already complete leave masked (fail closed: more masked than the whole
//! answer would be, never less). The words before what is held are kept as context, as far
//! back as the finder reads them.

use super::values;
use super::words::{CREDENTIAL_REACH_AFTER, CREDENTIAL_REACH_BEFORE};
use super::{Redacted, Redactor, Span};
use std::sync::Arc;

/// The most a stream holds back; a value longer than this is masked in pieces.
pub const MAX_HOLD_BYTES: usize = 512;

/// Masks text as it arrives, holding back only what could still change.
pub struct Stream {
    redactor: Arc<Redactor>,
    /// The text already emitted, unmasked, as far back as the words before a number are read.
    context: String,
    pending: String,
    emitted_chars: usize,
}

impl Stream {
    pub(crate) fn new(redactor: Arc<Redactor>) -> Self {
        Stream {
            redactor,
            context: String::new(),
            pending: String::new(),
            emitted_chars: 0,
        }
    }

    /// Add a chunk; returns what can leave now, masked.
    pub fn push(&mut self, chunk: &str) -> Redacted {
        self.pending.push_str(chunk);
        let (cut, found, forced_from) = self.safe_cut();
        // More than MAX_HOLD_BYTES arrived without a place to cut: the bound on memory forces
        // out text that may still be part of a value. Its digits outside the values already
        // complete in it leave masked, whatever the rest turns out to be; the complete values
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
    /// the cut too, as the whole answer would be. A cut never falls inside one of them.
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
        let keep = back_chars(&self.context, CREDENTIAL_REACH_BEFORE + 8);
        if keep > 0 {
            self.context.drain(..keep);
        }
        out
    }

    /// The values in what is held (byte ranges of `pending`), found with the left context and
    /// everything held on the right.
    fn complete_values(&self) -> Vec<Span> {
        if self.pending.is_empty() {
            return Vec::new();
        }
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

    /// Where the text that cannot change any more ends, never more than [`MAX_HOLD_BYTES`]
    /// back. When that bound forces the cut later than the safe place, the safe place comes
    /// back too, with the values complete in what is held: what lies between is released
    /// before it is complete.
    fn safe_cut(&self) -> (usize, Vec<Span>, Option<usize>) {
        let p = &self.pending;
        let floor = floor_char(p, p.len().saturating_sub(MAX_HOLD_BYTES));
        let mut cut = p.len();
        // The last word.
        if !p.ends_with(char::is_whitespace) {
            cut = cut.min(after_last_space(p));
        }
        // Digit runs that may grow or change kind, read with the context before them.
        let window = format!("{}{}", self.context, p);
        let from = self.context.len();
        let (unsettled, runs) = values::stream_holds(&window, from, CREDENTIAL_REACH_AFTER);
        if let Some(start) = unsettled {
            cut = cut.min(start - from);
        }
        // An IBAN, an e-mail address or an internal name that more text could complete.
        for start in [
            values::open_iban_start(p),
            super::email::open_start(p),
            self.redactor.open_name_start(p),
        ]
        .into_iter()
        .flatten()
        {
            cut = cut.min(start);
        }
        // Every value already complete in what is held, with the left context, as `emit` will
        // see it: a cut must not fall inside one.
        let found = self.complete_values();
        loop {
            cut = floor_char(p, cut);
            let before = cut;
            for &Span { start, end, .. } in &found {
                if start < cut && end > cut {
                    cut = floor_char(p, start);
                }
            }
            if cut < p.len() && cut > 0 && !p[..cut].ends_with(char::is_whitespace) {
                cut = after_last_space(&p[..cut]);
            }
            // Nor inside a run of digit groups: a card may cross a sentence end.
            for r in &runs {
                let (start, end) = (r.start - from, r.end - from);
                if start < cut && end > cut {
                    cut = floor_char(p, start);
                }
            }
            if cut == before {
                break;
            }
        }
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
}

/// Where the text after its last white space starts (0 without one). White space may be
/// several bytes long (NEL, NBSP, em space): `+ 1` would cut inside it.
fn after_last_space(s: &str) -> usize {
    s.char_indices()
        .rev()
        .find(|(_, c)| c.is_whitespace())
        .map_or(0, |(i, c)| i + c.len_utf8())
}

pub(crate) fn floor_char(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The byte offset `n` characters before the end of `s` (0 when it is shorter).
fn back_chars(s: &str, n: usize) -> usize {
    s.char_indices().rev().nth(n).map_or(0, |(i, _)| i)
}

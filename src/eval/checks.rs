//! What an answer let out, judged apart from the code that masked it: a value is *in clear*
//! when more of its letters and digits survive than the product's visible tail, read from the
//! answer as the output screen returned it; an internal name is *left* when its squashed form
//! (letters and digits, lower case) is still in the answer. The masker's own findings are never
//! consulted, so a value it did not find counts against it.

use super::suite::PlantedValue;
use crate::redact::{digit_char, Kind, Redactor};

/// The kinds of `values` left in clear in `masked`, the screen's output for `original`.
pub fn in_clear(
    redactor: &Redactor,
    original: &str,
    masked: &str,
    values: &[PlantedValue],
) -> Vec<Kind> {
    // The screen masks the normalised answer; masking keeps every character in place unless an
    // internal name was replaced, so the value sits at the same character offsets.
    let normal = crate::text::normalise_output(original);
    let aligned = normal.chars().count() == masked.chars().count();
    let mut out: Vec<Kind> = values
        .iter()
        .filter(|v| {
            let visible = redactor.visible(v.kind);
            let value = crate::text::normalise_output(&v.text);
            match aligned {
                true => shown_in_place(&normal, masked, &value, visible),
                false => shown_anywhere(masked, &value, visible),
            }
        })
        .map(|v| v.kind)
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// A secret character: a digit of any script or a letter.
fn secret(c: char) -> bool {
    digit_char(c).is_some() || c.is_alphabetic()
}

/// One character as compared: digits by value, letters lower-cased.
fn fold(c: char) -> char {
    match digit_char(c) {
        Some(d) => char::from_digit(d, 10).unwrap_or(c),
        None => c.to_lowercase().next().unwrap_or(c),
    }
}

/// At each place `value` occurs in `normal`: a secret character other than the last `visible`
/// ones is unchanged in `masked`.
fn shown_in_place(normal: &str, masked: &str, value: &str, visible: usize) -> bool {
    let masked: Vec<char> = masked.chars().collect();
    let chars: Vec<char> = value.chars().collect();
    let secrets: Vec<usize> = (0..chars.len()).filter(|i| secret(chars[*i])).collect();
    let hidden = &secrets[..secrets.len().saturating_sub(visible)];
    normal.match_indices(value).any(|(at, _)| {
        let start = normal[..at].chars().count();
        hidden
            .iter()
            .any(|i| masked.get(start + i) == Some(&chars[*i]))
    })
}

/// Where the answer's length changed: the value's hidden part (its secret characters, folded,
/// without the visible tail) appears as a run in the masked answer, read across the short
/// separators a value is written with.
fn shown_anywhere(masked: &str, value: &str, visible: usize) -> bool {
    let folded: String = value.chars().filter(|c| secret(*c)).map(fold).collect();
    let keep = folded.chars().count().saturating_sub(visible);
    let hidden: String = folded.chars().take(keep).collect();
    !hidden.is_empty() && runs(masked).iter().any(|r| r.contains(&hidden))
}

/// The answer's runs of secret characters, folded, joined across one separator of a value
/// (space, dash, dot, slash).
fn runs(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut run = String::new();
    let mut gap = false;
    for c in text.chars() {
        if secret(c) {
            run.push(fold(c));
            gap = false;
        } else if !gap && !run.is_empty() && matches!(c, ' ' | '-' | '.' | '/' | '\u{a0}') {
            gap = true;
        } else {
            out.push(std::mem::take(&mut run));
            gap = false;
        }
    }
    out.push(run);
    out.retain(|r| !r.is_empty());
    out
}

/// The product's internal names still in `masked` (squashed: letters and digits, lower case).
pub fn names_left(redactor: &Redactor, masked: &str) -> Vec<String> {
    let squash = |s: &str| -> String {
        s.chars()
            .filter(|c| secret(*c))
            .map(fold)
            .collect::<String>()
    };
    let text = squash(masked);
    redactor
        .names()
        .iter()
        .filter(|n| {
            let n = squash(n);
            !n.is_empty() && text.contains(&n)
        })
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn redactor() -> Redactor {
        Redactor::new(
            Kind::ALL.into_iter().collect::<BTreeSet<_>>(),
            &[],
            Vec::new(),
            vec!["wallet_ledger_api".into()],
            "[internal]",
        )
    }

    fn value(kind: Kind, text: &str) -> PlantedValue {
        PlantedValue {
            kind,
            text: text.into(),
        }
    }

    #[test]
    fn a_value_is_in_clear_when_more_than_its_visible_tail_survives() {
        let r = redactor();
        let card = value(Kind::Card, "4111 1111 1111 1111");
        let otp = value(Kind::Otp, "৪৮২৯১৩");
        let text = "Card 4111 1111 1111 1111, code ৪৮২৯১৩.";
        let rows: [(&str, Vec<Kind>); 5] = [
            ("Card **** **** **** 1111, code ******.", vec![]),
            ("Card 4111 **** **** 1111, code ******.", vec![Kind::Card]),
            ("Card **** **** **** 1111, code ****১৩.", vec![Kind::Otp]),
            (text, vec![Kind::Card, Kind::Otp]),
            // Lengths differ (a name replaced): the hidden part is looked for anywhere.
            (
                "[internal]: Card 4111-1111-1111-1111 code ******.",
                vec![Kind::Card],
            ),
        ];
        for (masked, expected) in rows {
            let got = in_clear(&r, text, masked, &[card.clone(), otp.clone()]);
            assert_eq!(got, expected, "{masked}");
        }
        assert_eq!(
            names_left(&r, "see Wallet-Ledger API"),
            vec!["wallet_ledger_api"]
        );
        assert!(names_left(&r, "see [internal]").is_empty());
    }
}

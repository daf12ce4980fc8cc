//! The turn's evidence: what its tool results stated. `POST /v1/tool-results` adds each
//! result's evidence to the turn in the gate's store ([`crate::screens::tools::Stores`]:
//! `add_evidence`, `evidence`), in process or in Redis, for the turn's lifetime
//! (`[tool_gate] turn_ttl_seconds`); the lookup check of the answer reads it back, so a figure
//! the answer states can be matched against what a tool returned.
//!
//! Figures are canonical ([`super::figures::stated`]); identifiers are read by the shared value
//! finder ([`crate::redact::values`]) and kept canonical: a phone in its national form
//! (`+8801711000000` is `01711000000`), an account, NID or IBAN as its digits (an IBAN's letters
//! upper-cased), a card only as its last four digits. OTPs and PINs are never kept.

use super::figures;
use crate::redact::values::{values, ValueKind};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// What one turn's tool results stated: kept in the gate's store for the turn's lifetime.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Evidence {
    /// Canonical figures (`figures::stated(..).canonical`) of every result of the turn.
    pub figures: BTreeSet<String>,
    /// Canonical identifiers the results named (phone / wallet, account, card last four...).
    pub identifiers: BTreeSet<String>,
    /// Results kept this turn, ok or not (0 = the turn called no tool).
    pub results: u32,
}

impl Evidence {
    /// The evidence of one result's text (figures and identifiers it states). `results` is 1:
    /// the text is one result.
    pub fn of_text(text: &str) -> Evidence {
        // Every figure the text states, and the length of each list it holds (a list of three
        // transactions grounds "3 transactions").
        let mut figures: BTreeSet<String> = figures::canonical_of(text).into_iter().collect();
        figures.extend(figures::counted(text));
        let identifiers = values(text)
            .into_iter()
            .filter_map(|v| identifier(v.kind, &v.digits))
            .collect();
        Evidence {
            figures,
            identifiers,
            results: 1,
        }
    }

    /// `other` added in (sets unioned, counts added).
    pub fn merge(&mut self, other: &Evidence) {
        self.figures.extend(other.figures.iter().cloned());
        self.identifiers.extend(other.identifiers.iter().cloned());
        self.results = self.results.saturating_add(other.results);
    }

    /// Figures and identifiers together: what a store holds per turn (its limit counts them).
    pub fn entries(&self) -> usize {
        self.figures.len() + self.identifiers.len()
    }
}

/// A value's canonical identifier, if it is one the evidence keeps.
fn identifier(kind: ValueKind, digits: &str) -> Option<String> {
    match kind {
        ValueKind::Phone => Some(national_phone(digits)),
        ValueKind::Account | ValueKind::Nid | ValueKind::Iban => Some(digits.to_string()),
        ValueKind::Card => {
            let n = digits.len();
            (n >= 4).then(|| digits[n - 4..].to_string())
        }
        // Credentials are never kept; the rest are figures, not identifiers.
        _ => None,
    }
}

/// A Bangladeshi mobile in its national form: `8801711000000` → `01711000000`.
fn national_phone(digits: &str) -> String {
    match digits.strip_prefix("880") {
        Some(rest) if rest.len() == 10 && rest.starts_with('1') => format!("0{rest}"),
        _ => digits.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_states_figures_and_identifiers() {
        let e = Evidence::of_text(
            "Wallet +8801711000000: balance ৳12,500.00 on account 123456789012; card 4111 1111 1111 1111. OTP 483920.",
        );
        assert!(e.figures.contains("12500"), "{e:?}");
        assert!(e.identifiers.contains("01711000000"), "{e:?}");
        assert!(e.identifiers.contains("1111"), "{e:?}");
        assert!(!e.identifiers.iter().any(|i| i == "483920"), "{e:?}");
        assert!(!e.identifiers.iter().any(|i| i.len() >= 13), "{e:?}");
        assert_eq!(e.results, 1);
    }

    #[test]
    fn merge_unions_and_adds() {
        let mut a = Evidence::of_text("balance 500");
        let b = Evidence::of_text("balance 500 and 700");
        a.merge(&b);
        assert_eq!(a.results, 2);
        assert_eq!(a.figures.len(), 2);
        a.merge(&Evidence::default());
        assert_eq!(a.results, 2);
    }
}

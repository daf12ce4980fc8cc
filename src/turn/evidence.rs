//! What one turn's tool results stated, kept as the turn's evidence.
//!
//! A placeholder of the contract's struct (the `results` branch owns this file and its version
//! wins at merge): the figures every result states, canonical, plus the lengths of the JSON
//! arrays a result holds ([`figures::counted`]: "you have 3 transactions" is grounded by a list
//! of three), and how many results the turn kept.

use super::figures;
use std::collections::BTreeSet;

/// What one turn's tool results stated: kept in the gate's store for the turn's lifetime.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Evidence {
    /// Canonical figures (`figures::stated(..).canonical`) of every result of the turn.
    pub figures: BTreeSet<String>,
    /// Canonical identifiers the results named (phone / wallet, account, card last four...).
    pub identifiers: BTreeSet<String>,
    /// Results kept this turn, ok or not (0 = the turn called no tool).
    pub results: u32,
}

impl Evidence {
    /// The evidence of one result's text (figures and identifiers it states).
    pub fn of_text(text: &str) -> Evidence {
        let mut figures: BTreeSet<String> = figures::canonical_of(text).into_iter().collect();
        figures.extend(figures::counted(text));
        Evidence {
            figures,
            identifiers: BTreeSet::new(),
            results: 1,
        }
    }

    /// `other` added in (sets unioned, counts added).
    pub fn merge(&mut self, other: &Evidence) {
        self.figures.extend(other.figures.iter().cloned());
        self.identifiers.extend(other.identifiers.iter().cloned());
        self.results = self.results.saturating_add(other.results);
    }
}

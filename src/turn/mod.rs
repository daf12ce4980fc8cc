//! The turn's shared pieces: what one agent turn's tool results stated (its evidence), the
//! figures a text states, and the lookup check of the answer's figures against them.
//!
//! - [`figures`]   the figure finder: every amount, count, percentage a text states, canonical
//! - [`evidence`]  what a turn's tool results stated (kept in the gate's store for the turn)
//! - [`lookup`]    the lookup check's settings, its evaluation and the once-per-turn question

pub mod evidence;
pub mod figures;
pub mod lookup;

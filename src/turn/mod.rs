//! The turn's shared pieces: what one agent turn's tool results stated (its evidence, kept in
//! the gate's store), the figures a text states, per-tool health, and the lookup check of the
//! answer's figures against the evidence. The routes of the turn (`/v1/tool-calls`,
//! `/v1/tool-results`, `/v1/screen-output`) read and write them through
//! [`crate::screens::tools::Stores`].
//!
//! - [`figures`]   the figure finder: every amount, count, percentage a text states, canonical
//! - [`evidence`]  what a turn's tool results stated (kept in the gate's store for the turn)
//! - [`health`]    per-tool health windows
//! - [`lookup`]    the lookup check's settings, its evaluation and the once-per-turn question

pub mod evidence;
pub mod figures;
pub mod health;
pub mod lookup;

//! The turn's shared pieces: what one agent turn's tool results stated (its evidence, kept in
//! the gate's store), the figures a text states, and per-tool health. The routes of the turn
//! (`/v1/tool-calls`, `/v1/tool-results`, `/v1/screen-output`) read and write them through
//! [`crate::screens::tools::Stores`].

pub mod evidence;
pub mod figures;
pub mod health;

//! The input screen: every user message before the agent sees it.
//!
//! - [`question`]  the question computed once: normalised, hidden, folded, decoded, outbound
//! - [`cache`]     the verdict cache
//! - [`pipeline`]  the only place the stage order lives; fail-open/closed policy
//! - [`stages`]    script → banglish → lang_id → signatures → policy → guard → judge

pub mod cache;
pub mod pipeline;
pub mod question;
pub mod section;
pub mod stages;

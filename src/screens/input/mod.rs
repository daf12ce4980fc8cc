//! The input screen: every user message before the agent sees it.
//!
//! - [`question`]  the question computed once: normalised, hidden, folded, skeleton, decoded, outbound
//! - [`decode`]    what is cheap to decode (entities, escapes, base64, hex, Morse, ROT13, ...)
//! - [`segments`]  code fences, JSON, YAML, templates and tags taken out to be screened alone
//! - [`cache`]     the verdict cache
//! - [`pipeline`]  the only place the stage order lives; fail-open/closed policy
//! - [`stages`]    script → banglish → lang_id → signatures → policy → guard → judge

pub mod cache;
pub mod decode;
pub mod pipeline;
pub mod question;
pub mod segments;
pub mod stages;

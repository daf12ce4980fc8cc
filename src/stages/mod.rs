//! The six stages, one module each, in pipeline order. Each stage only *evaluates*; the order
//! they run in and what their outcomes mean for the verdict live in `crate::pipeline` alone.

pub mod banglish;
pub mod guard;
pub mod judge;
pub mod lang_id;
pub mod script;
pub mod signatures;

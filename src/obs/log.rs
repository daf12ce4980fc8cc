//! The service's own log: one JSON object per line on stderr, so that stdout carries the audit
//! stream alone (`GUARD_AUDIT_LOG=stdout`, the default of `guard serve`) and a log collector
//! can read both without guessing where a line ends.
//!
//! A line is `{"ts": "<RFC 3339 UTC>", "level": "info"|"warn"|"error", "msg": "...", ...}`, the
//! event's own fields after `msg`. Never screened text: the callers log configuration,
//! addresses, counts and stable codes only.

use serde_json::{Map, Value};
use std::io::Write;

/// How much an event matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Info,
    Warn,
    Error,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Info => "info",
            Level::Warn => "warn",
            Level::Error => "error",
        }
    }
}

/// One log line: `msg` and the fields of `fields` (an object; anything else is kept as
/// `"fields"`).
pub fn line(level: Level, msg: &str, fields: Value) -> String {
    let mut o = Map::new();
    let ts = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    o.insert("ts".into(), ts.into());
    o.insert("level".into(), level.as_str().into());
    o.insert("msg".into(), msg.into());
    match fields {
        Value::Object(f) => o.extend(f),
        Value::Null => {}
        other => {
            o.insert("fields".into(), other);
        }
    }
    Value::Object(o).to_string()
}

/// Write one line on stderr (a failed write is dropped: the log never stops the service).
pub fn event(level: Level, msg: &str, fields: Value) {
    let mut text = line(level, msg, fields);
    text.push('\n');
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

pub fn info(msg: &str, fields: Value) {
    event(Level::Info, msg, fields);
}

pub fn warn(msg: &str, fields: Value) {
    event(Level::Warn, msg, fields);
}

pub fn error(msg: &str, fields: Value) {
    event(Level::Error, msg, fields);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_line_is_one_json_object_with_time_level_message_and_fields() {
        let text = line(
            Level::Warn,
            "reload \"refused\"\n",
            json!({"problems": ["a: b"]}),
        );
        assert!(!text.contains('\n'), "{text}");
        let v: Value = serde_json::from_str(&text).unwrap_or_default();
        assert_eq!(v["level"], "warn");
        assert_eq!(v["msg"], "reload \"refused\"\n");
        assert_eq!(v["problems"][0], "a: b");
        let ts = v["ts"].as_str().unwrap_or_default();
        assert!(chrono::DateTime::parse_from_rfc3339(ts).is_ok(), "{ts}");
        let bare: Value =
            serde_json::from_str(&line(Level::Info, "up", Value::Null)).unwrap_or_default();
        assert_eq!(bare.as_object().map(|o| o.len()), Some(3));
    }
}

//! Canonical arguments: two calls are the same call when their tool and canonical arguments are
//! equal. Key order and JSON white space do not count (the text is parsed), numbers are equal by
//! value (`1`, `1.0`, `1e0` and `"1"` are not all equal: only the first three, since a string is
//! a string), and text is compared in Unicode NFC.
//!
//! A tool that declares its arguments' types is hashed by meaning instead
//! (`args::call_hash_by_meaning`, built on the pieces here): each declared argument as the gate read it (the amount whatever
//! its spelling, the canonical phone number, trimmed text, the records as a set), an optional
//! one given as its default as if absent. Undeclared arguments stay literal, as above.

use serde_json::Value;
use sha2::{Digest, Sha256};
use unicode_normalization::UnicodeNormalization;

/// The canonical text of a JSON value: sorted keys, no white space, numbers by value.
pub fn canonical(value: &Value) -> String {
    let mut out = String::new();
    write(value, &mut out);
    out
}

fn write(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&number(n)),
        Value::String(s) => string(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            object(map.iter(), out);
        }
    }
}

/// An object's entries with their keys in NFC, sorted.
pub(crate) fn object<'a>(entries: impl Iterator<Item = (&'a String, &'a Value)>, out: &mut String) {
    let mut entries: Vec<(std::borrow::Cow<'a, str>, &Value)> = entries
        .map(|(k, v)| {
            let key = if k.is_ascii() {
                std::borrow::Cow::Borrowed(k.as_str())
            } else {
                std::borrow::Cow::Owned(k.nfc().collect())
            };
            (key, v)
        })
        .collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    out.push('{');
    for (i, (k, v)) in entries.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        string(&k, out);
        out.push(':');
        write(v, out);
    }
    out.push('}');
}

/// A string in NFC, JSON-escaped and quoted.
pub(crate) fn string(s: &str, out: &mut String) {
    // Plain ASCII (the common case) is already NFC and needs no escaping.
    if s.bytes()
        .all(|b| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\')
    {
        out.push('"');
        out.push_str(s);
        out.push('"');
        return;
    }
    let nfc: String = s.nfc().collect();
    out.push_str(&Value::String(nfc).to_string());
}

/// A number by value: an integral value is written as an integer whatever its spelling.
fn number(n: &serde_json::Number) -> String {
    if let Some(i) = n.as_i64() {
        return i.to_string();
    }
    if let Some(u) = n.as_u64() {
        return u.to_string();
    }
    match n.as_f64() {
        Some(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => (f as i64).to_string(),
        Some(f) => format!("{f:e}"),
        None => n.to_string(),
    }
}

/// What identifies a call: its tool and canonical arguments, hashed.
pub fn call_hash(tool: &str, args: &Value) -> String {
    match args {
        Value::Object(map) => call_hash_of_object(tool, map),
        other => hash_text(tool, &canonical(other)),
    }
}

/// [`call_hash`] of an arguments object, without copying it.
pub fn call_hash_of_object(tool: &str, args: &serde_json::Map<String, Value>) -> String {
    let mut text = String::with_capacity(128);
    object(args.iter(), &mut text);
    hash_text(tool, &text)
}

/// The hash of a tool's name and a canonical text of its arguments.
pub(crate) fn hash_text(tool: &str, canonical: &str) -> String {
    let mut h = Sha256::new();
    h.update(tool.as_bytes());
    h.update([0u8]);
    h.update(canonical.as_bytes());
    hex::encode(&h.finalize()[..16])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Value {
        serde_json::from_str(s).unwrap_or(Value::Null)
    }

    #[test]
    fn key_order_white_space_and_number_spelling_do_not_count() {
        let a = parse(r#"{"amount": 500, "to": "017", "memo": {"b": 1, "a": [1, 2.0]}}"#);
        let b = parse(r#"{"memo":{"a":[1.0,2],"b":1e0},"to":"017","amount":5.0e2}"#);
        assert_eq!(canonical(&a), canonical(&b));
        assert_eq!(call_hash("send", &a), call_hash("send", &b));
    }

    #[test]
    fn different_values_tools_and_types_differ() {
        let a = parse(r#"{"amount": 500}"#);
        assert_ne!(
            call_hash("send", &a),
            call_hash("send", &parse(r#"{"amount": 501}"#))
        );
        assert_ne!(call_hash("send", &a), call_hash("sent", &a));
        assert_ne!(
            call_hash("send", &a),
            call_hash("send", &parse(r#"{"amount": "500"}"#))
        );
        assert_ne!(
            call_hash("send", &a),
            call_hash("send", &parse(r#"{"amount": 500.5}"#))
        );
    }

    #[test]
    fn text_is_compared_in_nfc() {
        // "é" precomposed and as e + combining acute.
        let a = Value::String("caf\u{e9}".into());
        let b = Value::String("cafe\u{301}".into());
        assert_eq!(canonical(&a), canonical(&b));
    }
}

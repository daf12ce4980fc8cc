//! The caller: whose turn it is, as the platform knows it from its own authenticated session.
//! Every screen reads the same one: the gate's entitlement (a call may touch only the caller's
//! records), the question screen's `#others_record` detectors, the context screen's `owner`.
//!
//! ```json
//! {"id": "cust-81", "role": "customer", "records": {"wallet": ["01711000000"]}}
//! {"id": "op-17", "role": "officer", "branch": "DHK-01",
//!  "records": {"customer": ["CIF-1001"]}, "scope": {"account": ["0101"]}}
//! ```
//!
//! - `records`: per record kind (the `kind` of the policy's `type = "record"` arguments), the
//!   ids the caller may touch, in any spelling the gate's readers accept (`01711000000` is
//!   `+8801711000000`; `cif-1001` is `CIF-1001`; Bengali digits are digits).
//! - `scope` (staff): per kind, id prefixes the caller may touch as a whole (a branch's
//!   accounts all start with its code): a record whose canonical id starts with one of them is
//!   the caller's too. Only for `format = "id"` kinds; a prefix has at least two characters.
//! - `role`: gates tools that declare `roles` in the policy. `branch`: a label for the audit
//!   (hashed) and for the platform's own use: the guard does not know which branch a record
//!   belongs to, so the platform says it through `records` or `scope`.
//!
//! The caller is trusted input: the platform sets it from its session, never from the model's
//! output or the customer's text. A caller that is not an object, or whose records are not
//! strings, is `422 invalid_caller`: a caller the guard cannot read is never guessed at.

use crate::screens::tools::args::{self, ReadSettings, RecordFormat};
use serde_json::Value;
use std::collections::{BTreeMap, HashSet};

/// Records a caller may carry in all (kinds added up): a bigger set belongs in a scope.
pub const MAX_CALLER_RECORDS: usize = 10_000;

/// A caller as the platform sent it, checked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Caller {
    pub id: String,
    pub role: Option<String>,
    pub branch: Option<String>,
    /// Record ids by kind, as sent (each is read in its kind's format when compared).
    pub records: BTreeMap<String, Vec<String>>,
    /// Id prefixes by kind (staff scope), canonical (upper-cased, ASCII digits).
    pub scope: BTreeMap<String, Vec<String>>,
}

impl Caller {
    /// A caller with only an id (the context route's old form: `"caller": "<owner id>"`).
    pub fn with_id(id: &str) -> Caller {
        Caller {
            id: id.to_string(),
            ..Caller::default()
        }
    }

    /// The `caller` of a request: absent or `null` is none; anything but an object with a
    /// string `id` and string records is the message of a `422 invalid_caller`.
    pub fn from_json(v: Option<Value>) -> Result<Option<Caller>, String> {
        let map = match v {
            None | Some(Value::Null) => return Ok(None),
            Some(Value::Object(m)) => m,
            Some(_) => return Err(SHAPE.into()),
        };
        let id = match map.get("id") {
            Some(Value::String(s)) if !s.trim().is_empty() && s.chars().count() <= 256 => {
                s.trim().to_string()
            }
            Some(Value::Number(n)) => n.to_string(),
            _ => return Err("`caller.id` is required: a string of 1 to 256 characters".into()),
        };
        let label = |k: &str| match map.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if s.chars().count() <= 256 => Ok(Some(s.trim().to_string())),
            Some(_) => Err(format!(
                "`caller.{k}` is a string of at most 256 characters"
            )),
        };
        let role = label("role")?;
        let branch = label("branch")?;
        let records = kinds(map.get("records"), "records")?;
        let total: usize = records.values().map(Vec::len).sum();
        if total > MAX_CALLER_RECORDS {
            return Err(format!(
                "`caller.records` holds at most {MAX_CALLER_RECORDS} ids: name a `scope` instead"
            ));
        }
        let mut scope = kinds(map.get("scope"), "scope")?;
        for prefixes in scope.values_mut() {
            for p in prefixes.iter_mut() {
                *p = canonical_prefix(p).ok_or_else(|| {
                    "`caller.scope` prefixes are 2 or more letters and digits".to_string()
                })?;
            }
        }
        Ok(Some(Caller {
            id,
            role,
            branch,
            records,
            scope,
        }))
    }

    /// The caller's records of `kind`, canonical in `format` (an id that format cannot read
    /// is left out: it matches nothing).
    pub fn canonical(
        &self,
        kind: &str,
        format: RecordFormat,
        read: &ReadSettings,
    ) -> HashSet<String> {
        let mut out = HashSet::new();
        for r in self.records.get(kind).into_iter().flatten() {
            if let Ok(ids) = args::records(&Value::String(r.clone()), format, read) {
                out.extend(ids);
            }
        }
        out
    }

    /// Whether a canonical record id of `kind` is within the caller's scope (a prefix).
    pub fn scope_holds(&self, kind: &str, format: RecordFormat, canonical: &str) -> bool {
        format == RecordFormat::Id
            && self
                .scope
                .get(kind)
                .is_some_and(|ps| ps.iter().any(|p| canonical.starts_with(p.as_str())))
    }

    /// Every record of every kind as the question screen compares numbers: the phone form of
    /// each (when it reads as one), its id form, and its digits alone.
    pub fn numbers(&self, read: &ReadSettings) -> CallerNumbers {
        let mut out = HashSet::new();
        for r in self.records.values().flatten() {
            let v = Value::String(r.clone());
            for format in [RecordFormat::Phone, RecordFormat::Id] {
                if let Ok(ids) = args::records(&v, format, read) {
                    out.extend(ids);
                }
            }
            let digits = ascii_digits(r);
            if digits.len() >= 4 {
                out.insert(digits);
            }
        }
        CallerNumbers {
            numbers: out,
            country_code: read.country_code.clone(),
        }
    }

    /// Whether `owner` (a document's owner) is the caller: its id, or one of its records.
    pub fn owns(&self, owner: &str, read: &ReadSettings) -> bool {
        let owner = owner.trim();
        if owner == self.id {
            return true;
        }
        let numbers = self.numbers(read);
        let v = Value::String(owner.to_string());
        [RecordFormat::Phone, RecordFormat::Id]
            .into_iter()
            .any(|f| {
                args::records(&v, f, read)
                    .is_ok_and(|ids| ids.len() == 1 && numbers.numbers.contains(&ids[0]))
            })
    }
}

/// A caller's records as the question screen compares the numbers a question names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallerNumbers {
    /// Canonical: phone form, id form and digits alone of every record.
    numbers: HashSet<String>,
    /// The product's phone country code (national numbers are read with it).
    country_code: String,
}

impl CallerNumbers {
    /// Whether a number found in a question (its digits, ASCII) is one of the caller's.
    pub fn holds(&self, digits: &str) -> bool {
        self.numbers.contains(digits)
            || args::phone(digits, &self.country_code).is_some_and(|p| self.numbers.contains(&p))
    }

    /// A stable fingerprint of the set (for cache keys): its entries, sorted.
    pub fn fingerprint(&self) -> String {
        let mut sorted: Vec<&str> = self.numbers.iter().map(String::as_str).collect();
        sorted.sort_unstable();
        crate::screens::tools::canonical::hash_text("caller", &sorted.join("\u{1}"))
    }
}

const SHAPE: &str =
    "`caller` must be an object: {\"id\": \"...\", \"records\": {\"<kind>\": [\"<id>\", ...]}}";

/// `records` or `scope`: an object of lower-case kinds, each an array of non-empty strings.
fn kinds(v: Option<&Value>, key: &str) -> Result<BTreeMap<String, Vec<String>>, String> {
    let map = match v {
        None | Some(Value::Null) => return Ok(BTreeMap::new()),
        Some(Value::Object(m)) => m,
        Some(_) => {
            return Err(format!(
                "`caller.{key}` must be an object: {{\"<kind>\": [\"<id>\", ...]}}"
            ))
        }
    };
    let mut out = BTreeMap::new();
    for (kind, ids) in map {
        let Value::Array(items) = ids else {
            return Err(format!(
                "`caller.{key}.{}` must be an array of strings",
                shown(kind)
            ));
        };
        let mut list = Vec::with_capacity(items.len());
        for item in items {
            match item {
                Value::String(s) if !s.trim().is_empty() && s.chars().count() <= 256 => {
                    list.push(s.clone())
                }
                _ => {
                    return Err(format!(
                        "`caller.{key}.{}` holds something that is not a string id: send each id as a string",
                        shown(kind)
                    ))
                }
            }
        }
        out.insert(kind.clone(), list);
    }
    Ok(out)
}

/// A scope prefix, canonical as record ids are (upper-cased, digits as ASCII); `None` when it
/// is shorter than two characters or holds anything but letters, digits, `-` and `_`.
fn canonical_prefix(p: &str) -> Option<String> {
    let mut out = String::new();
    for c in p.trim().chars() {
        if let Some(d) = crate::redact::digit_char(c) {
            out.push(char::from(b'0' + d as u8));
        } else if c.is_alphanumeric() || matches!(c, '-' | '_') {
            out.extend(c.to_uppercase());
        } else {
            return None;
        }
    }
    (out.chars().count() >= 2).then_some(out)
}

fn ascii_digits(s: &str) -> String {
    s.chars()
        .filter_map(crate::redact::digit_char)
        .map(|d| char::from(b'0' + d as u8))
        .collect()
}

fn shown(k: &str) -> String {
    k.chars().filter(|c| !c.is_control()).take(32).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_caller_is_an_object_with_string_records() {
        let ok = Caller::from_json(Some(json!({
            "id": "c1", "role": "customer",
            "records": {"wallet": ["01711000000"]}, "scope": {"account": ["dhk01"]}
        })));
        let c = ok.ok().flatten().unwrap_or_default();
        assert_eq!(c.id, "c1");
        assert_eq!(c.scope["account"], ["DHK01"]);
        assert_eq!(Caller::from_json(None), Ok(None));
        for bad in [
            json!("c1"),
            json!(["c1"]),
            json!({"records": {}}),
            json!({"id": "c1", "records": ["01711000000"]}),
            json!({"id": "c1", "records": {"wallet": [1711000000]}}),
            json!({"id": "c1", "records": {"wallet": "01711000000"}}),
            json!({"id": "c1", "records": {"wallet": [{"id": "x"}]}}),
            json!({"id": "c1", "role": 3}),
            json!({"id": "c1", "scope": {"account": ["*"]}}),
        ] {
            assert!(Caller::from_json(Some(bad.clone())).is_err(), "{bad}");
        }
    }

    #[test]
    fn records_compare_canonically() {
        let c = Caller::from_json(Some(json!({
            "id": "c1", "records": {"wallet": ["01711-000000"], "customer": ["cif-7"]}
        })))
        .ok()
        .flatten()
        .unwrap_or_default();
        let read = ReadSettings::default();
        assert!(c
            .canonical("wallet", RecordFormat::Phone, &read)
            .contains("+8801711000000"));
        assert!(c
            .canonical("customer", RecordFormat::Id, &read)
            .contains("CIF-7"));
        assert!(c.owns("+880 1711 000000", &read));
        assert!(c.owns("c1", &read));
        assert!(!c.owns("01811000000", &read));
        assert!(c.numbers(&read).holds("01711000000"));
        assert!(c.numbers(&read).holds("8801711000000"));
        assert!(!c.numbers(&read).holds("01811000000"));
    }
}

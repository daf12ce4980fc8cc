//! The gate's wire: a `/v1/tool-calls` body read so that it can only mean one thing.
//!
//! - **No duplicate keys, anywhere.** `{"tool": "close_wallet", "tool": "get_balance"}` is two
//!   calls to two parsers: serde_json keeps the last, many executors the first. The body is
//!   parsed with a duplicate-detecting visitor ([`parse_strict`]); a key given twice in any
//!   object (top level, a call, its arguments, nested objects, the JSON text of an `arguments`
//!   string) refuses the whole body, naming the key's path and never a value.
//! - **One shape per call** ([`read_call`]). Accepted, and nothing else:
//!   - `{"id", "tool", "args"}` (the gate's own), and its kin `{"id", "name", "arguments"}`
//!     (MCP's `tools/call`), `{"id", "name", "args"}` (LangChain's `ToolCall`): one name key
//!     (`tool` or `name`) and at most one arguments key (`args` or `arguments`), an object or
//!     its JSON text;
//!   - OpenAI's `{"id", "type": "function", "function": {"name", "arguments": "<JSON text>"}}`,
//!     with nothing of the flat shape beside `function`.
//!
//!   A call naming its tool twice (`tool` and `name`, `tool` and `function.name`), giving its
//!   arguments twice, mixing the two shapes, spelling a key the gate reads in another case or
//!   form (`Tool`, `ＴＯＯＬ`), or carrying a key that another shape names a tool or holds
//!   arguments in (Anthropic's and Bedrock's `input`, the AI SDK's `toolName`, OpenAI's old
//!   `function_call`, LangChain's `action_input`: any key whose name speaks of a tool, a
//!   function, an action, a method, a name or arguments, ids and types aside) is
//!   `ambiguous_call`: skipped with a message, like every other call the gate cannot vouch
//!   for. The rest of the round is decided as usual.

use super::args::fold_name;
use super::ProposedCall;
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use std::cell::RefCell;
use std::fmt;

/// Why a body cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// A key given twice in one object; its path (`calls[2].args.amount`).
    #[error("the key `{0}` is given twice: send each key once")]
    DuplicateKey(String),
    /// Not JSON (serde_json's message: a position, never the text).
    #[error("the body is not valid JSON: {0}")]
    Malformed(String),
}

/// JSON text parsed into a [`Value`], refusing a key given twice in any object.
///
/// Costs what `serde_json::from_slice::<Value>` costs: the same visitor, plus an entry look-up
/// per key that the map insert makes anyway. The path is only written out when a duplicate is
/// found. serde_json's recursion limit (128 levels) still holds.
pub fn parse_strict(bytes: &[u8]) -> Result<Value, WireError> {
    parse_with(&mut serde_json::Deserializer::from_slice(bytes), None)
}

/// [`parse_strict`] of JSON text found at `at` (an `arguments` string): a duplicate inside it
/// is named by the whole path.
pub fn parse_strict_at(text: &str, at: &str) -> Result<Value, WireError> {
    let root = Path {
        seg: Seg::Root(at),
        parent: None,
    };
    parse_with(&mut serde_json::Deserializer::from_str(text), Some(&root))
}

fn parse_with<'de, R: serde_json::de::Read<'de>>(
    de: &mut serde_json::Deserializer<R>,
    root: Option<&Path<'_>>,
) -> Result<Value, WireError> {
    let duplicate = RefCell::new(None);
    let seed = Seed {
        path: root,
        duplicate: &duplicate,
    };
    let value = seed
        .deserialize(&mut *de)
        .and_then(|v| de.end().map(|()| v));
    match (value, duplicate.into_inner()) {
        (_, Some(path)) => Err(WireError::DuplicateKey(path)),
        (Ok(v), None) => Ok(v),
        (Err(e), None) => Err(WireError::Malformed(e.to_string())),
    }
}

/// Where a value is, as a list of steps kept on the stack while parsing.
#[derive(Clone, Copy)]
enum Seg<'a> {
    Root(&'a str),
    Key(&'a str),
    Index(usize),
}

struct Path<'a> {
    seg: Seg<'a>,
    parent: Option<&'a Path<'a>>,
}

impl Path<'_> {
    /// `calls[0].args.amount`; keys other than plain names are quoted, long ones cut.
    fn render(&self) -> String {
        let mut segs = Vec::new();
        let mut at = Some(self);
        while let Some(p) = at {
            segs.push(p.seg);
            at = p.parent;
        }
        let mut out = String::new();
        for seg in segs.into_iter().rev() {
            match seg {
                Seg::Root(r) => out.push_str(r),
                Seg::Index(i) => out.push_str(&format!("[{i}]")),
                Seg::Key(k) => {
                    let plain = !k.is_empty()
                        && k.len() <= 64
                        && k.bytes()
                            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
                    if plain {
                        if !out.is_empty() {
                            out.push('.');
                        }
                        out.push_str(k);
                    } else {
                        let cut: String = k.chars().take(64).collect();
                        out.push_str(&format!("[{}]", Value::String(cut)));
                    }
                }
            }
        }
        out
    }
}

/// The visitor: a [`Value`] like serde_json's own, with a path and a place to report a
/// duplicate.
#[derive(Clone, Copy)]
struct Seed<'p, 'c> {
    path: Option<&'p Path<'p>>,
    duplicate: &'c RefCell<Option<String>>,
}

impl<'de> DeserializeSeed<'de> for Seed<'_, '_> {
    type Value = Value;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Seed<'_, '_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Value, E> {
        Ok(Value::Number(n.into()))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Value, E> {
        Ok(Value::Number(n.into()))
    }
    fn visit_f64<E>(self, n: f64) -> Result<Value, E> {
        Ok(Number::from_f64(n).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, s: &str) -> Result<Value, E> {
        Ok(Value::String(s.to_string()))
    }
    fn visit_string<E>(self, s: String) -> Result<Value, E> {
        Ok(Value::String(s))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1024));
        loop {
            let here = Path {
                seg: Seg::Index(items.len()),
                parent: self.path,
            };
            let seed = Seed {
                path: Some(&here),
                duplicate: self.duplicate,
            };
            match seq.next_element_seed(seed)? {
                Some(v) => items.push(v),
                None => return Ok(Value::Array(items)),
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            match out.entry(key) {
                serde_json::map::Entry::Occupied(taken) => {
                    let here = Path {
                        seg: Seg::Key(taken.key()),
                        parent: self.path,
                    };
                    *self.duplicate.borrow_mut() = Some(here.render());
                    return Err(de::Error::custom("duplicate key"));
                }
                serde_json::map::Entry::Vacant(slot) => {
                    let here = Path {
                        seg: Seg::Key(slot.key()),
                        parent: self.path,
                    };
                    let seed = Seed {
                        path: Some(&here),
                        duplicate: self.duplicate,
                    };
                    let value = map.next_value_seed(seed)?;
                    slot.insert(value);
                }
            }
        }
        Ok(Value::Object(out))
    }
}

// ---------------------------------------------------------------------------------------------
// Call shapes

/// The keys the flat shapes name their tool with, and give their arguments in.
const NAME_KEYS: [&str; 2] = ["tool", "name"];
const ARGS_KEYS: [&str; 2] = ["args", "arguments"];
/// What a key of another call shape says it holds, as a part of its folded name (`_` and `-`
/// dropped): a tool's name or its arguments, in the words frameworks use (`toolName`,
/// `function_call`, `action_input`, `input`, `params`, `recipient_name`...). Such a key beside
/// the ones the gate reads could be what an executor reads instead.
const SHAPE_WORDS: [&str; 12] = [
    "tool",
    "func",
    "action",
    "method",
    "recipient",
    "command",
    "name",
    "arg",
    "param",
    "input",
    "kwarg",
    "call",
];
/// Endings of the keys frameworks add beside a call that name no tool and hold no arguments:
/// ids (`call_id`, `toolCallId`), positions, types and states.
const LABEL_ENDINGS: [&str; 5] = ["id", "index", "type", "status", "object"];

/// One call, as `calls[index]` of the body: read in exactly one accepted shape. `Err` only for
/// a duplicate key inside an `arguments` JSON text (the whole body is refused then).
pub fn read_call(v: Value, index: usize) -> Result<ProposedCall, WireError> {
    let Value::Object(mut call) = v else {
        return Ok(ProposedCall::new(
            None,
            None,
            Err("a call is an object {id, tool, args}".into()),
        ));
    };
    let id = label(call.get("id"));
    let mut ambiguity = shape_problem(&call);
    let function = call.remove("function");
    let (tool, args, args_at) = match function {
        Some(Value::Object(mut f)) => {
            if ambiguity.is_none() {
                ambiguity = function_problem(&f);
            }
            let tool = label(f.get("name"));
            let args = f.remove("arguments");
            (tool, args, "function.arguments")
        }
        Some(_) => {
            ambiguity.get_or_insert_with(|| {
                "`function` must be an object {name, arguments}".to_string()
            });
            (None, None, "")
        }
        None => {
            let tool = label(call.get("tool").or_else(|| call.get("name")));
            let (args, at) = match call.remove("args") {
                Some(a) => (Some(a), "args"),
                None => (call.remove("arguments"), "arguments"),
            };
            (tool, args, at)
        }
    };
    let args = match args.unwrap_or(Value::Null) {
        // Arguments as JSON text (OpenAI's wire): parsed strictly too, so white space and key
        // order vanish and a key given twice inside is refused like one outside.
        Value::String(s) if s.trim().is_empty() => Ok(Value::Null),
        Value::String(s) => match parse_strict_at(&s, &format!("calls[{index}].{args_at}")) {
            Ok(v) => Ok(v),
            Err(e @ WireError::DuplicateKey(_)) => return Err(e),
            Err(WireError::Malformed(_)) => {
                Err("the arguments are not valid JSON: send an object".to_string())
            }
        },
        other => Ok(other),
    };
    Ok(ProposedCall {
        id,
        tool,
        args,
        ambiguity,
    })
}

/// Why a call's top-level keys do not make one shape, if they do not.
fn shape_problem(call: &Map<String, Value>) -> Option<String> {
    let present = |k: &str| call.get(k).is_some_and(|v| !v.is_null());
    let names: Vec<&str> = NAME_KEYS.into_iter().filter(|k| present(k)).collect();
    let args: Vec<&str> = ARGS_KEYS
        .into_iter()
        .filter(|k| call.contains_key(*k))
        .collect();
    if names.len() > 1 {
        return Some(format!(
            "the call names its tool twice (`{}` and `{}`): name it once",
            names[0], names[1]
        ));
    }
    if args.len() > 1 {
        return Some(
            "the call gives its arguments twice (`args` and `arguments`): give them once".into(),
        );
    }
    if call.contains_key("function") && (!names.is_empty() || !args.is_empty()) {
        let flat = names.first().or(args.first()).copied().unwrap_or("tool");
        return Some(format!(
            "the call mixes two shapes (`{flat}` and `function`): send {{id, tool, args}} or {{id, function: {{name, arguments}}}}"
        ));
    }
    odd_keys(
        call,
        &[
            "id",
            "type",
            "function",
            "tool",
            "name",
            "args",
            "arguments",
        ],
    )
}

/// Why an OpenAI `function` object is not one shape, if it is not.
fn function_problem(f: &Map<String, Value>) -> Option<String> {
    odd_keys(f, &["name", "arguments"]).map(|m| format!("in `function`: {m}"))
}

/// A key that is a read key in another spelling (case, compatibility form, invisible
/// characters, look-alikes), or a foreign shape's tool or arguments key.
fn odd_keys(map: &Map<String, Value>, read: &[&str]) -> Option<String> {
    for k in map.keys() {
        if read.contains(&k.as_str()) {
            continue;
        }
        let folded = fold_name(k);
        if let Some(r) = read.iter().find(|r| **r == folded) {
            return Some(format!(
                "`{}` is not `{r}`: the gate reads keys as written, so write `{r}` once",
                shown(k)
            ));
        }
        let squashed: String = folded
            .chars()
            .filter(|c| !matches!(c, '_' | '-' | ' '))
            .collect();
        let label = LABEL_ENDINGS.iter().any(|e| squashed.ends_with(e));
        if !label && SHAPE_WORDS.iter().any(|w| squashed.contains(w)) {
            return Some(format!(
                "`{}` belongs to a call shape the gate does not read: send {{id, tool, args}}",
                shown(k)
            ));
        }
    }
    None
}

fn shown(k: &str) -> String {
    k.chars().filter(|c| !c.is_control()).take(64).collect()
}

/// An optional label (a call's id or tool): a string, cut at 256 characters, or a number;
/// anything else is none.
pub fn label(v: Option<&Value>) -> Option<String> {
    match v {
        Some(Value::String(s)) => Some(s.chars().take(256).collect()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn dup(text: &str) -> Option<String> {
        match parse_strict(text.as_bytes()) {
            Err(WireError::DuplicateKey(p)) => Some(p),
            _ => None,
        }
    }

    #[test]
    fn the_strict_parse_reads_what_serde_json_reads() {
        let text =
            r#"{"a": [1, 2.5, -3, "x", null, true, {"b": {}}], "c": {"d": "é\u00e9"}, "e": 1e400}"#;
        let strict = parse_strict(text.as_bytes());
        let plain = serde_json::from_str::<Value>(text);
        // serde_json refuses a number out of range; so does the strict parse.
        assert!(strict.is_err() && plain.is_err());
        let text = r#"{"a": [1, 2.5, -3, "x", null, true, {"b": {}}], "c": {"d": "é\u00e9"}, "n": 18446744073709551615}"#;
        assert_eq!(
            parse_strict(text.as_bytes()).ok(),
            serde_json::from_str::<Value>(text).ok()
        );
        assert!(matches!(
            parse_strict(b"{\"a\": 1} x"),
            Err(WireError::Malformed(_))
        ));
    }

    #[test]
    fn a_duplicate_key_is_named_by_its_path() {
        assert_eq!(dup(r#"{"a": 1, "a": 2}"#).as_deref(), Some("a"));
        assert_eq!(
            dup(r#"{"calls": [{"id": 1}, {"args": {"amount": 1, "amount": 2}}]}"#).as_deref(),
            Some("calls[1].args.amount")
        );
        assert_eq!(
            dup(r#"{"x": {"a b": {"k": 1, "k": 1}}}"#).as_deref(),
            Some("x[\"a b\"].k")
        );
        // Equal values are still two keys; a key twice in different objects is not.
        assert!(dup(r#"{"a": {"k": 1}, "b": {"k": 1}}"#).is_none());
        assert_eq!(
            match parse_strict_at(
                r#"{"amount": 1, "amount": 1}"#,
                "calls[0].function.arguments"
            ) {
                Err(WireError::DuplicateKey(p)) => p,
                _ => String::new(),
            },
            "calls[0].function.arguments.amount"
        );
    }

    #[test]
    fn openai_shaped_calls_are_read() {
        let c = read_call(
            json!({
                "id": "call_1", "type": "function",
                "function": {"name": "get_balance", "arguments": "{\"account\": \"A1\"}"}
            }),
            0,
        );
        let c = c
            .ok()
            .unwrap_or_else(|| ProposedCall::new(None, None, Ok(Value::Null)));
        assert_eq!(c.id.as_deref(), Some("call_1"));
        assert_eq!(c.tool.as_deref(), Some("get_balance"));
        assert_eq!(c.args.ok(), Some(json!({"account": "A1"})));
        let bad = read_call(json!({"id": "x", "name": "t", "arguments": "{oops"}), 0);
        assert!(bad.is_ok_and(|b| b.args.is_err()));
        let not_object = read_call(json!([1]), 0);
        assert!(not_object.is_ok_and(|c| c.id.is_none() && c.args.is_err()));
    }

    #[test]
    fn one_shape_per_call() {
        let read = |v: Value| read_call(v, 0).ok();
        let ok = read(
            json!({"id": "a", "tool": "t", "args": {"x": 1}, "call_id": "c", "toolCallId": "c", "index": 0, "status": "done", "description": "x"}),
        );
        assert!(ok
            .as_ref()
            .is_some_and(|c| c.ambiguity.is_none() && c.tool.as_deref() == Some("t")));
        let openai = read(
            json!({"id": "a", "type": "function", "function": {"name": "t", "arguments": "{\"x\": 1}"}}),
        );
        assert!(openai
            .as_ref()
            .is_some_and(|c| c.ambiguity.is_none() && c.args == Ok(json!({"x": 1}))));
        for call in [
            json!({"id": "a", "tool": "get_balance", "name": "close_wallet"}),
            json!({"id": "a", "tool": "get_balance", "function": {"name": "close_wallet"}}),
            json!({"id": "a", "function": {"name": "t", "arguments": "{}"}, "args": {}}),
            json!({"id": "a", "tool": "t", "args": {}, "arguments": "{}"}),
            json!({"id": "a", "tool": "t", "Tool": "u"}),
            json!({"id": "a", "ｔｏｏｌ": "t"}),
            json!({"id": "a", "tool": "t", "input": {"x": 1}}),
            json!({"id": "a", "name": "t", "toolName": "u"}),
            json!({"id": "a", "function": {"name": "t", "Name": "u"}}),
            json!({"id": "a", "function": "t"}),
            json!({"id": "a", "tool": "t", "function_call": {"name": "u"}}),
            json!({"id": "a", "tool": "t", "action_input": {"x": 1}}),
            json!({"id": "a", "function": {"name": "t", "arguments": "{}", "tool": "u"}}),
        ] {
            let c = read(call.clone());
            assert!(c.is_some_and(|c| c.ambiguity.is_some()), "{call}");
        }
        let inside = read_call(
            json!({"id": "a", "function": {"name": "t", "arguments": "{\"a\": 1, \"a\": 2}"}}),
            3,
        );
        assert_eq!(
            inside.err(),
            Some(WireError::DuplicateKey(
                "calls[3].function.arguments.a".into()
            ))
        );
    }
    // -----------------------------------------------------------------------------------------
    // Generated call shapes: wherever a call names its tool or holds its arguments, the gate
    // reads it as one call exactly when it says one thing.

    use proptest::prelude::*;

    /// Keys other frameworks name a tool or hold arguments in.
    const FOREIGN: [&str; 10] = [
        "toolName",
        "tool_name",
        "function_call",
        "functionName",
        "input",
        "action_input",
        "parameters",
        "kwargs",
        "recipient_name",
        "method",
    ];
    /// Keys frameworks add beside a call that name nothing and hold nothing.
    const LABELS: [&str; 5] = ["call_id", "toolCallId", "index", "status", "object"];

    /// `key` in another spelling: some letters upper-cased, full-width, or a zero-width
    /// character inside. Never `key` itself.
    fn variant_of(key: &str, how: u8, at: usize) -> String {
        let chars: Vec<char> = key.chars().collect();
        let at = at % chars.len();
        let mut out = String::new();
        for (i, c) in chars.iter().enumerate() {
            match how % 3 {
                0 if i == at => out.push(c.to_ascii_uppercase()),
                1 => out.push(char::from_u32(*c as u32 - 0x21 + 0xFF01).unwrap_or(*c)),
                2 if i == at => {
                    out.push('\u{200b}');
                    out.push(*c);
                }
                _ => out.push(*c),
            }
        }
        out
    }

    #[derive(Debug, Clone)]
    struct Shape {
        /// `tool`, `name`, `function.name`: which are given.
        names: [bool; 3],
        /// `args`, `arguments`, `function.arguments`: which are given.
        args: [bool; 3],
        /// Keys of other shapes, by index into FOREIGN.
        foreign: Vec<usize>,
        /// Read keys in another spelling: (which of tool/name/args/arguments, how, where).
        variants: Vec<(usize, u8, usize)>,
        /// Label keys, by index into LABELS.
        labels: Vec<usize>,
        /// Put the odd keys inside `function` rather than beside it (when there is one).
        inside: bool,
    }

    fn shape() -> impl Strategy<Value = Shape> {
        (
            any::<[bool; 3]>(),
            any::<[bool; 3]>(),
            prop::collection::vec(0..FOREIGN.len(), 0..2),
            prop::collection::vec((0..4usize, any::<u8>(), 0..9usize), 0..2),
            prop::collection::vec(0..LABELS.len(), 0..3),
            any::<bool>(),
        )
            .prop_map(|(names, args, foreign, variants, labels, inside)| Shape {
                names,
                args,
                foreign,
                variants,
                labels,
                inside,
            })
    }

    fn build(s: &Shape) -> Value {
        let mut call = Map::new();
        let mut function = Map::new();
        call.insert("id".into(), json!("c1"));
        for (i, tool) in ["get_balance", "close_wallet", "send_money"]
            .into_iter()
            .enumerate()
        {
            if s.names[i] {
                match i {
                    0 => call.insert("tool".into(), json!(tool)),
                    1 => call.insert("name".into(), json!(tool)),
                    _ => function.insert("name".into(), json!(tool)),
                };
            }
        }
        for i in 0..3 {
            if s.args[i] {
                match i {
                    0 => call.insert("args".into(), json!({"wallet": "01711000000"})),
                    1 => call.insert("arguments".into(), json!("{\"wallet\": \"01811000000\"}")),
                    _ => function.insert("arguments".into(), json!("{\"wallet\": \"*\"}")),
                };
            }
        }
        let has_function = s.names[2] || s.args[2];
        let mut odd = Map::new();
        for &f in &s.foreign {
            odd.insert(FOREIGN[f].into(), json!("close_wallet"));
        }
        for &(k, how, at) in &s.variants {
            let key = ["tool", "name", "args", "arguments"][k];
            odd.insert(variant_of(key, how, at), json!("close_wallet"));
        }
        if has_function && s.inside {
            function.extend(odd);
        } else {
            call.extend(odd);
        }
        for &l in &s.labels {
            call.insert(LABELS[l].into(), json!("x"));
        }
        if has_function {
            call.insert("type".into(), json!("function"));
            call.insert("function".into(), Value::Object(function));
        }
        Value::Object(call)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

        #[test]
        fn a_call_is_read_exactly_when_it_says_one_thing(s in shape()) {
            let flat_names = s.names[..2].iter().filter(|x| **x).count();
            let flat_args = s.args[..2].iter().filter(|x| **x).count();
            let has_function = s.names[2] || s.args[2];
            let one_thing = s.foreign.is_empty()
                && s.variants.is_empty()
                && if has_function {
                    flat_names == 0 && flat_args == 0
                } else {
                    flat_names <= 1 && flat_args <= 1
                };
            let call = read_call(build(&s), 0);
            let Ok(call) = call else {
                return Err(TestCaseError::fail("no duplicate key was written"));
            };
            prop_assert_eq!(call.ambiguity.is_none(), one_thing, "{:?} {:?}", s, call.ambiguity);
            if one_thing {
                // The one name given is the one read; with none, none is.
                let given = ["get_balance", "close_wallet", "send_money"]
                    .into_iter()
                    .zip(s.names)
                    .find(|(_, on)| *on)
                    .map(|(t, _)| t.to_string());
                prop_assert_eq!(call.tool, given);
            }
            // Whatever the shape, a message says why, and never a value.
            if let Some(why) = &call.ambiguity {
                prop_assert!(!why.is_empty() && !why.contains("01711000000"));
            }
        }
    }
}

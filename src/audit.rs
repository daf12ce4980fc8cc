//! The audit log: one JSON line per verdict, with a keyed hash of the text, never the text.
//!
//! The key comes from `GUARD_AUDIT_KEY` (per deployment). Without it a random key is drawn at
//! start-up, so hashes still never reveal the text but only match within one process.

use crate::verdict::Verdict;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::io::Write;
use std::sync::Mutex;

/// Where audit lines go.
pub enum AuditSink {
    Off,
    Stdout,
    File(Mutex<std::fs::File>),
    /// For tests: lines kept in memory.
    Memory(Mutex<Vec<String>>),
}

/// See [`AuditLog::hasher`].
pub struct TextHasher(Option<Hmac<Sha256>>);

impl TextHasher {
    pub fn update(&mut self, text: &str) {
        if let Some(m) = &mut self.0 {
            m.update(text.as_bytes());
        }
    }

    pub fn finish(self) -> String {
        self.0
            .map(|m| hex::encode(m.finalize().into_bytes()))
            .unwrap_or_default()
    }
}

pub struct AuditLog {
    key: Vec<u8>,
    sink: AuditSink,
}

impl std::fmt::Debug for AuditLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AuditLog")
    }
}

impl AuditLog {
    pub fn new(key: Option<Vec<u8>>, sink: AuditSink) -> Self {
        let key = key.unwrap_or_else(random_key);
        AuditLog { key, sink }
    }

    /// `GUARD_AUDIT_LOG` = `stdout` (default for `serve`), `off`, or a file path.
    pub fn from_env(default_sink: &str) -> std::io::Result<Self> {
        let key = std::env::var("GUARD_AUDIT_KEY")
            .ok()
            .filter(|k| !k.is_empty())
            .map(String::into_bytes);
        let target = std::env::var("GUARD_AUDIT_LOG").unwrap_or_else(|_| default_sink.to_string());
        let sink = match target.as_str() {
            "off" | "" => AuditSink::Off,
            "stdout" => AuditSink::Stdout,
            path => AuditSink::File(Mutex::new(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)?,
            )),
        };
        Ok(AuditLog::new(key, sink))
    }

    pub fn text_hash(&self, text: &str) -> String {
        let mut h = self.hasher();
        h.update(text);
        h.finish()
    }

    /// The keyed hash of a text that arrives in pieces (a streamed answer is never buffered).
    pub fn hasher(&self) -> TextHasher {
        TextHasher(Hmac::<Sha256>::new_from_slice(&self.key).ok())
    }

    /// One output-screen line: kinds and counts, never values; the answer as a keyed hash.
    pub fn record_output(
        &self,
        product: &str,
        text_hmac: &str,
        v: &crate::output::OutputVerdict,
        latency_micros: u64,
    ) {
        if matches!(self.sink, AuditSink::Off) {
            return;
        }
        let line = serde_json::json!({
            "ts": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            "kind": "output",
            "request_id": v.request_id,
            "product": product,
            "config_rev": v.config_rev,
            "decision": v.decision,
            "counts": v.counts,
            "blocked_kinds": v.blocked_kinds,
            "latency_micros": latency_micros,
            "text_hmac": text_hmac,
        })
        .to_string();
        self.write(&line);
    }

    pub fn record(&self, product: &str, text: &str, v: &Verdict, latency_micros: u64) {
        if matches!(self.sink, AuditSink::Off) {
            return;
        }
        let line = serde_json::json!({
            "ts": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            "request_id": v.request_id,
            "product": product,
            "config_rev": v.config_rev,
            "decision": v.decision,
            "reason": v.reason,
            "stage": v.stage,
            "language": v.language,
            "categories": v.categories,
            "score": v.score,
            "latency_micros": latency_micros,
            "cached": v.cached,
            "fail_mode": v.fail_mode,
            "text_hmac": self.text_hash(text),
        })
        .to_string();
        self.write(&line);
    }

    fn write(&self, line: &str) {
        match &self.sink {
            AuditSink::Off => {}
            AuditSink::Stdout => {
                let _ = writeln!(std::io::stdout().lock(), "{line}");
            }
            AuditSink::File(f) => {
                if let Ok(mut f) = f.lock() {
                    let _ = writeln!(f, "{line}");
                }
            }
            AuditSink::Memory(lines) => {
                if let Ok(mut l) = lines.lock() {
                    l.push(line.to_string());
                }
            }
        }
    }

    pub fn memory_lines(&self) -> Vec<String> {
        match &self.sink {
            AuditSink::Memory(lines) => lines.lock().map(|l| l.clone()).unwrap_or_default(),
            _ => Vec::new(),
        }
    }
}

fn random_key() -> Vec<u8> {
    use std::collections::hash_map::RandomState;
    use std::hash::{BuildHasher, Hasher};
    let mut key = Vec::with_capacity(32);
    for i in 0..4u64 {
        let mut h = RandomState::new().build_hasher();
        h.write_u64(i);
        key.extend_from_slice(&h.finish().to_le_bytes());
    }
    key
}

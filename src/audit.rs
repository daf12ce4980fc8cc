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
    /// Stdout and file lines go through a bounded channel to one writer thread: a request never
    /// waits on the disk or a lock shared by every worker. A full channel drops the line and
    /// counts it (`dropped`); dropping the log drains the channel and flushes.
    writer: Option<Writer>,
    dropped: std::sync::atomic::AtomicU64,
}

/// Lines the writer thread can be behind before new ones are dropped.
const AUDIT_QUEUE_LINES: usize = 65_536;

enum Message {
    Line(String),
    /// Write what is queued, flush, and end.
    Close,
}

struct Writer {
    tx: std::sync::mpsc::SyncSender<Message>,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl Writer {
    fn close(&self) {
        let _ = self.tx.send(Message::Close);
        if let Some(t) = self.thread.lock().ok().and_then(|mut t| t.take()) {
            let _ = t.join();
        }
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        self.close();
    }
}

/// How long the audit writer lets lines gather between batches.
const AUDIT_BATCH_MS: u64 = 5;

fn spawn_writer(mut out: Box<dyn Write + Send>) -> Writer {
    let (tx, rx) = std::sync::mpsc::sync_channel::<Message>(AUDIT_QUEUE_LINES);
    let thread = std::thread::Builder::new()
        .name("guard-audit".into())
        .spawn(move || {
            // `false` on Close: write nothing more.
            let write = |out: &mut Box<dyn Write + Send>, m: Message| match m {
                Message::Line(line) => {
                    let _ = writeln!(out, "{line}");
                    true
                }
                Message::Close => false,
            };
            'outer: while let Ok(m) = rx.recv() {
                if !write(&mut out, m) {
                    break;
                }
                // Write out whatever else is queued, then flush once.
                while let Ok(m) = rx.try_recv() {
                    if !write(&mut out, m) {
                        break 'outer;
                    }
                }
                let _ = out.flush();
                // Let lines gather before the next batch: a writer parked on the channel after
                // every line is woken by every request (a futex wake per line, which cost a
                // quarter of the cheap path's CPU). At most this much is unwritten at a crash.
                std::thread::sleep(std::time::Duration::from_millis(AUDIT_BATCH_MS));
            }
            let _ = out.flush();
        })
        .ok();
    Writer {
        tx,
        thread: Mutex::new(thread),
    }
}

impl std::fmt::Debug for AuditLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AuditLog")
    }
}

impl AuditLog {
    pub fn new(key: Option<Vec<u8>>, sink: AuditSink) -> Self {
        let key = key.unwrap_or_else(random_key);
        let (sink, writer) = match sink {
            AuditSink::Stdout => (
                AuditSink::Stdout,
                Some(spawn_writer(Box::new(std::io::BufWriter::new(
                    std::io::stdout(),
                )))),
            ),
            AuditSink::File(f) => match f.into_inner() {
                Ok(file) => (
                    AuditSink::Off,
                    Some(spawn_writer(Box::new(std::io::BufWriter::new(file)))),
                ),
                Err(_) => (AuditSink::Off, None),
            },
            other => (other, None),
        };
        AuditLog {
            key,
            sink,
            writer,
            dropped: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// Write out every queued line and stop the writer (graceful shutdown). Lines recorded
    /// after this are dropped and counted.
    pub fn close(&self) {
        if let Some(w) = &self.writer {
            w.close();
        }
    }

    fn is_off(&self) -> bool {
        matches!(self.sink, AuditSink::Off) && self.writer.is_none()
    }

    /// Lines dropped because the writer thread was too far behind.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(std::sync::atomic::Ordering::Relaxed)
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
        if self.is_off() {
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
            "reason": v.reason,
            "latency_micros": latency_micros,
            "text_hmac": text_hmac,
        })
        .to_string();
        self.write(&line);
    }

    /// The tool-call gate's decision log: one line per round, each proposed call with its
    /// decision and reason, argument names and keyed hashes of their values (never the values).
    pub fn record_gate(&self, v: &crate::gate::GateVerdict, latency_micros: u64) {
        if self.is_off() {
            return;
        }
        let calls: Vec<serde_json::Value> = v
            .decisions
            .iter()
            .map(|d| {
                let args: serde_json::Map<String, serde_json::Value> = d
                    .arg_values
                    .iter()
                    .map(|(k, v)| (k.clone(), self.text_hash(v).into()))
                    .collect();
                serde_json::json!({
                    "index": d.index,
                    "id": d.id,
                    "tool": d.tool,
                    "decision": d.decision,
                    "reason": d.reason,
                    "rule": d.rule,
                    "reuse_of": d.reuse_of,
                    "args_hmac": args,
                })
            })
            .collect();
        let line = serde_json::json!({
            "ts": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            "kind": "tool_calls",
            "product": v.product,
            "config_rev": v.config_rev,
            "conversation_hmac": self.text_hash(&v.conversation),
            "turn": v.turn,
            "calls": calls,
            "latency_micros": latency_micros,
        })
        .to_string();
        self.write(&line);
    }

    /// One `/v1/screen-context` request: per document its decision and reason, and a keyed
    /// hash of its text.
    pub fn record_context(
        &self,
        v: &crate::context::ContextVerdict,
        text_hmacs: &[String],
        latency_micros: u64,
    ) {
        if self.is_off() {
            return;
        }
        let docs: Vec<serde_json::Value> = v
            .documents
            .iter()
            .zip(text_hmacs)
            .map(|(d, h)| {
                serde_json::json!({
                    "index": d.index,
                    "decision": d.decision,
                    "reason": d.reason,
                    "categories": d.categories,
                    "text_hmac": h,
                })
            })
            .collect();
        let line = serde_json::json!({
            "ts": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            "kind": "context",
            "request_id": v.request_id,
            "product": v.product,
            "config_rev": v.config_rev,
            "documents": docs,
            "latency_micros": latency_micros,
        })
        .to_string();
        self.write(&line);
    }

    pub fn record(&self, product: &str, text: &str, v: &Verdict, latency_micros: u64) {
        if self.is_off() {
            return;
        }
        // Serialised from a struct (keys in the order `json!` gave them, so the lines are
        // unchanged): building a map of values per request cost the cheap path a few percent.
        #[derive(serde::Serialize)]
        struct Line<'a> {
            cached: bool,
            categories: &'a [String],
            config_rev: &'a str,
            decision: crate::verdict::Decision,
            fail_mode: Option<crate::verdict::FailMode>,
            language: &'a str,
            latency_micros: u64,
            product: &'a str,
            reason: crate::verdict::Reason,
            request_id: Option<&'a str>,
            score: Option<f32>,
            stage: crate::verdict::Stage,
            text_hmac: String,
            ts: String,
        }
        let line = Line {
            cached: v.cached,
            categories: &v.categories,
            config_rev: &v.config_rev,
            decision: v.decision,
            fail_mode: v.fail_mode,
            language: &v.language,
            latency_micros,
            product,
            reason: v.reason,
            request_id: v.request_id.as_deref(),
            score: v.score,
            stage: v.stage,
            text_hmac: self.text_hash(text),
            ts: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        };
        if let Ok(line) = serde_json::to_string(&line) {
            self.write_owned(line);
        }
    }

    fn write(&self, line: &str) {
        self.write_owned(line.to_string());
    }

    fn write_owned(&self, line: String) {
        if let Some(w) = &self.writer {
            if w.tx.try_send(Message::Line(line)).is_err() {
                self.dropped
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            return;
        }
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
                    l.push(line);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_lines_go_through_the_writer_and_are_flushed_when_the_log_is_dropped() {
        let path = std::env::temp_dir().join(format!("guard-audit-{}.log", std::process::id()));
        let file = std::fs::File::create(&path).unwrap_or_else(|e| panic!("{e}"));
        let log = AuditLog::new(Some(b"k".to_vec()), AuditSink::File(Mutex::new(file)));
        let v = crate::output::OutputVerdict {
            decision: crate::verdict::Decision::Allow,
            text: None,
            findings: Vec::new(),
            counts: Default::default(),
            blocked_kinds: Vec::new(),
            config_rev: "r".into(),
            request_id: None,
            reason: None,
        };
        for _ in 0..1000 {
            log.record_output("p", "h", &v, 1);
        }
        assert_eq!(log.dropped(), 0);
        drop(log);
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        std::fs::remove_file(&path).ok();
        assert_eq!(text.lines().count(), 1000);
        assert!(text.lines().all(|l| l.contains("\"kind\":\"output\"")));
    }
}

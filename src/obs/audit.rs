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
        self.finish_hex().as_str().to_string()
    }

    /// [`finish`](Self::finish) without an allocation.
    pub fn finish_hex(self) -> Hex {
        Hex(self.0.and_then(|m| {
            let mut out = [0u8; 64];
            hex::encode_to_slice(m.finalize().into_bytes(), &mut out)
                .ok()
                .map(|()| out)
        }))
    }
}

/// A SHA-256 in lower-case hex, on the stack (empty when there was no key).
pub struct Hex(Option<[u8; 64]>);

impl Hex {
    pub fn as_str(&self) -> &str {
        self.0
            .as_ref()
            .and_then(|h| std::str::from_utf8(h).ok())
            .unwrap_or_default()
    }
}

/// An RFC 3339 UTC timestamp with milliseconds (`2026-11-30T17:07:21.074Z`), as audit lines
/// carry it. The date and time up to the second are formatted once per second per thread.
struct Timestamp([u8; 24]);

impl Timestamp {
    fn now() -> Self {
        thread_local! {
            static SECOND: std::cell::Cell<(i64, [u8; 20])> = const { std::cell::Cell::new((i64::MIN, [0; 20])) };
        }
        let now = chrono::Utc::now();
        let secs = now.timestamp();
        let (cached, mut prefix) = SECOND.get();
        if cached != secs {
            // `2026-11-30T17:07:21.` is always 20 ASCII bytes for years 0000–9999.
            let text = now.format("%Y-%m-%dT%H:%M:%S.").to_string();
            if text.len() == 20 {
                prefix.copy_from_slice(text.as_bytes());
                SECOND.set((secs, prefix));
            }
        }
        let ms = now.timestamp_subsec_millis().min(999);
        let mut out = [0u8; 24];
        out[..20].copy_from_slice(&prefix);
        out[20] = b'0' + (ms / 100) as u8;
        out[21] = b'0' + (ms / 10 % 10) as u8;
        out[22] = b'0' + (ms % 10) as u8;
        out[23] = b'Z';
        Timestamp(out)
    }

    fn as_str(&self) -> &str {
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
}

pub struct AuditLog {
    /// The HMAC already keyed: each hash clones it instead of hashing the key again. `None`
    /// only when no key was given and the CSPRNG gave none (see [`AuditLog::new`]).
    mac: Option<Hmac<Sha256>>,
    sink: AuditSink,
    /// Stdout and file lines are appended to a bounded batch that one writer thread swaps out
    /// and writes every few milliseconds: a request never waits on the disk, never allocates a
    /// line, and never wakes another thread. A full batch drops the line and counts it
    /// (`dropped`); closing (or dropping) the log writes what is held and flushes.
    writer: Option<Writer>,
    dropped: std::sync::atomic::AtomicU64,
    /// Tells this log's [`PreparedLine`]s from another's (never 0).
    id: u64,
}

/// Bytes of lines the writer thread can be behind before new ones are dropped (about 45,000
/// lines of ~360 bytes: several seconds of the cheap path at full speed).
const AUDIT_BATCH_BYTES: usize = 16 * 1024 * 1024;

/// How long the audit writer lets lines gather between batches: at most this much is unwritten
/// at a crash.
const AUDIT_BATCH_MS: u64 = 5;

/// Lines waiting for the writer; `closed` once the log is closed (later lines are dropped).
#[derive(Default)]
struct Batch {
    buf: Vec<u8>,
    closed: bool,
}

struct Writer {
    batch: std::sync::Arc<Mutex<Batch>>,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl Writer {
    /// Append one line (a newline is added); `false` when it was dropped.
    fn push(&self, line: &[u8]) -> bool {
        let Ok(mut b) = self.batch.lock() else {
            return false;
        };
        if b.closed || b.buf.len() + line.len() + 1 > AUDIT_BATCH_BYTES {
            return false;
        }
        b.buf.extend_from_slice(line);
        b.buf.push(b'\n');
        true
    }

    fn close(&self) {
        if let Ok(mut b) = self.batch.lock() {
            b.closed = true;
        }
        if let Some(t) = self.thread.lock().ok().and_then(|mut t| t.take()) {
            t.thread().unpark();
            let _ = t.join();
        }
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        self.close();
    }
}

fn spawn_writer(mut out: Box<dyn Write + Send>) -> Writer {
    let batch = std::sync::Arc::new(Mutex::new(Batch::default()));
    let shared = batch.clone();
    let thread = std::thread::Builder::new()
        .name("guard-audit".into())
        .spawn(move || {
            let mut spare = Vec::new();
            loop {
                // Swap the batch out under the lock (no copy), write it outside.
                let closed = match shared.lock() {
                    Ok(mut b) => {
                        std::mem::swap(&mut b.buf, &mut spare);
                        b.closed
                    }
                    Err(_) => true,
                };
                if !spare.is_empty() {
                    let _ = out.write_all(&spare);
                    let _ = out.flush();
                    spare.clear();
                }
                if closed {
                    break;
                }
                // Sleep rather than wait on a signal: a writer woken per line is woken by
                // every request (a futex wake per line cost a quarter of the cheap path's CPU).
                std::thread::park_timeout(std::time::Duration::from_millis(AUDIT_BATCH_MS));
            }
        })
        .ok();
    if thread.is_none() {
        // No writer: every line is counted as dropped rather than held where nothing writes it.
        eprintln!("audit: the writer thread could not start; lines are counted as dropped");
        if let Ok(mut b) = batch.lock() {
            b.closed = true;
        }
    }
    Writer {
        batch,
        thread: Mutex::new(thread),
    }
}

impl std::fmt::Debug for AuditLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AuditLog")
    }
}

impl AuditLog {
    /// Without a key, one is drawn from the CSPRNG. Should the operating system give no random
    /// bytes, the log keeps no key and writes empty hashes (never a hash an attacker could
    /// compute): [`from_env`](Self::from_env) refuses to start instead.
    pub fn new(key: Option<Vec<u8>>, sink: AuditSink) -> Self {
        let key = match key {
            Some(k) => Some(k),
            None => random_key()
                .map_err(|e| eprintln!("audit: no random key ({e}); text hashes are left empty"))
                .ok(),
        };
        let mac = key.and_then(|k| Hmac::<Sha256>::new_from_slice(&k).ok());
        let (sink, writer) = match sink {
            AuditSink::Stdout => (
                AuditSink::Stdout,
                Some(spawn_writer(Box::new(std::io::stdout()))),
            ),
            AuditSink::File(f) => match f.into_inner() {
                Ok(file) => (AuditSink::Off, Some(spawn_writer(Box::new(file)))),
                Err(_) => (AuditSink::Off, None),
            },
            other => (other, None),
        };
        AuditLog {
            mac,
            sink,
            writer,
            dropped: std::sync::atomic::AtomicU64::new(0),
            id: {
                static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
                NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            },
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
        let key = match key {
            Some(k) => k,
            None => random_key().map_err(std::io::Error::other)?,
        };
        let key = Some(key);
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
        self.text_hmac(text).as_str().to_string()
    }

    /// The keyed hash of a text that arrives in pieces (a streamed answer is never buffered).
    pub fn hasher(&self) -> TextHasher {
        TextHasher(self.mac.clone())
    }

    /// One output-screen line: kinds and counts, never values; the answer as a keyed hash.
    pub fn record_output(
        &self,
        product: &str,
        text_hmac: &str,
        v: &crate::screens::output::OutputVerdict,
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
    pub fn record_gate(&self, v: &crate::screens::tools::GateVerdict, latency_micros: u64) {
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
        v: &crate::screens::context::ContextVerdict,
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
        let hex = self.text_hmac(text);
        let ts = Timestamp::now();
        with_scratch(|buf| {
            if verdict_line(buf, product, hex.as_str(), v, latency_micros, ts.as_str()) {
                self.write_bytes(buf);
            }
        });
    }

    /// [`record`](Self::record) for a verdict answered again and again (a cached answer): the
    /// line is the same but for its latency and time, so the rest (the text's keyed hash
    /// included) is written once into `prepared` and copied from there on later answers.
    pub fn record_prepared(
        &self,
        prepared: &std::sync::OnceLock<PreparedLine>,
        product: &str,
        text: &str,
        v: &Verdict,
        latency_micros: u64,
    ) {
        if self.is_off() {
            return;
        }
        let parts = prepared.get_or_init(|| self.prepare(product, text, v));
        if parts.log != self.id {
            // Prepared by another log (another key): not this log's line.
            return self.record(product, text, v, latency_micros);
        }
        let ts = Timestamp::now();
        with_scratch(|buf| {
            buf.extend_from_slice(&parts.head);
            // serde_json writes a number without allocating (no fallible path for a u64).
            let _ = serde_json::to_writer(&mut *buf, &latency_micros);
            buf.extend_from_slice(&parts.middle);
            buf.extend_from_slice(ts.as_str().as_bytes());
            buf.extend_from_slice(b"\"}");
            self.write_bytes(buf);
        });
    }

    /// The line of [`record`](Self::record) with a zero latency and an empty time, cut around
    /// the two: `{…"latency_micros":` and `,"product":…,"ts":"`. Neither cut can fall inside
    /// a string value, where a quote is always escaped.
    fn prepare(&self, product: &str, text: &str, v: &Verdict) -> PreparedLine {
        let hex = self.text_hmac(text);
        let mut line = Vec::new();
        let cut = |line: &[u8]| {
            const LATENCY: &[u8] = b",\"latency_micros\":0,";
            let at = line.windows(LATENCY.len()).position(|w| w == LATENCY)?;
            let head = &line[..at + LATENCY.len() - 2];
            let middle = line[at + LATENCY.len() - 1..].strip_suffix(b"\"}")?;
            Some((head.into(), middle.into()))
        };
        let parts = verdict_line(&mut line, product, hex.as_str(), v, 0, "")
            .then(|| cut(&line))
            .flatten();
        match parts {
            Some((head, middle)) => PreparedLine {
                log: self.id,
                head,
                middle,
            },
            // Not expected; a log id no log has sends every answer through `record`.
            None => PreparedLine {
                log: 0,
                head: Box::default(),
                middle: Box::default(),
            },
        }
    }

    fn text_hmac(&self, text: &str) -> Hex {
        let mut h = self.hasher();
        h.update(text);
        h.finish_hex()
    }

    fn write(&self, line: &str) {
        self.write_bytes(line.as_bytes());
    }

    fn write_bytes(&self, line: &[u8]) {
        if let Some(w) = &self.writer {
            if !w.push(line) {
                self.dropped
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            return;
        }
        match &self.sink {
            AuditSink::Off => {}
            AuditSink::Stdout => {
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(line);
                let _ = out.write_all(b"\n");
            }
            AuditSink::File(f) => {
                if let Ok(mut f) = f.lock() {
                    let _ = f.write_all(line);
                    let _ = f.write_all(b"\n");
                }
            }
            AuditSink::Memory(lines) => {
                if let Ok(mut l) = lines.lock() {
                    l.push(String::from_utf8_lossy(line).into_owned());
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

/// One screen's audit line into `buf`; false if it could not be serialised (not expected).
fn verdict_line(
    buf: &mut Vec<u8>,
    product: &str,
    text_hmac: &str,
    v: &Verdict,
    latency_micros: u64,
    ts: &str,
) -> bool {
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
        text_hmac: &'a str,
        ts: &'a str,
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
        text_hmac,
        ts,
    };
    serde_json::to_writer(buf, &line).is_ok()
}

/// Each worker thread writes its lines into its own reused buffer: no allocation per line.
fn with_scratch(f: impl FnOnce(&mut Vec<u8>)) {
    thread_local! {
        static SCRATCH: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
    }
    let mut buf = SCRATCH.take();
    buf.clear();
    f(&mut buf);
    SCRATCH.set(buf);
}

/// An audit line of a cached answer, but for its latency and time (see
/// [`AuditLog::record_prepared`]).
#[derive(Debug)]
pub struct PreparedLine {
    /// The [`AuditLog`] that prepared it (its key hashed the text).
    log: u64,
    head: Box<[u8]>,
    middle: Box<[u8]>,
}

/// 32 bytes from the operating system's CSPRNG (`getrandom`): the key of a process without
/// `GUARD_AUDIT_KEY`. (The hasher seeds of `RandomState` that made it before are not meant to
/// be secret.)
fn random_key() -> Result<Vec<u8>, getrandom::Error> {
    let mut key = vec![0u8; 32];
    getrandom::fill(&mut key)?;
    Ok(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_rfc3339_utc_with_milliseconds_as_chrono_writes_them() {
        for _ in 0..3 {
            let before = chrono::Utc::now();
            let ts = Timestamp::now();
            let after = chrono::Utc::now();
            let parsed = chrono::DateTime::parse_from_rfc3339(ts.as_str())
                .unwrap_or_else(|e| panic!("{}: {e}", ts.as_str()));
            let ms = |t: chrono::DateTime<chrono::Utc>| t.timestamp_millis();
            assert!(ms(before) <= parsed.timestamp_millis());
            assert!(parsed.timestamp_millis() <= ms(after));
            let chrono_form = parsed
                .with_timezone(&chrono::Utc)
                .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
            assert_eq!(ts.as_str(), chrono_form);
            std::thread::sleep(std::time::Duration::from_millis(400));
        }
    }

    fn verdict(language: &str, categories: &[&str]) -> Verdict {
        Verdict {
            decision: crate::verdict::Decision::Block,
            reason: crate::verdict::Reason::UnsupportedLanguage,
            stage: crate::verdict::Stage::Banglish,
            language: language.into(),
            reply: None,
            categories: categories.iter().map(|c| c.to_string()).collect(),
            score: Some(0.25),
            cached: true,
            fail_mode: None,
            config_rev: "rev \"1\"".into(),
            request_id: None,
            trace: Vec::new(),
        }
    }

    /// A line with its time replaced, so two lines written apart in time compare.
    fn timeless(line: &str) -> String {
        let mut v: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        assert!(v["ts"].as_str().is_some_and(|t| t.len() == 24), "{line}");
        v["ts"] = "T".into();
        v.to_string()
    }

    #[test]
    fn the_random_key_is_32_fresh_bytes() {
        let (a, b) = (random_key(), random_key());
        let (Ok(a), Ok(b)) = (a, b) else {
            panic!("no random bytes");
        };
        assert_eq!((a.len(), b.len()), (32, 32));
        assert_ne!(a, b);
        let (one, other) = (
            AuditLog::new(None, AuditSink::Off),
            AuditLog::new(None, AuditSink::Off),
        );
        assert_eq!(one.text_hash("t").len(), 64);
        assert_ne!(one.text_hash("t"), other.text_hash("t"), "a key per log");
    }

    #[test]
    fn a_prepared_line_is_the_line_record_writes() {
        let log = AuditLog::new(
            Some(b"k".to_vec()),
            AuditSink::Memory(Mutex::new(Vec::new())),
        );
        // Values that contain the text the line is cut at must not move the cut.
        let tricky = [
            verdict("en", &[]),
            verdict(
                ",\"latency_micros\":0,",
                &["\"}", "a,\"latency_micros\":0,b"],
            ),
            verdict("bn", &["\"ts\":\"\"}"]),
        ];
        for (i, v) in tricky.iter().enumerate() {
            let prepared = std::sync::OnceLock::new();
            for micros in [0, 7, u64::MAX] {
                log.record(&format!("p{i}"), "the text", v, micros);
                log.record_prepared(&prepared, &format!("p{i}"), "the text", v, micros);
            }
        }
        let lines = log.memory_lines();
        assert_eq!(lines.len(), 18);
        for pair in lines.chunks(2) {
            assert_eq!(timeless(&pair[0]), timeless(&pair[1]));
        }
        assert!(lines[3].contains(&format!("\"latency_micros\":{},", 7)));
    }

    #[test]
    fn a_line_prepared_by_another_log_is_not_copied() {
        let sink = || AuditSink::Memory(Mutex::new(Vec::new()));
        let (one, other) = (
            AuditLog::new(Some(b"k1".to_vec()), sink()),
            AuditLog::new(Some(b"k2".to_vec()), sink()),
        );
        let v = verdict("en", &[]);
        let prepared = std::sync::OnceLock::new();
        one.record_prepared(&prepared, "p", "the text", &v, 1);
        other.record_prepared(&prepared, "p", "the text", &v, 1);
        other.record("p", "the text", &v, 1);
        let (a, b) = (one.memory_lines(), other.memory_lines());
        assert_eq!(b.len(), 2);
        assert_eq!(
            timeless(&b[0]),
            timeless(&b[1]),
            "the other log hashes with its own key"
        );
        assert_ne!(timeless(&a[0]), timeless(&b[0]));
    }

    #[test]
    fn lines_after_close_are_dropped_and_counted_not_lost_silently() {
        let path =
            std::env::temp_dir().join(format!("guard-audit-close-{}.log", std::process::id()));
        let file = std::fs::File::create(&path).unwrap_or_else(|e| panic!("{e}"));
        let log = AuditLog::new(Some(b"k".to_vec()), AuditSink::File(Mutex::new(file)));
        log.write("before");
        log.close();
        log.write("after");
        assert_eq!(log.dropped(), 1);
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        std::fs::remove_file(&path).ok();
        assert_eq!(text, "before\n");
    }

    #[test]
    fn file_lines_go_through_the_writer_and_are_flushed_when_the_log_is_dropped() {
        let path = std::env::temp_dir().join(format!("guard-audit-{}.log", std::process::id()));
        let file = std::fs::File::create(&path).unwrap_or_else(|e| panic!("{e}"));
        let log = AuditLog::new(Some(b"k".to_vec()), AuditSink::File(Mutex::new(file)));
        let v = crate::screens::output::OutputVerdict {
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

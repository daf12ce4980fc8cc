//! The audit log: the sink every screen writes its lines to (one JSON line per decision, with
//! keyed hashes of texts, never the texts). Each screen owns the shape of its lines.
//!
//! The key comes from `GUARD_AUDIT_KEY` (per deployment). Without it a random key is drawn at
//! start-up (from the OS CSPRNG), so hashes still never reveal the text but only match within
//! one process.

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
pub struct Timestamp([u8; 24]);

impl Timestamp {
    pub fn now() -> Self {
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

    pub fn as_str(&self) -> &str {
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
    /// compute): [`open`](Self::open) refuses to start instead.
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

    /// Nothing is written: a screen need not build its line.
    pub fn is_off(&self) -> bool {
        matches!(self.sink, AuditSink::Off) && self.writer.is_none()
    }

    /// Lines dropped because the writer thread was too far behind.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The log `GUARD_AUDIT_LOG` names: `stdout`, `off`, or a file path (`None`: the command's
    /// default, `stdout` for `serve`), keyed with `GUARD_AUDIT_KEY` or, without one, a key from
    /// the CSPRNG (an error when the OS gives no random bytes).
    pub fn open(
        key: Option<Vec<u8>>,
        target: Option<&str>,
        default: &str,
    ) -> std::io::Result<Self> {
        let key = match key {
            Some(k) => k,
            None => random_key().map_err(std::io::Error::other)?,
        };
        let sink = match target.unwrap_or(default) {
            "off" | "" => AuditSink::Off,
            "stdout" => AuditSink::Stdout,
            path => AuditSink::File(Mutex::new(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)?,
            )),
        };
        Ok(AuditLog::new(Some(key), sink))
    }

    pub fn text_hash(&self, text: &str) -> String {
        self.text_hmac(text).as_str().to_string()
    }

    /// The keyed hash of a text that arrives in pieces (a streamed answer is never buffered).
    pub fn hasher(&self) -> TextHasher {
        TextHasher(self.mac.clone())
    }

    /// A line to write again and again but for its latency and time: `line` is the line with
    /// `"latency_micros":0,` and ending in `"ts":""}`, cut around the two. Neither cut can fall
    /// inside a string value, where a quote is always escaped.
    pub fn prepare(&self, line: &[u8]) -> PreparedLine {
        let cut = |line: &[u8]| {
            const LATENCY: &[u8] = b",\"latency_micros\":0,";
            let at = line.windows(LATENCY.len()).position(|w| w == LATENCY)?;
            let head = &line[..at + LATENCY.len() - 2];
            let middle = line[at + LATENCY.len() - 1..].strip_suffix(b"\"}")?;
            Some((head.into(), middle.into()))
        };
        match cut(line) {
            Some((head, middle)) => PreparedLine {
                log: self.id,
                head,
                middle,
            },
            // Not expected; a log id no log has sends every line back to its writer.
            None => PreparedLine {
                log: 0,
                head: Box::default(),
                middle: Box::default(),
            },
        }
    }

    /// Write a prepared line with its latency and the time now; `false` (nothing written) when
    /// another log prepared it (another key hashed its text): the caller writes it whole.
    pub fn write_prepared(&self, parts: &PreparedLine, latency_micros: u64) -> bool {
        if parts.log != self.id {
            return false;
        }
        let ts = Timestamp::now();
        with_scratch(|buf| {
            buf.extend_from_slice(&parts.head);
            // serde_json writes a number without allocating (no fallible path for a u64).
            let _ = serde_json::to_writer(&mut *buf, &latency_micros);
            buf.extend_from_slice(&parts.middle);
            buf.extend_from_slice(ts.as_str().as_bytes());
            buf.extend_from_slice(b"\"}");
            self.write_line(buf);
        });
        true
    }

    /// The keyed hash of a text, on the stack.
    pub fn text_hmac(&self, text: &str) -> Hex {
        let mut h = self.hasher();
        h.update(text);
        h.finish_hex()
    }

    /// Write one JSON value as a line (the screens' less frequent lines).
    pub fn write_value(&self, line: &serde_json::Value) {
        if self.is_off() {
            return;
        }
        self.write_line(line.to_string().as_bytes());
    }

    #[cfg(test)]
    fn write(&self, line: &str) {
        self.write_line(line.as_bytes());
    }

    /// Write one line (a newline is added): to the writer's batch, or straight to the sink.
    pub fn write_line(&self, line: &[u8]) {
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

/// Each worker thread writes its lines into its own reused buffer: no allocation per line.
pub fn with_scratch(f: impl FnOnce(&mut Vec<u8>)) {
    thread_local! {
        static SCRATCH: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
    }
    let mut buf = SCRATCH.take();
    buf.clear();
    f(&mut buf);
    SCRATCH.set(buf);
}

/// An audit line written again and again but for its latency and time (a cached answer's),
/// cut around the two (see [`AuditLog::prepare`]).
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
}

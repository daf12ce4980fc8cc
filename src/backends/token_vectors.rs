//! Pretrained static token vectors for the embedded guard: what a bag of n-grams cannot know,
//! that "assassinate" is close to "kill" and "narcotics" to "drugs", for words it never saw in
//! training.
//!
//! The vectors are the input token embeddings of all-MiniLM-L6-v2 (Apache-2.0) reduced to 128
//! principal components, exported by `tools/export_token_vectors.py` into
//! `models/token-vectors.bin` (format there). Its vocabulary is English WordPiece, so only runs of
//! `a–z0–9` in the folded text are looked up; Bangla contributes nothing here and is scored by the
//! n-grams alone. A question's vector is the L2-normalised mean of its pieces' vectors.

use super::model_file::{ModelError, Reader, Table};
use std::collections::HashMap;
use std::sync::LazyLock;

const MAGIC: &[u8; 8] = b"GUARDTV1";
/// BERT's rule: a longer word is unknown.
const MAX_WORD_CHARS: usize = 100;
/// At most this many pieces per text, as a 512-token encoder would read: bounds the work on
/// huge inputs (the mean barely moves after that).
const MAX_PIECES: usize = 512;

pub static BUILTIN_VECTORS: &[u8] = include_bytes!("../../models/token-vectors.bin");

/// The hex SHA-256 of [`BUILTIN_VECTORS`], computed at build time (build.rs): start-up does
/// not hash the 3.8 MB (a test checks it against the bytes).
pub const BUILTIN_VECTORS_SHA256: &str = env!("GUARD_BUILTIN_VECTORS_SHA256");

static BUILTIN: LazyLock<Result<TokenVectors, ModelError>> = LazyLock::new(|| {
    let fingerprint = fingerprint_of_hex(BUILTIN_VECTORS_SHA256).ok_or(ModelError::Size)?;
    TokenVectors::decode(BUILTIN_VECTORS, Table::Borrowed, Some(fingerprint))
});

/// The fingerprint (first 8 bytes of the SHA-256, little-endian) from a hex digest.
fn fingerprint_of_hex(hex: &str) -> Option<u64> {
    let mut bytes = [0u8; 8];
    for (i, b) in bytes.iter_mut().enumerate() {
        *b = u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(u64::from_le_bytes(bytes))
}

/// The vectors built into the binary.
pub fn builtin() -> Result<&'static TokenVectors, ModelError> {
    BUILTIN.as_ref().map_err(Clone::clone)
}

#[derive(PartialEq)]
pub struct TokenVectors {
    dims: usize,
    /// Word-initial pieces and `##` continuation pieces (stored without the mark) → row.
    initial: HashMap<Box<str>, u32, foldhash::fast::RandomState>,
    continuation: HashMap<Box<str>, u32, foldhash::fast::RandomState>,
    /// Longest piece, in bytes: no longer prefix is ever tried.
    max_piece: usize,
    scales: Vec<f32>,
    /// `dims` i8 per row, as in the file.
    values: Table,
    /// First 8 bytes of the file's SHA-256: a model file names the vectors it was trained with.
    fingerprint: u64,
}

impl std::fmt::Debug for TokenVectors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenVectors")
            .field("dims", &self.dims)
            .field("pieces", &self.scales.len())
            .field("fingerprint", &format_args!("{:016x}", self.fingerprint))
            .finish()
    }
}

impl TokenVectors {
    /// Decode a vectors file, copying its tables.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, ModelError> {
        Self::decode(bytes, |b| Table::Owned(b.to_vec()), None)
    }

    /// `keep` borrows a table from `bytes` when they are `'static`, or copies it; `fingerprint`
    /// is the bytes' own when it is known already (the built-in file's, from build time), else
    /// they are hashed.
    fn decode<'a>(
        bytes: &'a [u8],
        keep: impl Fn(&'a [u8]) -> Table,
        fingerprint: Option<u64>,
    ) -> Result<Self, ModelError> {
        let mut r = Reader::open(bytes, MAGIC)?;
        let dims = r.u32()? as usize;
        let count = r.u32()? as usize;
        let (mut initial, mut continuation) = (HashMap::default(), HashMap::default());
        let mut max_piece = 0;
        for row in 0..count as u32 {
            let len = usize::from(r.u8()?);
            let piece = std::str::from_utf8(r.take(len)?).map_err(|_| ModelError::Size)?;
            match piece.strip_prefix("##") {
                Some(rest) => continuation.insert(rest.into(), row),
                None => initial.insert(piece.into(), row),
            };
            max_piece = max_piece.max(piece.len());
        }
        let scales = r.many(count, f32::from_le_bytes)?;
        let values = keep(r.take(count.checked_mul(dims).ok_or(ModelError::Size)?)?);
        r.finish()?;
        let fingerprint = fingerprint.unwrap_or_else(|| {
            use sha2::{Digest, Sha256};
            let digest = Sha256::digest(bytes);
            u64::from_le_bytes([
                digest[0], digest[1], digest[2], digest[3], digest[4], digest[5], digest[6],
                digest[7],
            ])
        });
        Ok(TokenVectors {
            dims,
            initial,
            continuation,
            max_piece,
            scales,
            values,
            fingerprint,
        })
    }

    pub fn dims(&self) -> usize {
        self.dims
    }

    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }

    /// The WordPiece rows of one lower-case ASCII word, greedy longest match first; `false` when
    /// some part of it is unknown (the whole word is then unknown, as in BERT).
    fn pieces(&self, word: &str, out: &mut Vec<u32>) -> bool {
        let start_len = out.len();
        let mut start = 0;
        while start < word.len() {
            let table = if start == 0 {
                &self.initial
            } else {
                &self.continuation
            };
            let longest = (word.len() - start).min(self.max_piece);
            // ASCII only: every byte offset is a character boundary.
            let found = (1..=longest)
                .rev()
                .find_map(|len| table.get(&word[start..start + len]).map(|&row| (row, len)));
            let Some((row, len)) = found else {
                out.truncate(start_len);
                return false;
            };
            out.push(row);
            start += len;
        }
        true
    }

    /// The L2-normalised mean vector of the English words of `folded` (already case-folded), or
    /// `None` when it has no known piece.
    pub fn embed(&self, folded: &str) -> Option<Vec<f32>> {
        let mut rows = Vec::new();
        for word in folded
            .split(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit()))
            .filter(|w| !w.is_empty() && w.len() <= MAX_WORD_CHARS)
        {
            self.pieces(word, &mut rows);
            if rows.len() >= MAX_PIECES {
                rows.truncate(MAX_PIECES);
                break;
            }
        }
        if rows.is_empty() {
            return None;
        }
        let mut sum = vec![0f32; self.dims];
        for &row in &rows {
            let row = row as usize;
            let scale = self.scales[row];
            let values = &self.values[row * self.dims..(row + 1) * self.dims];
            for (s, &v) in sum.iter_mut().zip(values) {
                let v = v as i8;
                *s += scale * f32::from(v);
            }
        }
        let norm = sum.iter().map(|s| s * s).sum::<f32>().sqrt();
        if norm == 0.0 {
            return None;
        }
        sum.iter_mut().for_each(|s| *s /= norm);
        Some(sum)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> Vec<u8> {
        let pieces = ["kill", "##ing", "bomb", "##s", "a"];
        let mut out = MAGIC.to_vec();
        out.extend_from_slice(&2u32.to_le_bytes());
        out.extend_from_slice(&(pieces.len() as u32).to_le_bytes());
        for p in pieces {
            out.push(p.len() as u8);
            out.extend_from_slice(p.as_bytes());
        }
        for _ in pieces {
            out.extend_from_slice(&1f32.to_le_bytes());
        }
        for (i, _) in pieces.iter().enumerate() {
            out.extend_from_slice(&[i as u8, 1]);
        }
        out
    }

    #[test]
    fn wordpiece_is_greedy_and_drops_unknown_words() -> Result<(), ModelError> {
        let v = TokenVectors::from_bytes(&tiny())?;
        let mut rows = Vec::new();
        assert!(v.pieces("killing", &mut rows));
        assert!(v.pieces("bombs", &mut rows));
        assert_eq!(rows, [0, 1, 2, 3]);
        assert!(!v.pieces("killx", &mut rows));
        assert_eq!(rows.len(), 4, "a failed word leaves nothing behind");
        assert_eq!(v.embed("আমি ১২৩ zzz"), None);
        // kill + ##ing + a + bomb: rows 0, 1, 4, 2, whose vectors are [row, 1].
        let e = v.embed("killing; a bomb!").ok_or(ModelError::Size)?;
        let norm = (7.0f32 * 7.0 + 4.0 * 4.0).sqrt();
        assert!(
            (e[0] - 7.0 / norm).abs() < 1e-6 && (e[1] - 4.0 / norm).abs() < 1e-6,
            "{e:?}"
        );
        Ok(())
    }

    #[test]
    fn bad_files_are_refused() {
        let mut bytes = tiny();
        bytes.pop();
        assert_eq!(TokenVectors::from_bytes(&bytes), Err(ModelError::Size));
        assert_eq!(
            TokenVectors::from_bytes(b"GUARDLR2xxxxxxxx"),
            Err(ModelError::Magic)
        );
    }

    #[test]
    fn the_build_time_digest_is_the_builtin_vectors_own() -> Result<(), ModelError> {
        assert_eq!(
            BUILTIN_VECTORS_SHA256,
            crate::text::sha256_hex(BUILTIN_VECTORS)
        );
        // The fingerprint start-up takes from it is the one hashing the bytes gives.
        let hashed = TokenVectors::from_bytes(BUILTIN_VECTORS)?;
        assert_eq!(builtin()?.fingerprint(), hashed.fingerprint());
        assert_eq!(fingerprint_of_hex("zz"), None);
        Ok(())
    }

    #[test]
    fn builtin_vectors_load_and_know_english() -> Result<(), ModelError> {
        let v = builtin()?;
        assert_eq!(v.dims(), 128);
        let mut rows = Vec::new();
        assert!(v.pieces("transfer", &mut rows));
        assert!(v.embed("how do i block my card").is_some());
        Ok(())
    }
}

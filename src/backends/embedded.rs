//! The embedded guard model: a hashed character/word n-gram logistic regression that runs
//! in-process, needs no server and no download, and returns P(unsafe).
//!
//! Features are taken over the folded text (NFKC, lower case, invisible characters removed,
//! look-alikes mapped) so obfuscation does not change them: character 3–5-grams and word 1–2-grams,
//! hashed (FNV-1a) into 2^`log2_buckets` buckets, each present bucket counted once and the
//! vector L2-normalised. Weights are stored as i16 with one scale, so the shipped file stays
//! small. `guard train` (see `crate::train`) rebuilds the file bit for bit.

use super::{BackendError, BackendKind, GuardBackend, Judgement, NativeLabel};
use crate::text::fold_for_matching;
use futures_util::future::{BoxFuture, FutureExt};

const MAGIC: &[u8; 8] = b"GUARDLR1";
/// Only the first this many characters are featurised: bounds latency on huge inputs.
const MAX_CHARS: usize = 16_000;
const WORD_SEED: u64 = 0x9e37_79b9_7f4a_7c15;

/// The model shipped with the binary, used when a product names no `model_path`.
pub static BUILTIN_MODEL: &[u8] = include_bytes!("../../models/guard-embedded.bin");

#[derive(Debug, Clone, PartialEq)]
pub struct EmbeddedModel {
    log2_buckets: u32,
    bias: f32,
    scale: f32,
    weights: Vec<i16>,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ModelError {
    #[error("not a guard model file (bad magic)")]
    Magic,
    #[error("model file is truncated or has the wrong size")]
    Size,
    #[error("bucket count 2^{0} is out of range (8..=24)")]
    Buckets(u32),
}

impl EmbeddedModel {
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, ModelError> {
        if bytes.len() < 20 || &bytes[..8] != MAGIC {
            return Err(ModelError::Magic);
        }
        let word = |at: usize| [bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]];
        let log2_buckets = u32::from_le_bytes(word(8));
        if !(8..=24).contains(&log2_buckets) {
            return Err(ModelError::Buckets(log2_buckets));
        }
        let bias = f32::from_le_bytes(word(12));
        let scale = f32::from_le_bytes(word(16));
        let n = 1usize << log2_buckets;
        if bytes.len() != 20 + 2 * n {
            return Err(ModelError::Size);
        }
        let weights = bytes[20..]
            .chunks_exact(2)
            .map(|c| i16::from_le_bytes([c[0], c[1]]))
            .collect();
        Ok(EmbeddedModel {
            log2_buckets,
            bias,
            scale,
            weights,
        })
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(20 + 2 * self.weights.len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&self.log2_buckets.to_le_bytes());
        out.extend_from_slice(&self.bias.to_le_bytes());
        out.extend_from_slice(&self.scale.to_le_bytes());
        for w in &self.weights {
            out.extend_from_slice(&w.to_le_bytes());
        }
        out
    }

    /// Quantise trained float weights.
    pub fn from_float(log2_buckets: u32, bias: f32, weights: &[f32]) -> Self {
        let max = weights.iter().fold(0f32, |m, w| m.max(w.abs()));
        let scale = if max > 0.0 {
            max / i16::MAX as f32
        } else {
            1.0
        };
        let weights = weights.iter().map(|w| (w / scale).round() as i16).collect();
        EmbeddedModel {
            log2_buckets,
            bias,
            scale,
            weights,
        }
    }

    /// P(unsafe) of a question.
    pub fn score(&self, text: &str) -> f32 {
        let buckets = features(text, self.log2_buckets);
        if buckets.is_empty() {
            return sigmoid(self.bias);
        }
        let sum: i64 = buckets
            .iter()
            .map(|&b| i64::from(self.weights[b as usize]))
            .sum();
        let z = self.bias + self.scale * sum as f32 / (buckets.len() as f32).sqrt();
        sigmoid(z)
    }
}

pub fn sigmoid(z: f32) -> f32 {
    1.0 / (1.0 + (-z).exp())
}

/// The sorted, de-duplicated feature buckets of a text.
pub fn features(text: &str, log2_buckets: u32) -> Vec<u32> {
    let folded = fold_for_matching(text);
    let chars: Vec<char> = std::iter::once(' ')
        .chain(folded.chars().take(MAX_CHARS))
        .chain(std::iter::once(' '))
        .collect();
    let mask = (1u64 << log2_buckets) - 1;
    let mut out: Vec<u32> = Vec::with_capacity(chars.len() * 3 + 16);
    for n in 3..=5usize {
        for window in chars.windows(n) {
            let mut h = fnv_start(n as u64);
            for c in window {
                h = fnv_char(h, *c);
            }
            out.push((h & mask) as u32);
        }
    }
    let mut prev: Option<u64> = None;
    for word in chars
        .split(|c| !crate::text::is_alphanumeric(*c) && !is_bengali_sign(*c))
        .filter(|w| !w.is_empty())
    {
        let mut h = fnv_start(WORD_SEED);
        for c in word {
            h = fnv_char(h, *c);
        }
        out.push((h & mask) as u32);
        if let Some(p) = prev {
            out.push(((p.rotate_left(17) ^ h).wrapping_mul(0x100_0000_01b3) & mask) as u32);
        }
        prev = Some(h);
    }
    out.sort_unstable();
    out.dedup();
    out
}

fn is_bengali_sign(c: char) -> bool {
    ('\u{0981}'..='\u{0983}').contains(&c) || ('\u{09BC}'..='\u{09D7}').contains(&c)
}

fn fnv_start(seed: u64) -> u64 {
    0xcbf2_9ce4_8422_2325 ^ seed.wrapping_mul(0x100_0000_01b3)
}

/// One FNV-1a step per code point (not per UTF-8 byte): Bangla costs the same as English.
fn fnv_char(h: u64, c: char) -> u64 {
    (h ^ u64::from(c)).wrapping_mul(0x100_0000_01b3)
}

#[derive(Debug)]
pub struct EmbeddedBackend {
    pub model: std::sync::Arc<EmbeddedModel>,
}

impl GuardBackend for EmbeddedBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Embedded
    }

    fn classify<'a>(&'a self, text: &'a str) -> BoxFuture<'a, Result<Judgement, BackendError>> {
        let p = self.model.score(text);
        async move {
            Ok(Judgement {
                label: NativeLabel::Score,
                p_unsafe: Some(p),
                categories: Vec::new(),
            })
        }
        .boxed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip_bytes() {
        let m = EmbeddedModel::from_float(8, -1.5, &vec![0.25f32; 256]);
        let back = EmbeddedModel::from_bytes(&m.to_bytes());
        assert_eq!(back.as_ref(), Ok(&m));
        assert_eq!(
            EmbeddedModel::from_bytes(b"nonsense"),
            Err(ModelError::Magic)
        );
        let mut short = m.to_bytes();
        short.pop();
        assert_eq!(EmbeddedModel::from_bytes(&short), Err(ModelError::Size));
    }

    #[test]
    fn features_ignore_obfuscation() {
        assert_eq!(
            features("Ignore previous", 16),
            features("IG\u{200B}NORE prev\u{0456}ous", 16)
        );
        assert!(features("", 16).len() <= 2);
    }

    #[test]
    fn builtin_model_loads_and_scores_in_range() {
        let m = EmbeddedModel::from_bytes(BUILTIN_MODEL);
        assert!(m.is_ok(), "{m:?}");
        if let Ok(m) = m {
            for text in ["", "block my card", "আমার কার্ড হারিয়ে গেছে"]
            {
                let p = m.score(text);
                assert!((0.0..=1.0).contains(&p), "{text:?} -> {p}");
            }
        }
    }
}

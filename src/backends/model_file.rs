//! The binary files of the embedded guard: one reader and one error type for both formats
//! (`guard-embedded.bin`, `GUARDLR3`, and `token-vectors.bin`, `GUARDTV1`; layouts in
//! `models/README.md`). Little-endian throughout; every read is bounds-checked, so a truncated
//! or corrupted file is an error, never a panic.

#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum ModelError {
    #[error("not a guard model file (bad magic)")]
    Magic,
    #[error("model file is truncated or has the wrong size")]
    Size,
    #[error("bucket count 2^{0} is out of range (8..=24)")]
    Buckets(u32),
    #[error("the model was trained with other token vectors (fingerprint {0:016x})")]
    Vectors(u64),
}

/// A table of little-endian values as stored in the file: borrowed from the bytes built into the
/// binary (never copied to the heap: its pages stay the executable's, read on demand and
/// reclaimable), or owned (a model file read at run time, a model just trained).
pub type Table = std::borrow::Cow<'static, [u8]>;

/// A cursor over a model file that starts with an 8-byte magic.
pub struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    /// Check the magic and stand after it.
    pub fn open(bytes: &'a [u8], magic: &[u8; 8]) -> Result<Self, ModelError> {
        if bytes.get(..8) != Some(magic.as_slice()) {
            return Err(ModelError::Magic);
        }
        Ok(Reader { bytes, at: 8 })
    }

    pub fn take(&mut self, n: usize) -> Result<&'a [u8], ModelError> {
        let end = self.at.checked_add(n).ok_or(ModelError::Size)?;
        let slice = self.bytes.get(self.at..end).ok_or(ModelError::Size)?;
        self.at = end;
        Ok(slice)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], ModelError> {
        self.take(N)?.try_into().map_err(|_| ModelError::Size)
    }

    pub fn u8(&mut self) -> Result<u8, ModelError> {
        Ok(self.array::<1>()?[0])
    }

    pub fn u32(&mut self) -> Result<u32, ModelError> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    pub fn u64(&mut self) -> Result<u64, ModelError> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    pub fn f32(&mut self) -> Result<f32, ModelError> {
        Ok(f32::from_le_bytes(self.array()?))
    }

    /// `n` little-endian values of a fixed-size type.
    pub fn many<T, const N: usize>(
        &mut self,
        n: usize,
        from: fn([u8; N]) -> T,
    ) -> Result<Vec<T>, ModelError> {
        let bytes = self.take(n.checked_mul(N).ok_or(ModelError::Size)?)?;
        Ok(bytes
            .chunks_exact(N)
            .filter_map(|c| c.try_into().ok().map(from))
            .collect())
    }

    /// Everything read; anything left over means the file is not what its header says.
    pub fn finish(self) -> Result<(), ModelError> {
        if self.at == self.bytes.len() {
            Ok(())
        } else {
            Err(ModelError::Size)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_are_bounds_checked() {
        let bytes = b"MAGIC123\x01\x02\x00\x00\x00";
        let mut r = Reader::open(&bytes[..12], b"MAGIC123").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(r.u8(), Ok(1));
        assert_eq!(r.u32(), Err(ModelError::Size));
        assert!(matches!(
            Reader::open(b"short", b"MAGIC123"),
            Err(ModelError::Magic)
        ));
        let mut r = Reader::open(bytes, b"MAGIC123").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(r.many(2, u16::from_le_bytes), Ok(vec![0x0201, 0]));
        assert_eq!(r.finish(), Err(ModelError::Size));
    }
}

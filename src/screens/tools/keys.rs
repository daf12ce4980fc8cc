//! The gate's state keys: short hashes of what they name, under the product as a Redis hash tag.

/// A short (96-bit) hash for keys and counted members.
pub(crate) fn hash(s: &str) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(&Sha256::digest(s.as_bytes())[..12])
}

/// A state key. The product is a Redis hash tag, so one product's keys share a cluster slot.
pub(crate) fn key(product: &str, parts: &[&str]) -> String {
    let mut k = String::with_capacity(96);
    k.push_str("guard:gate:{");
    k.push_str(product);
    k.push('}');
    for p in parts {
        k.push(':');
        k.push_str(p);
    }
    k
}

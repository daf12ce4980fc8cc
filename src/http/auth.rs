//! Access control: callers present API keys (`Authorization: Bearer <key>`) scoped to products.
//!
//! Keys come from the environment (`GUARD_API_KEYS`) or a secret file (`GUARD_API_KEYS_FILE`),
//! never from `products/`. Each entry is `<key> <product>[,<product>...]` (or `*` for every
//! product); in the file a key may be written as `sha256:<hex>` so that no key is stored in
//! clear. Keys are held as SHA-256 digests and compared in constant time (`subtle`), every entry
//! every time, so neither the length nor the position of a key shows in the timing.

use super::error::ApiError;
use actix_web::http::header;
use actix_web::HttpRequest;
use std::path::Path;
use subtle::ConstantTimeEq;

#[derive(Debug, Clone)]
pub struct ApiKeys {
    entries: Vec<([u8; 32], Scope)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Scope {
    All,
    Products(Vec<String>),
}

fn digest(key: &str) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    Sha256::digest(key.as_bytes()).into()
}

impl ApiKeys {
    /// From `GUARD_API_KEYS` (entries separated by `;` or new lines) and the file
    /// `GUARD_API_KEYS_FILE` names; `None` when neither has an entry.
    pub fn load(entries: Option<&str>, file: Option<&Path>) -> Result<Option<Self>, String> {
        let mut text = entries.unwrap_or_default().to_string();
        if let Some(path) = file {
            let file = std::fs::read_to_string(path)
                .map_err(|e| format!("GUARD_API_KEYS_FILE `{}`: {e}", path.display()))?;
            text.push('\n');
            text.push_str(&file);
        }
        if text.trim().is_empty() {
            return Ok(None);
        }
        Self::parse(&text).map(Some)
    }

    pub fn parse(text: &str) -> Result<Self, String> {
        let mut entries = Vec::new();
        for (i, line) in text.split(['\n', ';']).enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (key, scope) = line
                .split_once(char::is_whitespace)
                .ok_or_else(|| format!("API key entry {}: `<key> <products>` expected", i + 1))?;
            let hash = match key.strip_prefix("sha256:") {
                Some(h) => hex::decode(h)
                    .ok()
                    .and_then(|b| <[u8; 32]>::try_from(b).ok())
                    .ok_or_else(|| format!("API key entry {}: bad sha256 digest", i + 1))?,
                None if key.len() >= 16 => digest(key),
                None => {
                    return Err(format!(
                        "API key entry {}: keys are 16 characters or more",
                        i + 1
                    ))
                }
            };
            let scope = match scope.trim() {
                "*" => Scope::All,
                list => Scope::Products(list.split(',').map(|p| p.trim().to_string()).collect()),
            };
            entries.push((hash, scope));
        }
        Ok(ApiKeys { entries })
    }

    /// The scope of the presented key; every entry is compared, in constant time.
    fn scope_of(&self, presented: &str) -> Option<&Scope> {
        let given = digest(presented);
        let mut found = None;
        for (hash, scope) in &self.entries {
            if bool::from(hash.ct_eq(&given)) && found.is_none() {
                found = Some(scope);
            }
        }
        found
    }

    /// `401` without a valid key, `403` when the key is not for this product (`None`: the
    /// product is not known yet; only the key is checked).
    pub fn authorize(&self, req: &HttpRequest, product: Option<&str>) -> Result<(), ApiError> {
        let presented = req
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::trim);
        let scope = presented
            .and_then(|k| self.scope_of(k))
            .ok_or(ApiError::Unauthorized("API key"))?;
        match (scope, product) {
            (Scope::All, _) | (_, None) => Ok(()),
            (Scope::Products(list), Some(p)) if list.iter().any(|x| x == p) => Ok(()),
            (Scope::Products(_), Some(p)) => Err(ApiError::ForbiddenProduct(p.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_parse_plain_and_hashed() {
        let hashed = hex::encode(digest("another-long-key-0002"));
        let keys = ApiKeys::parse(&format!(
            "wallet-key-0000001 wallet-assistant\n# comment\nsha256:{hashed} *;short x"
        ));
        assert!(keys.is_err(), "a short key is refused");
        let keys = ApiKeys::parse(&format!(
            "wallet-key-0000001 wallet-assistant,bank-operator\nsha256:{hashed} *"
        ));
        let Ok(keys) = keys else {
            panic!("{keys:?}");
        };
        assert_eq!(
            keys.scope_of("wallet-key-0000001"),
            Some(&Scope::Products(vec![
                "wallet-assistant".into(),
                "bank-operator".into()
            ]))
        );
        assert_eq!(keys.scope_of("another-long-key-0002"), Some(&Scope::All));
        assert_eq!(keys.scope_of("wallet-key-0000002"), None);
        assert_eq!(keys.scope_of(""), None);
    }
}

//! Every `GUARD_*` environment variable, read once at start-up into [`Settings`] and passed
//! down: nothing below reads the environment for them. [`Settings::from_lookup`] reads them
//! from any source, so tests build settings without touching the process environment.
//!
//! `GUARD_CONFIG_DIR`, `GUARD_LISTEN` and `GUARD_WORKERS` are command-line options too; clap
//! reads them with the command line ([`crate::cli`]). The secrets a product file names
//! (`api_key_env`) are not `GUARD_*` variables: the loader looks them up when a configuration
//! loads (see [`crate::config::Secrets`]).

use crate::config::Overrides;
use std::path::PathBuf;
use std::time::Duration;

/// Default body limit: 64 KiB (`GUARD_MAX_BODY_BYTES` overrides).
pub const DEFAULT_MAX_BODY_BYTES: usize = 64 * 1024;
/// Default cap on screens in flight per process (`GUARD_MAX_IN_FLIGHT`); above it `503`.
pub const DEFAULT_MAX_IN_FLIGHT: usize = 1024;
/// Default deadline for reading a whole request body (`GUARD_BODY_TIMEOUT_MS`); then `408`.
pub const DEFAULT_BODY_TIMEOUT_MS: u64 = 5_000;

/// The service's settings from its environment.
#[derive(Debug, Clone)]
pub struct Settings {
    /// `GUARD_MODEL_*`, `GUARD_JUDGE_*`: a guard model and a judge for every product.
    pub overrides: Overrides,
    /// `GUARD_METRICS` (`off` turns recording off, to measure what metrics cost).
    pub metrics: bool,
    /// `GUARD_AUDIT_LOG`: `stdout`, `off` or a file path; `None`: the command's default.
    pub audit_log: Option<String>,
    /// `GUARD_AUDIT_KEY`: the audit log's HMAC key (a random one per process without it).
    pub audit_key: Option<Vec<u8>>,
    /// `GUARD_MAX_BODY_BYTES`, `GUARD_MAX_IN_FLIGHT`, `GUARD_BODY_TIMEOUT_MS`.
    pub limits: Limits,
    /// `GUARD_ADMIN_TOKEN`; without it `/admin/reload` refuses everyone.
    pub admin_token: Option<String>,
    /// `GUARD_API_KEYS`: API key entries (`<key> <product>[,<product>]`, `;` or new lines).
    pub api_keys: Option<String>,
    /// `GUARD_API_KEYS_FILE`: a secret file of the same entries.
    pub api_keys_file: Option<PathBuf>,
    /// `GUARD_REDIS_URL`: the gate's shared state across replicas.
    pub redis_url: Option<String>,
    /// `GUARD_OPS_LISTEN`: `/metrics`, `/healthz` and `/readyz` on their own address.
    pub ops_listen: Option<String>,
    /// `GUARD_ALLOW_UNAUTHENTICATED=1`: serve a non-loopback address without API keys.
    pub allow_unauthenticated: bool,
    /// Values that could not be read, each with what is used instead (a typo must not turn a
    /// limit off): `serve` prints them at start-up.
    pub warnings: Vec<String>,
}

/// Bounds on the work a request may ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub max_body_bytes: usize,
    /// Screens in flight; a request that finds none free is refused at once with `503`.
    pub max_in_flight: usize,
    /// How long a client may take to send its whole body.
    pub body_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            max_in_flight: DEFAULT_MAX_IN_FLIGHT,
            body_timeout: Duration::from_millis(DEFAULT_BODY_TIMEOUT_MS),
        }
    }
}

impl Default for Settings {
    /// The settings of an empty environment.
    fn default() -> Self {
        Settings::from_lookup(|_| None)
    }
}

impl Settings {
    /// From the process environment (once, at start-up).
    pub fn from_env() -> Self {
        Settings::from_lookup(|name| std::env::var(name).ok())
    }

    /// From any source of variables; an empty value counts as unset.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Self {
        let var = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
        let mut warnings = Vec::new();
        let mut number = |name: &str, default: u64| -> u64 {
            match var(name) {
                None => default,
                Some(v) => match v.trim().parse::<u64>() {
                    Ok(n) if n > 0 => n,
                    _ => {
                        warnings.push(format!(
                            "{name}={v:?} is not a positive number; using {default}"
                        ));
                        default
                    }
                },
            }
        };
        let limits = Limits {
            max_body_bytes: number("GUARD_MAX_BODY_BYTES", DEFAULT_MAX_BODY_BYTES as u64) as usize,
            max_in_flight: number("GUARD_MAX_IN_FLIGHT", DEFAULT_MAX_IN_FLIGHT as u64) as usize,
            body_timeout: Duration::from_millis(number(
                "GUARD_BODY_TIMEOUT_MS",
                DEFAULT_BODY_TIMEOUT_MS,
            )),
        };
        Settings {
            overrides: overrides(&var),
            metrics: var("GUARD_METRICS").is_none_or(|v| v != "off"),
            audit_log: lookup("GUARD_AUDIT_LOG"),
            audit_key: var("GUARD_AUDIT_KEY").map(String::into_bytes),
            limits,
            admin_token: var("GUARD_ADMIN_TOKEN"),
            api_keys: var("GUARD_API_KEYS"),
            api_keys_file: lookup("GUARD_API_KEYS_FILE").map(PathBuf::from),
            redis_url: var("GUARD_REDIS_URL").map(|u| u.trim().to_string()),
            ops_listen: var("GUARD_OPS_LISTEN"),
            allow_unauthenticated: var("GUARD_ALLOW_UNAUTHENTICATED").is_some_and(|v| v == "1"),
            warnings,
        }
    }
}

/// The model overrides; numbers that do not read are kept for the loader to report.
fn overrides(var: &impl Fn(&str) -> Option<String>) -> Overrides {
    let mut unreadable = Vec::new();
    let mut threshold = |name: &'static str| {
        let v = var(name)?;
        let n = v.trim().parse::<f32>().ok();
        if n.is_none() {
            unreadable.push((name, v));
        }
        n
    };
    let allow_below = threshold("GUARD_MODEL_ALLOW_BELOW");
    let block_at = threshold("GUARD_MODEL_BLOCK_AT");
    Overrides {
        model_url: var("GUARD_MODEL_URL"),
        model_kind: var("GUARD_MODEL_KIND"),
        model_name: var("GUARD_MODEL_NAME"),
        model_api_key: var("GUARD_MODEL_API_KEY"),
        judge_url: var("GUARD_JUDGE_URL"),
        judge_model: var("GUARD_JUDGE_MODEL"),
        judge_api_key: var("GUARD_JUDGE_API_KEY"),
        allow_below,
        block_at,
        gate_store: var("GUARD_GATE_STORE").map(|v| v.trim().to_string()),
        unreadable,
        ..Overrides::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn settings(vars: &[(&str, &str)]) -> Settings {
        let vars: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Settings::from_lookup(|k| vars.get(k).cloned())
    }

    #[test]
    fn an_empty_environment_gives_the_defaults() {
        let s = settings(&[]);
        assert_eq!(s.limits, Limits::default());
        assert!(s.metrics && !s.allow_unauthenticated);
        assert_eq!(s.overrides, Overrides::default());
        assert!(s.admin_token.is_none() && s.api_keys.is_none() && s.redis_url.is_none());
        assert!(s.warnings.is_empty());
    }

    #[test]
    fn every_variable_is_read_and_bad_numbers_keep_their_default_with_a_warning() {
        let s = settings(&[
            ("GUARD_MAX_BODY_BYTES", "2048"),
            ("GUARD_MAX_IN_FLIGHT", "0"),
            ("GUARD_BODY_TIMEOUT_MS", "soon"),
            ("GUARD_METRICS", "off"),
            ("GUARD_ADMIN_TOKEN", "tok"),
            ("GUARD_REDIS_URL", " redis://r:6379/0 "),
            ("GUARD_ALLOW_UNAUTHENTICATED", "1"),
            ("GUARD_MODEL_URL", "http://m/v1"),
            ("GUARD_MODEL_KIND", "tei"),
            ("GUARD_MODEL_API_KEY", "k"),
            ("GUARD_MODEL_ALLOW_BELOW", "0.4"),
            ("GUARD_MODEL_BLOCK_AT", "high"),
            ("GUARD_AUDIT_KEY", "secret"),
            ("GUARD_OPS_LISTEN", ""),
        ]);
        assert_eq!(s.limits.max_body_bytes, 2048);
        assert_eq!(s.limits.max_in_flight, DEFAULT_MAX_IN_FLIGHT);
        assert_eq!(s.limits.body_timeout, Duration::from_millis(5_000));
        assert_eq!(s.warnings.len(), 2, "{:?}", s.warnings);
        assert!(!s.metrics && s.allow_unauthenticated);
        assert_eq!(s.admin_token.as_deref(), Some("tok"));
        assert_eq!(s.redis_url.as_deref(), Some("redis://r:6379/0"));
        assert_eq!(s.ops_listen, None, "empty is unset");
        assert_eq!(s.audit_key.as_deref(), Some(&b"secret"[..]));
        let o = &s.overrides;
        assert_eq!(o.model_url.as_deref(), Some("http://m/v1"));
        assert_eq!(o.model_api_key.as_deref(), Some("k"));
        assert_eq!((o.allow_below, o.block_at), (Some(0.4), None));
        assert_eq!(
            o.unreadable,
            vec![("GUARD_MODEL_BLOCK_AT", "high".to_string())]
        );
    }
}

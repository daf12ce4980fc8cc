//! What the environment changes for every product (the model overrides) and where the secrets
//! a product file names are found.

use std::collections::BTreeMap;
use std::fmt;

/// Overrides that apply to every product, from the environment (read once, in
/// [`crate::settings`]); see docs/configuration.md.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Overrides {
    /// `GUARD_MODEL_URL`
    pub model_url: Option<String>,
    /// `GUARD_MODEL_KIND`
    pub model_kind: Option<String>,
    /// `GUARD_MODEL_NAME`
    pub model_name: Option<String>,
    /// `GUARD_MODEL_API_KEY`: the overriding model's bearer token.
    pub model_api_key: Option<String>,
    /// `GUARD_JUDGE_URL`
    pub judge_url: Option<String>,
    /// `GUARD_JUDGE_MODEL`
    pub judge_model: Option<String>,
    /// `GUARD_JUDGE_API_KEY`: the overriding judge's bearer token.
    pub judge_api_key: Option<String>,
    /// The judge's deadline instead of each product's `judge.timeout_ms` (and the outer bound
    /// of its calls, when longer than the transport's). No variable sets it: `guard eval` sets
    /// `Duration::MAX` (no deadline) for its scripted local judge, whose answers are fixed, so
    /// that a busy machine cannot turn a slow answer into `judge_unavailable` and change a
    /// score: the answer is awaited, not raced against a clock.
    pub judge_timeout: Option<std::time::Duration>,
    /// `GUARD_MODEL_ALLOW_BELOW`: thresholds for the overriding model (else its kind's defaults).
    pub allow_below: Option<f32>,
    /// `GUARD_MODEL_BLOCK_AT`
    pub block_at: Option<f32>,
    /// `GUARD_GATE_STORE` (`memory` or `redis`): every product's `tool_gate.store`. How many
    /// replicas share the limits is a fact of the deployment, not of the policy.
    pub gate_store: Option<String>,
    /// Variables that were set but do not read as numbers: (name, value), reported as problems.
    pub unreadable: Vec<(&'static str, String)>,
    /// Where the secrets a product file names (`api_key_env`) are found.
    pub secrets: Secrets,
}

/// Where the product files' `api_key_env` names are looked up when a configuration loads:
/// the process environment, or fixed values (tests, tools).
#[derive(Clone, Default, PartialEq)]
pub enum Secrets {
    #[default]
    Environment,
    Fixed(BTreeMap<String, String>),
}

impl Secrets {
    /// The secret named `name`; empty counts as unset.
    pub fn get(&self, name: &str) -> Option<String> {
        let value = match self {
            Secrets::Environment => std::env::var(name).ok(),
            Secrets::Fixed(map) => map.get(name).cloned(),
        };
        value.filter(|v| !v.is_empty())
    }
}

impl fmt::Debug for Secrets {
    /// Names at most, never values.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Secrets::Environment => f.write_str("Secrets::Environment"),
            Secrets::Fixed(map) => f.debug_set().entries(map.keys()).finish(),
        }
    }
}

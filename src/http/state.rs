//! `AppState`: what the service holds, built once at start-up and shared by every worker.

use super::auth;
use super::records::HttpMetrics;
use crate::config::{self, ConfigError, Overrides};
use crate::obs::audit::AuditLog;
use crate::obs::metrics::Registry;
use crate::screens::input::Screener;
use crate::screens::records::Records;
use crate::screens::tools::Stores;
use crate::settings::Settings;
use arc_swap::ArcSwap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

pub struct AppState {
    /// The configuration in force; swapped whole on reload.
    pub screener: ArcSwap<Screener>,
    /// The metrics registry every part records into (`/metrics` renders it).
    pub metrics: Registry,
    /// The service's own metrics.
    pub http: HttpMetrics,
    /// Every screen's records, handed to each loaded configuration.
    pub records: Records,
    pub audit: Arc<AuditLog>,
    pub config_dir: PathBuf,
    pub overrides: Overrides,
    pub max_body_bytes: usize,
    /// Screens in flight; a request that finds none free is refused at once with `503`.
    pub in_flight: Arc<tokio::sync::Semaphore>,
    /// Answer streams open: their own budget, so idle streams cannot take `in_flight`'s slots.
    pub streams: Arc<tokio::sync::Semaphore>,
    /// How long a client may take to send its whole body.
    pub body_timeout: Duration,
    /// `GUARD_ADMIN_TOKEN`; without it `/admin/reload` refuses everyone.
    pub admin_token: Option<String>,
    /// API keys scoped to products (`GUARD_API_KEYS`, `GUARD_API_KEYS_FILE`); `None`: no
    /// authentication (loopback only, unless told otherwise: see `guard serve`).
    pub api_keys: Option<auth::ApiKeys>,
    /// The tool-call gate's state: in process, and Redis when `GUARD_REDIS_URL` is set.
    pub gate: Arc<crate::screens::tools::Stores>,
    /// Serve `/metrics`, `/healthz` and `/readyz` on the main address too (off when
    /// `GUARD_OPS_LISTEN` gives them their own).
    pub ops_on_main: bool,
}

impl AppState {
    /// The turn's state the lookup check reads (the evidence `POST /v1/tool-results` kept, the
    /// once-per-turn model question): the gate's stores.
    pub fn turns(&self) -> Arc<dyn crate::screens::output::lookup::TurnMemory> {
        self.gate.clone()
    }

    /// The state of a service whose environment sets nothing but the model `overrides`.
    pub fn load(
        config_dir: PathBuf,
        overrides: Overrides,
        audit: AuditLog,
    ) -> Result<Self, ConfigError> {
        let settings = Settings {
            overrides,
            ..Settings::default()
        };
        Self::with_settings(config_dir, &settings, audit)
    }

    /// Build the state once: the registry and every part's records, the configuration, the
    /// access keys and the gate's stores, as `settings` say.
    pub fn with_settings(
        config_dir: PathBuf,
        settings: &Settings,
        audit: AuditLog,
    ) -> Result<Self, ConfigError> {
        let problem = |file: &str, key: &str, message: String, hint: &str| ConfigError {
            problems: vec![config::Problem {
                file: file.into(),
                key: key.into(),
                message,
                hint: hint.into(),
            }],
        };
        let metrics = Registry::new(settings.metrics);
        let audit = Arc::new(audit);
        let registered = HttpMetrics::new(&metrics)
            .and_then(|http| Ok((http, Records::new(&metrics, audit.clone())?)));
        let (http, records) = registered.map_err(|e| problem("metrics", "-", e.to_string(), ""))?;
        let api_keys = auth::ApiKeys::load(
            settings.api_keys.as_deref(),
            settings.api_keys_file.as_deref(),
        )
        .map_err(|e| {
            let hint = "`<key> <product>[,<product>]` or `<key> *`, one per line or `;`";
            problem("environment", "GUARD_API_KEYS", e, hint)
        })?;
        let gate = Stores::new(settings.redis_url.as_deref())
            .map_err(|e| problem("environment", "GUARD_REDIS_URL", e, "redis://host:6379/0"))?;
        let set = config::load(&config_dir, &settings.overrides)?;
        http.set_config(&revisions(&set));
        let limits = settings.limits;
        Ok(AppState {
            screener: ArcSwap::from_pointee(Screener::new(set, records.clone())),
            metrics,
            http,
            records,
            audit,
            config_dir,
            overrides: settings.overrides.clone(),
            max_body_bytes: limits.max_body_bytes,
            in_flight: Arc::new(tokio::sync::Semaphore::new(limits.max_in_flight)),
            streams: Arc::new(tokio::sync::Semaphore::new(limits.max_streams)),
            body_timeout: limits.body_timeout,
            admin_token: settings.admin_token.clone(),
            api_keys,
            gate: Arc::new(gate),
            ops_on_main: settings.ops_listen.is_none(),
        })
    }

    /// Re-read products, wordlists and prompts. The new configuration replaces the old one only
    /// when all of it is valid; requests in flight finish on the one they started with.
    pub fn reload(&self) -> Result<Vec<(String, String)>, ConfigError> {
        let result = config::load(&self.config_dir, &self.overrides);
        self.http.record_reload(result.is_ok());
        let set = result?;
        let products = revisions(&set);
        self.http.set_config(&products);
        self.screener
            .store(Arc::new(Screener::new(set, self.records.clone())));
        Ok(products)
    }
}

/// Each product's name and revision.
fn revisions(set: &config::ConfigSet) -> Vec<(String, String)> {
    set.products
        .values()
        .map(|p| (p.name.clone(), p.config_rev.clone()))
        .collect()
}

//! The input screen's sections that need the loader (models, breakers, files, secrets):
//! `[guard]`, `[judge]` and `[cache]`, validated into what the stages run with.

use super::loader::Loader;
use super::{raw, Overrides};
use crate::backends::embedded::EmbeddedBackend;
use crate::backends::{self, BackendKind, GuardBackend, RemoteTarget, Thresholds};
use crate::screens::input::cache::CacheSettings;
use crate::screens::input::stages::guard::{GuardSection, Prefilter};
use crate::screens::input::stages::judge::{JudgeClient, JudgeSection};
use std::sync::Arc;
use std::time::Duration;

/// A built section and what the revision hashes of its settings.
pub(super) struct Built<T> {
    pub(super) section: T,
    pub(super) settings: String,
}

impl raw::RawGuard {
    /// The environment override (`GUARD_MODEL_*`) wins over the product file. Thresholds belong
    /// to a kind of model: the product's own apply to the kind the product names; an override
    /// of the kind takes that kind's defaults (or `GUARD_MODEL_ALLOW_BELOW` / `_BLOCK_AT`).
    pub(super) fn build(
        &self,
        l: &mut Loader<'_>,
        file: &str,
        overrides: &Overrides,
    ) -> Option<Built<GuardSection>> {
        let (kind_str, url, model, allow, block) = match &overrides.model_url {
            Some(url) => (
                overrides.model_kind.clone().unwrap_or_default(),
                url.clone(),
                overrides.model_name.clone().unwrap_or_default(),
                overrides.allow_below,
                overrides.block_at,
            ),
            None => (
                self.kind.clone(),
                self.url.clone(),
                self.model.clone(),
                self.allow_below,
                self.block_at,
            ),
        };
        let Some(kind) = BackendKind::parse(&kind_str) else {
            l.problem(
                file,
                "guard.kind",
                format!("unknown guard kind `{kind_str}`"),
                "one of embedded, llama_guard_3, qwen3guard, tei, openai_moderation",
            );
            return None;
        };
        let defaults = kind.default_thresholds();
        let thresholds = Thresholds {
            allow_below: allow.unwrap_or(defaults.allow_below),
            block_at: block.unwrap_or(defaults.block_at),
        };
        let (a, b) = (thresholds.allow_below, thresholds.block_at);
        if !(0.0..=1.0).contains(&a) || !(0.0..=1.0).contains(&b) || a > b {
            l.problem(
                file,
                "guard.allow_below / guard.block_at",
                format!("need 0 <= allow_below ({a}) <= block_at ({b}) <= 1"),
                "e.g. allow_below = 0.5, block_at = 0.9",
            );
        }
        if self.timeout_ms == 0 || self.timeout_ms > raw::MAX_TIMEOUT_MS {
            l.problem(
                file,
                "guard.timeout_ms",
                format!("must be between 1 and {}", raw::MAX_TIMEOUT_MS),
                "e.g. 1500",
            );
        }
        let mut breaker = None;
        let backend: Arc<dyn GuardBackend> = if kind == BackendKind::Embedded {
            Arc::new(EmbeddedBackend {
                model: l.model(file, &self.model_path)?,
            })
        } else {
            let b = l.breaker(file, "guard", &format!("{url}|{model}"), &self.breaker)?;
            let http = b.transport().clone();
            breaker = Some(b);
            if url.is_empty() {
                l.problem(
                    file,
                    "guard.url",
                    format!("guard kind `{kind_str}` needs a url"),
                    "e.g. url = \"http://127.0.0.1:8000/v1\"",
                );
            }
            if model.is_empty() && kind != BackendKind::Tei {
                l.problem(
                    file,
                    "guard.model",
                    format!("guard kind `{kind_str}` needs a model name"),
                    "the name the server serves, e.g. \"meta-llama/Llama-Guard-3-8B\"",
                );
            }
            let api_key = if overrides.model_url.is_some() {
                overrides.model_api_key.clone()
            } else {
                l.api_key(
                    file,
                    "guard.api_key_env",
                    &self.api_key_env,
                    &overrides.secrets,
                )
            };
            let target = RemoteTarget {
                url: url.clone(),
                model: model.clone(),
                api_key,
            };
            backends::remote(kind, http, target)
        };
        let prefilter = match self.embedded_first_below {
            None => None,
            Some(_) if kind == BackendKind::Embedded => {
                l.problem(
                    file,
                    "guard.embedded_first_below",
                    "the tiered guard puts the embedded model before a remote one".to_string(),
                    "set it only with a remote kind (llama_guard_3, qwen3guard, tei, openai_moderation)",
                );
                None
            }
            Some(t) => {
                let most = BackendKind::Embedded.default_thresholds().allow_below;
                if !(t > 0.0 && t <= most) {
                    l.problem(
                        file,
                        "guard.embedded_first_below",
                        format!("must be above 0 and at most {most} (the embedded model's own allow_below)"),
                        "e.g. 0.05: only what the embedded model is sure of skips the remote model",
                    );
                }
                Some(Prefilter {
                    backend: Arc::new(EmbeddedBackend {
                        model: l.model(file, &self.model_path)?,
                    }),
                    allow_below: t,
                })
            }
        };
        let tier = self
            .embedded_first_below
            .map_or(String::new(), |t| format!("|embedded_first_below={t}"));
        Some(Built {
            section: GuardSection {
                backend,
                prefilter,
                breaker,
                thresholds,
                timeout: Duration::from_millis(self.timeout_ms),
            },
            settings: format!("{kind_str}|{url}|{model}|{a}|{b}|{}{tier}", self.timeout_ms),
        })
    }
}

impl raw::RawJudge {
    pub(super) fn build(
        &self,
        l: &mut Loader<'_>,
        file: &str,
        name: &str,
        overrides: &Overrides,
    ) -> Option<Built<JudgeSection>> {
        let prompt = if self.prompt.is_empty() {
            l.problem(
                file,
                "judge.prompt",
                "no judge instructions",
                format!("judge.prompt = \"judge_prompts/{name}.md\""),
            );
            String::new()
        } else {
            let text = l
                .read_text(file, "judge.prompt", &self.prompt)
                .unwrap_or_default();
            if text.trim().is_empty() && l.files.get(&self.prompt).is_some_and(Option::is_some) {
                l.problem(
                    &self.prompt,
                    "-",
                    "the judge instructions are empty",
                    "write what is normal work and what is abuse for this product",
                );
            }
            text
        };
        if self.timeout_ms == 0
            || self.timeout_ms > raw::MAX_TIMEOUT_MS
            || self.max_tokens == 0
            || self.max_tokens > raw::MAX_JUDGE_TOKENS
        {
            l.problem(
                file,
                "judge.timeout_ms / judge.max_tokens",
                format!(
                    "timeout_ms must be 1 to {}, max_tokens 1 to {}",
                    raw::MAX_TIMEOUT_MS,
                    raw::MAX_JUDGE_TOKENS
                ),
                "e.g. timeout_ms = 3000, max_tokens = 200",
            );
        }
        let (url, model) = match (&overrides.judge_url, &overrides.judge_model) {
            (Some(u), Some(m)) => (u.clone(), m.clone()),
            _ => (self.url.clone(), self.model.clone()),
        };
        let settings = format!("{url}|{model}|{}|{}", self.timeout_ms, self.max_tokens);
        let (breaker, client) = match url.is_empty() {
            true => (None, None),
            false => {
                let breaker = l.breaker(file, "judge", &format!("{url}|{model}"), &self.breaker)?;
                if model.is_empty() {
                    l.problem(
                        file,
                        "judge.model",
                        "a judge url needs a model name",
                        "the name the chat server serves",
                    );
                }
                let api_key = if overrides.judge_url.is_some() {
                    overrides.judge_api_key.clone()
                } else {
                    l.api_key(
                        file,
                        "judge.api_key_env",
                        &self.api_key_env,
                        &overrides.secrets,
                    )
                };
                let client = Arc::new(JudgeClient {
                    http: breaker.transport().clone(),
                    target: RemoteTarget {
                        url,
                        model,
                        api_key,
                    },
                    max_tokens: self.max_tokens,
                });
                (Some(breaker), Some(client))
            }
        };
        Some(Built {
            section: JudgeSection {
                prompt,
                client,
                breaker,
                timeout: Duration::from_millis(self.timeout_ms),
            },
            settings,
        })
    }
}

impl raw::RawCache {
    pub(super) fn build(&self, l: &mut Loader<'_>, file: &str) -> CacheSettings {
        if self.enabled
            && (self.max_entries == 0
                || self.max_entries > raw::MAX_CACHE_ENTRIES
                || self.ttl_secs == 0
                || self.ttl_secs > raw::MAX_TTL_SECS)
        {
            l.problem(
                file,
                "cache.max_entries / cache.ttl_secs",
                format!(
                    "max_entries must be 1 to {}, ttl_secs 1 to {} when the cache is enabled",
                    raw::MAX_CACHE_ENTRIES,
                    raw::MAX_TTL_SECS
                ),
                "or set cache.enabled = false",
            );
        }
        CacheSettings {
            enabled: self.enabled,
            max_entries: self.max_entries,
            ttl: Duration::from_secs(self.ttl_secs),
        }
    }
}

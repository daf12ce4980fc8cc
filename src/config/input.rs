//! The input screen's sections that need the loader (models, breakers, files, secrets):
//! `[guard]`, `[judge]` and `[cache]`, validated into what the stages run with.

use super::loader::Loader;
use super::overrides::Overrides;
use super::raw;
use crate::backends::breaker::Breaker;
use crate::backends::embedded::EmbeddedBackend;
use crate::backends::transport::{Transport, CALL_TIMEOUT};
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

/// The remote backend of a kind (the embedded one is built from its model file).
fn remote(kind: BackendKind, http: Transport, target: RemoteTarget) -> Arc<dyn GuardBackend> {
    use backends::{moderation, openai_chat, tei};
    match kind {
        BackendKind::LlamaGuard3 => Arc::new(openai_chat::OpenAiChatBackend {
            http,
            target,
            protocol: openai_chat::Protocol::LlamaGuard3,
        }),
        BackendKind::Qwen3guard => Arc::new(openai_chat::OpenAiChatBackend {
            http,
            target,
            protocol: openai_chat::Protocol::Qwen3Guard,
        }),
        BackendKind::Tei => Arc::new(tei::TeiBackend { http, target }),
        BackendKind::OpenaiModeration | BackendKind::Embedded => {
            Arc::new(moderation::ModerationBackend { http, target })
        }
    }
}

/// A guard model and, for a remote one, its breaker.
type Backend = (Arc<dyn GuardBackend>, Option<Arc<Breaker>>);

/// The guard a product calls: its kind and where it is (the override's, or the file's).
struct Target {
    kind: String,
    url: String,
    model: String,
    allow_below: Option<f32>,
    block_at: Option<f32>,
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
        let target = self.target(overrides);
        let Some(kind) = BackendKind::parse(&target.kind) else {
            l.problem(
                file,
                "guard.kind",
                format!("unknown guard kind `{}`", target.kind),
                "one of embedded, llama_guard_3, qwen3guard, tei, openai_moderation",
            );
            return None;
        };
        let thresholds = self.thresholds(l, file, kind, &target);
        if self.timeout_ms == 0 || self.timeout_ms > raw::MAX_TIMEOUT_MS {
            l.problem(
                file,
                "guard.timeout_ms",
                format!("must be between 1 and {}", raw::MAX_TIMEOUT_MS),
                "e.g. 1500",
            );
        }
        let (backend, breaker) = self.backend(l, file, kind, &target, overrides)?;
        let prefilter = self.prefilter(l, file, kind)?;
        let tier = self
            .embedded_first_below
            .map_or(String::new(), |t| format!("|embedded_first_below={t}"));
        let (a, b) = (thresholds.allow_below, thresholds.block_at);
        let Target {
            kind, url, model, ..
        } = target;
        Some(Built {
            section: GuardSection {
                backend,
                prefilter,
                breaker,
                thresholds,
                timeout: Duration::from_millis(self.timeout_ms),
            },
            settings: format!("{kind}|{url}|{model}|{a}|{b}|{}{tier}", self.timeout_ms),
        })
    }

    fn target(&self, overrides: &Overrides) -> Target {
        match &overrides.model_url {
            Some(url) => Target {
                kind: overrides.model_kind.clone().unwrap_or_default(),
                url: url.clone(),
                model: overrides.model_name.clone().unwrap_or_default(),
                allow_below: overrides.allow_below,
                block_at: overrides.block_at,
            },
            None => Target {
                kind: self.kind.clone(),
                url: self.url.clone(),
                model: self.model.clone(),
                allow_below: self.allow_below,
                block_at: self.block_at,
            },
        }
    }

    /// The target's thresholds, or its kind's defaults; `0 <= allow_below <= block_at <= 1`.
    fn thresholds(
        &self,
        l: &mut Loader<'_>,
        file: &str,
        kind: BackendKind,
        target: &Target,
    ) -> Thresholds {
        let defaults = kind.default_thresholds();
        let thresholds = Thresholds {
            allow_below: target.allow_below.unwrap_or(defaults.allow_below),
            block_at: target.block_at.unwrap_or(defaults.block_at),
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
        thresholds
    }

    /// The model: the embedded one, or a remote one behind its breaker.
    fn backend(
        &self,
        l: &mut Loader<'_>,
        file: &str,
        kind: BackendKind,
        target: &Target,
        overrides: &Overrides,
    ) -> Option<Backend> {
        if kind == BackendKind::Embedded {
            let model = l.model(file, &self.model_path)?;
            return Some((Arc::new(EmbeddedBackend { model }), None));
        }
        let Target {
            kind: name,
            url,
            model,
            ..
        } = target;
        let breaker = l.breaker(file, "guard", &format!("{url}|{model}"), &self.breaker)?;
        if url.is_empty() {
            l.problem(
                file,
                "guard.url",
                format!("guard kind `{name}` needs a url"),
                "e.g. url = \"http://127.0.0.1:8000/v1\"",
            );
        }
        if model.is_empty() && kind != BackendKind::Tei {
            l.problem(
                file,
                "guard.model",
                format!("guard kind `{name}` needs a model name"),
                "the name the server serves, e.g. \"meta-llama/Llama-Guard-3-8B\"",
            );
        }
        let api_key = if overrides.model_url.is_some() {
            overrides.model_api_key.clone()
        } else {
            let secrets = &overrides.secrets;
            l.api_key(file, "guard.api_key_env", &self.api_key_env, secrets)
        };
        let target = RemoteTarget {
            url: url.clone(),
            model: model.clone(),
            api_key,
        };
        let backend = remote(kind, breaker.transport().clone(), target);
        Some((backend, Some(breaker)))
    }

    /// The tiered guard's embedded model (remote kinds only); `None` when the model file does
    /// not load.
    fn prefilter(
        &self,
        l: &mut Loader<'_>,
        file: &str,
        kind: BackendKind,
    ) -> Option<Option<Prefilter>> {
        let Some(t) = self.embedded_first_below else {
            return Some(None);
        };
        if kind == BackendKind::Embedded {
            l.problem(
                file,
                "guard.embedded_first_below",
                "the tiered guard puts the embedded model before a remote one".to_string(),
                "set it only with a remote kind (llama_guard_3, qwen3guard, tei, openai_moderation)",
            );
            return Some(None);
        }
        let most = BackendKind::Embedded.default_thresholds().allow_below;
        if !(t > 0.0 && t <= most) {
            l.problem(
                file,
                "guard.embedded_first_below",
                format!(
                    "must be above 0 and at most {most} (the embedded model's own allow_below)"
                ),
                "e.g. 0.05: only what the embedded model is sure of skips the remote model",
            );
        }
        let model = l.model(file, &self.model_path)?;
        Some(Some(Prefilter {
            backend: Arc::new(EmbeddedBackend { model }),
            allow_below: t,
        }))
    }
}

impl raw::RawJudge {
    /// The environment override (`GUARD_JUDGE_URL` and `_MODEL`) wins over the product file.
    pub(super) fn build(
        &self,
        l: &mut Loader<'_>,
        file: &str,
        name: &str,
        overrides: &Overrides,
    ) -> Option<Built<JudgeSection>> {
        let prompt = self.prompt(l, file, name);
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
                let (breaker, client) = self.client(l, file, url, model, overrides)?;
                (Some(breaker), Some(client))
            }
        };
        Some(Built {
            section: JudgeSection {
                prompt,
                client,
                breaker,
                timeout: overrides
                    .judge_timeout
                    .unwrap_or(Duration::from_millis(self.timeout_ms)),
            },
            settings,
        })
    }

    /// The product's judge instructions; none (or an empty file) is a problem.
    fn prompt(&self, l: &mut Loader<'_>, file: &str, name: &str) -> String {
        if self.prompt.is_empty() {
            l.problem(
                file,
                "judge.prompt",
                "no judge instructions",
                format!("judge.prompt = \"judge_prompts/{name}.md\""),
            );
            return String::new();
        }
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
    }

    /// The judge server's client, behind its breaker.
    fn client(
        &self,
        l: &mut Loader<'_>,
        file: &str,
        url: String,
        model: String,
        overrides: &Overrides,
    ) -> Option<(Arc<Breaker>, Arc<JudgeClient>)> {
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
            let secrets = &overrides.secrets;
            l.api_key(file, "judge.api_key_env", &self.api_key_env, secrets)
        };
        let client = Arc::new(JudgeClient {
            http: breaker.transport().clone(),
            target: RemoteTarget {
                url,
                model,
                api_key,
            },
            max_tokens: self.max_tokens,
            bound: overrides
                .judge_timeout
                .map_or(CALL_TIMEOUT, |t| t.max(CALL_TIMEOUT)),
        });
        Some((breaker, client))
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

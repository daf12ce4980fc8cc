//! Guard model backends: each one turns a question into a [`Judgement`] (its native label,
//! P(unsafe) when it has one, and categories). They only evaluate; the guard stage applies the
//! product's thresholds and the pipeline applies timeouts and the fail-closed policy.
//!
//! Each remote backend calls its model through its own [`transport::Transport`]: a pooled `reqwest::Client`
//! behind a semaphore, so its calls in flight never outnumber the backend's cap.

pub mod breaker;
pub mod embedded;
pub mod model_file;
pub mod moderation;
pub mod openai_chat;
pub mod tei;
pub mod token_vectors;
pub mod transport;

use crate::screens::input::question::Question;
use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};

/// Which backend a product uses; also the closed label set for metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BackendKind {
    Embedded,
    LlamaGuard3,
    Qwen3guard,
    Tei,
    OpenaiModeration,
}

impl BackendKind {
    pub const ALL: [BackendKind; 5] = [
        BackendKind::Embedded,
        BackendKind::LlamaGuard3,
        BackendKind::Qwen3guard,
        BackendKind::Tei,
        BackendKind::OpenaiModeration,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            BackendKind::Embedded => "embedded",
            BackendKind::LlamaGuard3 => "llama_guard_3",
            BackendKind::Qwen3guard => "qwen3guard",
            BackendKind::Tei => "tei",
            BackendKind::OpenaiModeration => "openai_moderation",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// Thresholds on P(unsafe) for this kind of model when the product sets none. The embedded
    /// model's were tuned on the development split (models/README.md); the remote ones take
    /// the models' own decision boundary (0.5) and block outright only when the model is sure.
    /// Labels come first either way: an explicit `unsafe` is never below borderline.
    pub fn default_thresholds(self) -> Thresholds {
        let (allow_below, block_at) = match self {
            BackendKind::Embedded => (0.62, 0.9),
            BackendKind::LlamaGuard3
            | BackendKind::Qwen3guard
            | BackendKind::Tei
            | BackendKind::OpenaiModeration => (0.5, 0.9),
        };
        Thresholds {
            allow_below,
            block_at,
        }
    }
}

/// Per-product thresholds on P(unsafe): what the guard stage turns a [`Judgement`] into
/// `safe`, `borderline` or `unsafe` with. Each kind of model has its defaults.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Thresholds {
    /// Below this, safe.
    pub allow_below: f32,
    /// At or above this, unsafe. In between: borderline, the judge decides.
    pub block_at: f32,
}

/// How a model call ended: the `outcome` label of `guard_model_calls_total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelOutcome {
    Ok,
    Timeout,
    Error,
    Unparsable,
    /// The breaker was open: not called.
    CircuitOpen,
    /// The backend's concurrency cap was full: not called.
    Shed,
}

impl ModelOutcome {
    pub const ALL: [ModelOutcome; 6] = [
        ModelOutcome::Ok,
        ModelOutcome::Timeout,
        ModelOutcome::Error,
        ModelOutcome::Unparsable,
        ModelOutcome::CircuitOpen,
        ModelOutcome::Shed,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ModelOutcome::Ok => "ok",
            ModelOutcome::Timeout => "timeout",
            ModelOutcome::Error => "error",
            ModelOutcome::Unparsable => "unparsable",
            ModelOutcome::CircuitOpen => "circuit_open",
            ModelOutcome::Shed => "shed",
        }
    }
}

/// The model's own label, before thresholds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NativeLabel {
    Safe,
    Unsafe,
    /// Qwen3Guard's "Controversial": always borderline.
    Controversial,
    /// A score-only backend (classifier, moderation, embedded): thresholds decide.
    Score,
}

/// One backend answer, uniform across backends.
#[derive(Debug, Clone, PartialEq)]
pub struct Judgement {
    pub label: NativeLabel,
    /// P(unsafe) in [0, 1] when the backend has one.
    pub p_unsafe: Option<f32>,
    pub categories: Vec<String>,
}

/// Why a backend gave no judgement. Every variant makes the safety screen fail closed.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum BackendError {
    #[error("timed out")]
    Timeout,
    #[error("connection failed: {0}")]
    Connect(String),
    #[error("HTTP status {0}")]
    Status(u16),
    #[error("unparsable answer: {0}")]
    Unparsable(String),
    /// The backend's circuit breaker is open: failed at once, not called.
    #[error("circuit open")]
    CircuitOpen,
    /// Every slot of the backend's concurrency cap was taken: shed at once, not queued.
    #[error("shed")]
    Shed,
}

impl BackendError {
    /// Closed label for metrics.
    pub fn outcome(&self) -> ModelOutcome {
        match self {
            BackendError::Timeout => ModelOutcome::Timeout,
            BackendError::Connect(_) | BackendError::Status(_) => ModelOutcome::Error,
            BackendError::Unparsable(_) => ModelOutcome::Unparsable,
            BackendError::CircuitOpen => ModelOutcome::CircuitOpen,
            BackendError::Shed => ModelOutcome::Shed,
        }
    }
}

/// A guard model. A remote backend reads only [`Question::outbound`] (invisible characters
/// removed, card numbers masked); the embedded one reads the folded forms.
pub trait GuardBackend: Send + Sync + std::fmt::Debug {
    fn kind(&self) -> BackendKind;
    fn classify<'a>(&'a self, q: &'a Question) -> BoxFuture<'a, Result<Judgement, BackendError>>;
}

/// Where a remote backend lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteTarget {
    /// Base URL, e.g. `http://127.0.0.1:8000/v1` (chat, moderation) or `http://127.0.0.1:8080` (TEI).
    pub url: String,
    pub model: String,
    /// Bearer token, read from the environment variable the config names.
    pub api_key: Option<String>,
}

impl RemoteTarget {
    pub(crate) fn endpoint(&self, path: &str) -> String {
        format!(
            "{}/{}",
            self.url.trim_end_matches('/'),
            path.trim_start_matches('/')
        )
    }
}

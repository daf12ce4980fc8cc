//! The product files as written (`products/<name>.toml`): strict serde structs. Unknown keys
//! are errors. Runtime code never sees these; `config::build` validates them into a `Product`.

use serde::Deserialize;

/// One product: `products/<name>.toml`. The file name (without `.toml`) is the product name.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawProduct {
    /// Free text shown by `check-config`.
    #[serde(default)]
    pub description: String,
    /// Languages the product accepts: a non-empty subset of `["en", "bn"]`.
    pub languages: Vec<String>,
    /// The fixed reply every blocked question gets, in both languages.
    pub reply: RawReply,
    #[serde(default)]
    pub language: RawLanguage,
    #[serde(default)]
    pub signatures: RawSignatures,
    #[serde(default)]
    pub guard: RawGuard,
    #[serde(default)]
    pub judge: RawJudge,
    #[serde(default)]
    pub cache: RawCache,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawReply {
    /// English text of the fixed reply.
    pub en: String,
    /// Bangla text of the fixed reply.
    pub bn: String,
}

/// The language screen's wordlists, relative to the config directory.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLanguage {
    /// `word zipf` lines.
    #[serde(default = "default_english")]
    pub english_wordlist: String,
    /// One Banglish word per line.
    #[serde(default = "default_banglish")]
    pub banglish_wordlist: String,
    /// Other romanized languages (rejected as `hi-Latn`), one word per line.
    #[serde(default = "default_other")]
    pub other_wordlists: Vec<String>,
}

impl Default for RawLanguage {
    fn default() -> Self {
        RawLanguage {
            english_wordlist: default_english(),
            banglish_wordlist: default_banglish(),
            other_wordlists: default_other(),
        }
    }
}

fn default_english() -> String {
    "wordlists/english.txt".into()
}
fn default_banglish() -> String {
    "wordlists/banglish.txt".into()
}
fn default_other() -> Vec<String> {
    vec!["wordlists/romanized-other.txt".into()]
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSignatures {
    /// Signature lists, relative to the config directory.
    #[serde(default = "default_signatures")]
    pub wordlists: Vec<String>,
}

impl Default for RawSignatures {
    fn default() -> Self {
        RawSignatures {
            wordlists: default_signatures(),
        }
    }
}

fn default_signatures() -> Vec<String> {
    vec![
        "wordlists/injection-en.txt".into(),
        "wordlists/injection-bn.txt".into(),
        "wordlists/injection-banglish.txt".into(),
    ]
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawGuard {
    /// `embedded` (default), `llama_guard_3`, `qwen3guard`, `tei` or `openai_moderation`.
    #[serde(default = "default_kind")]
    pub kind: String,
    /// Embedded model file; empty means the model built into the binary.
    #[serde(default)]
    pub model_path: String,
    /// Remote backends: base URL (`http://127.0.0.1:8000/v1`; TEI: the server root).
    #[serde(default)]
    pub url: String,
    /// Remote backends: the model name the server knows.
    #[serde(default)]
    pub model: String,
    /// Name of the environment variable holding a bearer token, if the server needs one.
    #[serde(default)]
    pub api_key_env: String,
    /// Below this P(unsafe): safe.
    #[serde(default = "default_allow_below")]
    pub allow_below: f32,
    /// At or above this P(unsafe): unsafe. In between: borderline (the judge decides).
    #[serde(default = "default_block_at")]
    pub block_at: f32,
    /// How long the guard may take before the question is blocked (`guard_unavailable`).
    #[serde(default = "default_guard_timeout")]
    pub timeout_ms: u64,
}

impl Default for RawGuard {
    fn default() -> Self {
        RawGuard {
            kind: default_kind(),
            model_path: String::new(),
            url: String::new(),
            model: String::new(),
            api_key_env: String::new(),
            allow_below: default_allow_below(),
            block_at: default_block_at(),
            timeout_ms: default_guard_timeout(),
        }
    }
}

fn default_kind() -> String {
    "embedded".into()
}
pub fn default_allow_below() -> f32 {
    0.5
}
pub fn default_block_at() -> f32 {
    0.9
}
fn default_guard_timeout() -> u64 {
    1500
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawJudge {
    /// The product's judge instructions (system message), relative to the config directory.
    #[serde(default)]
    pub prompt: String,
    /// OpenAI-compatible base URL (`http://127.0.0.1:8000/v1`). Empty: no judge, borderline
    /// questions block with `judge_unavailable`.
    #[serde(default)]
    pub url: String,
    #[serde(default)]
    pub model: String,
    /// Name of the environment variable holding a bearer token, if the server needs one.
    #[serde(default)]
    pub api_key_env: String,
    #[serde(default = "default_judge_timeout")]
    pub timeout_ms: u64,
    #[serde(default = "default_max_tokens")]
    pub max_tokens: u32,
}

impl Default for RawJudge {
    fn default() -> Self {
        RawJudge {
            prompt: String::new(),
            url: String::new(),
            model: String::new(),
            api_key_env: String::new(),
            timeout_ms: default_judge_timeout(),
            max_tokens: default_max_tokens(),
        }
    }
}

fn default_judge_timeout() -> u64 {
    3000
}
fn default_max_tokens() -> u32 {
    200
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCache {
    #[serde(default = "yes")]
    pub enabled: bool,
    #[serde(default = "default_max_entries")]
    pub max_entries: u64,
    #[serde(default = "default_ttl")]
    pub ttl_secs: u64,
}

impl Default for RawCache {
    fn default() -> Self {
        RawCache {
            enabled: true,
            max_entries: default_max_entries(),
            ttl_secs: default_ttl(),
        }
    }
}

fn yes() -> bool {
    true
}
fn default_max_entries() -> u64 {
    100_000
}
fn default_ttl() -> u64 {
    600
}

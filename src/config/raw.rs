//! The product files as written (`products/<name>.toml`): strict serde structs. Unknown keys
//! are errors. Runtime code never sees these; `config::build` validates them into a `Product`.

use serde::de::DeserializeOwned;
use serde::Deserialize;

/// Upper bounds of the numbers a product may set: beyond them a setting is a typo, and some
/// (a cache TTL of centuries) would crash the service at start.
pub const MAX_TIMEOUT_MS: u64 = 60_000;
pub const MAX_TTL_SECS: u64 = 30 * 24 * 3600;
pub const MAX_CACHE_ENTRIES: u64 = 10_000_000;
pub const MAX_JUDGE_TOKENS: u32 = 4_096;

impl RawProduct {
    /// Parse a product file section by section, so that a wrong type in one section does not
    /// hide the problems of the others. Returns the product (sections that failed take their
    /// defaults, so the rest can still be checked) and every problem as (key, message).
    pub fn parse(text: &str) -> (Option<RawProduct>, Vec<(String, String)>) {
        let table: toml::Table = match toml::from_str(text) {
            Ok(t) => t,
            Err(e) => {
                let line = e
                    .span()
                    .map(|s| text[..s.start.min(text.len())].lines().count().max(1));
                let key = line.map_or_else(|| "-".to_string(), |n| format!("line {n}"));
                return (None, vec![(key, e.message().trim().to_string())]);
            }
        };
        let mut problems = Vec::new();
        const KNOWN: [&str; 12] = [
            "description",
            "languages",
            "reply",
            "replies",
            "policy",
            "output",
            "language",
            "signatures",
            "guard",
            "judge",
            "cache",
            "lookup",
        ];
        for key in table.keys() {
            if !KNOWN.contains(&key.as_str()) {
                problems.push((
                    key.clone(),
                    format!("unknown key `{key}`, expected one of {}", KNOWN.join(", ")),
                ));
            }
        }
        let mut section = |key: &str, required: bool| -> Option<toml::Value> {
            match table.get(key) {
                Some(v) => Some(v.clone()),
                None if required => {
                    problems.push((key.to_string(), format!("missing key `{key}`")));
                    None
                }
                None => None,
            }
        };
        let description = section("description", false);
        let languages = section("languages", true);
        let reply = section("reply", true);
        let replies = section("replies", false);
        let policy = section("policy", false);
        let output = section("output", false);
        let language = section("language", false);
        let signatures = section("signatures", false);
        let guard = section("guard", false);
        let judge = section("judge", false);
        let cache = section("cache", false);
        let lookup = section("lookup", false);
        let complete = languages.is_some() && reply.is_some();
        let product = RawProduct {
            description: typed(&mut problems, "description", description),
            languages: typed(&mut problems, "languages", languages),
            reply: typed(&mut problems, "reply", reply),
            replies: typed(&mut problems, "replies", replies),
            policy: typed(&mut problems, "policy", policy),
            output: typed(&mut problems, "output", output),
            language: typed(&mut problems, "language", language),
            signatures: typed(&mut problems, "signatures", signatures),
            guard: typed(&mut problems, "guard", guard),
            judge: typed(&mut problems, "judge", judge),
            cache: typed(&mut problems, "cache", cache),
            lookup: typed(&mut problems, "lookup", lookup),
        };
        (complete.then_some(product), problems)
    }
}

/// One section as its serde type; on a problem, recorded with the section's name, the default.
fn typed<T: DeserializeOwned + Default>(
    problems: &mut Vec<(String, String)>,
    key: &str,
    value: Option<toml::Value>,
) -> T {
    let Some(value) = value else {
        return T::default();
    };
    match T::deserialize(value) {
        Ok(v) => v,
        Err(e) => {
            problems.push((key.to_string(), e.message().trim().to_string()));
            T::default()
        }
    }
}

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
    /// The replies of the other reasons (the `reply` above is the language reply).
    pub replies: RawReplies,
    pub policy: RawPolicyRef,
    pub output: crate::screens::output::policy::RawOutput,
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
    /// The output screen's lookup check (`[lookup]`): constants, what an ungrounded figure
    /// does, the data-question words, the model question's prompt.
    #[serde(default)]
    pub lookup: crate::turn::lookup::RawLookup,
}

/// `[replies]`: the fixed reply for each kind of block, in both languages. Missing ones take
/// built-in texts (see `config::Replies`).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawReplies {
    /// `prompt_injection`, `unsafe`, `judge_blocked`.
    pub safety: Option<RawReply>,
    /// `policy_blocked` (a rule may set its own).
    pub policy: Option<RawReply>,
    /// `guard_unavailable`, `judge_unavailable`, `check_failed`: "please try again".
    pub unavailable: Option<RawReply>,
    /// `judge_unavailable` when the product has no judge: the question needed a second look
    /// (a review rule, a borderline score) that will never come, so the reply says where to go
    /// instead (a person, another channel).
    pub needs_review: Option<RawReply>,
}

/// The breaker and concurrency cap of a remote backend (keys of `[guard]` and `[judge]`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawBreaker {
    /// Calls at once; more are shed at once (fail closed) instead of queueing.
    #[serde(default = "default_max_concurrent")]
    pub max_concurrent: usize,
    /// Consecutive failures that open the breaker.
    #[serde(default = "default_breaker_failures")]
    pub breaker_failures: u32,
    /// How long an open breaker fails fast before one probe is let through.
    #[serde(default = "default_breaker_cooldown_ms")]
    pub breaker_cooldown_ms: u64,
}

impl Default for RawBreaker {
    fn default() -> Self {
        RawBreaker {
            max_concurrent: default_max_concurrent(),
            breaker_failures: default_breaker_failures(),
            breaker_cooldown_ms: default_breaker_cooldown_ms(),
        }
    }
}

fn default_max_concurrent() -> usize {
    64
}
fn default_breaker_failures() -> u32 {
    5
}
fn default_breaker_cooldown_ms() -> u64 {
    10_000
}

/// `[policy]`: where the product's rules are.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPolicyRef {
    /// `policies/<product>.toml`; empty: no rules.
    #[serde(default)]
    pub rules: String,
}

#[derive(Debug, Default, Clone, Deserialize)]
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
    /// Signature lists read in untrusted content only (`/v1/screen-context`): text addressed
    /// to the model or the agent, which a customer's own question may well contain.
    #[serde(default = "default_context_signatures")]
    pub context_wordlists: Vec<String>,
}

impl Default for RawSignatures {
    fn default() -> Self {
        RawSignatures {
            wordlists: default_signatures(),
            context_wordlists: default_context_signatures(),
        }
    }
}

fn default_context_signatures() -> Vec<String> {
    vec![
        "wordlists/addressed-en.txt".into(),
        "wordlists/addressed-bn.txt".into(),
    ]
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
    #[serde(default)]
    pub allow_below: Option<f32>,
    /// At or above this P(unsafe): unsafe. In between: borderline (the judge decides).
    #[serde(default)]
    pub block_at: Option<f32>,
    /// How long the guard may take before the question is blocked (`guard_unavailable`).
    #[serde(default = "default_guard_timeout")]
    pub timeout_ms: u64,
    /// Tiered guard (remote kinds only; off when absent): the embedded model scores first, and
    /// a question it scores below this P(unsafe) passes without a remote call.
    #[serde(default)]
    pub embedded_first_below: Option<f32>,
    /// Remote backends: the breaker and the concurrency cap.
    #[serde(default, flatten)]
    pub breaker: RawBreaker,
}

impl Default for RawGuard {
    fn default() -> Self {
        RawGuard {
            kind: default_kind(),
            model_path: String::new(),
            url: String::new(),
            model: String::new(),
            api_key_env: String::new(),
            allow_below: None,
            block_at: None,
            timeout_ms: default_guard_timeout(),
            embedded_first_below: None,
            breaker: RawBreaker::default(),
        }
    }
}

fn default_kind() -> String {
    "embedded".into()
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
    #[serde(default, flatten)]
    pub breaker: RawBreaker,
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
            breaker: RawBreaker::default(),
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

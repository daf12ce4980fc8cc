//! Configuration: product files → validated runtime [`Product`]s.
//!
//! Two layers (raw serde structs in [`raw`], runtime structs here). Loading never stops at the
//! first problem: every file is read, every key checked, every referenced wordlist, prompt and
//! model loaded, and all problems come back at once with file, key and a hint.

mod memo;
pub mod raw;

use crate::backends::breaker::{Breaker, BreakerSettings};
use crate::backends::embedded::{EmbeddedBackend, EmbeddedModel, BUILTIN_MODEL};
use crate::backends::Transport;
use crate::backends::{BackendKind, GuardBackend, RemoteTarget};
use crate::gate::policy::ToolPolicy;
use crate::redact::{Kind, Redactor};
use crate::stages::banglish::Lexicon;
use crate::stages::guard::Thresholds;
use crate::stages::judge::JudgeClient;
use crate::stages::policy::{Policy, RawPolicy};
use crate::stages::signatures::Signatures;
use crate::verdict::Reply;
use raw::RawProduct;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// One problem found in the configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub file: String,
    pub key: String,
    pub message: String,
    pub hint: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}: {}", self.file, self.key, self.message)?;
        if !self.hint.is_empty() {
            write!(f, "\n    hint: {}", self.hint)?;
        }
        Ok(())
    }
}

/// Every problem in the configuration.
#[derive(Debug, Clone, thiserror::Error)]
pub struct ConfigError {
    pub problems: Vec<Problem>,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{} configuration problem(s):", self.problems.len())?;
        for p in &self.problems {
            writeln!(f, "  {p}")?;
        }
        Ok(())
    }
}

/// Environment overrides that apply to every product (see the README).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Overrides {
    /// `GUARD_MODEL_URL`
    pub model_url: Option<String>,
    /// `GUARD_MODEL_KIND`
    pub model_kind: Option<String>,
    /// `GUARD_MODEL_NAME`
    pub model_name: Option<String>,
    /// `GUARD_JUDGE_URL`
    pub judge_url: Option<String>,
    /// `GUARD_JUDGE_MODEL`
    pub judge_model: Option<String>,
    /// `GUARD_MODEL_ALLOW_BELOW`: thresholds for the overriding model (else its kind's defaults).
    pub allow_below: Option<f32>,
    /// `GUARD_MODEL_BLOCK_AT`
    pub block_at: Option<f32>,
    /// `GUARD_GATE_STORE` (`memory` or `redis`): every product's `tool_gate.store`. How many
    /// replicas share the limits is a fact of the deployment, not of the policy.
    pub gate_store: Option<String>,
}

impl Overrides {
    pub fn from_env() -> Self {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        Overrides {
            model_url: var("GUARD_MODEL_URL"),
            model_kind: var("GUARD_MODEL_KIND"),
            model_name: var("GUARD_MODEL_NAME"),
            judge_url: var("GUARD_JUDGE_URL"),
            judge_model: var("GUARD_JUDGE_MODEL"),
            allow_below: var("GUARD_MODEL_ALLOW_BELOW").and_then(|v| v.trim().parse().ok()),
            block_at: var("GUARD_MODEL_BLOCK_AT").and_then(|v| v.trim().parse().ok()),
            gate_store: var("GUARD_GATE_STORE").map(|v| v.trim().to_string()),
        }
    }
}

/// Cache settings of one product.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheSettings {
    pub enabled: bool,
    pub max_entries: u64,
    pub ttl: Duration,
}

/// A validated product, ready to screen.
#[derive(Debug)]
pub struct Product {
    pub name: String,
    pub description: String,
    /// Content hash of everything this product loaded (and the overrides in force).
    pub config_rev: String,
    pub accepts_english: bool,
    pub accepts_bangla: bool,
    /// The fixed replies, by reason.
    pub replies: Replies,
    /// The product's own rules (`policies/<product>.toml`).
    pub policy: Arc<Policy>,
    /// What the output screen masks and blocks (`[output]`).
    pub output: Arc<OutputPolicy>,
    /// The tool-call gate's policy (`[tool_gate]`, `[tools.*]`, `[[velocity]]` in the policy file).
    pub tools: Arc<ToolPolicy>,
    /// Tiered guard: the embedded model first (`guard.embedded_first_below`); off when `None`.
    pub guard_prefilter: Option<crate::stages::guard::Prefilter>,
    /// The remote guard's breaker and concurrency cap (none for the embedded model).
    pub guard_breaker: Option<Arc<Breaker>>,
    /// The judge's breaker and concurrency cap.
    pub judge_breaker: Option<Arc<Breaker>>,
    pub lexicon: Arc<Lexicon>,
    pub signatures: Arc<Signatures>,
    pub guard: Arc<dyn GuardBackend>,
    pub thresholds: Thresholds,
    pub guard_timeout: Duration,
    pub judge_prompt: String,
    pub judge: Option<Arc<JudgeClient>>,
    pub judge_timeout: Duration,
    pub cache: CacheSettings,
}

/// Every product of a configuration directory.
#[derive(Debug)]
pub struct ConfigSet {
    pub dir: PathBuf,
    pub products: BTreeMap<String, Arc<Product>>,
}

/// A product's fixed replies, each in English and Bangla.
#[derive(Debug, Clone, PartialEq)]
pub struct Replies {
    pub language: Reply,
    pub safety: Reply,
    pub policy: Reply,
    pub unavailable: Reply,
    /// Per policy rule id, where the rule sets its own.
    pub rules: BTreeMap<String, Reply>,
}

impl Replies {
    /// The reply of a blocked verdict: by its reason, and for a policy block by its rule (the
    /// rule id is the verdict's first category).
    pub fn for_block(&self, reason: crate::verdict::Reason, categories: &[String]) -> Reply {
        use crate::verdict::Reason as R;
        match reason {
            R::UnsupportedLanguage => self.language.clone(),
            R::PolicyBlocked => categories
                .first()
                .and_then(|id| self.rules.get(id))
                .unwrap_or(&self.policy)
                .clone(),
            R::GuardUnavailable | R::JudgeUnavailable | R::CheckFailed => self.unavailable.clone(),
            R::PromptInjection | R::Unsafe | R::JudgeBlocked | R::Passed | R::JudgeAllowed => {
                self.safety.clone()
            }
        }
    }
}

fn built_in(en: &str, bn: &str) -> Reply {
    Reply::new(en, bn)
}

impl raw::RawReplies {
    fn build(&self, language: Reply, policy: &Policy) -> Replies {
        let take = |r: &Option<raw::RawReply>, default: Reply| {
            r.as_ref().map_or(default, |r| Reply::new(&r.en, &r.bn))
        };
        Replies {
            language,
            safety: take(
                &self.safety,
                built_in(
                    "Sorry, I can't help with that request.",
                    "দুঃখিত, এই অনুরোধে আমি সাহায্য করতে পারি না।",
                ),
            ),
            policy: take(
                &self.policy,
                built_in(
                    "Sorry, that is not something I can do here.",
                    "দুঃখিত, এটি এখানে আমি করতে পারি না।",
                ),
            ),
            unavailable: take(
                &self.unavailable,
                built_in(
                    "Sorry, we cannot check your question right now. Please try again in a moment.",
                    "দুঃখিত, এই মুহূর্তে আপনার প্রশ্নটি যাচাই করা যাচ্ছে না। অনুগ্রহ করে একটু পরে আবার চেষ্টা করুন।",
                ),
            ),
            rules: policy
                .rules
                .iter()
                .filter_map(|r| r.reply.clone().map(|reply| (r.id.clone(), reply)))
                .collect(),
        }
    }
}

/// The output screen's settings of one product.
#[derive(Debug)]
pub struct OutputPolicy {
    pub redactor: Arc<Redactor>,
    /// Kinds that must never go out: an answer holding one is blocked.
    pub block: BTreeSet<Kind>,
}

impl raw::RawOutput {
    fn build(&self, l: &mut Loader<'_>, file: &str) -> OutputPolicy {
        let mut kind = |key: &str, s: &str| match Kind::parse(s) {
            Some(k) => Some(k),
            None => {
                l.problem(
                    file,
                    key,
                    format!("unknown kind `{s}`"),
                    "card, account, phone, nid, otp, pin, email, iban, identifier, internal_name",
                );
                None
            }
        };
        let kinds: BTreeSet<Kind> = self
            .kinds
            .iter()
            .filter_map(|s| kind("output.kinds", s))
            .collect();
        let block: BTreeSet<Kind> = self
            .block
            .iter()
            .filter_map(|s| kind("output.block", s))
            .collect();
        let visible: Vec<(Kind, usize)> = self
            .visible
            .iter()
            .filter_map(|(s, n)| kind("output.visible", s).map(|k| (k, *n)))
            .collect();
        for id in &self.identifiers {
            if id.prefix.trim().len() < 2
                || id.min_len == 0
                || id.min_len > id.max_len
                || id.max_len > 64
            {
                l.problem(
                    file,
                    "output.identifiers",
                    format!("identifier `{}`: need a prefix of 2+ characters and 1 <= min_len <= max_len <= 64", id.prefix),
                    "e.g. { prefix = \"CUST-\", min_len = 6, max_len = 10 }",
                );
            }
        }
        if let Some(k) = block.iter().find(|k| !kinds.contains(k)) {
            l.problem(
                file,
                "output.block",
                format!(
                    "`{}` blocks but is not in output.kinds, so it is never found",
                    k.as_str()
                ),
                "add it to output.kinds",
            );
        }
        let identifiers = self
            .identifiers
            .iter()
            .map(|i| crate::redact::Identifier {
                prefix: i.prefix.clone(),
                min_len: i.min_len,
                max_len: i.max_len,
            })
            .collect();
        let names = if kinds.contains(&Kind::InternalName) {
            self.internal_names.clone()
        } else {
            Vec::new()
        };
        OutputPolicy {
            redactor: Arc::new(Redactor::new(
                kinds,
                &visible,
                identifiers,
                names,
                &self.replacement,
            )),
            block,
        }
    }
}

impl Product {
    /// Whether the product takes questions in this language (`en` or `bn`; nothing else).
    pub fn accepts(&self, language: &str) -> bool {
        match language {
            "en" => self.accepts_english,
            "bn" => self.accepts_bangla,
            _ => false,
        }
    }
}

impl ConfigSet {
    pub fn product(&self, name: &str) -> Option<&Arc<Product>> {
        self.products.get(name)
    }
}

/// Shared while loading: each file is read once and each compiled list built once, however
/// many products name it.
struct Loader<'a> {
    dir: &'a Path,
    problems: Vec<Problem>,
    files: HashMap<String, Option<Arc<Vec<u8>>>>,
    lexicons: HashMap<Vec<String>, Option<Arc<Lexicon>>>,
    signatures: HashMap<Vec<String>, Option<Arc<Signatures>>>,
    models: HashMap<String, Option<Arc<EmbeddedModel>>>,
    /// One breaker per remote target (role, URL, model), shared by the products that use it.
    breakers: HashMap<String, Arc<Breaker>>,
}

impl Loader<'_> {
    fn problem(
        &mut self,
        file: &str,
        key: &str,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) {
        self.problems.push(Problem {
            file: file.into(),
            key: key.into(),
            message: message.into(),
            hint: hint.into(),
        });
    }

    /// Read a file relative to the config dir, once. A missing file is a problem of `owner`.
    fn read(&mut self, owner: &str, key: &str, rel: &str) -> Option<Arc<Vec<u8>>> {
        if let Some(cached) = self.files.get(rel).cloned() {
            if cached.is_none() {
                self.problem(
                    owner,
                    key,
                    format!("cannot read `{rel}`"),
                    "see the first report of this file",
                );
            }
            return cached;
        }
        let path = self.dir.join(rel);
        let got = match std::fs::read(&path) {
            Ok(bytes) => Some(Arc::new(bytes)),
            Err(e) => {
                self.problem(
                    owner,
                    key,
                    format!("cannot read `{}`: {e}", path.display()),
                    "paths are relative to the config directory (--config-dir / GUARD_CONFIG_DIR)",
                );
                None
            }
        };
        self.files.insert(rel.to_string(), got.clone());
        got
    }

    fn read_text(&mut self, owner: &str, key: &str, rel: &str) -> Option<String> {
        let bytes = self.read(owner, key, rel)?;
        match String::from_utf8(bytes.to_vec()) {
            Ok(s) => Some(s),
            Err(_) => {
                self.problem(rel, "-", "not valid UTF-8", "save the file as UTF-8");
                None
            }
        }
    }

    fn lexicon(&mut self, owner: &str, lang: &raw::RawLanguage) -> Option<Arc<Lexicon>> {
        let mut paths = vec![
            lang.english_wordlist.clone(),
            lang.banglish_wordlist.clone(),
        ];
        paths.extend(lang.other_wordlists.iter().cloned());
        if let Some(l) = self.lexicons.get(&paths) {
            return l.clone();
        }
        let english = self.read_text(owner, "language.english_wordlist", &lang.english_wordlist);
        let banglish = self.read_text(owner, "language.banglish_wordlist", &lang.banglish_wordlist);
        let others: Vec<Option<String>> = lang
            .other_wordlists
            .iter()
            .map(|p| self.read_text(owner, "language.other_wordlists", p))
            .collect();
        let built = match (english, banglish, others.iter().all(Option::is_some)) {
            (Some(e), Some(b), true) => {
                let others: Vec<&str> = others.iter().flatten().map(String::as_str).collect();
                let mut parts = vec![e.as_str(), b.as_str()];
                parts.extend(others.iter().copied());
                match memo::shared(&memo::LEXICONS, &parts, || Lexicon::parse(&e, &b, &others)) {
                    Ok(l) => Some(l),
                    Err((index, err)) => {
                        let file = paths.get(index).cloned().unwrap_or_default();
                        self.problem(&file, "-", err.to_string(), "English lines are `word zipf`; other lists one ASCII word per line; `#` starts a comment");
                        None
                    }
                }
            }
            _ => None,
        };
        self.lexicons.insert(paths, built.clone());
        built
    }

    fn signatures(&mut self, owner: &str, paths: &[String]) -> Option<Arc<Signatures>> {
        if let Some(s) = self.signatures.get(paths) {
            return s.clone();
        }
        let mut lists = Vec::new();
        for p in paths {
            let text = self.read_text(owner, "signatures.wordlists", p)?;
            let name = Path::new(p)
                .file_stem()
                .map_or_else(|| p.clone(), |s| s.to_string_lossy().into_owned());
            lists.push((name, text));
        }
        let parts: Vec<&str> = lists
            .iter()
            .flat_map(|(n, t)| [n.as_str(), t.as_str()])
            .collect();
        let built = match memo::shared(&memo::SIGNATURES, &parts, || Signatures::parse(&lists)) {
            Ok(s) => Some(s),
            Err((index, err)) => {
                let file = paths.get(index).cloned().unwrap_or_default();
                self.problem(
                    &file,
                    "-",
                    err.to_string(),
                    "one signature per line; `{a|b|}` groups; `#` starts a comment",
                );
                None
            }
        };
        self.signatures.insert(paths.to_vec(), built.clone());
        built
    }

    fn model(&mut self, owner: &str, rel: &str) -> Option<Arc<EmbeddedModel>> {
        if let Some(m) = self.models.get(rel) {
            return m.clone();
        }
        let decoded = if rel.is_empty() {
            BUILTIN.clone()
        } else {
            let bytes = self.read(owner, "guard.model_path", rel)?;
            EmbeddedModel::from_bytes(&bytes).map(Arc::new)
        };
        let built = match decoded {
            Ok(m) => Some(m),
            Err(e) => {
                self.problem(
                    owner,
                    "guard.model_path",
                    e.to_string(),
                    "rebuild it with `cargo run --release -p guard-train`",
                );
                None
            }
        };
        self.models.insert(rel.to_string(), built.clone());
        built
    }

    /// The breaker of a remote target, with its transport, shared by every product that calls
    /// it (the transport by every load too: its sockets stay bounded across reloads).
    fn breaker(
        &mut self,
        owner: &str,
        role: &str,
        target: &str,
        raw: &raw::RawBreaker,
    ) -> Option<Arc<Breaker>> {
        if raw.max_concurrent == 0 || raw.breaker_failures == 0 || raw.breaker_cooldown_ms == 0 {
            self.problem(
                owner,
                &format!("{role}.max_concurrent / breaker_failures / breaker_cooldown_ms"),
                "must be above 0",
                "e.g. max_concurrent = 64, breaker_failures = 5, breaker_cooldown_ms = 10000",
            );
        }
        let settings = BreakerSettings {
            max_concurrent: raw.max_concurrent.max(1),
            failures_to_open: raw.breaker_failures.max(1),
            cool_down: Duration::from_millis(raw.breaker_cooldown_ms),
        };
        let key = format!("{role}|{target}");
        if let Some(b) = self.breakers.get(&key) {
            return Some(b.clone());
        }
        let transport = match Transport::shared(&key, settings.max_concurrent) {
            Ok(t) => t,
            Err(e) => {
                self.problem(owner, role, e, "");
                return None;
            }
        };
        let breaker = Arc::new(Breaker::new(settings, transport));
        self.breakers.insert(key, breaker.clone());
        Some(breaker)
    }

    /// A product's policy rules and tool policy; no file named means no rules and no tools.
    fn policy(&mut self, owner: &str, rel: &str) -> (Arc<Policy>, Arc<ToolPolicy>) {
        let none = || (Arc::new(Policy::empty()), Arc::new(ToolPolicy::default()));
        if rel.is_empty() {
            return none();
        }
        let Some(text) = self.read_text(owner, "policy.rules", rel) else {
            return none();
        };
        let mut raw: RawPolicy = match toml::from_str(&text) {
            Ok(r) => r,
            Err(e) => {
                self.problem(
                    rel,
                    "-",
                    e.message().trim().to_string(),
                    "see the policy file reference in README.md",
                );
                return none();
            }
        };
        let tools = ToolPolicy::build(
            raw.tool_gate.take(),
            std::mem::take(&mut raw.tools),
            std::mem::take(&mut raw.velocity),
        );
        let tools = match tools {
            Ok(t) => Arc::new(t),
            Err(problems) => {
                for (key, message) in problems {
                    self.problem(rel, &key, message, "see \"Tool-call gate\" in README.md");
                }
                Arc::new(ToolPolicy::default())
            }
        };
        let rules = match Policy::build(raw) {
            Ok(p) => Arc::new(p),
            Err(problems) => {
                for (rule, message) in problems {
                    self.problem(
                        rel,
                        &format!("rule {rule}"),
                        message,
                        "a term matches words by prefix; every group must match within window_words",
                    );
                }
                Arc::new(Policy::empty())
            }
        };
        (rules, tools)
    }

    fn api_key(&mut self, owner: &str, key: &str, env: &str) -> Option<String> {
        if env.is_empty() {
            return None;
        }
        match std::env::var(env) {
            Ok(v) if !v.is_empty() => Some(v),
            _ => {
                self.problem(
                    owner,
                    key,
                    format!("environment variable `{env}` is not set"),
                    "export it, or remove the key for servers without authentication",
                );
                None
            }
        }
    }
}

/// Load and validate every product in `dir/products/`.
/// The built-in model never changes: decoded once per process, not on every load.
static BUILTIN: std::sync::LazyLock<
    Result<Arc<EmbeddedModel>, crate::backends::model_file::ModelError>,
> = std::sync::LazyLock::new(|| EmbeddedModel::from_static(BUILTIN_MODEL).map(Arc::new));
/// Its digest for `config_rev`: hashed once per process (3 MB), not once per product and load.
static BUILTIN_DIGEST: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| crate::text::sha256_hex(BUILTIN_MODEL));

pub fn load(dir: &Path, overrides: &Overrides) -> Result<ConfigSet, ConfigError> {
    // Start-up: the built-in model is decoded and hashed on the second core while this one
    // reads the lists and builds the matchers (a load that needs it first waits for it).
    static WARMING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if !WARMING.swap(true, std::sync::atomic::Ordering::Relaxed) {
        std::thread::spawn(|| {
            std::sync::LazyLock::force(&BUILTIN);
            std::sync::LazyLock::force(&BUILTIN_DIGEST);
        });
    }
    let mut loader = Loader {
        dir,
        problems: Vec::new(),
        files: HashMap::new(),
        lexicons: HashMap::new(),
        signatures: HashMap::new(),
        models: HashMap::new(),
        breakers: HashMap::new(),
    };
    check_overrides(&mut loader, overrides);
    let products_dir = dir.join("products");
    let mut names: Vec<PathBuf> = match std::fs::read_dir(&products_dir) {
        Ok(entries) => entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect(),
        Err(e) => {
            loader.problem(
                &products_dir.display().to_string(),
                "-",
                format!("cannot list products: {e}"),
                "run from the project root or set --config-dir / GUARD_CONFIG_DIR",
            );
            Vec::new()
        }
    };
    names.sort();
    if names.is_empty() && loader.problems.is_empty() {
        loader.problem(
            "products/",
            "-",
            "no product files (`*.toml`)",
            "add products/<name>.toml",
        );
    }
    let mut products = BTreeMap::new();
    for path in names {
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        if let Some(p) = build_product(&mut loader, &name, overrides) {
            products.insert(name, Arc::new(p));
        }
    }
    if loader.problems.is_empty() {
        Ok(ConfigSet {
            dir: dir.to_path_buf(),
            products,
        })
    } else {
        Err(ConfigError {
            problems: loader.problems,
        })
    }
}

fn check_overrides(l: &mut Loader<'_>, o: &Overrides) {
    if o.model_url.is_some() {
        match o.model_kind.as_deref().map(BackendKind::parse) {
            None => l.problem(
                "environment",
                "GUARD_MODEL_KIND",
                "GUARD_MODEL_URL is set but GUARD_MODEL_KIND is not",
                "one of llama_guard_3, qwen3guard, tei, openai_moderation",
            ),
            Some(None) | Some(Some(BackendKind::Embedded)) => l.problem(
                "environment",
                "GUARD_MODEL_KIND",
                "unknown remote guard kind",
                "one of llama_guard_3, qwen3guard, tei, openai_moderation",
            ),
            Some(Some(_)) => {}
        }
    } else if o.model_kind.is_some() || o.model_name.is_some() {
        l.problem(
            "environment",
            "GUARD_MODEL_URL",
            "GUARD_MODEL_KIND/GUARD_MODEL_NAME are set but GUARD_MODEL_URL is not",
            "set all three, or none",
        );
    }
    for var in ["GUARD_MODEL_ALLOW_BELOW", "GUARD_MODEL_BLOCK_AT"] {
        if let Ok(v) = std::env::var(var) {
            if !v.trim().is_empty() && v.trim().parse::<f32>().is_err() {
                l.problem(
                    "environment",
                    var,
                    format!("`{v}` is not a number"),
                    "e.g. 0.5",
                );
            }
        }
    }
    if let Some(store) = o.gate_store.as_deref().filter(|s| gate_store(s).is_none()) {
        l.problem(
            "environment",
            "GUARD_GATE_STORE",
            format!("`{store}` is not a store"),
            "`memory` or `redis` (with GUARD_REDIS_URL)",
        );
    }
    if o.judge_url.is_some() != o.judge_model.is_some() {
        l.problem(
            "environment",
            "GUARD_JUDGE_URL",
            "GUARD_JUDGE_URL and GUARD_JUDGE_MODEL go together",
            "set both, or neither",
        );
    }
}

fn gate_store(name: &str) -> Option<crate::gate::policy::StoreKind> {
    use crate::gate::policy::StoreKind;
    match name {
        "memory" => Some(StoreKind::Memory),
        "redis" => Some(StoreKind::Redis),
        _ => None,
    }
}

/// Build one product, section by section. Every problem is recorded; the product is built
/// only when its file added none.
fn build_product(l: &mut Loader<'_>, name: &str, overrides: &Overrides) -> Option<Product> {
    let file = format!("products/{name}.toml");
    let text = l.read_text(&file, "-", &file)?;
    let before = l.problems.len();
    let (raw, problems) = RawProduct::parse(&text);
    for (key, message) in problems {
        l.problem(
            &file,
            &key,
            message,
            "see the configuration reference in README.md",
        );
    }
    let raw = raw?;
    if !name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    {
        l.problem(
            &file,
            "-",
            format!("product name `{name}` must be lower-case letters, digits and `-`"),
            "rename the file",
        );
    }
    let (accepts_english, accepts_bangla) = build_languages(l, &file, &raw.languages);
    if raw.reply.en.trim().is_empty() || raw.reply.bn.trim().is_empty() {
        l.problem(
            &file,
            "reply",
            "both reply.en and reply.bn are required and non-empty",
            "the fixed reply is shown to every blocked customer",
        );
    }
    let lexicon = l.lexicon(&file, &raw.language);
    let signatures = l.signatures(&file, &raw.signatures.wordlists);
    let guard = raw.guard.build(l, &file, overrides);
    let judge = raw.judge.build(l, &file, name, overrides);
    let cache = raw.cache.build(l, &file);
    let (policy, mut tools) = l.policy(&file, &raw.policy.rules);
    if let Some(store) = overrides.gate_store.as_deref().and_then(gate_store) {
        Arc::make_mut(&mut tools).store = store;
    }
    let output = Arc::new(raw.output.build(l, &file));

    // The revision covers exactly what this product loaded, in a fixed order.
    let mut rev = RevHasher::default();
    rev.add(&file, text.as_bytes());
    let mut files = vec![
        raw.language.english_wordlist.clone(),
        raw.language.banglish_wordlist.clone(),
    ];
    files.extend(raw.language.other_wordlists.iter().cloned());
    files.extend(raw.signatures.wordlists.iter().cloned());
    files.push(raw.judge.prompt.clone());
    files.push(raw.policy.rules.clone());
    if raw.guard.model_path.is_empty() {
        rev.add("builtin-model", BUILTIN_DIGEST.as_bytes());
    } else {
        files.push(raw.guard.model_path.clone());
    }
    for f in &files {
        if let Some(Some(bytes)) = l.files.get(f) {
            rev.add(f, bytes);
        }
    }
    if overrides.gate_store.is_some() {
        rev.add("gate_store", tools.store.as_str().as_bytes());
    }
    if let Some(g) = &guard {
        rev.add("guard", g.settings.as_bytes());
    }
    if let Some(j) = &judge {
        rev.add("judge", j.settings.as_bytes());
    }
    rev.add(
        "cache",
        format!(
            "{}|{}|{}",
            cache.enabled,
            cache.max_entries,
            cache.ttl.as_secs()
        )
        .as_bytes(),
    );

    if l.problems.len() > before {
        return None;
    }
    let guard = guard?;
    let judge = judge?;
    Some(Product {
        name: name.to_string(),
        description: raw.description,
        config_rev: rev.finish(),
        accepts_english,
        accepts_bangla,
        replies: raw
            .replies
            .build(Reply::new(&raw.reply.en, &raw.reply.bn), &policy),
        policy,
        output,
        tools,
        lexicon: lexicon?,
        signatures: signatures?,
        guard: guard.backend,
        guard_prefilter: guard.prefilter,
        guard_breaker: guard.breaker,
        judge_breaker: judge.breaker,
        thresholds: guard.thresholds,
        guard_timeout: guard.timeout,
        judge_prompt: judge.prompt,
        judge: judge.client,
        judge_timeout: judge.timeout,
        cache,
    })
}

fn build_languages(l: &mut Loader<'_>, file: &str, languages: &[String]) -> (bool, bool) {
    let mut accepts = (false, false);
    for lang in languages {
        match lang.as_str() {
            "en" => accepts.0 = true,
            "bn" => accepts.1 = true,
            other => l.problem(
                file,
                "languages",
                format!("unsupported language `{other}`"),
                "the screen supports \"en\" and \"bn\"",
            ),
        }
    }
    if languages.is_empty() {
        l.problem(
            file,
            "languages",
            "no language accepted",
            "languages = [\"en\", \"bn\"]",
        );
    }
    accepts
}

/// A validated `[guard]` section.
struct GuardParts {
    backend: Arc<dyn GuardBackend>,
    prefilter: Option<crate::stages::guard::Prefilter>,
    breaker: Option<Arc<Breaker>>,
    thresholds: Thresholds,
    timeout: Duration,
    /// What the revision hashes: kind, target, thresholds, timeout.
    settings: String,
}

impl raw::RawGuard {
    /// The environment override (`GUARD_MODEL_*`) wins over the product file. Thresholds belong
    /// to a kind of model: the product's own apply to the kind the product names; an override
    /// of the kind takes that kind's defaults (or `GUARD_MODEL_ALLOW_BELOW` / `_BLOCK_AT`).
    fn build(&self, l: &mut Loader<'_>, file: &str, overrides: &Overrides) -> Option<GuardParts> {
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
                std::env::var("GUARD_MODEL_API_KEY").ok()
            } else {
                l.api_key(file, "guard.api_key_env", &self.api_key_env)
            };
            let target = RemoteTarget {
                url: url.clone(),
                model: model.clone(),
                api_key,
            };
            crate::backends::remote(kind, http, target)
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
                Some(crate::stages::guard::Prefilter {
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
        Some(GuardParts {
            backend,
            prefilter,
            breaker,
            thresholds,
            timeout: Duration::from_millis(self.timeout_ms),
            settings: format!("{kind_str}|{url}|{model}|{a}|{b}|{}{tier}", self.timeout_ms),
        })
    }
}

/// A validated `[judge]` section.
struct JudgeParts {
    prompt: String,
    client: Option<Arc<JudgeClient>>,
    breaker: Option<Arc<Breaker>>,
    timeout: Duration,
    settings: String,
}

impl raw::RawJudge {
    fn build(
        &self,
        l: &mut Loader<'_>,
        file: &str,
        name: &str,
        overrides: &Overrides,
    ) -> Option<JudgeParts> {
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
                    std::env::var("GUARD_JUDGE_API_KEY").ok()
                } else {
                    l.api_key(file, "judge.api_key_env", &self.api_key_env)
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
        Some(JudgeParts {
            prompt,
            client,
            breaker,
            timeout: Duration::from_millis(self.timeout_ms),
            settings,
        })
    }
}

impl raw::RawCache {
    fn build(&self, l: &mut Loader<'_>, file: &str) -> CacheSettings {
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

/// Content hash over (name, bytes) pairs, order-sensitive.
#[derive(Default)]
struct RevHasher(Vec<u8>);

impl RevHasher {
    fn add(&mut self, name: &str, bytes: &[u8]) {
        self.0.extend_from_slice(name.as_bytes());
        self.0.push(0);
        self.0
            .extend_from_slice(crate::text::sha256_hex(bytes).as_bytes());
        self.0.push(b'\n');
    }

    fn finish(self) -> String {
        crate::text::sha256_hex(&self.0)[..16].to_string()
    }
}

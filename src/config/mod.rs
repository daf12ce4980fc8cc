//! The loader: product files → validated [`Product`]s.
//!
//! Two layers: the files as written (serde structs in [`raw`], and the sections each screen
//! owns: the output screen's `[output]`, the policy stage's rules, the gate's tables), then the
//! runtime [`Product`] with one typed section per screen. Loading never stops at the first
//! problem: every file is read, every key checked, every referenced wordlist, prompt and model
//! loaded, and all problems come back at once with file, key and a hint. The revision
//! (`config_rev`) is a content hash of everything a product loaded.

mod input;
mod loader;
mod memo;
mod overrides;
mod problem;
pub mod raw;

pub use overrides::{Overrides, Secrets};
pub use problem::{ConfigError, Problem};

use crate::backends::BackendKind;
use crate::product::{Product, Replies};
use crate::screens::input::section::InputSection;
use crate::screens::input::stages::policy::Policy;
use crate::screens::tools::policy::StoreKind;
use crate::verdict::Reply;
use loader::{Loader, BUILTIN, BUILTIN_DIGEST};
use raw::RawProduct;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Every product of a configuration directory.
#[derive(Debug)]
pub struct ConfigSet {
    pub dir: PathBuf,
    pub products: BTreeMap<String, Arc<Product>>,
}

impl ConfigSet {
    pub fn product(&self, name: &str) -> Option<&Arc<Product>> {
        self.products.get(name)
    }
}

fn built_in(en: &str, bn: &str) -> Reply {
    Reply::new(en, bn)
}

impl raw::RawReplies {
    fn build(&self, language: Reply, policy: &Policy, has_judge: bool) -> Replies {
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
            needs_review: take(
                &self.needs_review,
                built_in(
                    "Sorry, I can't answer this question here: it needs a person to look at it. Please contact us through another channel.",
                    "দুঃখিত, এই প্রশ্নের উত্তর আমি এখানে দিতে পারছি না: এটি একজন মানুষের দেখা দরকার। অনুগ্রহ করে অন্য কোনো মাধ্যমে আমাদের সাথে যোগাযোগ করুন।",
                ),
            ),
            has_judge,
            rules: policy
                .rules
                .iter()
                .filter_map(|r| r.reply.clone().map(|reply| (r.id.clone(), reply)))
                .collect(),
        }
    }
}

/// Load and validate every product in `dir/products/`.
pub fn load(dir: &Path, overrides: &Overrides) -> Result<ConfigSet, ConfigError> {
    // Start-up: the signature families' matchers are built and the built-in model is decoded
    // on the second core while this one reads the lists and builds the matchers
    // (a load that needs one of them first waits for it).
    static WARMING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if !WARMING.swap(true, std::sync::atomic::Ordering::Relaxed) {
        std::thread::spawn(|| {
            crate::screens::input::stages::signatures::families::warm();
            std::sync::LazyLock::force(&BUILTIN);
        });
    }
    let mut loader = Loader::new(dir);
    check_overrides(&mut loader, overrides);
    let mut products = BTreeMap::new();
    for name in product_names(&mut loader) {
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

/// The names of `products/*.toml`, sorted.
fn product_names(l: &mut Loader<'_>) -> Vec<String> {
    let products_dir = l.dir.join("products");
    let mut paths: Vec<PathBuf> = match std::fs::read_dir(&products_dir) {
        Ok(entries) => entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect(),
        Err(e) => {
            l.problem(
                &products_dir.display().to_string(),
                "-",
                format!("cannot list products: {e}"),
                "run from the project root or set --config-dir / GUARD_CONFIG_DIR",
            );
            Vec::new()
        }
    };
    paths.sort();
    if paths.is_empty() && l.problems.is_empty() {
        l.problem(
            "products/",
            "-",
            "no product files (`*.toml`)",
            "add products/<name>.toml",
        );
    }
    paths
        .iter()
        .map(|p| {
            p.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
        })
        .collect()
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
    for (var, v) in &o.unreadable {
        l.problem(
            "environment",
            var,
            format!("`{v}` is not a number"),
            "e.g. 0.5",
        );
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

fn gate_store(name: &str) -> Option<StoreKind> {
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
    let raw = parse_product(l, &file, name, &text)?;
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
    let context_signatures = l.signatures(&file, &raw.signatures.context_wordlists);
    let guard = raw.guard.build(l, &file, overrides);
    let judge = raw.judge.build(l, &file, name, overrides);
    let cache = raw.cache.build(l, &file);
    let (policy, mut tools) = l.policy(&file, &raw.policy.rules);
    let store = overrides.gate_store.as_deref().and_then(gate_store);
    if let Some(store) = store {
        Arc::make_mut(&mut tools).store = store;
    }
    let (output, problems) = raw.output.build();
    for (key, message, hint) in problems {
        l.problem(&file, key, message, hint);
    }
    let lookup_prompt = match raw.lookup.prompt.as_str() {
        "" => String::new(),
        rel => l.read_text(&file, "lookup.prompt", rel).unwrap_or_default(),
    };
    let (lookup, problems) = raw.lookup.build(lookup_prompt, raw::MAX_TIMEOUT_MS);
    for (key, message, hint) in problems {
        l.problem(&file, key, message, hint);
    }
    let settings = [
        ("guard", guard.as_ref().map(|g| g.settings.as_str())),
        ("judge", judge.as_ref().map(|j| j.settings.as_str())),
        ("gate_store", store.map(StoreKind::as_str)),
    ];
    let config_rev = revision(l, &file, &text, &raw, &settings, &cache);
    if l.problems.len() > before {
        return None;
    }
    let judge = judge?.section;
    Some(Product {
        name: name.to_string(),
        replies: raw.replies.build(
            Reply::new(&raw.reply.en, &raw.reply.bn),
            &policy,
            judge.client.is_some(),
        ),
        description: raw.description,
        config_rev,
        input: InputSection {
            accepts_english,
            accepts_bangla,
            lexicon: lexicon?,
            signatures: signatures?,
            context_signatures: context_signatures?,
            policy,
            guard: guard?.section,
            judge,
        },
        cache,
        tools,
        output: Arc::new(output),
        lookup: Arc::new(lookup),
    })
}

/// The product file's sections, every problem recorded; `None` when the file cannot be read
/// as a product at all.
fn parse_product(l: &mut Loader<'_>, file: &str, name: &str, text: &str) -> Option<RawProduct> {
    let (raw, problems) = RawProduct::parse(text);
    for (key, message) in problems {
        l.problem(
            file,
            &key,
            message,
            "see the configuration reference in docs/configuration.md",
        );
    }
    let raw = raw?;
    if !name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    {
        l.problem(
            file,
            "-",
            format!("product name `{name}` must be lower-case letters, digits and `-`"),
            "rename the file",
        );
    }
    Some(raw)
}

/// The revision covers exactly what this product loaded, in a fixed order: its file, every
/// file it names (or the built-in model), and the settings that do not live in a file.
fn revision(
    l: &Loader<'_>,
    file: &str,
    text: &str,
    raw: &RawProduct,
    settings: &[(&str, Option<&str>)],
    cache: &crate::screens::input::cache::CacheSettings,
) -> String {
    let mut rev = RevHasher::default();
    match l.digest(file) {
        Some(d) => rev.add_digest(file, d),
        None => rev.add(file, text.as_bytes()),
    }
    let mut files = vec![
        raw.language.english_wordlist.clone(),
        raw.language.banglish_wordlist.clone(),
    ];
    files.extend(raw.language.other_wordlists.iter().cloned());
    files.extend(raw.signatures.wordlists.iter().cloned());
    files.extend(raw.signatures.context_wordlists.iter().cloned());
    files.push(raw.judge.prompt.clone());
    files.push(raw.lookup.prompt.clone());
    files.push(raw.policy.rules.clone());
    files.extend(
        l.includes
            .get(&raw.policy.rules)
            .into_iter()
            .flatten()
            .cloned(),
    );
    if raw.guard.model_path.is_empty() {
        rev.add("builtin-model", BUILTIN_DIGEST.as_bytes());
    } else {
        files.push(raw.guard.model_path.clone());
    }
    // Each file's digest from when it was read: a list both products name is hashed once.
    for f in &files {
        if let (Some(Some(_)), Some(d)) = (l.files.get(f), l.digest(f)) {
            rev.add_digest(f, d);
        }
    }
    for (name, s) in settings {
        if let Some(s) = s {
            rev.add(name, s.as_bytes());
        }
    }
    let cache = format!(
        "{}|{}|{}",
        cache.enabled,
        cache.max_entries,
        cache.ttl.as_secs()
    );
    rev.add("cache", cache.as_bytes());
    rev.finish()
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

/// Content hash over (name, bytes) pairs, order-sensitive.
#[derive(Default)]
struct RevHasher(Vec<u8>);

impl RevHasher {
    fn add(&mut self, name: &str, bytes: &[u8]) {
        self.add_digest(name, &crate::text::sha256_hex(bytes));
    }

    /// [`add`](Self::add) with the bytes' hex SHA-256 already known.
    fn add_digest(&mut self, name: &str, digest: &str) {
        self.0.extend_from_slice(name.as_bytes());
        self.0.push(0);
        self.0.extend_from_slice(digest.as_bytes());
        self.0.push(b'\n');
    }

    fn finish(self) -> String {
        crate::text::sha256_hex(&self.0)[..16].to_string()
    }
}

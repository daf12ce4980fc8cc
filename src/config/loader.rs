//! The loader's shared state: each file is read once, each matcher built once (across loads
//! too, see `memo`), one breaker and transport per remote target; every problem kept.

use super::overrides::Secrets;
use super::problem::Problem;
use super::{memo, raw};
use crate::backends::breaker::{Breaker, BreakerSettings};
use crate::backends::embedded::{EmbeddedModel, BUILTIN_MODEL};
use crate::backends::transport::Transport;
use crate::screens::input::stages::banglish::Lexicon;
use crate::screens::input::stages::policy::{Policy, RawPolicy};
use crate::screens::input::stages::signatures::Signatures;
use crate::screens::tools::policy::{RawTool, RawToolGate, RawVelocity, ToolPolicy};
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// The gate's tables of a policy file.
struct ToolSections {
    gate: Option<RawToolGate>,
    tools: Option<BTreeMap<String, RawTool>>,
    velocity: Option<Vec<RawVelocity>>,
}

/// Shared while loading: each file is read once and each compiled list built once, however
/// many products name it.
pub(super) struct Loader<'a> {
    pub(super) dir: &'a Path,
    pub(super) problems: Vec<Problem>,
    pub(super) files: HashMap<String, Option<Arc<Vec<u8>>>>,
    /// Each file's hex SHA-256, hashed once when it is read: the revision of every product
    /// that names the file and the memo's key read it from here.
    digests: HashMap<String, String>,
    lexicons: HashMap<Vec<String>, Option<Arc<Lexicon>>>,
    signatures: HashMap<Vec<String>, Option<Arc<Signatures>>>,
    models: HashMap<String, Option<Arc<EmbeddedModel>>>,
    /// One breaker per remote target (role, URL, model), shared by the products that use it.
    breakers: HashMap<String, Arc<Breaker>>,
    /// The rule files each policy file includes, for the revisions of the products naming it.
    pub(super) includes: HashMap<String, Vec<String>>,
}

impl<'a> Loader<'a> {
    pub(super) fn new(dir: &'a Path) -> Self {
        Loader {
            dir,
            problems: Vec::new(),
            files: HashMap::new(),
            digests: HashMap::new(),
            lexicons: HashMap::new(),
            signatures: HashMap::new(),
            models: HashMap::new(),
            breakers: HashMap::new(),
            includes: HashMap::new(),
        }
    }

    pub(super) fn problem(
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
    pub(super) fn read(&mut self, owner: &str, key: &str, rel: &str) -> Option<Arc<Vec<u8>>> {
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
            Ok(bytes) => {
                let digest = crate::text::sha256_hex(&bytes);
                self.digests.insert(rel.to_string(), digest);
                Some(Arc::new(bytes))
            }
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

    /// The hex SHA-256 of a file already read.
    pub(super) fn digest(&self, rel: &str) -> Option<&str> {
        self.digests.get(rel).map(String::as_str)
    }

    pub(super) fn read_text(&mut self, owner: &str, key: &str, rel: &str) -> Option<String> {
        let bytes = self.read(owner, key, rel)?;
        match String::from_utf8(bytes.to_vec()) {
            Ok(s) => Some(s),
            Err(_) => {
                self.problem(rel, "-", "not valid UTF-8", "save the file as UTF-8");
                None
            }
        }
    }

    pub(super) fn lexicon(&mut self, owner: &str, lang: &raw::RawLanguage) -> Option<Arc<Lexicon>> {
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
                // Keyed by the files' digests (each hashed once, when read).
                let parts: Vec<&str> = paths.iter().map(|p| self.digest(p).unwrap_or("")).collect();
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

    pub(super) fn signatures(&mut self, owner: &str, paths: &[String]) -> Option<Arc<Signatures>> {
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
        // Keyed by the lists' names and their files' digests (each hashed once, when read).
        let parts: Vec<&str> = lists
            .iter()
            .zip(paths)
            .flat_map(|((n, _), p)| [n.as_str(), self.digest(p).unwrap_or("")])
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

    pub(super) fn model(&mut self, owner: &str, rel: &str) -> Option<Arc<EmbeddedModel>> {
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
    pub(super) fn breaker(
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
    /// One file, two screens' sections: the rules go to the input screen's policy stage, the
    /// `[tool_gate]`, `[tools.*]` and `[[velocity]]` tables to the gate, each with its own types.
    pub(super) fn policy(&mut self, owner: &str, rel: &str) -> (Arc<Policy>, Arc<ToolPolicy>) {
        let none = || (Arc::new(Policy::empty()), Arc::new(ToolPolicy::default()));
        if rel.is_empty() {
            return none();
        }
        let Some(text) = self.read_text(owner, "policy.rules", rel) else {
            return none();
        };
        let hint = "see the policy file reference in docs/policy.md";
        let mut table: toml::Table = match toml::from_str(&text) {
            Ok(t) => t,
            Err(e) => {
                self.problem(rel, "-", e.message().trim().to_string(), hint);
                return none();
            }
        };
        let (gate, tools, velocity) = (
            table.remove("tool_gate"),
            table.remove("tools"),
            table.remove("velocity"),
        );
        let sections = RawPolicy::deserialize(toml::Value::Table(table)).and_then(|rules| {
            let tools = ToolSections {
                gate: gate.map(RawToolGate::deserialize).transpose()?,
                tools: tools.map(BTreeMap::deserialize).transpose()?,
                velocity: velocity.map(Vec::deserialize).transpose()?,
            };
            Ok((rules, tools))
        });
        let (mut raw, tool_sections) = match sections {
            Ok(s) => s,
            Err(e) => {
                self.problem(rel, "-", e.message().trim().to_string(), hint);
                return none();
            }
        };
        let includes = std::mem::take(&mut raw.include);
        for inc in &includes {
            let Some(text) = self.read_text(rel, "include", inc) else {
                continue;
            };
            match toml::from_str::<RawPolicy>(&text) {
                Ok(part) => {
                    for p in raw.take_in(part) {
                        self.problem(inc, "-", p, hint);
                    }
                }
                Err(e) => self.problem(inc, "-", e.message().trim().to_string(), hint),
            }
        }
        self.includes.insert(rel.to_string(), includes);
        (self.rules(rel, raw), self.tools(rel, tool_sections))
    }

    fn tools(&mut self, rel: &str, s: ToolSections) -> Arc<ToolPolicy> {
        let built = ToolPolicy::build(
            s.gate,
            s.tools.unwrap_or_default(),
            s.velocity.unwrap_or_default(),
        );
        match built {
            Ok(t) => Arc::new(t),
            Err(problems) => {
                for (key, message) in problems {
                    self.problem(
                        rel,
                        &key,
                        message,
                        "see \"The tool policy\" in docs/policy.md",
                    );
                }
                Arc::new(ToolPolicy::default())
            }
        }
    }

    fn rules(&mut self, rel: &str, raw: RawPolicy) -> Arc<Policy> {
        match Policy::build(raw) {
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
        }
    }

    /// The secret a product file names (`api_key_env`); a problem when it is not set.
    pub(super) fn api_key(
        &mut self,
        owner: &str,
        key: &str,
        env: &str,
        secrets: &Secrets,
    ) -> Option<String> {
        if env.is_empty() {
            return None;
        }
        match secrets.get(env) {
            Some(v) => Some(v),
            None => {
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

/// The built-in model never changes: decoded once per process, not on every load.
pub(super) static BUILTIN: std::sync::LazyLock<
    Result<Arc<EmbeddedModel>, crate::backends::model_file::ModelError>,
> = std::sync::LazyLock::new(|| EmbeddedModel::from_static(BUILTIN_MODEL).map(Arc::new));
/// Its digest for `config_rev`: hashed at build time (build.rs), not at every start (3 MB).
pub(super) const BUILTIN_DIGEST: &str = env!("GUARD_BUILTIN_MODEL_SHA256");

#[cfg(test)]
mod tests {
    #[test]
    fn the_build_time_digest_is_the_builtin_models_own() {
        assert_eq!(
            super::BUILTIN_DIGEST,
            crate::text::sha256_hex(super::BUILTIN_MODEL)
        );
    }
}

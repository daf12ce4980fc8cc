//! guard: screens every user message before a customer-facing AI agent sees it.
//!
//! Layout, in the order a request meets it:
//!
//! - [`cli`]        the command line: serve | screen | screen-output | check-config | eval
//! - [`settings`]   every `GUARD_*` environment variable, read once at start-up
//! - `commands`     what each command does, once the command line is parsed
//! - [`config`]     the loader: product files → [`product::Product`]s; all problems at once;
//!   the revision hash
//! - [`product`]    a product: name, revision, replies, one typed section per screen
//! - [`http`]       adapters: AppState, the route table (`create_app`), the one opening
//!   extractor, `ApiError`, one file per route family
//! - [`screens`]    the control points, one slice each, all through one `step`:
//!   - [`screens::input`]    the question: question → cache → pipeline → stages
//!     (script → banglish → lang_id → signatures → policy → guard → judge) → verdict
//!   - [`screens::tools`]    the tool-call gate: rules, then the turn's state
//!   - [`screens::context`]  retrieved documents and tool results, wrapped as untrusted data
//!   - [`screens::output`]   the answer masked on its way out, whole or streamed
//!   - [`screens::records`]  every screen's metrics and the audit log they write to
//! - [`turn`]       the turn's shared pieces: the figure finder, the evidence (what the tool
//!   results stated), per-tool health, the lookup check
//! - [`text`]       normal form, folded copy, Latin tokens, card masking
//! - [`redact`]     finding and masking values (cards, phones, NID, OTP/PIN, e-mail, ...)
//! - [`backends`]   guard models: embedded, OpenAI-compatible chat, TEI, moderation; the
//!   breaker and the transport
//! - [`verdict`]    Stage, Outcome, Reason, Verdict: the wire JSON of the question
//! - [`obs`]        the metrics registry and the audit sink (no screen in them)
//! - [`eval`]       YAML eval suites, scored by group, with a baseline ratchet

pub mod backends;
pub mod cli;
mod commands;
pub mod config;
pub mod eval;
pub mod http;
pub mod obs;
pub mod product;
pub mod redact;
pub mod screens;
pub mod settings;
pub mod text;
pub mod turn;
pub mod verdict;

use anyhow::Context;
use cli::{Cli, Command};
use std::process::ExitCode;

/// Run a parsed command line, with the settings of the process environment (read here, once).
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    commands::quiet_panics();
    let settings = settings::Settings::from_env();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the runtime")?;
    let dir = cli.config_dir;
    match cli.command {
        Command::Serve { listen, workers } => {
            runtime.block_on(commands::serve(dir, listen, workers, &settings))
        }
        Command::Screen {
            product,
            jsonl,
            concurrency,
            text,
        } => runtime.block_on(commands::screen(
            dir,
            &settings,
            product,
            jsonl,
            concurrency.max(1),
            text,
        )),
        Command::ScreenOutput {
            product,
            jsonl,
            file,
        } => commands::screen_output(dir, &settings, &product, jsonl, file.as_deref()),
        Command::CheckConfig => commands::check_config(dir, &settings),
        Command::Eval(args) => {
            drop(runtime);
            eval::run_cli(&dir, settings.overrides, args.into_options())
        }
    }
}

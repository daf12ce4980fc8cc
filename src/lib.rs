//! guard: screens every user message before a customer-facing AI agent sees it.
//!
//! Layout, in pipeline order:
//!
//! - [`cli`]          the command line: serve | screen | check-config | eval
//! - `commands`       what each command does (serve, screen, check-config)
//! - [`config`]       product files → validated [`config::Product`]s; all problems at once
//! - [`text`]         normal form, folded copy, Latin tokens, card masking
//! - [`redact`]       finding and masking values (cards, phones, NID, OTP/PIN, e-mail, ...)
//! - [`question`]     the question computed once: normalised, hidden, folded, decoded, outbound
//! - [`pipeline`]     the only place the stage order lives; cache; fail-open/closed policy
//! - [`stages`]       script → banglish → lang_id → signatures → guard → judge
//! - [`backends`]     guard models: embedded, OpenAI-compatible chat, TEI, moderation
//! - [`verdict`]      Stage, Outcome, Reason, Verdict: the wire JSON
//! - [`output`]       the output screen: an answer masked on its way out, whole or streamed
//! - [`cache`], [`metrics`], [`audit`]   verdict cache, Prometheus metrics, audit log
//! - [`server`]       AppState, `create_app`, thin handlers, `ApiError`
//! - [`eval`]         YAML eval suites, scored by group, with a baseline ratchet

pub mod audit;
pub mod backends;
pub mod cache;
pub mod cli;
mod commands;
pub mod config;
pub mod context;
pub mod eval;
pub mod gate;
pub mod metrics;
pub mod output;
pub mod pipeline;
pub mod question;
pub mod redact;
pub mod server;
pub mod stages;
pub mod text;
pub mod verdict;

use anyhow::Context;
use cli::{Cli, Command};
use std::process::ExitCode;

/// Run a parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    commands::quiet_panics();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the runtime")?;
    match cli.command {
        Command::Serve { listen, workers } => {
            runtime.block_on(commands::serve(cli.config_dir, listen, workers))
        }
        Command::Screen {
            product,
            jsonl,
            concurrency,
            text,
        } => runtime.block_on(commands::screen(
            cli.config_dir,
            product,
            jsonl,
            concurrency.max(1),
            text,
        )),
        Command::ScreenOutput {
            product,
            jsonl,
            file,
        } => commands::screen_output(cli.config_dir, &product, jsonl, file.as_deref()),
        Command::CheckConfig => commands::check_config(cli.config_dir),
        Command::Eval(args) => {
            drop(runtime);
            eval::run_cli(&cli.config_dir, args.into_options())
        }
    }
}

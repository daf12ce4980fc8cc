//! The command line: `serve`, `screen`, `check-config`, `eval` (training is `guard-train`,
//! in `tools/train`).

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "guard",
    version,
    about = "Screens user messages before a customer-facing AI agent sees them"
)]
pub struct Cli {
    /// Directory holding products/, wordlists/ and judge_prompts/.
    #[arg(long, global = true, env = "GUARD_CONFIG_DIR", default_value = ".")]
    pub config_dir: PathBuf,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the HTTP service.
    Serve {
        /// Listen address.
        #[arg(long, env = "GUARD_LISTEN", default_value = "127.0.0.1:8080")]
        listen: String,
        /// Worker threads (default: two per core; `GUARD_WORKERS` sets it too).
        #[arg(long, env = "GUARD_WORKERS")]
        workers: Option<usize>,
    },
    /// Screen one question (TEXT) or JSON lines on stdin (--jsonl) and print verdicts.
    Screen {
        #[arg(long)]
        product: String,
        /// Read `{"text": ..., "id": ...}` lines on stdin; write one verdict per line, same order.
        #[arg(long)]
        jsonl: bool,
        /// How many questions are screened at once in --jsonl mode (order is kept).
        #[arg(long, default_value_t = 16)]
        concurrency: usize,
        text: Option<String>,
    },
    /// Mask an agent's answer (FILE, or stdin) as the output screen does, streaming: the masked
    /// text on stdout as it is read, the verdict (kinds, counts, decision) on stderr.
    ScreenOutput {
        #[arg(long)]
        product: String,
        /// Read JSON lines (`{"text": ..., "id": ...}`) and write one output verdict per line.
        #[arg(long)]
        jsonl: bool,
        file: Option<PathBuf>,
    },
    /// Validate every product, wordlist and judge prompt; report all problems at once.
    CheckConfig,
    /// Run the YAML eval suites; fail when a group drops below its recorded baseline.
    Eval(EvalArgs),
}

/// `guard eval` options as typed; [`EvalArgs::into_options`] applies the defaults.
#[derive(Debug, Args)]
pub struct EvalArgs {
    /// Suite files or directories (default: tests/evals).
    pub paths: Vec<PathBuf>,
    #[arg(long, default_value = "tests/evals/baseline.json")]
    pub baseline: PathBuf,
    /// Write a JUnit XML report.
    #[arg(long)]
    pub junit: Option<PathBuf>,
    /// Write a JSON report (`cases`, `groups` with passed/total/score/baseline, failures).
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Record groups that improved; never lowers one.
    #[arg(long)]
    pub update_baseline: bool,
    /// Rerun failed model cases up to N times before they count.
    #[arg(long, default_value_t = 0)]
    pub rerun_failures: u32,
    /// Cases run at once.
    #[arg(long, default_value_t = 8)]
    pub concurrency: usize,
    /// One case at a time (a shared, rate-limited model key).
    #[arg(long)]
    pub sequential: bool,
}

impl EvalArgs {
    pub fn into_options(self) -> crate::eval::EvalOptions {
        let paths = if self.paths.is_empty() {
            vec![PathBuf::from("tests/evals")]
        } else {
            self.paths
        };
        crate::eval::EvalOptions {
            paths,
            baseline: self.baseline,
            junit: self.junit,
            json: self.json,
            update_baseline: self.update_baseline,
            rerun_failures: self.rerun_failures,
            concurrency: if self.sequential {
                1
            } else {
                self.concurrency.max(1)
            },
        }
    }
}

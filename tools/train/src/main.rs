//! `guard-train`: rebuild the embedded guard model (`models/guard-embedded.bin`) from the
//! labelled data, bit for bit, and optionally cross-validate it. A tool beside the service, not
//! inside it: the `guard` binary carries only what serves.
//!
//! Run from the project root: `cargo run --release -p guard-train -- --cv 5`.

mod train;

use clap::Parser;
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(about = "Train the embedded guard model from the labelled data (deterministic)")]
struct Args {
    /// The labelled data folder.
    #[arg(long, default_value = "../shared/data")]
    data: PathBuf,
    /// Where to write the model.
    #[arg(long, default_value = "models/guard-embedded.bin")]
    out: PathBuf,
    /// Also run k-fold cross-validation and print per-source figures.
    #[arg(long)]
    cv: Option<usize>,
    /// With --cv: write every row's held-out score as JSON lines (source, label, signature
    /// hit, score, text), for error analysis.
    #[arg(long, requires = "cv")]
    cv_scores: Option<PathBuf>,
    /// Directory holding products/ (for the signatures) and tools/training_extra/.
    #[arg(long, default_value = ".")]
    config_dir: PathBuf,
}

fn main() -> anyhow::Result<()> {
    let a = Args::parse();
    train::run(&a.data, &a.out, a.cv, a.cv_scores.as_deref(), &a.config_dir)
}

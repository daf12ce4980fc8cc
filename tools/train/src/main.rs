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
    /// Inverse regularisation strength (the shipped model's by default).
    #[arg(long, default_value_t = train::C)]
    c: f32,
    /// The weight of a benign row's clause rows (the shipped model's by default).
    #[arg(long, default_value_t = train::CLAUSE_WEIGHT)]
    clause_weight: f32,
    /// Even out the sources' weights: each row's weight times W^(-alpha), W its source's.
    #[arg(long, default_value_t = train::SOURCE_BALANCE)]
    source_balance: f32,
    /// Added to the fitted bias (a logit): the threshold calibrated on the folds.
    #[arg(long, default_value_t = train::BIAS_SHIFT, allow_hyphen_values = true)]
    bias_shift: f32,
}

fn main() -> anyhow::Result<()> {
    let a = Args::parse();
    let settings = train::Settings {
        c: a.c,
        clause_weight: a.clause_weight,
        source_balance: a.source_balance,
        bias_shift: a.bias_shift,
    };
    train::run(
        &a.data,
        &a.out,
        a.cv,
        a.cv_scores.as_deref(),
        &a.config_dir,
        settings,
    )
}

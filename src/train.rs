//! `guard train`: placeholder until the embedded model lands.

use std::path::Path;
use std::process::ExitCode;

pub fn run(
    _data: &Path,
    _out: &Path,
    _cv: Option<usize>,
    _config_dir: &Path,
) -> anyhow::Result<ExitCode> {
    anyhow::bail!("training is not implemented yet")
}

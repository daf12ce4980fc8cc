//! `guard` binary: parse the command line and hand over to the library.

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = guard::cli::Cli::parse();
    match guard::run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}

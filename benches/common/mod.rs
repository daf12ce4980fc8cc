//! Shared by the benchmarks: the shipped configuration, loaded once.

use guard::config::{load, ConfigSet, Overrides};
use std::path::Path;
use std::sync::OnceLock;

pub fn config() -> &'static ConfigSet {
    static C: OnceLock<ConfigSet> = OnceLock::new();
    C.get_or_init(
        || match load(Path::new(env!("CARGO_MANIFEST_DIR")), &Overrides::default()) {
            Ok(c) => c,
            Err(e) => panic!("{e}"),
        },
    )
}

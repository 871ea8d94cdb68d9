//! The installed binary as a user runs it, for the tests of its commands: outside the
//! checkout, without cargo's variables. Included by path (`#[path]`) into each test crate
//! that needs it, so it stays apart from `support/mod.rs` and its library helpers.

#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_mcp-harness");

/// The binary run in `cwd`, without cargo's variables (as an installed program sees none).
pub fn harness(cwd: &Path, args: &[&str]) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.current_dir(cwd).args(args);
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("CARGO") {
            cmd.env_remove(key);
        }
    }
    cmd.output().expect("the binary starts")
}

/// What a command printed, stdout then stderr.
pub fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A temporary directory outside the checkout, named for the test crate (`prefix`).
pub fn tempdir_named(prefix: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir()
        .expect("a temporary directory")
}

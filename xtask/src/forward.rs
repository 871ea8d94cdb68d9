//! `cargo xtask check|record|serve|case-from`: the `mcp-harness` binary's commands for real
//! hosts and real traffic, from a checkout. They are the binary's own (it plays the fake
//! and the recorder itself), so xtask builds it with its own profile and hands it the
//! arguments unchanged: one command line, one behaviour, whichever front end is typed.

use std::ffi::OsString;
use std::process::{Command, ExitCode};

use crate::paths;

/// Builds `mcp-harness` beside xtask and runs `mcp-harness <command> <args…>`, returning its
/// exit status.
pub fn run(command: &str, args: &[OsString]) -> ExitCode {
    let exe = match build() {
        Ok(exe) => exe,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    match Command::new(&exe).arg(command).args(args).status() {
        Ok(status) => match status.code() {
            Some(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
            None => ExitCode::from(1),
        },
        Err(e) => {
            eprintln!("error: cannot run {}: {e}", exe.display());
            ExitCode::from(2)
        }
    }
}

fn build() -> Result<std::path::PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot locate xtask: {e}"))?;
    let dir = exe.parent().ok_or("xtask has no parent directory")?;
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(paths::workspace_root()).args([
        "build",
        "--quiet",
        "-p",
        "mcp-harness",
        "--bin",
        "mcp-harness",
    ]);
    if dir.ends_with("release") {
        cmd.arg("--release");
    }
    // The same clean environment as the other builds (see `paths::build_bins`).
    for (key, _) in std::env::vars_os() {
        if key.to_str().is_some_and(paths::is_package_variable) {
            cmd.env_remove(key);
        }
    }
    let status = cmd.status().map_err(|e| format!("cannot run cargo: {e}"))?;
    if !status.success() {
        return Err(format!("building mcp-harness failed ({status})"));
    }
    Ok(dir.join("mcp-harness"))
}

//! The suite in a child process: `sdk` and `soak` run `conformance` as a separate process of
//! this executable, exactly as a user runs it, so one run cannot disturb another's state, and
//! read what it graded from the `results.json` it writes.

use std::path::Path;
use std::process::Command;

use mcp_harness::report::RunResults;

/// `<this executable> conformance --no-build --quiet --report-dir DIR`, with the client, its
/// name in reports and its baseline when given. Add further flags (and the filters) before
/// handing it to [`run`].
pub fn command(
    dir: &Path,
    client: Option<&str>,
    client_name: Option<&str>,
    baseline: Option<&Path>,
) -> Result<Command, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot locate xtask: {e}"))?;
    let mut cmd = Command::new(exe);
    cmd.args(["conformance", "--no-build", "--quiet", "--report-dir"])
        .arg(dir);
    if let Some(client) = client {
        cmd.args(["--client", client]);
    }
    if let Some(name) = client_name {
        cmd.args(["--client-name", name]);
    }
    if let Some(baseline) = baseline {
        cmd.arg("--baseline").arg(baseline);
    }
    Ok(cmd)
}

/// What a suite run in a child process made of the client.
pub struct ChildRun {
    /// Whether the run met its baseline (exit 0; 101 when it did not).
    pub met: bool,
    /// The child's exit code.
    pub exit: i32,
    /// Its `results.json`.
    pub results: RunResults,
}

/// Runs `cmd` (made by [`command`] with `--report-dir dir`) to its end. An exit other than
/// 0 or 101 means the suite could not run: an error saying so, opening with `what`.
pub fn run(mut cmd: Command, dir: &Path, what: &str) -> Result<ChildRun, String> {
    let results_file = dir.join("results.json");
    // A stale results.json must not pass for this run's.
    let _ = std::fs::remove_file(&results_file);
    let status = cmd
        .status()
        .map_err(|e| format!("{what}: cannot run the suite: {e}"))?;
    let (met, exit) = match status.code() {
        Some(0) => (true, 0),
        Some(101) => (false, 101),
        _ => return Err(format!("{what}: the suite could not run ({status})")),
    };
    let results = RunResults::load(&results_file)?;
    Ok(ChildRun { met, exit, results })
}

/// Runs a setup command (an install, a build) to its end; `what` says what it does, for
/// the error when it cannot start or fails.
pub(crate) fn step(cmd: &mut Command, what: &str) -> Result<(), String> {
    let status = cmd.status().map_err(|e| format!("cannot {what}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("could not {what} ({status})"))
    }
}

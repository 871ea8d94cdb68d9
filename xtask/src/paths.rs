//! Where things are: the workspace, its scenarios and snapshots, and the harness's own
//! binaries, which `cargo xtask` builds before a run.

use std::path::{Path, PathBuf};
use std::process::Command;

use mcp_harness::conformance::trial::Bins;

/// The workspace root (the parent of this crate's directory).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

/// The directory holding the case files.
pub fn scenarios_dir() -> PathBuf {
    workspace_root().join("scenarios")
}

/// The directory holding the snapshots.
pub fn snapshots_dir() -> PathBuf {
    workspace_root().join("snapshots")
}

/// The generated scenario schema.
pub fn schema_file() -> PathBuf {
    scenarios_dir().join("scenario.schema.json")
}

/// The harness binaries, beside the running xtask executable (same profile, same target dir).
pub fn bins_beside(exe_dir: &Path) -> Bins {
    Bins::separate(
        exe_dir.join("mcp-fake-stdio"),
        exe_dir.join("mcp-harness-driver"),
    )
}

/// Builds the fake and the driver with the profile xtask itself was built with, and returns
/// where they are.
pub fn build_bins() -> Result<Bins, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot locate xtask: {e}"))?;
    let dir = exe
        .parent()
        .ok_or("xtask has no parent directory")?
        .to_path_buf();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(workspace_root()).args([
        "build",
        "--quiet",
        "--bins",
        "-p",
        "mcp-harness-fakes",
        "-p",
        "mcp-harness-client",
        // The driver with its deliberate defects, as the runner's own dependency builds it
        // (the same features, so a workspace build and this one share their artifacts).
        "--features",
        "mcp-harness-client/defects",
    ]);
    if dir.ends_with("release") {
        cmd.arg("--release");
    }
    // `cargo run` hands xtask the variables it sets for a package (CARGO_MANIFEST_DIR, …).
    // Passed on, they reach rustc as tracked environment, so crates that read them (ring)
    // look dirty and everything above them is rebuilt on every run. The inner build gets the
    // environment a shell would give it.
    for (key, _) in std::env::vars_os() {
        if key.to_str().is_some_and(is_package_variable) {
            cmd.env_remove(key);
        }
    }
    let status = cmd.status().map_err(|e| format!("cannot run cargo: {e}"))?;
    if !status.success() {
        return Err(format!(
            "building the fake and the driver failed ({status})"
        ));
    }
    let bins = bins_beside(&dir);
    for bin in [&bins.fake_stdio, &bins.driver] {
        if !bin.exists() {
            return Err(format!("{} was not built", bin.display()));
        }
    }
    Ok(bins)
}

/// Whether `key` is one of the variables cargo sets for the package it runs or compiles,
/// rather than one of its configuration variables (CARGO_HOME, CARGO_TARGET_DIR, …).
pub fn is_package_variable(key: &str) -> bool {
    key.starts_with("CARGO_PKG_")
        || matches!(
            key,
            "CARGO_MANIFEST_DIR"
                | "CARGO_MANIFEST_PATH"
                | "CARGO_MANIFEST_LINKS"
                | "CARGO_CRATE_NAME"
                | "CARGO_BIN_NAME"
                | "CARGO_PRIMARY_PACKAGE"
                | "CARGO_TARGET_TMPDIR"
                | "CARGO_RUSTC_CURRENT_DIR"
        )
}

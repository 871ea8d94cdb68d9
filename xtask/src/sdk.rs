//! `cargo xtask sdk <python|typescript|rmcp|fastmcp|all>`: installs an official SDK, pinned, into a
//! cache under `target/sdk/`, and runs the suite against its adapter (`adapters/<sdk>/`) with
//! that SDK's strict baseline. `all` also runs the reference client and writes one HTML
//! matrix of every client × trial.
//!
//! Each suite run is a separate `cargo xtask conformance` process, exactly as a user would
//! run it (see [`crate::child`]), so an SDK run cannot disturb another's state.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::child::{self, step};
use crate::paths;
use mcp_harness::conformance::shell_quote;
use mcp_harness::report::{RunResults, merge};

/// An SDK with an adapter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Sdk {
    /// PyPI `mcp`, pinned in `adapters/python/requirements.txt`.
    Python,
    /// npm `@modelcontextprotocol/sdk`, pinned in `adapters/typescript/package-lock.json`.
    Typescript,
    /// npm `@modelcontextprotocol/client` (the SDK's v2 client package), pinned in
    /// `adapters/typescript-v2/package-lock.json`.
    #[value(name = "typescript-v2")]
    TypescriptV2,
    /// crates.io `rmcp`, pinned in `adapters/rmcp/Cargo.toml`.
    Rmcp,
    /// PyPI `fastmcp` (`fastmcp.Client`), pinned in `adapters/fastmcp/requirements.txt`.
    Fastmcp,
    /// All of them, then the reference client, and the matrix of them all.
    All,
}

impl Sdk {
    fn name(self) -> &'static str {
        match self {
            Sdk::Python => "python",
            Sdk::Typescript => "typescript",
            Sdk::TypescriptV2 => "typescript-v2",
            Sdk::Rmcp => "rmcp",
            Sdk::Fastmcp => "fastmcp",
            Sdk::All => "all",
        }
    }
}

/// Installs and runs; returns whether every run met its baseline.
pub fn run(which: Sdk, report_dir: Option<PathBuf>, write_baselines: bool) -> Result<bool, String> {
    let root = paths::workspace_root();
    let cache = root.join("target").join("sdk");
    let reports = report_dir.unwrap_or_else(|| cache.join("reports"));
    paths::build_bins()?;
    let sdks = match which {
        Sdk::All => vec![
            Sdk::Python,
            Sdk::Typescript,
            Sdk::TypescriptV2,
            Sdk::Rmcp,
            Sdk::Fastmcp,
        ],
        one => vec![one],
    };
    let mut all_met = true;
    let mut runs = Vec::new();
    let mut files = Vec::new();
    for sdk in sdks {
        let client = install(sdk, &root, &cache)?;
        let baseline = root.join("adapters").join(sdk.name()).join("baseline.txt");
        let dir = reports.join(sdk.name());
        let rewrite = write_baselines.then_some(baseline.as_path());
        let (met, results) =
            conformance(sdk.name(), Some(&client), Some(&baseline), rewrite, &dir)?;
        all_met &= met;
        runs.push(results);
        files.push(dir.join("results.json"));
    }
    if which == Sdk::All {
        let dir = reports.join("reference");
        let (met, results) = conformance("reference", None, None, None, &dir)?;
        all_met &= met;
        runs.insert(0, results);
        files.insert(0, dir.join("results.json"));
        // The same code as `mcp-harness matrix`, from the files each run wrote.
        let matrix = reports.join("matrix.html");
        merge::write_matrix(&files, &matrix)?;
        println!("matrix: {}", matrix.display());
    }
    for run in &runs {
        let counts: Vec<String> = run
            .counts()
            .iter()
            .map(|(g, n)| format!("{n} {}", g.as_str()))
            .collect();
        println!("{:<12} {}", run.client, counts.join(", "));
    }
    Ok(all_met)
}

/// Installs one SDK into the cache and returns the adapter's command line.
fn install(sdk: Sdk, root: &Path, cache: &Path) -> Result<String, String> {
    let adapter = root.join("adapters").join(sdk.name());
    let dir = cache.join(sdk.name());
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    match sdk {
        // A venv of its own per Python library, installed from the adapter's requirements.txt.
        Sdk::Python | Sdk::Fastmcp => {
            let venv = dir.join("venv");
            if !venv.join("bin").join("python").exists() {
                step(
                    Command::new("python3").args(["-m", "venv"]).arg(&venv),
                    "create the Python venv",
                )?;
            }
            // `python -m pip`, not the `pip` script: the script's first line names the
            // directory the venv was made in, so a moved or copied cache would not run it.
            step(
                Command::new(venv.join("bin").join("python"))
                    .args([
                        "-m",
                        "pip",
                        "install",
                        "--quiet",
                        "--disable-pip-version-check",
                    ])
                    .arg("-r")
                    .arg(adapter.join("requirements.txt")),
                &format!("install the {} Python package", sdk.name()),
            )?;
            Ok(format!(
                "{} {}",
                shell_quote(&venv.join("bin").join("python")),
                shell_quote(&adapter.join("adapter.py"))
            ))
        }
        Sdk::Typescript | Sdk::TypescriptV2 => {
            for file in ["package.json", "package-lock.json", "adapter.mjs"] {
                std::fs::copy(adapter.join(file), dir.join(file))
                    .map_err(|e| format!("cannot copy {file} to {}: {e}", dir.display()))?;
            }
            // The adapter imports the JavaScript kit as `../kits/js/…`: the cache keeps the
            // repository's layout so the same import works in both places.
            let kit = cache.join("kits").join("js");
            std::fs::create_dir_all(&kit)
                .map_err(|e| format!("cannot create {}: {e}", kit.display()))?;
            let file = "mcp-harness-kit.mjs";
            std::fs::copy(root.join("adapters/kits/js").join(file), kit.join(file))
                .map_err(|e| format!("cannot copy {file} to {}: {e}", kit.display()))?;
            step(
                Command::new("npm")
                    .args(["ci", "--no-audit", "--no-fund", "--silent"])
                    .current_dir(&dir),
                "install the TypeScript SDK",
            )?;
            Ok(format!("node {}", shell_quote(&dir.join("adapter.mjs"))))
        }
        Sdk::Rmcp => {
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
            step(
                Command::new(cargo)
                    .args(["build", "--quiet", "--manifest-path"])
                    .arg(adapter.join("Cargo.toml"))
                    .arg("--target-dir")
                    .arg(&dir),
                "build the rmcp adapter",
            )?;
            Ok(shell_quote(
                &dir.join("debug").join("mcp-harness-rmcp-adapter"),
            ))
        }
        Sdk::All => Err("`all` is not one SDK".into()),
    }
}

/// Runs `cargo xtask conformance` for one client; whether it met its baseline, and what it
/// graded.
fn conformance(
    name: &str,
    client: Option<&str>,
    baseline: Option<&Path>,
    rewrite: Option<&Path>,
    dir: &Path,
) -> Result<(bool, RunResults), String> {
    // At the default jobs, like a user's run: the time scale gives a slow start-up its room
    // (the soak held rmcp's, TypeScript's and Python's grades there; see README § Soak).
    let mut cmd = child::command(dir, client, Some(name), baseline)?;
    if let Some(path) = rewrite {
        cmd.arg("--write-baseline").arg(path);
    }
    println!("== {name}");
    let finished = child::run(cmd, dir, name)?;
    Ok((finished.met, finished.results))
}

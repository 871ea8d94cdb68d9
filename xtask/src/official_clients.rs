//! `cargo xtask official-clients`: runs the example clients of the official conformance suite
//! (modelcontextprotocol/conformance, `examples/clients/typescript/`) unmodified on the cases
//! that share its scenarios, and checks that the correct ones pass and `test-broken` fails.
//!
//! The examples are not on npm (the package ships only its bundle), and nothing here fetches
//! from GitHub: the user hands a checkout (`--checkout DIR` or `MCP_CONFORMANCE_CHECKOUT`).
//! Its `package.json`, lock, `src/` (the everything-client imports from it) and
//! `examples/clients/` are copied under `target/official-clients/`, their npm dependencies
//! installed there from the lock (`npm ci --omit=dev`), and `tsx` beside them at the version
//! the lock pins. Without a checkout it says why and skips; with one, missing node or npm is an error.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::child::{self, step};
use crate::paths;
use mcp_harness::conformance::shell_quote;
use mcp_harness::conformance::verdict::level_label;
use mcp_harness::report::RunResults;

/// Which example runs which case, and whether it must pass: the verdicts the official suite
/// itself gives them on its `initialize` and `tools_call` scenarios. `test1` only lists the
/// tools (no call: it fails `tools_call` there too); `test-broken` sends an `initialize`
/// without `clientInfo.name` and no `notifications/initialized`.
const EXPECTED: &[(&str, &str, bool)] = &[
    ("everything-client", "official/initialize", true),
    ("everything-client", "official/tools-call", true),
    ("test1", "official/initialize", true),
    ("test1", "official/tools-call", false),
    ("test2", "official/initialize", true),
    ("test2", "official/tools-call", true),
    ("test-broken", "official/initialize", false),
    ("test-broken", "official/tools-call", false),
];

/// The tsx version used when the checkout's lock names none.
const TSX_FALLBACK: &str = "4.21.0";

/// Runs every example on its cases; `Ok(None)` when skipped (the reason printed),
/// `Ok(Some(all_as_expected))` otherwise.
pub fn run(checkout: Option<PathBuf>, report_dir: Option<PathBuf>) -> Result<Option<bool>, String> {
    let checkout =
        checkout.or_else(|| std::env::var_os("MCP_CONFORMANCE_CHECKOUT").map(PathBuf::from));
    let Some(checkout) = checkout else {
        println!(
            "skipped: no checkout of modelcontextprotocol/conformance; give --checkout DIR or \
             MCP_CONFORMANCE_CHECKOUT (git clone https://github.com/modelcontextprotocol/conformance)"
        );
        return Ok(None);
    };
    // A checkout was asked for: missing tools are an error, not a skip.
    for tool in ["node", "npm"] {
        if Command::new(tool).arg("--version").output().is_err() {
            return Err(format!(
                "`{tool}` is not on PATH (the official examples are TypeScript)"
            ));
        }
    }
    let examples = checkout.join("examples/clients/typescript");
    if !examples.join("everything-client.ts").is_file() {
        return Err(format!(
            "{}: not a checkout of modelcontextprotocol/conformance (no examples/clients/typescript/everything-client.ts)",
            checkout.display()
        ));
    }
    let root = paths::workspace_root();
    let cache = root.join("target").join("official-clients");
    let tsx = install(&checkout, &cache)?;
    paths::build_bins()?;
    let reports = report_dir.unwrap_or_else(|| cache.join("reports"));
    let mut all = true;
    let mut examples_run: Vec<&str> = EXPECTED.iter().map(|(e, ..)| *e).collect();
    examples_run.dedup();
    for example in examples_run {
        let file = cache
            .join("copy/examples/clients/typescript")
            .join(format!("{example}.ts"));
        let client = format!("{} {}", shell_quote(&tsx), shell_quote(&file));
        let dir = reports.join(example);
        let mut cmd = child::command(&dir, Some(&client), Some(example), None)?;
        cmd.arg("--exact");
        for (_, case, _) in EXPECTED.iter().filter(|(e, ..)| *e == example) {
            cmd.arg(format!("{case}@https"));
        }
        let finished = child::run(cmd, &dir, example)?;
        for (_, case, must_pass) in EXPECTED.iter().filter(|(e, ..)| *e == example) {
            let (ok, line) = judge(&finished.results, case, *must_pass);
            all &= ok;
            println!(
                "{} {example:<18} {case:<22} {line}",
                if ok { "ok  " } else { "FAIL" }
            );
        }
    }
    println!("reports: {}", reports.display());
    Ok(Some(all))
}

/// Whether the trial of `case` graded as expected, and a line saying how it graded.
fn judge(results: &RunResults, case: &str, must_pass: bool) -> (bool, String) {
    let name = format!("{case}@https");
    let Some(trial) = results.trials.iter().find(|t| t.name == name) else {
        return (false, "not run".into());
    };
    let failed: Vec<String> = trial
        .checks
        .iter()
        .filter(|c| !c.passed)
        .map(|c| format!("{} ({})", c.requirement_id, level_label(c.level, true)))
        .collect();
    let passed = trial.grade.is_acceptable();
    let wanted = if must_pass { "pass" } else { "fail" };
    let line = match failed.is_empty() {
        true => format!("{} (expected {wanted})", trial.grade.as_str()),
        false => format!(
            "{} (expected {wanted}); failed: {}",
            trial.grade.as_str(),
            failed.join(", ")
        ),
    };
    (passed == must_pass, line)
}

/// Copies what the examples need and installs their dependencies; returns the tsx binary.
fn install(checkout: &Path, cache: &Path) -> Result<PathBuf, String> {
    let copy = cache.join("copy");
    for stale in ["src", "examples"] {
        let _ = std::fs::remove_dir_all(copy.join(stale));
    }
    std::fs::create_dir_all(copy.join("examples/clients"))
        .map_err(|e| format!("cannot create {}: {e}", copy.display()))?;
    for file in ["package.json", "package-lock.json"] {
        std::fs::copy(checkout.join(file), copy.join(file))
            .map_err(|e| format!("cannot copy {file} from {}: {e}", checkout.display()))?;
    }
    step(
        Command::new("cp")
            .arg("-R")
            .arg(checkout.join("src"))
            .arg(&copy),
        "copy the checkout's src/",
    )?;
    step(
        Command::new("cp")
            .arg("-R")
            .arg(checkout.join("examples/clients/typescript"))
            .arg(copy.join("examples/clients")),
        "copy the checkout's example clients",
    )?;
    step(
        Command::new("npm")
            .args([
                "ci",
                "--omit=dev",
                "--ignore-scripts",
                "--no-audit",
                "--no-fund",
                "--silent",
            ])
            .current_dir(&copy),
        "install the examples' dependencies",
    )?;
    let version =
        tsx_version(&copy.join("package-lock.json")).unwrap_or_else(|| TSX_FALLBACK.into());
    let dir = cache.join("tsx");
    let bin = dir.join("node_modules/.bin/tsx");
    let installed = std::fs::read_to_string(dir.join("node_modules/tsx/package.json"))
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .and_then(|v| v.get("version").and_then(|v| v.as_str()).map(str::to_owned));
    if installed.as_deref() != Some(version.as_str()) || !bin.exists() {
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        std::fs::write(dir.join("package.json"), "{\"private\": true}\n")
            .map_err(|e| format!("cannot write {}: {e}", dir.display()))?;
        step(
            Command::new("npm")
                .args(["install", "--no-audit", "--no-fund", "--silent"])
                .arg(format!("tsx@{version}"))
                .current_dir(&dir),
            "install tsx",
        )?;
    }
    Ok(bin)
}

/// The tsx version a package lock pins.
fn tsx_version(lock: &Path) -> Option<String> {
    let text = std::fs::read_to_string(lock).ok()?;
    let lock: serde_json::Value = serde_json::from_str(&text).ok()?;
    lock.pointer("/packages/node_modules~1tsx/version")?
        .as_str()
        .map(str::to_owned)
}

//! `cargo xtask fuzz`: runs the cargo-fuzz targets of `fuzz/` for a bounded time each, one after
//! the other, and reports executions and time per target.
//!
//! cargo-fuzz needs nightly compiler flags; the stable toolchain accepts them with
//! `RUSTC_BOOTSTRAP=1`, so no nightly toolchain is downloaded. cargo-fuzz itself is installed
//! from crates.io when missing. Builds go to `target/fuzz` (the sanitizer flags make them
//! useless to the main build anyway). Each target starts from a corpus under
//! `target/fuzz/corpus/<target>`, seeded every run from the project's own data (the case files,
//! the messages recorded in the snapshots), plus the committed findings in
//! `fuzz/regressions/<target>/`, which are thus replayed first every time. A crash leaves its
//! input in `target/fuzz/artifacts/<target>/` and fails the command.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

use xtask::paths;

/// The fuzz targets, in the order `all` runs them.
const TARGETS: [&str; 4] = [
    "stdio_framing",
    "sse_decoding",
    "jsonrpc_classify",
    "scenario_load",
];

/// The arguments of `cargo xtask fuzz`.
#[derive(clap::Args)]
pub struct Args {
    /// Which target to run (`stdio_framing`, `sse_decoding`, `jsonrpc_classify`,
    /// `scenario_load`), or `all`.
    #[arg(long, default_value = "all")]
    target: String,
    /// How long to fuzz each target, in seconds.
    #[arg(long, default_value_t = 60)]
    seconds: u64,
}

/// What one target's run came to.
struct Run {
    target: &'static str,
    ok: bool,
    executions: Option<u64>,
    seconds: f64,
    log: PathBuf,
}

/// Runs the command; the exit code says whether every target ran clean.
pub fn main(args: Args) -> ExitCode {
    match run(&args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(101),
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(args: &Args) -> Result<bool, String> {
    let targets: Vec<&'static str> = match args.target.as_str() {
        "all" => TARGETS.to_vec(),
        name => vec![*TARGETS.iter().find(|t| **t == name).ok_or_else(|| {
            format!(
                "unknown fuzz target {name:?}; expected one of {} or all",
                TARGETS.join(", ")
            )
        })?],
    };
    if args.seconds == 0 {
        return Err("--seconds must be positive".into());
    }
    ensure_cargo_fuzz()?;
    let root = paths::workspace_root();
    let work = root.join("target").join("fuzz");
    let mut runs = Vec::new();
    for target in targets {
        let corpus = work.join("corpus").join(target);
        seed(&root, target, &corpus)?;
        runs.push(run_target(&root, &work, target, &corpus, args.seconds)?);
    }
    println!(
        "\n{:<18} {:>6} {:>14} {:>9}  log",
        "target", "result", "executions", "seconds"
    );
    for r in &runs {
        let execs = r.executions.map_or("?".into(), |n| n.to_string());
        let result = if r.ok { "ok" } else { "FAILED" };
        println!(
            "{:<18} {result:>6} {execs:>14} {:>9.1}  {}",
            r.target,
            r.seconds,
            r.log.display()
        );
    }
    Ok(runs.iter().all(|r| r.ok))
}

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".into())
}

/// Installs cargo-fuzz from crates.io unless `cargo fuzz` already works.
fn ensure_cargo_fuzz() -> Result<(), String> {
    let present = Command::new(cargo())
        .args(["fuzz", "--version"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if present {
        return Ok(());
    }
    eprintln!("cargo-fuzz is missing: installing it from crates.io (takes a minute or two)");
    let status = Command::new(cargo())
        .args(["install", "--locked", "cargo-fuzz"])
        .status()
        .map_err(|e| format!("cannot run cargo install: {e}"))?;
    match status.success() {
        true => Ok(()),
        false => Err("cargo install cargo-fuzz failed".into()),
    }
}

/// Writes the seed inputs of `target` into `corpus` (existing entries are kept). Every input
/// starts with the two header bytes the targets read (cap choice, chunking seed).
fn seed(root: &Path, target: &str, corpus: &Path) -> Result<(), String> {
    fs::create_dir_all(corpus).map_err(|e| format!("cannot create {}: {e}", corpus.display()))?;
    let mut seeds: Vec<Vec<u8>> = Vec::new();
    match target {
        "scenario_load" => {
            let mut files = Vec::new();
            collect_json(&root.join("scenarios"), &mut files);
            for file in files {
                if let Ok(text) = fs::read(&file) {
                    seeds.push(text);
                }
            }
        }
        _ => {
            let messages = recorded_messages(&root.join("snapshots"));
            for (i, m) in messages.iter().enumerate() {
                let header = [i as u8, (i % 7) as u8];
                let mut input = header.to_vec();
                match target {
                    "stdio_framing" => {
                        input.extend_from_slice(m.as_bytes());
                        input.extend_from_slice(b"\n{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\r\n");
                    }
                    "sse_decoding" => {
                        input.extend_from_slice(b"id: 1\nevent: message\ndata: ");
                        input.extend_from_slice(m.as_bytes());
                        input.extend_from_slice(
                            b"\n\n: keep-alive\n\nretry: 100\r\ndata: {}\r\n\r\n",
                        );
                    }
                    _ => input = m.as_bytes().to_vec(),
                }
                seeds.push(input);
            }
        }
    }
    for (i, input) in seeds.iter().enumerate() {
        let path = corpus.join(format!("seed-{i:04}"));
        fs::write(&path, input).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(())
}

fn collect_json(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_json(&path, out);
        } else if path.extension().is_some_and(|e| e == "json") {
            out.push(path);
        }
    }
    out.sort();
}

/// The distinct JSON-RPC messages recorded in the snapshots (`fake → …` / `fake ← …` lines).
fn recorded_messages(dir: &Path) -> Vec<String> {
    let mut messages = Vec::new();
    let Ok(entries) = fs::read_dir(dir) else {
        return messages;
    };
    let mut files: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    files.sort();
    for file in files {
        let Ok(text) = fs::read_to_string(&file) else {
            continue;
        };
        for line in text.lines() {
            let line = line.trim_start();
            let message = line
                .strip_prefix("fake → ")
                .or_else(|| line.strip_prefix("fake ← "));
            if let Some(m) = message.filter(|m| m.starts_with('{')) {
                if !messages.iter().any(|seen| seen == m) {
                    messages.push(m.to_owned());
                }
            }
        }
    }
    messages
}

/// Runs one target for `seconds`, its output kept in a log, and reads back libFuzzer's stats.
fn run_target(
    root: &Path,
    work: &Path,
    target: &'static str,
    corpus: &Path,
    seconds: u64,
) -> Result<Run, String> {
    let artifacts = work.join("artifacts").join(target);
    let logs = work.join("logs");
    for dir in [&artifacts, &logs] {
        fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let log = logs.join(format!("{target}.log"));
    let log_file =
        fs::File::create(&log).map_err(|e| format!("cannot create {}: {e}", log.display()))?;
    let regressions = root.join("fuzz").join("regressions").join(target);
    let fuzz = |verb: &str| {
        let mut cmd = Command::new(cargo());
        cmd.current_dir(root.join("fuzz"))
            .env("RUSTC_BOOTSTRAP", "1")
            .args(["fuzz", verb, target, "--target-dir"])
            .arg(work);
        cmd
    };
    // Built first, so that the time reported is fuzzing time.
    println!("building {target}");
    let build_log = log_file
        .try_clone()
        .map_err(|e| format!("cannot write {}: {e}", log.display()))?;
    let built = fuzz("build")
        .stdout(Stdio::null())
        .stderr(build_log)
        .status()
        .map_err(|e| format!("cannot run cargo fuzz: {e}"))?;
    if !built.success() {
        return Err(format!(
            "cargo fuzz build {target} failed; see {}",
            log.display()
        ));
    }
    println!("fuzzing {target} for {seconds} s (log: {})", log.display());
    let started = Instant::now();
    let mut cmd = fuzz("run");
    cmd.arg(corpus);
    if regressions.is_dir() {
        cmd.arg(&regressions);
    }
    let status = cmd
        .arg("--")
        .arg(format!("-max_total_time={seconds}"))
        .arg(format!("-artifact_prefix={}/", artifacts.display()))
        .args(["-max_len=16384", "-timeout=10", "-rss_limit_mb=2048"])
        .args(["-print_final_stats=1"])
        .stdout(Stdio::null())
        .stderr(log_file)
        .status()
        .map_err(|e| format!("cannot run cargo fuzz: {e}"))?;
    let seconds = started.elapsed().as_secs_f64();
    let text = fs::read_to_string(&log).unwrap_or_default();
    let executions = text
        .lines()
        .find_map(|l| l.strip_prefix("stat::number_of_executed_units:"))
        .and_then(|n| n.trim().parse().ok());
    if !status.success() {
        eprintln!(
            "{target}: FAILED ({status}); the input that failed is in {}; the end of the log:",
            artifacts.display()
        );
        let lines: Vec<&str> = text.lines().collect();
        for line in &lines[lines.len().saturating_sub(30)..] {
            eprintln!("  {line}");
        }
    }
    Ok(Run {
        target,
        ok: status.success(),
        executions,
        seconds,
        log,
    })
}

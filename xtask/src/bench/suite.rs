//! The suite's own speed and how it scales: `cargo xtask conformance` against the reference
//! client, timed from outside as a user runs it (the whole `cargo xtask conformance` process,
//! cargo's freshness check included, after one untimed warm-up), each trial's time read back
//! from its `results.json`, and where the harness's own time went read from the timings the
//! runner writes when `MCP_HARNESS_TIMINGS` names a file (see `conformance::timings`).
//!
//! Runs, in order:
//!
//! | run          | what                                                               |
//! |--------------|--------------------------------------------------------------------|
//! | `1x jobs 1`  | the project's suite, one trial at a time: the uncontended costs    |
//! | `1x`         | the project's suite at the default jobs                            |
//! | `3x`         | a generated case directory holding every case three times          |
//! | `600`        | a generated case directory of at least 600 trials (the target)     |
//! | `no client`  | the suite against `true`, one at a time: the harness alone         |
//!
//! The generated directories (`scaled_cases`) live in the bench's work directory. Snapshots are compared
//! only in the project's own suite (a run of another directory compares none), so the
//! scaled runs do a little less per trial; their verdicts are the same cases' verdicts.

use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mcp_harness_fakes::cli::Play;
use serde::Serialize;
use serde_json::{Value, json};
use tempfile::TempDir;

use super::clients::{output_within, reason};
use super::scaled_cases::{case_count, scaled_dir};
use crate::paths;
use mcp_harness::conformance::timings::{self, RunTimings};
use mcp_harness::report::RunResults;

/// The longest one suite run may take before it is killed.
const SUITE_LIMIT: Duration = Duration::from_secs(600);
/// The trial count of the scale target.
const TARGET_TRIALS: usize = 600;
/// The scale target's wall time, in seconds.
const TARGET_SECONDS: f64 = 15.0;
/// How many times the stdio fake is started to time its start-up.
const FAKE_STARTS: usize = 20;

/// One timed suite run.
#[derive(Debug, Clone, Serialize)]
pub struct SuiteRun {
    /// What ran (`1x`, `3x`, ...; see the module's table).
    pub label: String,
    /// `--jobs`, or `None` for the runner's default.
    pub jobs: Option<usize>,
    /// Wall time of the whole `cargo xtask conformance` process, in seconds.
    pub seconds: f64,
    /// CPU time (user and system) of that process and every process it waited for (cargo,
    /// the runner, the clients and the fakes), in seconds; `cpu_s / cores` is the least wall
    /// time the run could take on an otherwise idle machine.
    pub cpu_s: f64,
    /// Trials run.
    pub trials: usize,
    /// Trials per second of wall time.
    pub trials_per_s: f64,
    /// The median of the trials' `elapsed_ms`.
    pub median_trial_ms: f64,
    /// The slowest trial and its time, in ms.
    pub slowest: (String, u64),
    /// The suite's exit code (0: every trial met its grade).
    pub exit_code: i32,
    /// The trials that failed, if any (a timing-sensitive case can fail on a loaded machine).
    pub failed: Vec<String>,
    /// Where the run's time went, as the runner measured it.
    pub inside: Inside,
}

/// The runner's own account of a run.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Inside {
    /// Trials run at once.
    pub threads: usize,
    /// Starting the process and cargo's freshness checks: the wall time the runner did not
    /// see, in ms.
    pub start_ms: f64,
    /// Loading the cases, in ms.
    pub load_ms: f64,
    /// The run's HTTP environment, its certificates included, in ms.
    pub http_setup_ms: f64,
    /// From the first trial's start to the last one's end, in ms.
    pub trials_ms: f64,
    /// Each phase of a trial: mean, median and max over the trials, in ms.
    pub phases: Vec<PhaseCost>,
    /// The mean of the harness's own phases per trial (every phase but the client's run).
    pub harness_mean_ms: f64,
}

/// One phase of a trial over a run.
#[derive(Debug, Clone, Serialize)]
pub struct PhaseCost {
    /// The phase (see `conformance::trial::Phases`).
    pub phase: String,
    /// Mean over the trials, in ms.
    pub mean_ms: f64,
    /// Median over the trials, in ms.
    pub median_ms: f64,
    /// The largest, in ms.
    pub max_ms: f64,
}

/// Everything the suite section measured.
#[derive(Debug, Default)]
pub struct Suite {
    /// The runs, in the order of the module's table.
    pub runs: Vec<Result<SuiteRun, String>>,
    /// The stdio fake's start-up, started with its input closed: median ms of its runs.
    pub fake_start_ms: Option<Result<f64, String>>,
}

/// Measures the suite: warms it up, then every run of the module's table.
pub fn measure(work: &Path, fake_stdio: &Path) -> Suite {
    let root = paths::workspace_root();
    if let Err(why) = warm_up(&root) {
        return Suite {
            runs: vec![Err(why)],
            fake_start_ms: None,
        };
    }
    let one = case_count(&paths::scenarios_dir());
    let scaled = |copies: Option<usize>, at_least: usize| -> Result<TempDir, String> {
        let trials = one.clone()?;
        let want = copies.map_or(at_least, |c| c * trials);
        scaled_dir(&paths::scenarios_dir(), want, work)
    };
    let mut runs = vec![
        run(&root, work, "1x jobs 1", Some(1), None, None),
        run(&root, work, "1x", None, None, None),
    ];
    runs.push(
        scaled(Some(3), 0).and_then(|dir| run(&root, work, "3x", None, Some(dir.path()), None)),
    );
    runs.push(
        scaled(None, TARGET_TRIALS)
            .and_then(|dir| run(&root, work, "600", None, Some(dir.path()), None)),
    );
    runs.push(run(&root, work, "no client", Some(1), None, Some("true")));
    Suite {
        runs,
        fake_start_ms: Some(fake_start(fake_stdio, work)),
    }
}

/// `cargo xtask conformance ARGS` from the workspace root, with the environment a shell gives
/// it (cargo's variables for the bench's own package would make its builds look dirty).
fn cargo_xtask(root: &Path) -> Command {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    // At scale 1 whatever the load, so runs compare: the bench times the harness, and the
    // load it creates itself would otherwise stretch the cases' waits.
    cmd.current_dir(root)
        .args(["xtask", "conformance", "--time-scale", "1"]);
    for (key, _) in std::env::vars_os() {
        if key.to_str().is_some_and(paths::is_package_variable) || key == timings::VAR {
            cmd.env_remove(key);
        }
    }
    cmd
}

/// Builds whatever `cargo xtask conformance` needs, untimed, so the runs are warm.
fn warm_up(root: &Path) -> Result<(), String> {
    let mut cmd = cargo_xtask(root);
    cmd.arg("--list");
    let (status, _, stderr) = output_within(&mut cmd, SUITE_LIMIT)?;
    match status.success() {
        true => Ok(()),
        false => Err(format!(
            "`cargo xtask conformance --list` failed ({status}): {}",
            reason(&stderr)
        )),
    }
}

/// Runs the suite once and measures it.
fn run(
    root: &Path,
    work: &Path,
    label: &str,
    jobs: Option<usize>,
    scenarios: Option<&Path>,
    client: Option<&str>,
) -> Result<SuiteRun, String> {
    let dir = work.join(format!("suite-{}", label.replace(' ', "-")));
    let timings_file = dir.join("timings.json");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut cmd = cargo_xtask(root);
    cmd.args(["-q", "--report-dir"])
        .arg(&dir)
        .env(timings::VAR, &timings_file);
    if let Some(n) = jobs {
        cmd.args(["--jobs", &n.to_string()]);
    }
    if let Some(scenarios) = scenarios {
        cmd.arg("--scenarios").arg(scenarios);
    }
    if let Some(client) = client {
        cmd.args(["--client", client]);
    }
    let (started, cpu_before) = (Instant::now(), children_cpu());
    let (status, _, stderr) = output_within(&mut cmd, SUITE_LIMIT)?;
    let seconds = started.elapsed().as_secs_f64();
    let cpu_s = children_cpu() - cpu_before;
    let exit_code = status.code().unwrap_or(-1);
    if exit_code != 0 && exit_code != 101 {
        return Err(format!(
            "the suite ({label}) could not run ({status}): {}",
            reason(&stderr)
        ));
    }
    let results = RunResults::load(&dir.join("results.json"))?;
    let mut times: Vec<u64> = results.trials.iter().map(|t| t.elapsed_ms).collect();
    times.sort_unstable();
    let slowest = results
        .trials
        .iter()
        .max_by_key(|t| t.elapsed_ms)
        .map(|t| (t.name.clone(), t.elapsed_ms))
        .unwrap_or_default();
    // Against a client that does nothing every trial fails: that is the point of the run.
    let failed = match client {
        Some(_) => Vec::new(),
        None => results
            .trials
            .iter()
            .filter(|t| t.verdict.fails_run())
            .map(|t| t.name.clone())
            .collect(),
    };
    let inside = inside(&RunTimings::load(&timings_file)?, seconds);
    Ok(SuiteRun {
        label: label.to_owned(),
        jobs,
        seconds,
        cpu_s,
        trials: times.len(),
        trials_per_s: times.len() as f64 / seconds.max(1e-9),
        median_trial_ms: median(&times.iter().map(|&t| t as f64).collect::<Vec<_>>()),
        slowest,
        exit_code: if client.is_some() { 0 } else { exit_code },
        failed,
        inside,
    })
}

/// The CPU time of this process's children that it waited for (and of theirs), in seconds
/// (`getrusage(RUSAGE_CHILDREN)`, user and system); 0 if the kernel will not say.
fn children_cpu() -> f64 {
    use nix::sys::resource::{UsageWho, getrusage};
    let seconds = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 + t.tv_usec() as f64 / 1e6;
    getrusage(UsageWho::RUSAGE_CHILDREN).map_or(0.0, |usage| {
        seconds(usage.user_time()) + seconds(usage.system_time())
    })
}

/// The runner's account, summed up per phase.
fn inside(t: &RunTimings, seconds: f64) -> Inside {
    let names: Vec<String> = t
        .trials
        .first()
        .map(|tr| tr.phases_us.iter().map(|(n, _)| n.clone()).collect())
        .unwrap_or_default();
    let phases: Vec<PhaseCost> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let mut ms: Vec<f64> = t
                .trials
                .iter()
                .filter_map(|tr| tr.phases_us.get(i))
                .map(|(_, us)| *us as f64 / 1e3)
                .collect();
            ms.sort_by(f64::total_cmp);
            PhaseCost {
                phase: name.clone(),
                mean_ms: ms.iter().sum::<f64>() / ms.len().max(1) as f64,
                median_ms: median(&ms),
                max_ms: ms.last().copied().unwrap_or(0.0),
            }
        })
        .collect();
    let harness_mean_ms = phases
        .iter()
        .filter(|p| p.phase != "client")
        .map(|p| p.mean_ms)
        .sum();
    Inside {
        threads: t.threads,
        start_ms: (seconds * 1e3 - t.load_ms - t.trials_ms - t.finish_ms).max(0.0),
        load_ms: t.load_ms,
        http_setup_ms: t.http_setup_ms,
        trials_ms: t.trials_ms,
        phases,
        harness_mean_ms,
    }
}

/// The stdio fake's start-up cost, the part of a stdio trial's spawn the client pays: the
/// median wall time of the fake started on `handshake/happy-path` with its input closed,
/// from spawn to exit (it reads its play file, opens its transcript, records its start, sees
/// the end of its input and exits).
fn fake_start(fake: &Path, work: &Path) -> Result<f64, String> {
    let root = paths::scenarios_dir();
    let case = mcp_harness_scenarios::load_case(&root, &root.join("handshake/happy-path.json"))
        .map_err(|e| e.to_string())?;
    let play = work.join("fake-start-play.json");
    Play::of(&case).write(&play)?;
    let mut ms = Vec::with_capacity(FAKE_STARTS);
    for i in 0..FAKE_STARTS {
        let transcript = work.join(format!("fake-start-{i}.jsonl"));
        let started = Instant::now();
        let status = Command::new(fake)
            .arg("--play")
            .arg(&play)
            .arg("--transcript")
            .arg(&transcript)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map_err(|e| format!("cannot start {}: {e}", fake.display()))?;
        ms.push(started.elapsed().as_secs_f64() * 1e3);
        if status.code() == Some(2) {
            return Err(format!("{} refused its command line", fake.display()));
        }
    }
    ms.sort_by(f64::total_cmp);
    Ok(median(&ms))
}

/// The median of sorted values (the mean of the middle two for an even count).
fn median(sorted: &[f64]) -> f64 {
    match sorted.len() {
        0 => 0.0,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

impl Suite {
    fn find(&self, label: &str) -> Option<&SuiteRun> {
        self.runs.iter().flatten().find(|r| r.label == label)
    }

    /// How the wall time grows from the project's suite to three times over: the ratio of
    /// the walls, and the fit `wall = fixed + per_trial × trials` through both.
    fn growth(&self) -> Option<(f64, f64, f64)> {
        let (a, b) = (self.find("1x")?, self.find("3x")?);
        let per_trial = (b.seconds - a.seconds) / (b.trials as f64 - a.trials as f64).max(1.0);
        let fixed = a.seconds - per_trial * a.trials as f64;
        Some((b.seconds / a.seconds.max(1e-9), fixed, per_trial))
    }

    /// The targets this section judges, each `(what, met, detail)`.
    pub fn targets(&self) -> Vec<(String, Option<bool>, String)> {
        let mut out = Vec::new();
        if let Some(run) = self.find("1x") {
            out.push((
                "whole suite under 10 s warm".into(),
                Some(run.seconds < 10.0),
                format!("{:.2} s", run.seconds),
            ));
            out.push((
                "median trial under 50 ms".into(),
                Some(run.median_trial_ms < 50.0),
                format!("{:.1} ms", run.median_trial_ms),
            ));
        }
        let what = format!("{TARGET_TRIALS} trials under {TARGET_SECONDS:.0} s warm, default jobs");
        out.push(match self.find("600") {
            Some(run) => {
                let green = run.exit_code == 0;
                let detail = format!(
                    "{} trials in {:.2} s ({:.1} trials/s, {} jobs){}",
                    run.trials,
                    run.seconds,
                    run.trials_per_s,
                    run.inside.threads,
                    match green {
                        true => String::new(),
                        false => format!("; failed: {}", run.failed.join(", ")),
                    }
                );
                let cores = mcp_harness::conformance::cores();
                let detail = format!(
                    "{detail}; CPU {:.1} s, so at least {:.1} s on {cores} idle cores",
                    run.cpu_s,
                    run.cpu_s / cores as f64,
                );
                (what, Some(green && run.seconds < TARGET_SECONDS), detail)
            }
            None => (what, None, "the run did not complete".into()),
        });
        out
    }

    /// The section of the bench table.
    pub fn table(&self) -> String {
        let mut t = String::new();
        let _ = writeln!(
            t,
            "\nsuite (reference client, `cargo xtask conformance`, warm; wall of the whole command)"
        );
        let _ = writeln!(
            t,
            "{:<10} {:>5} {:>8} {:>7} {:>9} {:>11} {:>9} {:>10}  slowest trial",
            "run", "jobs", "wall s", "trials", "trials/s", "median ms", "start ms", "CPU ms/tr"
        );
        for run in &self.runs {
            match run {
                Ok(r) => {
                    let _ = writeln!(
                        t,
                        "{:<10} {:>5} {:>8.2} {:>7} {:>9.1} {:>11.1} {:>9.0} {:>10.1}  {} ({} ms){}",
                        r.label,
                        r.inside.threads,
                        r.seconds,
                        r.trials,
                        r.trials_per_s,
                        r.median_trial_ms,
                        r.inside.start_ms,
                        r.cpu_s * 1e3 / r.trials.max(1) as f64,
                        r.slowest.0,
                        r.slowest.1,
                        match (r.exit_code, r.failed.is_empty()) {
                            (0, _) => String::new(),
                            (_, true) => "  [the run failed]".to_owned(),
                            (_, false) => format!("  [failed: {}]", r.failed.join(", ")),
                        }
                    );
                }
                Err(why) => drop(writeln!(t, "suite run failed: {why}")),
            }
        }
        if let Some((ratio, fixed, per_trial)) = self.growth() {
            let _ = writeln!(
                t,
                "growth 1x -> 3x: wall x{ratio:.2} for x3 trials; fit: {fixed:.2} s + {:.1} ms per trial",
                per_trial * 1e3
            );
        }
        if let Some(base) = self.find("1x jobs 1") {
            let contended = self.find("3x");
            let _ = writeln!(
                t,
                "\nharness cost per trial (runner's timings; ms; jobs 1 = uncontended{})",
                if contended.is_some() {
                    ", 3x = at the default jobs"
                } else {
                    ""
                }
            );
            let _ = writeln!(
                t,
                "{:<12} {:>10} {:>10} {:>10}",
                "phase", "median", "mean", "3x mean"
            );
            for p in &base.inside.phases {
                let other = contended
                    .and_then(|c| c.inside.phases.iter().find(|q| q.phase == p.phase))
                    .map_or("-".to_owned(), |q| format!("{:.2}", q.mean_ms));
                let _ = writeln!(
                    t,
                    "{:<12} {:>10.2} {:>10.2} {:>10}",
                    p.phase, p.median_ms, p.mean_ms, other
                );
            }
            let _ = writeln!(
                t,
                "{:<12} {:>10} {:>10.2} {:>10}",
                "harness",
                "",
                base.inside.harness_mean_ms,
                contended.map_or("-".to_owned(), |c| format!(
                    "{:.2}",
                    c.inside.harness_mean_ms
                ))
            );
            let _ = writeln!(
                t,
                "per run: start (process, cargo) {:.0} ms, case loading {:.0} ms, certificates and HTTP runtime {:.1} ms",
                base.inside.start_ms, base.inside.load_ms, base.inside.http_setup_ms
            );
        }
        if let Some(none) = self.find("no client") {
            let _ = writeln!(
                t,
                "harness alone (client `true`, jobs 1): {:.1} ms per trial of wall",
                none.inside.trials_ms / none.trials.max(1) as f64
            );
        }
        match &self.fake_start_ms {
            Some(Ok(ms)) => drop(writeln!(
                t,
                "stdio fake start-up (input closed, spawn to exit, median of {FAKE_STARTS}): {ms:.1} ms"
            )),
            Some(Err(why)) => drop(writeln!(t, "stdio fake start-up: {why}")),
            None => {}
        }
        t
    }

    /// The section of `bench.json`.
    pub fn json(&self) -> Value {
        let runs: Vec<Value> = self
            .runs
            .iter()
            .map(|r| match r {
                Ok(run) => serde_json::to_value(run).unwrap_or(Value::Null),
                Err(why) => json!({"unavailable": why}),
            })
            .collect();
        let growth = self.growth().map(|(ratio, fixed, per_trial)| {
            json!({"wall_ratio_3x_over_1x": ratio, "fixed_s": fixed, "per_trial_ms": per_trial * 1e3})
        });
        let fake_start = match &self.fake_start_ms {
            Some(Ok(ms)) => json!(ms),
            Some(Err(why)) => json!({"unavailable": why}),
            None => Value::Null,
        };
        json!({
            "runs": runs,
            "growth": growth,
            "fake_stdio_start_ms": fake_start,
            "measured": "wall: the whole `cargo xtask conformance` process; phases: the runner's \
                         own clock around each step of each trial (MCP_HARNESS_TIMINGS)",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[]), 0.0);
        assert_eq!(median(&[5.0]), 5.0);
        assert_eq!(median(&[1.0, 2.0, 9.0]), 2.0);
        assert_eq!(median(&[1.0, 2.0, 4.0, 9.0]), 3.0);
    }

    #[test]
    fn children_cpu_counts_a_busy_child_once_waited_for() {
        let before = children_cpu();
        let status = Command::new("sh")
            .args(["-c", "i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done"])
            .status()
            .expect("sh runs");
        assert!(status.success());
        let after = children_cpu();
        assert!(after > before, "children CPU {before} s, then {after} s");
        assert!(
            after - before < 60.0,
            "a busy loop of well under a minute: {after} s"
        );
    }
}

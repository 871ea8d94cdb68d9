//! `cargo xtask soak`: the suite repeated K times for one client, first at the default number
//! of trials at once, then oversubscribed (F times the default) with, on request, a CPU hog
//! beside it; every trial whose grade or checks changed between runs is reported with the
//! run it changed in and the checks that flipped, per mode and then across the modes (a trial
//! steady in each mode but graded differently under stress follows the load just the same).
//! Not part of CI: it takes K × 2 suite runs.
//!
//! Each run is a separate `cargo xtask conformance --no-build --report-dir DIR/<mode>-<i>`
//! (see [`crate::child`]), so a soak measures exactly what users run; its `results.json` is what is compared. The summary
//! goes to `DIR/soak.json`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{ExitCode, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Instant;

use serde::Serialize;

use crate::child;
use crate::paths;
use mcp_harness::report::{RunResults, TrialResult};

/// The command line of `cargo xtask soak`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The client under test (as for `conformance`; default: the reference client).
    #[arg(long, value_name = "COMMAND")]
    pub client: Option<String>,
    /// The client's name in reports.
    #[arg(long, value_name = "NAME")]
    pub client_name: Option<String>,
    /// The client's expected-failures file.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// Suite runs per mode.
    #[arg(long, value_name = "K", default_value_t = 5, value_parser = clap::value_parser!(u32).range(2..))]
    pub runs: u32,
    /// Trials at once in the stressed mode, as a multiple of the suite's default jobs (four per
    /// core; 0: skip that mode).
    #[arg(long, value_name = "F", default_value_t = 4)]
    pub oversubscribe: usize,
    /// In the stressed mode, keep every core busy with a spinning thread beside the suite.
    #[arg(long)]
    pub hog: bool,
    /// Passed to every run as `--time-scale` (a factor, or `auto`: from the load average).
    #[arg(long, value_name = "F|auto", value_parser = mcp_harness::conformance::time_scale::Choice::parse)]
    pub time_scale: Option<mcp_harness::conformance::time_scale::Choice>,
    /// Where the runs' reports and soak.json go (default: target/soak).
    #[arg(long, value_name = "DIR")]
    pub report_dir: Option<PathBuf>,
    /// Use the already built fake and driver beside this executable (for tests).
    #[arg(long, hide = true)]
    pub no_build: bool,
    /// Trial name filters, passed on to `conformance`.
    #[arg(value_name = "FILTERS")]
    pub filters: Vec<String>,
}

/// One mode of the soak: how many trials at once, and whether the hog runs.
#[derive(Debug, Clone, Serialize)]
pub struct Mode {
    /// `default` or `stress`.
    pub name: String,
    /// `--jobs` given to the suite (`None`: its default, four per core).
    pub jobs: Option<usize>,
    /// Spinning threads beside the suite.
    pub hog_threads: usize,
}

/// One suite run of a mode.
#[derive(Debug, Clone, Serialize)]
pub struct RunRecord {
    /// Its report directory.
    pub dir: PathBuf,
    /// The suite's exit code (0: met its baseline, 101: did not).
    pub exit: i32,
    /// Wall time, in seconds.
    pub seconds: f64,
    /// Trials per grade.
    pub grades: BTreeMap<String, usize>,
}

/// A check whose state differed between runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckChange {
    /// The check's name.
    pub name: String,
    /// Its level.
    pub level: String,
    /// Per run: `Some(true)` held, `Some(false)` failed, `None` not evaluated.
    pub passed: Vec<Option<bool>>,
    /// The `actual` of the first failing run (shortened).
    pub actual: String,
}

/// A trial whose grade or checks differed between runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrialChange {
    /// `<case-id>@<transport>`.
    pub trial: String,
    /// Its grade per run (`missing` when a run lacks it).
    pub grades: Vec<String>,
    /// Whether the grade itself changed (else only checks within one grade did).
    pub grade_changed: bool,
    /// The checks that flipped.
    pub checks: Vec<CheckChange>,
}

/// One mode's result.
#[derive(Debug, Clone, Serialize)]
pub struct ModeReport {
    /// The mode.
    #[serde(flatten)]
    pub mode: Mode,
    /// Its runs.
    pub runs: Vec<RunRecord>,
    /// Trials whose grade changed.
    pub grade_changes: usize,
    /// Every trial that changed (grade or checks).
    pub changed: Vec<TrialChange>,
}

/// The whole soak, as written to soak.json.
#[derive(Debug, Clone, Serialize)]
pub struct SoakReport {
    /// The client's label.
    pub client: String,
    /// Cores seen.
    pub cores: usize,
    /// Trials per run.
    pub trials: usize,
    /// The modes, in the order run.
    pub modes: Vec<ModeReport>,
    /// Trials steady within each mode whose verdict differs between the modes: a verdict
    /// that follows the machine's load (every run of every mode, in order).
    pub across_modes: Vec<TrialChange>,
}

/// `cargo xtask soak`: 0 when nothing changed, 1 when something did, 2 on error.
pub fn main(args: Args) -> ExitCode {
    match run(&args) {
        Ok(report)
            if report.across_modes.is_empty()
                && report.modes.iter().all(|m| m.changed.is_empty()) =>
        {
            ExitCode::SUCCESS
        }
        Ok(_) => ExitCode::from(1),
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(args: &Args) -> Result<SoakReport, String> {
    if !args.no_build {
        paths::build_bins()?;
    }
    let cores = mcp_harness::conformance::cores();
    let dir = args
        .report_dir
        .clone()
        .unwrap_or_else(|| paths::workspace_root().join("target").join("soak"));
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut modes = vec![Mode {
        name: "default".into(),
        jobs: None,
        hog_threads: 0,
    }];
    if args.oversubscribe > 0 {
        modes.push(Mode {
            name: "stress".into(),
            jobs: Some(args.oversubscribe * mcp_harness::conformance::default_threads()),
            hog_threads: if args.hog { cores } else { 0 },
        });
    }
    let mut report = SoakReport {
        client: String::new(),
        cores,
        trials: 0,
        modes: Vec::new(),
        across_modes: Vec::new(),
    };
    let several = modes.len() > 1;
    let mut every_run = Vec::new();
    for mode in modes {
        println!(
            "== {} (jobs {}, hog {} threads): {} runs",
            mode.name,
            mode.jobs.map_or_else(
                || format!("default={}", mcp_harness::conformance::default_threads()),
                |j| j.to_string(),
            ),
            mode.hog_threads,
            args.runs
        );
        let hog = Hog::start(mode.hog_threads);
        let runs = run_mode(args, &dir, &mode);
        hog.stop();
        let (records, results) = runs?;
        report.client = results[0].client.clone();
        report.trials = results[0].trials.len();
        let changed = compare(&results);
        print!("{}", render_mode(&mode.name, &changed));
        every_run.push(results);
        let grade_changes = grade_changes(&changed);
        report.modes.push(ModeReport {
            mode,
            runs: records,
            grade_changes,
            changed,
        });
    }
    if several {
        report.across_modes = across_modes(&every_run);
        print!("{}", render_mode("across modes", &report.across_modes));
    }
    let path = dir.join("soak.json");
    let json = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
    std::fs::write(&path, json).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    println!("wrote {}", path.display());
    Ok(report)
}

/// The trials steady within every mode (each mode's runs agree) whose grade or checks still
/// differ between modes: verdicts that follow the load. `per_mode` holds each mode's runs.
pub fn across_modes(per_mode: &[Vec<RunResults>]) -> Vec<TrialChange> {
    let unsteady: std::collections::HashSet<String> = per_mode
        .iter()
        .flat_map(|runs| compare(runs))
        .map(|c| c.trial)
        .collect();
    let every_run: Vec<RunResults> = per_mode.iter().flatten().cloned().collect();
    compare(&every_run)
        .into_iter()
        .filter(|c| !unsteady.contains(&c.trial))
        .collect()
}

/// Runs the suite `args.runs` times in one mode.
fn run_mode(
    args: &Args,
    dir: &Path,
    mode: &Mode,
) -> Result<(Vec<RunRecord>, Vec<RunResults>), String> {
    let mut records = Vec::new();
    let mut results = Vec::new();
    for i in 1..=args.runs {
        let run_dir = dir.join(format!("{}-{i}", mode.name));
        std::fs::create_dir_all(&run_dir)
            .map_err(|e| format!("cannot create {}: {e}", run_dir.display()))?;
        let log_path = run_dir.join("conformance.log");
        let log = std::fs::File::create(&log_path)
            .map_err(|e| format!("cannot create {}: {e}", log_path.display()))?;
        let err_log = log.try_clone().map_err(|e| e.to_string())?;
        let mut cmd = child::command(
            &run_dir,
            args.client.as_deref(),
            args.client_name.as_deref(),
            args.baseline.as_deref(),
        )?;
        if let Some(scale) = &args.time_scale {
            cmd.args(["--time-scale", &scale.to_string()]);
        }
        if let Some(jobs) = mode.jobs {
            cmd.args(["--jobs", &jobs.to_string()]);
        }
        cmd.args(&args.filters)
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(err_log);
        let start = Instant::now();
        let finished = child::run(cmd, &run_dir, &format!("{} run {i}", mode.name))
            .map_err(|e| format!("{e}; see {}", log_path.display()))?;
        let seconds = start.elapsed().as_secs_f64();
        let (exit, loaded) = (finished.exit, finished.results);
        let grades = loaded
            .counts()
            .into_iter()
            .filter(|(_, n)| *n > 0)
            .map(|(g, n)| (g.as_str().to_string(), n))
            .collect::<BTreeMap<_, _>>();
        println!(
            "  run {i}: {:.0}s, exit {}, {}",
            seconds,
            exit,
            grades
                .iter()
                .map(|(g, n)| format!("{n} {g}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        records.push(RunRecord {
            dir: run_dir,
            exit,
            seconds,
            grades,
        });
        results.push(loaded);
    }
    Ok((records, results))
}

/// Every trial whose grade or checks differ between `runs`, sorted by name.
pub fn compare(runs: &[RunResults]) -> Vec<TrialChange> {
    let mut names: Vec<&str> = runs
        .iter()
        .flat_map(|r| r.trials.iter().map(|t| t.name.as_str()))
        .collect();
    names.sort_unstable();
    names.dedup();
    let mut changes = Vec::new();
    for name in names {
        let per_run: Vec<Option<&TrialResult>> = runs
            .iter()
            .map(|r| r.trials.iter().find(|t| t.name == name))
            .collect();
        let grades: Vec<String> = per_run
            .iter()
            .map(|t| t.map_or("missing", |t| t.grade.as_str()).to_string())
            .collect();
        let grade_changed = grades.iter().any(|g| g != &grades[0]);
        let checks = check_changes(&per_run);
        if grade_changed || !checks.is_empty() {
            changes.push(TrialChange {
                trial: name.to_string(),
                grades,
                grade_changed,
                checks,
            });
        }
    }
    changes
}

/// The checks of one trial whose state differs between runs. A check is keyed by its name;
/// one name checked several times holds when every instance does.
fn check_changes(per_run: &[Option<&TrialResult>]) -> Vec<CheckChange> {
    let mut order: Vec<(&str, &str)> = Vec::new();
    for trial in per_run.iter().flatten() {
        for c in &trial.checks {
            if !order.iter().any(|(n, _)| *n == c.name) {
                order.push((&c.name, c.level.as_str()));
            }
        }
    }
    let mut changes = Vec::new();
    for (name, level) in order {
        let passed: Vec<Option<bool>> = per_run
            .iter()
            .map(|t| {
                let mut seen = (*t)?.checks.iter().filter(|c| c.name == name).peekable();
                seen.peek()?;
                Some(seen.all(|c| c.passed))
            })
            .collect();
        if passed.iter().all(|p| *p == passed[0]) {
            continue;
        }
        let actual = per_run
            .iter()
            .flatten()
            .flat_map(|t| t.checks.iter())
            .find(|c| c.name == name && !c.passed)
            .map_or_else(String::new, |c| shorten(&c.actual, 120));
        changes.push(CheckChange {
            name: name.to_string(),
            level: level.to_string(),
            passed,
            actual,
        });
    }
    changes
}

/// `text` on one line, at most `max` characters.
pub fn shorten(text: &str, max: usize) -> String {
    let flat = mcp_harness::conformance::baseline::one_line(text);
    if flat.chars().count() <= max {
        flat
    } else {
        let mut short: String = flat.chars().take(max.saturating_sub(1)).collect();
        short.push('…');
        short
    }
}

/// Trials printed per mode, and flipped checks printed per trial; soak.json has them all.
const MAX_TRIALS: usize = 15;
const MAX_CHECKS: usize = 3;

/// How many of `changed` changed grade (the rest changed checks only).
fn grade_changes(changed: &[TrialChange]) -> usize {
    changed.iter().filter(|c| c.grade_changed).count()
}

/// The summary of one mode, as printed: at most [`MAX_TRIALS`] trials with at most
/// [`MAX_CHECKS`] flipped checks each, then the checks that flipped in the most trials.
pub fn render_mode(mode: &str, changed: &[TrialChange]) -> String {
    let grade_changes = grade_changes(changed);
    let mut out = format!(
        "{mode}: {grade_changes} trial(s) changed grade, {} more changed checks only\n",
        changed.len() - grade_changes
    );
    for change in changed.iter().take(MAX_TRIALS) {
        out.push_str(&format!(
            "  {}: {}\n",
            change.trial,
            change.grades.join(" ")
        ));
        for check in change.checks.iter().take(MAX_CHECKS) {
            let states = check
                .passed
                .iter()
                .map(|p| match p {
                    Some(true) => "ok",
                    Some(false) => "FAIL",
                    None => "-",
                })
                .collect::<Vec<_>>()
                .join(" ");
            let actual = if check.actual.is_empty() {
                String::new()
            } else {
                format!(" ({})", shorten(&check.actual, 70))
            };
            out.push_str(&format!(
                "    [{}] {}: {states}{actual}\n",
                check.level,
                shorten(&check.name, 70)
            ));
        }
        if change.checks.len() > MAX_CHECKS {
            out.push_str(&format!(
                "    (+{} more checks)\n",
                change.checks.len() - MAX_CHECKS
            ));
        }
    }
    if changed.len() > MAX_TRIALS {
        out.push_str(&format!(
            "  (+{} more trials; all in soak.json)\n",
            changed.len() - MAX_TRIALS
        ));
    }
    let mut tally: Vec<(&str, usize)> = Vec::new();
    for check in changed.iter().flat_map(|c| c.checks.iter()) {
        match tally.iter_mut().find(|(n, _)| *n == check.name) {
            Some((_, n)) => *n += 1,
            None => tally.push((&check.name, 1)),
        }
    }
    tally.sort_by_key(|t| std::cmp::Reverse(t.1));
    if changed.len() > 1 {
        let top = tally
            .iter()
            .take(3)
            .map(|(name, n)| format!("{} ({n})", shorten(name, 60)))
            .collect::<Vec<_>>()
            .join("; ");
        out.push_str(&format!("  checks flipped in most trials: {top}\n"));
    }
    out
}

/// Threads spinning on every core until stopped; they end with the soak at the latest.
struct Hog {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

impl Hog {
    fn start(n: usize) -> Hog {
        let stop = Arc::new(AtomicBool::new(false));
        let threads = (0..n)
            .map(|_| {
                let stop = Arc::clone(&stop);
                std::thread::spawn(move || {
                    let mut x: u64 = 1;
                    while !stop.load(Ordering::Relaxed) {
                        for _ in 0..10_000 {
                            x = std::hint::black_box(
                                x.wrapping_mul(6364136223846793005).wrapping_add(1),
                            );
                        }
                    }
                })
            })
            .collect();
        Hog { stop, threads }
    }

    fn stop(self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads {
            let _ = t.join();
        }
    }
}

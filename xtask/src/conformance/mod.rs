//! `cargo xtask conformance`: every case × transport as a libtest-mimic trial, run against
//! a client through the driver contract, graded, compared with its snapshot (reference
//! client only) and with the client's baseline.
//!
//! | module      | role                                                        |
//! |-------------|-------------------------------------------------------------|
//! | `trial`     | start the client, enforce the deadline, collect what it did |
//! | `output`    | bounded, escaped reading of what the client prints          |
//! | `procs`     | process groups, subreaper, orphan detection and reaping     |
//! | `outcome`   | parse the client's outcome lines                            |
//! | `checks`    | contract, base-rule and case checks                         |
//! | `verdict`   | grades and the Expected/Actual failure report               |
//! | `snapshot`  | normalized transcripts under insta                          |
//! | `baseline`  | the strict expected-failures file                           |

pub mod baseline;
pub mod checks;
pub mod http_env;
pub mod outcome;
pub mod output;
pub mod procs;
pub mod snapshot;
pub mod trial;
pub mod verdict;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use libtest_mimic::{Failed, Trial};

use mcp_harness_scenarios::model::Transport;
use mcp_harness_scenarios::{Case, load_dir};

use crate::report::{self, CheckRecord, RunResults, TrialResult};
use baseline::Baseline;
use checks::CheckResult;
use trial::{Harness, TrialRun};
use verdict::Grade;

/// Everything one conformance run needs.
#[derive(Debug, Clone)]
pub struct Options {
    /// The client command line; `None` runs the reference client's driver.
    pub client: Option<String>,
    /// The client's expected-failures baseline.
    pub baseline: Option<PathBuf>,
    /// Turn the seed 000 boundary profile off: profile checks then grade non-strict.
    pub spec_only: bool,
    /// Write snapshots instead of comparing them.
    pub bless: bool,
    /// Where to write `results.json`, `junit.xml` and `report.html`.
    pub report_dir: Option<PathBuf>,
    /// The client's name in reports (default: `reference`, or the command line).
    pub client_name: Option<String>,
    /// Run only this shard of the trials: `(i, n)` takes every n-th trial from the i-th (1-based).
    pub shard: Option<(usize, usize)>,
    /// The scenarios directory.
    pub scenarios_dir: PathBuf,
    /// The snapshots directory; `None` compares no snapshots (cases from elsewhere).
    pub snapshots_dir: Option<PathBuf>,
    /// The harness's binaries.
    pub bins: trial::Bins,
    /// A bearer token for every HTTPS trial (see [`RunToken`]).
    pub bearer_token: Option<RunToken>,
    /// libtest-mimic's own arguments (filter, `--list`, `--exact`, `--test-threads`, ...).
    pub libtest: libtest_mimic::Arguments,
}

/// A bearer token given to every HTTPS trial of a run, to check that a client sends it
/// everywhere and prints it nowhere. `Debug` never shows it.
#[derive(Clone)]
pub struct RunToken(pub String);

impl std::fmt::Debug for RunToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RunToken([redacted])")
    }
}

/// The full evaluation of one trial.
#[derive(Debug, Clone)]
pub struct Evaluation {
    /// What was observed.
    pub run: TrialRun,
    /// Every check, passed or not.
    pub checks: Vec<CheckResult>,
    /// The grade.
    pub grade: Grade,
}

/// Runs one case over one transport against `client_cmd` and checks it.
pub fn evaluate(
    case: &Case,
    transport: Transport,
    client_cmd: &str,
    harness: &Harness,
    profile_on: bool,
) -> Evaluation {
    let run = trial::run(case, transport, client_cmd, harness);
    let (checks, outcomes) = checks::evaluate(case, transport, &run);
    let grade = verdict::grade(&checks, &outcomes, profile_on);
    Evaluation { run, checks, grade }
}

/// The trial name of a case on a transport: `<case-id>@<transport>`, plus `@<revision>`
/// for a case that runs at several protocol revisions.
pub fn trial_name(case: &Case, transport: Transport) -> String {
    case.trial_name(transport)
}

/// Quotes a path for `sh -c`.
pub fn shell_quote(path: &std::path::Path) -> String {
    format!("'{}'", path.to_string_lossy().replace('\'', r"'\''"))
}

/// Runs the suite; the exit code is libtest's (101 on any failure), or 2 on bad input.
pub fn run(opts: Options) -> ExitCode {
    let cases = match load_dir(&opts.scenarios_dir) {
        Ok(cases) => cases,
        Err(errors) => {
            for e in &errors {
                eprintln!("error: {e}");
            }
            eprintln!("{} scenario file(s) rejected", errors.len());
            return ExitCode::from(2);
        }
    };
    let trials: Vec<(Case, Transport)> = mcp_harness_scenarios::trials(&cases);
    let names: Vec<String> = trials.iter().map(|(c, t)| trial_name(c, *t)).collect();
    let trials: Vec<(Case, Transport)> = match opts.shard {
        Some((i, n)) => trials.into_iter().skip(i - 1).step_by(n).collect(),
        None => trials,
    };
    let baseline = match &opts.baseline {
        Some(path) => match Baseline::load(path, &names) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        },
        None => Baseline::default(),
    };

    procs::become_subreaper();
    // Snapshots pin the reference client's plain run; a run token changes every HTTPS transcript.
    let snapshots_dir = opts
        .snapshots_dir
        .clone()
        .filter(|_| opts.client.is_none() && opts.bearer_token.is_none());
    let stale = snapshots_dir
        .as_deref()
        .map_or_else(Vec::new, |d| snapshot::stale(d, &names));
    for file in &stale {
        eprintln!(
            "error: snapshot {} belongs to no trial; delete it",
            file.display()
        );
    }
    let client_cmd = opts
        .client
        .clone()
        .unwrap_or_else(|| shell_quote(&opts.bins.driver));
    let reports: Arc<Mutex<Vec<TrialResult>>> = Arc::default();
    let harness = Arc::new(
        Harness::new(opts.bins.clone())
            .with_bearer_token(opts.bearer_token.as_ref().map(|t| t.0.clone())),
    );
    let started = Instant::now();
    let libtest_trials = trials
        .into_iter()
        .map(|(case, transport)| {
            let name = trial_name(&case, transport);
            let entry = baseline.get(&name).cloned();
            let kind = if entry.is_some() { "xfail" } else { "" };
            let (harness, cmd, reports) = (harness.clone(), client_cmd.clone(), reports.clone());
            let (snapshots, bless, profile_on) =
                (snapshots_dir.clone(), opts.bless, !opts.spec_only);
            Trial::test(name.clone(), move || {
                let eval = evaluate(&case, transport, &cmd, &harness, profile_on);
                let transcript = snapshot::render(&eval.run);
                let verdict = judge(&eval, entry.clone(), profile_on, || match &snapshots {
                    Some(dir) if eval.grade == Grade::Pass || bless => {
                        snapshot::compare(dir, &case.path, &name, &transcript)
                    }
                    _ => Ok(()),
                });
                let record =
                    trial_result(&case, &name, &eval, &verdict, entry, transcript, profile_on);
                if let Ok(mut r) = reports.lock() {
                    r.push(record);
                }
                verdict
            })
            .with_kind(kind)
        })
        .collect();

    let mut args = opts.libtest.clone();
    args.test_threads.get_or_insert(default_threads());
    let conclusion = libtest_mimic::run(&args, libtest_trials);
    let strays = procs::stray_children(&[]);
    procs::kill_strays(&strays);
    if args.list {
        return ExitCode::SUCCESS;
    }
    let mut reports = reports.lock().map(|r| r.clone()).unwrap_or_default();
    reports.sort_by(|a, b| a.name.cmp(&b.name));
    let results = RunResults {
        client: opts
            .client_name
            .clone()
            .unwrap_or_else(|| match &opts.client {
                None => "reference".to_owned(),
                Some(cmd) => cmd.clone(),
            }),
        profile: !opts.spec_only,
        seconds: started.elapsed().as_secs_f64(),
        trials: reports,
    };
    print_summary(&results);
    if !strays.is_empty() {
        eprintln!(
            "error: {} process(es) outlived their trials and were killed: {strays:?}",
            strays.len()
        );
    }
    if let Some(dir) = &opts.report_dir
        && let Err(e) = report::write_all(dir, &results)
    {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    if conclusion.has_failed() || !strays.is_empty() || !stale.is_empty() {
        ExitCode::from(101)
    } else {
        ExitCode::SUCCESS
    }
}

/// Decides a trial's libtest result from its grade and baseline entry.
fn judge(
    eval: &Evaluation,
    entry: Option<(usize, String)>,
    profile_on: bool,
    snapshot: impl FnOnce() -> Result<(), String>,
) -> Result<(), Failed> {
    let acceptable = eval.grade.is_acceptable();
    match entry {
        None if acceptable => snapshot().map_err(Failed::from),
        None => Err(verdict::render_failure(eval.grade, &eval.checks, &eval.run, profile_on).into()),
        Some(_) if !acceptable => Ok(()),
        Some((line, reason)) => Err(format!(
            "stale baseline entry (line {line}: {reason}): the trial now grades {}; remove the entry",
            eval.grade.as_str()
        )
        .into()),
    }
}

fn default_threads() -> usize {
    // Trials mostly wait on processes, so more trials than cores keeps the machine busy.
    std::thread::available_parallelism().map_or(2, |n| n.get()) * 2
}

fn print_summary(results: &RunResults) {
    let shown: Vec<String> = results
        .counts()
        .iter()
        .map(|(g, n)| format!("{n} {}", g.as_str()))
        .collect();
    let baselined = results
        .trials
        .iter()
        .filter(|t| t.baseline_reason.is_some())
        .count();
    println!(
        "grades: {} ({} trials, {baselined} baselined) in {:.2}s",
        shown.join(", "),
        results.trials.len(),
        results.seconds
    );
}

/// The report record of one trial.
fn trial_result(
    case: &Case,
    name: &str,
    eval: &Evaluation,
    verdict: &Result<(), Failed>,
    entry: Option<(usize, String)>,
    transcript: String,
    profile_on: bool,
) -> TrialResult {
    let verdict = match (verdict.is_ok(), entry.is_some()) {
        (true, false) => "passed",
        (true, true) => "expected-failure",
        (false, true) => "stale",
        (false, false) => "failed",
    };
    TrialResult {
        name: name.to_owned(),
        description: case.scenario.description.clone(),
        level: case.scenario.requirement.level,
        grade: eval.grade,
        verdict: verdict.to_owned(),
        baseline_reason: entry.map(|(_, reason)| reason),
        elapsed_ms: eval.run.elapsed.as_millis().try_into().unwrap_or(u64::MAX),
        checks: eval
            .checks
            .iter()
            .map(|c| CheckRecord {
                name: c.name.clone(),
                level: c.level,
                passed: c.passed,
                source: c.source.clone(),
                expected: c.expected.clone(),
                actual: c.actual.clone(),
            })
            .collect(),
        details: match eval.grade {
            Grade::Pass => String::new(),
            grade => verdict::render_failure(grade, &eval.checks, &eval.run, profile_on),
        },
        transcript,
    }
}

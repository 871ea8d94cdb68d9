//! `cargo xtask conformance`: every case × transport as a trial, run against
//! a client through the driver contract, graded, compared with its snapshot (reference
//! client only) and with the client's baseline.
//!
//! | module      | role                                                        |
//! |-------------|-------------------------------------------------------------|
//! | `trial`     | start the client, enforce the deadline, collect what it did |
//! | `output`    | bounded, escaped reading of what the client prints          |
//! | `procs`     | process groups, subreaper, orphan detection and reaping     |
//! | `interrupt` | an interrupted run kills every trial's processes, then exits |
//! | `outcome`   | parse the client's outcome lines                            |
//! | `checks`    | contract, base-rule and case checks                         |
//! | `verdict`   | grades, verdicts and the Expected/Actual failure report     |
//! | `runner`    | the thread pool, the console lines and the one tally        |
//! | `snapshot`  | normalized transcripts under insta                          |
//! | `baseline`  | the strict expected-failures file, read and written         |
//! | `timings`   | where a run's time went, for the bench                      |
//! | `cases`     | the built-in cases and the users' (`--cases DIR`)            |

pub mod auth_env;
pub mod baseline;
pub mod canary;
pub mod cases;
pub mod checks;
mod concurrent;
pub mod http_env;
mod interrupt;
pub mod netns;
pub mod official;
pub mod outcome;
pub mod output;
pub mod procs;
mod retries;
pub mod runner;
pub mod snapshot;
pub mod time_scale;
pub mod timings;
pub mod traces;
pub mod trial;
pub mod verdict;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use mcp_harness_scenarios::Case;
use mcp_harness_scenarios::model::Transport;

use crate::report::{self, CheckRecord, ErrorRecord, OutcomeRecord, RunResults, TrialResult};
use baseline::Baseline;
use checks::CheckResult;
use outcome::{Outcomes, Reported};
use runner::{Finished, Selection};
use trial::{Harness, TrialRun};
use verdict::{Grade, Place, Strictness, Verdict};

/// Everything one conformance run needs.
#[derive(Debug, Clone)]
pub struct Options {
    /// The client command line; `None` runs the reference client's driver.
    pub client: Option<String>,
    /// The client's expected-failures baseline.
    pub baseline: Option<PathBuf>,
    /// Turn the seed 000 boundary profile off: profile checks then grade non-strict.
    pub spec_only: bool,
    /// Let failed `advisory` checks fail a trial, as `must` ones do.
    pub advisory_fails: bool,
    /// Fail the run when an isolated trial cannot run here (no network namespace).
    pub require_ssrf: bool,
    /// Write snapshots instead of comparing them.
    pub bless: bool,
    /// Where to write `results.json`, `junit.xml` and `report.html`.
    pub report_dir: Option<PathBuf>,
    /// The client's name in reports (default: `reference`, or the command line).
    pub client_name: Option<String>,
    /// Run only this shard of the trials: `(i, n)` takes every n-th trial from the i-th (1-based).
    pub shard: Option<(usize, usize)>,
    /// The scenarios directory: the built-in cases, whose requirements catalogue and
    /// fixtures the users' cases share.
    pub scenarios_dir: PathBuf,
    /// The snapshots directory of the built-in cases; `None` compares no snapshots of them
    /// (cases from elsewhere).
    pub snapshots_dir: Option<PathBuf>,
    /// Users' case directories (`--cases`, `--only-cases`), each with its snapshots in
    /// `snapshots/` below it.
    pub case_dirs: Vec<PathBuf>,
    /// Whether the built-in cases run besides `case_dirs` (false with `--only-cases`).
    pub builtin_cases: bool,
    /// The command that starts a run, for the re-run commands in reports:
    /// `cargo xtask conformance` in the repository, `mcp-harness run` installed.
    pub program: String,
    /// The command that prints a built-in case (`mcp-harness case show`) when the built-in
    /// cases are a temporary copy (an installed binary's): reports name a built-in case by
    /// it instead of a path that is gone after the run. `None` names the case file.
    pub builtin_case_command: Option<String>,
    /// The harness's binaries.
    pub bins: trial::Bins,
    /// A bearer token for every HTTPS trial (see [`RunToken`]).
    pub bearer_token: Option<RunToken>,
    /// Name filters beyond libtest's one positional filter: a trial runs when its name
    /// contains any filter (equals one, with `--exact`).
    pub filters: Vec<String>,
    /// Write a baseline of this run's failing trials to this file.
    pub write_baseline: Option<PathBuf>,
    /// Re-run each trial that would fail the run on its grade up to this many more times,
    /// one at a time after the parallel pass, to tell a flaky trial from a failing one.
    pub retries: u32,
    /// Grade each trial's transcript again offline (`mcp-harness check`) and fail the trial
    /// when an always-on wire verdict differs (`--recheck`).
    pub recheck: bool,
    /// Multiply every duration of every case by this factor, or by one picked from the
    /// machine's load (`--time-scale F|auto`, see [`time_scale`]); `None` is `auto`.
    pub time_scale: Option<time_scale::Choice>,
    /// libtest's options (first filter, `--list`, `--exact`, `--skip`, `--test-threads`, `-q`).
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
    /// What the client's outcome lines reported.
    pub outcomes: Outcomes,
    /// The grade.
    pub grade: Grade,
}

/// Runs one case over one transport against `client_cmd` and checks it.
pub fn evaluate(
    case: &Case,
    transport: Transport,
    client_cmd: &str,
    harness: &Harness,
    strictness: Strictness,
) -> Evaluation {
    let mut run = trial::run(case, transport, client_cmd, harness);
    if run.unavailable.is_some() {
        // Never run unconfined: the trial is reported, with the reason, and not judged.
        return Evaluation {
            checks: Vec::new(),
            run,
            outcomes: Outcomes::default(),
            grade: Grade::NotRun,
        };
    }
    let started = Instant::now();
    let (checks, outcomes) = checks::evaluate(case, transport, &run);
    let grade = verdict::grade(&checks, &outcomes, &case.scenario.needs, strictness);
    run.phases.checks = started.elapsed();
    Evaluation {
        run,
        checks,
        outcomes,
        grade,
    }
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

/// Runs the suite; the exit code is 101 when a trial fails the run, 2 on bad input.
pub fn run(opts: Options) -> ExitCode {
    let entered = Instant::now();
    if let Err(e) = runner::check_args(&opts.libtest) {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    let cases = match opts.sources().load() {
        Ok(cases) => cases,
        Err(errors) => {
            for e in &errors {
                eprintln!("error: {e}");
            }
            eprintln!("{} scenario file(s) rejected", errors.len());
            return ExitCode::from(2);
        }
    };
    // Each trial is scaled as it starts (`RunContext::trial`), by the factor of that moment.
    let (scale, scale_source) = time_scale::pick(opts.time_scale);
    let trials: Vec<(Case, Transport)> = mcp_harness_scenarios::trials(&cases);
    let names: Vec<String> = trials.iter().map(|(c, t)| trial_name(c, *t)).collect();
    let selection = opts.selection();
    let trials: Vec<(Case, Transport)> = match opts.shard {
        Some((i, n)) => trials.into_iter().skip(i - 1).step_by(n).collect(),
        None => trials,
    };
    let trials: Vec<(String, (Case, Transport))> = trials
        .into_iter()
        .map(|(case, transport)| (trial_name(&case, transport), (case, transport)))
        .filter(|(name, _)| selection.keeps(name))
        .collect();
    if let Err(e) = selection.check_matches(&names) {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
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
    if let (Some(path), Some(first)) = (&opts.baseline, baseline.per_trial().next()) {
        eprintln!(
            "warning: {}: {} entr{} in the old per-trial form (first: line {}): such an entry expects every check of its trial to fail, so a new failure inside it goes unseen; write the per-check form with `--baseline {p} --write-baseline {p}`",
            path.display(),
            baseline.per_trial().count(),
            if baseline.per_trial().count() == 1 {
                "y is"
            } else {
                "ies are"
            },
            first.line,
            p = quote(&path.to_string_lossy()),
        );
    }
    if trials.is_empty() && !opts.libtest.list {
        // A green run of nothing would read as a pass.
        eprintln!(
            "error: no trial to run: {} case(s) loaded, none left after {}",
            cases.len(),
            match opts.describe_selection() {
                s if s.is_empty() => "loading".to_owned(),
                s => s,
            }
        );
        return ExitCode::from(2);
    }
    if opts.libtest.list {
        for (name, _) in &trials {
            println!("{name}: test");
        }
        return ExitCode::SUCCESS;
    }

    procs::become_subreaper();
    interrupt::stop_trials_on_signal();
    let threads = opts.libtest.test_threads.unwrap_or_else(default_threads);
    let ctx = RunContext::new(
        &opts,
        baseline,
        threads,
        time_scale::Live::start(opts.time_scale),
    );
    // A snapshot whose trial is gone would otherwise linger unreviewed.
    let stale: Vec<PathBuf> = ctx
        .snapshots_dir
        .iter()
        .cloned()
        .chain(
            opts.case_dirs
                .iter()
                .map(|d| d.join(cases::SNAPSHOTS_DIR))
                .filter(|d| ctx.compares_snapshots() && d.is_dir()),
        )
        .flat_map(|d| snapshot::stale(&d, &names))
        .collect();
    for file in &stale {
        eprintln!(
            "error: snapshot {} belongs to no trial; delete it",
            file.display()
        );
    }
    match opts.time_scale {
        Some(time_scale::Choice::Fixed(_)) if !scale.is_one() => println!(
            "time scale {scale} ({scale_source}): every timeout, deadline and delay of every case is multiplied by {scale}"
        ),
        Some(time_scale::Choice::Fixed(_)) => {}
        _ if !scale.is_one() => println!(
            "time scale {scale} at start ({scale_source}): every timeout, deadline and delay of a trial is multiplied by the machine's factor when the trial starts"
        ),
        _ => {}
    }
    let started = Instant::now();
    let mut finished = runner::run_all(
        trials,
        threads,
        runner::terse(&opts.libtest),
        |name, (case, transport)| ctx.trial(name, &case, transport),
        |name, why| panicked(name, &why),
    );
    interrupt::hold_if_interrupted();
    ctx.retry_all(&mut finished, runner::terse(&opts.libtest));
    interrupt::hold_if_interrupted();
    let trials_took = started.elapsed();
    let strays = procs::stray_children(&[]);
    procs::kill_strays(&strays);
    let mut reports: Vec<TrialResult> = finished.iter().map(|f| f.result.clone()).collect();
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
        time_scale: scale.factor(),
        seconds: started.elapsed().as_secs_f64(),
        netns: netns::ways::found().map(|found| match found {
            Ok(way) => way.as_str().to_owned(),
            Err(why) => format!("none: {why}"),
        }),
        trials: reports,
    };
    runner::print_end(&results, &finished);
    if opts.recheck {
        let (trials, verdicts, differing) = ctx.rechecked.counts();
        println!(
            "recheck: {trials} trial(s) graded again offline, {verdicts} always-on wire verdict(s) compared, {differing} trial(s) differ"
        );
    }
    // A trial not run here judged no entry: its entries are not unused.
    let ran = results.judged();
    let named: std::collections::HashSet<usize> = finished
        .iter()
        .flat_map(|f| f.named.iter().copied())
        .collect();
    let unused = ctx.baseline.unused(&names, &ran, &named);
    for e in &unused {
        eprintln!(
            "error: baseline entry {} names no check of the trials it matches; expected a requirement id or check name that one of them cites",
            e.describe()
        );
    }
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
    if let Some(path) = &opts.write_baseline {
        let kept = std::fs::read_to_string(path)
            .ok()
            .and_then(|old| baseline::header(&old));
        let selection = opts.describe_selection();
        let text = baseline::render(
            &results,
            &baseline::write::Rewrite {
                old: &ctx.baseline,
                known: &names,
                selection: &selection,
                header: kept.as_deref(),
                strictness: ctx.strictness(),
            },
        );
        if let Err(e) = std::fs::write(path, &text) {
            eprintln!("error: cannot write the baseline {}: {e}", path.display());
            return ExitCode::from(2);
        }
        let entries = text
            .lines()
            .filter(|l| !l.is_empty() && !l.starts_with('#'));
        println!("wrote {} ({} entries)", path.display(), entries.count());
    }
    if let Some(path) = timings::requested() {
        let timings = timings::RunTimings {
            threads,
            load_ms: timings::ms(started - entered),
            http_setup_ms: ctx.harness.http_setup().map_or(0.0, timings::ms),
            trials_ms: timings::ms(trials_took),
            finish_ms: timings::ms(started.elapsed().saturating_sub(trials_took)),
            trials: finished.iter().map(timings::TrialTimings::of).collect(),
        };
        if let Err(e) = timings.write(&path) {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    }
    if finished.iter().any(|f| f.message.is_some())
        || !strays.is_empty()
        || !stale.is_empty()
        || !unused.is_empty()
    {
        ExitCode::from(101)
    } else {
        ExitCode::SUCCESS
    }
}

impl Options {
    /// Where this run's cases come from.
    pub fn sources(&self) -> cases::Sources {
        cases::Sources {
            builtin: self.scenarios_dir.clone(),
            with_builtin: self.builtin_cases,
            user_dirs: self.case_dirs.clone(),
        }
    }

    /// The trial names this run keeps: every filter given (libtest's own positional one and
    /// the further ones), `--exact` and `--skip`.
    pub fn selection(&self) -> Selection {
        Selection {
            filters: self
                .libtest
                .filter
                .iter()
                .chain(&self.filters)
                .cloned()
                .collect(),
            exact: self.libtest.exact,
            skip: self.libtest.skip.clone(),
        }
    }

    /// The options that shape which trials ran and how they were graded, for a written
    /// baseline's header.
    fn describe_selection(&self) -> String {
        let mut parts = Vec::new();
        let filters = self.selection().filters;
        if !filters.is_empty() {
            parts.push(format!("filters {}", filters.join(" ")));
        }
        if let Some((i, n)) = self.shard {
            parts.push(format!("shard {i}/{n}"));
        }
        if self.spec_only {
            parts.push("--spec-only".to_owned());
        }
        if self.advisory_fails {
            parts.push("--advisory-fails".to_owned());
        }
        parts.join(", ")
    }

    /// Where a person finds a case: `mcp-harness case show <id>` for a built-in case of an
    /// installed binary, else the case file's path.
    pub fn case_place(&self, case: &Case) -> String {
        match &self.builtin_case_command {
            Some(show) if case.path.starts_with(&self.scenarios_dir) => {
                format!("{show} {}", quote(&case.id))
            }
            _ => display_path(&case.path),
        }
    }

    /// The command line that writes the snapshots of this run's cases: the case directories
    /// it ran (`--cases`/`--only-cases`, `--scenarios`), then `--bless`.
    pub fn bless_command(&self) -> String {
        let mut cmd = self.program.clone();
        cmd.push_str(&self.case_flags());
        cmd.push_str(" --bless");
        cmd
    }

    /// `--scenarios DIR`, `--cases DIR` or `--only-cases DIR` as this run was given them.
    fn case_flags(&self) -> String {
        let mut flags = String::new();
        if self.snapshots_dir.is_none() {
            flags.push_str(&format!(
                " --scenarios {}",
                quote(&self.scenarios_dir.to_string_lossy())
            ));
        }
        for dir in &self.case_dirs {
            let flag = if self.builtin_cases {
                "--cases"
            } else {
                "--only-cases"
            };
            flags.push_str(&format!(" {flag} {}", quote(&dir.to_string_lossy())));
        }
        flags
    }

    /// The command line that re-runs one trial as this run ran it (client, baseline, strictness).
    /// A bearer token is never
    /// written out: the command names the option and leaves the value to the user.
    pub fn rerun_command(&self, trial: &str) -> String {
        let mut cmd = format!("{} --exact {}", self.program, quote(trial));
        if let Some(client) = &self.client {
            cmd.push_str(&format!(" --client {}", quote(client)));
        }
        if let Some(baseline) = &self.baseline {
            cmd.push_str(&format!(
                " --baseline {}",
                quote(&baseline.to_string_lossy())
            ));
        }
        cmd.push_str(&self.case_flags());
        if self.spec_only {
            cmd.push_str(" --spec-only");
        }
        if self.advisory_fails {
            cmd.push_str(" --advisory-fails");
        }
        if self.bearer_token.is_some() {
            cmd.push_str(" --bearer-token <TOKEN>");
        }
        cmd
    }
}

/// Quotes a word for a shell when it needs it.
fn quote(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "@%+=:,./-_".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// What every trial of a run shares.
struct RunContext {
    harness: Harness,
    client_cmd: String,
    baseline: Baseline,
    snapshots_dir: Option<PathBuf>,
    bless: bool,
    profile_on: bool,
    opts: Options,
    /// The factor each trial is scaled by as it starts.
    scale: time_scale::Live,
    /// What `--recheck` compared.
    rechecked: crate::offline::recheck::Tally,
}

impl RunContext {
    fn strictness(&self) -> Strictness {
        Strictness {
            profile: self.profile_on,
            advisory: self.opts.advisory_fails,
        }
    }

    fn new(
        opts: &Options,
        baseline: Baseline,
        threads: usize,
        scale: time_scale::Live,
    ) -> RunContext {
        // Snapshots pin the reference client's plain run; a run token changes every HTTPS
        // transcript.
        let snapshots_dir = opts
            .snapshots_dir
            .clone()
            .filter(|_| opts.builtin_cases)
            .filter(|_| opts.client.is_none() && opts.bearer_token.is_none());
        RunContext {
            harness: Harness::new(opts.bins.clone())
                .with_http_workers(threads.clamp(2, 16))
                .with_bearer_token(opts.bearer_token.as_ref().map(|t| t.0.clone())),
            client_cmd: opts
                .client
                .clone()
                .unwrap_or_else(|| opts.bins.driver_command()),
            baseline,
            snapshots_dir,
            bless: opts.bless,
            profile_on: !opts.spec_only,
            opts: opts.clone(),
            scale,
            rechecked: Default::default(),
        }
    }

    /// Whether this run compares snapshots at all: the reference client's plain run.
    fn compares_snapshots(&self) -> bool {
        self.opts.client.is_none() && self.opts.bearer_token.is_none()
    }

    /// Where the snapshot of `case` lives, if this run compares it: `snapshots/` beside a
    /// user's case, the built-in snapshots directory for a built-in one.
    fn snapshots_of(&self, case: &Case) -> Option<PathBuf> {
        match cases::user_snapshots(&self.opts.sources(), &case.path) {
            Some(dir) => Some(dir).filter(|_| self.compares_snapshots()),
            None => self.snapshots_dir.clone(),
        }
    }

    /// Prepares a trial once: the loaded case (its script resolved, its fixtures, variant
    /// and revision applied) with every duration scaled by the machine's factor now, or by
    /// the one `--time-scale` fixed. The first attempt and every retry run this value, so a
    /// retry runs at its first attempt's scale (`trial::run` then hands the HTTPS fake its
    /// scenario and the stdio fake its play file).
    fn prepare(&self, case: &Case, transport: Transport) -> Prepared {
        let mut case = case.clone();
        case.scenario = case.scenario.scaled(self.scale.now());
        Prepared { case, transport }
    }

    /// Prepares, runs, grades and judges one trial.
    fn trial(&self, name: &str, case: &Case, transport: Transport) -> Finished {
        let prepared = self.prepare(case, transport);
        let case = &prepared.case;
        let mut eval = evaluate(
            case,
            transport,
            &self.client_cmd,
            &self.harness,
            self.strictness(),
        );
        let started = Instant::now();
        let transcript = snapshot::unscale(snapshot::render(&eval.run), &case.scenario);
        let transcript = concurrent::settle(transcript, &case.scenario.plan);
        let mut snapshot_took = started.elapsed();
        let mut checks: Vec<CheckRecord> = eval.checks.iter().map(check_record).collect();
        // A trial not run here is not judged: its baseline entries wait for a machine
        // where it runs.
        let judgement = match eval.grade {
            Grade::NotRun => Default::default(),
            grade => baseline::judge(&self.baseline, name, grade, &checks, self.strictness()),
        };
        for (check, entry) in checks.iter_mut().zip(&judgement.excused) {
            check.baseline = entry.map(|e| e.reason.clone());
        }
        let place = Place {
            case_path: self.opts.case_place(case),
            rerun: self.opts.rerun_command(name),
        };
        let not_run = eval.run.unavailable.clone();
        let details = match (eval.grade, &not_run) {
            (Grade::NotRun, Some(why)) => format!("not run here: {why}"),
            (Grade::Pass, _) => String::new(),
            (grade, _) => verdict::render_report(
                grade,
                &eval.checks,
                &eval.run,
                self.profile_on,
                Some(&place),
            ),
        };
        let (verdict, message) = match (eval.grade, self.opts.require_ssrf) {
            (Grade::NotRun, true) => (
                Verdict::Failed,
                Some(format!(
                    "{details}\n--require-ssrf: an isolated trial that cannot run here fails the run"
                )),
            ),
            (Grade::NotRun, false) => (Verdict::Passed, None),
            _ => judgement.verdict(eval.grade, &eval.checks, &details, || {
                let started = Instant::now();
                let compared = match self.snapshots_of(case) {
                    Some(dir) if eval.grade == Grade::Pass || self.bless => snapshot::compare(
                        &dir,
                        &case.path,
                        name,
                        &transcript,
                        &self.opts.bless_command(),
                    ),
                    _ => Ok(()),
                };
                snapshot_took += started.elapsed();
                compared
            }),
        };
        let rechecked = match eval.grade {
            Grade::NotRun => None,
            _ if self.opts.recheck => self.rechecked.recheck(name, &eval.run, &eval.checks),
            _ => None,
        };
        let (verdict, message) = match rechecked {
            Some(differs) => (
                Verdict::Failed,
                Some(match message {
                    Some(m) => format!("{differs}\n\n{m}"),
                    None => differs,
                }),
            ),
            None => (verdict, message),
        };
        let flaky_marks = self.baseline.flaky(name);
        let message = match (message, flaky_marks.first()) {
            (Some(m), Some(mark)) if self.opts.retries == 0 => Some(format!(
                "the baseline marks this trial known-flaky ({}); run with --retries N to tell a flake from a failure\n\n{m}",
                mark.describe()
            )),
            (message, _) => message,
        };
        let details = match &message {
            Some(m) if !details.contains(m.as_str()) => format!("{m}\n\n{details}"),
            _ => details,
        };
        let reasons = judgement.reasons();
        let flaky_reasons: Vec<&str> = flaky_marks.iter().map(|e| e.reason.as_str()).collect();
        let result = TrialResult {
            name: name.to_owned(),
            description: case.scenario.description.clone(),
            level: case.scenario.requirement.level,
            era: case.scenario.client_era.map(|e| e.as_str().to_owned()),
            limited: case
                .scenario
                .needs
                .iter()
                .map(|n| n.as_str().to_owned())
                .filter(|n| eval.outcomes.limits.contains(n))
                .collect(),
            grade: eval.grade,
            verdict,
            case_path: place.case_path,
            rerun: place.rerun,
            baseline_reason: (!reasons.is_empty()).then(|| reasons.join("; ")),
            known_flaky: (!flaky_reasons.is_empty()).then(|| flaky_reasons.join("; ")),
            flaky: false,
            attempts: Vec::new(),
            elapsed_ms: eval.run.elapsed.as_millis().try_into().unwrap_or(u64::MAX),
            time_scale: case.scenario.time_scale.factor(),
            checks,
            outcomes: outcome_records(case, &eval.outcomes),
            details: details.trim_end().to_owned(),
            not_run,
            transcript,
            not_judged: Vec::new(),
            spans: eval.run.spans().into_iter().cloned().collect(),
        };
        eval.run.phases.snapshot = snapshot_took;
        eval.run.phases.record = started.elapsed().saturating_sub(snapshot_took);
        Finished {
            result,
            message,
            phases: eval.run.phases,
            named: judgement.named,
            prepared: Some(prepared),
        }
    }
}

/// One trial as it runs, built once by [`RunContext::prepare`].
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The case, scaled for this trial.
    pub case: Case,
    /// The transport the trial runs over.
    pub transport: Transport,
}

/// A trial whose evaluation panicked: a harness bug, reported as a failure of the trial.
fn panicked(name: &str, why: &str) -> Finished {
    let message = format!("the harness panicked while running this trial (a harness bug): {why}");
    Finished {
        result: TrialResult {
            details: message.clone(),
            ..TrialResult::bare(name, Grade::Fail, Verdict::Failed)
        },
        message: Some(message),
        phases: Default::default(),
        named: Vec::new(),
        prepared: None,
    }
}

/// A path as a person would type it: relative to the current directory when under it.
fn display_path(path: &std::path::Path) -> String {
    let relative = std::env::current_dir().ok().and_then(|cwd| {
        path.strip_prefix(cwd)
            .ok()
            .map(std::path::Path::to_path_buf)
    });
    relative.as_deref().unwrap_or(path).display().to_string()
}

/// The cores this process may use (one when the system cannot tell): what the default jobs,
/// `--time-scale auto`, the SDK runs and the soak's hog are sized by.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The trials a run takes at once when `--jobs` is not given: four per core, 4 to 64.
pub fn default_threads() -> usize {
    // A trial mostly waits: on its client's start, on the fake's scripted delays, on timeouts
    // the case hands the client (up to a second or so), while its own work is a few tens of
    // ms of CPU. Four trials per core overlap the waits; more gain little on a busy machine
    // and take CPU from the trials whose cases give the client a tight time budget (a
    // cancellation after 150 ms, ten thousand notifications within a 5 s timeout), which
    // then fail for the load, not for the client.
    (cores() * 4).clamp(4, 64)
}

/// A check as the reports keep it (no baseline reason yet: the judge adds it).
pub(crate) fn check_record(c: &CheckResult) -> CheckRecord {
    CheckRecord {
        name: c.name.clone(),
        level: c.level,
        passed: c.passed,
        requirement_id: c.requirement_id.clone(),
        requirement: c.requirement.clone(),
        source: c.source.clone(),
        expected: c.expected.clone(),
        actual: c.actual.clone(),
        baseline: None,
    }
}

/// What the client reported for each step, with its error messages.
fn outcome_records(case: &Case, outcomes: &Outcomes) -> Vec<OutcomeRecord> {
    case.scenario
        .plan
        .iter()
        .enumerate()
        .map(|(step, s)| {
            let reported = outcomes.by_step.get(step).and_then(Option::as_ref);
            let message = outcomes.messages.get(step).cloned().flatten();
            OutcomeRecord {
                step,
                op: s.op().to_owned(),
                ok: match reported {
                    Some(Reported::Ok(v)) => Some(v.clone()),
                    _ => None,
                },
                error: match reported {
                    Some(Reported::Error { kind, code, status }) => Some(ErrorRecord {
                        kind: *kind,
                        code: *code,
                        status: *status,
                        message,
                    }),
                    _ => None,
                },
                missing: reported.is_none(),
            }
        })
        .collect()
}

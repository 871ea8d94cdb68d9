//! The `conformance` command line, shared by `cargo xtask conformance` and `mcp-harness run`
//! so that both take the same flags, and its translation into [`Options`].

use std::path::PathBuf;

use crate::conformance::trial::Bins;
use crate::conformance::{Options, RunToken};

#[derive(clap::Args)]
pub struct ConformanceArgs {
    /// The client under test, as a shell command line run once per trial through the
    /// driver contract (see CLIENTS.md). Default: the reference client's driver.
    #[arg(long, value_name = "COMMAND")]
    pub client: Option<String>,
    /// The client's expected failures: `<trials> [<checks>]: <reason>` per line, e.g.
    /// `auth/pkce-s256@* [AUTH-20]: no code_challenge_method` (CLIENTS.md § Grades and
    /// baselines; `<trials>: flaky: <reason>` marks a trial known-flaky, see --retries).
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// Check the specification alone: the boundary profile's checks (what this harness asks
    /// of a client beyond the specification) grade non-strict instead of failing.
    #[arg(long)]
    pub spec_only: bool,
    /// Let advisory checks (robustness no text requires) fail a trial; by default they only
    /// grade it non-strict.
    #[arg(long)]
    pub advisory_fails: bool,
    /// Fail the run when the isolated (`ssrf/`) trials cannot run here because no network
    /// namespace can be made (not root, no passwordless `sudo -n`, no unprivileged user
    /// namespace); by default they are reported "not run here" and do not fail it.
    #[arg(long)]
    pub require_ssrf: bool,
    /// Write the reference client's snapshots instead of comparing them.
    #[arg(long)]
    pub bless: bool,
    /// Run the cases of this directory instead of the project's (no snapshots are compared).
    #[arg(long, value_name = "DIR")]
    pub scenarios: Option<PathBuf>,
    /// Add the case files of this directory (repeatable) to the built-in cases: same schema,
    /// same checks, same reports. Their snapshots live in DIR/snapshots/ (written by --bless);
    /// DIR/requirements.json adds requirement ids of their own, DIR/fixtures/ fixtures.
    #[arg(long = "cases", value_name = "DIR")]
    pub cases: Vec<PathBuf>,
    /// Like --cases, but the built-in cases do not run (repeatable; with --cases, those
    /// directories run too).
    #[arg(long = "only-cases", value_name = "DIR")]
    pub only_cases: Vec<PathBuf>,
    /// The client's name in reports (default: `reference`, or the command line).
    #[arg(long, value_name = "NAME")]
    pub client_name: Option<String>,
    /// Trials run at once (default: four per core, 4 to 64).
    #[arg(long, value_name = "N", alias = "test-threads")]
    pub jobs: Option<usize>,
    /// Run one shard of the trials, `I/N` (1-based): every N-th trial from the I-th, so N CI
    /// machines together run the whole suite.
    #[arg(long, value_name = "I/N", value_parser = parse_shard)]
    pub shard: Option<(usize, usize)>,
    /// Write results.json, junit.xml and report.html into this directory.
    #[arg(long, value_name = "DIR")]
    pub report_dir: Option<PathBuf>,
    /// Give every HTTPS trial this bearer token (not only the cases that ask for a fresh one):
    /// the fake then requires it on every request, and the client is failed wherever it prints
    /// it. A made-up value for testing, never a real credential. Snapshots are not compared.
    #[arg(long, value_name = "TOKEN")]
    pub bearer_token: Option<String>,
    /// Write a baseline of this run to FILE: one entry per trial that fails or is
    /// unimplemented, each under a comment naming its failed checks and their levels.
    #[arg(long, value_name = "FILE")]
    pub write_baseline: Option<PathBuf>,
    /// Re-run each trial whose grade is not what its baseline expects (a failure or
    /// unimplemented not baselined, or a baselined trial that now passes) up to N more times,
    /// one at a time after the parallel pass. A trial whose grade changes between attempts is
    /// reported flaky, with every attempt's grade, and fails the run unless the baseline marks
    /// it known-flaky (`<trial>: flaky: <reason>`); one that grades the same on every attempt
    /// is just failing. 0 (the default) re-runs nothing.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub retries: u32,
    /// Multiply every duration of every case (the timeouts handed to the client, the trial
    /// deadlines, the fake's delays and drips, the plan's sleeps and cancels) by F, from 0.5
    /// to 20, or by `auto` (the default): the 1-minute load average per core clamped to 1..4,
    /// so a loaded runner's slow client starts do not become verdicts. `1` for an unscaled
    /// run; the run header shows the factor when it is not 1.
    #[arg(long, value_name = "F|auto", value_parser = crate::conformance::time_scale::Choice::parse)]
    pub time_scale: Option<crate::conformance::time_scale::Choice>,
    /// After each trial, grade its own transcript again offline, as `mcp-harness check`
    /// does, and fail the trial when an always-on wire verdict differs from the live one
    /// (the proof that `check` grades a recording as a live run grades the trial).
    #[arg(long)]
    pub recheck: bool,
    /// Use the already built fake and driver beside this executable (for tests).
    #[arg(long, hide = true)]
    pub no_build: bool,
    /// Print the names of the trials this run would run, and run none.
    #[arg(long)]
    pub list: bool,
    /// Match each FILTER (and --skip) against whole trial names.
    #[arg(long)]
    pub exact: bool,
    /// Leave out the trials whose name contains TEXT (repeatable).
    #[arg(long, value_name = "TEXT")]
    pub skip: Vec<String>,
    /// One character per trial instead of one line (`.` pass, `n` non-strict, `x` baselined,
    /// `F` fails the run).
    #[arg(short, long)]
    pub quiet: bool,
    /// Refused, with what to use instead (kept from the test-runner flags this command once
    /// took: `--logfile`, `--format json`).
    #[arg(long, hide = true, value_name = "FILE")]
    pub logfile: Option<String>,
    #[arg(long, hide = true, value_name = "FORMAT")]
    pub format: Option<String>,
    /// Run only the trials whose name contains a FILTER (equals one, with --exact), e.g.
    /// `tools/`, `@stdio`, `era/modern/discover-first@https`.
    #[arg(value_name = "FILTER")]
    pub filters: Vec<String>,
}

/// What `run --help` and `cargo xtask conformance --help` say of the exit status.
pub const EXIT_CODES: &str = "\
Exit status:
  0    every trial meets its expectation (passes, or fails exactly as the baseline says)
  101  the run fails: a trial fails it (a failure or unimplemented trial the baseline does not
       name, a stale baseline entry, a snapshot that differs, a flaky trial), or a baseline
       entry names no check, or a process outlived its trial
  2    nothing was judged: bad flags or input (a case file, the baseline, a filter that
       matches no trial, no trial to run), with an error naming it
  128+N  interrupted by signal N (130 for Ctrl-C); every process the run started is killed";

impl ConformanceArgs {
    /// The run these flags ask for. `scenarios_dir` and `snapshots_dir` are the built-in
    /// cases and their snapshots; `program` starts a run (for re-run commands). The error
    /// names the flag at fault.
    pub fn into_options(
        self,
        scenarios_dir: PathBuf,
        snapshots_dir: PathBuf,
        bins: Bins,
        program: &str,
    ) -> Result<Options, String> {
        if let Some(what) = self
            .logfile
            .as_ref()
            .map(|_| "--logfile (use --report-dir DIR)")
            .or(match self.format.as_deref() {
                None | Some("pretty" | "terse") => None,
                Some(_) => Some("--format (use -q for one character per trial, --report-dir DIR for results.json)"),
            })
        {
            return Err(format!("unsupported option {what}"));
        }
        let libtest = libtest_mimic::Arguments {
            list: self.list,
            exact: self.exact,
            skip: self.skip,
            quiet: self.quiet || self.format.as_deref() == Some("terse"),
            test_threads: self.jobs.map(|jobs| jobs.max(1)),
            ..libtest_mimic::Arguments::default()
        };
        let builtin_cases = self.only_cases.is_empty();
        let given: Vec<PathBuf> = self.cases.into_iter().chain(self.only_cases).collect();
        let case_dirs = crate::conformance::cases::resolve_dirs(&given)?;
        Ok(Options {
            client: self.client,
            baseline: self.baseline,
            spec_only: self.spec_only,
            advisory_fails: self.advisory_fails,
            require_ssrf: self.require_ssrf,
            bless: self.bless,
            report_dir: self.report_dir,
            client_name: self.client_name,
            shard: self.shard,
            snapshots_dir: self.scenarios.is_none().then_some(snapshots_dir),
            scenarios_dir: self.scenarios.unwrap_or(scenarios_dir),
            case_dirs,
            builtin_cases,
            program: program.to_owned(),
            builtin_case_command: None,
            bins,
            bearer_token: self.bearer_token.map(RunToken),
            filters: self.filters,
            write_baseline: self.write_baseline,
            retries: self.retries,
            recheck: self.recheck,
            time_scale: self.time_scale,
            libtest,
        })
    }
}

/// Parses `I/N` with 1 <= I <= N.
pub fn parse_shard(text: &str) -> Result<(usize, usize), String> {
    let parsed = text
        .split_once('/')
        .and_then(|(i, n)| Some((i.trim().parse().ok()?, n.trim().parse().ok()?)));
    match parsed {
        Some((i, n)) if (1..=n).contains(&i) => Ok((i, n)),
        _ => Err(format!(
            "expected I/N with 1 <= I <= N (for example 2/4), found {text:?}"
        )),
    }
}

//! `cargo xtask`: the command line. Each subcommand hands off to the library.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use xtask::conformance::{self, Options};
use xtask::{paths, schema, sdk};

mod fuzz;

#[derive(Parser)]
#[command(
    name = "cargo xtask",
    about = "mcp-harness: a conformance harness for MCP clients"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run every scenario against a client (the reference client by default).
    Conformance(Box<ConformanceArgs>),
    /// Install an official SDK (pinned, cached under target/sdk) and run the suite against its
    /// adapter with its baseline; `all` adds the reference client and writes matrix.html.
    Sdk {
        /// Which SDK.
        #[arg(value_enum)]
        sdk: sdk::Sdk,
        /// Where the reports go (default: target/sdk/reports).
        #[arg(long, value_name = "DIR")]
        report_dir: Option<PathBuf>,
        /// Rewrite each SDK's baseline from this run (`--write-baseline`, keeping the reasons
        /// of entries that stay); review the diff line by line before committing it.
        #[arg(long)]
        write_baselines: bool,
    },
    /// Benchmark the reference client (against rmcp), the suite and the fakes; writes
    /// bench/bench.json in the target directory.
    Bench(xtask::bench::Args),
    /// Repeat the suite K times at the default jobs, then oversubscribed (with --hog, beside a
    /// CPU hog), and report every trial whose verdict changed between runs (not run in CI).
    Soak(xtask::soak::Args),
    /// Run the cargo-fuzz targets of fuzz/ for a bounded time each (installs cargo-fuzz).
    Fuzz(fuzz::Args),
    /// Rewrite the case files, fixtures and requirements catalogue in their canonical shape.
    FmtCases {
        /// List the files that differ from the canonical shape and fail, instead of writing.
        #[arg(long)]
        check: bool,
        /// Only these files (default: everything under scenarios/).
        files: Vec<PathBuf>,
    },
    /// The requirements catalogue: for each requirement, the checks and trials that cite it,
    /// its coverage (covered, partly, not), and the counts by level.
    Requirements {
        /// Only requirements with this coverage (`covered`, `partly`, `not`; repeatable).
        #[arg(long, value_parser = xtask::requirements::parse_coverage)]
        coverage: Vec<xtask::requirements::Coverage>,
    },
    /// Regenerate scenarios/scenario.schema.json, or check that it is fresh.
    Schema {
        /// Fail if the committed schema is stale instead of writing it.
        #[arg(long)]
        check: bool,
    },
}

#[derive(clap::Args)]
struct ConformanceArgs {
    /// The client under test, as a shell command line run once per trial through the
    /// driver contract (see CLIENTS.md). Default: the reference client's driver.
    #[arg(long, value_name = "COMMAND")]
    client: Option<String>,
    /// The client's expected-failures file (`<case-id>@<transport>: <reason>` per line;
    /// `<case-id>@<transport>: flaky: <reason>` marks a trial known-flaky, see --retries).
    #[arg(long, value_name = "FILE")]
    baseline: Option<PathBuf>,
    /// Check the specification alone: seed 000 profile checks grade non-strict, not fail.
    #[arg(long)]
    spec_only: bool,
    /// Let advisory checks (robustness no text requires) fail a trial; by default they only
    /// grade it non-strict.
    #[arg(long)]
    advisory_fails: bool,
    /// Write the reference client's snapshots instead of comparing them.
    #[arg(long)]
    bless: bool,
    /// Run the cases of this directory instead of the project's (no snapshots are compared).
    #[arg(long, value_name = "DIR")]
    scenarios: Option<PathBuf>,
    /// The client's name in reports (default: `reference`, or the command line).
    #[arg(long, value_name = "NAME")]
    client_name: Option<String>,
    /// Trials run at once (the same as `--test-threads`).
    #[arg(long, value_name = "N")]
    jobs: Option<usize>,
    /// Run one shard of the trials, `I/N` (1-based): every N-th trial from the I-th, so N CI
    /// machines together run the whole suite.
    #[arg(long, value_name = "I/N", value_parser = parse_shard)]
    shard: Option<(usize, usize)>,
    /// Write results.json, junit.xml and report.html into this directory.
    #[arg(long, value_name = "DIR")]
    report_dir: Option<PathBuf>,
    /// Give every HTTPS trial this bearer token (not only the cases that ask for a fresh one):
    /// the fake then requires it on every request, and the client is failed wherever it prints
    /// it. A made-up value for testing, never a real credential. Snapshots are not compared.
    #[arg(long, value_name = "TOKEN")]
    bearer_token: Option<String>,
    /// Write a baseline of this run to FILE: one entry per trial that fails or is
    /// unimplemented, each under a comment naming its failed checks and their levels.
    #[arg(long, value_name = "FILE")]
    write_baseline: Option<PathBuf>,
    /// Re-run each trial whose grade is not what its baseline expects (a failure or
    /// unimplemented not baselined, or a baselined trial that now passes) up to N more times,
    /// one at a time after the parallel pass. A trial whose grade changes between attempts is
    /// reported flaky, with every attempt's grade, and fails the run unless the baseline marks
    /// it known-flaky (`<trial>: flaky: <reason>`); one that grades the same on every attempt
    /// is just failing. 0 (the default) re-runs nothing.
    #[arg(long, value_name = "N", default_value_t = 0)]
    retries: u32,
    /// Multiply every duration of every case (the timeouts handed to the client, the trial
    /// deadlines, the fake's delays and drips, the plan's sleeps and cancels) by F, from 0.5
    /// to 20, or by `auto` (the default): the 1-minute load average per core clamped to 1..4,
    /// so a loaded runner's slow client starts do not become verdicts. `1` for an unscaled
    /// run; the run header shows the factor when it is not 1.
    #[arg(long, value_name = "F|auto", value_parser = xtask::conformance::time_scale::Choice::parse)]
    time_scale: Option<xtask::conformance::time_scale::Choice>,
    /// Use the already built fake and driver beside this executable (for tests).
    #[arg(long, hide = true)]
    no_build: bool,
    #[command(flatten)]
    libtest: libtest_mimic::Arguments,
    /// Further name filters: a trial runs when its name contains any FILTER (equals one, with
    /// --exact).
    #[arg(value_name = "MORE_FILTERS")]
    filters: Vec<String>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Schema { check } => match schema::run(&paths::schema_file(), check) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        },
        Command::FmtCases { check, files } => {
            match xtask::fmt_cases::run(&paths::scenarios_dir(), &files, check) {
                Ok(changed) if check && !changed.is_empty() => {
                    for f in &changed {
                        eprintln!("not in canonical shape: {}", f.display());
                    }
                    eprintln!("run `cargo xtask fmt-cases`");
                    ExitCode::FAILURE
                }
                Ok(changed) => {
                    for f in &changed {
                        println!("formatted {}", f.display());
                    }
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::from(2)
                }
            }
        }
        Command::Requirements { coverage } => {
            match xtask::requirements::report(&paths::scenarios_dir(), &coverage) {
                Ok(text) => {
                    print!("{text}");
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::from(2)
                }
            }
        }
        Command::Bench(args) => xtask::bench::main(args),
        Command::Fuzz(args) => fuzz::main(args),
        Command::Soak(args) => xtask::soak::main(args),
        Command::Sdk {
            sdk,
            report_dir,
            write_baselines,
        } => match sdk::run(sdk, report_dir, write_baselines) {
            Ok(true) => ExitCode::SUCCESS,
            Ok(false) => ExitCode::from(101),
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::from(2)
            }
        },
        Command::Conformance(args) => {
            let args = *args;
            let bins = if args.no_build {
                let exe = std::env::current_exe().unwrap_or_default();
                paths::bins_beside(exe.parent().unwrap_or(std::path::Path::new(".")))
            } else {
                match paths::build_bins() {
                    Ok(bins) => bins,
                    Err(e) => {
                        eprintln!("error: {e}");
                        return ExitCode::from(2);
                    }
                }
            };
            conformance::snapshot::configure(&paths::workspace_root(), args.bless);
            let mut libtest = args.libtest;
            if let Some(jobs) = args.jobs {
                libtest.test_threads = Some(jobs.max(1));
            }
            conformance::run(Options {
                client: args.client,
                baseline: args.baseline,
                spec_only: args.spec_only,
                advisory_fails: args.advisory_fails,
                bless: args.bless,
                report_dir: args.report_dir,
                client_name: args.client_name,
                shard: args.shard,
                snapshots_dir: args.scenarios.is_none().then(paths::snapshots_dir),
                scenarios_dir: args.scenarios.unwrap_or_else(paths::scenarios_dir),
                bins,
                bearer_token: args.bearer_token.map(conformance::RunToken),
                filters: args.filters,
                write_baseline: args.write_baseline,
                retries: args.retries,
                time_scale: args.time_scale,
                libtest,
            })
        }
    }
}

/// Parses `I/N` with 1 <= I <= N.
fn parse_shard(text: &str) -> Result<(usize, usize), String> {
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

//! `cargo xtask`: the command line. Each subcommand hands off to the library.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use mcp_harness::cli::ConformanceArgs;
use mcp_harness::{conformance, requirements};
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
    /// Run every case against a client (the reference client by default) and grade it.
    #[command(after_help = mcp_harness::cli::EXIT_CODES)]
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
    /// Run the official conformance suite's example clients (TypeScript, from a checkout of
    /// modelcontextprotocol/conformance) unmodified on the cases that share its scenarios:
    /// the correct ones must pass, `test-broken` must fail. Installs their npm dependencies
    /// under target/official-clients; skips, saying why, without a checkout; with one, missing node or npm is an error (exit 2).
    OfficialClients {
        /// The checkout (default: $MCP_CONFORMANCE_CHECKOUT).
        #[arg(long, value_name = "DIR")]
        checkout: Option<PathBuf>,
        /// Where the reports go (default: target/official-clients/reports).
        #[arg(long, value_name = "DIR")]
        report_dir: Option<PathBuf>,
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
    /// its coverage (covered, partly, not, not observable), and the counts by level.
    Requirements {
        /// Only requirements with this coverage (`covered`, `partly`, `not`,
        /// `not-observable`; repeatable).
        #[arg(long, value_parser = requirements::parse_coverage)]
        coverage: Vec<requirements::Coverage>,
        /// Show the coverage of your own case directory instead: its cases' checks against
        /// DIR/requirements.json (or the built-in catalogue when DIR has none).
        #[arg(long = "cases", value_name = "DIR")]
        cases: Option<std::path::PathBuf>,
    },
    /// Grade recorded sessions offline: `mcp-harness check` (its flags; `--help` for them).
    #[command(disable_help_flag = true)]
    Check(Forwarded),
    /// Record a real session through a proxy: `mcp-harness record` (its flags).
    #[command(disable_help_flag = true)]
    Record(Forwarded),
    /// Serve cases to a host that connects on its own: `mcp-harness serve` (its flags).
    #[command(disable_help_flag = true)]
    Serve(Forwarded),
    /// Turn a recording into a case file: `mcp-harness case-from` (its flags).
    #[command(disable_help_flag = true)]
    CaseFrom(Forwarded),
    /// Regenerate the schemas in scenarios/ (cases, fixtures, requirements catalogue), or
    /// check that they are fresh.
    Schema {
        /// Fail if the committed schema is stale instead of writing it.
        #[arg(long)]
        check: bool,
    },
}

/// The arguments of a command of the `mcp-harness` binary, handed to it unchanged.
#[derive(clap::Args)]
struct Forwarded {
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "ARGS"
    )]
    args: Vec<std::ffi::OsString>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Check(f) => xtask::forward::run("check", &f.args),
        Command::Record(f) => xtask::forward::run("record", &f.args),
        Command::Serve(f) => xtask::forward::run("serve", &f.args),
        Command::CaseFrom(f) => xtask::forward::run("case-from", &f.args),
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
        Command::Requirements { coverage, cases } => {
            match requirements::report(&paths::scenarios_dir(), cases.as_deref(), &coverage) {
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
        Command::OfficialClients {
            checkout,
            report_dir,
        } => match xtask::official_clients::run(checkout, report_dir) {
            Ok(Some(true) | None) => ExitCode::SUCCESS,
            Ok(Some(false)) => ExitCode::from(101),
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::from(2)
            }
        },
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
            let options = args.into_options(
                paths::scenarios_dir(),
                paths::snapshots_dir(),
                bins,
                "cargo xtask conformance",
            );
            match options {
                Ok(options) => conformance::run(options),
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::from(2)
                }
            }
        }
    }
}

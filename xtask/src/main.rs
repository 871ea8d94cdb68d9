//! `cargo xtask`: the command line. Each subcommand hands off to the library.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use xtask::conformance::{self, Options};
use xtask::{paths, schema};

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
    /// The client's expected-failures file (`<case-id>@<transport>: <reason>` per line).
    #[arg(long, value_name = "FILE")]
    baseline: Option<PathBuf>,
    /// Check the specification alone: seed 000 profile checks grade non-strict, not fail.
    #[arg(long)]
    spec_only: bool,
    /// Write the reference client's snapshots instead of comparing them.
    #[arg(long)]
    bless: bool,
    /// Run the cases of this directory instead of the project's (no snapshots are compared).
    #[arg(long, value_name = "DIR")]
    scenarios: Option<PathBuf>,
    /// Write results.json into this directory.
    #[arg(long, value_name = "DIR")]
    report_dir: Option<PathBuf>,
    /// Use the already built fake and driver beside this executable (for tests).
    #[arg(long, hide = true)]
    no_build: bool,
    #[command(flatten)]
    libtest: libtest_mimic::Arguments,
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
            conformance::run(Options {
                client: args.client,
                baseline: args.baseline,
                spec_only: args.spec_only,
                bless: args.bless,
                report_dir: args.report_dir,
                snapshots_dir: args.scenarios.is_none().then(paths::snapshots_dir),
                scenarios_dir: args.scenarios.unwrap_or_else(paths::scenarios_dir),
                bins,
                libtest: args.libtest,
            })
        }
    }
}

//! `mcp-harness`: the conformance harness as one installable binary. It carries the built-in
//! cases, their snapshots and the schemas ([`embedded`]), plays the stdio fake and the
//! reference client's driver itself (hidden subcommands), and needs neither cargo nor the
//! source tree to run a client. What needs a checkout (`sdk`, `bench`, `soak`) is
//! `cargo xtask` there, not a subcommand of this binary.

mod case_from;
mod check;
mod embedded;
mod kits;
mod record;
mod serve;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use mcp_harness::cli::ConformanceArgs;
use mcp_harness::conformance::{self, trial::Bins};
use mcp_harness::requirements;

#[derive(Parser)]
#[command(
    name = "mcp-harness",
    version,
    about = "A conformance harness for MCP clients: scripted fake servers, a client run through the driver contract, graded checks",
    after_help = "sdk, bench and soak need a checkout of the repository: run `cargo xtask sdk|bench|soak` there."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run every case against a client (the reference client by default) and grade it.
    #[command(visible_alias = "conformance", after_help = mcp_harness::cli::EXIT_CODES)]
    Run(Box<ConformanceArgs>),
    /// List the trials a run would run (the same as `run --list`; takes the same flags).
    List(Box<ConformanceArgs>),
    /// Print the JSON Schema of case files (for editors of your own cases), or with
    /// --fixture the schema of fixture files, or with --requirements that of requirements.json.
    Schema {
        /// The fixture schema instead of the case schema.
        #[arg(long, conflicts_with = "requirements")]
        fixture: bool,
        /// The schema of a requirements catalogue (`requirements.json`).
        #[arg(long)]
        requirements: bool,
    },
    /// The requirements catalogue: for each requirement, the checks and trials that cite it.
    Requirements {
        /// Only requirements with this coverage (`covered`, `partly`, `not`; repeatable).
        #[arg(long, value_parser = requirements::parse_coverage)]
        coverage: Vec<requirements::Coverage>,
        /// Show the coverage of your own case directory instead: its cases' checks against
        /// DIR/requirements.json (or the built-in catalogue when DIR has none).
        #[arg(long = "cases", value_name = "DIR")]
        cases: Option<std::path::PathBuf>,
    },
    /// A built-in case: `case show ID` prints its file as shipped in this binary (the id as
    /// `list` and failure reports print it; `@<transport>` is ignored).
    Case {
        #[command(subcommand)]
        command: CaseCommand,
    },
    /// Build matrix.html from the results.json of runs: files of the same client (the
    /// `client` name a run records, set by --client-name) are shards merged into one column,
    /// other clients go side by side; a trial in two shards of one client is an error.
    Matrix {
        /// The results.json files, or the report directories holding them.
        #[arg(required = true, value_name = "RESULTS")]
        results: Vec<PathBuf>,
        /// Where to write the page.
        #[arg(long, value_name = "FILE", default_value = "matrix.html")]
        out: PathBuf,
    },
    /// Turn a recorded session into a case file: the fake's script from the server's
    /// answers, the plan from the client's requests, checks for what the client did.
    CaseFrom(case_from::CaseFromArgs),
    /// Grade recorded sessions offline (`record` transcripts or import files) by every
    /// always-on rule that judges the client side of the wire; what nothing exercised is
    /// "not observed", never a pass.
    #[command(after_help = check::EXIT_CODES)]
    Check(check::CheckArgs),
    /// Record a real session: a proxy between a host and its server (stdio `-- CMD ARGS…`,
    /// or Streamable HTTP `--upstream URL`), secrets redacted, faults optional.
    Record(Box<record::RecordArgs>),
    /// Host mode: serve cases' fake servers to a client that connects on its own (an IDE, a
    /// desktop assistant, an agent runtime), print how to reach them, grade it live.
    Serve(Box<serve::ServeArgs>),
    /// Write an adapter kit into a directory: the contract's plumbing (environment, plan
    /// loop, outcome lines, stdout guard, token redaction, error kinds, listings, content),
    /// so that an adapter is mostly calls into its SDK (see CLIENTS.md § Adapter kits).
    Kit {
        /// The adapter's language.
        #[arg(value_enum)]
        language: kits::Language,
        /// Where to write it (the Rust kit goes into a crate directory `mcp-harness-kit`
        /// there).
        #[arg(long, value_name = "DIR", default_value = ".")]
        out: PathBuf,
        /// Replace files that exist.
        #[arg(long)]
        force: bool,
    },
}

#[derive(Subcommand)]
enum CaseCommand {
    /// Print a built-in case's file.
    Show {
        /// The case id, e.g. `tools/pagination-three-pages` (a trial name works too).
        #[arg(value_name = "ID")]
        id: String,
    },
}

fn main() -> ExitCode {
    // The hidden programs: the client under test starts the fake with an argv of ours, and a
    // reference run starts the driver; neither goes through clap.
    let mut args = std::env::args_os();
    let _program = args.next();
    match args.next().as_deref().and_then(|a| a.to_str()) {
        Some("fake-stdio") => return mcp_harness_fakes::cli::main(args, "mcp-harness fake-stdio"),
        Some("driver") => return driver(),
        _ => {}
    }
    match Cli::parse().command {
        Command::Run(args) => run(*args),
        Command::List(args) => {
            let mut args = *args;
            args.list = true;
            run(args)
        }
        Command::Schema {
            fixture,
            requirements,
        } => {
            let name = match (fixture, requirements) {
                (true, _) => "fixture.schema.json",
                (_, true) => "requirements.schema.json",
                _ => "scenario.schema.json",
            };
            match embedded::schema(name) {
                Some(text) => print_out(text),
                None => fail(&format!("this binary carries no {name}")),
            }
        }
        Command::Requirements { coverage, cases } => {
            let builtin = match embedded::write_out() {
                Ok(builtin) => builtin,
                Err(e) => return fail(&e),
            };
            match requirements::report(&builtin.scenarios, cases.as_deref(), &coverage) {
                Ok(text) => print_out(&text),
                Err(e) => fail(&e),
            }
        }
        Command::Case {
            command: CaseCommand::Show { id },
        } => match embedded::case_text(&id) {
            Ok((text, family)) => {
                if let Some(file) = family {
                    eprintln!("note: {id} is one variant of the family of cases in {file}");
                }
                print_out(text)
            }
            Err(e) => fail(&e),
        },
        Command::Matrix { results, out } => {
            match mcp_harness::report::merge::write_matrix(&results, &out) {
                Ok(runs) => {
                    for run in &runs {
                        println!("{}: {} trials", run.client, run.trials.len());
                    }
                    println!("matrix: {}", out.display());
                    ExitCode::SUCCESS
                }
                Err(e) => fail(&e),
            }
        }
        Command::CaseFrom(args) => case_from::run(args),
        Command::Check(args) => check::run(args),
        Command::Record(args) => record::run(*args),
        Command::Serve(args) => serve::main(*args),
        Command::Kit {
            language,
            out,
            force,
        } => match kits::write(language, &out, force) {
            Ok(files) => {
                for file in files {
                    println!("wrote {}", file.display());
                }
                ExitCode::SUCCESS
            }
            Err(e) => fail(&e),
        },
    }
}

/// `run`: the built-in cases written out, this binary as fake and driver.
fn run(args: ConformanceArgs) -> ExitCode {
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => return fail(&format!("cannot locate this program: {e}")),
    };
    let builtin = match embedded::write_out() {
        Ok(builtin) => builtin,
        Err(e) => return fail(&e),
    };
    let here = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    conformance::snapshot::configure(&here, args.bless);
    if args.bless && args.only_cases.is_empty() && args.scenarios.is_none() {
        eprintln!(
            "note: --bless writes the snapshots of your --cases directories; the built-in cases' snapshots are part of this binary and are not changed"
        );
    }
    let builtin_shown = args.scenarios.is_none();
    let options = args.into_options(
        builtin.scenarios.clone(),
        builtin.snapshots.clone(),
        Bins::single(exe),
        "mcp-harness run",
    );
    match options {
        Ok(mut options) => {
            // The written-out cases are gone after the run: name them by the command instead.
            options.builtin_case_command =
                builtin_shown.then(|| "mcp-harness case show".to_owned());
            conformance::run(options)
        }
        Err(e) => fail(&e),
    }
}

/// `driver`: the reference client through the driver contract (what `mcp-harness-driver` is
/// in the repository).
fn driver() -> ExitCode {
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime.block_on(mcp_harness_client::driver::main()),
        Err(e) => {
            eprintln!("mcp-harness driver: cannot start the async runtime: {e}");
            ExitCode::from(2)
        }
    }
}

/// Prints `text` to stdout; a reader that went away (`| head`) is not an error.
fn print_out(text: &str) -> ExitCode {
    use std::io::Write as _;
    match std::io::stdout().lock().write_all(text.as_bytes()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            fail(&format!("cannot write to stdout: {e}"))
        }
        _ => ExitCode::SUCCESS,
    }
}

fn fail(problem: &str) -> ExitCode {
    eprintln!("error: {problem}");
    ExitCode::from(2)
}

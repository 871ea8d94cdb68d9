//! `cargo xtask bench`: how fast the reference client, the suite and the fakes are, measured
//! side by side in one run and reported as ratios, because the machine is small and noisy and
//! absolute figures from different runs do not compare.
//!
//! | module         | role                                                                   |
//! |----------------|------------------------------------------------------------------------|
//! | `clients`      | the reference client's and rmcp's bench binaries, interleaved          |
//! | `suite`        | `cargo xtask conformance` wall time and trial times                    |
//! | `scaled_cases` | the generated case directories of the suite's scale runs (3x, 600)     |
//! | `fakes`        | the stdio fake under pipelined load                                    |
//! | `floor`        | a do-nothing echo server and the bare pipe round trip to it            |
//! | `https_load`   | the in-process HTTPS fake under a many-connection HTTP/1.1 load        |
//! | `metrics`      | the compared client figures and which way each is better               |
//! | `report`       | the table, the targets and `bench/bench.json` in the target directory  |
//!
//! Everything measured is built in release. `cargo xtask` itself runs a debug build, and the
//! HTTPS fake lives inside xtask, so a debug xtask would measure a debug fake: the debug
//! process builds the debug and release binaries and hands over to the release xtask, telling
//! it where the debug xtask is (so the release one knows the builds are done and where the
//! debug directory is); the suite is timed as users run it, through `cargo xtask conformance`.

mod clients;
mod fakes;
mod floor;
mod https_load;
mod metrics;
mod report;
mod scaled_cases;
mod suite;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use mcp_harness_fakes::cli::Play;
use mcp_harness_scenarios::load_case;

use crate::paths;
use mcp_harness::conformance::http_env::HttpEnv;

/// The command line of `cargo xtask bench`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Rounds of interleaved client runs (reference, rmcp; then rmcp, reference; ...); every
    /// figure keeps its best round.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    pub rounds: u32,
    /// Calls per batch (one sequential batch, one concurrent batch).
    #[arg(long, default_value_t = 1000)]
    pub calls: usize,
    /// Calls in flight at once in the concurrent batch.
    #[arg(long, default_value_t = 16)]
    pub in_flight: usize,
    /// Requests sent to each fake when measuring the fakes themselves.
    #[arg(long, default_value_t = 20_000)]
    pub fake_requests: usize,
    /// Keep-alive connections the HTTPS load generator opens.
    #[arg(long, default_value_t = 16)]
    pub fake_connections: usize,
    /// Where the JSON results go (default: bench/bench.json in the target directory).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Use this rmcp bench binary instead of building the one in adapters/rmcp.
    #[arg(long, value_name = "FILE")]
    pub rmcp_bin: Option<PathBuf>,
    /// Leave out the suite timings (five full conformance runs: the suite at jobs 1 and at the
    /// default jobs, three copies of it, 600 trials, and the suite against no client).
    #[arg(long)]
    pub skip_suite: bool,
    /// Measure only these parts (repeatable; the suite is then left out too).
    #[arg(long, value_enum, value_name = "PART")]
    pub only: Vec<Part>,
    /// Be the floor's echo server on stdin and stdout, and nothing else (see `floor`).
    #[arg(long, hide = true)]
    pub serve_echo: bool,
    /// The debug xtask that handed over to this release one (set by it): marks that the builds
    /// are done, and locates the debug directory the timed suite's binaries are in.
    #[arg(long, hide = true, value_name = "FILE")]
    pub suite_xtask: Option<PathBuf>,
}

/// The parts of a bench run that `--only` can pick.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Part {
    /// Both clients over stdio, against the stdio fake.
    Stdio,
    /// Both clients over HTTPS, against the in-process HTTPS fake.
    Https,
    /// The floor: both clients against the echo server, and the bare pipe round trip.
    Floor,
    /// The fakes' own throughput.
    Fakes,
}

impl Args {
    fn wants(&self, part: Part) -> bool {
        self.only.is_empty() || self.only.contains(&part)
    }
}

/// Runs the benchmarks; exit 0 once everything that could be measured was reported.
pub fn main(args: Args) -> ExitCode {
    if args.serve_echo {
        return floor::serve_echo();
    }
    match run(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(args: Args) -> Result<ExitCode, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot locate xtask: {e}"))?;
    let dir = exe.parent().ok_or("xtask has no parent directory")?;
    if !dir.ends_with("release") {
        return hand_over_to_release(&args, &exe, dir);
    }
    if args.suite_xtask.is_none() {
        build_release()?;
    }
    let root = paths::workspace_root();
    let bench_dir = root.join("xtask").join("bench");
    let scenario = bench_dir.join("echo-server.json");
    let case = load_case(&bench_dir, &scenario).map_err(|e| e.to_string())?;
    let work = tempfile::Builder::new()
        .prefix("mcp-harness-bench-")
        .tempdir()
        .map_err(|e| format!("cannot make a work directory: {e}"))?;
    let env = HttpEnv::new()?;
    let play = work.path().join("echo-play.json");
    Play::of(&case).write(&play)?;
    let setup = clients::Setup {
        env: &env,
        case: &case,
        fake_stdio: dir.join("mcp-fake-stdio"),
        echo: floor::echo_argv(&exe),
        play,
        work: work.path().to_owned(),
        calls: args.calls,
        in_flight: args.in_flight,
    };

    let rmcp = match &args.rmcp_bin {
        Some(bin) => Ok(bin.clone()),
        None => {
            eprintln!("bench: building the rmcp bench binary (release) ...");
            clients::build_rmcp(&root)
        }
    };
    if let Err(why) = &rmcp {
        eprintln!("bench: rmcp: unavailable ({why})");
    }
    let fakes = match args.wants(Part::Fakes) {
        true => {
            eprintln!("bench: the fakes ...");
            vec![
                ("stdio", fakes::stdio(&setup, args.fake_requests)),
                (
                    "https",
                    https_load::run(&setup, args.fake_requests, args.fake_connections),
                ),
            ]
        }
        false => Vec::new(),
    };
    let pipe = args.wants(Part::Floor).then(|| {
        eprintln!("bench: the floor (pipe round trip) ...");
        floor::pipe(&setup.echo, args.calls, args.in_flight, args.rounds)
    });
    let transports: Vec<&'static str> = [
        (Part::Stdio, "stdio"),
        (Part::Https, "https"),
        (Part::Floor, "floor"),
    ]
    .into_iter()
    .filter(|(part, _)| args.wants(*part))
    .map(|(_, name)| name)
    .collect();
    eprintln!("bench: the clients ({} rounds) ...", args.rounds);
    let clients = clients::compare(
        &setup,
        &dir.join("mcp-harness-bench"),
        &rmcp,
        args.rounds,
        &transports,
    );
    let suite = match args.skip_suite || !args.only.is_empty() {
        true => suite::Suite::default(),
        false => {
            eprintln!("bench: the suite (`cargo xtask conformance`, 1x, 3x, 600 trials) ...");
            suite::measure(work.path(), &debug_dir(&args, dir).join("mcp-fake-stdio"))
        }
    };
    let report = report::Report::new(&args, clients, suite, fakes, pipe);
    print!("{}", report.table());
    // The target directory this release xtask was built into (it is `<target>/release`),
    // which is where CARGO_TARGET_DIR or the cargo config put it, not always `./target`.
    let target = dir.parent().ok_or("the release directory has no parent")?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| target.join("bench").join("bench.json"));
    report.write(&out)?;
    println!("written: {}", out.display());
    Ok(ExitCode::SUCCESS)
}

/// Where the debug build the suite runs lives: beside the debug xtask that handed over.
fn debug_dir(args: &Args, release: &Path) -> PathBuf {
    args.suite_xtask
        .as_deref()
        .and_then(Path::parent)
        .map_or_else(|| release.with_file_name("debug"), Path::to_path_buf)
}

/// The workspace build every benchmark uses. xtask is built alongside so that the feature set
/// (and so the build) is the same whichever of them asked for it.
fn build_release() -> Result<(), String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .current_dir(paths::workspace_root())
        .args(["build", "--release", "--quiet", "--bins"])
        .args([
            "-p",
            "mcp-harness-client",
            "-p",
            "mcp-harness-fakes",
            "-p",
            "xtask",
        ])
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    match status.success() {
        true => Ok(()),
        false => Err(format!("the release build failed ({status})")),
    }
}

/// Builds the debug binaries the timed suite uses and the release ones, then runs the release
/// xtask with the same arguments.
fn hand_over_to_release(args: &Args, exe: &Path, dir: &Path) -> Result<ExitCode, String> {
    if !args.skip_suite && args.only.is_empty() {
        paths::build_bins()?;
    }
    build_release()?;
    let release = dir
        .parent()
        .ok_or("the target directory has no parent")?
        .join("release")
        .join("xtask");
    let mut cmd = Command::new(&release);
    cmd.args(std::env::args_os().skip(1));
    if args.suite_xtask.is_none() {
        cmd.arg("--suite-xtask").arg(exe);
    }
    let status = cmd
        .status()
        .map_err(|e| format!("cannot run {}: {e}", release.display()))?;
    Ok(ExitCode::from(
        status
            .code()
            .and_then(|c| u8::try_from(c).ok())
            .unwrap_or(2),
    ))
}

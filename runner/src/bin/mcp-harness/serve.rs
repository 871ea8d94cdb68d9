//! `mcp-harness serve`: the command line of host mode (the logic is `mcp_harness::serve`).
//! Picks the cases (built-in ids as `case show` takes them, or the user's own files and
//! directories with `--cases`), checks that each is servable, and serves them.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, ValueEnum};

use mcp_harness::conformance::cases::{Sources, resolve_dirs};
use mcp_harness::conformance::trial::Bins;
use mcp_harness::serve;
use mcp_harness_scenarios::Case;
use mcp_harness_scenarios::load::{Library, parse_with};
use mcp_harness_scenarios::model::Transport;

use super::embedded;

/// The flags of `serve`.
#[derive(Args)]
#[command(
    after_help = "Exit status: 0 when no judged check failed at must, should or profile; 1 when one did, or when the host exercised nothing of a served case; 2 on bad input."
)]
pub struct ServeArgs {
    /// The cases to serve: built-in ids (`tools/pagination-three-pages`; `@stdio`/`@https`
    /// picks the transport) or ids of cases under --cases; several are served at once.
    #[arg(value_name = "CASE")]
    cases: Vec<String>,
    /// The transport to serve on (default: each case's first).
    #[arg(long, value_enum)]
    transport: Option<TransportArg>,
    /// For a case that runs at several protocol revisions: the one to serve (default: its
    /// last).
    #[arg(long, value_name = "R")]
    revision: Option<String>,
    /// Your own cases: a directory of case files, or one case file (repeatable). With no
    /// CASE, every servable case they hold is served.
    #[arg(long = "cases", value_name = "PATH")]
    case_paths: Vec<PathBuf>,
    /// Write results.json and report.html here.
    #[arg(long, value_name = "DIR")]
    report_dir: Option<PathBuf>,
    /// Give up on the host after this many seconds.
    #[arg(long, value_name = "SECS", default_value_t = 600)]
    timeout: u64,
    /// Over HTTPS: the host is done after this many seconds without a request.
    #[arg(long, value_name = "SECS", default_value_t = 10)]
    idle: u64,
    /// List the servable cases (built-in, and those under --cases) and exit.
    #[arg(long)]
    list: bool,
}

#[derive(Clone, Copy, ValueEnum)]
enum TransportArg {
    Stdio,
    Https,
}

impl From<TransportArg> for Transport {
    fn from(t: TransportArg) -> Transport {
        match t {
            TransportArg::Stdio => Transport::Stdio,
            TransportArg::Https => Transport::Https,
        }
    }
}

/// Runs `serve`.
pub fn main(args: ServeArgs) -> ExitCode {
    match run(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(args: ServeArgs) -> Result<ExitCode, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot locate this program: {e}"))?;
    let builtin = embedded::write_out()?;
    // A case file given alone is loaded by itself, its directory's requirements.json and
    // fixtures laid over the built-in ones as for a directory.
    let mut dirs = Vec::new();
    let mut files = Vec::new();
    for path in &args.case_paths {
        if path.is_file() {
            let file = std::fs::canonicalize(path)
                .map_err(|e| format!("--cases {}: {e}", path.display()))?;
            files.push(file);
        } else if path.exists() {
            dirs.push(path.clone());
        } else {
            return Err(format!(
                "--cases {}: no such file or directory; expected a case file or a directory of them",
                path.display()
            ));
        }
    }
    dirs.dedup();
    let sources = Sources {
        builtin: builtin.scenarios.clone(),
        with_builtin: true,
        user_dirs: resolve_dirs(&dirs)?,
    };
    let mut all = sources.load().map_err(|errors| errors.join("\n"))?;
    if !files.is_empty() {
        let base = Library::find(&builtin.scenarios).map_err(|e| e.to_string())?;
        for file in &files {
            let dir = file.parent().unwrap_or(Path::new("/"));
            let library = base.with_own(dir).map_err(|e| e.to_string())?;
            let text = std::fs::read_to_string(file)
                .map_err(|e| format!("--cases {}: cannot read: {e}", file.display()))?;
            let cases = parse_with(&library, dir, file, &text).map_err(|e| e.to_string())?;
            for case in cases {
                if let Some(same) = all.iter().find(|c| c.id == case.id) {
                    return Err(format!(
                        "{}: its id {:?} is also the id of {}; rename the file",
                        file.display(),
                        case.id,
                        same.path.display()
                    ));
                }
                all.push(case);
            }
        }
    }
    if args.list {
        use std::io::Write as _;
        let mut out = std::io::stdout().lock();
        for case in serve::servable(&all) {
            let transports: Vec<&str> = case
                .scenario
                .transports
                .iter()
                .map(|t| t.as_str())
                .collect();
            // A reader that went away (`| head`) is not an error.
            if writeln!(out, "{} ({})", case.id, transports.join(", ")).is_err() {
                break;
            }
        }
        return Ok(ExitCode::SUCCESS);
    }
    let wanted = args.transport.map(Transport::from);
    let mut picked: Vec<(Case, Option<Transport>)> = Vec::new();
    for name in &args.cases {
        let (id, transport) = match name.split_once('@') {
            Some((id, rest)) => {
                let t = rest.split('@').next().unwrap_or_default();
                let t = match t {
                    "stdio" => Transport::Stdio,
                    "https" => Transport::Https,
                    other => {
                        return Err(format!(
                            "{name}: {other:?} is not a transport; expected stdio or https"
                        ));
                    }
                };
                (id, Some(t))
            }
            None => (name.as_str(), wanted),
        };
        let case = all.iter().find(|c| c.id == id).ok_or_else(|| {
            format!("{id}: no such case; `mcp-harness serve --list` lists the servable ones")
        })?;
        picked.push((case.clone(), transport));
    }
    if args.cases.is_empty() {
        let under = |c: &&Case| {
            files.contains(&c.path) || sources.user_dirs.iter().any(|d| c.path.starts_with(d))
        };
        for case in all.iter().filter(under) {
            if files.contains(&case.path) || case.scenario.servable().is_ok() {
                picked.push((case.clone(), wanted));
            }
        }
    }
    if picked.is_empty() {
        return Err(
            "no case to serve: name one (`mcp-harness serve --list` lists them) or give --cases"
                .into(),
        );
    }
    let mut cases = Vec::new();
    for (mut case, transport) in picked {
        case.scenario
            .servable()
            .map_err(|why| format!("{} cannot be served to a host: {why}", case.id))?;
        let revisions = &case.scenario.revisions;
        case.revision = match &args.revision {
            Some(r) if revisions.contains(r) => Some(r.clone()),
            Some(r) if !revisions.is_empty() => {
                return Err(format!(
                    "--revision {r}: {} runs at {} only",
                    case.id,
                    revisions.join(", ")
                ));
            }
            _ => revisions.last().cloned(),
        };
        let transport = serve::transport_of(&case, transport)?;
        cases.push((case, transport));
    }
    let scenarios_dir = builtin.scenarios.clone();
    let options = serve::Options {
        cases,
        bins: Bins::single(exe),
        report_dir: args.report_dir,
        timeout: Duration::from_secs(args.timeout),
        idle: Duration::from_secs(args.idle.max(1)),
        case_place: Box::new(
            move |case: &Case| match case.path.starts_with(&scenarios_dir) {
                true => format!("mcp-harness case show {}", case.id),
                false => case.path.display().to_string(),
            },
        ),
    };
    match serve::serve(&options)? {
        true => Ok(ExitCode::from(1)),
        false => Ok(ExitCode::SUCCESS),
    }
}

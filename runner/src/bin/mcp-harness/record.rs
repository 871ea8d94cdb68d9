//! `mcp-harness record`: the command line of the recording proxy (its logic is
//! `mcp_harness::record`).

use std::ffi::OsString;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use mcp_harness::record::{self, fault::Faults, https::HttpsOptions, stdio::StdioOptions};

/// Record a real session between a host and a server, secrets redacted, optionally with
/// faults applied.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
stdio: put `mcp-harness record --out FILE -- CMD ARGS…` where the host expects the server \
command; the recorder's stdout is the protocol, its notes go to stderr.
https: `mcp-harness record --upstream URL` prints the URL to give the host and the CA file \
it must trust; stop it with Ctrl-C (SIGINT) or SIGTERM.
A fault SPEC is KIND[=VALUE][:METHOD][@N]: delay=MS, malformed, cut, repeat-cursor, \
status=5xx (https), session-loss (https).")]
pub struct RecordArgs {
    /// Where to write the recording (default: mcp-recording-<unix seconds>.jsonl here).
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// A fault to apply to the server's answers (repeatable), e.g. `delay=500:tools/call@2`.
    #[arg(long = "fault", value_name = "SPEC")]
    faults: Vec<String>,
    /// An environment variable whose value is a secret, redacted wherever it appears
    /// (repeatable). Variables whose names hold TOKEN, SECRET, PASSWORD, PASSWD, API_KEY,
    /// APIKEY, PRIVATE_KEY or CREDENTIAL are redacted without it.
    #[arg(long = "secret-env", value_name = "NAME")]
    secret_env: Vec<String>,
    /// Record Streamable HTTP: the upstream MCP endpoint (https, or http on loopback).
    #[arg(long, value_name = "URL")]
    upstream: Option<String>,
    /// https: where the front listens (a loopback address).
    #[arg(
        long,
        value_name = "ADDR",
        default_value = "127.0.0.1:0",
        requires = "upstream"
    )]
    listen: SocketAddr,
    /// https: where to write the front's CA (default: next to the recording, `<name>.ca.pem`).
    #[arg(long, value_name = "FILE", requires = "upstream")]
    ca_out: Option<PathBuf>,
    /// https: a CA (PEM) to trust for the upstream, besides the system's roots.
    #[arg(long, value_name = "FILE", requires = "upstream")]
    upstream_ca: Option<PathBuf>,
    /// After the recording ends, turn it into a case of this name.
    #[arg(long, value_name = "NAME")]
    to_case: Option<String>,
    /// Where --to-case writes the case (default: the current directory).
    #[arg(long, value_name = "DIR", requires = "to_case")]
    case_dir: Option<PathBuf>,
    /// stdio: the server command, after `--`.
    #[arg(last = true, value_name = "CMD")]
    command: Vec<OsString>,
}

/// Runs `record`; exit status: the server's (stdio), 0 (https, stopped by a signal), 2 on
/// bad input.
pub fn run(args: RecordArgs) -> ExitCode {
    let out = args.out.clone().unwrap_or_else(record::default_out);
    let http = args.upstream.is_some();
    match (http, args.command.is_empty()) {
        (true, false) => return fail("give either --upstream URL or `-- CMD ARGS…`, not both"),
        (false, true) => {
            return fail(
                "nothing to record: give `-- CMD ARGS…` (stdio) or --upstream URL (https)",
            );
        }
        _ => {}
    }
    // A bad case name is refused before the host connects, not after the session.
    if let Some(Err(e)) = args
        .to_case
        .as_deref()
        .map(mcp_harness::case_from::check_name)
    {
        return fail(&e.replacen("--name", "--to-case", 1));
    }
    let known = record::redact::know_environment(&args.secret_env);
    if known > 0 {
        record::note(&format!(
            "{known} secret value(s) of the environment will be redacted wherever they appear"
        ));
    }
    let faults = match Faults::parse(&args.faults, http) {
        Ok(faults) => faults,
        Err(e) => return fail(&e),
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => return fail(&format!("cannot start the async runtime: {e}")),
    };
    let mut code = match args.upstream.clone() {
        None => {
            let options = StdioOptions {
                out: out.clone(),
                faults,
                command: args.command.clone(),
            };
            match runtime.block_on(record::stdio::run(options)) {
                Ok(code) => code,
                Err(e) => return fail(&e),
            }
        }
        Some(upstream) => {
            let options = HttpsOptions {
                ca_out: args
                    .ca_out
                    .clone()
                    .unwrap_or_else(|| record::default_ca_out(&out)),
                out: out.clone(),
                upstream,
                listen: args.listen,
                upstream_ca: args.upstream_ca.clone(),
                faults,
            };
            let served = runtime.block_on(async {
                let (front, serve) = record::https::start(options).await?;
                // Not the protocol here: the URL and CA go to stdout too, for scripts.
                println!("url: {}", front.url);
                println!("ca: {}", front.ca_file.display());
                record::note(&format!(
                    "give the host {} and have it trust {}; recording into {}",
                    front.url,
                    front.ca_file.display(),
                    out.display()
                ));
                serve.await;
                Ok::<_, String>(())
            });
            match served {
                Ok(()) => 0,
                Err(e) => return fail(&e),
            }
        }
    };
    if let Some(name) = &args.to_case
        && let Err(e) = to_case(&out, name, args.case_dir.as_deref())
    {
        record::note(&format!("--to-case {name}: {e}"));
        code = 2;
    }
    // Not through the runtime's drop: its blocking read of stdin would hold the exit.
    std::process::exit(code);
}

/// `--to-case`: the recording turned into a case, written canonical-formatted into `dir`
/// (default: the current directory) as `NAME.json`.
fn to_case(out: &Path, name: &str, dir: Option<&Path>) -> Result<(), String> {
    let records = mcp_harness::case_from::read_recording(out)?;
    let case = mcp_harness::case_from::case_from_records(&records, name)?;
    let path = mcp_harness::case_from::write_case(dir.unwrap_or(Path::new(".")), name, &case)?;
    record::note(&format!("wrote the case {}", path.display()));
    Ok(())
}

fn fail(problem: &str) -> ExitCode {
    eprintln!("mcp-harness record: error: {problem}");
    ExitCode::from(2)
}

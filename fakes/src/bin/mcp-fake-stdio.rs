//! `mcp-fake-stdio --scenario <path.json> --transcript <path.jsonl> [--revision <rev>] [--variant <name>] [--time-scale <F>] [--canary <origin>]`: the fake MCP server a
//! client under test launches as its child. Exits 2 on bad usage or an unusable scenario;
//! otherwise its exit status is the script's (see `mcp_harness_fakes::stdio`).

use std::process::ExitCode;

use mcp_harness_fakes::cli::{self, Args, Loaded};
use mcp_harness_fakes::recorder::Recorder;
use mcp_harness_fakes::stdio;

fn main() -> ExitCode {
    let args = match Args::parse(std::env::args_os().skip(1)) {
        Ok(args) => args,
        Err(problem) => return fail(&format!("{problem}\n{}", cli::USAGE)),
    };
    let variant = args.variant.as_deref();
    let canary = args.canary.as_deref();
    let loaded = match cli::load_case(&args.scenario, variant, args.time_scale, canary) {
        Ok(loaded) => loaded,
        Err(problem) => return fail(&problem),
    };
    let recorder = match Recorder::open(&args.transcript) {
        Ok(recorder) => recorder,
        Err(e) => {
            let path = args.transcript.display();
            return fail(&format!("cannot open transcript {path}: {e}"));
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => return fail(&format!("cannot start the async runtime: {e}")),
    };
    play(&runtime, loaded, args.revision, recorder)
}

// `serve` ends the process itself (its output type is uninhabited); recent compilers see the
// call as diverging and flag the empty match that older ones need.
#[allow(unreachable_code)]
fn play(
    runtime: &tokio::runtime::Runtime,
    loaded: Loaded,
    revision: Option<String>,
    recorder: Recorder,
) -> ! {
    let serving = stdio::serve_with(loaded.script, revision, loaded.request_timeout, recorder);
    match runtime.block_on(serving) {}
}

fn fail(problem: &str) -> ExitCode {
    eprintln!("mcp-fake-stdio: {problem}");
    ExitCode::from(2)
}

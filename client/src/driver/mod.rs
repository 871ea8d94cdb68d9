//! The driver contract (version 1) for the reference client: what the `mcp-harness-driver`
//! binary does.
//!
//! The harness runs every client, this one included, the same way: environment variables
//! describe the server and a plan of steps; the client prints one JSON outcome line per step on
//! stdout and nothing else there. Diagnostics go to stderr. Exit status 2 means the
//! environment or arguments were unusable; 0 means the plan was carried out, whatever the
//! steps reported.

mod config;
mod features;
mod headless;
mod listening;
mod machine;
mod plan;
mod servers;
mod step;
mod tasks;
mod together;

use std::process::ExitCode;
use std::time::Duration;

use crate::telemetry::seams::TelemetrySeams;

/// How long the driver waits, before it exits, for its spans and metrics to reach the
/// collector (the OTLP exporter's own timeout is longer).
const TELEMETRY_FLUSH: Duration = Duration::from_secs(2);

/// Runs the driver: reads the environment and `--defect` flags, carries out the plan.
/// When the standard `OTEL_*` variables ask for it, spans and metrics are exported over
/// OTLP/HTTP, and flushed before it returns (see [`crate::telemetry::export`]).
pub async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let config = match config::parse(&args, &|name| std::env::var(name).ok()) {
        Ok(config) => config,
        Err(message) => {
            eprintln!("mcp-harness-driver: {message}");
            return ExitCode::from(2);
        }
    };
    let telemetry = match config.options.seams().exports() {
        true => crate::telemetry::export::install_from_env(),
        false => None,
    };
    let code = match plan::run(&config, &mut std::io::stdout()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcp-harness-driver: could not write outcome lines to stdout: {e}");
            ExitCode::FAILURE
        }
    };
    if let Some(telemetry) = telemetry {
        telemetry.shutdown(TELEMETRY_FLUSH);
    }
    code
}

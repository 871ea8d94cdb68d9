//! A trial's part of the traces contract (CLIENTS.md § Traces): a case with `traces` gets a
//! loopback OTLP receiver and the standard OpenTelemetry variables pointing at it; every
//! other trial has those variables removed, so a user's own OpenTelemetry setup never
//! reaches a client under test. After the client exits the receiver's collection is scrubbed
//! of the trial's secrets and its spans follow the fake's records as `span` events.

use std::process::Command;
use std::time::Duration;

use mcp_harness_fakes::otlp::Receiver;
use mcp_harness_scenarios::Case;
use mcp_harness_scenarios::transcript::{Event, Record};

use super::super::netns::Isolation;
use super::super::traces::{TracesRun, secrets};

/// The contract's variable that asks the client for its traces.
pub const VAR: &str = "MCP_HARNESS_TRACES";

/// How long the receiver keeps serving connections made before the client exited, at time
/// scale 1 (the client has closed them by then: this only bounds a lingering process).
pub const GRACE: Duration = Duration::from_millis(500);

/// The OpenTelemetry variables a traces trial sets, besides the endpoint and protocol.
const FIXED: [(&str, &str); 8] = [
    ("OTEL_TRACES_EXPORTER", "otlp"),
    ("OTEL_METRICS_EXPORTER", "otlp"),
    ("OTEL_LOGS_EXPORTER", "none"),
    ("OTEL_SERVICE_NAME", "mcp-harness-client"),
    ("OTEL_TRACES_SAMPLER", "always_on"),
    ("OTEL_PROPAGATORS", "tracecontext,baggage"),
    ("OTEL_BSP_SCHEDULE_DELAY", "100"),
    ("OTEL_METRIC_EXPORT_INTERVAL", "500"),
];

/// The prefix of every OpenTelemetry SDK variable: each one of the runner's own is removed
/// from every trial's client (a traces trial then gets the contract's), so a user's own setup
/// (another endpoint, `grpc` for one signal, headers, `OTEL_SDK_DISABLED`) never reaches one.
const PREFIX: &str = "OTEL_";

/// Starts the receiver of a case with `traces` (on a loopback listener of the trial's
/// network namespace when it is isolated); `None` for any other case.
pub(super) fn start(
    case: &Case,
    isolation: Option<&mut Isolation>,
) -> Result<Option<Receiver>, String> {
    if case.scenario.traces.is_none() {
        return Ok(None);
    }
    let inside = isolation.and_then(|i| i.fake_listeners.pop());
    let started = match inside {
        Some(listener) => Receiver::on(listener),
        None => Receiver::start(),
    };
    started
        .map(Some)
        .map_err(|e| format!("cannot start the OTLP receiver: {e}"))
}

/// Removes the runner's own OpenTelemetry variables, then hands the client the contract's
/// when it has a receiver.
pub(super) fn hand(cmd: &mut Command, case: &Case, receiver: Option<&Receiver>) {
    cmd.env_remove(VAR);
    for (var, _) in std::env::vars_os() {
        if var.to_string_lossy().starts_with(PREFIX) {
            cmd.env_remove(var);
        }
    }
    let (Some(receiver), Some(traces)) = (receiver, &case.scenario.traces) else {
        return;
    };
    cmd.env(VAR, "1")
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint())
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", traces.encoding.protocol())
        .envs(FIXED);
}

/// Stops the receiver (its grace scaled like every patience of the case) and scrubs what it
/// collected of the trial's secrets (`token`, the authorization side's `issued` ones) and the
/// case's sensitive values.
pub(super) fn finish(
    receiver: Receiver,
    case: &Case,
    token: Option<&str>,
    issued: &[String],
) -> Option<TracesRun> {
    let traces = case.scenario.traces.as_ref()?;
    let collected = receiver.finish(GRACE.mul_f64(case.scenario.time_scale.factor()));
    let secrets = secrets(token, issued, &traces.sensitive);
    Some(TracesRun::scrubbed(collected, &secrets))
}

/// Appends each span after the fake's records (when they could be read), as `span` events.
pub(super) fn append(run: Option<&TracesRun>, records: &mut Result<Vec<Record>, String>) {
    if let (Some(run), Ok(records)) = (run, records) {
        records.extend(run.spans.iter().map(|span| Record {
            pid: 0,
            at_ms: None,
            event: Event::Span { span: span.clone() },
        }));
    }
}

//! A traces trial end to end (CLIENTS.md § Traces): the client is handed the contract's
//! OpenTelemetry variables, what it exports to the trial's receiver comes back as spans in
//! `TrialRun.traces` and the transcript, and a planted secret in a span is replaced there and
//! named (by kind) in `leaks`. Every other trial's client sees none of those variables, even
//! when the runner's own environment has them.
//!
//! The client is a small Python script that writes the variables it was given to a file and,
//! when asked for traces, POSTs one hand-written OTLP/JSON span to the endpoint.

mod support;

use std::path::Path;

use mcp_harness::conformance::shell_quote;
use mcp_harness::conformance::trial::{self, Harness};
use mcp_harness_scenarios::model::Transport;
use mcp_harness_scenarios::model::traces::{OtlpEncoding, Traces};
use mcp_harness_scenarios::transcript::Event;
use serde_json::{Value, json};

const CLIENT: &str = r#"
import json, os, sys, urllib.request
seen = {k: v for k, v in os.environ.items()
        if k.startswith("OTEL_") or k == "MCP_HARNESS_TRACES"}
with open(sys.argv[1], "a") as f:
    f.write(json.dumps(seen) + "\n")
if os.environ.get("MCP_HARNESS_TRACES") == "1":
    token = os.environ.get("MCP_HARNESS_BEARER_TOKEN", "")
    leak = "pw=" + sys.argv[2] + " token=" + token
    span = {"traceId": "5b8efff798038103d269b633813fc60c", "spanId": "eee19b7ec3c1b174",
            "name": "tools/call echo", "kind": 3,
            "startTimeUnixNano": "1", "endTimeUnixNano": "2",
            "attributes": [
                {"key": "mcp.method.name", "value": {"stringValue": "tools/call"}},
                {"key": "jsonrpc.request.id", "value": {"stringValue": "2"}},
                {"key": "leak", "value": {"stringValue": leak}}]}
    body = {"resourceSpans": [{"scopeSpans": [{"scope": {"name": "double"}, "spans": [span]}]}]}
    request = urllib.request.Request(
        os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] + "/v1/traces",
        data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    urllib.request.urlopen(request, timeout=5).read()
"#;

const SENSITIVE: &str = "planted-sensitive-4f1c";

/// The client's command line: it writes what it saw to `seen`.
fn client(dir: &Path, seen: &Path) -> String {
    let script = dir.join("traces_client.py");
    std::fs::write(&script, CLIENT).unwrap();
    format!(
        "python3 {} {} {SENSITIVE}",
        shell_quote(&script),
        shell_quote(seen)
    )
}

/// The variables each trial's client saw, one object per trial.
fn seen(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn traced_case() -> mcp_harness_scenarios::Case {
    let mut case = support::case("handshake/happy-path");
    case.scenario.traces = Some(Traces {
        encoding: OtlpEncoding::Json,
        sensitive: vec![SENSITIVE.to_owned()],
    });
    case
}

#[test]
fn a_traces_trial_hands_the_variables_and_collects_scrubbed_spans() {
    let work = tempfile::tempdir().unwrap();
    let seen_path = work.path().join("seen.jsonl");
    let client = client(work.path(), &seen_path);
    let token = "tok-9d2e1b7c5a4f3e2d1c0b";
    let harness = Harness::new(support::bins()).with_bearer_token(Some(token.to_owned()));
    let case = traced_case();
    for (i, transport) in [Transport::Stdio, Transport::Https].into_iter().enumerate() {
        let run = trial::run(&case, transport, &client, &harness);
        assert_eq!(run.end, trial::ClientEnd::Exited(0), "{}", run.stderr_tail);
        let p = run.phases;
        eprintln!(
            "{transport:?}: prepare {:?}, fake_stop {:?}",
            p.prepare, p.fake_stop
        );
        let vars = &seen(&seen_path)[i];
        assert_eq!(vars["MCP_HARNESS_TRACES"], "1");
        assert_eq!(vars["OTEL_EXPORTER_OTLP_PROTOCOL"], "http/json");
        assert_eq!(vars["OTEL_TRACES_EXPORTER"], "otlp");
        assert_eq!(vars["OTEL_LOGS_EXPORTER"], "none");
        assert_eq!(vars["OTEL_SERVICE_NAME"], "mcp-harness-client");
        let endpoint = vars["OTEL_EXPORTER_OTLP_ENDPOINT"].as_str().unwrap();
        assert!(endpoint.starts_with("http://127.0.0.1:"), "{endpoint}");

        let traces = run.traces.as_ref().expect("a traces run");
        assert!(traces.rejected.is_empty(), "{:?}", traces.rejected);
        assert_eq!(traces.spans.len(), 1, "{:?}", traces.spans);
        let span = &traces.spans[0];
        assert_eq!(span["name"], "tools/call echo");
        assert_eq!(span["kind"], "client");
        assert_eq!(span["trace_id"], "5b8efff798038103d269b633813fc60c");
        assert_eq!(span["attributes"]["jsonrpc.request.id"], "2");
        // The sensitive value always; the bearer token only over HTTPS (stdio gets none).
        let (leak, leaks) = match transport {
            Transport::Stdio => (
                "pw=[redacted: sensitive value] token=",
                vec!["sensitive value in attribute `leak` of span `tools/call echo`"],
            ),
            Transport::Https => (
                "pw=[redacted: sensitive value] token=[redacted: bearer token]",
                vec![
                    "bearer token in attribute `leak` of span `tools/call echo`",
                    "sensitive value in attribute `leak` of span `tools/call echo`",
                ],
            ),
        };
        assert_eq!(span["attributes"]["leak"], leak);
        assert_eq!(traces.leaks, leaks);

        // The transcript ends with the same span, scrubbed.
        let records = run.records.as_ref().unwrap();
        let spans: Vec<&Value> = records
            .iter()
            .filter_map(|r| match &r.event {
                Event::Span { span } => Some(span),
                _ => None,
            })
            .collect();
        assert_eq!(spans, vec![span]);
        assert!(matches!(records.last().unwrap().event, Event::Span { .. }));
        let text = serde_json::to_string(&json!([traces.spans, traces.leaks])).unwrap();
        assert!(!text.contains(SENSITIVE) && !text.contains(token), "{text}");
    }
}

/// Without `traces` the client sees no OpenTelemetry variable, though the runner has them.
#[test]
fn other_trials_never_see_the_runners_own_opentelemetry_setup() {
    let work = tempfile::tempdir().unwrap();
    let cases = work.path().join("cases");
    std::fs::create_dir_all(cases.join("t")).unwrap();
    let happy = support::scenarios_dir().join("handshake/happy-path.json");
    let mut plain: Value = serde_json::from_str(&std::fs::read_to_string(happy).unwrap()).unwrap();
    plain.as_object_mut().unwrap().remove("$schema");
    let mut traced = plain.clone();
    traced["traces"] = json!({"encoding": "http/json", "sensitive": [SENSITIVE]});
    std::fs::write(cases.join("t/plain.json"), plain.to_string()).unwrap();
    std::fs::write(cases.join("t/traced.json"), traced.to_string()).unwrap();
    let seen_path = work.path().join("seen.jsonl");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_mcp-harness"))
        .args(["conformance", "--no-build", "--jobs", "1", "--only-cases"])
        .arg(&cases)
        .arg("--client")
        .arg(client(work.path(), &seen_path))
        .arg("--report-dir")
        .arg(work.path().join("reports"))
        .args(["--exact", "t/plain@stdio", "t/traced@stdio"])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://192.0.2.1:4318")
        .env(
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            "http://192.0.2.1:4318/v1/traces",
        )
        .env("OTEL_EXPORTER_OTLP_HEADERS", "authorization=users-own")
        .env("OTEL_SDK_DISABLED", "true")
        .env("OTEL_TRACES_EXPORTER", "console")
        .env("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "grpc")
        .env("OTEL_RESOURCE_ATTRIBUTES", "user=own")
        .env("MCP_HARNESS_TRACES", "1")
        .output()
        .unwrap();
    let seen = seen(&seen_path);
    assert_eq!(seen.len(), 2, "{}", String::from_utf8_lossy(&output.stderr));
    let (plain, traced): (Vec<&Value>, Vec<&Value>) = seen
        .iter()
        .partition(|v| v.get("MCP_HARNESS_TRACES").is_none());
    assert_eq!(plain, vec![&json!({})], "{seen:?}");
    let traced = traced[0];
    assert!(traced.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").is_none());
    assert!(traced.get("OTEL_EXPORTER_OTLP_HEADERS").is_none());
    assert!(traced.get("OTEL_SDK_DISABLED").is_none());
    assert!(traced.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL").is_none());
    assert!(traced.get("OTEL_RESOURCE_ATTRIBUTES").is_none());
    assert_eq!(traced["OTEL_TRACES_EXPORTER"], "otlp");
    let endpoint = traced["OTEL_EXPORTER_OTLP_ENDPOINT"].as_str().unwrap();
    assert!(endpoint.starts_with("http://127.0.0.1:"), "{endpoint}");
}

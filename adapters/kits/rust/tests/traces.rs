//! The `traces` feature (CLIENTS.md, "Traces"): on a traces trial (`MCP_HARNESS_TRACES=1`) an
//! adapter without it answers `connect` `unsupported_op`; one with it has its tracing set up
//! before the first step and shut down (flushed) after the last, and a setup that fails
//! fails the connect instead of passing for a limit.

use mcp_harness_kit::{Adapter, Env, Step, StepError, block_on, read_env_from, run_plan};
use serde_json::{Map, Value, json};

/// Records the order of what the kit calls; `SETUP_FAILS` makes `setup_traces` fail.
#[derive(Default)]
struct Traced<const DECLARED: bool, const SETUP_FAILS: bool> {
    calls: Vec<&'static str>,
}

impl<const DECLARED: bool, const SETUP_FAILS: bool> Adapter for Traced<DECLARED, SETUP_FAILS> {
    type Connection = ();
    const OPS: &'static [&'static str] = &["list_tools"];
    const FEATURES: &'static [&'static str] = if DECLARED { &["traces"] } else { &[] };

    fn setup_traces(&mut self, _: &Env) -> Result<(), String> {
        self.calls.push("setup");
        if SETUP_FAILS {
            return Err("no exporter".into());
        }
        Ok(())
    }

    async fn shutdown_traces(&mut self) {
        self.calls.push("shutdown");
    }

    async fn connect(&mut self, _: &Env, _: &Map<String, Value>) -> Result<((), Value), StepError> {
        self.calls.push("connect");
        Ok(((), json!({"protocolVersion":"2025-11-25"})))
    }

    async fn step(&mut self, _: &mut (), _: &Env, _: &Step) -> Result<Value, StepError> {
        self.calls.push("step");
        Ok(json!({"tools": []}))
    }

    async fn close(&mut self, _: (), _: &Env) -> Result<(), StepError> {
        self.calls.push("close");
        Ok(())
    }
}

fn run<const DECLARED: bool, const SETUP_FAILS: bool>(
    traces: Option<&str>,
) -> (Vec<Value>, Vec<&'static str>) {
    let plan = json!([{"op":"connect"},{"op":"list_tools"}]).to_string();
    let env = read_env_from(|name| match name {
        "MCP_HARNESS_TRANSPORT" => Some("stdio".into()),
        "MCP_HARNESS_SERVER_COMMAND" => Some(r#"["fake"]"#.into()),
        "MCP_HARNESS_PLAN" => Some(plan.clone()),
        "MCP_HARNESS_TRACES" => traces.map(str::to_owned),
        _ => None,
    })
    .unwrap();
    let mut adapter = Traced::<DECLARED, SETUP_FAILS>::default();
    let mut lines = Vec::new();
    block_on(run_plan(&mut adapter, &env, |line| lines.push(line)));
    (lines, adapter.calls)
}

#[test]
fn a_traces_trial_needs_the_traces_feature_at_connect() {
    let (lines, calls) = run::<false, false>(Some("1"));
    assert_eq!(lines[0]["error"]["kind"], "unsupported_op", "{lines:?}");
    let message = lines[0]["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("does not declare the feature traces"),
        "{message}"
    );
    assert_eq!(lines[1]["error"]["kind"], "transport_closed", "{lines:?}");
    assert!(calls.is_empty(), "{calls:?}");
}

#[test]
fn a_declared_traces_feature_is_set_up_first_and_shut_down_last() {
    let (lines, calls) = run::<true, false>(Some("1"));
    assert!(lines.iter().all(|l| l.get("ok").is_some()), "{lines:?}");
    assert_eq!(calls, ["setup", "connect", "step", "close", "shutdown"]);
}

#[test]
fn without_traces_nothing_is_set_up_or_refused() {
    for traces in [None, Some("0")] {
        let (lines, calls) = run::<true, false>(traces);
        assert!(lines.iter().all(|l| l.get("ok").is_some()), "{lines:?}");
        assert_eq!(calls, ["connect", "step", "close"]);
        let (lines, _) = run::<false, false>(traces);
        assert!(lines.iter().all(|l| l.get("ok").is_some()), "{lines:?}");
    }
}

#[test]
fn a_failing_setup_fails_the_connect() {
    let (lines, calls) = run::<true, true>(Some("1"));
    assert_eq!(lines[0]["error"]["kind"], "handshake_failed", "{lines:?}");
    let message = lines[0]["error"]["message"].as_str().unwrap();
    assert!(message.contains("no exporter"), "{message}");
    assert_eq!(calls, ["setup", "shutdown"]);
}

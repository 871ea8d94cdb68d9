//! mcp-harness driver-contract adapter (version 1) for the Rust MCP SDK `rmcp`.
//!
//! Reads the contract's environment, carries out `MCP_HARNESS_PLAN` with rmcp's client and
//! prints one JSON outcome line per step on stdout. Everything else goes to stderr.
//!
//! The adapter reports what rmcp does and adds no guard of its own: no repeated-cursor or
//! duplicate-name checks, no URL policy, no version check, and no timeout beyond rmcp's own
//! per-request option (`PeerRequestOptions::timeout`).

mod content;
mod events;
mod failure;
mod handler;
mod session;

use std::io::Write;
use std::time::Duration;

use serde_json::{Map, Value, json};

use failure::{Failure, Kind};
use session::Session;

/// What the harness tells the adapter through the environment.
pub(crate) struct Config {
    pub transport: String,
    pub server_command: Option<Vec<String>>,
    pub url: Option<String>,
    pub ca_file: Option<String>,
    pub bearer_token: Option<String>,
    pub timeout: Option<Duration>,
    pub protocol_version: Option<String>,
    /// MCP_HARNESS_ERA: `legacy` (also when unset), `modern` or `dual`.
    pub era: String,
    /// MCP_HARNESS_LEGACY_PROTOCOL_VERSION: the dual era's fallback `initialize` version.
    pub legacy_version: Option<String>,
    /// The plan (its `input` answers decide the declared input capabilities).
    pub plan: Vec<Value>,
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|value| !value.is_empty())
}

impl Config {
    fn from_env() -> Config {
        let server_command = env("MCP_HARNESS_SERVER_COMMAND").and_then(|raw| {
            serde_json::from_str::<Vec<String>>(&raw)
                .map_err(|e| eprintln!("rmcp-adapter: MCP_HARNESS_SERVER_COMMAND is not a JSON array of strings: {e}"))
                .ok()
        });
        let timeout = env("MCP_HARNESS_TIMEOUT_MS")
            .and_then(|ms| ms.parse::<u64>().ok())
            .map(Duration::from_millis);
        Config {
            transport: env("MCP_HARNESS_TRANSPORT").unwrap_or_else(|| "stdio".into()),
            server_command,
            url: env("MCP_HARNESS_SERVER_URL"),
            ca_file: env("MCP_HARNESS_CA_FILE").or_else(|| env("SSL_CERT_FILE")),
            bearer_token: env("MCP_HARNESS_BEARER_TOKEN"),
            timeout,
            protocol_version: env("MCP_HARNESS_PROTOCOL_VERSION"),
            era: env("MCP_HARNESS_ERA").unwrap_or_else(|| "legacy".into()),
            legacy_version: env("MCP_HARNESS_LEGACY_PROTOCOL_VERSION"),
            plan: plan(),
        }
    }
}

fn plan() -> Vec<Value> {
    let raw = env("MCP_HARNESS_PLAN").unwrap_or_else(|| "[]".into());
    match serde_json::from_str::<Value>(&raw) {
        Ok(Value::Array(steps)) => steps,
        other => {
            eprintln!("rmcp-adapter: MCP_HARNESS_PLAN is not a JSON array: {other:?}");
            Vec::new()
        }
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let config = Config::from_env();
    let steps = config.plan.clone();
    let mut session: Option<Session> = None;
    let stdout = std::io::stdout();

    for (index, step) in steps.iter().enumerate() {
        let op = step.get("op").cloned().unwrap_or(Value::Null);
        let outcome = match op.as_str() {
            Some("connect") => {
                if let Some(previous) = session.take() {
                    let _ = previous.close().await;
                }
                match Session::connect(&config, step).await {
                    Ok((connected, ok)) => {
                        session = Some(connected);
                        Ok(ok)
                    }
                    Err(failure) => Err(failure),
                }
            }
            Some("sleep") => match step.get("ms").and_then(Value::as_u64) {
                Some(ms) => {
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    Ok(json!({}))
                }
                None => Err(Failure::new(
                    Kind::UnsupportedOp,
                    format!("a sleep step needs a non-negative integer \"ms\": {step}"),
                )),
            },
            Some("close") => match session.take() {
                Some(connected) => connected.close().await.map(|()| json!({})),
                None => Err(Failure::not_connected()),
            },
            _ => on_session(session.as_mut(), step, config.timeout).await,
        };
        let line = outcome_line(index, op, outcome, config.bearer_token.as_deref());
        let mut out = stdout.lock();
        // If stdout is gone there is nobody left to report to; keep carrying out the plan.
        let _ = writeln!(out, "{line}").and_then(|()| out.flush());
    }

    // The implicit close at the end prints no line.
    if let Some(connected) = session.take() {
        let _ = connected.close().await;
    }
    // rmcp cleans up some things from detached tasks (a child process whose handshake failed
    // is killed by a task spawned from the transport's Drop). An application's runtime would
    // keep running; give those tasks a moment before this one stops.
    tokio::time::sleep(Duration::from_millis(100)).await;
}

/// A step carried out on the connection: `transport_closed` without one, `unsupported_op` for
/// an op this adapter does not know (with or without one).
async fn on_session(
    session: Option<&mut Session>,
    step: &Value,
    timeout: Option<Duration>,
) -> Result<Value, Failure> {
    let Some(session) = session else {
        return match step.get("op").and_then(Value::as_str) {
            Some(op) if KNOWN.contains(&op) => Err(Failure::not_connected()),
            _ => Err(unsupported(step)),
        };
    };
    let connected = || Ok::<&Session, Failure>(&*session);
    match step.get("op").and_then(Value::as_str) {
        Some("list_tools") => connected()?.list_tools().await,
        Some("call_tool") => connected()?.call_tool(step, timeout).await,
        Some("discover") => connected()?.discover().await,
        Some("list_resources") => connected()?.list_resources().await,
        Some("list_resource_templates") => connected()?.list_resource_templates().await,
        Some("list_prompts") => connected()?.list_prompts().await,
        Some("read_resource") => connected()?.read_resource(step, timeout).await,
        Some("get_prompt") => connected()?.get_prompt(step, timeout).await,
        Some("complete") => connected()?.complete(step, timeout).await,
        Some("ping") => connected()?.ping(timeout).await,
        Some("set_logging_level") => connected()?.set_logging_level(step, timeout).await,
        Some("events") => connected()?.events(step, timeout).await,
        Some("set_roots") => connected()?.set_roots(step).await,
        Some("subscribe_resource") => connected()?.subscribe_resource(step, timeout).await,
        Some("unsubscribe_resource") => connected()?.unsubscribe_resource(step, timeout).await,
        Some("listen") => session.listen(step, timeout).await,
        _ => Err(unsupported(step)),
    }
}

/// The ops carried out on a connection (`transport_closed` without one).
const KNOWN: &[&str] = &[
    "list_tools",
    "call_tool",
    "discover",
    "list_resources",
    "list_resource_templates",
    "list_prompts",
    "read_resource",
    "get_prompt",
    "complete",
    "ping",
    "set_logging_level",
    "events",
    "set_roots",
    "subscribe_resource",
    "unsubscribe_resource",
    "listen",
];

fn unsupported(step: &Value) -> Failure {
    Failure::new(
        Kind::UnsupportedOp,
        format!("this adapter does not implement the step {step}"),
    )
}

fn outcome_line(
    index: usize,
    op: Value,
    outcome: Result<Value, Failure>,
    secret: Option<&str>,
) -> Value {
    let mut line = Map::new();
    line.insert("step".into(), json!(index));
    line.insert("op".into(), op);
    match outcome {
        Ok(ok) => {
            line.insert("ok".into(), ok);
        }
        Err(failure) => {
            line.insert("error".into(), failure.to_json(secret));
        }
    }
    Value::Object(line)
}

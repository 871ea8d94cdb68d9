//! Carries out a plan step by step and prints exactly one outcome line per step.
//!
//! Steps are judged one at a time as raw JSON, so a step this driver does not understand
//! becomes an `unsupported_op` line instead of aborting the plan.

use std::collections::BTreeMap;
use std::io::Write;
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::config::{Config, TransportKind};
use super::features;
use super::servers;
use super::step::{input_handler, not_connected};
use crate::aggregate::ServersSeams;
use crate::client::Client;
use crate::era::{Connected, Era};
use crate::error::{Error, ErrorKind};
use crate::tasks::TaskCall;
use crate::tools::{ToolOutput, ToolResult};

/// Runs every step of `config.plan`, writing outcome lines to `out`; closes any connection
/// left open at the end (without a line). Fails only if `out` cannot be written.
pub(crate) async fn run(config: &Config, out: &mut impl Write) -> std::io::Result<()> {
    // One connection per server, by name (`servers.rs`); a step is about its `server`'s.
    let mut connections: BTreeMap<String, Client> = BTreeMap::new();
    let seams = config.options.seams();
    for (index, step) in config.plan.iter().enumerate() {
        let op = step.get("op").cloned().unwrap_or(Value::Null);
        let server = match servers::named(step) {
            Ok(server) => server,
            Err(e) => {
                write_line(out, index, op, Err(e))?;
                continue;
            }
        };
        if op.as_str() == Some("exposed_tools") {
            let outcome = servers::exposed_tools(&connections, &seams).await;
            write_line(out, index, op, outcome)?;
            continue;
        }
        let mut connection = connections.remove(&server);
        let outcome = match op.as_str() {
            Some("connect") => connect(config, &server, step, &mut connection).await,
            Some("sleep") => sleep(step).await,
            Some("together") => super::together::run(step, connection.as_ref()).await,
            Some("close") => match connection.take() {
                Some(client) => {
                    client.close().await;
                    Ok(json!({}))
                }
                None => Err(not_connected()),
            },
            Some(op) => match request(op, step, connection.as_ref()).await {
                Some(outcome) => outcome,
                None => Err(unknown(step)),
            },
            None => Err(unknown(step)),
        };
        if let Some(client) = connection {
            connections.insert(server, client);
        }
        if let Err(e) = &outcome
            && seams.close_all_after_failure(e)
        {
            for (_, client) in std::mem::take(&mut connections) {
                client.close().await;
            }
        }
        write_line(out, index, op, outcome)?;
    }
    for (_, client) in connections {
        client.close().await;
    }
    Ok(())
}

/// A step this driver does not know.
pub(super) fn unknown(step: &Value) -> Error {
    Error::new(
        ErrorKind::UnsupportedOp,
        format!("this driver does not know the step {step}"),
    )
}

/// Carries out an op that needs only the open connection (every op but `connect`, `close`,
/// `sleep` and `together`); `None` for any other op.
pub(super) async fn request(
    op: &str,
    step: &Value,
    connection: Option<&Client>,
) -> Option<Result<Value, Error>> {
    Some(match op {
        "list_tools" => match connection {
            Some(client) => client
                .list_tools()
                .await
                .map(|tools| json!({"tools": tools})),
            None => Err(not_connected()),
        },
        "call_tool" => call_tool(step, connection).await,
        "list_resources" | "list_resource_templates" | "list_prompts" => match connection {
            Some(client) => features::list(op, client).await,
            None => Err(not_connected()),
        },
        "read_resource" | "get_prompt" | "complete" | "ping" | "set_logging_level" => {
            features::run(op, step, connection).await
        }
        "discover" => match connection {
            Some(client) => client.discover().await,
            None => Err(not_connected()),
        },
        "fetch_icons" => match connection {
            Some(client) => client.fetch_icons().await,
            None => Err(not_connected()),
        },
        "get_task" | "cancel_task" | "task_result" | "list_tasks" => {
            super::tasks::run(op, step, connection).await
        }
        "events" | "set_roots" | "subscribe_resource" | "unsubscribe_resource" | "listen" => {
            super::listening::run(op, step, connection).await
        }
        _ => return None,
    })
}

async fn connect(
    config: &Config,
    server: &str,
    step: &Value,
    connection: &mut Option<Client>,
) -> Result<Value, Error> {
    let handlers = super::listening::handlers(step)?;
    let trace_context = super::step::trace_context(step)?;
    if let Some(previous) = connection.take() {
        previous.close().await;
    }
    let mut options = config.options.clone();
    options.handlers = handlers;
    options.trace_context = trace_context;
    let client = match (config.transport, &config.server, &config.url) {
        _ if server != servers::MAIN => match config.servers.get(server) {
            Some(servers::Address::Stdio(argv)) => Client::connect_stdio(argv, options).await?,
            Some(servers::Address::Http(url)) => {
                Client::connect_http(url, config.http.clone(), options).await?
            }
            None => {
                return Err(Error::closed(format!(
                    "no server {server:?} was given (MCP_HARNESS_SERVERS)"
                )));
            }
        },
        (TransportKind::Stdio, Some(server), _) => Client::connect_stdio(server, options).await?,
        (TransportKind::Http, _, Some(url)) => {
            Client::connect_http(url, config.http.clone(), options).await?
        }
        _ => return Err(Error::closed("no server command or URL was given")),
    };
    let ok = match client.connected() {
        Connected::Legacy(handshake) => {
            let result = handshake.result();
            let mut ok = json!({
                "protocolVersion": result.get("protocolVersion").cloned().unwrap_or(Value::Null),
                "serverInfo": result.get("serverInfo").cloned().unwrap_or(Value::Null),
            });
            // Only a client asked to choose its era says which one it found; the legacy
            // outcome line stays exactly as it was.
            if config.options.era != Era::Legacy {
                ok["era"] = json!("legacy");
            }
            ok
        }
        Connected::Modern(found) => json!({
            "protocolVersion": found.version,
            "era": "modern",
            "serverInfo": found.server_info.clone().unwrap_or(Value::Null),
        }),
    };
    *connection = Some(client);
    Ok(ok)
}

async fn call_tool(step: &Value, connection: Option<&Client>) -> Result<Value, Error> {
    let Some(name) = step.get("name").and_then(Value::as_str) else {
        return Err(Error::new(
            ErrorKind::UnsupportedOp,
            format!("a call_tool step needs a string \"name\": {step}"),
        ));
    };
    let arguments = step.get("arguments").cloned().unwrap_or_else(|| json!({}));
    let cancel_after = match step.get("cancel_after_ms") {
        None | Some(Value::Null) => None,
        Some(ms) => match ms.as_u64() {
            Some(ms) => Some(Duration::from_millis(ms)),
            None => {
                return Err(Error::new(
                    ErrorKind::UnsupportedOp,
                    format!("cancel_after_ms must be a non-negative integer: {step}"),
                ));
            }
        },
    };
    let input = input_handler(step)?;
    let task = super::tasks::options(step)?;
    let progress = match task {
        Some(_) => None,
        None => super::listening::progress(step)?,
    };
    let client = connection.ok_or_else(not_connected)?;
    let cancel = async {
        match cancel_after {
            Some(after) => tokio::time::sleep(after).await,
            None => std::future::pending().await,
        }
    };
    if let Some(options) = task {
        let called = client.call_tool_as_task(name, arguments, &options, &input, cancel);
        return match called.await? {
            TaskCall::Done(output) => Ok(reported(output)),
            TaskCall::Task(task) => Ok(json!({"task": task})),
        };
    }
    let output = match progress {
        Some(max) => {
            client
                .call_tool_with_progress(name, arguments, &input, max, cancel)
                .await
        }
        None => {
            client
                .call_tool_with_input(name, arguments, &input, cancel)
                .await
        }
    }?;
    Ok(reported(output))
}

/// A call's outcome as `call_tool` reports it: `structured` else `text`, and `content`.
pub(super) fn reported(output: ToolResult) -> Value {
    let mut ok = match output.output {
        ToolOutput::Structured(value) => json!({"structured": value}),
        ToolOutput::Text(texts) => json!({"text": texts}),
    };
    ok["content"] = Value::Array(output.content);
    ok
}

/// `{"op":"sleep","ms":N}`: waits N ms (lets a cache entry expire); needs no connection.
async fn sleep(step: &Value) -> Result<Value, Error> {
    let Some(ms) = step.get("ms").and_then(Value::as_u64) else {
        return Err(Error::new(
            ErrorKind::UnsupportedOp,
            format!("a sleep step needs a non-negative integer \"ms\": {step}"),
        ));
    };
    tokio::time::sleep(Duration::from_millis(ms)).await;
    Ok(json!({}))
}

/// One outcome line, flushed at once so the harness sees progress even if the driver is killed.
fn write_line(
    out: &mut impl Write,
    index: usize,
    op: Value,
    outcome: Result<Value, Error>,
) -> std::io::Result<()> {
    let mut line = Map::new();
    line.insert("step".into(), json!(index));
    line.insert("op".into(), op);
    line.extend(outcome_members(outcome));
    writeln!(out, "{}", Value::Object(line))?;
    out.flush()
}

/// An outcome as a line reports it: `{"ok": …}` or `{"error": {kind, message, code?,
/// status?}}`.
pub(super) fn outcome_members(outcome: Result<Value, Error>) -> Map<String, Value> {
    let mut members = Map::new();
    match outcome {
        Ok(ok) => {
            members.insert("ok".into(), ok);
        }
        Err(e) => {
            let mut error = Map::new();
            error.insert("kind".into(), json!(e.kind.as_str()));
            error.insert("message".into(), json!(e.message));
            if let Some(code) = e.code {
                error.insert("code".into(), json!(code));
            }
            if let Some(status) = e.status {
                error.insert("status".into(), json!(status));
            }
            members.insert("error".into(), Value::Object(error));
        }
    }
    members
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::{ClientOptions, HttpOptions};

    fn config(transport: TransportKind, plan: Value) -> Config {
        let Value::Array(plan) = plan else {
            panic!("plan must be an array")
        };
        Config {
            transport,
            server: None,
            url: None,
            http: HttpOptions::default(),
            plan,
            servers: BTreeMap::new(),
            options: ClientOptions::default(),
        }
    }

    async fn lines(config: &Config) -> Vec<Value> {
        let mut out = Vec::new();
        run(config, &mut out).await.unwrap();
        String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[tokio::test]
    async fn steps_without_connection_and_unknown_ops() {
        let plan = json!([
            {"op":"list_tools"},
            {"op":"resources/list"},
            {"nop":1},
            {"op":"call_tool","name":"x"},
            {"op":"call_tool"},
            {"op":"close"}
        ]);
        let got = lines(&config(TransportKind::Stdio, plan)).await;
        let kinds: Vec<&str> = got
            .iter()
            .map(|l| l["error"]["kind"].as_str().unwrap())
            .collect();
        assert_eq!(
            kinds,
            [
                "transport_closed",
                "unsupported_op",
                "unsupported_op",
                "transport_closed",
                "unsupported_op",
                "transport_closed"
            ]
        );
        assert_eq!(got[1]["op"], "resources/list");
        assert_eq!(got[2]["op"], Value::Null);
        assert_eq!(got[5]["step"], 5);
        assert!(got.iter().all(|l| l["error"].get("code").is_none()));
    }

    #[tokio::test]
    async fn sleep_needs_no_connection_and_discover_does() {
        let plan = json!([
            {"op":"sleep","ms":1},
            {"op":"sleep"},
            {"op":"discover"},
            {"op":"call_tool","name":"x","input":[]}
        ]);
        let got = lines(&config(TransportKind::Stdio, plan)).await;
        assert_eq!(got[0]["ok"], json!({}));
        assert_eq!(got[1]["error"]["kind"], "unsupported_op");
        assert_eq!(got[2]["error"]["kind"], "transport_closed");
        assert_eq!(got[3]["error"]["kind"], "unsupported_op");
    }

    #[tokio::test]
    async fn feature_steps_are_read_before_the_connection_is_looked_at() {
        let plan = json!([
            {"op":"list_resources"},
            {"op":"list_resource_templates"},
            {"op":"list_prompts"},
            {"op":"read_resource","uri":"file:///a"},
            {"op":"read_resource"},
            {"op":"get_prompt","name":"p","arguments":{"a":"b"}},
            {"op":"get_prompt","name":"p","arguments":["a"]},
            {"op":"complete","ref":{},"argument":{}},
            {"op":"complete","ref":{}},
            {"op":"ping"},
            {"op":"set_logging_level","level":"info"},
            {"op":"set_logging_level","level":3}
        ]);
        let got = lines(&config(TransportKind::Stdio, plan)).await;
        let kinds: Vec<&str> = got
            .iter()
            .map(|l| l["error"]["kind"].as_str().unwrap())
            .collect();
        let (closed, malformed) = ("transport_closed", "unsupported_op");
        assert_eq!(
            kinds,
            [
                closed, closed, closed, closed, malformed, closed, malformed, closed, malformed,
                closed, closed, malformed
            ]
        );
    }

    #[tokio::test]
    async fn an_insecure_http_url_fails_connect_then_steps_are_closed() {
        let plan = json!([{"op":"connect"},{"op":"list_tools"}]);
        let mut config = config(TransportKind::Http, plan);
        config.url = Some("http://example.invalid/mcp".into());
        let got = lines(&config).await;
        assert_eq!(got[0]["error"]["kind"], "insecure_url");
        assert_eq!(got[1]["error"]["kind"], "transport_closed");
    }

    #[test]
    fn lines_carry_code_and_status_only_when_given() {
        let mut out = Vec::new();
        let e = Error {
            kind: ErrorKind::ProtocolError,
            message: "m".into(),
            code: Some(-32602),
            status: None,
            data: None,
        };
        write_line(&mut out, 3, json!("call_tool"), Err(e)).unwrap();
        write_line(&mut out, 4, json!("close"), Ok(json!({}))).unwrap();
        let e = Error::http_status(401, "no");
        write_line(&mut out, 5, json!("list_tools"), Err(e)).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            "{\"step\":3,\"op\":\"call_tool\",\"error\":{\"kind\":\"protocol_error\",\
             \"message\":\"m\",\"code\":-32602}}\n{\"step\":4,\"op\":\"close\",\"ok\":{}}\n\
             {\"step\":5,\"op\":\"list_tools\",\"error\":{\"kind\":\"http_status\",\
             \"message\":\"no\",\"status\":401}}\n"
        );
    }
}

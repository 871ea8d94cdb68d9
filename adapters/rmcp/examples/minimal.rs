//! A minimal adapter on the Rust kit (CLIENTS.md's example): rmcp over stdio, tools only.
use mcp_harness_kit::{Adapter, Env, Kind, Step, StepError, Transport, classify, tool_result};
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceError, ServiceExt, service::RunningService};
use serde_json::{Map, Value, json};

struct Minimal;
type Client = RunningService<RoleClient, ()>;

/// A JSON-RPC error the server sent is `protocol_error`; the rest by the kit's error chain walk.
fn failed(e: ServiceError) -> StepError {
    match e {
        ServiceError::McpError(e) => {
            StepError::json_rpc(Kind::ProtocolError, e.code.0.into(), e.message)
        }
        ServiceError::Timeout { .. } => StepError::new(Kind::Timeout, e.to_string()),
        other => classify(&other, &|_| None),
    }
}

fn closed(e: impl std::fmt::Display) -> StepError {
    StepError::new(Kind::TransportClosed, e.to_string())
}

impl Adapter for Minimal {
    type Connection = Client;
    const OPS: &'static [&'static str] = &["list_tools", "call_tool"];

    async fn connect(
        &mut self,
        env: &Env,
        _: &Map<String, Value>,
    ) -> Result<(Client, Value), StepError> {
        let Transport::Stdio { command } = &env.transport else {
            return Err(StepError::unsupported("this example speaks stdio only"));
        };
        let mut child = tokio::process::Command::new(&command[0]);
        child.args(&command[1..]);
        let client =
            ().serve(TokioChildProcess::new(child).map_err(closed)?)
                .await
                .map_err(closed)?;
        let peer = client.peer_info();
        let ok = json!({ "protocolVersion": peer.as_ref().map(|p| p.protocol_version.to_string()),
                         "serverInfo": peer.as_ref().map(|p| &p.server_info) });
        Ok((client, ok))
    }

    async fn step(
        &mut self,
        client: &mut Client,
        _: &Env,
        step: &Step,
    ) -> Result<Value, StepError> {
        match step {
            Step::ListTools => {
                Ok(json!({ "tools": client.list_all_tools().await.map_err(failed)? }))
            }
            Step::CallTool(call) => {
                let mut params = rmcp::model::CallToolRequestParams::new(call.name.clone());
                if let Some(arguments) = &call.arguments {
                    params = params.with_arguments(arguments.clone());
                }
                let result = client.call_tool(params).await.map_err(failed)?;
                tool_result(&serde_json::to_value(result).map_err(closed)?)
            }
            other => Err(StepError::unsupported(other.op())),
        }
    }

    async fn close(&mut self, client: Client, _: &Env) -> Result<(), StepError> {
        client.cancel().await.map(drop).map_err(closed)
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    mcp_harness_kit::run(|_| Minimal).await
}

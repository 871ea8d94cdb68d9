//! One rmcp client connection: connect (stdio child process or streamable HTTP), list tools,
//! call a tool (with rmcp's per-request timeout and cancellation), close.

use std::process::Stdio;
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientConfig, ClientRequest, ContentBlock,
    ProtocolVersion, ServerResult,
};
use rmcp::service::{PeerRequestOptions, RunningService, ServiceError};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

use crate::Config;
use crate::failure::{Failure, Kind};

pub(crate) struct Session {
    service: RunningService<RoleClient, ClientConfig>,
}

impl Session {
    /// Starts the transport and performs rmcp's `initialize` handshake. On success returns the
    /// session and the step's `ok` payload.
    pub async fn connect(config: &Config) -> Result<(Session, Value), Failure> {
        let info = client_info(config);
        let service = match config.transport.as_str() {
            "stdio" => {
                let argv = config.server_command.as_deref().unwrap_or_default();
                let Some((program, args)) = argv.split_first() else {
                    return Err(Failure::new(
                        Kind::TransportClosed,
                        "MCP_HARNESS_SERVER_COMMAND names no server to launch",
                    ));
                };
                let mut command = tokio::process::Command::new(program);
                command.args(args);
                let (transport, _) = TokioChildProcess::builder(command)
                    .stderr(Stdio::inherit())
                    .spawn()
                    .map_err(|e| {
                        Failure::new(
                            Kind::TransportClosed,
                            format!("could not launch the server: {e}"),
                        )
                    })?;
                info.serve(transport).await
            }
            "http" => {
                let Some(url) = config.url.as_deref() else {
                    return Err(Failure::new(
                        Kind::TransportClosed,
                        "MCP_HARNESS_SERVER_URL is not set",
                    ));
                };
                let client = http_client(config)?;
                let mut transport_config = StreamableHttpClientTransportConfig::with_uri(url);
                if let Some(token) = &config.bearer_token {
                    // rmcp sends it as `Authorization: Bearer <token>` on its requests.
                    transport_config = transport_config.auth_header(token.clone());
                }
                let transport =
                    StreamableHttpClientTransport::with_client(client, transport_config);
                info.serve(transport).await
            }
            other => {
                return Err(Failure::new(
                    Kind::TransportClosed,
                    format!("unknown MCP_HARNESS_TRANSPORT {other:?}"),
                ));
            }
        }
        .map_err(|e| Failure::from_initialize(&e))?;

        let peer = service.peer_info();
        let ok = json!({
            "protocolVersion": peer.as_ref().map(|p| p.protocol_version.as_str().to_owned()),
            "serverInfo": peer
                .as_ref()
                .and_then(|p| p.server_info.as_ref())
                .map(|s| serde_json::to_value(s).unwrap_or(Value::Null)),
        });
        Ok((Session { service }, ok))
    }

    /// rmcp's own list-all: follows `nextCursor` until it is absent, with no other guard.
    pub async fn list_tools(&self) -> Result<Value, Failure> {
        let tools = self
            .service
            .list_all_tools()
            .await
            .map_err(|e| Failure::from_service(&e))?;
        Ok(json!({ "tools": tools }))
    }

    /// `tools/call` through rmcp's cancellable request API, so the contract's per-request
    /// timeout maps onto `PeerRequestOptions::timeout` and `cancel_after_ms` onto
    /// `RequestHandle::cancel`; both make rmcp send `notifications/cancelled`.
    pub async fn call_tool(
        &self,
        step: &Value,
        timeout: Option<Duration>,
    ) -> Result<Value, Failure> {
        let Some(name) = step.get("name").and_then(Value::as_str) else {
            return Err(Failure::new(
                Kind::UnsupportedOp,
                format!("call_tool without a name: {step}"),
            ));
        };
        let cancel_after = match step.get("cancel_after_ms") {
            None | Some(Value::Null) => None,
            Some(ms) => match ms.as_u64() {
                Some(ms) => Some(Duration::from_millis(ms)),
                None => {
                    return Err(Failure::new(
                        Kind::UnsupportedOp,
                        format!("cancel_after_ms is not a non-negative integer: {step}"),
                    ));
                }
            },
        };
        let mut params = CallToolRequestParams::new(name.to_owned());
        match step.get("arguments") {
            None | Some(Value::Null) => {}
            Some(Value::Object(arguments)) => params = params.with_arguments(arguments.clone()),
            Some(other) => {
                return Err(Failure::new(
                    Kind::UnsupportedOp,
                    format!("call_tool arguments must be an object, got {other}"),
                ));
            }
        }
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let options = match timeout {
            Some(timeout) => PeerRequestOptions::with_timeout(timeout),
            None => PeerRequestOptions::no_options(),
        };
        let mut handle = self
            .service
            .send_cancellable_request(request, options)
            .await
            .map_err(|e| Failure::from_service(&e))?;

        // Whichever of the caller's cancel and rmcp's timeout comes first names the outcome.
        let answer = match cancel_after {
            Some(after) if timeout.is_none_or(|timeout| after < timeout) => {
                let raced = tokio::select! {
                    answer = &mut handle.rx => Some(answer),
                    () = tokio::time::sleep(after) => None,
                };
                match raced {
                    Some(Ok(answer)) => answer,
                    Some(Err(_)) => Err(ServiceError::TransportClosed),
                    None => {
                        let sent = handle.cancel(Some("cancelled by the caller".into())).await;
                        if let Err(e) = sent {
                            eprintln!("rmcp-adapter: sending notifications/cancelled failed: {e}");
                        }
                        return Err(Failure::new(
                            Kind::Cancelled,
                            format!("cancelled by the caller after {} ms", after.as_millis()),
                        ));
                    }
                }
            }
            _ => handle.await_response().await,
        };
        match answer.map_err(|e| Failure::from_service(&e))? {
            ServerResult::CallToolResult(result) => {
                if result.is_error == Some(true) {
                    let texts = texts(&result.content);
                    return Err(Failure::new(Kind::ToolError, texts.join("\n")));
                }
                Ok(match result.structured_content {
                    Some(structured) if !structured.is_null() => {
                        json!({ "structured": structured })
                    }
                    _ => json!({ "text": texts(&result.content) }),
                })
            }
            other => Err(Failure::new(
                Kind::InvalidResponse,
                format!("tools/call was answered with an unexpected result: {other:?}"),
            )),
        }
    }

    /// rmcp's `RunningService::close`: cancels the service loop and waits for the transport to
    /// shut down (stdio: close stdin, wait, SIGTERM, wait, kill; HTTP: end the session).
    pub async fn close(mut self) -> Result<(), Failure> {
        match self.service.close().await {
            Ok(reason) => {
                eprintln!("rmcp-adapter: closed ({reason:?})");
                Ok(())
            }
            Err(e) => Err(Failure::new(
                Kind::TransportClosed,
                format!("close failed: {e}"),
            )),
        }
    }
}

fn texts(content: &[ContentBlock]) -> Vec<String> {
    content
        .iter()
        .filter_map(ContentBlock::as_text)
        .map(|text| text.text.clone())
        .collect()
}

/// rmcp's default client info, offering the harness's protocol version (rmcp lets the caller
/// choose it through `InitializeRequestParams::protocol_version`).
fn client_info(config: &Config) -> ClientConfig {
    let info = ClientConfig::default();
    match &config.protocol_version {
        Some(version) => match serde_json::from_value::<ProtocolVersion>(json!(version)) {
            Ok(version) => info.with_protocol_version(version),
            Err(e) => {
                eprintln!("rmcp-adapter: ignoring protocol version {version:?}: {e}");
                info
            }
        },
        None => info,
    }
}

/// The reqwest client rmcp's streamable HTTP transport runs on: rustls with ring, trusting the
/// platform's roots plus this run's CA. Verification stays on.
fn http_client(config: &Config) -> Result<reqwest::Client, Failure> {
    // rmcp's reqwest is built without a crypto provider; ring is ours. Only the first install wins.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut builder = reqwest::Client::builder();
    if let Some(path) = &config.ca_file {
        match std::fs::read(path).map(|pem| reqwest::Certificate::from_pem_bundle(&pem)) {
            Ok(Ok(certs)) => builder = builder.tls_certs_merge(certs),
            Ok(Err(e)) => eprintln!("rmcp-adapter: the CA file {path} holds no usable PEM: {e}"),
            Err(e) => eprintln!("rmcp-adapter: cannot read the CA file {path}: {e}"),
        }
    }
    builder
        .build()
        .map_err(|e| Failure::new(Kind::Tls, format!("could not build the HTTP client: {e}")))
}

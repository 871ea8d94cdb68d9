//! One rmcp client connection: connect (stdio child process or streamable HTTP), list tools,
//! call a tool (with rmcp's per-request timeout and cancellation), discover, close.
//!
//! The era (MCP_HARNESS_ERA) picks rmcp's lifecycle: unset or `legacy` is `serve` (the
//! `initialize` handshake, as before); `modern` is `ClientLifecycleMode::Discover` (a
//! `server/discover` probe, no fallback); `dual` is `ClientLifecycleMode::Auto` (the probe,
//! then `initialize` on a legacy answer or after rmcp's fixed 10 s probe timeout). The
//! preferred versions are the harness's version, then rmcp's newest modern one.

use std::process::Stdio;
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig,
    ClientRequest, ProtocolVersion, RequestMetaObject, ServerResult,
};
use rmcp::service::{
    ClientInitializeError, ClientLifecycleMode, ClientServiceExt, PeerRequestOptions,
    RunningService, ServiceError,
};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

use mcp_harness_kit::{
    CallTool, Env, Era, Events, Kind, StepError, Transport, declared_capabilities, tool_result,
};
use serde_json::Map;

use crate::failure;
use crate::handler::{Answers, Handler, ProgressTokens, Refused};
use crate::requests::{listed, to_value};

pub(crate) struct Session {
    pub(crate) service: RunningService<RoleClient, Handler>,
    /// The plan's input answers for the call in progress (read by the handler).
    pub(crate) answers: Answers,
    /// `connect`'s handlers (read by the handler; `set_roots` replaces `roots/list`).
    pub(crate) handlers: Answers,
    /// Set by the handler when it refused an input request of the call in progress.
    pub(crate) refused: Refused,
    /// What the client surfaced since the last `events` step.
    pub(crate) events: Events,
    /// The progress tokens of the calls in flight that asked for progress.
    pub(crate) progress: ProgressTokens,
    /// Connected in the modern era (2026-07-28): calls go through rmcp's multi round-trip helper.
    pub(crate) modern: bool,
    /// The open `subscriptions/listen` streams, each drained into `events` by its own task.
    pub(crate) listens: Vec<tokio::task::JoinHandle<()>>,
}

/// Removes a call's progress token from the registry once the call is over, however it ends.
struct InFlight {
    tokens: ProgressTokens,
    token: Option<rmcp::model::ProgressToken>,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if let Some(token) = self.token.take() {
            self.tokens
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(&token);
        }
    }
}

/// rmcp's lifecycle for the harness's era.
fn lifecycle(env: &Env) -> Option<ClientLifecycleMode> {
    let mut preferred = Vec::new();
    if let Some(version) = env.protocol_version.as_deref().and_then(protocol_version) {
        preferred.push(version);
    }
    if !preferred.contains(&ProtocolVersion::LATEST) {
        preferred.push(ProtocolVersion::LATEST);
    }
    match env.era {
        Era::Modern => Some(ClientLifecycleMode::Discover {
            preferred_versions: preferred,
        }),
        Era::Dual => Some(ClientLifecycleMode::Auto {
            preferred_versions: preferred,
            legacy_version: env
                .legacy_protocol_version
                .as_deref()
                .and_then(protocol_version),
        }),
        Era::Legacy => None,
    }
}

fn protocol_version(text: &str) -> Option<ProtocolVersion> {
    serde_json::from_value::<ProtocolVersion>(json!(text))
        .map_err(|e| eprintln!("rmcp-adapter: ignoring protocol version {text:?}: {e}"))
        .ok()
}

/// Starts rmcp on `transport` in the harness's era.
async fn start<T, E, A>(
    handler: Handler,
    transport: T,
    env: &Env,
) -> Result<RunningService<RoleClient, Handler>, ClientInitializeError>
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    match lifecycle(env) {
        None => handler.serve(transport).await,
        Some(mode) => handler.serve_with_lifecycle(transport, mode).await,
    }
}

impl Session {
    /// Starts the transport and performs rmcp's `initialize` handshake. On success returns the
    /// session and the step's `ok` payload.
    pub async fn connect(
        env: &Env,
        handlers: &Map<String, Value>,
        oauth: Option<&crate::oauth::OAuth>,
    ) -> Result<(Session, Value), StepError> {
        let handlers = handlers.clone();
        let answers = Answers::default();
        let refused = Refused::default();
        let events = Events::default();
        let progress = ProgressTokens::default();
        let handler = Handler {
            info: client_info(env, &handlers),
            answers: answers.clone(),
            handlers: std::sync::Arc::new(std::sync::Mutex::new(handlers)),
            refused: refused.clone(),
            events: events.clone(),
            progress: progress.clone(),
        };
        let handlers = handler.handlers.clone();
        let service = match &env.transport {
            Transport::Stdio { command } => {
                let Some((program, args)) = command.split_first() else {
                    return Err(StepError::new(
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
                        StepError::new(
                            Kind::TransportClosed,
                            format!("could not launch the server: {e}"),
                        )
                    })?;
                start(handler, transport, env).await
            }
            Transport::Http { url, ca_file } => {
                let client = http_client(ca_file.as_deref())?;
                let mut transport_config =
                    StreamableHttpClientTransportConfig::with_uri(url.as_str());
                if let Some(token) = &env.bearer_token {
                    // rmcp sends it as `Authorization: Bearer <token>` on its requests.
                    transport_config = transport_config.auth_header(token.clone());
                }
                match oauth {
                    // Authorization trials: rmcp's AuthClient on the same reqwest client.
                    Some(oauth) => {
                        let client = oauth.client(client).await?;
                        let transport =
                            StreamableHttpClientTransport::with_client(client, transport_config);
                        start(handler, transport, env).await
                    }
                    None => {
                        let transport =
                            StreamableHttpClientTransport::with_client(client, transport_config);
                        start(handler, transport, env).await
                    }
                }
            }
        }
        .map_err(|e| match env.era {
            Era::Legacy => failure::from_initialize(&e),
            _ => failure::discover_refused(failure::from_initialize(&e)),
        })?;

        let peer = service.peer_info();
        let version = peer
            .as_ref()
            .map(|p| p.protocol_version.as_str().to_owned());
        // rmcp's modern versions start at 2026-07-28 (dates compare as text).
        let modern = version.as_deref().is_some_and(|v| v >= "2026-07-28");
        let mut ok = json!({
            "protocolVersion": version,
            "serverInfo": peer
                .as_ref()
                .and_then(|p| p.server_info.as_ref())
                .map(|s| serde_json::to_value(s).unwrap_or(Value::Null)),
        });
        if env.era != Era::Legacy {
            ok["era"] = json!(if modern { "modern" } else { "legacy" });
        }
        Ok((
            Session {
                service,
                answers,
                handlers,
                refused,
                events,
                progress,
                modern,
                listens: Vec::new(),
            },
            ok,
        ))
    }

    /// `server/discover` through rmcp's `Peer::discover` (which may answer from rmcp's cache).
    pub async fn discover(&self) -> Result<Value, StepError> {
        let Some(peer) = self.service.peer_info().filter(|_| self.modern) else {
            return Err(StepError::new(
                Kind::UnsupportedOp,
                "server/discover is a 2026-07-28 request; this connection speaks the legacy era",
            ));
        };
        let info = self.service.service().info.clone();
        let meta = RequestMetaObject::with_client_context(
            peer.protocol_version.clone(),
            info.client_info,
            info.capabilities,
        );
        let result = self
            .service
            .peer()
            .discover(meta)
            .await
            .map_err(|e| failure::from_service(&e))?;
        to_value(&result)
    }

    pub async fn list_tools(&self) -> Result<Value, StepError> {
        listed("tools", self.service.list_all_tools()).await
    }

    /// `tools/call` through rmcp's cancellable request API, so the contract's per-request
    /// timeout maps onto `PeerRequestOptions::timeout` and `cancel_after_ms` onto
    /// `RequestHandle::cancel`; both make rmcp send `notifications/cancelled`.
    pub async fn call_tool(
        &self,
        call: &CallTool,
        timeout: Option<Duration>,
    ) -> Result<Value, StepError> {
        let (cancel_after, progress) = (call.cancel_after, call.progress);
        let mut params = CallToolRequestParams::new(call.name.clone());
        if let Some(arguments) = &call.arguments {
            params = params.with_arguments(arguments.clone());
        }
        // rmcp's high-level call hides the request's progress token, so a call that asks for
        // progress goes through the cancellable request API (one round, no input rounds).
        if self.modern && cancel_after.is_none() && !progress {
            // rmcp's high-level call drives the multi round-trip rounds through the handler.
            self.set_answers(&call.input);
            let result = self
                .service
                .call_tool(params)
                .await
                .map_err(|e| self.input_failure(&e))?;
            return call_output(result);
        }
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let mut options = match timeout {
            Some(timeout) => PeerRequestOptions::with_timeout(timeout),
            None => PeerRequestOptions::no_options(),
        };
        // rmcp restarts the request timeout on each progress notification for the request's
        // token and gives up after `max_total_timeout` whatever arrived.
        if let Some(max) = call.max_timeout.filter(|_| progress) {
            options = options
                .reset_timeout_on_progress()
                .with_max_total_timeout(max);
        }
        // rmcp puts a progress token of its own choosing (a per-connection counter) in every
        // request's `_meta`; a call that asks for progress surfaces the notifications for it.
        let mut handle = self
            .service
            .send_cancellable_request(request, options)
            .await
            .map_err(|e| failure::from_service(&e))?;
        let _in_flight = InFlight {
            tokens: self.progress.clone(),
            token: progress.then(|| {
                let token = handle.progress_token.clone();
                self.progress
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(token.clone());
                token
            }),
        };

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
                        return Err(StepError::new(
                            Kind::Cancelled,
                            format!("cancelled by the caller after {} ms", after.as_millis()),
                        ));
                    }
                }
            }
            _ => handle.await_response().await,
        };
        match answer.map_err(|e| failure::from_service(&e))? {
            ServerResult::CallToolResult(result) => call_output(result),
            other => Err(StepError::new(
                Kind::InvalidResponse,
                format!("tools/call was answered with an unexpected result: {other:?}"),
            )),
        }
    }

    /// rmcp's `RunningService::close`: cancels the service loop and waits for the transport to
    /// shut down (stdio: close stdin, wait, SIGTERM, wait, kill; HTTP: end the session).
    pub async fn close(mut self) -> Result<(), StepError> {
        // The listen streams end with the connection; their tasks hold rmcp subscriptions.
        for listen in self.listens.drain(..) {
            listen.abort();
        }
        match self.service.close().await {
            Ok(reason) => {
                eprintln!("rmcp-adapter: closed ({reason:?})");
                Ok(())
            }
            Err(e) => Err(StepError::new(
                Kind::TransportClosed,
                format!("close failed: {e}"),
            )),
        }
    }
}

/// The contract's reading of a tool result (the kit's), from the JSON rmcp writes for it.
pub(crate) fn call_output(result: CallToolResult) -> Result<Value, StepError> {
    tool_result(&to_value(&result)?)
}

/// rmcp's default client info, offering the harness's protocol version (rmcp lets the caller
/// choose it through `InitializeRequestParams::protocol_version`), with exactly the client
/// capabilities `connect`'s handlers and the plan's `input` answers imply.
fn client_info(env: &Env, handlers: &Map<String, Value>) -> ClientConfig {
    let mut info = ClientConfig::default();
    if let Some(version) = &env.protocol_version {
        match serde_json::from_value::<ProtocolVersion>(json!(version)) {
            Ok(version) => info = info.with_protocol_version(version),
            Err(e) => eprintln!("rmcp-adapter: ignoring protocol version {version:?}: {e}"),
        }
    }
    let (capabilities, ignored) =
        declared_capabilities(handlers, &env.plan, info.protocol_version.as_str());
    for method in ignored {
        eprintln!("rmcp-adapter: no client capability answers {method:?}; ignoring its handler");
    }
    if !capabilities.is_empty() {
        match serde_json::from_value::<ClientCapabilities>(Value::Object(capabilities)) {
            Ok(declared) => info.capabilities = declared,
            Err(e) => eprintln!("rmcp-adapter: could not declare the client capabilities: {e}"),
        }
    }
    // The tasks extension, for a plan with a task step (rmcp stamps these capabilities on
    // every request of a modern connection).
    if env.era != Era::Legacy && crate::tasks::planned(&env.plan) {
        crate::tasks::declare(&mut info.capabilities);
    }
    info
}

/// The reqwest client rmcp's streamable HTTP transport runs on: rustls with ring, trusting the
/// platform's roots plus this run's CA. Verification stays on. Its redirect policy is the one
/// rmcp's own default client has ([`rmcp_redirect_policy`]): a client of the adapter's own,
/// needed for the CA, must not change what rmcp follows.
fn http_client(ca_file: Option<&str>) -> Result<reqwest::Client, StepError> {
    // rmcp's reqwest is built without a crypto provider; ring is ours. Only the first install wins.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut builder = reqwest::Client::builder().redirect(rmcp_redirect_policy());
    if let Some(path) = ca_file {
        match std::fs::read(path).map(|pem| reqwest::Certificate::from_pem_bundle(&pem)) {
            Ok(Ok(certs)) => builder = builder.tls_certs_merge(certs),
            Ok(Err(e)) => eprintln!("rmcp-adapter: the CA file {path} holds no usable PEM: {e}"),
            Err(e) => eprintln!("rmcp-adapter: cannot read the CA file {path}: {e}"),
        }
    }
    builder
        .build()
        .map_err(|e| StepError::new(Kind::Tls, format!("could not build the HTTP client: {e}")))
}

/// rmcp 3.11.0's redirect policy for its default transport client
/// (`StreamableHttpClientTransport::from_uri`/`from_config`, private there, so restated here):
/// follow a same-origin 307 or 308 (which keep the method and body), at most 10 hops; hand any
/// other redirect (a 301, 302 or 303, or one to another origin) back to rmcp as the response.
fn rmcp_redirect_policy() -> reqwest::redirect::Policy {
    const MAX_REDIRECTS: usize = 10;
    reqwest::redirect::Policy::custom(|attempt| {
        let preserves_body = matches!(
            attempt.status(),
            reqwest::StatusCode::TEMPORARY_REDIRECT | reqwest::StatusCode::PERMANENT_REDIRECT
        );
        let same_origin = attempt
            .previous()
            .first()
            .is_some_and(|original| original.origin() == attempt.url().origin());
        if !preserves_body || !same_origin {
            attempt.stop()
        } else if attempt.previous().len() > MAX_REDIRECTS {
            attempt.error(format!("exceeded {MAX_REDIRECTS} redirects"))
        } else {
            attempt.follow()
        }
    })
}

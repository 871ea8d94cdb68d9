//! One rmcp client connection: connect (stdio child process or streamable HTTP), list tools,
//! call a tool (with rmcp's per-request timeout and cancellation), discover, close.
//!
//! The era (MCP_HARNESS_ERA) picks rmcp's lifecycle: unset or `legacy` is `serve` (the
//! `initialize` handshake, as before); `modern` is `ClientLifecycleMode::Discover` (a
//! `server/discover` probe, no fallback); `dual` is `ClientLifecycleMode::Auto` (the probe,
//! then `initialize` on a legacy answer or after rmcp's fixed 10 s probe timeout). The
//! preferred versions are the harness's version, then rmcp's newest modern one.

use std::future::Future;
use std::process::Stdio;
use std::sync::atomic::Ordering;
use std::time::Duration;

#[allow(deprecated)]
// LoggingLevel, SetLevelRequestParams: logging is deprecated in rmcp (SEP-2577).
use rmcp::model::{
    ArgumentInfo, CallToolRequest, CallToolRequestParams, CallToolResult, ClientCapabilities,
    ClientConfig, ClientRequest, CompleteRequestParams, CompletionContext, ContentBlock,
    GetPromptRequestParams, LoggingLevel, PingRequest, ProtocolVersion, ReadResourceRequestParams,
    Reference, RequestMetaObject, ServerResult, SetLevelRequestParams,
};
use rmcp::service::{
    ClientInitializeError, ClientLifecycleMode, ClientServiceExt, PeerRequestOptions,
    RunningService, ServiceError,
};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

use crate::Config;
use crate::content;
use crate::events::{self, Events};
use crate::failure::{Failure, Kind};
use crate::handler::{Answers, Handler, ProgressTokens, Refused};

pub(crate) struct Session {
    service: RunningService<RoleClient, Handler>,
    /// The plan's input answers for the call in progress (read by the handler).
    answers: Answers,
    /// `connect`'s handlers (read by the handler; `set_roots` replaces `roots/list`).
    handlers: Answers,
    /// Set by the handler when it refused an input request of the call in progress.
    refused: Refused,
    /// What the client surfaced since the last `events` step.
    events: Events,
    /// The progress tokens of the calls in flight that asked for progress.
    progress: ProgressTokens,
    /// Connected in the modern era (2026-07-28): calls go through rmcp's multi round-trip helper.
    modern: bool,
    /// The open `subscriptions/listen` streams, each drained into `events` by its own task.
    listens: Vec<tokio::task::JoinHandle<()>>,
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
fn lifecycle(config: &Config) -> Option<ClientLifecycleMode> {
    let mut preferred = Vec::new();
    if let Some(version) = config
        .protocol_version
        .as_deref()
        .and_then(protocol_version)
    {
        preferred.push(version);
    }
    if !preferred.contains(&ProtocolVersion::LATEST) {
        preferred.push(ProtocolVersion::LATEST);
    }
    match config.era.as_str() {
        "modern" => Some(ClientLifecycleMode::Discover {
            preferred_versions: preferred,
        }),
        "dual" => Some(ClientLifecycleMode::Auto {
            preferred_versions: preferred,
            legacy_version: config.legacy_version.as_deref().and_then(protocol_version),
        }),
        _ => None,
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
    config: &Config,
) -> Result<RunningService<RoleClient, Handler>, ClientInitializeError>
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    match lifecycle(config) {
        None => handler.serve(transport).await,
        Some(mode) => handler.serve_with_lifecycle(transport, mode).await,
    }
}

impl Session {
    /// Starts the transport and performs rmcp's `initialize` handshake. On success returns the
    /// session and the step's `ok` payload.
    pub async fn connect(config: &Config, step: &Value) -> Result<(Session, Value), Failure> {
        let handlers = match step.get("handlers") {
            None | Some(Value::Null) => serde_json::Map::new(),
            Some(Value::Object(handlers)) => handlers.clone(),
            Some(other) => {
                return Err(Failure::new(
                    Kind::UnsupportedOp,
                    format!("connect's handlers must be an object by method, got {other}"),
                ));
            }
        };
        let answers = Answers::default();
        let refused = Refused::default();
        let events = Events::default();
        let progress = ProgressTokens::default();
        let handler = Handler {
            info: client_info(config, &handlers),
            answers: answers.clone(),
            handlers: std::sync::Arc::new(std::sync::Mutex::new(handlers)),
            refused: refused.clone(),
            events: events.clone(),
            progress: progress.clone(),
        };
        let handlers = handler.handlers.clone();
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
                start(handler, transport, config).await
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
                start(handler, transport, config).await
            }
            other => {
                return Err(Failure::new(
                    Kind::TransportClosed,
                    format!("unknown MCP_HARNESS_TRANSPORT {other:?}"),
                ));
            }
        }
        .map_err(|e| match config.era.as_str() {
            "legacy" => Failure::from_initialize(&e),
            _ => Failure::from_initialize(&e).discover_refused(),
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
        if config.era != "legacy" {
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
    pub async fn discover(&self) -> Result<Value, Failure> {
        let Some(peer) = self.service.peer_info().filter(|_| self.modern) else {
            return Err(Failure::new(
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
            .map_err(|e| Failure::from_service(&e))?;
        serde_json::to_value(result).map_err(|e| Failure::new(Kind::InvalidResponse, e.to_string()))
    }

    pub async fn list_tools(&self) -> Result<Value, Failure> {
        listed("tools", self.service.list_all_tools()).await
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
        let progress = match step.get("progress") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(progress)) => *progress,
            Some(other) => {
                return Err(Failure::new(
                    Kind::UnsupportedOp,
                    format!("call_tool's progress must be a boolean, got {other}"),
                ));
            }
        };
        let max_timeout = match step.get("max_timeout_ms") {
            None | Some(Value::Null) => None,
            Some(ms) => match ms.as_u64() {
                Some(ms) => Some(Duration::from_millis(ms)),
                None => {
                    return Err(Failure::new(
                        Kind::UnsupportedOp,
                        format!("max_timeout_ms is not a non-negative integer: {step}"),
                    ));
                }
            },
        };
        // rmcp's high-level call hides the request's progress token, so a call that asks for
        // progress goes through the cancellable request API (one round, no input rounds).
        if self.modern && cancel_after.is_none() && !progress {
            // rmcp's high-level call drives the multi round-trip rounds through the handler.
            self.set_answers(step);
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
        if let Some(max) = max_timeout.filter(|_| progress) {
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
            .map_err(|e| Failure::from_service(&e))?;
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
            ServerResult::CallToolResult(result) => call_output(result),
            other => Err(Failure::new(
                Kind::InvalidResponse,
                format!("tools/call was answered with an unexpected result: {other:?}"),
            )),
        }
    }

    /// rmcp's `RunningService::close`: cancels the service loop and waits for the transport to
    /// shut down (stdio: close stdin, wait, SIGTERM, wait, kill; HTTP: end the session).
    pub async fn close(mut self) -> Result<(), Failure> {
        // The listen streams end with the connection; their tasks hold rmcp subscriptions.
        for listen in self.listens.drain(..) {
            listen.abort();
        }
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

fn call_output(result: CallToolResult) -> Result<Value, Failure> {
    if result.is_error == Some(true) {
        let texts = texts(&result.content);
        return Err(Failure::new(Kind::ToolError, texts.join("\n")));
    }
    let content = content::blocks(&result.content)?;
    let mut ok = match result.structured_content {
        Some(structured) if !structured.is_null() => json!({ "structured": structured }),
        _ => json!({ "text": texts(&result.content) }),
    };
    ok["content"] = Value::Array(content);
    Ok(ok)
}

fn texts(content: &[ContentBlock]) -> Vec<String> {
    content
        .iter()
        .filter_map(ContentBlock::as_text)
        .map(|text| text.text.clone())
        .collect()
}

/// rmcp's default client info, offering the harness's protocol version (rmcp lets the caller
/// choose it through `InitializeRequestParams::protocol_version`), with exactly the client
/// capabilities `connect`'s handlers and the plan's `input` answers imply.
fn client_info(config: &Config, handlers: &serde_json::Map<String, Value>) -> ClientConfig {
    let mut info = ClientConfig::default();
    if let Some(version) = &config.protocol_version {
        match serde_json::from_value::<ProtocolVersion>(json!(version)) {
            Ok(version) => info = info.with_protocol_version(version),
            Err(e) => eprintln!("rmcp-adapter: ignoring protocol version {version:?}: {e}"),
        }
    }
    // Elicitation modes exist from 2025-11-25 on (dates compare as text).
    let modes = info.protocol_version.as_str() >= "2025-11-25";
    let mut capabilities = serde_json::Map::new();
    for method in planned_input_methods(&config.plan) {
        let name = match method.as_str() {
            "elicitation/create" => "elicitation",
            "sampling/createMessage" => "sampling",
            "roots/list" => "roots",
            _ => continue,
        };
        capabilities.insert(name.into(), json!({}));
    }
    for (method, handler) in handlers {
        let (name, declared) = match method.as_str() {
            "roots/list" => ("roots", json!({ "listChanged": true })),
            "sampling/createMessage" => ("sampling", json!({})),
            "elicitation/create" if modes => ("elicitation", elicitation_modes(handler)),
            "elicitation/create" => ("elicitation", json!({})),
            other => {
                eprintln!(
                    "rmcp-adapter: no client capability answers {other:?}; ignoring its handler"
                );
                continue;
            }
        };
        capabilities.insert(name.into(), declared);
    }
    if !capabilities.is_empty() {
        match serde_json::from_value::<ClientCapabilities>(Value::Object(capabilities)) {
            Ok(declared) => info.capabilities = declared,
            Err(e) => eprintln!("rmcp-adapter: could not declare the client capabilities: {e}"),
        }
    }
    info
}

/// `{"form":{}}` for a single answer; the modes named for a handler keyed by mode.
fn elicitation_modes(handler: &Value) -> Value {
    match handler.as_object() {
        Some(by_mode) if !by_mode.contains_key("action") => Value::Object(
            by_mode
                .keys()
                .filter(|mode| matches!(mode.as_str(), "form" | "url"))
                .map(|mode| (mode.clone(), json!({})))
                .collect(),
        ),
        _ => json!({ "form": {} }),
    }
}

fn planned_input_methods(plan: &[Value]) -> Vec<String> {
    plan.iter()
        .filter_map(|step| step.get("input").and_then(Value::as_object))
        .flat_map(|answers| answers.keys().cloned())
        .collect()
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

/// The rest of what a client asks (CLIENTS.md): resources, prompts, completion, ping, log level.
///
/// Listings go through rmcp's own list-all helpers, as `list_tools` does (see [`listed`]).
/// Single requests go through rmcp's typed helpers
/// (`RunningService::read_resource`/`get_prompt`, which drive 2026-07-28's `input_required`
/// rounds, `Peer::complete`, `Peer::set_level`), under the contract's per-request timeout the way
/// rmcp documents it: dropping a helper's future (`tokio::time::timeout`) makes rmcp send
/// `notifications/cancelled` for the request. rmcp has no ping helper, so `ping` is its generic
/// `send_cancellable_request` with `PeerRequestOptions::timeout`. rmcp checks no server
/// capability before sending, and its README's client examples do not read
/// `peer_info().capabilities` first (CLIENTS.md, "It leaves capability checks to its user"), so
/// no step here reports `capability_missing`.
impl Session {
    pub async fn list_resources(&self) -> Result<Value, Failure> {
        listed("resources", self.service.list_all_resources()).await
    }

    pub async fn list_resource_templates(&self) -> Result<Value, Failure> {
        listed(
            "resourceTemplates",
            self.service.list_all_resource_templates(),
        )
        .await
    }

    pub async fn list_prompts(&self) -> Result<Value, Failure> {
        listed("prompts", self.service.list_all_prompts()).await
    }

    pub async fn read_resource(
        &self,
        step: &Value,
        timeout: Option<Duration>,
    ) -> Result<Value, Failure> {
        let Some(uri) = step.get("uri").and_then(Value::as_str) else {
            return Err(Failure::new(
                Kind::UnsupportedOp,
                format!("read_resource without a string uri: {step}"),
            ));
        };
        self.set_answers(step);
        let params = ReadResourceRequestParams::new(uri);
        let result = within(timeout, self.service.read_resource(params))
            .await?
            .map_err(|e| self.input_failure(&e))?;
        let contents = result
            .contents
            .iter()
            .map(content::resource_contents)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(json!({ "contents": contents }))
    }

    pub async fn get_prompt(
        &self,
        step: &Value,
        timeout: Option<Duration>,
    ) -> Result<Value, Failure> {
        let Some(name) = step.get("name").and_then(Value::as_str) else {
            return Err(Failure::new(
                Kind::UnsupportedOp,
                format!("get_prompt without a string name: {step}"),
            ));
        };
        let mut params = GetPromptRequestParams::new(name);
        match step.get("arguments") {
            None | Some(Value::Null) => {}
            // rmcp takes the arguments as a JSON object and sends them as given.
            Some(Value::Object(arguments)) => params = params.with_arguments(arguments.clone()),
            Some(other) => {
                return Err(Failure::new(
                    Kind::UnsupportedOp,
                    format!("get_prompt arguments must be an object, got {other}"),
                ));
            }
        }
        self.set_answers(step);
        let result = within(timeout, self.service.get_prompt(params))
            .await?
            .map_err(|e| self.input_failure(&e))?;
        let mut messages = Vec::with_capacity(result.messages.len());
        for message in &result.messages {
            messages.push(json!({
                "role": content::to_value(&message.role)?,
                "content": content::block(&message.content)?,
            }));
        }
        let mut ok = json!({ "messages": messages });
        if let Some(description) = &result.description {
            ok["description"] = json!(description);
        }
        Ok(ok)
    }

    pub async fn complete(
        &self,
        step: &Value,
        timeout: Option<Duration>,
    ) -> Result<Value, Failure> {
        // rmcp types every member: a `ref` of another type, an argument or context it cannot
        // hold, cannot be sent through it at all.
        let reference: Reference = typed(step, "ref")?;
        let argument: ArgumentInfo = typed(step, "argument")?;
        let mut params = CompleteRequestParams::new(reference, argument);
        if step.get("context").is_some_and(|c| !c.is_null()) {
            params = params.with_context(typed::<CompletionContext>(step, "context")?);
        }
        let result = within(timeout, self.service.complete(params))
            .await?
            .map_err(|e| Failure::from_service(&e))?;
        content::to_value(&result.completion)
    }

    pub async fn ping(&self, timeout: Option<Duration>) -> Result<Value, Failure> {
        let request = ClientRequest::PingRequest(PingRequest::default());
        let options = match timeout {
            Some(timeout) => PeerRequestOptions::with_timeout(timeout),
            None => PeerRequestOptions::no_options(),
        };
        let handle = self
            .service
            .send_cancellable_request(request, options)
            .await
            .map_err(|e| Failure::from_service(&e))?;
        // Any result answers the ping; rmcp decodes `{}` as its `EmptyResult`.
        handle
            .await_response()
            .await
            .map_err(|e| Failure::from_service(&e))?;
        Ok(json!({}))
    }

    #[allow(deprecated)] // rmcp marks logging deprecated (SEP-2577); it still sends it.
    pub async fn set_logging_level(
        &self,
        step: &Value,
        timeout: Option<Duration>,
    ) -> Result<Value, Failure> {
        let level: LoggingLevel = typed(step, "level")?;
        within(
            timeout,
            self.service.set_level(SetLevelRequestParams::new(level)),
        )
        .await?
        .map_err(|e| Failure::from_service(&e))?;
        Ok(json!({}))
    }

    /// The step's input answers (2026-07-28 `input_required` rounds), as `call_tool` sets them.
    fn set_answers(&self, step: &Value) {
        let answers = match step.get("input") {
            Some(Value::Object(answers)) => answers.clone(),
            _ => serde_json::Map::new(),
        };
        *self.answers.lock().unwrap_or_else(|p| p.into_inner()) = answers;
        self.refused.store(false, Ordering::SeqCst);
    }

    /// A failure of a helper that may have driven input rounds. rmcp hands the handler's refusal
    /// back as an McpError of its own making (the server sent a result, not an error): that is
    /// `input_unsupported`; everything else maps as usual.
    fn input_failure(&self, error: &ServiceError) -> Failure {
        match (error, self.refused.load(Ordering::SeqCst)) {
            (ServiceError::McpError(data), true) => Failure::new(
                Kind::InputUnsupported,
                format!(
                    "the server asked for an input this request has no answer for: {}",
                    data.message
                ),
            ),
            _ => Failure::from_service(error),
        }
    }
}

/// One of rmcp's own list-all helpers (`Peer::list_all_*`), which follow `nextCursor` until it
/// is absent and nothing more: no timeout, no cursor or duplicate check. The entries go under
/// `key`, as rmcp serialises them.
async fn listed<T: serde::Serialize>(
    key: &str,
    all: impl Future<Output = Result<Vec<T>, ServiceError>>,
) -> Result<Value, Failure> {
    let entries = all.await.map_err(|e| Failure::from_service(&e))?;
    Ok(json!({ key: content::to_value(&entries)? }))
}

/// Runs one rmcp helper under the contract's per-request timeout. On expiry the helper's future
/// is dropped, and rmcp sends `notifications/cancelled` for its request.
async fn within<T>(
    timeout: Option<Duration>,
    request: impl Future<Output = T>,
) -> Result<T, Failure> {
    match timeout {
        None => Ok(request.await),
        Some(limit) => tokio::time::timeout(limit, request).await.map_err(|_| {
            Failure::new(
                Kind::Timeout,
                format!("no answer within {} ms", limit.as_millis()),
            )
        }),
    }
}

/// A step member as rmcp's type for it; what the type cannot hold cannot be sent through rmcp.
fn typed<T: serde::de::DeserializeOwned>(step: &Value, member: &str) -> Result<T, Failure> {
    let value = step.get(member).cloned().unwrap_or(Value::Null);
    serde_json::from_value(value.clone()).map_err(|e| {
        Failure::new(
            Kind::UnsupportedOp,
            format!(
                "rmcp's {} cannot hold the step's {member} {value}: {e}",
                std::any::type_name::<T>()
                    .rsplit("::")
                    .next()
                    .unwrap_or("type")
            ),
        )
    })
}

/// What the server starts (CLIENTS.md, "What the server starts"): events, roots, resource
/// subscriptions and `subscriptions/listen`, each through rmcp's own API.
impl Session {
    /// Everything surfaced since the last `events` step; with `min`, first waits (at most the
    /// request timeout, 5 s without one) until that many have arrived.
    pub async fn events(&self, step: &Value, timeout: Option<Duration>) -> Result<Value, Failure> {
        let min = match step.get("min") {
            None | Some(Value::Null) => 0,
            Some(min) => match min.as_u64().and_then(|m| usize::try_from(m).ok()) {
                Some(min) => min,
                None => {
                    return Err(Failure::new(
                        Kind::UnsupportedOp,
                        format!("events' min is not a non-negative integer: {step}"),
                    ));
                }
            },
        };
        let limit = timeout.unwrap_or(Duration::from_secs(5));
        let taken = self.events.take(min, limit).await;
        Ok(json!({ "events": taken }))
    }

    /// Replaces the roots `roots/list` is answered with and, when the client declared `roots`,
    /// tells the server through rmcp's `notify_roots_list_changed`.
    pub async fn set_roots(&self, step: &Value) -> Result<Value, Failure> {
        let Some(roots) = step.get("roots").and_then(Value::as_array) else {
            return Err(Failure::new(
                Kind::UnsupportedOp,
                format!("set_roots without a roots array: {step}"),
            ));
        };
        let declared = {
            let mut handlers = self.handlers.lock().unwrap_or_else(|p| p.into_inner());
            let declared = handlers.contains_key("roots/list");
            if declared {
                handlers.insert("roots/list".into(), json!({ "roots": roots }));
            }
            declared
        };
        if declared {
            self.service
                .notify_roots_list_changed()
                .await
                .map_err(|e| Failure::from_service(&e))?;
        }
        Ok(json!({}))
    }

    /// `resources/subscribe` through rmcp's `Peer::subscribe` (rmcp checks no capability).
    #[allow(deprecated)] // legacy-only in rmcp; the legacy eras still have it.
    pub async fn subscribe_resource(
        &self,
        step: &Value,
        timeout: Option<Duration>,
    ) -> Result<Value, Failure> {
        let uri = uri(step, "subscribe_resource")?;
        within(
            timeout,
            self.service
                .subscribe(rmcp::model::SubscribeRequestParams::new(uri)),
        )
        .await?
        .map_err(|e| Failure::from_service(&e))?;
        Ok(json!({}))
    }

    /// `resources/unsubscribe` through rmcp's `Peer::unsubscribe`.
    #[allow(deprecated)] // legacy-only in rmcp; the legacy eras still have it.
    pub async fn unsubscribe_resource(
        &self,
        step: &Value,
        timeout: Option<Duration>,
    ) -> Result<Value, Failure> {
        let uri = uri(step, "unsubscribe_resource")?;
        within(
            timeout,
            self.service
                .unsubscribe(rmcp::model::UnsubscribeRequestParams::new(uri)),
        )
        .await?
        .map_err(|e| Failure::from_service(&e))?;
        Ok(json!({}))
    }

    /// `subscriptions/listen` through rmcp's `Peer::listen`, which waits for the server's
    /// acknowledgment; the subscription then stays open until `close`, drained into `events` by
    /// a task of its own (rmcp routes its notifications past the handler).
    pub async fn listen(
        &mut self,
        step: &Value,
        timeout: Option<Duration>,
    ) -> Result<Value, Failure> {
        if !self.modern {
            return Err(Failure::new(
                Kind::UnsupportedOp,
                "subscriptions/listen is a 2026-07-28 request; this connection speaks the legacy era",
            ));
        }
        let filter: rmcp::model::SubscriptionFilter = typed(step, "notifications")?;
        let mut subscription = within(timeout, self.service.peer().listen(filter))
            .await?
            .map_err(|e| Failure::from_service(&e))?;
        let acknowledged = content::to_value(subscription.acknowledged())?;
        let events = self.events.clone();
        self.listens.push(tokio::spawn(async move {
            loop {
                match subscription.next().await {
                    Ok(Some(notification)) => {
                        if let Some(event) = events::from_notification(&notification) {
                            events.push(event);
                        }
                    }
                    Ok(None) => {
                        eprintln!(
                            "rmcp-adapter: the listen stream ended ({:?})",
                            subscription.end()
                        );
                        break;
                    }
                    Err(e) => {
                        eprintln!("rmcp-adapter: the listen stream failed: {e}");
                        break;
                    }
                }
            }
        }));
        Ok(json!({ "notifications": acknowledged }))
    }
}

fn uri(step: &Value, op: &str) -> Result<String, Failure> {
    step.get("uri")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| {
            Failure::new(
                Kind::UnsupportedOp,
                format!("{op} without a string uri: {step}"),
            )
        })
}

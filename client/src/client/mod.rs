//! The public MCP client: connect (handshake or era detection), list tools, call a tool, close;
//! the other server features (resources, prompts, completion, ping, log level) are in
//! [`features`].
//!
//! Each method is a short sequence of requests over a [`Session`]. The legacy era's exchanges
//! are here and in [`crate::handshake`]; the modern era's are in [`crate::era`]. The checks on
//! what comes back live in [`crate::handshake`], [`crate::listing`], [`crate::tools`],
//! [`crate::content`], [`crate::answers`] and [`crate::era`]. Before a request for a server
//! feature the client checks that the server declared it ([`Client::require`]).

mod features;
mod icons;
mod listening;
pub(crate) mod seams;
mod tasks;

use std::future::{Future, pending};
use std::sync::Arc;

use serde_json::{Value, json};

use crate::content;
use crate::era::discover;
use crate::era::ops::Modern;
use crate::era::param_headers;
use crate::era::{Connected, Era, InputHandler};
use crate::error::{Error, ErrorKind};
use crate::handshake::{Handshake, exchange};
use crate::listing::{ListKind, Listing};
use crate::options::{ClientOptions, HttpOptions, StdioCommand};
use crate::router::Router;
use crate::session::Session;
use crate::tasks::drive::Called;
use crate::tasks::{TaskCall, TaskOptions};
use crate::tools::{self, ToolResult};
use crate::transport::{HttpTransport, StdioTransport, Transport};
use seams::ClientSeams;

/// The error a 2025-11-25 server answers a request with that needs URL elicitations first
/// (URLElicitationRequiredError).
const URL_ELICITATION_REQUIRED: i64 = -32042;
/// A connected MCP client. Methods take `&self`, so several requests may be in flight at once.
///
/// Dropping a client that was not closed starts a best-effort shutdown on the current Tokio
/// runtime; the child is also killed on drop as a last resort. Prefer [`Client::close`].
pub struct Client {
    session: Arc<Session>,
    connection: Connection,
    /// The tools' output schemas from the last listing (see [`crate::schema`]).
    schemas: crate::schema::Known,
    /// The tasks carrying `subscriptions/listen` streams (see [`listening`]).
    listens: std::sync::Mutex<Vec<tokio::task::JoinHandle<()>>>,
    /// The tools' `execution.taskSupport` from the last listing (see [`tasks`]).
    task_support: crate::tasks::Support,
    /// An HTTP server's URL and CAs, where its icons may come from (see [`icons`]).
    icon_server: Option<icons::IconServer>,
}

/// The era the connection speaks, with what connect found.
enum Connection {
    /// The server answered `initialize` (legacy era, or a dual-era fallback).
    Legacy(Handshake),
    /// The server speaks the modern era.
    Modern(Modern),
}

impl Client {
    /// Starts the server `command` as a child process and performs the handshake.
    ///
    /// On any handshake failure the child is shut down before the error is returned.
    pub async fn connect_stdio(
        command: &StdioCommand,
        options: ClientOptions,
    ) -> Result<Self, Error> {
        let router = Arc::new(Router::with_seams(
            options.seams(),
            options.handlers.clone(),
        ));
        let transport = StdioTransport::spawn(command, Arc::clone(&router), &options)?;
        let session = Session::new(router, Transport::Stdio(transport), options);
        Self::establish(session, None, None).await
    }

    /// Connects to the Streamable HTTP endpoint `url` and performs the handshake.
    ///
    /// The URL is checked first, without any traffic: it must be `http` or `https`, and plain
    /// `http` only to a loopback host; otherwise the error is `insecure_url`. Certificates are
    /// always verified (system roots plus `http.ca_files`). On a handshake failure the session
    /// is closed (`DELETE` when the server gave a session id) before the error is returned.
    pub async fn connect_http(
        url: &str,
        http: HttpOptions,
        options: ClientOptions,
    ) -> Result<Self, Error> {
        let router = Arc::new(Router::with_seams(
            options.seams(),
            options.handlers.clone(),
        ));
        let transport = HttpTransport::connect(url, &http, &options, Arc::clone(&router))?;
        let session = Session::new(router, Transport::Http(transport), options);
        let icon_server = reqwest::Url::parse(url).ok().map(|url| icons::IconServer {
            url,
            ca_files: http.ca_files.clone(),
        });
        Self::establish(session, crate::era::origin(url), icon_server).await
    }

    /// The handshake (legacy era) or the era detection (modern and dual eras) over a fresh
    /// session; on failure the transport is shut down.
    async fn establish(
        session: Session,
        origin: Option<String>,
        icon_server: Option<icons::IconServer>,
    ) -> Result<Self, Error> {
        let session = Arc::new(session);
        // Delayed answers to server requests go out through the transport (see
        // [`crate::listener`]); weak, since the session owns the router that keeps this.
        let weak = Arc::downgrade(&session);
        session
            .router()
            .listener()
            .set_replier(Box::new(move |reply| {
                if let Some(session) = weak.upgrade() {
                    let _ = session.transport().send(&reply);
                }
            }));
        let options = session.options();
        let found = match options.era {
            Era::Legacy => exchange::run(&session, &options.protocol_version)
                .await
                .map(Connected::Legacy),
            Era::Modern | Era::Dual => {
                session.router().set_modern(true);
                discover::detect(&session, origin.as_deref()).await
            }
        };
        let connection = match found {
            Ok(Connected::Legacy(handshake)) => Connection::Legacy(handshake),
            Ok(Connected::Modern(found)) => {
                session.seams().after_modern_connect(&session).await;
                Connection::Modern(Modern::new(found))
            }
            Err(e) => {
                session.seams().clean_up_failed_connect(&session).await;
                return Err(e);
            }
        };
        Ok(Client {
            session,
            connection,
            schemas: Default::default(),
            listens: Default::default(),
            task_support: Default::default(),
            icon_server,
        })
    }

    /// What the server answered to `initialize`; `None` for a modern-era connection.
    pub fn handshake(&self) -> Option<&Handshake> {
        match &self.connection {
            Connection::Legacy(handshake) => Some(handshake),
            Connection::Modern(_) => None,
        }
    }

    /// What `connect` found: the legacy handshake, or a modern server.
    pub fn connected(&self) -> Connected {
        match &self.connection {
            Connection::Legacy(handshake) => Connected::Legacy(handshake.clone()),
            Connection::Modern(modern) => Connected::Modern(modern.found().clone()),
        }
    }

    /// Lists every tool, following `nextCursor` page by page; tools are returned as received.
    pub async fn list_tools(&self) -> Result<Vec<Value>, Error> {
        let tools = self.list_all(ListKind::TOOLS).await?;
        let session = &self.session;
        let keep_invalid = session.seams().keep_invalid_header_tools();
        let tools = param_headers::admit(session.transport().param_headers(), keep_invalid, tools);
        let tools = self.schemas.remembered(tools);
        self.task_support.remember(&tools);
        Ok(self.session.seams().tools_returned(tools))
    }

    /// Every entry of the listing `kind`, page by page (see [`crate::listing`]), once the
    /// server declared the capability the listing needs.
    async fn list_all(&self, kind: ListKind) -> Result<Vec<Value>, Error> {
        self.require(kind.method)?;
        let seams = self.session.seams();
        if let Connection::Modern(modern) = &self.connection {
            // A list change since the last listing ends its cached pages.
            if self.session.router().listener().take_changed(kind.method) {
                modern.forget(kind.method);
            }
        }
        let mut listing = Listing::new(kind, seams.listing_rules());
        let mut params = json!({});
        loop {
            let fetched = match &self.connection {
                Connection::Legacy(_) => {
                    match self.request(kind.method, params.clone(), pending()).await {
                        Err(e) if seams.resume_listing(&e) => {
                            self.request(kind.method, params, pending()).await
                        }
                        page => page,
                    }
                }
                Connection::Modern(modern) => {
                    modern.list_page(&self.session, kind.method, params).await
                }
            };
            let page = match fetched {
                Err(e) if seams.partial_listing_on_error(&e) => return Ok(listing.into_entries()),
                page => page?,
            };
            match listing.take_page(page)? {
                Some(cursor) => params = json!({"cursor": cursor}),
                None => return Ok(listing.into_entries()),
            }
        }
    }

    /// Refuses, with `capability_missing` and before anything is sent, a request the server
    /// cannot take (see [`need`]): a method the revision spoken does not have, or a server
    /// feature the server did not declare (in its `initialize` result, or its
    /// `server/discover` result). A modern connection whose discover result is not known (the
    /// era came from the per-origin cache) assumes every feature.
    fn require(&self, method: &str) -> Result<(), Error> {
        let (modern, version) = match &self.connection {
            Connection::Legacy(handshake) => (false, handshake.protocol_version()),
            Connection::Modern(_) => (true, None),
        };
        let seams = self.session.seams();
        let capability = match need(method, modern, version) {
            Need::Nothing => return Ok(()),
            Need::NotInRevision if seams.may_send_undeclared(false) => return Ok(()),
            Need::NotInRevision => {
                return Err(Error::new(
                    ErrorKind::CapabilityMissing,
                    format!(
                        "{method} is not a method of the 2026-07-28 revision this connection \
                         speaks; nothing was sent"
                    ),
                ));
            }
            Need::Capability(capability) => capability,
        };
        self.require_capability(capability, method)
    }

    /// Refuses `what` (a method, or a step without one) with `capability_missing` when the
    /// server did not declare `capability` (a modern connection whose discover result is
    /// not known assumes it did).
    fn require_capability(&self, capability: &str, what: &str) -> Result<(), Error> {
        let result = match &self.connection {
            Connection::Legacy(handshake) => Some(handshake.result()),
            Connection::Modern(modern) => modern.found().result.as_ref(),
        };
        let seams = self.session.seams();
        let Some(result) = result else {
            return Ok(());
        };
        let declared = result
            .get("capabilities")
            .and_then(|c| c.get(capability))
            .is_some_and(|c| !c.is_null());
        if seams.may_send_undeclared(declared) {
            return Ok(());
        }
        Err(Error::new(
            ErrorKind::CapabilityMissing,
            format!(
                "{what} needs the server capability {capability:?}, which the server did not \
                 declare; nothing was sent"
            ),
        ))
    }

    /// Calls the tool `name` with `arguments`.
    ///
    /// In the legacy eras a tool the server requires to run as a task (its
    /// `execution.taskSupport` is `required` in the last listing, and the server declared
    /// task-augmented `tools/call`) is called as one and the task driven to its end, as
    /// [`Client::call_tool_as_task`] does.
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Result<ToolResult, Error> {
        self.call_tool_cancellable(name, arguments, pending()).await
    }

    /// Calls the tool `name`, giving up with kind `cancelled` when `cancel` completes first.
    ///
    /// Cancelling stops the local wait and sends `notifications/cancelled` (a task is
    /// cancelled with `tasks/cancel`); it does not prove that the server stopped the work.
    pub async fn call_tool_cancellable(
        &self,
        name: &str,
        arguments: Value,
        cancel: impl Future<Output = ()>,
    ) -> Result<ToolResult, Error> {
        self.call_tool_with_input(name, arguments, &InputHandler::new(), cancel)
            .await
    }

    /// Calls the tool `name`, answering the server's input requests (modern era, multi
    /// round-trip) with `input`; cancelled as [`Client::call_tool_cancellable`]. In the
    /// legacy era `input` is not used.
    pub async fn call_tool_with_input(
        &self,
        name: &str,
        arguments: Value,
        input: &InputHandler,
        cancel: impl Future<Output = ()>,
    ) -> Result<ToolResult, Error> {
        let called = self.call_tool_inner(name, arguments, None, input, None, cancel);
        tasks::done(called.await)
    }

    /// `tools/call`, with `progress_token` in `params._meta` when given; as a task when the
    /// server makes it one (`task`: the caller accepts one; see [`tasks`]).
    async fn call_tool_inner(
        &self,
        name: &str,
        arguments: Value,
        progress_token: Option<Value>,
        input: &InputHandler,
        task: Option<&TaskOptions>,
        cancel: impl Future<Output = ()>,
    ) -> Result<TaskCall, Error> {
        self.require("tools/call")?;
        let started = tokio::time::Instant::now();
        // Built member by member: `json!` would copy the arguments through the serializer.
        let mut params = serde_json::Map::new();
        params.insert("name".into(), Value::from(name));
        params.insert("arguments".into(), arguments);
        if let Some(token) = progress_token {
            params.insert("_meta".into(), json!({"progressToken": token}));
        }
        let params = Value::Object(params);
        let mut cancel = std::pin::pin!(cancel);
        let called = match &self.connection {
            Connection::Legacy(_) => {
                let called = self.call_legacy(name, params, task, cancel.as_mut()).await;
                if let Err(e) = &called
                    && e.code == Some(URL_ELICITATION_REQUIRED)
                {
                    let listener = self.session.router().listener();
                    listener.url_elicitation_required(e.data.as_ref());
                }
                called
            }
            Connection::Modern(modern) => {
                let accept = task.is_some();
                self.call_modern(modern, params, input, accept, cancel.as_mut())
                    .await
            }
        };
        let result = match called {
            Ok(Called::Task(created)) if task.is_some_and(|t| t.background) => {
                return Ok(TaskCall::Task(created.task));
            }
            Ok(Called::Task(created)) => {
                let max = task.and_then(|t| t.max_time);
                self.drive(created, input, max.map(|max| started + max), cancel)
                    .await
            }
            Ok(Called::Done(result)) => Ok(result),
            Err(e) => Err(e),
        };
        self.tool_result(Some(name), result)
            .await
            .map(TaskCall::Done)
    }

    /// A `tools/call` result (or the failure to get one) as the caller's answer: checked
    /// against the tool's output schema (when `name` is known), its content as seen.
    async fn tool_result(
        &self,
        name: Option<&str>,
        result: Result<Value, Error>,
    ) -> Result<ToolResult, Error> {
        let seams = self.session.seams();
        let result = match (result, name) {
            (Ok(result), Some(name)) => {
                let budget = self.session.options().request_timeout;
                let policy = seams.schema_policy();
                self.schemas.check(name, result, policy, budget).await
            }
            (result, _) => result,
        };
        let output = result.and_then(|result| {
            // Read before the answer is taken, reported after it: `isError` wins.
            let content = content::blocks(result.get("content"), seams.content_rules());
            let output = seams.tool_output(result, tools::call_output)?;
            Ok(ToolResult {
                output,
                content: content?,
            })
        });
        seams.call_outcome(output, &self.session).await
    }

    /// A modern `tools/call` (declaring the tasks extension when the caller `accept`s a
    /// task). Refused with `HeaderMismatch` (-32020) over HTTP, the tools are listed again
    /// (not from the cache) and, when the tool's `x-mcp-header` annotations changed, the
    /// call is made once more with the headers they now ask for.
    async fn call_modern<C: Future<Output = ()>>(
        &self,
        modern: &Modern,
        params: Value,
        input: &InputHandler,
        accept: bool,
        mut cancel: std::pin::Pin<&mut C>,
    ) -> Result<Called, Error> {
        let session = &self.session;
        let name = params["name"].as_str().unwrap_or_default().to_owned();
        let known = session.transport().param_headers().cloned();
        let first = modern
            .call(
                session,
                "tools/call",
                params.clone(),
                input,
                accept,
                cancel.as_mut(),
            )
            .await;
        let (Err(e), Some(known)) = (&first, known) else {
            return first;
        };
        if e.code != Some(crate::era::HEADER_MISMATCH)
            || !session.seams().relist_on_header_mismatch()
        {
            return first;
        }
        // Unknown before (never listed) counts as no annotations: a retry with the same
        // headers could only be refused again.
        let before = known.of(&name).unwrap_or_default();
        modern.forget("tools/list");
        if self.list_tools().await.is_err() || known.of(&name).is_none_or(|now| now == before) {
            return first;
        }
        modern
            .call(session, "tools/call", params, input, accept, cancel)
            .await
    }

    /// Sends `server/discover` and returns the `DiscoverResult` as received. Only a modern-era
    /// connection can: in the legacy era this is `unsupported_op`.
    pub async fn discover(&self) -> Result<Value, Error> {
        match &self.connection {
            Connection::Modern(modern) => modern.discover(&self.session).await,
            Connection::Legacy(_) => Err(Error::new(
                ErrorKind::UnsupportedOp,
                "server/discover is a modern-era request; this connection speaks the legacy era",
            )),
        }
    }

    /// Shuts the connection down. Stdio: stdin closed, then SIGTERM, then SIGKILL, each after
    /// the grace period, and the child reaped. HTTP: the session is ended with `DELETE` (a 405
    /// answer is accepted) and the server stream stopped. Idempotent; afterwards every operation
    /// fails with `transport_closed`.
    pub async fn close(&self) {
        self.session.shutdown().await;
        let listens = std::mem::take(&mut *self.listens.lock().unwrap_or_else(|p| p.into_inner()));
        for task in listens {
            task.abort();
        }
    }

    /// A legacy-era request; when the HTTP server ended the session (404), a new one is
    /// started first.
    async fn request(
        &self,
        method: &str,
        params: Value,
        cancel: impl Future<Output = ()>,
    ) -> Result<Value, Error> {
        self.start_request(method, params).await?.wait(cancel).await
    }

    /// Sends a legacy-era request (after a new session, when the HTTP server ended the last
    /// one); the handle waits for its answer.
    async fn start_request(
        &self,
        method: &str,
        params: Value,
    ) -> Result<crate::session::InFlight<'_>, Error> {
        let session = &self.session;
        let lost = session.transport().take_session_lost();
        if session.seams().renew_lost_session(lost) {
            let options = session.options();
            let offered = match options.era {
                Era::Legacy => &options.protocol_version,
                Era::Modern | Era::Dual => &options.legacy_protocol_version,
            };
            exchange::run(session, offered).await.map_err(|e| Error {
                message: format!("starting a new session failed: {}", e.message),
                ..e
            })?;
        }
        session.start(method, params)
    }
}

/// What a request needs of the server before it is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Need {
    /// Nothing (`ping` in the legacy era, `server/discover`, …).
    Nothing,
    /// The server capability of its feature, declared.
    Capability(&'static str),
    /// Nothing can make it valid: the revision spoken has no such method.
    NotInRevision,
}

/// What `method` needs in the revision spoken: the modern era (`modern`), or the legacy
/// protocol `version` agreed. A feature's requests need its capability (`tools`,
/// `resources`, `prompts`, `completions`, `logging`), but in 2024-11-05, which had
/// completion requests and no `completions` capability to declare; 2026-07-28 has no `ping`
/// and no `logging/setLevel`, and its tasks extension no `tasks/result` and no `tasks/list`.
/// Legacy `tasks/list` and `tasks/cancel` need `tasks` (and its `list` or `cancel`, see
/// [`tasks`]).
fn need(method: &str, modern: bool, version: Option<&str>) -> Need {
    let capability = match method {
        "ping" | "logging/setLevel" | "tasks/result" | "tasks/list" if modern => {
            return Need::NotInRevision;
        }
        "tasks/list" | "tasks/cancel" if !modern => "tasks",
        "completion/complete" if !modern && version == Some("2024-11-05") => {
            return Need::Nothing;
        }
        "tools/list" | "tools/call" => "tools",
        "resources/list" | "resources/templates/list" | "resources/read" => "resources",
        "prompts/list" | "prompts/get" => "prompts",
        "completion/complete" => "completions",
        "logging/setLevel" => "logging",
        _ => return Need::Nothing,
    };
    Need::Capability(capability)
}

impl Drop for Client {
    fn drop(&mut self) {
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let session = Arc::clone(&self.session);
            runtime.spawn(async move { session.shutdown().await });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Need, need};

    #[test]
    fn each_request_needs_the_capability_of_its_feature() {
        let needs = |m| match need(m, false, Some("2025-06-18")) {
            Need::Capability(c) => c,
            Need::Nothing => "none",
            Need::NotInRevision => "absent",
        };
        assert_eq!(needs("tools/list"), "tools");
        assert_eq!(needs("tools/call"), "tools");
        assert_eq!(needs("resources/list"), "resources");
        assert_eq!(needs("resources/templates/list"), "resources");
        assert_eq!(needs("resources/read"), "resources");
        assert_eq!(needs("prompts/list"), "prompts");
        assert_eq!(needs("prompts/get"), "prompts");
        assert_eq!(needs("completion/complete"), "completions");
        assert_eq!(needs("logging/setLevel"), "logging");
        assert_eq!(needs("ping"), "none");
        assert_eq!(needs("server/discover"), "none");
    }

    #[test]
    fn what_a_request_needs_follows_the_revision() {
        let complete = "completion/complete";
        assert_eq!(need(complete, false, Some("2024-11-05")), Need::Nothing);
        assert_eq!(need(complete, false, None), Need::Capability("completions"));
        assert_eq!(need(complete, true, None), Need::Capability("completions"));
        for removed in ["ping", "logging/setLevel"] {
            assert_eq!(need(removed, true, None), Need::NotInRevision);
        }
        assert_eq!(need("ping", false, Some("2024-11-05")), Need::Nothing);
        assert_eq!(need("tools/call", true, None), Need::Capability("tools"));
    }
}

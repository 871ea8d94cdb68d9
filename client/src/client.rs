//! The public MCP client: connect (handshake), list tools, call a tool, close.
//!
//! Each method is a short sequence of requests over a [`Session`]; the checks on what comes
//! back live in [`crate::handshake`] and [`crate::tools`].

use std::future::{Future, pending};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{Value, json};

use crate::era::ops::Modern;
use crate::era::{self, Connected, Era, InputHandler};
use crate::error::{Error, ErrorKind};
use crate::handshake::{self, Handshake};
use crate::options::{ClientOptions, HttpOptions, StdioCommand};
use crate::router::Router;
use crate::session::Session;
use crate::tools::{self, Listing, NAIVE_PAGE_LIMIT, ToolOutput};
use crate::transport::{HttpTransport, StdioTransport, Transport};

/// A connected MCP client. Methods take `&self`, so several requests may be in flight at once.
///
/// Dropping a client that was not closed starts a best-effort shutdown on the current Tokio
/// runtime; the child is also killed on drop as a last resort. Prefer [`Client::close`].
pub struct Client {
    pub(crate) session: Arc<Session>,
    connected: Connected,
    /// The modern era's per-connection state; `None` when speaking the legacy era.
    pub(crate) modern: Option<Modern>,
    /// A dual-era client that fell back but still sends `_meta` (`meta-after-fallback` defect).
    meta_after_fallback: bool,
    /// Set while `notifications/initialized` is held back (`late-initialized` defect).
    initialized_owed: AtomicBool,
}

impl Client {
    /// Starts the server `command` as a child process and performs the handshake.
    ///
    /// On any handshake failure the child is shut down before the error is returned.
    pub async fn connect_stdio(
        command: &StdioCommand,
        options: ClientOptions,
    ) -> Result<Self, Error> {
        let router = Arc::new(router_for(&options.defects));
        let transport = StdioTransport::spawn(command, Arc::clone(&router), &options)?;
        let session = Session::new(router, Transport::Stdio(transport), options);
        Self::establish(session, None).await
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
        let router = Arc::new(router_for(&options.defects));
        let transport = HttpTransport::connect(url, &http, &options, Arc::clone(&router))?;
        let session = Session::new(router, Transport::Http(transport), options);
        Self::establish(session, era::origin(url)).await
    }

    /// The handshake (legacy era) or the era detection (modern and dual eras) over a fresh
    /// session; on failure the transport is shut down.
    async fn establish(session: Session, origin: Option<String>) -> Result<Self, Error> {
        let session = Arc::new(session);
        let defects = session.options().defects;
        let era = session.options().era;
        let outcome = match era {
            Era::Legacy => handshake(&session).await.map(Connected::Legacy),
            Era::Modern | Era::Dual => era::discover::detect(&session, origin.as_deref()).await,
        };
        if let (Ok(Connected::Modern(_)), true) = (&outcome, defects.get_stream_in_modern) {
            session.transport().listen();
        }
        match outcome {
            Ok(connected) => Ok(Client {
                modern: match &connected {
                    Connected::Modern(found) => Some(Modern::new(found)),
                    Connected::Legacy(_) => None,
                },
                meta_after_fallback: era != Era::Legacy && defects.meta_after_fallback,
                session,
                connected,
                initialized_owed: AtomicBool::new(defects.late_initialized),
            }),
            Err(e) => {
                if defects.leak_on_handshake_failure {
                    session.abandon().await;
                } else {
                    session.shutdown().await;
                }
                Err(e)
            }
        }
    }

    /// What the server answered to `initialize`; `None` for a modern-era connection.
    pub fn handshake(&self) -> Option<&Handshake> {
        match &self.connected {
            Connected::Legacy(handshake) => Some(handshake),
            Connected::Modern(_) => None,
        }
    }

    /// What `connect` found: the legacy handshake, or a modern server.
    pub fn connected(&self) -> &Connected {
        &self.connected
    }

    /// Lists every tool, following `nextCursor` page by page; tools are returned as received.
    pub async fn list_tools(&self) -> Result<Vec<Value>, Error> {
        let defects = self.session.options().defects;
        let mut listing = Listing::new(&defects);
        let mut cursor: Option<String> = None;
        let mut pages = 0;
        loop {
            let params = match &cursor {
                None => json!({}),
                Some(c) if defects.mangle_cursor => json!({"cursor": format!("{c}x")}),
                Some(c) => json!({"cursor": c}),
            };
            let page = match &self.modern {
                None => self.request("tools/list", params, pending()).await?,
                Some(modern) => self.modern_tools_page(modern, params).await?,
            };
            pages += 1;
            let Some(next) = listing.add_page(page)? else {
                break;
            };
            if defects.first_page_only || (defects.no_cursor_check && pages >= NAIVE_PAGE_LIMIT) {
                break;
            }
            listing.use_cursor(&next)?;
            cursor = Some(next);
        }
        let tools = listing.into_tools();
        if defects.normalize_tools {
            return Ok(tools.into_iter().map(tools::normalized).collect());
        }
        Ok(tools)
    }

    /// Calls the tool `name` with `arguments`.
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Result<ToolOutput, Error> {
        self.call_tool_cancellable(name, arguments, pending()).await
    }

    /// Calls the tool `name`, giving up with kind `cancelled` when `cancel` completes first.
    ///
    /// Cancelling stops the local wait and sends `notifications/cancelled`; it does not prove
    /// that the server stopped the work.
    pub async fn call_tool_cancellable(
        &self,
        name: &str,
        arguments: Value,
        cancel: impl Future<Output = ()>,
    ) -> Result<ToolOutput, Error> {
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
    ) -> Result<ToolOutput, Error> {
        let defects = self.session.options().defects;
        let arguments = if defects.drop_arguments {
            json!({})
        } else {
            arguments
        };
        let params = json!({"name": name, "arguments": arguments});
        let outcome = match &self.modern {
            None => self
                .request("tools/call", params, cancel)
                .await
                .and_then(|result| tools::call_output(result, &defects)),
            Some(modern) => self.modern_call(modern, params, input, cancel).await,
        };
        let result = match outcome {
            Err(e) if e.kind == ErrorKind::ProtocolError && defects.rpc_error_as_empty => {
                Ok(ToolOutput::Text(Vec::new()))
            }
            other => other,
        };
        if result.is_err() && defects.close_on_error {
            self.close().await;
        }
        result
    }

    /// Shuts the connection down. Stdio: stdin closed, then SIGTERM, then SIGKILL, each after
    /// the grace period, and the child reaped. HTTP: the session is ended with `DELETE` (a 405
    /// answer is accepted) and the server stream stopped. Idempotent; afterwards every operation
    /// fails with `transport_closed`.
    pub async fn close(&self) {
        self.session.shutdown().await;
    }

    async fn request(
        &self,
        method: &str,
        params: Value,
        cancel: impl Future<Output = ()>,
    ) -> Result<Value, Error> {
        let lost = self.session.transport().take_session_lost();
        if lost && !self.session.options().defects.no_reinitialize {
            // The HTTP server ended our session (404): start a new one first.
            handshake(&self.session).await.map_err(|e| Error {
                message: format!("starting a new session failed: {}", e.message),
                ..e
            })?;
        }
        let params = match self.meta_after_fallback {
            true => {
                let options = self.session.options();
                let version = &options.protocol_version;
                era::meta::with_meta(params, version, &json!({}), &options.defects)
            }
            false => params,
        };
        let in_flight = self.session.start(method, params)?;
        if self.initialized_owed.swap(false, Ordering::Relaxed) {
            self.session.notify("notifications/initialized", None)?;
        }
        in_flight.wait(cancel).await
    }
}

/// `initialize`, its checks, then `notifications/initialized` (unless a defect holds it back).
/// Also run again when an HTTP server ended the session; [`Client::handshake`] keeps the first.
/// A dual-era client's fallback offers its legacy version.
pub(crate) async fn handshake(session: &Session) -> Result<Handshake, Error> {
    let options = session.options();
    let offered = match options.era {
        Era::Legacy => options.protocol_version.as_str(),
        Era::Modern | Era::Dual => options.legacy_protocol_version.as_str(),
    };
    let params = handshake::initialize_params(offered);
    let outcome = match session.start("initialize", params) {
        Ok(in_flight) => in_flight.wait(pending()).await,
        Err(e) => Err(e),
    };
    let accepted = handshake::accept(outcome, &options.defects)?;
    let transport = session.transport();
    let header_version = match options.defects.offered_version_header {
        true => Some(offered),
        false => accepted.protocol_version(),
    };
    transport.set_protocol_version(header_version);
    if !options.defects.skip_initialized && !options.defects.late_initialized {
        session.notify("notifications/initialized", None)?;
    }
    transport.listen();
    Ok(accepted)
}

impl Drop for Client {
    fn drop(&mut self) {
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let session = Arc::clone(&self.session);
            runtime.spawn(async move { session.shutdown().await });
        }
    }
}

fn router_for(defects: &crate::defects::Defects) -> Router {
    match defects.ignore_server_requests {
        true => Router::deaf(),
        false => Router::new(),
    }
}

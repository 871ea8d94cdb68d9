//! The seam between the JSON-RPC session and the wire: send a message, deliver what arrives to
//! the [`Router`](crate::router::Router), shut down.
//!
//! A transport owns no protocol logic. It writes the messages it is given, hands every message
//! it receives to the router (sending back whatever reply the router returns), and closes the
//! router when the peer goes away. Stdio writes lines to a child; Streamable HTTP POSTs each
//! message and feeds the JSON or SSE answer to the same router. The few hooks only HTTP needs
//! (aborting one request, the negotiated version header, the server stream, a lost session) are
//! no-ops for stdio, so the session and client layers never ask which transport they drive.

pub mod framing;
pub(crate) mod http;
pub(crate) mod stdio;

use std::time::Duration;

use serde_json::Value;

use crate::seams::Seams;

use crate::error::Error;

pub(crate) use http::HttpTransport;
pub(crate) use stdio::StdioTransport;

/// One live connection to a server, whatever carries it.
pub(crate) enum Transport {
    /// A child process speaking newline-delimited JSON-RPC on its stdin and stdout.
    Stdio(StdioTransport),
    /// An MCP endpoint reached with Streamable HTTP.
    Http(HttpTransport),
}

impl Transport {
    /// Queues one message for the server; fails with `transport_closed` once shut down.
    pub(crate) fn send(&self, message: &Value) -> Result<(), Error> {
        match self {
            Transport::Stdio(t) => t.send(message),
            Transport::Http(t) => t.send(message),
        }
    }

    /// Stops carrying the request `id` (its waiter gave up). HTTP drops the request's
    /// connection; on stdio there is nothing to abort.
    pub(crate) fn abort(&self, id: i64) {
        if let Transport::Http(t) = self {
            t.abort(id);
        }
    }

    /// What a request's span says of the connection (see `telemetry/spans.rs`).
    pub(crate) fn span_facts(&self) -> crate::telemetry::spans::Facts {
        match self {
            Transport::Stdio(_) => crate::telemetry::spans::Facts {
                transport: "pipe",
                ..Default::default()
            },
            Transport::Http(t) => t.span_facts(),
        }
    }

    /// The access token the client holds (the `token-in-span` defect only).
    #[cfg(feature = "defects")]
    pub(crate) fn held_token(&self) -> Option<String> {
        match self {
            Transport::Stdio(_) => None,
            Transport::Http(t) => t.held_token(),
        }
    }

    /// Records the negotiated protocol version, which HTTP sends as a header from now on.
    pub(crate) fn set_protocol_version(&self, version: Option<&str>) {
        if let Transport::Http(t) = self {
            t.set_protocol_version(version);
        }
    }

    /// Waits until every message queued so far has gone out (HTTP: a notification's POST has
    /// been answered, each bounded by the request timeout), so that the handshake is complete
    /// on the server's side when `connect` returns. Stdio writes in order: nothing to wait for.
    pub(crate) async fn flush(&self) {
        if let Transport::Http(t) = self {
            t.flush().await;
        }
    }

    /// The handshake is complete: HTTP may now open its standalone server stream (legacy era
    /// only).
    pub(crate) fn listen(&self) {
        if let Transport::Http(t) = self {
            t.listen();
        }
    }

    /// Opens HTTP's standalone server stream whatever the era (if the options allow one; a
    /// defect).
    #[cfg(feature = "defects")]
    pub(crate) fn open_server_stream(&self) {
        if let Transport::Http(t) = self {
            t.open_server_stream();
        }
    }

    /// Whether the server forgot our session since the last call (HTTP 404), so a new
    /// handshake is owed before the next request. Always false on stdio.
    pub(crate) fn take_session_lost(&self) -> bool {
        match self {
            Transport::Stdio(_) => false,
            Transport::Http(t) => t.take_session_lost(),
        }
    }

    /// Switches HTTP between the modern era (no sessions, no server stream, request-metadata
    /// headers, JSON-RPC error bodies of non-2xx answers read) and the legacy one. A dual-era
    /// client starts modern and switches to legacy when it falls back. On stdio it says
    /// whether a server that exits on its own is started again (modern only).
    pub(crate) fn set_modern(&self, modern: bool) {
        match self {
            Transport::Stdio(t) => t.set_modern(modern),
            Transport::Http(t) => t.set_modern(modern),
        }
    }

    /// The `x-mcp-header` annotations mirrored into `Mcp-Param-*` headers: modern HTTP only
    /// (over stdio, and in the legacy era, the annotations are ignored).
    pub(crate) fn param_headers(&self) -> Option<&crate::era::param_headers::ParamHeaders> {
        match self {
            Transport::Stdio(_) => None,
            Transport::Http(t) => t.param_headers(),
        }
    }

    /// The authorization context the next request is sent in: which access token the OAuth
    /// client holds (a number that changes with each new token, never the token), `None`
    /// without one (stdio, no authorization, a fixed token: one context for the connection).
    pub(crate) fn auth_context(&self) -> Option<u64> {
        match self {
            Transport::Stdio(_) => None,
            Transport::Http(t) => t.auth_context(),
        }
    }

    /// Whether a server that went away is started again for the next message (stdio in the
    /// 2026-07-28 era; what it held, subscriptions included, is then lost).
    pub(crate) fn restarts_server(&self) -> bool {
        match self {
            Transport::Stdio(t) => t.restarts(),
            Transport::Http(_) => false,
        }
    }

    /// Whether giving up on a request is itself the cancellation (modern HTTP closes the
    /// request's response stream), so no `notifications/cancelled` is sent.
    pub(crate) fn cancels_by_closing(&self) -> bool {
        match self {
            Transport::Stdio(_) => false,
            Transport::Http(t) => t.is_modern(),
        }
    }

    /// Ends the connection, giving the server `grace` before each escalation step (`seams`:
    /// the shutdown seam). Idempotent.
    pub(crate) async fn shutdown(&self, grace: Duration, seams: &Seams) {
        match self {
            Transport::Stdio(t) => t.shutdown(grace, seams).await,
            Transport::Http(t) => t.shutdown(grace, seams).await,
        }
    }

    /// Walks away without cleaning up, leaving the server running (a defect).
    #[cfg(feature = "defects")]
    pub(crate) async fn abandon(&self) {
        match self {
            Transport::Stdio(t) => t.abandon().await,
            Transport::Http(t) => t.abandon().await,
        }
    }
}

//! One JSON-RPC session over some transport: request ids, waiting with a timeout or a cancel,
//! and telling the server about abandoned requests.
//!
//! The client's MCP methods are written on top of this; they never touch ids or timers.

use std::future::{Future, pending};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::oneshot;
use tokio::time::Instant;

use crate::error::{Error, ErrorKind};
use crate::jsonrpc;
use crate::listener::Tracked;
use crate::options::ClientOptions;
use crate::router::{Outcome, Router};
use crate::seams::Seams;
use crate::seams::wire::{Telling, Wire};
use crate::telemetry::seams::TelemetrySeams;
use crate::telemetry::spans::{Note, RequestSpan, Tracing};
use crate::trace::RequestMeta;
use crate::transport::Transport;

/// Request bookkeeping for one connection.
pub(crate) struct Session {
    router: Arc<Router>,
    transport: Transport,
    next_id: AtomicI64,
    options: ClientOptions,
    /// What the seam on what is sent remembers between messages.
    outgoing: <Seams as Wire>::Memory,
    /// What every request carries in `_meta` for the caller (trace context, log level).
    request_meta: RequestMeta,
    /// The span of each request, and the duration metrics (see `telemetry/`).
    tracing: Tracing,
}

impl Session {
    pub(crate) fn new(router: Arc<Router>, transport: Transport, options: ClientOptions) -> Self {
        Session {
            router,
            transport,
            next_id: AtomicI64::new(1),
            outgoing: options.seams().memory(options.meta_version()),
            request_meta: RequestMeta::new(options.trace_context.clone()),
            tracing: Tracing::new(options.trace_context.as_ref(), options.seams()),
            options,
        }
    }

    pub(crate) fn options(&self) -> &ClientOptions {
        &self.options
    }

    /// Where a deliberate defect may bend this connection (see `seams/`).
    pub(crate) fn seams(&self) -> Seams {
        self.options.seams()
    }

    pub(crate) fn transport(&self) -> &Transport {
        &self.transport
    }

    /// The table of requests in flight, which also answers the server's requests.
    pub(crate) fn router(&self) -> &Router {
        &self.router
    }

    /// Keeps the log level for the `_meta` of every later request (2026-07-28).
    pub(crate) fn keep_log_level(&self, level: &str) {
        self.request_meta.keep_log_level(level);
    }

    /// The spans and metrics of this connection.
    pub(crate) fn tracing(&self) -> &Tracing {
        &self.tracing
    }

    fn fresh_id(&self) -> i64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Writes a request with a fresh id; the returned handle waits for its answer.
    pub(crate) fn start(&self, method: &str, params: Value) -> Result<InFlight<'_>, Error> {
        self.start_with(method, params, |_| {})
    }

    /// [`Session::start`], running `registered` with the id once the waiter is registered and
    /// before anything is sent (what arrives for the request is then never missed).
    pub(crate) fn start_with(
        &self,
        method: &str,
        params: Value,
        registered: impl FnOnce(i64),
    ) -> Result<InFlight<'_>, Error> {
        self.start_noted(method, params, Note::default(), registered)
    }

    /// [`Session::start_with`] for a request whose span notes why it was sent (a retry, a
    /// multi round-trip step, a cache miss).
    pub(crate) fn start_noted(
        &self,
        method: &str,
        params: Value,
        note: Note,
        registered: impl FnOnce(i64),
    ) -> Result<InFlight<'_>, Error> {
        let seams = self.seams();
        let leaked = seams.leaked(self, &params);
        let facts = || self.transport.span_facts();
        let mut span = self.tracing.start(method, &params, facts, note, leaked);
        let params = self.request_meta.add_to(params, span.traceparent(&seams));
        let id = seams.request_id(&self.outgoing, method, &params, || self.fresh_id());
        span.set_id(id, &seams);
        let (rx, progress) = self.router.register_request(id, &params)?;
        registered(id);
        // Built before sending, so a failed send still removes the waiter (see Drop).
        let in_flight = InFlight {
            session: self,
            id,
            method: method.to_owned(),
            rx,
            settled: false,
            quiet: false,
            progress,
            span: Some(span),
        };
        self.send(jsonrpc::request(id, method, params))?;
        Ok(in_flight)
    }

    /// Writes a notification.
    pub(crate) fn notify(&self, method: &str, params: Option<Value>) -> Result<(), Error> {
        self.send(jsonrpc::notification(method, params))
    }

    fn send(&self, message: Value) -> Result<(), Error> {
        for message in self
            .seams()
            .messages(&self.outgoing, message, || self.fresh_id())
        {
            self.transport.send(&message)?;
        }
        Ok(())
    }

    /// Fails everything in flight and shuts the transport down. Idempotent.
    pub(crate) async fn shutdown(&self) {
        self.tracing.closed();
        self.router.close("the connection was closed by the client");
        let grace = self.options.shutdown_grace;
        self.transport.shutdown(grace, &self.seams()).await;
    }

    /// Fails everything in flight and walks away, leaving the server running (a defect).
    #[cfg(feature = "defects")]
    pub(crate) async fn abandon(&self) {
        self.router
            .close("the connection was abandoned by the client");
        self.transport.abandon().await;
    }
}

/// A request that was written and whose answer has not been taken yet.
pub(crate) struct InFlight<'a> {
    session: &'a Session,
    id: i64,
    method: String,
    rx: oneshot::Receiver<Outcome>,
    settled: bool,
    /// Never announce giving up on this request (the modern era's `server/discover` probe).
    quiet: bool,
    /// Its progress token, if it carries one: progress may restart its timeout.
    progress: Option<Tracked>,
    /// Its span, until it ends.
    span: Option<RequestSpan>,
}

/// Why we stopped waiting.
enum GaveUp {
    Timeout,
    /// The maximum timeout passed, progress or not.
    MaxTimeout(Duration),
    Cancelled,
}

impl InFlight<'_> {
    /// Marks the request as one that is never cancelled on the wire: giving up on it sends
    /// no `notifications/cancelled` (like `initialize`).
    pub(crate) fn quietly(mut self) -> Self {
        self.quiet = true;
        self
    }

    /// The id the request was sent with.
    pub(crate) fn id(&self) -> i64 {
        self.id
    }

    /// Waits for the answer, the per-request timeout, or `cancel`, whichever comes first. A
    /// request whose progress restarts its timeout (see [`Tracked`]) waits a full timeout
    /// from its latest progress notification, but never past its maximum.
    pub(crate) async fn wait(mut self, cancel: impl Future<Output = ()>) -> Result<Value, Error> {
        let session = self.session;
        let seams = session.seams();
        let timeout = session.options.request_timeout;
        let (progressed, max) = match &self.progress {
            Some(t) => (t.resets.then(|| Arc::clone(&t.progressed)), t.max),
            None => (None, None),
        };
        let started = Instant::now();
        let mut latest = started;
        let mut cancel = std::pin::pin!(seams.cancel(cancel));
        let limit = async {
            match max {
                Some(max) => tokio::time::sleep_until(started + max).await,
                None => pending().await,
            }
        };
        let mut limit = std::pin::pin!(seams.timer(limit));
        let gave_up = loop {
            let timer = seams.timer(tokio::time::sleep_until(latest + timeout));
            let progress = async {
                match &progressed {
                    Some(notify) => notify.notified().await,
                    None => pending().await,
                }
            };
            tokio::select! {
                biased;
                reply = &mut self.rx => {
                    self.settled = true;
                    if seams.cancels_after_answer()
                        && tokio::time::timeout(timeout, &mut cancel).await.is_ok()
                    {
                        let params = json!({"requestId": self.id, "reason": "cancelled by the caller"});
                        let _ = session.notify("notifications/cancelled", Some(params));
                    }
                    let outcome = reply.unwrap_or_else(|_| Err(Error::closed("the connection is closed")));
                    self.finish(&outcome);
                    return outcome;
                }
                () = timer => break GaveUp::Timeout,
                () = &mut limit => break GaveUp::MaxTimeout(max.unwrap_or_default()),
                () = &mut cancel => break GaveUp::Cancelled,
                () = progress => latest = Instant::now(),
            }
        };
        Err(self.give_up(gave_up))
    }

    /// Waits for the answer with no timeout: a long-lived request (`subscriptions/listen`),
    /// which ends with its response, the connection, or when the handle is dropped.
    pub(crate) async fn wait_unbounded(mut self) -> Result<Value, Error> {
        let reply = (&mut self.rx).await;
        self.settled = true;
        let outcome = reply.unwrap_or_else(|_| Err(Error::closed("the connection is closed")));
        self.finish(&outcome);
        outcome
    }

    /// Ends the span with the answer.
    fn finish(&mut self, outcome: &Result<Value, Error>) {
        if let Some(span) = self.span.take() {
            span.finish(outcome, &self.session.tracing);
        }
    }

    /// How the server is told that this request was given up: `initialize` and the probe never
    /// are; modern HTTP closes the response stream; otherwise `notifications/cancelled`.
    fn telling(&self) -> Telling {
        if self.method == "initialize" {
            Telling::Not("initialize is never cancelled; the handshake is abandoned")
        } else if self.quiet {
            Telling::Not("the probe is not cancelled on the wire")
        } else if self.session.transport.cancels_by_closing() {
            Telling::ByClosingTheStream
        } else {
            Telling::ByNotification
        }
    }

    /// Forgets the request, drops its exchange and tells the server (see [`Self::telling`]);
    /// builds the error to report.
    fn give_up(&mut self, why: GaveUp) -> Error {
        self.settled = true;
        let session = self.session;
        session.router.forget(self.id);
        let closes = session.transport.cancels_by_closing();
        let (drop_exchange, telling) =
            session
                .seams()
                .telling(self.telling(), &self.method, closes);
        if drop_exchange {
            // Over HTTP this drops the request's exchange; it is queued before any
            // notification.
            session.transport.abort(self.id);
        }
        let (kind, reason) = match why {
            GaveUp::Timeout => (
                ErrorKind::Timeout,
                format!(
                    "no response within {} ms",
                    session.options.request_timeout.as_millis()
                ),
            ),
            GaveUp::MaxTimeout(max) => (
                ErrorKind::Timeout,
                format!(
                    "no response within the maximum of {} ms, however much progress was reported",
                    max.as_millis()
                ),
            ),
            GaveUp::Cancelled => (ErrorKind::Cancelled, "cancelled by the caller".to_owned()),
        };
        let span = self.span.take();
        let told = match telling {
            Telling::Not(why) => why,
            Telling::ByClosingTheStream => {
                "its HTTP response stream was closed, which is the cancellation"
            }
            Telling::ByNotification => {
                let params = json!({"requestId": self.id, "reason": reason});
                match session.notify("notifications/cancelled", Some(params)) {
                    Ok(()) => "notifications/cancelled was sent",
                    Err(_) => "notifications/cancelled could not be sent",
                }
            }
        };
        if let Some(span) = span {
            let why = match kind {
                ErrorKind::Cancelled => "cancelled",
                _ => "timeout",
            };
            span.give_up(why, told, &session.tracing);
        }
        Error::new(
            kind,
            format!(
                "{} (request {}): {reason}. The client stopped waiting; {told}. \
                 This is a local cancellation, not proof that the server stopped the work.",
                self.method, self.id
            ),
        )
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        if !self.settled {
            self.session.router.forget(self.id);
            self.session.transport.abort(self.id);
        }
        if let Some(span) = self.span.take() {
            span.abandon(&self.session.tracing);
        }
    }
}

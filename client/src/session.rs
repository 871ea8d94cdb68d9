//! One JSON-RPC session over some transport: request ids, waiting with a timeout or a cancel,
//! and announcing abandoned requests with `notifications/cancelled`.
//!
//! The client's MCP methods are written on top of this; they never touch ids or timers.

use std::future::{Future, pending};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use serde_json::{Value, json};
use tokio::sync::oneshot;

use crate::error::{Error, ErrorKind};
use crate::jsonrpc;
use crate::options::ClientOptions;
use crate::router::{Outcome, Router};
use crate::transport::Transport;

/// Request bookkeeping for one connection.
pub(crate) struct Session {
    router: Arc<Router>,
    transport: Transport,
    next_id: AtomicI64,
    options: ClientOptions,
}

impl Session {
    pub(crate) fn new(router: Arc<Router>, transport: Transport, options: ClientOptions) -> Self {
        Session {
            router,
            transport,
            next_id: AtomicI64::new(1),
            options,
        }
    }

    pub(crate) fn options(&self) -> &ClientOptions {
        &self.options
    }

    pub(crate) fn transport(&self) -> &Transport {
        &self.transport
    }

    fn fresh_id(&self) -> i64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Writes a request; the returned handle waits for its answer.
    pub(crate) fn start(&self, method: &str, params: Value) -> Result<InFlight<'_>, Error> {
        let id = if self.options.defects.reuse_ids {
            1
        } else {
            self.fresh_id()
        };
        self.start_as(id, method, params)
    }

    /// Writes a request with the given `id` (a fresh one unless a defect wants an id reused).
    pub(crate) fn start_as(
        &self,
        id: i64,
        method: &str,
        params: Value,
    ) -> Result<InFlight<'_>, Error> {
        let rx = self.router.register(id)?;
        // Built before sending, so a failed send still removes the waiter (see Drop).
        let in_flight = InFlight {
            session: self,
            id,
            method: method.to_owned(),
            rx,
            settled: false,
            quiet: false,
        };
        self.transport.send(&jsonrpc::request(id, method, params))?;
        Ok(in_flight)
    }

    /// Writes a notification.
    pub(crate) fn notify(&self, method: &str, params: Option<Value>) -> Result<(), Error> {
        let id = self
            .options
            .defects
            .id_on_notifications
            .then(|| self.fresh_id());
        self.transport
            .send(&jsonrpc::notification(method, params, id))
    }

    /// Fails everything in flight and shuts the transport down. Idempotent.
    pub(crate) async fn shutdown(&self) {
        self.router.close("the connection was closed by the client");
        let grace = self.options.shutdown_grace;
        self.transport.shutdown(grace, &self.options.defects).await;
    }

    /// Leaves the server running (the `leak-on-handshake-failure` defect).
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
}

/// Why we stopped waiting.
enum GaveUp {
    Timeout,
    Cancelled,
}

impl InFlight<'_> {
    /// The request's id.
    pub(crate) fn id(&self) -> i64 {
        self.id
    }

    /// Marks the request as one that is never cancelled on the wire: giving up on it sends
    /// no `notifications/cancelled` (like `initialize`).
    pub(crate) fn quietly(mut self) -> Self {
        self.quiet = true;
        self
    }

    /// Waits for the answer, the per-request timeout, or `cancel`, whichever comes first.
    pub(crate) async fn wait(mut self, cancel: impl Future<Output = ()>) -> Result<Value, Error> {
        let defects = self.session.options.defects;
        let limit = self.session.options.request_timeout;
        let timer = async move {
            if defects.no_timeout {
                pending::<()>().await;
            }
            tokio::time::sleep(limit).await;
        };
        let cancel = async move {
            if defects.ignore_cancel {
                pending::<()>().await;
            }
            cancel.await;
        };
        let gave_up = tokio::select! {
            biased;
            reply = &mut self.rx => {
                self.settled = true;
                return reply.unwrap_or_else(|_| Err(Error::closed("the connection is closed")));
            }
            () = timer => GaveUp::Timeout,
            () = cancel => GaveUp::Cancelled,
        };
        Err(self.give_up(gave_up))
    }

    /// Forgets the request and tells the server (except for `initialize`, which is never
    /// cancelled); builds the error to report.
    fn give_up(&mut self, why: GaveUp) -> Error {
        self.settled = true;
        let session = self.session;
        session.router.forget(self.id);
        // Over HTTP this drops the request's exchange; it is queued before the notification.
        let keep = session.options.defects.keep_stream_on_cancel;
        if !(keep && session.transport.cancels_by_closing()) {
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
            GaveUp::Cancelled => (ErrorKind::Cancelled, "cancelled by the caller".to_owned()),
        };
        let defects = &session.options.defects;
        let told = if self.method == "initialize" && !defects.cancel_initialize {
            "initialize is never cancelled; the handshake is abandoned"
        } else if self.quiet {
            "the probe is not cancelled on the wire"
        } else if session.transport.cancels_by_closing()
            && !defects.cancel_with_notification_over_http
        {
            "its HTTP response stream was closed, which is the cancellation"
        } else if session.options.defects.no_cancel_notification {
            "no notifications/cancelled was sent"
        } else {
            let params = json!({"requestId": self.id, "reason": reason});
            match session.notify("notifications/cancelled", Some(params)) {
                Ok(()) => "notifications/cancelled was sent",
                Err(_) => "notifications/cancelled could not be sent",
            }
        };
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
    }
}

//! What a client does about what the server starts: reporting the events surfaced so far,
//! changing its roots, calls that ask for progress, resource subscriptions (legacy eras) and
//! `subscriptions/listen` streams (2026-07-28).
//!
//! A listen stream is a request that stays in flight until the connection closes, carried by
//! a task of its own. Over stdio a server that exits takes its subscriptions with it, and is
//! started again for the next message; the task then sends `subscriptions/listen` again at
//! once (the restart follows), a few times at most in a row.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::oneshot;

use super::seams::ClientSeams;
use super::{Client, Connection};
use crate::era::InputHandler;
use crate::error::{Error, ErrorKind};
use crate::session::Session;
use crate::tools::ToolResult;

/// How many times in a row a listen stream lost with its server is opened again.
const LISTEN_RESENDS: u32 = 5;

impl Client {
    /// Everything surfaced since the previous call (or since connect), in arrival order:
    /// server requests, progress, log messages, list changes, resource updates (see
    /// CLIENTS.md, Events). Waits first, at most the request timeout, until there are `min`.
    pub async fn events(&self, min: usize) -> Vec<Value> {
        let wait = self.session.options().request_timeout;
        self.session
            .router()
            .listener()
            .take_events(min, wait)
            .await
    }

    /// Replaces the roots the client answers `roots/list` with; a legacy-era client that
    /// declared `roots` (a `roots/list` handler) sends `notifications/roots/list_changed`.
    pub async fn set_roots(&self, roots: Vec<Value>) -> Result<(), Error> {
        let modern = matches!(self.connection, Connection::Modern(_));
        if self.session.router().listener().set_roots(roots, modern) {
            self.session
                .notify("notifications/roots/list_changed", None)?;
        }
        Ok(())
    }

    /// Calls the tool `name` asking for progress: the request carries a progress token of its
    /// own, and the progress for it is surfaced as events. With `max_timeout`, each progress
    /// notification restarts the call's timeout, but the call gives up (`timeout`) once
    /// `max_timeout` has passed since it was sent. Otherwise as
    /// [`Client::call_tool_with_input`].
    pub async fn call_tool_with_progress(
        &self,
        name: &str,
        arguments: Value,
        input: &InputHandler,
        max_timeout: Option<Duration>,
        cancel: impl Future<Output = ()>,
    ) -> Result<ToolResult, Error> {
        let listener = self.session.router().listener();
        let token = listener.new_progress(max_timeout);
        let called = self.call_tool_inner(name, arguments, token.clone(), input, None, cancel);
        let outcome = super::tasks::done(called.await);
        if let Some(token) = token {
            listener.end_progress(&token);
        }
        outcome
    }

    /// Subscribes to the updates of the resource `uri` (`resources/subscribe`), once the
    /// server declared `resources.subscribe`; legacy eras only (2026-07-28 has
    /// [`Client::listen`] instead).
    pub async fn subscribe_resource(&self, uri: &str) -> Result<(), Error> {
        self.subscription("resources/subscribe", uri).await
    }

    /// Ends a subscription to the resource `uri` (`resources/unsubscribe`); as
    /// [`Client::subscribe_resource`].
    pub async fn unsubscribe_resource(&self, uri: &str) -> Result<(), Error> {
        self.subscription("resources/unsubscribe", uri).await
    }

    async fn subscription(&self, method: &str, uri: &str) -> Result<(), Error> {
        let Connection::Legacy(handshake) = &self.connection else {
            return Err(Error::new(
                ErrorKind::CapabilityMissing,
                format!(
                    "{method} is not a method of the 2026-07-28 revision this connection speaks \
                     (subscriptions/listen replaces it); nothing was sent"
                ),
            ));
        };
        let declared = handshake
            .result()
            .pointer("/capabilities/resources/subscribe")
            == Some(&Value::Bool(true));
        if !self.session.seams().may_subscribe(declared) {
            return Err(Error::new(
                ErrorKind::CapabilityMissing,
                format!(
                    "{method} needs the server capability resources.subscribe, which the server \
                     did not declare; nothing was sent"
                ),
            ));
        }
        self.request(method, json!({"uri": uri}), std::future::pending())
            .await
            .map(drop)
    }

    /// 2026-07-28: opens a `subscriptions/listen` stream with the `notifications` filter and
    /// keeps it open until the connection closes; returns the filter the server acknowledged
    /// (waiting for it at most the request timeout). What the stream delivers is surfaced as
    /// events; notifications of other subscriptions are not.
    pub async fn listen(&self, notifications: Value) -> Result<Value, Error> {
        let Connection::Modern(modern) = &self.connection else {
            return Err(Error::new(
                ErrorKind::CapabilityMissing,
                "subscriptions/listen is a method of the 2026-07-28 revision; this connection \
                 speaks a legacy one (which has resources/subscribe); nothing was sent",
            ));
        };
        let params = modern.with_meta(
            &self.session,
            json!({"notifications": notifications.clone()}),
        );
        let (first, acknowledged) = oneshot::channel();
        let requested = notifications;
        let task = tokio::spawn(keep_listening(Arc::clone(&self.session), params, first));
        self.listens
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(task);
        let wait = self.session.options().request_timeout;
        match tokio::time::timeout(wait, acknowledged).await {
            Ok(Ok(outcome)) => outcome.map(|acked| {
                let seams = self.session.seams();
                json!({"notifications": seams.listen_filter(&requested, acked)})
            }),
            Ok(Err(_)) => Err(Error::closed(
                "the listen stream ended before it was acknowledged",
            )),
            Err(_) => Err(Error::new(
                ErrorKind::Timeout,
                format!(
                    "subscriptions/listen was not acknowledged within {} ms (the stream stays \
                     open)",
                    wait.as_millis()
                ),
            )),
        }
    }
}

/// Carries one listen stream: sends `subscriptions/listen`, tells `first` the acknowledged
/// filter (or why there is none), and waits for the stream's end; over stdio, a stream lost
/// with its server is opened again on the restarted one.
async fn keep_listening(
    session: Arc<Session>,
    params: Value,
    first: oneshot::Sender<Result<Value, Error>>,
) {
    let mut first = Some(first);
    let listener = session.router().listener();
    for _ in 0..=LISTEN_RESENDS {
        let mut acked = None;
        let started = session.start_with("subscriptions/listen", params.clone(), |id| {
            acked = Some(listener.open_subscription(id));
        });
        let (flight, acked) = match (started, acked) {
            (Ok(flight), Some(acked)) => (flight, acked),
            (Err(e), _) => {
                if let Some(first) = first.take() {
                    let _ = first.send(Err(e));
                }
                return;
            }
            (Ok(_), None) => return,
        };
        let id = flight.id();
        let outcome = match first.take() {
            None => flight.wait_unbounded().await,
            Some(first) => {
                let ended = flight.wait_unbounded();
                tokio::pin!(ended);
                tokio::select! {
                    filter = acked => {
                        let closed = |_| Error::closed("the listen stream ended");
                        let _ = first.send(filter.map_err(closed));
                        ended.await
                    }
                    outcome = &mut ended => {
                        let why = match &outcome {
                            Err(e) => e.clone(),
                            Ok(_) => Error::invalid(
                                "the server ended subscriptions/listen before acknowledging it",
                            ),
                        };
                        let _ = first.send(Err(why));
                        outcome
                    }
                }
            }
        };
        listener.close_subscription(id);
        let lost = matches!(&outcome, Err(e) if e.kind == ErrorKind::TransportClosed);
        if !(lost && session.transport().restarts_server() && session.seams().resends_listen()) {
            return;
        }
        eprintln!(
            "mcp-harness-client: the listen stream was lost with the server; sending it again"
        );
    }
}

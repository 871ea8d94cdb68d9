//! Correlates responses with the requests waiting for them, and answers server requests.
//!
//! Transports feed every received message to [`Router::dispatch`]; it knows nothing about pipes
//! or HTTP, so the same correlation rules hold on every transport.
//!
//! The server requests inside a received batch are answered one message each, not with one
//! array (JSON-RPC 2.0's SHOULD): a batch is only valid in 2025-03-26, and single answers are
//! valid in every revision, where an array would be a batch 2025-06-18 and later forbid.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};

use serde_json::{Value, json};
use tokio::sync::oneshot;

use crate::error::{Error, ErrorKind};
use crate::handlers::Handlers;
use crate::jsonrpc::{self, Incoming};
use crate::listener::{Listener, Tracked};
use crate::seams::Seams;
use crate::seams::wire::Wire;

/// What a waiting request receives: the result, or why there is none.
pub(crate) type Outcome = Result<Value, Error>;

/// The table of requests in flight; `None` once the connection is closed.
type Pending = Option<HashMap<i64, oneshot::Sender<Outcome>>>;

/// Pending requests by id, shared by the caller side and the transport's reader.
pub(crate) struct Router {
    pending: Mutex<Pending>,
    /// Speaking the 2026-07-28 era, where servers send no requests and clients never answer
    /// one (a dual-era client switches this when it knows the server's era).
    modern: AtomicBool,
    /// The seam on what is read (see [`crate::seams::wire`]).
    seams: Seams,
    /// The answers to server requests, and the events surfaced.
    listener: Listener,
}

impl Router {
    #[cfg(test)]
    pub(crate) fn new() -> Self {
        Router::with_seams(Seams::default(), Handlers::new())
    }

    /// A router that asks `seams` how frames are read and server messages answered (see
    /// [`crate::seams::wire`]), answering server requests with `handlers`.
    pub(crate) fn with_seams(seams: Seams, handlers: Handlers) -> Self {
        Router {
            pending: Mutex::new(Some(HashMap::new())),
            modern: AtomicBool::new(false),
            seams,
            listener: Listener::new(handlers, seams),
        }
    }

    /// The answers to server requests and the events surfaced (see [`crate::listener`]).
    pub(crate) fn listener(&self) -> &Listener {
        &self.listener
    }

    /// Switches between the legacy eras (server requests are answered) and 2026-07-28 (they
    /// are not: a modern client never sends a response).
    pub(crate) fn set_modern(&self, modern: bool) {
        self.modern.store(modern, Ordering::Relaxed);
    }

    /// Sorts one received frame into messages (a batch gives several); see
    /// [`jsonrpc::classify_frame`].
    pub(crate) fn read(&self, frame: &[u8]) -> Vec<Result<Incoming, String>> {
        self.seams.read_frame(frame, jsonrpc::classify_frame)
    }

    fn lock(&self) -> MutexGuard<'_, Pending> {
        // A poisoned lock only means another thread panicked while holding it; the map itself
        // is always left consistent, so keep using it.
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Registers a waiter for `id`; fails with `transport_closed` once the router is closed.
    pub(crate) fn register(&self, id: i64) -> Result<oneshot::Receiver<Outcome>, Error> {
        let mut guard = self.lock();
        let map = guard
            .as_mut()
            .ok_or_else(|| Error::closed("the connection is closed"))?;
        let (tx, rx) = oneshot::channel();
        map.insert(id, tx);
        Ok(rx)
    }

    /// Registers a waiter for request `id` sent with `params`, and its progress token if it
    /// carries one (see [`Listener::track`]).
    pub(crate) fn register_request(
        &self,
        id: i64,
        params: &Value,
    ) -> Result<(oneshot::Receiver<Outcome>, Option<Tracked>), Error> {
        let rx = self.register(id)?;
        Ok((rx, self.listener.track(id, params)))
    }

    /// Drops the waiter for `id` (after a timeout or cancel): a late response is then ignored.
    pub(crate) fn forget(&self, id: i64) {
        self.listener.forget(id);
        if let Some(map) = self.lock().as_mut() {
            map.remove(&id);
        }
    }

    /// Fails the waiter for `id` with `error`, if it is still waiting (a transport that knows a
    /// request can no longer be answered).
    pub(crate) fn fail(&self, id: i64, error: Error) {
        let waiter = self.lock().as_mut().and_then(|m| m.remove(&id));
        if let Some(tx) = waiter {
            let _ = tx.send(Err(error));
        }
    }

    /// Takes the waiter of the oldest request in flight (only the read seam's
    /// `misdeliver-stray-responses` defect calls this).
    pub(crate) fn take_any(&self) -> Option<oneshot::Sender<Outcome>> {
        let mut guard = self.lock();
        let map = guard.as_mut()?;
        let oldest = *map.keys().min()?;
        map.remove(&oldest)
    }

    /// Fails every waiter with `error`; the router stays open (the read seam's
    /// `obey-server-cancel` defect, and [`Router::fail_pending`]).
    pub(crate) fn fail_all(&self, error: &Error) {
        let waiters: Vec<_> = match self.lock().as_mut() {
            Some(map) => map.drain().map(|(_, tx)| tx).collect(),
            None => Vec::new(),
        };
        for tx in waiters {
            let _ = tx.send(Err(error.clone()));
        }
    }

    /// Fails every waiter with `transport_closed` saying `why`, and stays open for later
    /// requests (a stdio server that exited and is started again: what was in flight is lost).
    /// `mark` runs under the same lock as the waiters are taken (the stdio transport notes
    /// there that the next message starts a new server): a request registered before it is
    /// failed here, one registered after it sees the mark, never both.
    pub(crate) fn fail_pending(&self, why: &str, mark: impl FnOnce()) {
        let waiters: Vec<_> = {
            let mut guard = self.lock();
            let waiters = match guard.as_mut() {
                Some(map) => map.drain().map(|(_, tx)| tx).collect(),
                None => Vec::new(),
            };
            mark();
            waiters
        };
        for tx in waiters {
            let _ = tx.send(Err(Error::closed(why.to_owned())));
        }
    }

    /// Closes the router: every waiter fails with `transport_closed` saying `why`, and so does
    /// every later registration. Idempotent.
    pub(crate) fn close(&self, why: &str) {
        let waiters = self.lock().take();
        for (_, tx) in waiters.into_iter().flatten() {
            let _ = tx.send(Err(Error::closed(why.to_owned())));
        }
    }

    /// Handles one message from the server. Returns the reply to send back, if it needs one.
    pub(crate) fn dispatch(&self, message: Incoming) -> Option<Value> {
        match message {
            Incoming::Response { id, outcome } => {
                if let Some(n) = id.as_i64() {
                    self.listener.answered(n);
                }
                let waiter = id
                    .as_i64()
                    .and_then(|n| self.lock().as_mut().and_then(|m| m.remove(&n)));
                let waiter =
                    waiter.or_else(|| self.seams.stray_response_waiter(|| self.take_any()));
                match waiter {
                    // The waiter may have just given up; that is fine.
                    Some(tx) => drop(tx.send(outcome)),
                    None => {
                        eprintln!("mcp-harness-client: ignoring a response with unknown id {id}")
                    }
                }
                None
            }
            Incoming::Request { id, method, params } => {
                let modern = self.modern.load(Ordering::Relaxed);
                if modern {
                    eprintln!(
                        "mcp-harness-client: ignoring a {method} request from the server \
                         (2026-07-28 servers send none, and clients answer none)"
                    );
                }
                let answer = || answer(id.clone(), &method);
                let reply = match modern {
                    true => None,
                    false => match self.listener.server_request(&id, &method, &params) {
                        // Answered later (or never, if the server cancels it meanwhile).
                        Some(None) => return None,
                        Some(Some(reply)) => Some(reply),
                        None => Some(answer()),
                    },
                };
                self.seams.request_reply(reply, answer)
            }
            Incoming::Notification { method, params } => {
                if let Some(error) = self.seams.fails_all_after(&method) {
                    self.fail_all(&error);
                }
                if let Some(ended) = self.listener.notification(&method, &params) {
                    let why = "the server ended the subscription with notifications/cancelled";
                    self.fail(ended, Error::new(ErrorKind::Cancelled, why));
                }
                self.seams.notification_reply(&method)
            }
        }
    }
}

/// The answer to the server request `method`: an empty result for `ping`, -32601 otherwise.
fn answer(id: Value, method: &str) -> Value {
    match method {
        "ping" => jsonrpc::result_response(id, json!({})),
        _ => jsonrpc::error_response(
            id,
            jsonrpc::METHOD_NOT_FOUND,
            &format!("method not supported by this client: {method}"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    fn response(id: Value, outcome: Outcome) -> Incoming {
        Incoming::Response { id, outcome }
    }

    #[test]
    fn responses_reach_their_waiter_and_unknown_ids_are_ignored() {
        let r = Router::new();
        let mut one = r.register(1).unwrap();
        let mut two = r.register(2).unwrap();
        assert_eq!(r.dispatch(response(json!(2), Ok(json!("b")))), None);
        assert_eq!(r.dispatch(response(json!(9), Ok(json!("x")))), None);
        assert_eq!(r.dispatch(response(json!("1"), Ok(json!("x")))), None);
        assert_eq!(two.try_recv().unwrap(), Ok(json!("b")));
        assert!(one.try_recv().is_err());
        r.forget(1);
        assert_eq!(r.dispatch(response(json!(1), Ok(json!("late")))), None);
        assert!(one.try_recv().is_err());
    }

    #[test]
    fn fail_reaches_only_a_waiting_request() {
        let r = Router::new();
        let mut rx = r.register(4).unwrap();
        r.fail(4, Error::invalid("bad body"));
        r.fail(4, Error::invalid("again"));
        r.fail(5, Error::invalid("nobody"));
        let e = rx.try_recv().unwrap().unwrap_err();
        assert_eq!(
            (e.kind, e.message.as_str()),
            (ErrorKind::InvalidResponse, "bad body")
        );
    }

    #[test]
    fn server_requests_get_answers() {
        let r = Router::new();
        let ping = r.dispatch(Incoming::Request {
            id: json!("p"),
            method: "ping".into(),
            params: Value::Null,
        });
        assert_eq!(ping, Some(json!({"jsonrpc":"2.0","id":"p","result":{}})));
        let other = r
            .dispatch(Incoming::Request {
                id: json!(5),
                method: "sampling/createMessage".into(),
                params: json!({}),
            })
            .unwrap();
        assert_eq!(other["id"], json!(5));
        assert_eq!(other["error"]["code"], json!(-32601));
        let note = Incoming::Notification {
            method: "notifications/progress".into(),
            params: Value::Null,
        };
        assert_eq!(r.dispatch(note), None);
    }

    #[test]
    fn a_modern_router_answers_no_server_request() {
        let r = Router::new();
        r.set_modern(true);
        let ping = Incoming::Request {
            id: json!(1),
            method: "ping".into(),
            params: Value::Null,
        };
        assert_eq!(r.dispatch(ping), None);
        r.set_modern(false);
        let ping = Incoming::Request {
            id: json!(1),
            method: "ping".into(),
            params: Value::Null,
        };
        assert!(r.dispatch(ping).is_some());
    }

    #[test]
    fn fail_pending_fails_waiters_but_keeps_the_router_open() {
        let r = Router::new();
        let mut rx = r.register(1).unwrap();
        let mut marked = false;
        r.fail_pending("the server exited", || {
            // The lock is held: nothing registers between the failing and the mark.
            assert!(r.pending.try_lock().is_err());
            marked = true;
        });
        assert!(marked);
        let e = rx.try_recv().unwrap().unwrap_err();
        assert_eq!(e.kind, ErrorKind::TransportClosed);
        let mut later = r.register(2).expect("a later request is still taken");
        assert!(later.try_recv().is_err(), "and not failed");
    }

    #[test]
    fn close_fails_waiters_and_later_registrations() {
        let r = Router::new();
        let mut rx = r.register(1).unwrap();
        r.close("server went away");
        let e = rx.try_recv().unwrap().unwrap_err();
        assert_eq!(e.kind, ErrorKind::TransportClosed);
        assert_eq!(r.register(2).unwrap_err().kind, ErrorKind::TransportClosed);
        r.close("again");
    }
}

//! The deprecated HTTP+SSE transport (2024-11-05), played when a script sets
//! `http.legacy_sse`: the server a client that supports old servers falls back to.
//!
//! - A POST to the MCP endpoint is refused with the script's status (405 by default), as an
//!   old server that hosts no Streamable HTTP endpoint there answers it.
//! - A GET to the MCP endpoint opens the SSE stream. Its first event is `endpoint`, naming
//!   [`POST_PATH`] with the stream's session (`?session_id=s<n>`, one per GET).
//! - A POST to that URI carrying the open stream's session is answered 202; the script's
//!   answer to a request goes out as a `message` event on the stream. A POST without the
//!   session, or with one that is not the open stream's, gets 404 and nothing is played.
//!
//! Records follow the fake's rule: the request and its message first, then each answer as
//! `Sent` just before its bytes are handed to the stream.

use std::sync::{Mutex, PoisonError};

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::header::{ALLOW, CACHE_CONTROL, CONTENT_TYPE};
use axum::http::{HeaderValue, Method, StatusCode};
use axum::response::Response;
use mcp_harness_scenarios::model::{LegacySse, Reply};
use mcp_harness_scenarios::transcript::Event;
use serde_json::Value;
use tokio::sync::mpsc;

use super::endpoint::{Conn, Fake};
use super::headers;
use super::sse;
use crate::jsonrpc::{self, Incoming};
use crate::script;

/// Where messages are POSTed once the stream is open.
pub const POST_PATH: &str = "/messages";

/// The largest POST body read.
const MAX_BODY: usize = 8 * 1024 * 1024;

/// The streams opened so far, and the one messages go to (the latest).
#[derive(Debug, Default)]
pub struct Streams {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    opened: u32,
    current: Option<(String, mpsc::UnboundedSender<Bytes>)>,
}

impl Streams {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Ends every stream (the fake's stop).
    pub fn stop(&self) {
        self.lock().current = None;
    }

    /// Writes `message` as a `message` event on the stream of `session`, recording it first;
    /// false when that stream is gone.
    fn send(&self, fake: &Fake, session: &str, message: Value) -> bool {
        let state = self.lock();
        let Some((open, to)) = &state.current else {
            return false;
        };
        if open != session || to.is_closed() {
            return false;
        }
        let text = message.to_string();
        fake.recorder.record(Event::Sent { message });
        to.send(Bytes::from(format!(
            "event: message\n{}",
            sse::event(&text)
        )))
        .is_ok()
    }
}

/// The status a request to the MCP endpoint gets from an HTTP+SSE server: `None` for a GET,
/// which opens the stream.
pub fn judge(script: &LegacySse, method: &Method) -> Option<(u16, &'static str, &'static str)> {
    match *method {
        Method::GET => None,
        Method::POST => Some(match script.post_status {
            404 => (404, "Not Found", "GET"),
            400 => (400, "Bad Request", "GET"),
            other => (other, "Method Not Allowed", "GET"),
        }),
        _ => Some((405, "Method Not Allowed", "GET")),
    }
}

/// Opens the stream answering a GET: the `endpoint` event first, then the answers as they
/// come, with a keep-alive comment after each second of silence.
pub fn open(fake: &Fake) -> Response {
    let (tx, rx) = mpsc::unbounded_channel();
    {
        let mut state = fake.live.legacy.lock();
        state.opened += 1;
        let session = format!("s{}", state.opened);
        let endpoint = format!("event: endpoint\ndata: {POST_PATH}?session_id={session}\n\n");
        let _ = tx.send(Bytes::from(endpoint));
        state.current = Some((session, tx));
    }
    let stream = futures_util::stream::unfold(rx, |mut rx| async move {
        let next = match tokio::time::timeout(sse::KEEP_ALIVE_EVERY, rx.recv()).await {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return None,
            Err(_) => Bytes::from_static(sse::KEEP_ALIVE.as_bytes()),
        };
        Some((Ok::<_, std::io::Error>(next), rx))
    });
    let mut response = Response::new(Body::from_stream(stream));
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// A plain-text answer (a refused POST or GET of the MCP endpoint).
pub fn refused(status: u16, text: &'static str, allow: &'static str) -> Response {
    let mut response = Response::new(Body::from(format!("{text}\n")));
    *response.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST);
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    headers.insert(ALLOW, HeaderValue::from_static(allow));
    response
}

/// A POST to [`POST_PATH`]: recorded with its message, answered 202, and a request's answer
/// sent on the stream.
pub async fn post(conn: Conn, request: Request) -> Response {
    let fake = &conn.fake;
    let (parts, body) = request.into_parts();
    let session = parts.uri.query().and_then(|q| {
        q.split('&')
            .find_map(|pair| pair.strip_prefix("session_id="))
            .map(str::to_owned)
    });
    let open = fake
        .live
        .legacy
        .lock()
        .current
        .as_ref()
        .map(|c| c.0.clone());
    let known = session.is_some() && session == open;
    let authorized = fake
        .token
        .as_ref()
        .is_none_or(|t| headers::bearer_matches(&parts.headers, t));
    let message = match (parts.method == Method::POST, known && authorized) {
        (true, true) => axum::body::to_bytes(body, MAX_BODY)
            .await
            .ok()
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok()),
        _ => None,
    };
    let status = match (parts.method == Method::POST, authorized, known, &message) {
        (false, _, _, _) => 405,
        (true, false, _, _) => 401,
        (true, true, false, _) => 404,
        (true, true, true, None) => 400,
        (true, true, true, Some(_)) => 202,
    };
    let request = Event::HttpRequest {
        method: parts.method.as_str().to_owned(),
        path: parts.uri.path().to_owned(),
        headers: headers::recorded(&parts.headers, fake.token.as_deref()),
        status,
        origin: None,
        endpoint: None,
        params: None,
    };
    let received = message.clone().map(|message| Event::Received { message });
    fake.recorder
        .record_all(std::iter::once(request).chain(received));
    let (Some(message), Some(session)) = (message, session.filter(|_| status == 202)) else {
        let text = match status {
            401 => "Unauthorized",
            404 => "Not Found: no open HTTP+SSE stream has this session",
            405 => "Method Not Allowed",
            _ => "Bad Request: the body is not JSON",
        };
        return refused(status, text, "POST");
    };
    if jsonrpc::is_response(&message) {
        fake.live.awaited.arrived(&message);
    }
    if let Incoming::Request { id, method, params } = jsonrpc::classify(&message) {
        let answer = script::choose_at(
            &fake.scenario.server,
            &fake.tally,
            fake.revision.as_deref(),
            method,
            params,
        );
        let reply = match answer.reply {
            Reply::Result(result) => {
                if method == "initialize" {
                    fake.settle(&result);
                }
                Some(jsonrpc::result(id, result))
            }
            Reply::Error(error) => Some(jsonrpc::error(id, &error)),
            Reply::Hang | Reply::Exit(_) | Reply::RawLine(_) => None,
        };
        if let Some(reply) = reply {
            let delay = std::time::Duration::from_millis(answer.delay_ms);
            let owner = std::sync::Arc::clone(&conn.fake);
            fake.live.spawn(async move {
                tokio::time::sleep(delay).await;
                owner.live.legacy.send(&owner, &session, reply);
            });
        }
    }
    let mut response = Response::new(Body::empty());
    *response.status_mut() = StatusCode::ACCEPTED;
    response
}

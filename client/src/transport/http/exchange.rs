//! The HTTP exchanges themselves: a request's POST and its JSON or SSE answer, the POST of a
//! notification or reply, the standalone GET stream, and the closing DELETE.
//!
//! Whatever arrives (on a POST stream or the GET stream) goes to the router, exactly as on
//! stdio; server requests get the router's answer POSTed back through the queue. A request task
//! ends as soon as its own response has been delivered, and fails its waiter with the reason
//! whenever it ends without one.
//!
//! Bodies and events are capped at the client's maximum message size and decoded through
//! [`framing`]: a JSON body over the cap, or an undecodable event on a request's own stream,
//! fails that request with `invalid_response` (the stream is the request's, so the fault is
//! attributable). A frame that decodes is read element by element: an element of a batch that
//! is not a usable JSON-RPC message is reported and skipped, the others are delivered, and the
//! request fails with `invalid_response` only if nothing in that frame answered it. On the
//! standalone stream an undecodable event is reported and skipped, and reading goes on.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use reqwest::header::{self, HeaderMap, HeaderName, HeaderValue};
use reqwest::{Response, StatusCode};
use tokio::sync::oneshot;

use super::{Busy, HEAD_START, Item, Shared, security};
use crate::error::Error;
use crate::jsonrpc::Incoming;
use crate::transport::framing::{self, SseError};

const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");

/// Reconnects of the standalone stream in a row without receiving anything, before giving up.
const STREAM_RECONNECTS: u32 = 3;
/// The first reconnect delay (doubled on each failure) unless the server set `retry:`.
const STREAM_BACKOFF: Duration = Duration::from_millis(250);
/// The longest reconnect delay, whatever the server asks for.
const STREAM_MAX_DELAY: Duration = Duration::from_secs(30);

/// The body kinds a POST answer may have.
#[derive(Debug, PartialEq)]
pub(crate) enum Body {
    Json,
    EventStream,
    Other(String),
}

fn body_kind(headers: &HeaderMap) -> Body {
    let Some(value) = headers.get(header::CONTENT_TYPE) else {
        return Body::Other("no Content-Type".into());
    };
    let text = String::from_utf8_lossy(value.as_bytes());
    let essence = text.split(';').next().unwrap_or("").trim();
    if essence.eq_ignore_ascii_case("application/json") {
        Body::Json
    } else if essence.eq_ignore_ascii_case("text/event-stream") {
        Body::EventStream
    } else {
        Body::Other(format!("Content-Type {text:?}"))
    }
}

impl Shared {
    /// Hands one received message to the router and queues the router's reply, if any.
    fn deliver(&self, message: Incoming) {
        if let Some(reply) = self.router.dispatch(message) {
            let _ = self.enqueue(Item::Message(
                serde_json::to_string(&reply).unwrap_or_default(),
            ));
        }
    }
}

impl Shared {
    /// Delivers the messages of one frame (a JSON body or an SSE event) on request `id`'s
    /// answer, `frame` naming it. An element that cannot be used is reported and skipped, as
    /// on stdio and the standalone stream, so the rest of a batch still arrives. Returns
    /// whether an element answered `id`, and why the first unusable one was refused: the
    /// request fails with that only when nothing in the frame answered it.
    fn deliver_frame(&self, bytes: &[u8], id: i64, frame: &str) -> (bool, Option<String>) {
        let (mut ours, mut bad) = (false, None);
        for message in self.router.read(bytes) {
            match message {
                Ok(message) => {
                    ours |= answers(&message, id);
                    self.deliver(message);
                }
                Err(why) => {
                    eprintln!("mcp-harness-client: skipping a message of {frame}: {why}");
                    bad.get_or_insert(why);
                }
            }
        }
        (ours, bad)
    }
}

fn answers(message: &Incoming, id: i64) -> bool {
    matches!(message, Incoming::Response { id: got, .. } if got.as_i64() == Some(id))
}

/// POSTs request `id` and delivers its answer; any failure goes to its waiter. `begun` is
/// dropped as soon as the answer begins (or the POST fails).
pub(super) async fn request(
    busy: Busy,
    id: i64,
    method: String,
    body: String,
    mirror: HeaderMap,
    begun: oneshot::Sender<()>,
) {
    let shared = &busy.0;
    if let Err(e) = exchange(shared, id, &method, body, mirror, begun).await
        && shared.seams.fails_on_status(e.status)
    {
        shared.router.fail(id, e);
    }
}

async fn exchange(
    shared: &Shared,
    id: i64,
    method: &str,
    body: String,
    mirror: HeaderMap,
    begun: oneshot::Sender<()>,
) -> Result<(), Error> {
    let initialize = method == "initialize";
    let what = format!("the {method} POST (request {id})");
    let (sent, session) = shared.send(shared.post(body, initialize).headers(mirror));
    let sent = sent.await;
    drop(begun);
    let reply = sent.map_err(|e| security::send_error(&e, &what))?;
    if shared.modern.load(std::sync::atomic::Ordering::Relaxed) && !reply.status().is_success() {
        return Err(super::modern::error_answer(reply, &what).await);
    }
    if initialize && reply.status().is_success() {
        shared.keep_session_id(reply.headers());
    }
    shared.check_status(reply.status(), session.as_ref(), &what)?;
    match shared.seams.reply_body(body_kind(reply.headers())) {
        Body::Json => {
            let bytes = read_body(reply, shared.max_message_bytes, &what).await?;
            let frame = format!("the JSON answer to {what}");
            match shared.deliver_frame(&bytes, id, &frame) {
                (true, _) => Ok(()),
                (false, Some(why)) => Err(Error::invalid(format!("{frame} is {why}"))),
                (false, None) => Err(Error::invalid(format!("{frame} is not its response"))),
            }
        }
        Body::EventStream => read_stream(shared, reply, id, &what).await,
        Body::Other(got) => Err(Error::invalid(format!(
            "{what} was answered with {got}; expected application/json or text/event-stream"
        ))),
    }
}

/// Reads a JSON body, refusing it as soon as it outgrows `max` bytes.
async fn read_body(reply: Response, max: usize, what: &str) -> Result<Vec<u8>, Error> {
    let too_large = || {
        Error::invalid(format!(
            "the JSON answer to {what} is larger than the {max}-byte message size cap"
        ))
    };
    if reply.content_length().is_some_and(|len| len > max as u64) {
        return Err(too_large());
    }
    let mut body = Vec::new();
    let mut chunks = reply.bytes_stream();
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk.map_err(|e| security::send_error(&e, what))?;
        if chunk.len() > max - body.len() {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// Reads a POST's SSE stream until the response to `id` has been delivered.
async fn read_stream(shared: &Shared, reply: Response, id: i64, what: &str) -> Result<(), Error> {
    let events = framing::sse_events(reply.bytes_stream(), shared.max_message_bytes);
    let mut events = std::pin::pin!(events);
    while let Some(event) = events.next().await {
        let event = event.map_err(|e| stream_error(e, what))?;
        let frame = format!("an event on the SSE answer to {what}");
        match shared.deliver_frame(event.data.as_bytes(), id, &frame) {
            (true, _) => return Ok(()),
            (false, Some(why)) => return Err(Error::invalid(format!("{frame} is {why}"))),
            (false, None) => {}
        }
    }
    Err(Error::closed(format!(
        "the SSE answer to {what} ended without the response"
    )))
}

fn stream_error(e: SseError<reqwest::Error>, what: &str) -> Error {
    match e {
        SseError::Transport(e) => security::send_error(&e, what),
        SseError::Event(why) => Error::invalid(format!("the SSE answer to {what} carries {why}")),
    }
}

/// POSTs a notification or an answer to a server request and waits for its (202) reply,
/// at most the request timeout. Failures can only be reported on stderr.
pub(super) async fn post_message(shared: &Shared, body: String) {
    let (sent, session) = shared.send(shared.post(body, false));
    let what = "a notification or reply POST";
    let outcome = match tokio::time::timeout(shared.request_timeout, sent).await {
        Ok(Ok(reply)) => shared.check_status(reply.status(), session.as_ref(), what),
        Ok(Err(e)) => Err(security::send_error(&e, what)),
        Err(_) => Err(Error::closed(format!("no answer to {what} in time"))),
    };
    if let Err(e) = outcome {
        eprintln!("mcp-harness-client: {e}");
    }
}

/// Ends the session with `DELETE`; 405 means the server does not allow it, which is fine.
pub(super) async fn delete_session(shared: &Shared, grace: Duration) {
    let delete = shared.decorate(shared.http.delete(shared.url.clone()), false);
    let (sent, _) = shared.send(delete);
    let what = "the session DELETE";
    match tokio::time::timeout(grace, sent).await {
        Ok(Ok(reply)) if reply.status() == StatusCode::METHOD_NOT_ALLOWED => {}
        Ok(Ok(reply)) if reply.status().is_success() => {}
        Ok(Ok(reply)) => eprintln!(
            "mcp-harness-client: the server answered HTTP {} to {what}",
            reply.status()
        ),
        Ok(Err(e)) => eprintln!("mcp-harness-client: {}", security::send_error(&e, what)),
        Err(_) => eprintln!("mcp-harness-client: no answer to {what} in time"),
    }
}

/// How one connection of the standalone stream ended.
enum Ended {
    /// Refused (405 or another answer that retrying will not change): stop listening.
    Refused,
    /// Dropped after delivering `delivered` messages: reconnect.
    Dropped { delivered: usize },
}

/// Keeps the standalone GET stream open: reconnects with `Last-Event-ID` after a drop, with a
/// doubling delay (or the server's `retry:`), and gives up after a few fruitless attempts. It
/// never replays earlier requests. Each (re)connect first lets running requests finish, for at
/// most [`HEAD_START`] (see `Shared::requests_done`).
pub(super) async fn listen(shared: Arc<Shared>) {
    let mut last_event_id: Option<HeaderValue> = None;
    let mut retry: Option<Duration> = None;
    let mut failures = 0;
    loop {
        shared.requests_done(HEAD_START).await;
        match listen_once(&shared, &mut last_event_id, &mut retry).await {
            Ended::Refused => return,
            Ended::Dropped { delivered } if delivered > 0 => failures = 0,
            Ended::Dropped { .. } => {}
        }
        if !shared.seams.reopens_stream() {
            return;
        }
        if shared.seams.stream_drop_loses_session() {
            shared.forget_session();
        }
        failures += 1;
        if failures > STREAM_RECONNECTS {
            eprintln!("mcp-harness-client: giving up on the server's event stream");
            return;
        }
        let backoff = retry.unwrap_or(STREAM_BACKOFF * 2u32.pow(failures - 1));
        tokio::time::sleep(backoff.min(STREAM_MAX_DELAY)).await;
    }
}

async fn listen_once(
    shared: &Shared,
    last_event_id: &mut Option<HeaderValue>,
    retry: &mut Option<Duration>,
) -> Ended {
    let what = "the event stream GET";
    let get = shared
        .stream_http
        .get(shared.url.clone())
        .header(header::ACCEPT, "text/event-stream");
    let mut get = shared.decorate(get, false);
    if let Some(id) = shared.seams.resume_from(last_event_id.as_ref()) {
        get = get.header(LAST_EVENT_ID, id.clone());
    }
    let (sent, session) = shared.send(get);
    let reply = match sent.await {
        Ok(reply) => reply,
        Err(e) => {
            eprintln!("mcp-harness-client: {}", security::send_error(&e, what));
            return Ended::Dropped { delivered: 0 };
        }
    };
    if reply.status() == StatusCode::METHOD_NOT_ALLOWED {
        return Ended::Refused;
    }
    if let Err(e) = shared.check_status(reply.status(), session.as_ref(), what) {
        eprintln!("mcp-harness-client: {e}");
        return Ended::Refused;
    }
    if body_kind(reply.headers()) != Body::EventStream {
        eprintln!("mcp-harness-client: {what} was not answered with an event stream");
        return Ended::Refused;
    }
    let mut delivered = 0;
    let events = framing::sse_events(reply.bytes_stream(), shared.max_message_bytes);
    let mut events = std::pin::pin!(events);
    while let Some(event) = events.next().await {
        let event = match event {
            Ok(event) => event,
            Err(SseError::Event(why)) => {
                eprintln!("mcp-harness-client: skipping {why} on {what}");
                continue;
            }
            Err(e) => {
                eprintln!("mcp-harness-client: {}", stream_error(e, what));
                break;
            }
        };
        if let Ok(id) = HeaderValue::from_str(&event.id) {
            if !event.id.is_empty() {
                *last_event_id = Some(id);
            }
        }
        if event.retry.is_some() {
            *retry = event.retry;
        }
        for message in shared.router.read(event.data.as_bytes()) {
            match message {
                Ok(message) => {
                    delivered += 1;
                    shared.deliver(message);
                }
                Err(why) => eprintln!("mcp-harness-client: skipping an event on {what}: {why}"),
            }
        }
    }
    Ended::Dropped { delivered }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(content_type: Option<&str>) -> HeaderMap {
        let mut h = HeaderMap::new();
        if let Some(ct) = content_type {
            h.insert(header::CONTENT_TYPE, HeaderValue::from_str(ct).unwrap());
        }
        h
    }

    #[test]
    fn content_types_are_matched_on_their_essence() {
        assert_eq!(body_kind(&headers(Some("application/json"))), Body::Json);
        let json = headers(Some("Application/JSON; charset=utf-8"));
        assert_eq!(body_kind(&json), Body::Json);
        let sse = headers(Some("text/event-stream;charset=UTF-8"));
        assert_eq!(body_kind(&sse), Body::EventStream);
        assert!(matches!(
            body_kind(&headers(Some("text/plain"))),
            Body::Other(_)
        ));
        assert!(matches!(body_kind(&headers(None)), Body::Other(_)));
    }
}

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
//!
//! Events without data (the priming event of 2025-11-25: an id and an empty `data`, or a bare
//! `retry:`) carry nothing to deliver; their id and retry are kept. A request's SSE stream that
//! ends or breaks before its response is not given up at once:
//! - legacy eras (2025-03-26 to 2025-11-25): when the stream carried an event id, it is resumed
//!   with a GET carrying `Last-Event-ID` (the last id seen on that stream), after the server's
//!   `retry:` if it sent one; the request itself is never sent again. A resuming GET that
//!   breaks again before any event is followed by another from the same id. Resuming stops
//!   after a few reconnects in a row that bring nothing, or on a GET the server refuses. Without an
//!   event id there is nothing to resume from: the request fails;
//! - 2026-07-28, which has no resumption: the request is re-issued once as a new request with
//!   a new id (the changelog's rule for a broken response stream): `jsonrpc::reissued_id`, an
//!   id the session never uses; its response is handed to the original's waiter.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use reqwest::header::{self, HeaderMap, HeaderName, HeaderValue};
use reqwest::{Response, StatusCode};
use tokio::sync::oneshot;

use super::{Busy, HEAD_START, Item, Shared, legacy_sse, modern, security};
use crate::auth::Budget;
use crate::error::{Error, ErrorKind};
use crate::jsonrpc::Incoming;
use crate::seams::Seams;
use crate::seams::wire::{AfterCut, Body, Wire};
use crate::transport::framing::{self, SseError};
use std::sync::atomic::Ordering;

const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");

/// Reconnects of the standalone stream in a row without receiving anything, before giving up.
const STREAM_RECONNECTS: u32 = 3;
/// The first reconnect delay (doubled on each failure) unless the server set `retry:`.
const STREAM_BACKOFF: Duration = Duration::from_millis(250);
/// The longest reconnect delay of our own backoff (a server's `retry:` is honoured as sent).
const STREAM_MAX_DELAY: Duration = Duration::from_secs(30);

/// How a body is read, from its `Content-Type`: by the media type's essence, so parameters
/// (`; charset=utf-8`) change nothing.
pub(super) fn body_kind(headers: &HeaderMap, seams: &Seams) -> Body {
    let Some(value) = headers.get(header::CONTENT_TYPE) else {
        return Body::Other("no Content-Type".into());
    };
    let text = String::from_utf8_lossy(value.as_bytes());
    let essence = seams.media_type(text.split(';').next().unwrap_or("").trim(), &text);
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
    pub(super) fn deliver(&self, message: Incoming) {
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
    /// `wire` is the id the request went out with: `id`, or for a re-issued request its new
    /// id, whose response is handed to `id`'s waiter.
    fn deliver_frame(
        &self,
        bytes: &[u8],
        id: i64,
        wire: i64,
        frame: &str,
    ) -> (bool, Option<String>) {
        let (mut ours, mut bad) = (false, None);
        for message in self.router.read(bytes) {
            match message {
                Ok(message) => {
                    let message = match message {
                        Incoming::Response { id: got, outcome }
                            if wire != id && got.as_i64() == Some(wire) =>
                        {
                            Incoming::Response {
                                id: id.into(),
                                outcome,
                            }
                        }
                        other => other,
                    };
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

/// How a request's exchange ended without its response.
enum Stop {
    /// For good: the request fails with this.
    Failed(Error),
    /// Its SSE stream ended or broke before the response: it may be resumed or re-issued.
    Cut(Error),
}

impl From<Error> for Stop {
    fn from(e: Error) -> Self {
        Stop::Failed(e)
    }
}

/// Where a request's SSE stream stands: what resuming it needs.
#[derive(Default)]
struct Cursor {
    /// The id of the last event that carried one.
    last_id: Option<HeaderValue>,
    /// The server's last `retry:`.
    retry: Option<Duration>,
    /// Events with data received since the stream was last (re)connected.
    events: usize,
}

impl Cursor {
    fn note(&mut self, event: &eventsource_stream::Event) {
        if !event.id.is_empty()
            && let Ok(id) = HeaderValue::from_str(&event.id)
        {
            self.last_id = Some(id);
        }
        if event.retry.is_some() {
            self.retry = event.retry;
        }
        if !event.data.is_empty() {
            self.events += 1;
        }
    }
}

async fn exchange(
    shared: &Arc<Shared>,
    id: i64,
    method: &str,
    body: String,
    mirror: HeaderMap,
    begun: oneshot::Sender<()>,
) -> Result<(), Error> {
    let what = format!("the {method} POST (request {id})");
    let mut cursor = Cursor::default();
    let first = Post {
        id,
        wire: id,
        method,
        body: body.clone(),
        mirror: mirror.clone(),
        what: &what,
    };
    let mut outcome = first.clone().send(shared, Some(begun), &mut cursor).await;
    let (mut resent, mut reissued, mut fruitless) = (false, false, 0u32);
    loop {
        let cut = match outcome {
            Ok(()) => return Ok(()),
            Err(Stop::Failed(e)) => return Err(e),
            Err(Stop::Cut(e)) => e,
        };
        let modern = shared.modern.load(std::sync::atomic::Ordering::Relaxed);
        let correct = if modern && !reissued {
            AfterCut::Reissue
        } else if !modern && cursor.last_id.is_some() && fruitless < STREAM_RECONNECTS {
            AfterCut::Resume
        } else {
            AfterCut::Fail
        };
        outcome = match shared.seams.after_stream_cut(correct, resent) {
            AfterCut::Fail => return Err(cut),
            AfterCut::Resume => {
                fruitless += 1;
                if fruitless > 1 && !shared.seams.keeps_event_id_after_recut() {
                    cursor.last_id = None;
                }
                let backoff = (STREAM_BACKOFF * 2u32.pow(fruitless - 1)).min(STREAM_MAX_DELAY);
                let delay = cursor.retry.unwrap_or(backoff);
                tokio::time::sleep(shared.seams.reconnect_delay(delay, backoff)).await;
                let resumed = resume(shared, id, &what, &mut cursor).await;
                if cursor.events > 0 {
                    fruitless = 0;
                }
                resumed
            }
            AfterCut::Reissue => {
                reissued = true;
                cursor = Cursor::default();
                let wire = crate::jsonrpc::reissued_id(id);
                // A new request: a span of its own, whose context it carries.
                let (body, span) = reissue_body(&body, method, id, wire);
                let again = Post {
                    wire,
                    body,
                    mirror: mirror.clone(),
                    ..first.clone()
                };
                let sent = again.send(shared, None, &mut cursor).await;
                if let Some(span) = span {
                    span.end(match &sent {
                        Ok(()) => None,
                        Err(Stop::Failed(e) | Stop::Cut(e)) => Some(e),
                    });
                }
                sent
            }
            AfterCut::Resend => {
                resent = true;
                cursor = Cursor::default();
                first.clone().send(shared, None, &mut cursor).await
            }
        };
    }
}

/// `body` (one JSON-RPC request, first sent as `of`) with its id replaced by `wire`, and the
/// span of that re-issue with its context in the body's `_meta` (when a span is recorded).
fn reissue_body(
    body: &str,
    method: &str,
    of: i64,
    wire: i64,
) -> (String, Option<crate::telemetry::spans::ReissueSpan>) {
    match serde_json::from_str::<serde_json::Value>(body) {
        Ok(mut message) => {
            message["id"] = wire.into();
            let span = crate::telemetry::spans::ReissueSpan::start(method, of, wire, &mut message);
            (serde_json::to_string(&message).unwrap_or_default(), span)
        }
        Err(_) => (body.to_owned(), None),
    }
}

/// One POST of request `id`, sent with the id `wire` (`id`, or a re-issue's new id).
#[derive(Clone)]
struct Post<'a> {
    id: i64,
    wire: i64,
    method: &'a str,
    body: String,
    mirror: HeaderMap,
    what: &'a str,
}

impl Post<'_> {
    /// POSTs the request and reads its answer until the response has been delivered.
    /// `begun` is dropped as soon as the answer begins (or the POST fails).
    async fn send(
        self,
        shared: &Arc<Shared>,
        begun: Option<oneshot::Sender<()>>,
        cursor: &mut Cursor,
    ) -> Result<(), Stop> {
        let Post {
            id,
            wire,
            method,
            body,
            mirror,
            what,
        } = self;
        let initialize = method == "initialize";
        let build = || {
            shared
                .post(body.clone(), initialize)
                .headers(mirror.clone())
        };
        let sent = shared
            .send_authorized(&build, what, Budget::default())
            .await;
        drop(begun);
        let (reply, session) = sent?;
        if reply.status().is_success() {
            shared.answered.store(true, Ordering::Relaxed);
        }
        if shared.on_sse() {
            // HTTP+SSE: the answer comes as an event of the server's stream.
            return Ok(shared.check_status(reply.status(), None, what)?);
        }
        if shared.sse_fallback
            && !shared.answered.load(Ordering::Relaxed)
            && legacy_sse::refusal_may_mean_old_server(reply.status())
        {
            let status = reply.status();
            let body = modern::read_error_body(reply).await;
            let modern_error = modern::is_modern_refusal(&body);
            let fall_back = shared.seams.sse_fallback(!modern_error, modern_error);
            if fall_back && legacy_sse::connect(shared, what).await {
                let (reply, _) = shared
                    .send_authorized(&build, what, Budget::default())
                    .await?;
                return Ok(shared.check_status(reply.status(), None, what)?);
            }
            return Err(match shared.modern.load(Ordering::Relaxed) {
                true => modern::error_from_body(status, &body, what),
                false => Error::http_status(
                    status.as_u16(),
                    format!("the server answered HTTP {status} to {what}"),
                ),
            }
            .into());
        }
        if shared.modern.load(std::sync::atomic::Ordering::Relaxed) && !reply.status().is_success()
        {
            return Err(super::modern::error_answer(reply, what).await.into());
        }
        if initialize && reply.status().is_success() {
            shared.keep_session_id(reply.headers());
        }
        shared.check_status(reply.status(), session.as_ref(), what)?;
        match shared
            .seams
            .reply_body(body_kind(reply.headers(), &shared.seams))
        {
            Body::Json => {
                let bytes = read_body(reply, shared.max_message_bytes, what).await?;
                let frame = format!("the JSON answer to {what}");
                match shared.deliver_frame(&bytes, id, wire, &frame) {
                    (true, _) => Ok(()),
                    (false, Some(why)) => Err(Error::invalid(format!("{frame} is {why}")).into()),
                    (false, None) => {
                        Err(Error::invalid(format!("{frame} is not its response")).into())
                    }
                }
            }
            Body::EventStream => read_stream(shared, reply, id, wire, what, cursor).await,
            Body::Other(got) => Err(Error::invalid(format!(
                "{what} was answered with {got}; expected application/json or text/event-stream"
            ))
            .into()),
        }
    }
}

/// Resumes request `id`'s broken SSE stream: a GET carrying `Last-Event-ID`, whose stream is
/// read as the rest of the broken one. A GET that cannot be sent counts as one more cut; one
/// the server refuses (405 or another error status, or an answer that is not a stream) ends
/// the request.
async fn resume(shared: &Shared, id: i64, what: &str, cursor: &mut Cursor) -> Result<(), Stop> {
    let what = format!("the GET resuming the SSE answer to {what}");
    let last = shared.seams.resume_from(cursor.last_id.as_ref()).cloned();
    let build = || {
        let get = shared
            .http
            .get(shared.url.clone())
            .header(header::ACCEPT, "text/event-stream");
        let get = shared.decorate(get, false);
        match &last {
            Some(last) => get.header(LAST_EVENT_ID, last.clone()),
            None => get,
        }
    };
    cursor.events = 0;
    let (reply, session) = shared
        .send_authorized(&build, &what, Budget::default())
        .await
        .map_err(|e| match e.kind {
            ErrorKind::AuthFailed => Stop::Failed(e),
            _ => Stop::Cut(e),
        })?;
    shared.check_status(reply.status(), session.as_ref(), &what)?;
    if body_kind(reply.headers(), &shared.seams) != Body::EventStream {
        return Err(Error::closed(format!("{what} was not answered with an event stream")).into());
    }
    read_stream(shared, reply, id, id, &what, cursor).await
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

/// Reads a request's SSE stream until the response to `id` (sent as `wire`) has been
/// delivered, noting ids and `retry:` in `cursor`. Events without data are skipped.
async fn read_stream(
    shared: &Shared,
    reply: Response,
    id: i64,
    wire: i64,
    what: &str,
    cursor: &mut Cursor,
) -> Result<(), Stop> {
    let events = framing::sse_events(reply.bytes_stream(), shared.max_message_bytes);
    let mut events = std::pin::pin!(events);
    while let Some(event) = events.next().await {
        let event = match event {
            Ok(event) => event,
            Err(SseError::Transport(e)) => {
                return Err(Stop::Cut(security::send_error(&e, what)));
            }
            Err(e) => return Err(Stop::Failed(stream_error(e, what))),
        };
        cursor.note(&event);
        if event.data.is_empty() {
            continue;
        }
        let frame = format!("an event on the SSE answer to {what}");
        match shared.deliver_frame(event.data.as_bytes(), id, wire, &frame) {
            (true, _) => return Ok(()),
            (false, Some(why)) => {
                return Err(Stop::Failed(Error::invalid(format!("{frame} is {why}"))));
            }
            (false, None) => {}
        }
    }
    Err(Stop::Cut(Error::closed(format!(
        "the SSE answer to {what} ended without the response"
    ))))
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
    let what = "a notification or reply POST";
    let build = || shared.post(body.clone(), false);
    let sent = shared.send_authorized(&build, what, Budget::default());
    let outcome = match tokio::time::timeout(shared.request_timeout, sent).await {
        Ok(Ok((reply, session))) => shared.check_status(reply.status(), session.as_ref(), what),
        Ok(Err(e)) => Err(e),
        Err(_) => Err(Error::closed(format!("no answer to {what} in time"))),
    };
    if let Err(e) = outcome {
        eprintln!("mcp-harness-client: {e}");
    }
}

/// Ends the session with `DELETE`; 405 means the server does not allow it, which is fine.
pub(super) async fn delete_session(shared: &Shared, grace: Duration) {
    let build = || shared.decorate(shared.http.delete(shared.url.clone()), false);
    let what = "the session DELETE";
    let sent = shared.send_authorized(&build, what, Budget::default());
    match tokio::time::timeout(grace, sent).await {
        Ok(Ok((reply, _))) if reply.status() == StatusCode::METHOD_NOT_ALLOWED => {}
        Ok(Ok((reply, _))) if reply.status().is_success() => {}
        Ok(Ok((reply, _))) => eprintln!(
            "mcp-harness-client: the server answered HTTP {} to {what}",
            reply.status()
        ),
        Ok(Err(e)) => eprintln!("mcp-harness-client: {e}"),
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
        let backoff = (STREAM_BACKOFF * 2u32.pow(failures - 1)).min(STREAM_MAX_DELAY);
        let delay = retry.unwrap_or(backoff);
        tokio::time::sleep(shared.seams.reconnect_delay(delay, backoff)).await;
    }
}

async fn listen_once(
    shared: &Shared,
    last_event_id: &mut Option<HeaderValue>,
    retry: &mut Option<Duration>,
) -> Ended {
    let what = "the event stream GET";
    let last = shared.seams.resume_from(last_event_id.as_ref()).cloned();
    let build = || {
        let get = shared
            .stream_http
            .get(shared.url.clone())
            .header(header::ACCEPT, "text/event-stream");
        let get = shared.decorate(get, false);
        match &last {
            Some(id) => get.header(LAST_EVENT_ID, id.clone()),
            None => get,
        }
    };
    let (reply, session) = match shared
        .send_authorized(&build, what, Budget::passive())
        .await
    {
        Ok(sent) => sent,
        Err(e) => {
            eprintln!("mcp-harness-client: {e}");
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
    if body_kind(reply.headers(), &shared.seams) != Body::EventStream {
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
        // A priming event (an id and empty data) or a bare `retry:` carries no message.
        if event.data.is_empty() || !shared.seams.get_stream_delivers() {
            continue;
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
    fn a_reissued_request_keeps_everything_but_its_id() {
        let body = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x"}}"#;
        let (again, span) = reissue_body(body, "tools/call", 7, -7);
        assert!(span.is_none(), "no span without a recorded first one");
        let again: serde_json::Value = serde_json::from_str(&again).unwrap();
        let mut expected: serde_json::Value = serde_json::from_str(body).unwrap();
        expected["id"] = (-7).into();
        assert_eq!(again, expected);
    }

    #[test]
    fn content_types_are_matched_on_their_essence() {
        assert_eq!(
            body_kind(&headers(Some("application/json")), &Seams::default()),
            Body::Json
        );
        let json = headers(Some("Application/JSON; charset=utf-8"));
        assert_eq!(body_kind(&json, &Seams::default()), Body::Json);
        let sse = headers(Some("text/event-stream;charset=UTF-8"));
        assert_eq!(body_kind(&sse, &Seams::default()), Body::EventStream);
        assert!(matches!(
            body_kind(&headers(Some("text/plain")), &Seams::default()),
            Body::Other(_)
        ));
        assert!(matches!(
            body_kind(&headers(None), &Seams::default()),
            Body::Other(_)
        ));
    }
}

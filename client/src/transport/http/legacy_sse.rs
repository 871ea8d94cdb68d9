//! The fallback to the deprecated HTTP+SSE transport (2024-11-05), for a server that hosts
//! no Streamable HTTP endpoint at the URL the client was given.
//!
//! The rule (every revision's "Backwards Compatibility" section): when the first POST fails
//! with 400, 404 or 405, GET the same URL expecting an SSE stream whose first event is
//! `endpoint`; if it comes, the server speaks the old transport, and every later message is
//! POSTed to the URI that event names, while the server's messages arrive as `message`
//! events on that stream. From 2026-07-28 the fallback is skipped when the refusal's body is
//! a recognised modern JSON-RPC error (a modern server refusing a version, a method or a
//! header), which `modern::is_modern_refusal` tells.
//!
//! Choices where the text is silent:
//! - a modern-only client never falls back: it does not speak the old era at all;
//! - the endpoint URI must be on the origin of the given URL (the request carries the same
//!   authorization); another origin, an unreadable URI, a first event that is not
//!   `endpoint` or none within the request timeout means no HTTP+SSE server: the first
//!   POST's own error stands;
//! - the refused message is then POSTed again to the endpoint URI, so the handshake goes on
//!   in the old transport with nothing else changed;
//! - when the stream ends, nothing can answer the client any more: the connection closes.

use std::sync::Arc;

use futures_util::{Stream, StreamExt};
use reqwest::header;
use reqwest::{StatusCode, Url};

use super::{Shared, lock};
use crate::auth::Budget;
use crate::seams::wire::{Body, Wire};
use crate::transport::framing::{self, SseError};

/// The statuses of a first POST after which a client that supports old servers tries the
/// HTTP+SSE GET (2025-03-26 names any 4xx, its examples 404 and 405; later revisions name
/// these three).
pub(super) fn refusal_may_mean_old_server(status: StatusCode) -> bool {
    matches!(status.as_u16(), 400 | 404 | 405)
}

/// GETs the URL looking for an HTTP+SSE server; on an `endpoint` event, switches `shared` to
/// that transport (its POST URI, and a task reading the stream) and returns true.
pub(super) async fn connect(shared: &Arc<Shared>, what: &str) -> bool {
    let what = format!("the GET looking for an HTTP+SSE server after {what} was refused");
    let build = || {
        shared
            .stream_http
            .get(shared.url.clone())
            .header(header::ACCEPT, "text/event-stream")
    };
    let reply = match shared
        .send_authorized(&build, &what, Budget::default())
        .await
    {
        Ok((reply, _)) => reply,
        Err(e) => {
            eprintln!("mcp-harness-client: {e}");
            return false;
        }
    };
    if !reply.status().is_success()
        || super::exchange::body_kind(reply.headers(), &shared.seams) != Body::EventStream
    {
        return false;
    }
    let mut events = Box::pin(framing::sse_events(
        reply.bytes_stream(),
        shared.max_message_bytes,
    ));
    let first = tokio::time::timeout(shared.request_timeout, events.next()).await;
    let Ok(Some(Ok(event))) = first else {
        eprintln!("mcp-harness-client: {what} brought no event");
        return false;
    };
    if event.event != "endpoint" {
        return false;
    }
    let endpoint = match shared.url.join(event.data.trim()) {
        Ok(url) if url.origin() == shared.url.origin() => url,
        _ => {
            eprintln!(
                "mcp-harness-client: the HTTP+SSE endpoint event names a URI that is not on \
                 the server's origin; not using it"
            );
            return false;
        }
    };
    *lock(&shared.sse_endpoint) = Some(endpoint);
    let task = tokio::spawn(read(Arc::clone(shared), events));
    if let Some(old) = lock(&shared.listener).replace(task.abort_handle()) {
        old.abort();
    }
    true
}

/// Delivers the stream's `message` events to the router until it ends; then closes the
/// router, since nothing else can carry the server's answers.
async fn read<S, E>(shared: Arc<Shared>, mut events: std::pin::Pin<Box<S>>)
where
    S: Stream<Item = Result<eventsource_stream::Event, SseError<E>>>,
    E: std::fmt::Display,
{
    while let Some(event) = events.next().await {
        let event = match event {
            Ok(event) => event,
            Err(SseError::Event(why)) => {
                eprintln!("mcp-harness-client: skipping {why} on the HTTP+SSE stream");
                continue;
            }
            Err(SseError::Transport(e)) => {
                eprintln!("mcp-harness-client: the HTTP+SSE stream broke: {e}");
                break;
            }
        };
        // `message` is the event type an event without `event:` has.
        if !(event.event.is_empty() || event.event == "message") || event.data.is_empty() {
            continue;
        }
        for message in shared.router.read(event.data.as_bytes()) {
            match message {
                Ok(message) => shared.deliver(message),
                Err(why) => {
                    eprintln!("mcp-harness-client: skipping an event on the HTTP+SSE stream: {why}")
                }
            }
        }
    }
    shared.router.close("the server's HTTP+SSE stream ended");
}

/// Where a message goes once on the old transport: the endpoint URI (see the seam).
pub(super) fn post_url(shared: &Shared) -> Option<Url> {
    let endpoint = lock(&shared.sse_endpoint).clone()?;
    Some(shared.seams.sse_post_url(&endpoint, &shared.url).clone())
}

//! Carrying out a verdict: the HTTP answer, and for scripted requests the handler's reply in
//! the handler's HTTP shape (JSON or SSE, split, cut, another status or content type, a
//! redirect) and its hostile-server faults (events ahead of the response, padding, a drip, a
//! cut that drops or holds the connection), or no answer at all (a hang, or a dropped
//! connection for a scripted crash).
//!
//! Every JSON-RPC message the fake answers with is recorded as `Sent` just before its bytes
//! are handed to the connection, as the stdio fake does.

use axum::body::Body;
use std::time::Duration;

use axum::http::header::{
    ALLOW, CACHE_CONTROL, CONTENT_LENGTH, CONTENT_TYPE, LOCATION, WWW_AUTHENTICATE,
};
use axum::http::{HeaderName, HeaderValue, StatusCode};
use axum::response::Response;
use mcp_harness_scenarios::model::{
    Emit, Faults, HttpReply, Redirect, Reply, ReplyFormat, RpcError, Truncate,
};
use mcp_harness_scenarios::transcript::Event;
use serde_json::Value;

use super::endpoint::{Conn, Fake};
use super::sse::{self, End, Paced};
use crate::script::Answer;
use crate::{batch, faults, jsonrpc};

/// What a standalone stream that is cut (`get: cut`) carries before the cut, and the pause
/// between its bytes: a client that resumes sends the event id as `Last-Event-ID`. The 38
/// bytes 20 ms apart, then the cut's flush, make the stream last about 750 ms.
const CUT_STREAM: &str = "id: cut-stream-1\ndata:\n\n: keep-alive\n\n";
const CUT_STREAM_GAP: Duration = Duration::from_millis(20);

/// What the fake does with a request, decided before it is recorded.
#[derive(Debug)]
pub enum Verdict {
    /// 401 with `WWW-Authenticate: Bearer`: the bearer token is missing or wrong.
    Unauthorized,
    /// A status with a short plain-text body (and an `Allow` header for 405).
    Plain {
        /// The status.
        status: u16,
        /// The body.
        text: &'static str,
        /// The `Allow` header, if any.
        allow: Option<&'static str>,
    },
    /// An error status with a JSON-RPC error body.
    Reject(Rejection),
    /// 202 with no body: a notification or response was accepted.
    Accepted,
    /// The script answers a request.
    Answer {
        /// The request's id.
        id: Value,
        /// Whether it is `initialize` (whose success opens a session).
        initialize: bool,
        /// The script's answer.
        answer: Box<Answer>,
    },
    /// A standalone SSE stream, held open (or, when `cut`, cut after about 750 ms: the 38
    /// bytes of [`CUT_STREAM`] 20 ms apart, then the cut).
    Stream {
        /// Cut the stream rather than hold it.
        cut: bool,
    },
    /// An accepted batch holding requests: one batched answer (see [`crate::batch::play`]),
    /// as JSON or as one SSE event, per the script's `replies`.
    Batch(Vec<batch::Item>),
    /// An error status whose JSON body is a JSON-RPC error answering the request `id` (a
    /// modern server's refusal: 400 for bad `_meta`, versions or headers, 404 for an
    /// unknown method).
    Refuse {
        /// The request's id.
        id: Value,
        /// The HTTP status.
        status: u16,
        /// The JSON-RPC error.
        error: RpcError,
    },
}

/// An error status whose body is a JSON-RPC error with a null id.
#[derive(Debug, Clone, Copy)]
pub struct Rejection {
    status: u16,
    code: i64,
    message: &'static str,
}

impl Rejection {
    /// A rejection with the generic server error code -32000.
    pub fn new(status: u16, message: &'static str) -> Rejection {
        Rejection::coded(status, -32000, message)
    }

    /// A rejection with a specific JSON-RPC error code.
    pub fn coded(status: u16, code: i64, message: &'static str) -> Rejection {
        Rejection {
            status,
            code,
            message,
        }
    }
}

impl From<Rejection> for Verdict {
    fn from(rejection: Rejection) -> Verdict {
        Verdict::Reject(rejection)
    }
}

impl Verdict {
    /// The status the fake answers with; 0 when it drops the connection without one.
    pub fn status(&self) -> u16 {
        match self {
            Verdict::Unauthorized => 401,
            Verdict::Plain { status, .. } => *status,
            Verdict::Reject(r) => r.status,
            Verdict::Accepted => 202,
            Verdict::Stream { .. } => 200,
            Verdict::Refuse { status, .. } => scripted_status(*status).as_u16(),
            Verdict::Batch(items) if batch::exits(items) => 0,
            Verdict::Batch(_) => 200,
            Verdict::Answer { answer, .. } => {
                let http = answer.http.as_ref();
                let redirect = http.and_then(|h| h.redirect.as_ref());
                match (http.and_then(|h| h.status), redirect, &answer.reply) {
                    (Some(status), _, _) => scripted_status(status).as_u16(),
                    (None, Some(redirect), _) => scripted_status(redirect.status).as_u16(),
                    (None, None, Reply::Exit(_)) => 0,
                    (None, None, _) => 200,
                }
            }
        }
    }
}

/// Answers a request as judged.
pub async fn perform(conn: &Conn, verdict: Verdict) -> Response {
    match verdict {
        Verdict::Unauthorized => {
            let mut response = plain(
                StatusCode::UNAUTHORIZED,
                "Unauthorized: a valid bearer token is required",
            );
            set(&mut response, WWW_AUTHENTICATE, "Bearer");
            response
        }
        Verdict::Plain {
            status,
            text,
            allow,
        } => {
            let mut response = plain(scripted_status(status), text);
            if let Some(allow) = allow {
                set(&mut response, ALLOW, allow);
            }
            response
        }
        Verdict::Reject(r) => {
            let error = RpcError {
                code: r.code,
                message: r.message.to_owned(),
                data: None,
            };
            let text = sent(&conn.fake, jsonrpc::error(&Value::Null, &error));
            let mut response = with_body(scripted_status(r.status), Body::from(text));
            set(&mut response, CONTENT_TYPE, "application/json");
            response
        }
        Verdict::Accepted => with_body(StatusCode::ACCEPTED, Body::empty()),
        Verdict::Refuse { id, status, error } => {
            let text = sent(&conn.fake, jsonrpc::error(&id, &error));
            let mut response = with_body(scripted_status(status), Body::from(text));
            set(&mut response, CONTENT_TYPE, "application/json");
            response
        }
        Verdict::Stream { cut } => {
            let keep_alive = match cut {
                // A priming event (an id, empty data: 2025-11-25 § Sending Messages) and a
                // keep-alive comment, a byte every 20 ms, then the connection drops.
                true => Paced::dripped(CUT_STREAM.as_bytes(), CUT_STREAM_GAP, End::Cut),
                false => Paced::new(sse::KEEP_ALIVE.as_bytes(), false, End::KeepAlive),
            };
            let mut response = with_body(StatusCode::OK, keep_alive.into_body());
            set(&mut response, CONTENT_TYPE, "text/event-stream");
            set(&mut response, CACHE_CONTROL, "no-cache");
            response
        }
        Verdict::Answer {
            id,
            initialize,
            answer,
        } => scripted(conn, id, initialize, *answer).await,
        Verdict::Batch(items) => batched(conn, items).await,
    }
}

/// Plays an accepted batch and answers it as one batch. A scripted exit drops the
/// connection; a batch whose every request hangs is never answered.
async fn batched(conn: &Conn, items: Vec<batch::Item>) -> Response {
    let fake = &conn.fake;
    let responses = match batch::play(items).await {
        batch::Played::Exit(_) => {
            conn.kill.notify_one();
            return std::future::pending().await;
        }
        batch::Played::Responses(responses) if responses.is_empty() => {
            return std::future::pending().await;
        }
        batch::Played::Responses(responses) => responses,
    };
    fake.recorder.record_all(batch::sent_records(&responses));
    let text = Value::Array(responses).to_string();
    match fake.scenario.server.http.replies {
        ReplyFormat::Sse => {
            let mut response = with_body(StatusCode::OK, Body::from(sse::event(&text)));
            set(&mut response, CONTENT_TYPE, "text/event-stream");
            set(&mut response, CACHE_CONTROL, "no-cache");
            response
        }
        ReplyFormat::Json => {
            let mut response = with_body(StatusCode::OK, Body::from(text));
            set(&mut response, CONTENT_TYPE, "application/json");
            response
        }
    }
}

/// Plays the script's answer to a request.
async fn scripted(conn: &Conn, id: Value, initialize: bool, answer: Answer) -> Response {
    let fake = &conn.fake;
    let http = answer.http.unwrap_or_default();
    if answer.delay_ms > 0 {
        tokio::time::sleep(std::time::Duration::from_millis(answer.delay_ms)).await;
    }
    if let Some(status) = http.status {
        if let Reply::Error(error) = &answer.reply {
            // A refusal before the request was read answers no id: the member is left out.
            let mut refusal = jsonrpc::error(&Value::Null, error);
            if let Some(fields) = refusal.as_object_mut() {
                fields.remove("id");
            }
            let text = sent(fake, refusal);
            let mut response = with_body(scripted_status(status), Body::from(text));
            set_content_type(&mut response, &http, "application/json");
            return response;
        }
        let text = format!("scripted status {status}\n");
        let mut response = with_body(scripted_status(status), Body::from(text));
        set_content_type(&mut response, &http, "text/plain; charset=utf-8");
        return response;
    }
    if let Some(redirect) = &http.redirect {
        return redirected(fake, redirect);
    }
    let faults = answer.faults.unwrap_or_default();
    // Items ahead of the response can only travel as events of a stream.
    let sse = http.format.unwrap_or(fake.scenario.server.http.replies) == ReplyFormat::Sse
        || !faults.before.is_empty();
    let hang = match answer.reply {
        Reply::Exit(_) => {
            // A crash mid-call: the connection goes, with no answer and nothing recorded.
            conn.kill.notify_one();
            return std::future::pending().await;
        }
        Reply::Hang if !sse => {
            let _guard = close_guard(conn, &id);
            return std::future::pending().await;
        }
        Reply::Hang => true,
        Reply::Result(_) | Reply::Error(_) | Reply::RawLine(_) => false,
    };
    let opens_session = initialize
        && matches!(answer.reply, Reply::Result(_))
        && fake.scenario.server.http.sessions;
    if initialize && let Reply::Result(result) = &answer.reply {
        fake.settle(result);
    }

    let mut body: Vec<u8> = Vec::new();
    if sse {
        for message in &http.events_before {
            body.extend_from_slice(sse::event(&sent(fake, message.clone())).as_bytes());
        }
        for emit in &faults.before {
            body.extend_from_slice(&emitted_events(fake, emit));
        }
    }
    let payload = match answer.reply {
        Reply::Result(result) => Some(sent_padded(fake, jsonrpc::result(&id, result), &faults)),
        Reply::Error(error) => Some(sent_padded(fake, jsonrpc::error(&id, &error), &faults)),
        Reply::RawLine(line) => {
            fake.recorder.record(Event::SentRaw { line: line.clone() });
            Some(line.into_bytes())
        }
        Reply::Hang | Reply::Exit(_) => None,
    };
    match (payload, sse) {
        (Some(payload), true) => body.extend_from_slice(&sse::event_bytes(&payload)),
        (Some(payload), false) => body = payload,
        (None, _) => {}
    }

    let halved = http.cut || faults.truncate.is_some();
    let end = match (hang, faults.truncate, halved) {
        (true, _, _) | (false, Some(Truncate::Stall), _) => End::Hold,
        (false, _, true) => End::Cut,
        (false, _, false) => End::Finish,
    };
    let split = sse && http.split;
    let full_length = body.len();
    let sent_bytes = match halved {
        true => faults::first_half(&body),
        false => &body[..],
    };
    let body = match (faults.drip_ms, end) {
        (Some(ms), _) => Paced::dripped(sent_bytes, Duration::from_millis(ms), end).into_body(),
        (None, End::Finish) if !split => Body::from(body),
        (None, _) => {
            let paced = Paced::new(sent_bytes, split, end);
            // Only a held stream has a guard: dropping one records the client's close.
            match end == End::Hold {
                true => paced.with_guard(close_guard(conn, &id)).into_body(),
                false => paced.into_body(),
            }
        }
    };
    let mut response = with_body(StatusCode::OK, body);
    if sse {
        set_content_type(&mut response, &http, "text/event-stream");
        set(&mut response, CACHE_CONTROL, "no-cache");
    } else {
        set_content_type(&mut response, &http, "application/json");
        if halved {
            // Promise the whole body, so the cut is a visible short read.
            if let Ok(length) = HeaderValue::from_str(&full_length.to_string()) {
                response.headers_mut().insert(CONTENT_LENGTH, length);
            }
        }
    }
    if opens_session && let Ok(id) = HeaderValue::from_str(&fake.sessions.open()) {
        response
            .headers_mut()
            .insert(HeaderName::from_static("mcp-session-id"), id);
    }
    response
}

/// A scripted redirect: its status, a `Location` on the reserved `.invalid` name, no body
/// worth reading. Nothing else is recorded: the request already was.
fn redirected(fake: &Fake, redirect: &Redirect) -> Response {
    let location = redirect.to.location(fake.port);
    let mut response = with_body(
        scripted_status(redirect.status),
        Body::from(format!("moved to {location}\n")),
    );
    set(&mut response, CONTENT_TYPE, "text/plain; charset=utf-8");
    if let Ok(value) = HeaderValue::from_str(&location) {
        response.headers_mut().insert(LOCATION, value);
    }
    response
}

/// Records a response as sent (its padding, if any, noted rather than kept) and returns its
/// bytes with the padding (and invalid UTF-8, when the faults ask for it).
fn sent_padded(fake: &Fake, response: Value, faults: &Faults) -> Vec<u8> {
    let (text, recorded) = faults::pad(response, faults.padding_bytes);
    fake.recorder.record(Event::Sent { message: recorded });
    faults::encode(text, faults.invalid_utf8)
}

/// The events of one item ahead of a response, `repeat` times; records the first copy and a
/// note with the count.
fn emitted_events(fake: &Fake, emit: &Emit) -> Vec<u8> {
    let Some((bytes, event)) = faults::emitted(emit) else {
        return Vec::new();
    };
    fake.recorder.record(event);
    if emit.repeat > 1 {
        fake.recorder.record(faults::repeat_note(emit.repeat - 1));
    }
    let one = sse::event_bytes(&bytes);
    one.repeat(usize::try_from(emit.repeat).unwrap_or(1))
}

/// Records `StreamClosed` for a request left unanswered when it is dropped: the client
/// closed the response stream (or the trial ended with the request still open).
#[derive(Debug)]
struct CloseGuard {
    fake: std::sync::Arc<Fake>,
    id: Value,
}

impl Drop for CloseGuard {
    fn drop(&mut self) {
        let id = self.id.clone();
        self.fake.recorder.record(Event::StreamClosed { id });
    }
}

/// A guard for a request the fake never answers, in every era: a 2026-07-28 client cancels by
/// closing the stream, and seed 000 asks a 2025 client to abort the HTTP request as well.
fn close_guard(conn: &Conn, id: &Value) -> CloseGuard {
    CloseGuard {
        fake: std::sync::Arc::clone(&conn.fake),
        id: id.clone(),
    }
}

/// Records a message as sent and returns its text.
fn sent(fake: &Fake, message: Value) -> String {
    let text = message.to_string();
    fake.recorder.record(Event::Sent { message });
    text
}

/// A scripted status, or 500 for a number HTTP cannot carry.
fn scripted_status(status: u16) -> StatusCode {
    StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}

fn with_body(status: StatusCode, body: Body) -> Response {
    let mut response = Response::new(body);
    *response.status_mut() = status;
    response
}

fn plain(status: StatusCode, text: &'static str) -> Response {
    let mut response = with_body(status, Body::from(format!("{text}\n")));
    set(&mut response, CONTENT_TYPE, "text/plain; charset=utf-8");
    response
}

fn set(response: &mut Response, name: HeaderName, value: &'static str) {
    response
        .headers_mut()
        .insert(name, HeaderValue::from_static(value));
}

/// The script's `content_type` when it gives one that can be sent, else `default`.
fn set_content_type(response: &mut Response, http: &HttpReply, default: &'static str) {
    let value = http
        .content_type
        .as_deref()
        .and_then(|v| HeaderValue::from_str(v).ok())
        .unwrap_or(HeaderValue::from_static(default));
    response.headers_mut().insert(CONTENT_TYPE, value);
}

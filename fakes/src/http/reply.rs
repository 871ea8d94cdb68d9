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
    Emit, Faults, HttpReply, Redirect, Reply, ReplyFormat, RpcError, Send, Truncate, Via,
};
use mcp_harness_scenarios::transcript::Event;
use serde_json::Value;

use super::endpoint::{Conn, Fake};
use super::sse::{self, End, Paced};
use crate::script::Answer;
use crate::tasks::Work;
use crate::{batch, faults, jsonrpc, sends};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// What a standalone stream that is cut (`get: cut`) carries before the cut: a priming event
/// (a client that resumes sends its id as `Last-Event-ID`), then, after [`CUT_STREAM_GAP`]
/// (scaled with the run), a keep-alive comment; then the cut. Two pieces, not a drip: on a
/// loaded machine each of a drip's timer waits can take a hundred times its length, and a
/// 38-byte drip then cut the stream after the trial had ended.
const CUT_STREAM_EVENT: &str = "id: cut-stream-1\ndata:\n\n";
const CUT_STREAM_KEEP_ALIVE: &str = ": keep-alive\n\n";
const CUT_STREAM_GAP_MS: u64 = 700;

/// What the fake does with a request, decided before it is recorded.
#[derive(Debug)]
pub enum Verdict {
    /// 401 with `WWW-Authenticate: Bearer`: the bearer token is missing or wrong.
    Unauthorized,
    /// An authorization trial's challenge: 401 or 403 with this `WWW-Authenticate` value
    /// (see `auth::bearer`).
    Challenge {
        /// 401 or 403.
        status: u16,
        /// The `WWW-Authenticate` header's value.
        header: String,
        /// A `DPoP-Nonce` to send along (RFC 9449 §9), if the endpoint demands one.
        nonce: Option<String>,
    },
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
        /// The whole request, when the rule sends messages (for their `$request` pointers).
        trigger: Option<Value>,
    },
    /// A notification whose rule sends messages: they are sent (on the GET stream), and the
    /// notification is accepted (202), unless the rule answers it (a faulty server).
    Notified {
        /// The rule's answer.
        answer: Box<Answer>,
        /// The notification.
        trigger: Value,
    },
    /// A standalone SSE stream, held open (or, when `cut`, cut after about 750 ms: the 38
    /// bytes of [`CUT_STREAM`] 20 ms apart, then the cut). With `resume` (a `Last-Event-ID`)
    /// naming an event of a stream the fake keeps, that stream resumed instead.
    Stream {
        /// Cut the stream rather than hold it.
        cut: bool,
        /// The `Last-Event-ID` header, if any.
        resume: Option<String>,
    },
    /// The HTTP+SSE (2024-11-05) stream a GET opens on a legacy-SSE script.
    LegacyStream,
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

    /// The JSON-RPC error its body carries. The request's handler records it in one piece
    /// with the request (see `endpoint::handle`), so nothing of another request comes between
    /// a refused request and its refusal.
    pub fn body(&self) -> Value {
        let error = RpcError {
            code: self.code,
            message: self.message.to_owned(),
            data: None,
        };
        jsonrpc::error(&Value::Null, &error)
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
            Verdict::Challenge { status, .. } => *status,
            Verdict::Plain { status, .. } => *status,
            Verdict::Reject(r) => r.status,
            Verdict::Accepted => 202,
            Verdict::Stream { .. } | Verdict::LegacyStream => 200,
            Verdict::Refuse { status, .. } => scripted_status(*status).as_u16(),
            Verdict::Batch(items) if batch::exits(items) => 0,
            Verdict::Batch(_) => 200,
            Verdict::Notified { answer, .. } if matches!(answer.reply, Reply::Hang) => 202,
            Verdict::Answer { answer, .. } | Verdict::Notified { answer, .. } => {
                answer_status(answer)
            }
        }
    }
}

/// The status a scripted answer is given; 0 when the connection drops without one.
fn answer_status(answer: &Answer) -> u16 {
    let http = answer.http.as_ref();
    let redirect = http.and_then(|h| h.redirect.as_ref());
    match (http.and_then(|h| h.status), redirect, &answer.reply) {
        (Some(status), _, _) => scripted_status(status).as_u16(),
        (None, Some(redirect), _) => scripted_status(redirect.status).as_u16(),
        (None, None, Reply::Exit(_)) => 0,
        (None, None, _) => 200,
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
        Verdict::Challenge {
            status,
            header,
            nonce,
        } => {
            let mut response = plain(
                scripted_status(status),
                "a valid bearer token with enough scope is required",
            );
            if let Ok(value) = axum::http::HeaderValue::from_str(&header) {
                response.headers_mut().insert(WWW_AUTHENTICATE, value);
            }
            if let Some(value) = nonce.and_then(|n| axum::http::HeaderValue::from_str(&n).ok()) {
                response.headers_mut().insert("dpop-nonce", value);
            }
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
            // Recorded already, with the request.
            let text = r.body().to_string();
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
        Verdict::Stream { cut, resume } => {
            let body = match cut {
                // A priming event (an id, empty data: 2025-11-25 § Sending Messages) and a
                // keep-alive comment, then the connection drops. With `http.retry_ms` the
                // priming event carries the `retry` field too.
                true => {
                    let scenario = &conn.fake.scenario;
                    let event = match scenario.server.http.retry_ms {
                        Some(ms) => format!("retry: {ms}\n{CUT_STREAM_EVENT}"),
                        None => CUT_STREAM_EVENT.to_owned(),
                    };
                    let pieces = [event.as_bytes(), CUT_STREAM_KEEP_ALIVE.as_bytes()];
                    let gap = Duration::from_millis(scenario.time_scale.ms(CUT_STREAM_GAP_MS));
                    Paced::in_pieces(pieces, gap, End::Cut).into_body()
                }
                false => conn
                    .fake
                    .live
                    .open_get(&conn.fake.recorder, resume.as_deref()),
            };
            let mut response = with_body(StatusCode::OK, body);
            set(&mut response, CONTENT_TYPE, "text/event-stream");
            set(&mut response, CACHE_CONTROL, "no-cache");
            response
        }
        Verdict::Answer {
            id,
            initialize,
            answer,
            trigger,
        } => scripted(conn, id, initialize, *answer, trigger).await,
        Verdict::Notified {
            mut answer,
            trigger,
        } => {
            let fake = Arc::clone(&conn.fake);
            let sends = std::mem::take(&mut answer.sends);
            conn.fake.live.spawn(async move {
                play_sends(&fake, &sends, None, &trigger, true).await;
            });
            match answer.reply {
                Reply::Hang => with_body(StatusCode::ACCEPTED, Body::empty()),
                _ => scripted(conn, Value::Null, false, *answer, None).await,
            }
        }
        Verdict::Batch(items) => batched(conn, items).await,
        Verdict::LegacyStream => super::legacy_sse::open(&conn.fake),
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
async fn scripted(
    conn: &Conn,
    id: Value,
    initialize: bool,
    mut answer: Answer,
    trigger: Option<Value>,
) -> Response {
    let fake = &conn.fake;
    match answer.task.take() {
        Some(Work::Result(task)) => return super::task_stream::result(conn, id, task),
        Some(Work::Watch(task)) => super::task_stream::watch(fake, task),
        None => {}
    }
    let http = answer.http.take().unwrap_or_default();
    if let Some(filter) = answer.listen.take() {
        return listening(conn, id, filter, answer.sends, trigger);
    }
    if http.status.is_none() && http.redirect.is_none() && is_live(fake, &answer, &http) {
        return live_answer(conn, id, initialize, answer, http, trigger).await;
    }
    if answer.delay_ms > 0 {
        // A client that gives up during the delay closes the stream: recorded as for a
        // request never answered, unless the wait ends first.
        let guard = close_guard(conn, &id);
        tokio::time::sleep(std::time::Duration::from_millis(answer.delay_ms)).await;
        guard.ended.store(true, Ordering::SeqCst);
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

/// Whether an answer is played live (see [`live_answer`]): it sends messages, its stream is
/// cut after some events, or it is an SSE answer the script shapes (ids, `retry`,
/// keep-alives). Only plain answers are: no faults, no split or cut, a result, an error or a
/// hang; the others are played as before, the script's stream settings aside.
fn is_live(fake: &Fake, answer: &Answer, http: &HttpReply) -> bool {
    let plain = answer.faults.is_none()
        && !http.split
        && !http.cut
        && matches!(
            answer.reply,
            Reply::Result(_) | Reply::Error(_) | Reply::Hang
        );
    plain
        && (!answer.sends.is_empty()
            || http.cut_after_events.is_some()
            || (is_sse(fake, http) && fake.live.shapes_streams()))
}

fn is_sse(fake: &Fake, http: &HttpReply) -> bool {
    http.format.unwrap_or(fake.scenario.server.http.replies) == ReplyFormat::Sse
        || !http.events_before.is_empty()
}

/// Plays an answer live. When anything travels on the request's own stream (a message
/// `via: post`, the scripted events before the response, a cut, an SSE answer), the answer
/// is an SSE stream fed by a task: the events before, the rule's messages before the reply
/// (each after its delay, waiting for responses where asked), the reply once they are out
/// and `delay_ms` has passed since the request, then the messages after it (the stream ends
/// after the reply, or after the last message after it sent `via: post`). Otherwise the
/// answer is JSON: the messages before it go on the GET stream first, those after it once
/// it is handed over.
async fn live_answer(
    conn: &Conn,
    id: Value,
    initialize: bool,
    answer: Answer,
    http: HttpReply,
    trigger: Option<Value>,
) -> Response {
    let fake = Arc::clone(&conn.fake);
    let due = tokio::time::Instant::now() + Duration::from_millis(answer.delay_ms);
    let (before, after) = sends::split(&answer.sends);
    let trigger = trigger.unwrap_or(Value::Null);
    let on_post = before
        .iter()
        .chain(&after)
        .any(|s| sends::via(s, false) == Via::Post);
    let stream = on_post || http.cut_after_events.is_some() || is_sse(&fake, &http);
    let opens_session = initialize
        && matches!(answer.reply, Reply::Result(_))
        && fake.scenario.server.http.sessions;
    if initialize && let Reply::Result(result) = &answer.reply {
        fake.settle(result);
    }
    let mut response = if stream {
        let guard = matches!(answer.reply, Reply::Hang).then(|| {
            Box::new(close_guard(conn, &id)) as Box<dyn std::fmt::Debug + std::marker::Send + Sync>
        });
        let (name, body) = fake
            .live
            .open_post(http.cut_after_events, http.cut_resumes, guard);
        let rule = Rule {
            stream: name,
            id,
            reply: answer.reply,
            events_before: http.events_before.clone(),
            before,
            after,
            trigger,
            due,
        };
        fake.live.spawn(rule.play(Arc::clone(&fake)));
        let mut response = with_body(StatusCode::OK, body);
        set_content_type(&mut response, &http, "text/event-stream");
        set(&mut response, CACHE_CONTROL, "no-cache");
        response
    } else {
        play_sends(&fake, &before, None, &trigger, false).await;
        tokio::time::sleep_until(due).await;
        let message = match answer.reply {
            Reply::Result(result) => jsonrpc::result(&id, result),
            Reply::Error(error) => jsonrpc::error(&id, &error),
            _ => {
                let _guard = close_guard(conn, &id);
                return std::future::pending().await;
            }
        };
        let text = sent(&fake, message);
        let mut response = with_body(StatusCode::OK, Body::from(text));
        set_content_type(&mut response, &http, "application/json");
        let later = Arc::clone(&fake);
        fake.live.spawn(async move {
            play_sends(&later, &after, None, &trigger, false).await;
        });
        response
    };
    if opens_session && let Ok(id) = HeaderValue::from_str(&fake.sessions.open()) {
        response
            .headers_mut()
            .insert(HeaderName::from_static("mcp-session-id"), id);
    }
    response
}

/// A subscription (2026-07-28 `subscriptions/listen`): an SSE stream that starts with the
/// acknowledgement of `filter`, then carries the rule's messages in script order (each
/// notification naming the subscription), and stays open until the client closes it (its
/// `StreamClosed` record is how a client's cancel shows), or until a message of the rule
/// answers the listen request (a graceful end: the stream then ends, and no `StreamClosed`
/// is recorded).
fn listening(
    conn: &Conn,
    id: Value,
    filter: Value,
    list: Vec<Send>,
    trigger: Option<Value>,
) -> Response {
    let fake = Arc::clone(&conn.fake);
    let guard = close_guard(conn, &id);
    let ended = Arc::clone(&guard.ended);
    let (name, body) = fake.live.open_post(None, 0, Some(Box::new(guard)));
    let trigger = trigger.unwrap_or(Value::Null);
    let player = Arc::clone(&fake);
    fake.live.spawn(async move {
        let ack = crate::modern::acknowledgement(&id, &filter);
        player.live.write(&player.recorder, &name, ack, false);
        for send in &list {
            if send.delay_ms > 0 {
                tokio::time::sleep(Duration::from_millis(send.delay_ms)).await;
            }
            let message = sends::substitute(&send.message, &trigger, &player.live.awaited);
            let message = crate::modern::on_subscription(message, &id);
            let response = sends::awaited_id(send, &message).map(|i| player.live.awaited.expect(i));
            let closing = sends::answers(&message, &id);
            player.live.write(&player.recorder, &name, message, closing);
            if closing {
                ended.store(true, Ordering::SeqCst);
                player.live.finish(&name);
                return;
            }
            if let Some(response) = response {
                sends::wait(response, player.live.request_timeout).await;
            }
        }
    });
    let mut response = with_body(StatusCode::OK, body);
    set(&mut response, CONTENT_TYPE, "text/event-stream");
    set(&mut response, CACHE_CONTROL, "no-cache");
    response
}

/// A rule played on the SSE stream answering its request.
struct Rule {
    stream: String,
    id: Value,
    reply: Reply,
    events_before: Vec<Value>,
    before: Vec<Send>,
    after: Vec<Send>,
    trigger: Value,
    due: tokio::time::Instant,
}

impl Rule {
    async fn play(self, fake: Arc<Fake>) {
        let live = &fake.live;
        for message in self.events_before {
            live.write(&fake.recorder, &self.stream, message, false);
        }
        let stream = Some(self.stream.as_str());
        play_sends(&fake, &self.before, stream, &self.trigger, false).await;
        tokio::time::sleep_until(self.due).await;
        let response = match self.reply {
            Reply::Result(result) => Some(jsonrpc::result(&self.id, result)),
            Reply::Error(error) => Some(jsonrpc::error(&self.id, &error)),
            _ => None,
        };
        let after_on_post = self.after.iter().any(|s| sends::via(s, false) == Via::Post);
        let answered = response.is_some();
        if let Some(response) = response {
            live.write(&fake.recorder, &self.stream, response, true);
            if !after_on_post {
                live.finish(&self.stream);
            }
        }
        play_sends(&fake, &self.after, stream, &self.trigger, false).await;
        if answered && after_on_post {
            live.finish(&self.stream);
        }
    }
}

/// Sends a rule's messages in order, each after its delay, its `$request` pointers filled
/// from `trigger`: on the stream `stream` when it travels `via: post` and there is one,
/// else on the GET stream; after a request marked `await_response`, waits for the client's
/// response (at most the request timeout).
async fn play_sends(
    fake: &Fake,
    list: &[Send],
    stream: Option<&str>,
    trigger: &Value,
    on_notification: bool,
) {
    for send in list {
        if send.delay_ms > 0 {
            tokio::time::sleep(Duration::from_millis(send.delay_ms)).await;
        }
        let message = sends::substitute(&send.message, trigger, &fake.live.awaited);
        let response = sends::awaited_id(send, &message).map(|id| fake.live.awaited.expect(id));
        match (sends::via(send, on_notification), stream) {
            (Via::Post, Some(name)) => fake.live.write(&fake.recorder, name, message, false),
            _ => fake.live.to_get(&fake.recorder, message),
        }
        if let Some(response) = response {
            sends::wait(response, fake.live.request_timeout).await;
        }
    }
}

/// A scripted redirect: its status, a `Location` on the reserved `.invalid` name, no body
/// worth reading. Nothing else is recorded: the request already was.
fn redirected(fake: &Fake, redirect: &Redirect) -> Response {
    let location = match (&redirect.to, &fake.auth) {
        (mcp_harness_scenarios::model::RedirectTarget::OtherOrigin, Some(auth)) => {
            format!("https://localhost:{}/mcp", auth.other_origin_port())
        }
        (to, _) => to.location(fake.port),
    };
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
pub(super) struct CloseGuard {
    fake: std::sync::Arc<Fake>,
    id: Value,
    /// Set when the fake ended the stream itself (a subscription closed gracefully, a task's
    /// outcome written).
    pub(super) ended: Arc<AtomicBool>,
}

impl Drop for CloseGuard {
    fn drop(&mut self) {
        if self.ended.load(Ordering::SeqCst) {
            return;
        }
        let id = self.id.clone();
        self.fake.recorder.record(Event::StreamClosed { id });
    }
}

/// A guard for a request the fake never answers, in every era: a 2026-07-28 client cancels by
/// closing the stream, and seed 000 asks a 2025 client to abort the HTTP request as well.
pub(super) fn close_guard(conn: &Conn, id: &Value) -> CloseGuard {
    CloseGuard {
        fake: std::sync::Arc::clone(&conn.fake),
        id: id.clone(),
        ended: Arc::new(AtomicBool::new(false)),
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

pub(super) fn with_body(status: StatusCode, body: Body) -> Response {
    let mut response = Response::new(body);
    *response.status_mut() = status;
    response
}

fn plain(status: StatusCode, text: &'static str) -> Response {
    let mut response = with_body(status, Body::from(format!("{text}\n")));
    set(&mut response, CONTENT_TYPE, "text/plain; charset=utf-8");
    response
}

pub(super) fn set(response: &mut Response, name: HeaderName, value: &'static str) {
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

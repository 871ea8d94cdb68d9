//! The upstream's answers on their way back to the host: a JSON body read whole, an SSE
//! stream relayed event by event; each message recorded (after the request that opened the
//! stream, see `ledger`) before it is relayed, with the answer faults applied.

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures_util::StreamExt;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::{Bytes, Frame};
use mcp_harness_scenarios::transcript::Event;
use serde_json::Value;
use tokio::sync::mpsc;

use super::fault::Kind;
use super::https::{Asked, Body, Ctx, full, is_jsonrpc};
use super::redact;
use super::sse::{self, Framer};
use super::{MALFORMED_LINE, note};

/// The request an answer belongs to: its place in the order, and the requests its body held.
pub(super) struct Stream {
    /// Its place among the requests (`Ledger::arrive`).
    pub seq: u64,
    /// The requests in its body.
    pub asked: Asked,
    /// Set once the host went away before the answer (and that is recorded).
    pub gone: Arc<AtomicBool>,
}

impl Stream {
    async fn write(&self, ctx: &Ctx, events: Vec<Event>) {
        ctx.ledger.write_after(&ctx.writer, self.seq, events).await;
    }
}

/// A body that fails at once: hyper then ends the connection without finishing the answer.
pub(super) fn cut_body() -> Body {
    let failed = futures_util::stream::once(async {
        Err::<Frame<Bytes>, _>(io::Error::other("cut by the recorder's fault"))
    });
    BodyExt::boxed(StreamBody::new(failed))
}

/// A JSON (or other) answer, read whole, recorded, faults applied.
pub(super) async fn json_answer(
    ctx: &Ctx,
    answer: reqwest::Response,
    stream: Stream,
    on_endpoint: bool,
) -> Body {
    // Media types are case-insensitive (`Application/JSON;charset=UTF-8`).
    let json = answer
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.to_ascii_lowercase().contains("json"));
    let bytes = match answer.bytes().await {
        Ok(bytes) => bytes,
        Err(e) => {
            note(&format!("the upstream's answer broke off: {e}"));
            return cut_body();
        }
    };
    if stream.gone.load(Ordering::SeqCst) || bytes.iter().all(u8::is_ascii_whitespace) {
        // Nobody receives an answer to a host that went away: nothing to record.
        return full(bytes);
    }
    let parsed = serde_json::from_slice::<Value>(&bytes);
    if !on_endpoint && !parsed.as_ref().is_ok_and(is_jsonrpc) {
        // Another path's answer (a metadata document, an error page) is no message.
        return full(bytes);
    }
    let Ok(parsed) = parsed else {
        if !json {
            // A page in another media type (a plain-text error) is no message.
            return full(bytes);
        }
        stream
            .write(
                ctx,
                vec![Event::SentRaw {
                    line: redact::raw_line(&String::from_utf8_lossy(&bytes)),
                }],
            )
            .await;
        return full(bytes);
    };
    let mut messages = match parsed {
        Value::Array(items) => items,
        one => vec![one],
    };
    let mut relayed = bytes;
    let single = messages.len() == 1;
    if single && let Some(message) = messages.first_mut() {
        match answer_faults(ctx, message, &stream).await {
            Answered::Relay {
                rewritten,
                malformed,
            } => {
                if rewritten {
                    relayed = Bytes::from(serde_json::to_vec(message).unwrap_or_default());
                }
                if malformed {
                    let mut text = format!("{MALFORMED_LINE}\n").into_bytes();
                    text.extend_from_slice(&relayed);
                    stream
                        .write(
                            ctx,
                            vec![Event::SentRaw {
                                line: redact::raw_line(&String::from_utf8_lossy(&text)),
                            }],
                        )
                        .await;
                    return full(Bytes::from(text));
                }
            }
            Answered::Cut => return cut_body(),
        }
    }
    let sent = messages.into_iter().map(|message| Event::Sent {
        message: ctx.redactor.server(message),
    });
    stream.write(ctx, sent.collect()).await;
    full(relayed)
}

/// What the answer faults made of one answer.
enum Answered {
    /// Relay it (`rewritten`: re-encode the message; `malformed`: a bad line goes first).
    Relay { rewritten: bool, malformed: bool },
    /// Cut the stream before it.
    Cut,
}

/// Applies the answer faults to `message` if it answers one of `asked` (recording each),
/// sleeping for a delay.
async fn answer_faults(ctx: &Ctx, message: &mut Value, stream: &Stream) -> Answered {
    let mut rewritten = false;
    let mut malformed = false;
    let is_answer = message.get("method").is_none();
    let Some((method, cursor)) = message
        .get("id")
        .filter(|_| is_answer)
        .and_then(|id| stream.asked.get(&id.to_string()))
    else {
        return Answered::Relay {
            rewritten,
            malformed,
        };
    };
    let id = message.get("id").cloned();
    for fault in ctx.faults.take(method, |k| !k.http_only()) {
        note(&format!("fault {} on the answer to {method}", fault.spec));
        stream
            .write(
                ctx,
                vec![Event::Fault {
                    spec: fault.spec.clone(),
                    id: id.clone(),
                }],
            )
            .await;
        match fault.kind {
            Kind::Delay(ms) => tokio::time::sleep(Duration::from_millis(ms)).await,
            Kind::Malformed => malformed = true,
            Kind::RepeatCursor => {
                rewritten |= super::stdio::repeat_cursor(message, cursor.as_ref());
            }
            Kind::Cut => return Answered::Cut,
            Kind::Status(_) | Kind::SessionLoss => {}
        }
    }
    Answered::Relay {
        rewritten,
        malformed,
    }
}

type Sender = mpsc::Sender<Result<Frame<Bytes>, io::Error>>;

/// Relays an SSE answer event by event, recording each, until either side ends it.
pub(super) async fn pump_sse(ctx: Arc<Ctx>, answer: reqwest::Response, tx: Sender, stream: Stream) {
    let mut upstream = answer.bytes_stream();
    let mut framer = Framer::default();
    let mut unanswered: Vec<String> = stream.asked.keys().cloned().collect();

    loop {
        let chunk = tokio::select! {
            () = tx.closed() => return gone(&ctx, &stream, &unanswered).await,
            chunk = upstream.next() => chunk,
        };
        let chunk = match chunk {
            Some(Ok(chunk)) => chunk,
            Some(Err(e)) => {
                note(&format!("the upstream's stream broke off: {e}"));
                let _ = tx
                    .send(Err(io::Error::other("the upstream's stream broke off")))
                    .await;
                return;
            }
            None => {
                let rest = framer.rest();
                if !rest.is_empty() {
                    let _ = tx.send(Ok(Frame::data(Bytes::from(rest)))).await;
                }
                return;
            }
        };
        for raw in framer.push(&chunk) {
            let mut out = raw;
            if let Some(data) = sse::data(&out) {
                match serde_json::from_str::<Value>(&data) {
                    Ok(mut message) => {
                        match answer_faults(&ctx, &mut message, &stream).await {
                            Answered::Cut => {
                                let _ = tx
                                    .send(Err(io::Error::other("cut by the recorder's fault")))
                                    .await;
                                return;
                            }
                            Answered::Relay {
                                rewritten,
                                malformed,
                            } => {
                                if malformed {
                                    stream
                                        .write(
                                            &ctx,
                                            vec![Event::SentRaw {
                                                line: MALFORMED_LINE.into(),
                                            }],
                                        )
                                        .await;
                                    let bad = format!("event: message\ndata: {MALFORMED_LINE}\n\n");
                                    if tx.send(Ok(Frame::data(Bytes::from(bad)))).await.is_err() {
                                        return gone(&ctx, &stream, &unanswered).await;
                                    }
                                }
                                if rewritten {
                                    out = sse::with_data(
                                        &out,
                                        &serde_json::to_string(&message).unwrap_or_default(),
                                    );
                                }
                            }
                        }
                        if let Some(id) = message
                            .get("id")
                            .filter(|_| message.get("method").is_none())
                        {
                            let id = id.to_string();
                            unanswered.retain(|u| *u != id);
                        }
                        stream
                            .write(
                                &ctx,
                                vec![Event::Sent {
                                    message: ctx.redactor.server(message),
                                }],
                            )
                            .await;
                    }
                    Err(_) => {
                        stream
                            .write(
                                &ctx,
                                vec![Event::SentRaw {
                                    line: redact::raw_line(&data),
                                }],
                            )
                            .await
                    }
                }
            }
            if tx.send(Ok(Frame::data(Bytes::from(out)))).await.is_err() {
                return gone(&ctx, &stream, &unanswered).await;
            }
        }
    }
}

/// The host dropped the stream: each request it still awaited is recorded as closed.
async fn gone(ctx: &Ctx, stream: &Stream, unanswered: &[String]) {
    closed_by_host(ctx, stream.seq, unanswered, &stream.gone).await;
}

/// Records, once, that the host closed the stream of request `seq` while `ids` were still
/// unanswered.
pub(super) async fn closed_by_host(ctx: &Ctx, seq: u64, ids: &[String], gone: &AtomicBool) {
    if gone.swap(true, Ordering::SeqCst) {
        return;
    }
    let closed: Vec<Event> = ids
        .iter()
        .filter_map(|id| serde_json::from_str(id).ok())
        .map(|id| Event::StreamClosed { id })
        .collect();
    if !closed.is_empty() {
        ctx.ledger.write_after(&ctx.writer, seq, closed).await;
    }
}

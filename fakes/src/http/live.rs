//! Streams the fake writes over time: a POST answered as a stream that carries a rule's
//! messages (`sends`) before its response, the standalone GET stream that carries the
//! messages sent `via: get`, and what resumability needs: event ids (`<stream>-<n>`, with a
//! priming event `<stream>-0` of empty data opening each stream), every stream's events kept,
//! a POST stream cut after some events (`cut_after_events`) finished on the GET that resumes
//! it with `Last-Event-ID` (after `cut_resumes` such GETs were cut again before any event).
//!
//! A message is recorded as `Sent` when it is first handed to a connection: a message
//! queued for a GET stream that is not open yet, or written on a cut stream nobody resumed,
//! is not in the transcript. A replayed message is not recorded again.
//!
//! The rules' timed messages are played by tasks this module spawns and keeps; [`Live::stop`]
//! aborts them (the fake's `stop` calls it), so nothing a trial started outlives it.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use axum::body::{Body, Bytes};
use mcp_harness_scenarios::model::HttpScript;
use mcp_harness_scenarios::transcript::Event;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use super::sse;
use crate::recorder::Recorder;
use crate::sends::Awaited;

/// A piece of a live body, or the error that cuts its connection.
type Chunk = Result<Bytes, std::io::Error>;

/// How often the standalone GET stream carries a keep-alive when the script sets none.
const GET_KEEP_ALIVE: Duration = sse::KEEP_ALIVE_EVERY;

/// Pause before cutting a connection, so the bytes already handed over leave first.
const CUT_FLUSH: Duration = Duration::from_millis(20);

/// The streams of one fake and the tasks playing rules' messages on them.
#[derive(Debug)]
pub struct Live {
    event_ids: bool,
    retry_ms: Option<u64>,
    keepalive: Option<Duration>,
    /// How long a rule waits for the client's response to a request it sent.
    pub request_timeout: Duration,
    /// The client's responses that rules wait for.
    pub awaited: Awaited,
    /// The HTTP+SSE (2024-11-05) streams of a legacy-SSE script.
    pub legacy: super::legacy_sse::Streams,
    state: Mutex<State>,
    tasks: Mutex<Option<JoinSet<()>>>,
}

#[derive(Debug, Default)]
struct State {
    /// Numbers the streams: `p<n>` for POST answers, `g<n>` for GETs.
    next: u64,
    streams: HashMap<String, Log>,
    /// The GET streams, the most recently (re)opened last.
    gets: Vec<String>,
    /// Messages for the GET stream while none is open, in order.
    queued: VecDeque<Value>,
}

/// One stream: its events so far and the connection carrying it, if any.
#[derive(Debug)]
struct Log {
    events: Vec<Kept>,
    to: Option<mpsc::UnboundedSender<Chunk>>,
    /// `to` is the connection that opened the stream (the one a cut drops).
    original: bool,
    /// Drop the original connection after this many events, and before the response.
    cut_after: Option<u32>,
    /// Cut this many of the GETs resuming the stream at once, before any event.
    cut_resumes: u32,
    /// The response has been written and the stream ended.
    finished: bool,
}

/// One message event of a stream.
#[derive(Debug)]
struct Kept {
    frame: Bytes,
    message: Value,
    recorded: bool,
}

impl Live {
    /// The streams of a fake playing `http`, waiting at most `request_timeout` for the
    /// client's responses.
    pub fn new(http: &HttpScript, request_timeout: Duration) -> Live {
        Live {
            event_ids: http.event_ids,
            retry_ms: http.retry_ms,
            keepalive: http.keepalive_ms.map(Duration::from_millis),
            request_timeout,
            awaited: Awaited::default(),
            legacy: super::legacy_sse::Streams::default(),
            state: Mutex::new(State::default()),
            tasks: Mutex::new(Some(JoinSet::new())),
        }
    }

    /// Whether the script asks anything of SSE streams (ids, `retry`, keep-alives), which
    /// makes every plain SSE answer a live one.
    pub fn shapes_streams(&self) -> bool {
        self.event_ids || self.retry_ms.is_some() || self.keepalive.is_some()
    }

    /// Runs `task` until it ends or the fake stops.
    pub fn spawn(&self, task: impl Future<Output = ()> + Send + 'static) {
        let mut tasks = self.tasks.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(tasks) = tasks.as_mut() {
            // Reap finished tasks so the set does not grow with the trial.
            while tasks.try_join_next().is_some() {}
            tasks.spawn(task);
        }
    }

    /// Aborts every task and ends every stream.
    pub fn stop(&self) {
        let tasks = self
            .tasks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        drop(tasks);
        self.lock().streams.clear();
        self.legacy.stop();
    }

    /// Opens the SSE stream answering a POST: returns its name and the response body.
    /// `guard` lives as long as the body (see `reply::CloseGuard`).
    pub fn open_post(
        &self,
        cut_after: Option<u32>,
        cut_resumes: u32,
        guard: Option<Box<dyn std::fmt::Debug + Send + Sync>>,
    ) -> (String, Body) {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut state = self.lock();
        state.next += 1;
        let name = format!("p{}", state.next);
        let opening = self.opening(&name);
        if !opening.is_empty() {
            let _ = tx.send(Ok(opening));
        }
        let mut log = Log {
            events: Vec::new(),
            to: Some(tx),
            original: true,
            cut_after,
            cut_resumes,
            finished: false,
        };
        if cut_after == Some(0) {
            cut(&mut log);
        }
        state.streams.insert(name.clone(), log);
        (name, body(rx, self.keepalive, guard))
    }

    /// Writes `message` as the next event of the stream `name` (the response to its request
    /// when `response`), delivering it if a connection carries the stream.
    pub fn write(&self, recorder: &Recorder, name: &str, message: Value, response: bool) {
        let mut state = self.lock();
        let Some(log) = state.streams.get_mut(name) else {
            return;
        };
        if log.finished {
            return;
        }
        let n = self.keep(name, log, message);
        // The response never reaches a connection that is to be cut.
        if response && log.original && log.cut_after.is_some() {
            cut(log);
        }
        deliver(log, n - 1, recorder);
        if log.original && log.cut_after == Some(u32::try_from(n).unwrap_or(u32::MAX)) {
            cut(log);
        }
    }

    /// Ends the stream `name` after what was written: its connection's body ends.
    pub fn finish(&self, name: &str) {
        if let Some(log) = self.lock().streams.get_mut(name) {
            log.finished = true;
            log.to = None;
        }
    }

    /// Sends `message` on the standalone GET stream: the one most recently opened that is
    /// still connected, or, when none is, as soon as one opens.
    pub fn to_get(&self, recorder: &Recorder, message: Value) {
        let mut state = self.lock();
        let state = &mut *state;
        for name in state.gets.iter().rev() {
            let Some(log) = state.streams.get_mut(name) else {
                continue;
            };
            if log.to.as_ref().is_none_or(mpsc::UnboundedSender::is_closed) {
                log.to = None;
                continue;
            }
            let n = self.keep(name, log, message);
            deliver(log, n - 1, recorder);
            return;
        }
        state.queued.push_back(message);
    }

    /// Answers a GET: with `last_event_id` naming an event of a known stream, that stream
    /// resumed (the events after it, then whatever comes; a finished POST stream then ends);
    /// otherwise a new standalone stream, which first carries the queued messages.
    pub fn open_get(&self, recorder: &Recorder, last_event_id: Option<&str>) -> Body {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut state = self.lock();
        let state = &mut *state;
        let resumed = last_event_id.and_then(|id| {
            let (name, n) = id.rsplit_once('-')?;
            let n: usize = n.parse().ok()?;
            state
                .streams
                .contains_key(name)
                .then(|| (name.to_owned(), n))
        });
        if let Some((name, n)) = resumed {
            if let Some(retry) = self.retry_ms {
                let _ = tx.send(Ok(Bytes::from(format!("retry: {retry}\n\n"))));
            }
            let log = state.streams.get_mut(&name).expect("looked up above");
            if log.cut_resumes > 0 {
                // Cut again before any event id: the client still has only the id it sent.
                log.cut_resumes -= 1;
                let _ = tx.send(Err(std::io::Error::other(
                    "scripted cut: the resumed stream drops before any event",
                )));
                return body(rx, None, None);
            }
            let get = name.starts_with('g');
            log.to = Some(tx);
            log.original = false;
            for index in n.min(log.events.len())..log.events.len() {
                deliver(log, index, recorder);
            }
            if log.finished {
                log.to = None;
            }
            if get {
                state.gets.retain(|g| *g != name);
                state.gets.push(name);
            }
            let keepalive = self.keepalive.or(Some(GET_KEEP_ALIVE));
            return body(rx, keepalive, None);
        }
        state.next += 1;
        let name = format!("g{}", state.next);
        // A stream with nothing to start with starts with a keep-alive, as it always did.
        let opening = self.opening(&name);
        let opening = match opening.is_empty() {
            true => Bytes::from_static(sse::KEEP_ALIVE.as_bytes()),
            false => opening,
        };
        let _ = tx.send(Ok(opening));
        let mut log = Log {
            events: Vec::new(),
            to: Some(tx),
            original: true,
            cut_after: None,
            cut_resumes: 0,
            finished: false,
        };
        for message in state.queued.drain(..) {
            let n = log.events.len() + 1;
            let frame = self.frame(&name, n, &message);
            log.events.push(Kept {
                frame,
                message,
                recorded: false,
            });
            deliver(&mut log, n - 1, recorder);
        }
        state.streams.insert(name.clone(), log);
        state.gets.push(name);
        body(rx, self.keepalive.or(Some(GET_KEEP_ALIVE)), None)
    }

    /// What a stream starts with: with event ids, a priming event (the id `<name>-0`, empty
    /// data) carrying the `retry` field if any; else the `retry` field alone, if any.
    fn opening(&self, name: &str) -> Bytes {
        let retry = self
            .retry_ms
            .map(|ms| format!("retry: {ms}\n"))
            .unwrap_or_default();
        match (self.event_ids, retry.is_empty()) {
            (true, _) => Bytes::from(format!("id: {name}-0\n{retry}data:\n\n")),
            (false, false) => Bytes::from(format!("{retry}\n")),
            (false, true) => Bytes::new(),
        }
    }

    /// Event `n` of stream `name`: `message`, with its id when the script gives ids.
    /// Keeps `message` as the next event of the stream `name` (its log `log`), framed;
    /// returns its number (from 1).
    fn keep(&self, name: &str, log: &mut Log, message: Value) -> usize {
        let n = log.events.len() + 1;
        let frame = self.frame(name, n, &message);
        log.events.push(Kept {
            frame,
            message,
            recorded: false,
        });
        n
    }

    fn frame(&self, name: &str, n: usize, message: &Value) -> Bytes {
        let event = sse::event(&message.to_string());
        match self.event_ids {
            true => Bytes::from(format!("id: {name}-{n}\n{event}")),
            false => Bytes::from(event),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Hands event `index` to the stream's connection, if any; the first time it leaves, it is
/// recorded as sent. A connection that went away is forgotten.
fn deliver(log: &mut Log, index: usize, recorder: &Recorder) {
    let Some(to) = &log.to else { return };
    let Some(kept) = log.events.get_mut(index) else {
        return;
    };
    if to.send(Ok(kept.frame.clone())).is_err() {
        log.to = None;
        return;
    }
    if !kept.recorded {
        kept.recorded = true;
        recorder.record(Event::Sent {
            message: kept.message.clone(),
        });
    }
}

/// Drops the stream's connection without ending the stream.
fn cut(log: &mut Log) {
    if let Some(to) = log.to.take() {
        let _ = to.send(Err(std::io::Error::other(
            "scripted cut: the stream's connection drops",
        )));
    }
    log.cut_after = None;
}

/// A response body fed by `rx`, with a keep-alive comment after each `keepalive` of
/// silence; an error cuts the connection (after a short flush).
fn body(
    rx: mpsc::UnboundedReceiver<Chunk>,
    keepalive: Option<Duration>,
    guard: Option<Box<dyn std::fmt::Debug + Send + Sync>>,
) -> Body {
    let stream = futures_util::stream::unfold((rx, guard), move |(mut rx, guard)| async move {
        let next = match keepalive {
            Some(every) => match tokio::time::timeout(every, rx.recv()).await {
                Ok(next) => next,
                Err(_) => {
                    let comment = Bytes::from_static(sse::KEEP_ALIVE.as_bytes());
                    return Some((Ok(comment), (rx, guard)));
                }
            },
            None => rx.recv().await,
        };
        match next {
            Some(Ok(bytes)) => Some((Ok(bytes), (rx, guard))),
            Some(Err(cut)) => {
                tokio::time::sleep(CUT_FLUSH).await;
                Some((Err(cut), (rx, guard)))
            }
            None => None,
        }
    });
    Body::from_stream(stream)
}

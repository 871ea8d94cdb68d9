//! The stdio server loop: newline-delimited JSON-RPC on stdin/stdout, as a client under test
//! sees a server it launched as its child.
//!
//! Each request is answered from its own task, so a delayed or hanging answer never holds up
//! later ones. An answer is recorded and queued as a whole line in one step; a writer task
//! writes what is queued in one go, after writing the records of it to the transcript, so
//! under load many answers share one write and the transcript can never show a client's
//! reaction ahead of what caused it. Received messages are recorded in memory too, and
//! written out before the fake waits for more input. All writes to stdout go through one
//! lock. A handler's hostile-server `faults` are carried out in the `faults` submodule, all
//! of a handler's lines under one hold of the lock, during which nothing else is queued, so
//! whatever the client does meanwhile, the handler's script is played whole and unmixed.
//! A line holding a JSON-RPC batch is recorded message by message and answered as one batch
//! line where the version in force allows batches (see [`crate::batch`]). The process always ends through
//! [`std::process::exit`]: dropping a runtime with a pending stdin read would hang.

use std::convert::Infallible;
use std::io::Write;
use std::pin::Pin;
use std::sync::{Arc, MutexGuard, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use mcp_harness_scenarios::model::{OnEof, OnSigterm, Reply, Send, ServerScript};
use mcp_harness_scenarios::transcript::Event;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWriteExt, BufReader, ReadBuf, Stdin, Stdout};
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::{Mutex, Notify};

use crate::batch;
use crate::jsonrpc::{self, Incoming};
use crate::modern::{self, Decision};
use crate::recorder::Recorder;
use crate::script;
use crate::sends::{self, Awaited};
use crate::tasks::{self, Work};

mod faults;

/// How much of an invalid line goes into the transcript.
const INVALID_LINE_KEEP: usize = 1024;

/// How long an exit waits for a write already in progress, so it does not tear a line.
const EXIT_WRITE_GRACE: Duration = Duration::from_millis(50);

/// Plays `script` on stdin/stdout until stdin ends, a signal or a scripted exit ends the
/// process, as protocol `revision` when the case runs at several. `request_timeout` is the
/// case's (scaled): the longest the fake waits for the client's response to a request it
/// sent with `await_response`. Must run inside a tokio runtime with IO and time enabled;
/// never returns.
pub async fn serve(
    script: ServerScript,
    revision: Option<String>,
    request_timeout: Duration,
    recorder: Recorder,
) -> Infallible {
    // First, so that a SIGTERM arriving right after start-up is already ours to record.
    let sigterm = signal(SignalKind::terminate());
    recorder.record(Event::Started);
    let on_eof = script.on_eof;
    let on_sigterm = script.on_sigterm;
    start_stderr_writer(script.stderr_noise_bytes);
    let fake = Arc::new(Fake {
        script,
        tally: script::Tally::default(),
        tasks: tasks::Store::default(),
        revision,
        negotiated: std::sync::Mutex::new(None),
        recorder,
        stdout: Mutex::new(tokio::io::stdout()),
        queue: std::sync::Mutex::new(Queue::default()),
        queued: Notify::new(),
        awaited: Awaited::default(),
        request_timeout,
        cancelled: std::sync::Mutex::new(Vec::new()),
    });
    tokio::spawn(write_queued(Arc::clone(&fake)));
    match sigterm {
        Ok(stream) => {
            tokio::spawn(watch_sigterm(Arc::clone(&fake), stream, on_sigterm));
        }
        Err(e) => log(&format!("cannot install the SIGTERM handler: {e}")),
    }

    read_stdin(&fake).await;
    fake.recorder.record(Event::StdinEof);
    match on_eof {
        OnEof::Exit => fake.exit(0).await,
        OnEof::Ignore => std::future::pending().await,
    }
}

/// State shared by the loop and the request tasks.
struct Fake {
    script: ServerScript,
    /// How often the rules with `times` have answered.
    tally: script::Tally,
    /// The tasks the fake created.
    tasks: tasks::Store,
    revision: Option<String>,
    /// The version the last `initialize` answered with a result settled on.
    negotiated: std::sync::Mutex<Option<String>>,
    recorder: Recorder,
    stdout: Mutex<Stdout>,
    /// Lines recorded as sent and waiting for the writer task.
    queue: std::sync::Mutex<Queue>,
    /// Wakes the writer task when the queue stops being empty.
    queued: Notify,
    /// The client's responses the fake's own requests wait for (`await_response`).
    awaited: Awaited,
    /// The longest such a wait lasts: the case's request timeout.
    request_timeout: Duration,
    /// The ids of the requests the client cancelled (`notifications/cancelled`): a
    /// subscription among them gets no more messages.
    cancelled: std::sync::Mutex<Vec<Value>>,
}

/// What [`Fake::queue`] holds.
#[derive(Debug, Default)]
struct Queue {
    /// Whole lines, in the order of their records.
    bytes: Vec<u8>,
    /// Set while a handler's faults hold stdout (see [`faults`]): nothing may be queued
    /// (and so recorded) until they are played.
    held: bool,
}

impl Fake {
    /// Records and writes one message as a line. Write errors (client gone) are ignored.
    async fn send(&self, message: Value) {
        let mut line = message.to_string().into_bytes();
        line.push(b'\n');
        self.queue(line, vec![Event::Sent { message }]).await;
    }

    /// Records and writes a scripted raw line verbatim, followed by a newline.
    async fn send_raw(&self, line: String) {
        let text = format!("{line}\n").into_bytes();
        self.queue(text, vec![Event::SentRaw { line }]).await;
    }

    /// Records `records` and queues `line` for the writer task, in one step; while a
    /// handler's faults hold stdout, first waits for them to be played.
    async fn queue(&self, line: Vec<u8>, mut records: Vec<Event>) {
        loop {
            match self.try_queue(&line, records) {
                Ok(()) => return,
                Err(back) => records = back,
            }
            drop(self.stdout.lock().await);
        }
    }

    fn try_queue(&self, line: &[u8], records: Vec<Event>) -> Result<(), Vec<Event>> {
        let mut queue = self.lock_queue();
        if queue.held {
            return Err(records);
        }
        self.recorder.buffer_all(records);
        let was_empty = queue.bytes.is_empty();
        queue.bytes.extend_from_slice(line);
        drop(queue);
        if was_empty {
            self.queued.notify_one();
        }
        Ok(())
    }

    fn lock_cancelled(&self) -> MutexGuard<'_, Vec<Value>> {
        self.cancelled
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn lock_queue(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes what is queued, marking the queue held (or not) for the caller, who holds
    /// stdout; the records of the bytes returned are written to the transcript.
    fn take_queued(&self, held: bool, spare: Vec<u8>) -> Vec<u8> {
        let mut queue = self.lock_queue();
        queue.held = held;
        let bytes = std::mem::replace(&mut queue.bytes, spare);
        drop(queue);
        self.recorder.flush();
        bytes
    }

    /// Records `Exited` and ends the process with `code`, after at most a short wait for a
    /// write in progress and what is queued.
    async fn exit(&self, code: i32) -> Infallible {
        // Stdout stays held, and the queue with it: whatever is answered meanwhile waits.
        let _held = tokio::time::timeout(EXIT_WRITE_GRACE, async {
            let mut out = self.stdout.lock().await;
            let bytes = self.take_queued(true, Vec::new());
            if !bytes.is_empty() {
                write_line(&mut out, &bytes).await;
            }
            out
        })
        .await;
        self.recorder.record(Event::Exited { code });
        std::process::exit(code)
    }

    /// Records one line from the client and starts whatever answer it needs.
    fn on_line(self: &Arc<Self>, raw: &[u8]) {
        if faults::stopped_listening() {
            return;
        }
        let content = raw.strip_suffix(b"\n").unwrap_or(raw);
        if content.iter().all(u8::is_ascii_whitespace) {
            // Not a message; answering it would punish a harmless slip with a stray error.
            self.record_invalid(content, "blank line".into());
            return;
        }
        let parsed = std::str::from_utf8(content)
            .map_err(|e| format!("invalid UTF-8: {e}"))
            .and_then(|text| serde_json::from_str::<Value>(text).map_err(|e| e.to_string()));
        let message = match parsed {
            Ok(message) => message,
            Err(error) => {
                self.record_invalid(content, error);
                let fake = Arc::clone(self);
                tokio::spawn(async move { fake.send(jsonrpc::parse_error()).await });
                return;
            }
        };
        if let Value::Array(items) = message {
            return self.on_batch(items);
        }
        let request = match jsonrpc::classify(&message) {
            Incoming::Request { id, method, params } => {
                Some((id.clone(), self.decide(method, params)))
            }
            // A script that answers notifications on purpose (with a null id), or sends
            // messages when one arrives (answering nothing, with `"reply": "hang"`).
            Incoming::Notification => jsonrpc::notification_method(&message)
                .and_then(|m| {
                    script::choose_for_notification(&self.script, m, message.get("params"))
                })
                .map(|answer| (Value::Null, answer)),
            Incoming::Other => None,
        };
        // Only a rule that sends messages needs its trigger (for `$request` pointers).
        let trigger = request
            .as_ref()
            .filter(|(_, answer)| !answer.sends.is_empty() || answer.listen.is_some())
            .map(|_| message.clone());
        if jsonrpc::notification_method(&message) == Some("notifications/cancelled")
            && let Some(id) = message.pointer("/params/requestId")
        {
            self.lock_cancelled().push(id.clone());
        }
        let response_to = jsonrpc::is_response(&message).then(|| message.clone());
        let answer_to_task =
            (response_to.is_some() && !self.script.tasks.is_empty()).then(|| message.clone());
        self.recorder.buffer(Event::Received { message });
        // Recorded first: whatever a waiting rule sends next comes after it.
        if let Some(response) = response_to {
            self.awaited.arrived(&response);
        }
        if let Some(message) = answer_to_task {
            self.tasks.arrived(&self.script, &message);
        }
        if let Some((id, answer)) = request {
            let fake = Arc::clone(self);
            tokio::spawn(async move { fake.answer(trigger, id, answer).await });
        }
    }

    /// The script's answer to a request; an `initialize` answered with a result settles the
    /// version in force.
    fn decide(&self, method: &str, params: Option<&Value>) -> script::Answer {
        let revision = self.revision.as_deref();
        if !modern::is_modern(&self.script, method, params) {
            let negotiated = self
                .negotiated
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone();
            let version = negotiated.as_deref().or(revision);
            if let Some(answer) = self.tasks.legacy(&self.script, version, method, params) {
                return answer;
            }
        }
        let tasks = &self.tasks;
        let answer = match modern::decide(
            &self.script,
            &self.tally,
            tasks,
            revision,
            method,
            params,
            None,
        ) {
            Decision::Answer(answer) => *answer,
            Decision::Refuse(refusal) => script::Answer::reply(Reply::Error(refusal.error)),
        };
        if method == "initialize"
            && let Reply::Result(result) = &answer.reply
        {
            let version = result.get("protocolVersion").and_then(Value::as_str);
            *self
                .negotiated
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = version.map(str::to_owned);
        }
        answer
    }

    /// Records a batch (a note, then each message) and answers it: refused as a whole where
    /// [`batch::refused`] says so, else each request in one batched answer.
    fn on_batch(self: &Arc<Self>, items: Vec<Value>) {
        self.recorder.record_all(batch::received_records(&items));
        for item in &items {
            self.awaited.arrived(item);
            self.tasks.arrived(&self.script, item);
        }
        let negotiated = self
            .negotiated
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let version = negotiated.or_else(|| self.revision.clone());
        let fake = Arc::clone(self);
        if let Some(why) = batch::refused(&items, self.script.era, version.as_deref()) {
            tokio::spawn(async move { fake.send(batch::refusal(why)).await });
            return;
        }
        let planned = batch::plan(&items, |method, params| self.decide(method, params));
        tokio::spawn(async move {
            match batch::play(planned).await {
                batch::Played::Responses(responses) if responses.is_empty() => {}
                batch::Played::Responses(responses) => {
                    let records = batch::sent_records(&responses);
                    let line = format!("{}\n", Value::Array(responses));
                    fake.queue(line.into_bytes(), records).await;
                }
                batch::Played::Exit(code) => match fake.exit(code).await {},
            }
        });
    }

    fn record_invalid(&self, content: &[u8], error: String) {
        let line = keep_start(&String::from_utf8_lossy(content), INVALID_LINE_KEEP);
        self.recorder.buffer(Event::ReceivedInvalid { line, error });
    }

    /// Carries out one scripted answer to the request `id` (null for a notification), with
    /// the messages its rule sends: those `before` the reply first, from the arrival of the
    /// `trigger`; the reply once they are out and the rule's `delay_ms` has passed since the
    /// arrival; then those `after` it.
    async fn answer(&self, trigger: Option<Value>, id: Value, mut answer: script::Answer) {
        let arrived = tokio::time::Instant::now();
        let trigger = trigger.unwrap_or(Value::Null);
        if let Some(filter) = answer.listen.take() {
            // A subscription: acknowledged, then the rule's messages, in script order, until
            // the client cancels it; never answered.
            self.send(modern::acknowledgement(&id, &filter)).await;
            return self.play_sends(&answer.sends, &trigger, Some(&id)).await;
        }
        match answer.task.take() {
            Some(Work::Result(task)) => {
                // Waits here, in the request's own task: the reader goes on reading.
                self.recorder.flush();
                let reply = self
                    .tasks
                    .wait_result(&self.script, &task, |m| self.send(m))
                    .await;
                answer.reply = reply;
            }
            Some(Work::Watch(task)) => {
                let (script, tasks) = (&self.script, &self.tasks);
                self.answer_now(id, answer.reply).await;
                return tasks.watch_status(script, &task, |m| self.send(m)).await;
            }
            None => {}
        }
        let (before, after) = sends::split(&std::mem::take(&mut answer.sends));
        self.play_sends(&before, &trigger, None).await;
        let due = arrived + Duration::from_millis(answer.delay_ms);
        if tokio::time::Instant::now() < due {
            self.recorder.flush();
            tokio::time::sleep_until(due).await;
        }
        match answer.faults.take() {
            Some(faults) => self.answer_with_faults(id, answer.reply, faults).await,
            None => match answer.reply {
                Reply::Result(result) => self.send(jsonrpc::result(&id, result)).await,
                Reply::Error(error) => self.send(jsonrpc::error(&id, &error)).await,
                Reply::Hang => {}
                Reply::Exit(code) => match self.exit(code).await {},
                Reply::RawLine(line) => self.send_raw(line).await,
            },
        }
        self.play_sends(&after, &trigger, None).await;
    }

    /// Sends a plain reply to the request `id` at once.
    async fn answer_now(&self, id: Value, reply: Reply) {
        match reply {
            Reply::Result(result) => self.send(jsonrpc::result(&id, result)).await,
            Reply::Error(error) => self.send(jsonrpc::error(&id, &error)).await,
            Reply::Hang | Reply::Exit(_) | Reply::RawLine(_) => {}
        }
    }

    /// Sends a rule's messages in order, each after its delay, its `$request` pointers filled
    /// from `trigger`; after a request marked `await_response`, waits for the client's
    /// response to it (at most the request timeout). On a `subscription` (the id of its
    /// `subscriptions/listen` request), each notification names it in `_meta`, and the
    /// messages stop once the client cancelled it, or after one that answers the listen
    /// request (a graceful end).
    async fn play_sends(&self, sends: &[Send], trigger: &Value, subscription: Option<&Value>) {
        for send in sends {
            if send.delay_ms > 0 {
                self.recorder.flush();
                tokio::time::sleep(Duration::from_millis(send.delay_ms)).await;
            }
            let mut message = sends::substitute(&send.message, trigger, &self.awaited);
            let mut closing = false;
            if let Some(id) = subscription {
                if self.lock_cancelled().contains(id) {
                    return;
                }
                message = modern::on_subscription(message, id);
                // The response to the listen request ends the subscription gracefully.
                closing = sends::answers(&message, id);
            }
            let response = sends::awaited_id(send, &message).map(|id| self.awaited.expect(id));
            self.send(message).await;
            if closing {
                return;
            }
            if let Some(response) = response {
                self.recorder.flush();
                sends::wait(response, self.request_timeout).await;
            }
        }
    }
}

/// Reads stdin line by line until end of file (a read error counts as the end). Lines may
/// be of any length and need not be UTF-8.
async fn read_stdin(fake: &Arc<Fake>) {
    let stdin = FlushingStdin {
        stdin: tokio::io::stdin(),
        fake: Arc::clone(fake),
    };
    let mut input = BufReader::with_capacity(64 * 1024, stdin);
    let mut line = Vec::new();
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line).await {
            Ok(0) => return,
            Ok(_) => fake.on_line(&line),
            Err(e) => {
                log(&format!(
                    "reading stdin failed, treating it as end of file: {e}"
                ));
                return;
            }
        }
    }
}

/// Stdin that writes the buffered records to the transcript before every read, which is
/// when the fake may wait for input.
struct FlushingStdin {
    stdin: Stdin,
    fake: Arc<Fake>,
}

impl AsyncRead for FlushingStdin {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        self.fake.recorder.flush();
        Pin::new(&mut self.stdin).poll_read(cx, buf)
    }
}

/// The writer task: writes what is queued, in one write per wake-up, after the records of
/// it. Answers queued while a write is under way go out together in the next.
async fn write_queued(fake: Arc<Fake>) {
    let mut spare = Vec::new();
    loop {
        fake.queued.notified().await;
        let mut out = fake.stdout.lock().await;
        let bytes = fake.take_queued(false, spare);
        if !bytes.is_empty() {
            write_line(&mut out, &bytes).await;
        }
        spare = bytes;
        spare.clear();
    }
}

async fn write_line(out: &mut Stdout, line: &[u8]) {
    if out.write_all(line).await.is_ok() {
        let _ = out.flush().await;
    }
}

async fn watch_sigterm(
    fake: Arc<Fake>,
    mut stream: tokio::signal::unix::Signal,
    on_sigterm: OnSigterm,
) {
    while stream.recv().await.is_some() {
        fake.recorder.record(Event::Signal {
            name: "SIGTERM".into(),
        });
        if on_sigterm == OnSigterm::Exit {
            match fake.exit(0).await {}
        }
    }
}

/// Writes the start-up line and `noise_bytes` of log-like noise to stderr from a thread of
/// its own, so a client that never drains our stderr cannot stall the protocol.
fn start_stderr_writer(noise_bytes: u64) {
    let pid = std::process::id();
    let spawned = std::thread::Builder::new()
        .name("stderr-noise".into())
        .spawn(move || {
            let mut err = std::io::stderr().lock();
            let _ = writeln!(err, "[fake] mcp-fake-stdio {pid} started");
            let mut left = noise_bytes;
            let mut n = 0u64;
            while left > 0 {
                n += 1;
                let line = format!(
                    "[fake] noise line {n}: pretending to be a chatty server, nothing to see here\n"
                );
                let take = usize::try_from(left).map_or(line.len(), |l| l.min(line.len()));
                if err.write_all(&line.as_bytes()[..take]).is_err() {
                    return;
                }
                left -= take as u64;
            }
            let _ = err.flush();
        });
    if let Err(e) = spawned {
        log(&format!("cannot start the stderr writer: {e}"));
    }
}

fn log(text: &str) {
    let _ = writeln!(std::io::stderr(), "[fake] {text}");
}

/// The first `max` bytes of `text` (cut at a character boundary), marked when cut.
pub(crate) fn keep_start(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}... ({} bytes in all)", &text[..end], text.len())
}

#[cfg(test)]
mod tests {
    use super::keep_start;

    #[test]
    fn keeps_the_start_of_long_lines_at_a_char_boundary() {
        assert_eq!(keep_start("short", 10), "short");
        let cut = keep_start("ééééé", 3);
        assert_eq!(cut, "é... (10 bytes in all)");
    }
}

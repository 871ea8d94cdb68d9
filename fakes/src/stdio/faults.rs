//! A hostile stdio server: a handler's `faults` carried out on the pipes. Lines ahead of the
//! reply (junk, storms, stray responses), a stderr flood that blocks the reply until the client
//! drains it, a reply padded to megabytes, dripped a byte at a time or cut off halfway (then
//! an exit or silence), a duplicate of the reply later, and an exit or a closed stdout after it.

use std::io::Write;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use mcp_harness_scenarios::model::{Emit, Faults, Reply, Then, Truncate};
use mcp_harness_scenarios::transcript::Event;
use serde_json::Value;
use tokio::io::{AsyncWriteExt, Stdout};
use tokio::sync::MutexGuard;

use super::{Fake, INVALID_LINE_KEEP, keep_start, log, write_line};
use crate::faults::{self, emitted, first_half, repeat_note};
use crate::jsonrpc;

/// Set once the server has decided to exit or to close its stdout after a reply: from then on
/// it reads no more messages (neither records nor answers them), so whether the client's next
/// request got in before it noticed is not a race in the transcript. One fake per process,
/// so a process-wide flag.
static STOPPED_LISTENING: AtomicBool = AtomicBool::new(false);

/// Whether lines from the client are to be ignored (see [`STOPPED_LISTENING`]).
pub(super) fn stopped_listening() -> bool {
    STOPPED_LISTENING.load(Ordering::SeqCst)
}

impl Fake {
    /// Carries out `reply` to the request `id` (null for a notification) with `faults`.
    ///
    /// Everything the handler writes (the items ahead of the reply, then the reply) goes out
    /// under one hold of stdout, so no other answer slips in between and an exit on end of
    /// file, which waits for stdout, cannot cut the handler's script short: a client that
    /// reacts to the first junk line (fails its call, sends the next request, closes stdin)
    /// still gets, and the transcript still shows, every line the script lists.
    pub(super) async fn answer_with_faults(&self, id: Value, reply: Reply, faults: Faults) {
        if faults.stderr_bytes > 0 {
            self.recorder.flush();
            flood_stderr(faults.stderr_bytes).await;
        }
        let mut out = self.hold().await;
        // The items ahead of the reply are recorded now and written together with the reply
        // (one write), so every line the fake sends is in the transcript before the client
        // can react to any of them: a client answering a server request in between is always
        // recorded after the reply, never in a place that depends on timing.
        let mut ahead = Vec::new();
        for emit in &faults.before {
            ahead.extend(self.emit(emit));
        }
        let response = match reply {
            Reply::Result(result) => jsonrpc::result(&id, result),
            Reply::Error(error) => jsonrpc::error(&id, &error),
            Reply::Hang => return write_bytes(&mut out, &ahead, None).await,
            Reply::Exit(code) => {
                write_bytes(&mut out, &ahead, None).await;
                self.exit_holding_stdout(code)
            }
            Reply::RawLine(line) => {
                ahead.extend_from_slice(line.as_bytes());
                ahead.push(b'\n');
                self.recorder.record(Event::SentRaw { line });
                return write_bytes(&mut out, &ahead, None).await;
            }
        };
        let (text, recorded) = faults::pad(response, faults.padding_bytes);
        let text = faults::encode(text, faults.invalid_utf8);
        let drip = faults.drip_ms.map(Duration::from_millis);
        if let Some(truncate) = faults.truncate {
            let half = first_half(&text);
            let line = keep_start(&String::from_utf8_lossy(half), INVALID_LINE_KEEP);
            self.recorder.record(Event::SentRaw { line });
            write_bytes(&mut out, &ahead, None).await;
            write_bytes(&mut out, half, drip).await;
            match truncate {
                Truncate::Exit => self.exit_holding_stdout(1),
                Truncate::Stall => return,
            }
        }
        let mut line = text;
        line.push(b'\n');
        if faults.then.is_some() && faults.duplicate_after_ms.is_none() {
            // Before the reply can reach the client, so its next request is never read.
            STOPPED_LISTENING.store(true, Ordering::SeqCst);
        }
        self.recorder.record(Event::Sent {
            message: recorded.clone(),
        });
        match drip {
            Some(_) => {
                write_bytes(&mut out, &ahead, None).await;
                write_bytes(&mut out, &line, drip).await;
            }
            None => {
                ahead.extend_from_slice(&line);
                write_bytes(&mut out, &ahead, None).await;
            }
        }
        if let Some(ms) = faults.duplicate_after_ms {
            drop(out);
            tokio::time::sleep(Duration::from_millis(ms)).await;
            out = self.hold().await;
            self.recorder.record(Event::Sent { message: recorded });
            write_bytes(&mut out, &line, None).await;
        }
        // Still holding stdout, so no other answer slips out after the reply. The flag only
        // ever goes from false to true: a later reply without `then` must not clear it.
        if faults.then.is_some() {
            STOPPED_LISTENING.store(true, Ordering::SeqCst);
        }
        match faults.then {
            Some(Then::Exit) => self.exit_holding_stdout(0),
            Some(Then::CloseStdout) => self.close_stdout(&mut out).await,
            None => {}
        }
    }

    /// Takes stdout for a handler's script: what is queued goes out first, and nothing more
    /// is queued until the hold ends.
    async fn hold(&self) -> Held<'_> {
        let mut out = self.stdout.lock().await;
        let bytes = self.take_queued(true, Vec::new());
        if !bytes.is_empty() {
            write_line(&mut out, &bytes).await;
        }
        Held { fake: self, out }
    }

    /// Records `Exited` and ends the process at once: the caller holds stdout, so no write
    /// of another answer can be in progress.
    fn exit_holding_stdout(&self, code: i32) -> ! {
        self.recorder.record(Event::Exited { code });
        std::process::exit(code)
    }

    /// Records one item (its first copy, and a note for the repeats) and returns its bytes,
    /// `repeat` times, for the caller to write.
    fn emit(&self, emit: &Emit) -> Vec<u8> {
        let Some((bytes, event)) = emitted(emit) else {
            return Vec::new();
        };
        let copies = usize::try_from(emit.repeat).unwrap_or(1);
        let mut all = Vec::with_capacity((bytes.len() + 1) * copies);
        for _ in 0..copies {
            all.extend_from_slice(&bytes);
            all.push(b'\n');
        }
        self.recorder.record(event);
        if emit.repeat > 1 {
            self.recorder.record(repeat_note(emit.repeat - 1));
        }
        all
    }

    /// Points stdout at `/dev/null`, which closes the pipe the client reads, and keeps running.
    async fn close_stdout(&self, out: &mut Stdout) {
        let _ = out.flush().await;
        let null = std::fs::OpenOptions::new().write(true).open("/dev/null");
        match null.map(|null| nix::unistd::dup2_stdout(&null)) {
            Ok(Ok(())) => self.recorder.record(Event::SentRaw {
                line: "[note, not sent: the server closed its stdout]".into(),
            }),
            Ok(Err(e)) => log(&format!("cannot close stdout: {e}")),
            Err(e) => log(&format!("cannot open /dev/null: {e}")),
        }
    }
}

/// Stdout held for a handler's script; ending the hold lets answers be queued again (before
/// stdout is let go, so they queue up behind the script's last line).
struct Held<'a> {
    fake: &'a Fake,
    out: MutexGuard<'a, Stdout>,
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        self.fake.lock_queue().held = false;
    }
}

impl Deref for Held<'_> {
    type Target = Stdout;
    fn deref(&self) -> &Stdout {
        &self.out
    }
}

impl DerefMut for Held<'_> {
    fn deref_mut(&mut self) -> &mut Stdout {
        &mut self.out
    }
}

/// Writes `bytes`, all at once or one byte at a time with `drip` between bytes, flushing as
/// it goes. Write errors (client gone) end the write quietly.
async fn write_bytes(out: &mut Stdout, bytes: &[u8], drip: Option<Duration>) {
    let Some(gap) = drip else {
        if out.write_all(bytes).await.is_ok() {
            let _ = out.flush().await;
        }
        return;
    };
    for (i, byte) in bytes.iter().enumerate() {
        if i > 0 {
            tokio::time::sleep(gap).await;
        }
        let written = async {
            out.write_all(std::slice::from_ref(byte)).await?;
            out.flush().await
        };
        if written.await.is_err() {
            return;
        }
    }
}

/// Writes `bytes` of log lines to stderr and returns once they are all written: with a client
/// that does not drain stderr, that is never.
async fn flood_stderr(bytes: u64) {
    let written = tokio::task::spawn_blocking(move || {
        let mut err = std::io::stderr().lock();
        let line = b"[fake] flood: a server that logs a great deal while it works on a request\n";
        let mut left = bytes;
        while left > 0 {
            let take = usize::try_from(left).map_or(line.len(), |l| l.min(line.len()));
            if err.write_all(&line[..take]).is_err() {
                return;
            }
            left -= take as u64;
        }
        let _ = err.flush();
    });
    let _ = written.await;
}

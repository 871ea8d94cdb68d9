//! The transcript writer. Each record is one JSON line; lines are appended with a single
//! `write_all` to a file opened in append mode, so several fake processes can share one
//! transcript and a fake killed at any moment leaves only whole lines behind.
//!
//! [`Recorder::record`] writes through at once. A fake under load may instead
//! [`Recorder::buffer`] records and [`Recorder::flush`] them in one write, as long as it
//! flushes before any byte they describe reaches the client, before it waits for input and
//! before it sleeps: a record still in the buffer when the process is killed must describe
//! nothing the client could have seen. Writing through also writes what is buffered first,
//! so the order of records never changes.
//!
//! Message records are capped: a client that loops forever must not fill the disk.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;
use std::sync::{Mutex, PoisonError};

use mcp_harness_scenarios::transcript::{Event, Record};

/// How many message records (received or sent, valid or not) a fake writes before it
/// records `Truncated` and stops recording messages.
pub const MESSAGE_CAP: usize = 5_000;

/// Appends records to a transcript file. Shareable across tasks (`&self` methods).
#[derive(Debug)]
pub struct Recorder {
    pid: u32,
    /// When the recorder was opened (the fake's start): `Received` records carry the time
    /// since then (`at_ms`).
    started: std::time::Instant,
    cap: usize,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    file: File,
    messages: usize,
    truncated: bool,
    write_failed: bool,
    /// Whole lines not yet written, in order.
    pending: Vec<u8>,
}

/// Buffered records past this many bytes are written without waiting for a flush.
const BUFFER_LIMIT: usize = 256 * 1024;

impl Recorder {
    /// Opens (creating if needed) the transcript at `path` for appending, with the default cap.
    pub fn open(path: &Path) -> io::Result<Self> {
        Self::with_cap(path, MESSAGE_CAP)
    }

    /// Like [`Recorder::open`], with a custom cap on message records.
    pub fn with_cap(path: &Path, cap: usize) -> io::Result<Self> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(Self {
            pid: std::process::id(),
            started: std::time::Instant::now(),
            cap,
            state: Mutex::new(State {
                file,
                messages: 0,
                truncated: false,
                write_failed: false,
                pending: Vec::new(),
            }),
        })
    }

    /// Appends one record for this process. Message records past the cap are dropped after
    /// a single `Truncated`. A write failure is reported once on stderr and otherwise ignored:
    /// the fake keeps serving, and the runner sees the gap.
    pub fn record(&self, event: Event) {
        self.record_all([event]);
    }

    /// Appends several records with nothing of another task's in between (an HTTP request
    /// and the messages of its body, a batch and its messages), each counted like
    /// [`Recorder::record`].
    pub fn record_all(&self, events: impl IntoIterator<Item = Event>) {
        let mut state = self.lock();
        for event in events {
            self.record_locked(&mut state, event);
        }
        write_pending(&mut state);
    }

    /// Like [`Recorder::record`], but the record waits in memory for the next write (a
    /// [`Recorder::flush`], or any record written through).
    pub fn buffer(&self, event: Event) {
        self.buffer_all([event]);
    }

    /// Like [`Recorder::record_all`], but the records wait in memory for the next write.
    pub fn buffer_all(&self, events: impl IntoIterator<Item = Event>) {
        let mut state = self.lock();
        for event in events {
            self.record_locked(&mut state, event);
        }
        if state.pending.len() > BUFFER_LIMIT {
            write_pending(&mut state);
        }
    }

    /// Writes every buffered record, in one write.
    pub fn flush(&self) {
        let mut state = self.lock();
        if !state.pending.is_empty() {
            write_pending(&mut state);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn record_locked(&self, state: &mut State, event: Event) {
        let is_message = matches!(
            event,
            Event::Received { .. }
                | Event::ReceivedInvalid { .. }
                | Event::Sent { .. }
                | Event::SentRaw { .. }
        );
        if is_message {
            if state.truncated {
                return;
            }
            if state.messages >= self.cap {
                state.truncated = true;
                self.append(state, Event::Truncated);
                return;
            }
            state.messages += 1;
        }
        self.append(state, event);
    }

    fn append(&self, state: &mut State, event: Event) {
        let at_ms = matches!(event, Event::Received { .. })
            .then(|| u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX));
        let record = Record {
            pid: self.pid,
            at_ms,
            event,
        };
        let start = state.pending.len();
        match serde_json::to_writer(&mut state.pending, &record) {
            Ok(()) => state.pending.push(b'\n'),
            Err(e) => {
                state.pending.truncate(start);
                report_once(state, &e.to_string());
            }
        }
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        self.flush();
    }
}

/// Writes the buffered lines (a file opened for appending writes them in one piece). What
/// cannot be written is dropped, after a report.
fn write_pending(state: &mut State) {
    let written = state.file.write_all(&state.pending);
    state.pending.clear();
    if let Err(e) = written {
        report_once(state, &e.to_string());
    }
}

fn report_once(state: &mut State, problem: &str) {
    if !state.write_failed {
        state.write_failed = true;
        let _ = writeln!(
            io::stderr(),
            "[fake] cannot write the transcript: {problem}"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_harness_scenarios::transcript;
    use serde_json::json;

    #[test]
    fn buffered_records_wait_for_a_write_and_keep_their_order() {
        let path = std::env::temp_dir().join(format!(
            "mcp-fake-recorder-buffered-{}.jsonl",
            std::process::id()
        ));
        let _ = std::fs::remove_file(&path);
        let read = || {
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            transcript::parse(&text)
                .expect("parse transcript")
                .into_iter()
                .map(|r| r.event)
                .collect::<Vec<_>>()
        };
        let recorder = Recorder::open(&path).expect("open transcript");
        recorder.buffer(Event::Started);
        assert_eq!(read(), vec![]);
        recorder.record(Event::StdinEof);
        assert_eq!(read(), vec![Event::Started, Event::StdinEof]);
        recorder.buffer(Event::Signal {
            name: "SIGTERM".into(),
        });
        recorder.flush();
        recorder.flush();
        recorder.buffer(Event::Exited { code: 0 });
        drop(recorder);
        let events = read();
        let _ = std::fs::remove_file(&path);
        let signal = Event::Signal {
            name: "SIGTERM".into(),
        };
        let all = [
            Event::Started,
            Event::StdinEof,
            signal,
            Event::Exited { code: 0 },
        ];
        assert_eq!(events, all);
    }

    #[test]
    fn appends_whole_lines_and_caps_messages() {
        let path = std::env::temp_dir().join(format!(
            "mcp-fake-recorder-{}-{:?}.jsonl",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_file(&path);
        let recorder = Recorder::with_cap(&path, 2).expect("open transcript");
        recorder.record(Event::Started);
        for n in 0..4 {
            recorder.record(Event::Sent {
                message: json!({"n": n}),
            });
        }
        recorder.record(Event::StdinEof);
        // A second writer on the same file appends after the first.
        Recorder::open(&path)
            .expect("reopen")
            .record(Event::Exited { code: 0 });

        let text = std::fs::read_to_string(&path).expect("read transcript");
        let _ = std::fs::remove_file(&path);
        let events: Vec<Event> = transcript::parse(&text)
            .expect("parse transcript")
            .into_iter()
            .map(|r| r.event)
            .collect();
        let sent = |n: i32| Event::Sent {
            message: json!({"n": n}),
        };
        assert_eq!(
            events,
            vec![
                Event::Started,
                sent(0),
                sent(1),
                Event::Truncated,
                Event::StdinEof,
                Event::Exited { code: 0 },
            ]
        );
    }
}

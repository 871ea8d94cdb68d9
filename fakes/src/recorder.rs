//! The transcript writer. Each record is one JSON line appended with a single `write_all`
//! to a file opened in append mode, so several fake processes can share one transcript and
//! a fake killed at any moment leaves only whole lines behind.
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
    cap: usize,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    file: File,
    messages: usize,
    truncated: bool,
    write_failed: bool,
}

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
            cap,
            state: Mutex::new(State {
                file,
                messages: 0,
                truncated: false,
                write_failed: false,
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
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        for event in events {
            self.record_locked(&mut state, event);
        }
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
        let record = Record {
            pid: self.pid,
            event,
        };
        let mut line = match serde_json::to_string(&record) {
            Ok(line) => line,
            Err(e) => return report_once(state, &e.to_string()),
        };
        line.push('\n');
        let written = state
            .file
            .write_all(line.as_bytes())
            .and_then(|()| state.file.flush());
        if let Err(e) = written {
            report_once(state, &e.to_string());
        }
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

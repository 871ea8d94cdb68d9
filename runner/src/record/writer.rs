//! The recording's file: harness transcript records ([`Record`]), whole lines, each batch in
//! one `write_all` on a file opened for appending, written before the bytes it describes are
//! relayed. So a recorder killed at any moment leaves a file that is complete up to that
//! point. Unlike the fakes' capped recorder, a recording keeps every message (a real
//! session may be long), and a `Received` record's `at_ms` is when the message arrived at
//! the recorder, not when it was written (an HTTP request is written once its answer's
//! status is known).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use mcp_harness_scenarios::transcript::{Event, Record};

/// Appends records to a recording.
#[derive(Debug)]
pub struct Writer {
    pid: u32,
    started: Instant,
    file: Mutex<Option<File>>,
}

impl Writer {
    /// Opens the recording at `path` for appending, creating it if needed: a host that
    /// starts its server again (through the recorder again) adds a second session, with
    /// another pid, as a fake's transcript does. The error names the file.
    pub fn create(path: &Path) -> Result<Writer, String> {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| format!("cannot write the recording {}: {e}", path.display()))?;
        Ok(Writer {
            pid: std::process::id(),
            started: Instant::now(),
            file: Mutex::new(Some(file)),
        })
    }

    /// Milliseconds since the recording started (a `Received` record's `at_ms`).
    pub fn now_ms(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Writes `events` in one piece; `Received` ones carry `at_ms` (else now).
    pub fn write_at(&self, at_ms: Option<u64>, events: impl IntoIterator<Item = Event>) {
        let at = at_ms.unwrap_or_else(|| self.now_ms());
        let mut bytes = Vec::new();
        for event in events {
            let record = Record {
                pid: self.pid,
                at_ms: matches!(event, Event::Received { .. }).then_some(at),
                event,
            };
            if serde_json::to_writer(&mut bytes, &record).is_ok() {
                bytes.push(b'\n');
            }
        }
        let mut file = self.file.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(f) = file.as_mut()
            && let Err(e) = f.write_all(&bytes)
        {
            eprintln!("mcp-harness record: cannot write the recording: {e}; recording stops");
            *file = None;
        }
    }

    /// Writes one event now.
    pub fn write(&self, event: Event) {
        self.write_at(None, [event]);
    }
}

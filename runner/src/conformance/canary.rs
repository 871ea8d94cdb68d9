//! The trial's canary listener (see `mcp_harness_scenarios::model::canary`): a TCP listener on
//! `127.0.0.1:0`, started only for a case whose script names `{{canary}}`, that records every
//! connection it accepts with the first line the client sent, and answers nothing (each
//! connection is closed once its first line is read). A wire check `on: "canary"` sees them.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use serde_json::{Value, json};

/// What a connection sends to stop the listener (only honoured once the runner asked).
const STOP: &[u8] = b"mcp-harness-canary-stop\n";
/// How long the listener waits for a connection's first line.
const READ_WAIT: Duration = Duration::from_millis(300);
/// The most bytes of a first line kept.
const LINE_CAP: usize = 200;

/// A running canary.
pub struct Canary {
    addr: SocketAddr,
    origin: String,
    stopping: Arc<AtomicBool>,
    seen: Arc<Mutex<Vec<Value>>>,
    thread: Option<JoinHandle<()>>,
}

/// What a canary saw, for the checks and the snapshot.
#[derive(Debug, Clone, Default)]
pub struct CanaryRun {
    /// The origin written into the script, `http://127.0.0.1:PORT`.
    pub origin: String,
    /// One item per connection accepted, in order: `{"connected": true, "request": …}`.
    pub seen: Vec<Value>,
}

impl Canary {
    /// Binds the listener (loopback only) and starts accepting.
    pub fn start() -> io::Result<Canary> {
        let listener = TcpListener::bind(("127.0.0.1", 0))?;
        let addr = listener.local_addr()?;
        let stopping = Arc::new(AtomicBool::new(false));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let thread = {
            let (stopping, seen) = (Arc::clone(&stopping), Arc::clone(&seen));
            thread::Builder::new()
                .name("canary".into())
                .spawn(move || accept(&listener, &stopping, &seen))?
        };
        Ok(Canary {
            addr,
            origin: format!("http://{addr}"),
            stopping,
            seen,
            thread: Some(thread),
        })
    }

    /// The origin to write where a script says `{{canary}}`.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// Stops the listener (every connection made before this call is recorded) and returns
    /// what it saw.
    pub fn finish(mut self) -> CanaryRun {
        self.stop();
        let seen = self.seen.lock().map(|s| s.clone()).unwrap_or_default();
        CanaryRun {
            origin: self.origin.clone(),
            seen,
        }
    }

    fn stop(&mut self) {
        let Some(thread) = self.thread.take() else {
            return;
        };
        self.stopping.store(true, Ordering::SeqCst);
        // Connections wait in the backlog in order: the stop comes after every earlier one.
        if let Ok(mut wake) = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1)) {
            let _ = wake.write_all(STOP);
            let _ = thread.join();
        }
    }
}

impl Drop for Canary {
    fn drop(&mut self) {
        self.stop();
    }
}

fn accept(listener: &TcpListener, stopping: &AtomicBool, seen: &Mutex<Vec<Value>>) {
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        let line = first_line(stream);
        if stopping.load(Ordering::SeqCst) && line.as_bytes() == &STOP[..STOP.len() - 1] {
            return;
        }
        if let Ok(mut seen) = seen.lock() {
            seen.push(json!({"connected": true, "request": line}));
        }
    }
}

/// What a connection sent first (within [`READ_WAIT`]): its first line when that is text
/// (plain HTTP), cut to [`LINE_CAP`] bytes, `[TLS]` for a TLS handshake, `[bytes]` for
/// anything else, `""` for nothing; then the connection is closed unanswered. The SSRF
/// canaries (`netns/watch.rs`) record the same.
pub(crate) fn first_line(mut stream: TcpStream) -> String {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(READ_WAIT));
    let mut got = Vec::new();
    let mut buf = [0u8; 256];
    while got.len() < LINE_CAP && !got.contains(&b'\n') {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
        if got.first() == Some(&0x16) {
            return "[TLS]".into();
        }
    }
    let end = got
        .iter()
        .position(|&b| b == b'\n')
        .unwrap_or(got.len())
        .min(LINE_CAP);
    let line = &got[..end];
    if line.iter().any(|b| b.is_ascii_control() && *b != b'\r') {
        return "[bytes]".into();
    }
    String::from_utf8_lossy(line)
        .trim_end_matches('\r')
        .chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_each_connection_and_its_first_line_then_stops() {
        let canary = Canary::start().unwrap();
        assert!(canary.origin().starts_with("http://127.0.0.1:"));
        let addr = canary.addr;
        let mut fetch = TcpStream::connect(addr).unwrap();
        fetch
            .write_all(b"GET /s.json HTTP/1.1\r\nHost: x\r\n\r\n")
            .unwrap();
        let mut rest = Vec::new();
        let _ = fetch.read_to_end(&mut rest);
        drop(TcpStream::connect(addr).unwrap());
        let run = canary.finish();
        assert_eq!(
            run.seen,
            vec![
                json!({"connected": true, "request": "GET /s.json HTTP/1.1"}),
                json!({"connected": true, "request": ""}),
            ]
        );
    }

    #[test]
    fn an_unused_canary_sees_nothing() {
        assert!(Canary::start().unwrap().finish().seen.is_empty());
    }
}

//! `record -- CMD ARGS…`: the recorder stands where a host expects its server. It starts
//! `CMD` as its child, in a process group of its own, relays lines both ways byte for byte
//! (except where a `--fault` applies), lets the child's stderr through, and records each
//! line before relaying it.
//!
//! The child never outlives the recorder: SIGTERM and SIGINT are recorded and passed on to
//! the child's group; end of file on stdin is recorded and passed on by closing the child's
//! stdin, after which the recorder stops the child as the reference client does (a grace
//! period, SIGTERM, a grace period, SIGKILL); the child also gets SIGKILL if the recorder
//! itself is killed (Linux `PR_SET_PDEATHSIG`). When the child closes its stdout the
//! recorder closes its own, so the host sees what it would have seen. The recorder exits
//! with the child's status (128 + the signal for a child killed by one).

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use mcp_harness_scenarios::transcript::Event;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use super::fault::{Faults, Kind};
use super::redact::{self, Redactor};
use super::writer::Writer;
use super::{MALFORMED_LINE, note};

/// How long the child gets to exit after its stdin is closed, and again after SIGTERM (the
/// reference client's default grace).
const GRACE: Duration = Duration::from_secs(2);

/// After the child exits, how long its stdout may stay open (held by a process it left
/// behind) before the recorder stops relaying it.
const DRAIN: Duration = Duration::from_secs(1);

/// What `record -- CMD` needs.
#[derive(Debug)]
pub struct StdioOptions {
    /// The recording to write.
    pub out: PathBuf,
    /// The faults to apply.
    pub faults: Faults,
    /// The server command: program and arguments.
    pub command: Vec<OsString>,
}

/// What the two directions share.
struct Shared {
    writer: Writer,
    redactor: Redactor,
    faults: Faults,
    /// Requests in flight: id (as JSON text) → method and the cursor they carried.
    pending: Mutex<HashMap<String, (String, Option<Value>)>>,
    /// Set once the host's stdout is closed (the child's closed, or a `cut`).
    stdout_closed: AtomicBool,
}

/// Runs the recorder to the child's end; returns the exit status to leave with.
pub async fn run(options: StdioOptions) -> Result<i32, String> {
    let Some((program, args)) = options.command.split_first() else {
        return Err("no server command after `--`".into());
    };
    let writer = Writer::create(&options.out)?;
    let mut command = Command::new(program);
    command
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .process_group(0);
    // SAFETY: between fork and exec only the async-signal-safe prctl(2) runs.
    unsafe {
        command.pre_exec(|| {
            nix::sys::prctl::set_pdeathsig(Signal::SIGKILL).map_err(std::io::Error::from)
        });
    }
    let mut child = command
        .spawn()
        .map_err(|e| format!("cannot start the server {}: {e}", program.to_string_lossy()))?;
    let group = child
        .id()
        .and_then(|pid| i32::try_from(pid).ok())
        .map(Pid::from_raw)
        .ok_or("the server exited before it could be watched")?;
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err("the server's pipes were not set up".into());
    };
    writer.write(Event::Started);
    note(&format!(
        "recording {} into {}",
        program.to_string_lossy(),
        options.out.display()
    ));
    let shared = Arc::new(Shared {
        writer,
        redactor: Redactor::default(),
        faults: options.faults,
        pending: Mutex::new(HashMap::new()),
        stdout_closed: AtomicBool::new(false),
    });
    let (eof_tx, eof_rx) = tokio::sync::oneshot::channel();
    tokio::spawn(client_to_server(Arc::clone(&shared), stdin, eof_tx));
    let relay = tokio::spawn(server_to_client(Arc::clone(&shared), stdout));
    let status = supervise(&shared, &mut child, group, eof_rx).await;
    let code = status_code(status);
    // What the child wrote before it exited is relayed (and recorded) before its exit.
    if tokio::time::timeout(DRAIN, relay).await.is_err() {
        close_stdout(&shared);
    }
    shared.writer.write(Event::Exited { code });
    // Whatever the child left in its group goes with it.
    let _ = killpg(group, Signal::SIGKILL);
    note(&format!("the server exited with {code}"));
    Ok(code)
}

/// Waits for the child, passing signals on and stopping it after stdin's end of file.
async fn supervise(
    shared: &Shared,
    child: &mut Child,
    group: Pid,
    eof: tokio::sync::oneshot::Receiver<()>,
) -> std::io::Result<std::process::ExitStatus> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    let mut eof = std::pin::pin!(eof);
    let mut eof_seen = false;
    // The next step of the escalation, once one has begun.
    let mut escalation: Option<(tokio::time::Instant, Signal)> = None;
    loop {
        let deadline = escalation.map(|(at, _)| at);
        let next = async {
            match deadline {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            status = child.wait() => return status,
            _ = term.recv() => {
                shared.writer.write(Event::Signal { name: "SIGTERM".into() });
                let _ = killpg(group, Signal::SIGTERM);
                escalation = Some((tokio::time::Instant::now() + GRACE, Signal::SIGKILL));
            }
            _ = int.recv() => {
                shared.writer.write(Event::Signal { name: "SIGINT".into() });
                let _ = killpg(group, Signal::SIGINT);
                escalation = Some((tokio::time::Instant::now() + GRACE, Signal::SIGKILL));
            }
            _ = &mut eof, if !eof_seen => {
                eof_seen = true;
                if escalation.is_none() {
                    escalation = Some((tokio::time::Instant::now() + GRACE, Signal::SIGTERM));
                }
            }
            () = next => {
                let Some((_, sig)) = escalation else { continue };
                let _ = killpg(group, sig);
                escalation = (sig == Signal::SIGTERM)
                    .then(|| (tokio::time::Instant::now() + GRACE, Signal::SIGKILL));
            }
        }
    }
}

/// The exit status as recorded: the code, or 128 + the signal that ended the child.
fn status_code(status: std::io::Result<std::process::ExitStatus>) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    match status {
        Ok(s) => s.code().or(s.signal().map(|n| 128 + n)).unwrap_or(1),
        Err(_) => 1,
    }
}

/// The host's lines to the server: recorded, then written on.
async fn client_to_server(
    shared: Arc<Shared>,
    stdin: ChildStdin,
    eof: tokio::sync::oneshot::Sender<()>,
) {
    let mut input = BufReader::new(tokio::io::stdin());
    let mut to_server = Some(stdin);
    let mut line = Vec::new();
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let arrived = shared.writer.now_ms();
        let events = client_events(&shared, &line);
        shared.writer.write_at(Some(arrived), events);
        if let Some(pipe) = to_server.as_mut()
            && pipe.write_all(&line).await.is_err()
        {
            // The server is gone: what the host still sends is recorded, not delivered.
            to_server = None;
        }
    }
    shared.writer.write(Event::StdinEof);
    drop(to_server);
    let _ = eof.send(());
}

/// The records of one line from the host.
fn client_events(shared: &Shared, line: &[u8]) -> Vec<Event> {
    let text = String::from_utf8_lossy(line);
    let trimmed = text.trim_end_matches(['\n', '\r']);
    if trimmed.trim().is_empty() {
        return Vec::new();
    }
    let parsed: Value = match serde_json::from_str(trimmed) {
        Ok(v) => v,
        Err(e) => {
            return vec![Event::ReceivedInvalid {
                line: cut(&redact::raw_line(trimmed)),
                error: e.to_string(),
            }];
        }
    };
    let messages = match parsed {
        Value::Array(items) => items,
        one => vec![one],
    };
    let mut pending = shared
        .pending
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    messages
        .into_iter()
        .map(|message| {
            super::note_request(&mut pending, &message);
            Event::Received {
                message: shared.redactor.client(message),
            }
        })
        .collect()
}

/// A raw line as recorded: at most 16 KiB.
fn cut(line: &str) -> String {
    const LIMIT: usize = 16 * 1024;
    match line.char_indices().nth(LIMIT) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line.to_owned(),
    }
}

/// The server's lines to the host: faults applied, recorded, then written on.
async fn server_to_client(shared: Arc<Shared>, stdout: ChildStdout) {
    let mut from_server = BufReader::new(stdout);
    let mut out = tokio::io::stdout();
    let mut line = Vec::new();
    loop {
        line.clear();
        match from_server.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let closed = || shared.stdout_closed.load(Ordering::SeqCst);
        if closed() {
            continue;
        }
        let Some(bytes) = answer(&shared, std::mem::take(&mut line), &mut out).await else {
            continue;
        };
        if out.write_all(&bytes).await.is_err() || out.flush().await.is_err() {
            // The host stopped reading: keep draining the server so it never blocks.
            shared.stdout_closed.store(true, Ordering::SeqCst);
        }
    }
    let _ = out.flush().await;
    close_stdout(&shared);
}

/// Records one server line, with the faults that apply to it; returns the bytes to relay
/// (`None`: dropped by a `cut`).
async fn answer(shared: &Shared, line: Vec<u8>, out: &mut tokio::io::Stdout) -> Option<Vec<u8>> {
    let text = String::from_utf8_lossy(&line).into_owned();
    let trimmed = text.trim_end_matches(['\n', '\r']);
    let Ok(mut message) = serde_json::from_str::<Value>(trimmed) else {
        if !trimmed.trim().is_empty() {
            shared.writer.write(Event::SentRaw {
                line: cut(&redact::raw_line(trimmed)),
            });
        }
        return Some(line);
    };
    let is_answer = message.get("method").is_none();
    let request = message.get("id").filter(|_| is_answer).and_then(|id| {
        let mut pending = shared
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        pending.remove(&id.to_string())
    });
    let mut relayed = line;
    if let Some((method, cursor)) = request {
        let id = message.get("id").cloned();
        for fault in shared.faults.take(&method, |k| !k.http_only()) {
            shared.writer.write(Event::Fault {
                spec: fault.spec.clone(),
                id: id.clone(),
            });
            note(&format!("fault {} on the answer to {method}", fault.spec));
            match fault.kind {
                Kind::Delay(ms) => tokio::time::sleep(Duration::from_millis(ms)).await,
                Kind::Malformed => {
                    shared.writer.write(Event::SentRaw {
                        line: MALFORMED_LINE.into(),
                    });
                    let bad = format!("{MALFORMED_LINE}\n");
                    let _ = out.write_all(bad.as_bytes()).await;
                    let _ = out.flush().await;
                }
                Kind::RepeatCursor => {
                    if repeat_cursor(&mut message, cursor.as_ref()) {
                        relayed = serde_json::to_vec(&message).unwrap_or_default();
                        relayed.push(b'\n');
                    }
                }
                Kind::Cut => {
                    let _ = out.flush().await;
                    close_stdout(shared);
                    return None;
                }
                Kind::Status(_) | Kind::SessionLoss => {}
            }
        }
    }
    shared.writer.write(Event::Sent {
        message: shared.redactor.server(message),
    });
    Some(relayed)
}

/// Rewrites a list result's `nextCursor` to `cursor` (the request's); false when there is
/// nothing to rewrite (not a result, or a first page).
pub(super) fn repeat_cursor(message: &mut Value, cursor: Option<&Value>) -> bool {
    match (
        message.get_mut("result").and_then(Value::as_object_mut),
        cursor,
    ) {
        (Some(result), Some(cursor)) => {
            result.insert("nextCursor".into(), cursor.clone());
            true
        }
        _ => false,
    }
}

/// Closes the host's stdout (points it at `/dev/null`), once.
fn close_stdout(shared: &Shared) {
    if shared.stdout_closed.swap(true, Ordering::SeqCst) {
        return;
    }
    match std::fs::OpenOptions::new().write(true).open("/dev/null") {
        Ok(null) => {
            if let Err(e) = nix::unistd::dup2_stdout(&null) {
                note(&format!("cannot close stdout: {e}"));
            }
        }
        Err(e) => note(&format!("cannot open /dev/null: {e}")),
    }
}

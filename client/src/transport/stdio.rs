//! The stdio transport: the server is our child process, one JSON-RPC message per line.
//!
//! Three tasks keep the pipes moving so the child can never block on us: a writer that owns
//! the child's stdin, a reader that feeds stdout to the router, and a drain that forwards stderr
//! to our own stderr prefixed `[server] `. The writer gathers whatever is queued into one
//! write, so many requests in flight cost one system call rather than one each. Shutdown
//! closes stdin, then escalates to SIGTERM and SIGKILL after a grace period each
//! ([`ESCALATION`]), and reaps the child (unless a shutdown defect leaves it running).
//!
//! The server gets a process group of its own, and the signals go to that group: a server
//! command is often a wrapper (a shell script, `npx`, `uv run`) whose real server is a
//! grandchild, which a signal to the direct child alone would leave running. Once the direct
//! child is gone, whatever is left of the group is killed.
//!
//! When the server closes its stdout, every request in flight fails with `transport_closed`.
//! A legacy-era connection then ends; in the 2026-07-28 era ("the client SHOULD restart it")
//! the next message starts the server again, and the old process, which may still be
//! running, is stopped in the background by the same escalation (shutdown waits for that).
//! If the new server cannot be started, the connection ends.
//!
//! The reader cuts stdout with the size-capped [`LineFramer`]. A line that cannot be used (too
//! long, not JSON, not UTF-8, not JSON-RPC) is reported on stderr and skipped, and reading goes
//! on; when its first bytes show it answers one of our requests, that request fails at once
//! with `invalid_response` (otherwise it runs into its timeout). Bytes after the last newline
//! at end of file are not a message and are dropped with a report.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::{Instant, timeout_at};

use crate::era::Era;
use crate::error::Error;
use crate::jsonrpc;
use crate::options::{ClientOptions, StdioCommand};
use crate::router::Router;
use crate::seams::Seams;
use crate::seams::wire::{AfterExit, Stop, Wire};
use crate::transport::framing::{Frame, LineFramer};

/// How many bytes of queued messages the writer gathers into one write, at most (a single
/// longer message is still written whole).
const WRITE_BATCH: usize = 64 * 1024;

/// How many bytes the readers ask for per read of the server's stdout or stderr.
const READ_CHUNK: usize = 64 * 1024;

/// The longest line of the server's stderr forwarded whole (the rest of a longer one is cut).
const STDERR_LINE: usize = 16 * 1024;

/// How a server is stopped: stdin closed, then SIGTERM, then SIGKILL; after SIGKILL the child
/// is waited for however long it takes, and reaped.
pub(crate) const ESCALATION: &[Stop] = &[
    Stop::CloseStdin,
    Stop::Signal(Signal::SIGTERM),
    Stop::Signal(Signal::SIGKILL),
];

/// The sending end of the writer task's queue; `None` once stdin is being closed.
struct Outbound(Mutex<Option<mpsc::UnboundedSender<String>>>);

impl Outbound {
    fn send(&self, message: &Value) -> Result<(), Error> {
        // `to_string` straight from serde_json, not through `Display`'s formatter.
        let mut line = serde_json::to_string(message).unwrap_or_default();
        line.push('\n');
        let guard = self.0.lock().unwrap_or_else(|p| p.into_inner());
        match guard.as_ref() {
            Some(tx) => tx
                .send(line)
                .map_err(|_| Error::closed("the server's stdin is closed")),
            None => Err(Error::closed("the connection is closed")),
        }
    }

    /// Drops the sender: the writer flushes what is queued, then closes the child's stdin.
    fn close(&self) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).take();
    }
}

/// The child and the tasks that serve its pipes.
struct Process {
    child: Child,
    writer: JoinHandle<()>,
    reader: JoinHandle<()>,
    /// The server's own process group (its pid), which shutdown signals as a whole; `None`
    /// when it shares ours (a defect), and then only the child itself is signalled.
    group: Option<Pid>,
}

/// A running stdio server.
pub(crate) struct StdioTransport {
    outbound: Arc<Outbound>,
    process: tokio::sync::Mutex<Option<Box<Process>>>,
    /// What it takes to start the server (again).
    launch: Box<Launch>,
    /// The server exited on its own and is to be started again before the next message
    /// (2026-07-28: "the client SHOULD restart it"; what was in flight is lost).
    exited: Arc<AtomicBool>,
    /// Speaking the 2026-07-28 era, where a server that exits is restarted (a dual-era
    /// client that falls back to `initialize` turns this off).
    modern: Arc<AtomicBool>,
    /// Held by a sender from the restart check to the queueing of its message.
    sending: Mutex<()>,
    /// The tasks stopping servers replaced by a restart (see [`StdioTransport::restart`]).
    retired: Mutex<Vec<JoinHandle<()>>>,
}

/// The command, the router and the options a server is started with.
struct Launch {
    command: StdioCommand,
    router: Arc<Router>,
    options: ClientOptions,
}

impl StdioTransport {
    /// Starts the server and the tasks serving its pipes; received messages go to `router`.
    pub(crate) fn spawn(
        command: &StdioCommand,
        router: Arc<Router>,
        options: &ClientOptions,
    ) -> Result<Self, Error> {
        let mut transport = StdioTransport {
            outbound: Arc::new(Outbound(Mutex::new(None))),
            process: tokio::sync::Mutex::new(None),
            launch: Box::new(Launch {
                command: command.clone(),
                router,
                options: options.clone(),
            }),
            exited: Arc::new(AtomicBool::new(false)),
            modern: Arc::new(AtomicBool::new(options.era != Era::Legacy)),
            sending: Mutex::new(()),
            retired: Mutex::new(Vec::new()),
        };
        let process = transport.start()?;
        *transport.process.get_mut() = Some(Box::new(process));
        Ok(transport)
    }

    /// Launches the server and the tasks serving its pipes, and points the outbound queue at
    /// its stdin.
    fn start(&self) -> Result<Process, Error> {
        let Launch {
            command,
            router,
            options,
        } = &*self.launch;
        let router = Arc::clone(router);
        let seams = &options.seams();
        let mut launch = Command::new(&command.program);
        launch
            .args(&command.args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(seams.kill_on_drop());
        if seams.server_group() {
            launch.process_group(0);
        }
        let mut child = launch.spawn().map_err(|e| {
            Error::closed(format!(
                "could not start the server {:?}: {e}",
                command.program
            ))
        })?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(Error::closed("the server's pipes were not set up"));
        };
        let (tx, rx) = mpsc::unbounded_channel();
        if let Some(line) = seams.first_line() {
            let _ = tx.send(line.to_owned());
        }
        *self.outbound.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(tx);
        let writer = tokio::spawn(write_lines(stdin, rx));
        let reader = tokio::spawn(read_messages(
            stdout,
            router,
            Arc::clone(&self.outbound),
            *seams,
            options.max_message_bytes,
            Exit {
                exited: Arc::clone(&self.exited),
                modern: Arc::clone(&self.modern),
            },
        ));
        tokio::spawn(drain_stderr(stderr));
        let group = seams
            .server_group()
            .then(|| child.id().and_then(|pid| i32::try_from(pid).ok()))
            .flatten()
            .map(Pid::from_raw);
        Ok(Process {
            child,
            writer,
            reader,
            group,
        })
    }

    pub(crate) fn send(&self, message: &Value) -> Result<(), Error> {
        // One sender at a time past the restart check: a message sent while another sender
        // is starting the new server must not go to the old one's queue.
        let _one = self.sending.lock().unwrap_or_else(|p| p.into_inner());
        if self.exited.swap(false, Ordering::SeqCst) {
            self.restart()?;
        }
        self.outbound.send(message)
    }

    /// Starts a server that closed its stdout again. The old one may still be running: it is
    /// stopped in the background as [`shutdown`](Self::shutdown) stops one ([`ESCALATION`]),
    /// and `shutdown` waits for that. If the new one cannot be started, the connection ends.
    fn restart(&self) -> Result<(), Error> {
        let closed = || Error::closed("the connection is closed");
        // Held only by a shutdown, which is ending the connection anyway.
        let mut guard = self.process.try_lock().map_err(|_| closed())?;
        let Some(old) = guard.take() else {
            return Err(closed());
        };
        eprintln!(
            "mcp-harness-client: the server went away (closed its stdout); starting it again"
        );
        // On success the queue now points at the new server, which closes the old one's stdin.
        let started = self.start();
        if started.is_err() {
            self.outbound.close();
        }
        let grace = self.launch.options.shutdown_grace;
        let stopping = tokio::spawn(stop(old, ESCALATION, grace, || {}));
        let mut retired = self.retired.lock().unwrap_or_else(|p| p.into_inner());
        retired.retain(|task| !task.is_finished());
        retired.push(stopping);
        match started {
            Ok(process) => {
                *guard = Some(Box::new(process));
                Ok(())
            }
            Err(e) => {
                let why = format!("the server could not be started again: {}", e.message);
                self.launch.router.close(&why);
                Err(Error::closed(why))
            }
        }
    }

    /// See [`Transport::set_modern`](super::Transport::set_modern).
    pub(crate) fn set_modern(&self, modern: bool) {
        self.modern.store(modern, Ordering::Relaxed);
    }

    /// See [`Transport::restarts_server`](super::Transport::restarts_server).
    pub(crate) fn restarts(&self) -> bool {
        self.modern.load(Ordering::Relaxed)
    }

    /// Stops the server step by step (see [`ESCALATION`]; `seams`: the shutdown seam), and
    /// waits for servers replaced by a restart to be stopped too.
    pub(crate) async fn shutdown(&self, grace: Duration, seams: &Seams) {
        let mut guard = self.process.lock().await;
        if let Some(p) = guard.take() {
            let steps = seams.escalation(ESCALATION);
            stop(p, steps, grace, || self.outbound.close()).await;
        }
        self.outbound.close();
        let retired = std::mem::take(&mut *self.retired.lock().unwrap_or_else(|p| p.into_inner()));
        for task in retired {
            let _ = task.await;
        }
    }

    #[cfg(feature = "defects")]
    pub(crate) async fn abandon(&self) {
        if let Some(p) = self.process.lock().await.take() {
            // Keep stdin open too: a server that exits on EOF must not be cleaned up by accident.
            std::mem::forget(
                self.outbound
                    .0
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .take(),
            );
            leave_running(*p);
        }
    }
}

/// Stops the server of `p` by `steps`, each but the last followed by `grace` to exit; the last
/// is waited for however long it takes, and the child reaped. `close_stdin` ends the writer's
/// queue (the writer then flushes it, within the grace period, and closes the child's stdin).
async fn stop(mut p: Box<Process>, steps: &[Stop], grace: Duration, close_stdin: impl Fn()) {
    for (i, step) in steps.iter().enumerate() {
        let deadline = Instant::now() + grace;
        match step {
            Stop::CloseStdin => {
                close_stdin();
                if timeout_at(deadline, &mut p.writer).await.is_err() {
                    p.writer.abort();
                }
            }
            Stop::Signal(sig) => signal(&p.child, p.group, *sig),
            Stop::LeaveRunning => return leave_running(*p),
        }
        if i + 1 == steps.len() {
            let _ = p.child.wait().await;
            break;
        }
        // Done once the child has exited and, with a group of its own, nothing of the group
        // is left (a wrapper's grandchild may outlive it): else the next step goes on.
        if exited_by(&mut p.child, deadline).await && group_gone_by(p.group, deadline).await {
            break;
        }
    }
    // The server's own process is gone; whatever is still in its group (a member that
    // outlived the escalation) goes too.
    if let Some(group) = p.group {
        let _ = killpg(group, Signal::SIGKILL);
    }
    p.reader.abort();
    p.writer.abort();
}

/// Waits until `deadline` for the server's process group to have no member left; true if
/// it has none (or the server has no group of its own). A member that has exited but is not
/// yet reaped by its new parent still counts.
async fn group_gone_by(group: Option<Pid>, deadline: Instant) -> bool {
    let Some(group) = group else {
        return true;
    };
    loop {
        if killpg(group, None) == Err(nix::errno::Errno::ESRCH) {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Waits until `deadline` for the child to exit, reaping it; true if it is gone.
async fn exited_by(child: &mut Child, deadline: Instant) -> bool {
    // An error from wait means there is nothing left to wait for.
    timeout_at(deadline, child.wait()).await.is_ok()
}

/// Sends `sig` to the server's process group, or to the child alone when it has none (the
/// group outlives a reaped child: a grandchild may still be in it).
fn signal(child: &Child, group: Option<Pid>, sig: Signal) {
    let sent = match (group, child.id().and_then(|pid| i32::try_from(pid).ok())) {
        (Some(group), _) => killpg(group, sig).map(|()| group),
        (None, Some(pid)) => kill(Pid::from_raw(pid), sig).map(|()| Pid::from_raw(pid)),
        (None, None) => return,
    };
    if let Err(e) = sent {
        // A group whose every member is gone is no error.
        if group.is_none() || e != nix::errno::Errno::ESRCH {
            eprintln!("mcp-harness-client: could not send {sig} to the server: {e}");
        }
    }
}

/// Forgets the child without signalling or reaping it.
fn leave_running(p: Process) {
    p.reader.abort();
    std::mem::forget(p.child);
}

async fn write_lines(mut stdin: ChildStdin, mut rx: mpsc::UnboundedReceiver<String>) {
    let mut batch = String::new();
    while let Some(line) = rx.recv().await {
        // Whatever else is already queued goes out in the same write: with many requests in
        // flight, one system call (and one wake-up of the server) carries them all.
        let bytes = match rx.try_recv() {
            Err(_) => line.as_bytes(),
            Ok(next) => {
                batch.clear();
                batch.push_str(&line);
                batch.push_str(&next);
                while batch.len() < WRITE_BATCH {
                    match rx.try_recv() {
                        Ok(more) => batch.push_str(&more),
                        Err(_) => break,
                    }
                }
                batch.as_bytes()
            }
        };
        let written = async {
            stdin.write_all(bytes).await?;
            stdin.flush().await
        };
        if let Err(e) = written.await {
            eprintln!("mcp-harness-client: writing to the server failed: {e}");
            return;
        }
    }
    // Dropping stdin here is what closes the server's input.
}

/// Where the reader tells that the server exited on its own, and whether it is to be
/// restarted.
struct Exit {
    exited: Arc<AtomicBool>,
    modern: Arc<AtomicBool>,
}

async fn read_messages(
    mut stdout: ChildStdout,
    router: Arc<Router>,
    outbound: Arc<Outbound>,
    seams: Seams,
    max: usize,
    exit: Exit,
) {
    let mut framer = LineFramer::new(max);
    // Reserved, not zeroed: `read_buf` fills spare capacity, so only the pages a read touches
    // are ever faulted in (a 64 KiB zeroed buffer costs that much at every server start).
    let mut chunk = Vec::with_capacity(READ_CHUNK);
    loop {
        chunk.clear();
        let n = match stdout.read_buf(&mut chunk).await {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) => {
                eprintln!("mcp-harness-client: reading the server's stdout failed: {e}");
                break;
            }
        };
        for frame in framer.push(&chunk[..n]) {
            match frame {
                Frame::Line(line) => deliver(&line, &router, &outbound),
                Frame::TooLong { head } => refuse(
                    &head,
                    &router,
                    &format!("longer than the {max}-byte message size cap"),
                ),
            }
        }
    }
    if let Some(len) = framer.finish() {
        eprintln!(
            "mcp-harness-client: the server's stdout ended inside a line \
             ({len} bytes without a newline); dropped"
        );
    }
    // A 2026-07-28 server is started again for the next request: only what is pending fails.
    let correct = match exit.modern.load(Ordering::Relaxed) {
        true => AfterExit::FailPending,
        false => AfterExit::Close,
    };
    // Marked as the waiters fail, under the router's lock: a request registered before is
    // failed, one registered after sees the mark and goes to the new server.
    let why = "the server closed its stdout";
    match seams.after_server_exit(correct) {
        AfterExit::Close => router.close(why),
        AfterExit::FailPending => router.fail_pending(why, || {
            exit.exited.store(true, Ordering::SeqCst);
        }),
        AfterExit::Nothing => {}
    }
}

/// Hands one line to the router (sending back its reply), or refuses it.
/// A batch (an array of messages) is handled element by element.
fn deliver(line: &[u8], router: &Router, outbound: &Outbound) {
    for message in router.read(line) {
        match message {
            Ok(message) => {
                if let Some(reply) = router.dispatch(message) {
                    let _ = outbound.send(&reply);
                }
            }
            Err(why) => refuse(line, router, &why),
        }
    }
}

/// Reports a line that cannot be used, and fails the request it answers, if that shows.
fn refuse(line: &[u8], router: &Router, why: &str) {
    eprintln!(
        "mcp-harness-client: skipping a line from the server, {why}: {}",
        preview(line)
    );
    if let Some(id) = jsonrpc::response_id(line) {
        router.fail(
            id,
            Error::invalid(format!("the server's response to request {id} is {why}")),
        );
    }
}

/// Forwards the server's stderr line by line, so a chatty server never blocks on a full pipe.
/// Lines are cut at [`STDERR_LINE`] bytes, so a server cannot make us buffer without bound.
async fn drain_stderr(mut stderr: impl AsyncRead + Unpin) {
    let mut framer = LineFramer::new(STDERR_LINE);
    let mut chunk = Vec::with_capacity(READ_CHUNK);
    loop {
        chunk.clear();
        let n = match stderr.read_buf(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        for frame in framer.push(&chunk[..n]) {
            let (Frame::Line(line) | Frame::TooLong { head: line }) = &frame;
            let cut = if matches!(frame, Frame::TooLong { .. }) {
                "…"
            } else {
                ""
            };
            eprintln!("[server] {}{cut}", String::from_utf8_lossy(line));
        }
    }
}

/// The start of a line, for diagnostics.
fn preview(line: &[u8]) -> String {
    crate::error::excerpt(&String::from_utf8_lossy(line))
}

//! The session: watching what the host does until it is done, printing each check as it
//! becomes judged. The transcripts are re-read as they grow (only when they changed). The
//! host is done when, over stdio, every fake it launched has exited and none started for a
//! short grace; over HTTPS, when it deleted its session or sent nothing for `idle`. A
//! Ctrl-C or the `timeout` ends the session too.

use std::collections::HashMap;
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use mcp_harness_scenarios::model::{Endpoint, Transport};
use mcp_harness_scenarios::transcript::{Event, Record};

use super::judge::{self, Graded, Observed, Verdict};
use super::setup::Served;
use crate::conformance::procs;
use crate::conformance::trial::ServerProcess;

/// How often the transcripts are looked at.
const POLL: Duration = Duration::from_millis(200);
/// How long, once every stdio fake has exited, no new one may start before the host counts
/// as done.
const STDIO_GRACE: Duration = Duration::from_millis(1500);

/// Why the session ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum End {
    /// The host was done.
    Done,
    /// Over HTTPS, the host sent nothing for `--idle` and never deleted its session.
    Quiet,
    /// Ctrl-C (or SIGTERM).
    Interrupted,
    /// `--timeout` passed.
    Timeout,
}

impl End {
    /// In words, for the summary.
    pub fn as_str(self) -> &'static str {
        match self {
            End::Done => "the host was done",
            End::Quiet => {
                "the host sent nothing for --idle seconds and kept its session (give a host \
                 that pauses longer a larger --idle)"
            }
            End::Interrupted => "interrupted",
            End::Timeout => "the timeout passed",
        }
    }
}

/// What one served case looked like at one moment.
struct Look {
    observed: Observed,
    /// How many records, all servers together (a change means new traffic).
    count: usize,
    /// Whether any server of it saw anything.
    touched: bool,
    /// Over HTTPS, whether the host deleted its session.
    deleted: bool,
}

fn look(s: &Served<'_>, started: Instant) -> Result<Look, String> {
    let (main, others) = s.records()?;
    let mut servers = Vec::new();
    let mut still_running = false;
    let mut ended = Vec::new();
    for server in &s.servers {
        let mut started_here = false;
        let mut alive_here = false;
        let records: &[Record] = match others.get(&server.name) {
            Some(r) => r,
            None => &main,
        };
        for pid in records
            .iter()
            .filter(|r| r.event == Event::Started)
            .map(|r| r.pid)
        {
            let alive = procs::is_alive(pid, &server.transcript);
            still_running |= alive;
            started_here = true;
            alive_here |= alive;
            servers.push(ServerProcess {
                pid,
                outlived_client: false,
                server: (server.name != mcp_harness_scenarios::model::servers::MAIN)
                    .then(|| server.name.clone()),
            });
        }
        if started_here && !alive_here {
            ended.push(server.name.clone());
        }
    }
    let count = main.len() + others.values().map(Vec::len).sum::<usize>();
    // Over HTTPS a bare connection counts only where the host must refuse the server (its
    // certificate): elsewhere it may be a stray one (a port used before), not the host.
    let refused = matches!(
        s.case.scenario.server.http.endpoint,
        Endpoint::UntrustedCa | Endpoint::WrongName
    );
    let touched = main
        .iter()
        .chain(others.values().flatten())
        .any(|r| match r.event {
            // The in-process HTTPS fake records its own start: only a stdio one is the host's.
            Event::Started => s.transport == Transport::Stdio,
            Event::HttpRequest { .. } | Event::Received { .. } => true,
            Event::Connected => refused,
            _ => false,
        });
    let deleted = main.iter().any(|r| {
        matches!(&r.event, Event::HttpRequest { method, status, .. }
            if method == "DELETE" && (200..300).contains(status))
    });
    Ok(Look {
        observed: Observed {
            main,
            others,
            servers,
            still_running,
            ended,
            canary: None,
            elapsed: started.elapsed(),
        },
        count,
        touched,
        deleted,
    })
}

/// Watches every served case until the host is done, Ctrl-C or `timeout`; prints each check
/// once it is judged (a failure of an always-on rule at once, a case's check once its steps
/// are done, again if its verdict changes). Returns why it ended.
pub fn watch(
    served: &[Served<'_>],
    timeout: Duration,
    idle: Duration,
    interrupted: &AtomicBool,
    out: &mut dyn Write,
) -> Result<End, String> {
    let started = Instant::now();
    let mut counts: Vec<usize> = vec![0; served.len()];
    let mut last_change = started;
    let mut printed: Vec<HashMap<String, Verdict>> = vec![HashMap::new(); served.len()];
    let mut stdio_pids = 0usize;
    loop {
        if interrupted.load(Ordering::SeqCst) {
            return Ok(End::Interrupted);
        }
        if started.elapsed() >= timeout {
            return Ok(End::Timeout);
        }
        let mut done = true;
        let mut pids = 0usize;
        let mut quiet = false;
        for (i, s) in served.iter().enumerate() {
            let now = look(s, started)?;
            if now.count != counts[i] {
                counts[i] = now.count;
                last_change = Instant::now();
                let mut graded = judge::judge(&s.case, s.transport, &now.observed);
                // What the canary saw is read at the end: its case's checks wait for it.
                if s.case.scenario.server.uses_canary() {
                    graded.retain(|g| g.check.always_on);
                }
                report_new(
                    &s.case.trial_name(s.transport),
                    &graded,
                    &mut printed[i],
                    out,
                );
            }
            pids += now.observed.servers.len();
            done &= match s.transport {
                Transport::Stdio => now.touched && !now.observed.still_running,
                Transport::Https => now.touched && (now.deleted || last_change.elapsed() >= idle),
            };
            quiet |= s.transport == Transport::Https && !now.deleted;
        }
        if pids != stdio_pids {
            stdio_pids = pids;
            last_change = Instant::now();
        }
        let settled = last_change.elapsed() >= STDIO_GRACE.min(idle);
        if done && settled {
            return Ok(if quiet { End::Quiet } else { End::Done });
        }
        std::thread::sleep(POLL);
    }
}

/// Prints the checks of `graded` that became judged (or changed verdict) since last time. An
/// always-on rule's pass is not final while the host goes on, so only its failure shows here.
fn report_new(
    name: &str,
    graded: &[Graded],
    printed: &mut HashMap<String, Verdict>,
    out: &mut dyn Write,
) {
    for g in graded {
        let show = match &g.verdict {
            Verdict::NotExercised(_) => false,
            Verdict::Pass => !g.check.always_on,
            Verdict::Fail => true,
        };
        if !show || printed.get(&g.key()) == Some(&g.verdict) {
            continue;
        }
        printed.insert(g.key(), g.verdict.clone());
        let _ = writeln!(out, "{}", super::print::check_line(name, g));
        let _ = out.flush();
    }
}

/// A flag set by SIGINT or SIGTERM (a thread of its own waits for them); returns once the
/// handlers are in place, so a Ctrl-C right after the instructions are printed is caught.
pub fn on_interrupt() -> Arc<AtomicBool> {
    let flag = Arc::new(AtomicBool::new(false));
    let set = Arc::clone(&flag);
    let (ready, registered) = std::sync::mpsc::channel();
    let _ = std::thread::Builder::new()
        .name("serve-signals".into())
        .spawn(move || {
            let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                let _ = ready.send(());
                return;
            };
            runtime.block_on(async {
                use tokio::signal::unix::{SignalKind, signal};
                let handlers = (
                    signal(SignalKind::interrupt()),
                    signal(SignalKind::terminate()),
                );
                let _ = ready.send(());
                let (Ok(mut int), Ok(mut term)) = handlers else {
                    return;
                };
                tokio::select! {
                    _ = int.recv() => {}
                    _ = term.recv() => {}
                }
                set.store(true, Ordering::SeqCst);
            });
        });
    let _ = registered.recv_timeout(Duration::from_secs(5));
    flag
}

/// The final look at one served case, once the session ended: its records, its servers and
/// whether any still runs.
pub fn last_look(s: &Served<'_>, started: Instant) -> Result<Observed, String> {
    look(s, started).map(|l| l.observed)
}

//! A run stopped from outside (Ctrl-C, a CI job cancelled with SIGTERM, a closed terminal)
//! takes its trials with it. Every client runs in a process group of its own, so the
//! terminal's SIGINT never reaches it, and a runner that simply died would leave clients and
//! stdio fakes running, re-parented to init where no sweep finds them. On SIGINT, SIGTERM or
//! SIGHUP the runner kills every process it started (its descendants, which it can still
//! walk) and exits with 128 + the signal's number, as a shell reports a signalled command.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;

/// Watches for SIGINT, SIGTERM and SIGHUP on a thread of its own from now on. Once one
/// arrives, every descendant of the runner is killed and the process exits. Without signal
/// support (a runtime or registration error), a warning says the run cannot clean up after
/// an interruption, and the run goes on.
pub fn stop_trials_on_signal() {
    let spawned = std::thread::Builder::new()
        .name("interrupt".into())
        .spawn(|| {
            let runtime = match tokio::runtime::Builder::new_current_thread()
                .enable_io()
                .build()
            {
                Ok(runtime) => runtime,
                Err(e) => return warn(&e),
            };
            let received = runtime.block_on(async {
                use tokio::signal::unix::{SignalKind, signal};
                let mut int = signal(SignalKind::interrupt())?;
                let mut term = signal(SignalKind::terminate())?;
                let mut hup = signal(SignalKind::hangup())?;
                Ok::<_, std::io::Error>(tokio::select! {
                    _ = int.recv() => Signal::SIGINT,
                    _ = term.recv() => Signal::SIGTERM,
                    _ = hup.recv() => Signal::SIGHUP,
                })
            });
            match received {
                Ok(signal) => stop(signal),
                Err(e) => warn(&e),
            }
        });
    if let Err(e) = spawned {
        warn(&e);
    }
}

/// Set once a signal has arrived: the run's results are then partial, and the process ends
/// with the signal's code, never with the run's own verdict.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Holds the calling thread for good when the run was interrupted (the watcher is killing
/// the trials and will end the process with the signal's code), so the run does not go on to
/// report, or exit with, the verdict of trials that were killed. Returns at once otherwise.
pub fn hold_if_interrupted() {
    while INTERRUPTED.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn warn(e: &dyn std::fmt::Display) {
    eprintln!(
        "warning: cannot watch for interruptions ({e}); an interrupted run may leave trial processes running"
    );
}

/// Kills every process this run started and exits. A process may fork while it is being
/// killed (a client starting its server), so the walk repeats until it finds nothing, for at
/// most a second.
fn stop(signal: Signal) -> ! {
    INTERRUPTED.store(true, Ordering::SeqCst);
    eprintln!("\ninterrupted by {signal}: stopping every trial's processes");
    let until = Instant::now() + Duration::from_secs(1);
    while Instant::now() < until {
        let left = super::procs::kill_descendants();
        if left == 0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    std::process::exit(128 + signal as i32);
}

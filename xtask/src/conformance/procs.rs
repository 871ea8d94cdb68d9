//! Process bookkeeping, so that no process outlives its trial.
//!
//! The client runs in its own process group, which the runner kills as a whole at the
//! deadline and after every trial. A server the client forgot, or moved to another group,
//! is found by the pid its transcript records; the runner is a child subreaper, so such
//! orphans become the runner's children and can be killed and reaped here.

use std::path::Path;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::signal::{Signal, kill, killpg};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::Pid;

/// Makes this process the reaper of its orphaned descendants (Linux), so a fake that its
/// client abandoned is re-parented here instead of to init, where it could be lost.
pub fn become_subreaper() {
    #[cfg(target_os = "linux")]
    if let Err(e) = nix::sys::prctl::set_child_subreaper(true) {
        eprintln!("warning: cannot become a child subreaper ({e}); orphans may escape");
    }
}

/// Kills a whole process group; a group that is already gone is fine. Members that were
/// re-parented to this process (the client's children, once the client died) are reaped, so
/// they do not linger as zombies.
pub fn kill_group(pgid: u32) {
    let _ = killpg(Pid::from_raw(pgid as i32), Signal::SIGKILL);
    let until = Instant::now() + Duration::from_millis(500);
    loop {
        match waitpid(Pid::from_raw(-(pgid as i32)), Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::StillAlive) if Instant::now() < until => {
                std::thread::sleep(Duration::from_millis(2));
            }
            Ok(WaitStatus::StillAlive) | Err(Errno::ECHILD) => return,
            Err(Errno::EINTR) | Ok(_) => {}
            Err(_) => return,
        }
    }
}

/// Whether `pid` is a live (not zombie) process whose command line mentions `marker`, which
/// guards against a recycled pid.
pub fn is_alive(pid: u32, marker: &Path) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // The state follows the parenthesised command name, which may itself contain spaces.
    let state = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.trim_start().chars().next());
    if matches!(state, Some('Z' | 'X') | None) {
        return false;
    }
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let marker = marker.as_os_str().as_encoded_bytes();
    cmdline.windows(marker.len()).any(|w| w == marker)
}

/// Waits up to `grace` for `pid` to stop being alive; true when it is gone.
pub fn gone_within(pid: u32, marker: &Path, grace: Duration) -> bool {
    let until = Instant::now() + grace;
    loop {
        if !is_alive(pid, marker) {
            return true;
        }
        if Instant::now() >= until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Kills `pid` (checked against `marker`) and reaps it if it became our child.
pub fn kill_and_reap(pid: u32, marker: &Path) {
    if is_alive(pid, marker) {
        let _ = kill(Pid::from_raw(pid as i32), Signal::SIGKILL);
    }
    reap(pid, Duration::from_millis(500));
}

/// Reaps `pid` if it is (or becomes, within `patience`) a zombie child of this process.
pub fn reap(pid: u32, patience: Duration) {
    let until = Instant::now() + patience;
    loop {
        match waitpid(Pid::from_raw(pid as i32), Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::StillAlive) if Instant::now() < until => {
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(Errno::EINTR) => {}
            _ => return,
        }
    }
}

/// Live children of this process other than the `known` ones: orphans that escaped their
/// trial's bookkeeping. Dead ones (zombies) are reaped on the way, since they outlived nothing.
/// Meant for the end of a run, when no trial is running.
pub fn stray_children(known: &[u32]) -> Vec<u32> {
    let me = std::process::id();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let children: Vec<u32> = entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| !known.contains(pid))
        .filter(|pid| parent_of(*pid) == Some(me))
        .collect();
    children
        .into_iter()
        .filter(|pid| {
            let zombie = state_of(*pid).is_none_or(|s| s == 'Z' || s == 'X');
            if zombie {
                reap(*pid, Duration::ZERO);
            }
            !zombie
        })
        .collect()
}

/// The process state letter (`R`, `S`, `Z`, ...); it follows the parenthesised command name,
/// which may itself contain spaces.
fn state_of(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    rest.trim_start().chars().next()
}

fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// Kills and reaps the given stray children.
pub fn kill_strays(pids: &[u32]) {
    for pid in pids {
        let _ = kill(Pid::from_raw(*pid as i32), Signal::SIGKILL);
        reap(*pid, Duration::from_millis(500));
    }
}

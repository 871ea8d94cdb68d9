//! Process bookkeeping, so that no process outlives its trial.
//!
//! The client runs in its own process group, which the runner kills as a whole at the
//! deadline and after every trial. A server the client forgot, or moved to another group,
//! is found by the pid its transcript records; the runner is a child subreaper, so such
//! orphans become the runner's children and can be killed and reaped here.
//!
//! Being the subreaper also bounds every search: a trial's processes, escaped or not, are
//! always the runner's descendants, so a search walks the runner's tree of children
//! (`/proc/<pid>/task/<tid>/children`) instead of every process on the machine, which on a
//! busy machine cost more than the rest of the harness's work in a trial.

use std::collections::HashSet;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::signal::{Signal, kill, killpg};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::Pid;

/// Makes this process the reaper of its orphaned descendants (Linux), so a fake that its
/// client abandoned is re-parented here instead of to init, where it could be lost.
pub fn become_subreaper() {
    #[cfg(target_os = "linux")]
    match nix::sys::prctl::set_child_subreaper(true) {
        Ok(()) => SUBREAPER.store(true, Ordering::SeqCst),
        Err(e) => eprintln!("warning: cannot become a child subreaper ({e}); orphans may escape"),
    }
}

/// Whether this process is the subreaper of its descendants (see [`become_subreaper`]).
static SUBREAPER: AtomicBool = AtomicBool::new(false);

/// The processes a search must look at: this process's descendants when it is their
/// subreaper (nothing of a trial can then be anywhere else), otherwise every process.
fn candidates() -> Vec<u32> {
    if SUBREAPER.load(Ordering::SeqCst)
        && let Some(found) = descendants(std::process::id())
    {
        return found;
    }
    all_pids()
}

/// Every process on the machine.
fn all_pids() -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .collect()
}

/// The descendants of `root` (children, theirs, ...), zombies included, from each thread's
/// `children` list; `None` when the kernel does not offer those lists for `root`. A process
/// that exits during the walk is simply not followed further; its children, re-parented to
/// `root` when `root` is their subreaper, are found by reading `root`'s lists again after the
/// walk (a few rounds at most, each walking only what is new).
fn descendants(root: u32) -> Option<Vec<u32>> {
    if !Path::new(&format!("/proc/{root}/task/{root}/children")).exists() {
        return None;
    }
    let mut seen: HashSet<u32> = HashSet::from([root]);
    let mut found = Vec::new();
    let mut queue = vec![root];
    for _ in 0..4 {
        while let Some(pid) = queue.pop() {
            for child in children_of(pid) {
                if seen.insert(child) {
                    found.push(child);
                    queue.push(child);
                }
            }
        }
        // Orphans re-parented to `root` while the walk was under way.
        queue.extend(children_of(root).into_iter().filter(|&c| seen.insert(c)));
        if queue.is_empty() {
            break;
        }
        found.extend(&queue);
    }
    Some(found)
}

/// The children of `pid`, from the `children` lists of all its threads (empty once it is gone).
fn children_of(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .filter_map(Result::ok)
        .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
        .flat_map(|list| {
            list.split_whitespace()
                .filter_map(|c| c.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect()
}

/// Kills a whole process group; a group that is already gone is fine. Waits (up to 500 ms)
/// until no member is left running, killing again what was forked meanwhile, and reaps the
/// members that are or became this process's children (the client's children are
/// re-parented here once the client dies), so none lingers as a zombie.
pub fn kill_group(pgid: u32) {
    let until = Instant::now() + Duration::from_millis(500);
    loop {
        let _ = killpg(Pid::from_raw(pgid as i32), Signal::SIGKILL);
        // Reap every member that is already a zombie child of this process.
        while let Ok(status) = waitpid(Pid::from_raw(-(pgid as i32)), Some(WaitPidFlag::WNOHANG)) {
            if matches!(status, WaitStatus::StillAlive) {
                break;
            }
        }
        if !group_has_members(pgid) || Instant::now() >= until {
            return;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Whether group `pgid` still has a live member, or a dead one this process must reap.
fn group_has_members(pgid: u32) -> bool {
    let me = std::process::id();
    candidates()
        .into_iter()
        .filter_map(stat_fields)
        .any(|(state, parent, group)| {
            group == pgid && (!matches!(state, 'Z' | 'X') || parent == me)
        })
}

/// State letter, parent and process group of `pid`, from `/proc/<pid>/stat`.
fn stat_fields(pid: u32) -> Option<(char, u32, u32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let parent = fields.next()?.parse().ok()?;
    let group = fields.next()?.parse().ok()?;
    Some((state, parent, group))
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
    stat_fields(pid).map(|(state, _, _)| state)
}

fn parent_of(pid: u32) -> Option<u32> {
    stat_fields(pid).map(|(_, parent, _)| parent)
}

/// Kills and reaps the given stray children.
pub fn kill_strays(pids: &[u32]) {
    for pid in pids {
        let _ = kill(Pid::from_raw(*pid as i32), Signal::SIGKILL);
        reap(*pid, Duration::from_millis(500));
    }
}

/// Kills every running descendant of this process (an interrupted run's clients, fakes and
/// whatever they started) and returns how many were still running. Zombies are left: the
/// runner is about to exit, and init reaps what it leaves.
pub fn kill_descendants() -> usize {
    let running: Vec<u32> = descendants(std::process::id())
        .unwrap_or_default()
        .into_iter()
        .filter(|&pid| state_of(pid).is_some_and(|s| s != 'Z' && s != 'X'))
        .collect();
    for &pid in &running {
        let _ = kill(Pid::from_raw(pid as i32), Signal::SIGKILL);
    }
    running.len()
}

/// A process of a trial that was still running after its client had gone, and was killed.
#[derive(Debug, Clone, PartialEq)]
pub struct Leftover {
    /// Its pid.
    pub pid: u32,
    /// Its command name (`/proc/<pid>/comm`).
    pub name: String,
}

/// The `pipe:[inode]` name of a pipe this process holds, so other holders can be found.
pub fn pipe_name(fd: &impl std::os::fd::AsRawFd) -> Option<String> {
    let link = std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).ok()?;
    let name = link.to_string_lossy().into_owned();
    name.starts_with("pipe:").then_some(name)
}

/// The runner's process starts in flight, by ticket. Between fork and exec a child holds
/// copies of every descriptor of the runner, so one started while another trial was starting
/// its client holds, for a moment, the write ends of that trial's output pipes; a search by
/// pipe must not mistake it for a process of that trial. `Command::spawn` returns only once
/// the child has exec'd (dropping the copies), and the runner holds a trial's write ends only
/// while starting its client, so the hazard is limited to the starts in flight when that
/// start ended: a search waits for those (long done, as a rule), and for nothing else, so
/// starts and searches never wait on each other otherwise.
struct Starts {
    next: u64,
    in_flight: std::collections::BTreeSet<u64>,
}

static STARTS: std::sync::Mutex<Starts> = std::sync::Mutex::new(Starts {
    next: 0,
    in_flight: std::collections::BTreeSet::new(),
});
static STARTED: std::sync::Condvar = std::sync::Condvar::new();

/// Which starts could hold copies of a trial's pipes: those with a ticket below this one.
#[derive(Debug, Clone, Copy, Default)]
pub struct StartMark(u64);

fn starts() -> std::sync::MutexGuard<'static, Starts> {
    STARTS.lock().unwrap_or_else(|p| p.into_inner())
}

/// Starts `cmd`; the mark tells a later search for the child's processes by its pipes which
/// other starts to wait for (see [`trial_processes`]).
pub fn spawn(cmd: &mut std::process::Command) -> std::io::Result<(std::process::Child, StartMark)> {
    let ticket = {
        let mut s = starts();
        let ticket = s.next;
        s.next += 1;
        s.in_flight.insert(ticket);
        ticket
    };
    let spawned = cmd.spawn();
    let mark = {
        let mut s = starts();
        s.in_flight.remove(&ticket);
        StartMark(s.next)
    };
    STARTED.notify_all();
    spawned.map(|child| (child, mark))
}

/// Waits until no start with a ticket below `mark` is in flight.
fn wait_for_starts(mark: StartMark) {
    let mut s = starts();
    while s.in_flight.first().is_some_and(|&t| t < mark.0) {
        s = STARTED.wait(s).unwrap_or_else(|p| p.into_inner());
    }
}

/// Live processes other than this one that belong to a trial: their environment holds
/// `entry` (`NAME=value`, inherited from the client), or they hold the write end of one of
/// the trial's output `pipes` (found even if they cleared their environment). Only write
/// ends count: a process this runner is just starting holds copies of the runner's read
/// ends for a moment, and must not be mistaken for a trial's. `mark` is the mark of the
/// start that made the pipes.
pub fn trial_processes(entry: &str, pipes: &[String], mark: StartMark) -> Vec<u32> {
    wait_for_starts(mark);
    let me = std::process::id();
    candidates()
        .into_iter()
        .filter(|&pid| pid != me)
        .filter(|&pid| state_of(pid).is_some_and(|s| s != 'Z' && s != 'X'))
        .filter(|&pid| has_env_entry(pid, entry) || holds_write_end(pid, pipes))
        .collect()
}

fn has_env_entry(pid: u32, entry: &str) -> bool {
    let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else {
        return false;
    };
    environ.split(|&b| b == 0).any(|e| e == entry.as_bytes())
}

fn holds_write_end(pid: u32, pipes: &[String]) -> bool {
    if pipes.is_empty() {
        return false;
    }
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    fds.filter_map(Result::ok).any(|fd| {
        let is_ours = std::fs::read_link(fd.path())
            .is_ok_and(|l| pipes.iter().any(|p| l.as_os_str() == p.as_str()));
        is_ours && {
            let info = format!("/proc/{pid}/fdinfo/{}", fd.file_name().to_string_lossy());
            std::fs::read_to_string(info).is_ok_and(|text| write_only(&text))
        }
    })
}

/// Whether an fdinfo text says the descriptor was opened write-only.
fn write_only(fdinfo: &str) -> bool {
    fdinfo
        .lines()
        .find_map(|l| l.strip_prefix("flags:"))
        .and_then(|f| u32::from_str_radix(f.trim(), 8).ok())
        .is_some_and(|flags| flags & 0o3 == 0o1)
}

/// The process group of `pid`.
pub fn group_of(pid: u32) -> Option<u32> {
    stat_fields(pid).map(|(_, _, group)| group)
}

fn name_of(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .map(|n| n.trim_end().to_owned())
        .unwrap_or_else(|_| "?".to_owned())
}

/// Kills every process of a trial still running (see [`trial_processes`]), except the
/// `known` ones, and reaps those that became this process's children. Returns the ones that
/// had left the client's process group `pgid`: the group was killed as a whole, so those
/// are the processes that tried to outlive the trial.
pub fn sweep_trial(
    entry: &str,
    pipes: &[String],
    mark: StartMark,
    pgid: u32,
    known: &[u32],
) -> Vec<Leftover> {
    let mut escaped: Vec<Leftover> = Vec::new();
    // A process may fork while it is being killed: look again until nothing is left. One
    // empty pass is not proof: a process whose parent exited during the walk can be missed
    // while it is re-parented, so stop only after two empty passes a few ms apart.
    let until = Instant::now() + Duration::from_secs(1);
    let mut empty_passes = 0;
    while Instant::now() < until {
        let found: Vec<u32> = trial_processes(entry, pipes, mark)
            .into_iter()
            .filter(|pid| !known.contains(pid))
            .collect();
        if found.is_empty() {
            empty_passes += 1;
            if empty_passes >= 2 {
                break;
            }
            std::thread::sleep(Duration::from_millis(3));
            continue;
        }
        empty_passes = 0;
        for &pid in &found {
            if group_of(pid) != Some(pgid) && !escaped.iter().any(|l| l.pid == pid) {
                escaped.push(Leftover {
                    pid,
                    name: name_of(pid),
                });
            }
            let _ = kill(Pid::from_raw(pid as i32), Signal::SIGKILL);
        }
        for &pid in &found {
            reap(pid, Duration::from_millis(100));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_walk_finds_grandchildren() {
        let mut child = std::process::Command::new("sh")
            .args(["-c", "sleep 5 & wait"])
            .spawn()
            .expect("sh runs");
        let me = std::process::id();
        let shell = child.id();
        let until = Instant::now() + Duration::from_secs(2);
        let grandchild = loop {
            let found = descendants(me).expect("children lists on Linux");
            assert!(found.contains(&shell), "{found:?} lacks the shell {shell}");
            let other = found.into_iter().find(|&p| {
                p != shell && stat_fields(p).is_some_and(|(_, parent, _)| parent == shell)
            });
            if let Some(pid) = other {
                break pid;
            }
            assert!(Instant::now() < until, "the shell's sleep never showed");
            std::thread::sleep(Duration::from_millis(5));
        };
        let _ = kill(Pid::from_raw(grandchild as i32), Signal::SIGKILL);
        let _ = child.kill();
        let _ = child.wait();
    }
}

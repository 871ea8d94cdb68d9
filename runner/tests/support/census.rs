//! Counting processes from `/proc`, to show that a run leaves none behind: the machine's
//! total (for the record; other work shares the machine), this test process's descendants
//! (zombies included), and the processes whose environment carries a marker a test set.

use std::collections::{BTreeSet, HashMap};

/// Every pid on the machine with its parent and state letter.
fn table() -> HashMap<u32, (u32, char)> {
    let mut out = HashMap::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return out;
    };
    for pid in entries.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok()) {
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let mut fields = rest.split_whitespace();
        let state = fields.next().and_then(|s| s.chars().next()).unwrap_or('?');
        let parent = fields.next().and_then(|p| p.parse().ok()).unwrap_or(0);
        out.insert(pid, (parent, state));
    }
    out
}

/// How many processes the machine has now.
pub fn machine_total() -> usize {
    table().len()
}

/// This process's descendants, zombies included (a zombie is a leftover too).
pub fn descendants() -> BTreeSet<u32> {
    let table = table();
    let me = std::process::id();
    table
        .keys()
        .copied()
        .filter(|&pid| {
            let mut at = pid;
            for _ in 0..64 {
                match table.get(&at) {
                    Some(&(parent, _)) if parent == me => return true,
                    Some(&(parent, _)) if parent > 1 => at = parent,
                    _ => return false,
                }
            }
            false
        })
        .collect()
}

/// Live or zombie processes whose environment holds `entry` (`NAME=value`).
pub fn marked(entry: &str) -> BTreeSet<u32> {
    table()
        .keys()
        .copied()
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|&b| b == 0).any(|e| e == entry.as_bytes()))
        })
        .collect()
}

/// A one-line description of `pids` (command names), for failure messages.
pub fn describe(pids: &BTreeSet<u32>) -> String {
    pids.iter()
        .map(|pid| {
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
                .unwrap_or_default();
            format!("{pid}: {}", cmd.trim())
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// A fresh marker value, unique to this process and moment.
pub fn fresh_marker(what: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{what}-{}-{nanos}", std::process::id())
}

/// Samples, every 50 ms until dropped, the most processes seen at once among this process's
/// descendants and among those carrying `entry`: proof that the counts after a run come down
/// from something.
pub struct Peak {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    handle: Option<std::thread::JoinHandle<(usize, usize)>>,
}

impl Peak {
    /// Starts sampling.
    pub fn start(entry: String) -> Peak {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::spawn(move || {
            let (mut descendants_max, mut marked_max) = (0, 0);
            while !flag.load(std::sync::atomic::Ordering::Relaxed) {
                descendants_max = descendants_max.max(descendants().len());
                marked_max = marked_max.max(marked(&entry).len());
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            (descendants_max, marked_max)
        });
        Peak {
            stop,
            handle: Some(handle),
        }
    }

    /// Stops sampling: (most descendants, most marked) seen at once.
    pub fn finish(mut self) -> (usize, usize) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.handle
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default()
    }
}

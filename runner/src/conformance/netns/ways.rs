//! Which way this machine lets the runner make network namespaces, found once per run.
//!
//! CI runners are rarely root. The ways are tried in this order, and the first that works is
//! kept for every isolated trial of the run:
//! 1. `root`: the runner itself has `CAP_SYS_ADMIN` (root, or a container granting it);
//! 2. `sudo`: `sudo -n` works without a password (GitHub's hosted runners): a root helper
//!    makes a user namespace owned by the runner's user, then as 3;
//! 3. `userns`: an unprivileged user namespace, where the kernel allows one
//!    (`user.max_user_namespaces`, Debian's `kernel.unprivileged_userns_clone`, Ubuntu's
//!    AppArmor `kernel.apparmor_restrict_unprivileged_userns`). Its client runs as root
//!    inside that user namespace only (as `unshare --user --map-root-user` would).
//!
//! Where none works, every isolated trial is reported "not run here" with the reasons of all
//! three. [`WAYS_VAR`] narrows the list (tests force the fallback with it).

use std::sync::Mutex;

/// The variable that names the ways to try, comma-separated, in order (default
/// `root,sudo,userns`); `none` or an empty value tries none.
pub const WAYS_VAR: &str = "MCP_HARNESS_NETNS_WAYS";

/// One way of making a namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Way {
    /// The runner's own `CAP_SYS_ADMIN`.
    Root,
    /// A root helper through passwordless `sudo -n`.
    Sudo,
    /// An unprivileged user namespace.
    UserNs,
}

impl Way {
    /// Every way, in the order they are tried by default.
    pub const ALL: [Way; 3] = [Way::Root, Way::Sudo, Way::UserNs];

    /// Its name in [`WAYS_VAR`] and in results.json.
    pub fn as_str(self) -> &'static str {
        match self {
            Way::Root => "root",
            Way::Sudo => "sudo",
            Way::UserNs => "userns",
        }
    }

    /// A phrase for the console: "made as root".
    pub fn describe(self) -> &'static str {
        match self {
            Way::Root => "made as root (CAP_SYS_ADMIN)",
            Way::Sudo => "made through passwordless `sudo -n`",
            Way::UserNs => "made in an unprivileged user namespace",
        }
    }
}

/// The phrase for a way's name as results.json records it.
pub fn describe(name: &str) -> &'static str {
    Way::ALL
        .into_iter()
        .find(|w| w.as_str() == name)
        .map_or("made", Way::describe)
}

/// The ways to try, from [`WAYS_VAR`] or the default order.
pub fn allowed() -> Result<Vec<Way>, String> {
    let Ok(value) = std::env::var(WAYS_VAR) else {
        return Ok(Way::ALL.to_vec());
    };
    let mut ways = Vec::new();
    for word in value.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        if word == "none" {
            continue;
        }
        match Way::ALL.into_iter().find(|w| w.as_str() == word) {
            Some(way) => ways.push(way),
            None => {
                let names: Vec<&str> = Way::ALL.iter().map(|w| w.as_str()).collect();
                return Err(format!(
                    "{WAYS_VAR}={value:?}: `{word}` is not a way; expected a comma-separated list of {} (or none)",
                    names.join(", ")
                ));
            }
        }
    }
    Ok(ways)
}

/// What the run found: the way that worked, or why none did.
pub type Found = Result<Way, String>;

static FOUND: Mutex<Option<Found>> = Mutex::new(None);

/// The way this run uses, finding it with `attempt` on the first call (the others wait for
/// it). `attempt` tries one way and, when it works, keeps what it made for its caller.
pub fn find(mut attempt: impl FnMut(Way) -> Result<(), String>) -> Result<Found, String> {
    let mut found = FOUND.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(found) = found.as_ref() {
        return Ok(found.clone());
    }
    let mut why = Vec::new();
    for way in allowed()? {
        match attempt(way) {
            Ok(()) => {
                *found = Some(Ok(way));
                return Ok(Ok(way));
            }
            Err(e) => why.push(format!("{}: {e}", way.as_str())),
        }
    }
    if why.is_empty() {
        why.push(format!("{WAYS_VAR} allows no way"));
    }
    let none = Err(format!(
        "no network namespace can be made here ({})",
        why.join("; ")
    ));
    *found = Some(none.clone());
    Ok(none)
}

/// What this run found, if it made (or tried to make) a namespace: for the summary.
pub fn found() -> Option<Found> {
    FOUND.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Why the kernel may refuse an unprivileged user namespace: the settings that say so.
pub fn userns_hints() -> String {
    let read = |path: &str| {
        std::fs::read_to_string(path)
            .ok()
            .map(|v| v.trim().to_owned())
    };
    let mut hints = Vec::new();
    if read("/proc/sys/user/max_user_namespaces").as_deref() == Some("0") {
        hints.push("user.max_user_namespaces is 0".to_owned());
    }
    if read("/proc/sys/kernel/unprivileged_userns_clone").as_deref() == Some("0") {
        hints.push("kernel.unprivileged_userns_clone is 0".to_owned());
    }
    if read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns").as_deref() == Some("1") {
        hints.push(
            "AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns = 1)"
                .to_owned(),
        );
    }
    match hints.is_empty() {
        true => String::new(),
        false => format!(" [{}]", hints.join(", ")),
    }
}

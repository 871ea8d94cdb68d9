//! A network namespace per trial of a case with `"network": "isolated"`: where a client that
//! fails its destination checks can only reach the runner's canaries.
//!
//! How it is made: a short-lived thread of the runner calls `unshare(CLONE_NEWNET)` (so only
//! that thread moves), opens `/proc/thread-self/ns/net` (the descriptor keeps the namespace
//! alive and lets other threads and the client join it), and from inside runs one
//! `ip -batch` (iproute2, a child of that thread and so in the namespace) that brings `lo` up
//! and puts the aliases on it. `ip` rather than a netlink crate: one short process per trial,
//! against a dependency tree (rtnetlink pulls in its own async stack) for six `addr add`s.
//! The same thread binds every listener of the trial there (sockets stay in the namespace
//! they were made in, so the runner's other threads serve them): the canaries on each alias
//! (ports 80, 443 and the fake's 8443), the DNS fake on `127.0.0.1:53`, and the HTTPS fake's listeners on
//! `127.0.0.1:8443` and on the public-looking [`dns::PUBLIC`]. The namespace has no other
//! interface and no route: whatever the client dials that is not one of these fails there,
//! and nothing leaves the machine.
//!
//! The client joins it in `pre_exec` (between fork and exec: `setns` on the descriptor, then
//! a mount namespace of its own where the trial's `resolv.conf`, naming the DNS fake, is bind
//! mounted over `/etc/resolv.conf`; `/etc/hosts` stays, so `localhost` is the fake). When the
//! trial ends its processes are killed by the usual sweep and [`Isolation::finish`] closes
//! every socket and the descriptor, which ends the namespace.
//!
//! Where a namespace cannot be made (no `CAP_SYS_ADMIN`, or no `ip`), the trial is not run at
//! all: [`Unavailable`] says why, and the trial is graded `unimplemented` with that reason.

pub mod dns;
mod watch;

use std::ffi::{CStr, CString};
use std::fs::File;
use std::io::{self, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener, UdpSocket};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::thread;

use nix::mount::{MsFlags, mount};
use nix::sched::{CloneFlags, setns, unshare};
use serde_json::Value;

/// Where `ip` is looked for first (then `PATH`).
const IP: &str = "/usr/sbin/ip";
/// The canary addresses: private ranges, a loopback alias, link-local, cloud metadata, ULA.
pub const CANARY_ADDRESSES: [IpAddr; 7] = [
    IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
    IpAddr::V4(Ipv4Addr::new(172, 16, 0, 1)),
    IpAddr::V4(Ipv4Addr::new(192, 168, 0, 1)),
    IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2)),
    IpAddr::V4(Ipv4Addr::new(169, 254, 1, 1)),
    IpAddr::V4(dns::METADATA),
    IpAddr::V6(Ipv6Addr::new(0xfd00, 0, 0, 0, 0, 0, 0, 1)),
];
/// The ports every canary address listens on: HTTP, HTTPS, and the fake's.
pub const CANARY_PORTS: [u16; 3] = [80, 443, FAKE_PORT];
/// Listeners on `127.0.0.1:0` made for the fake's authorization origins (it has at most three).
const SPARE_PORTS: usize = 3;
/// The port the HTTPS fake listens on inside the namespace: fixed, so the canaries can listen
/// on it too, and not 443, so every origin of the trial names its port (as on the host).
pub const FAKE_PORT: u16 = 8443;

/// Why a trial's namespace could not be made: the trial is graded `unimplemented` with this.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unavailable(pub String);

/// One trial's namespace and the listeners in it.
pub struct Isolation {
    ns: OwnedFd,
    resolv_conf: CString,
    watch: Option<watch::Watch>,
    /// The HTTPS fake's listeners (`127.0.0.1:8443`, `203.0.113.10:8443`, then spare ones on
    /// `127.0.0.1:0` for its authorization origins), for the fake to take.
    pub fake_listeners: Vec<TcpListener>,
}

/// What the namespace's listeners saw during the trial.
#[derive(Debug, Clone, Default)]
pub struct IsolationRun {
    /// One item per connection a canary accepted:
    /// `{"connected": true, "address": "10.0.0.1:443", "request": "[TLS]"}`.
    pub connections: Vec<Value>,
    /// One line per DNS question, `A rebind.test -> 203.0.113.10`.
    pub dns: Vec<String>,
}

/// What the making thread hands back.
struct Made {
    ns: OwnedFd,
    canaries: Vec<TcpListener>,
    dns: UdpSocket,
    fake_listeners: Vec<TcpListener>,
}

impl Isolation {
    /// Makes the namespace, its aliases and listeners, and writes `dir/resolv.conf`.
    /// `Err(Ok(_))`: namespaces are unavailable here; `Err(Err(_))`: something else failed.
    pub fn make(dir: &Path) -> Result<Isolation, Result<Unavailable, String>> {
        let resolv = dir.join("resolv.conf");
        std::fs::write(
            &resolv,
            "# the trial's DNS fake (mcp-harness)\nnameserver 127.0.0.1\noptions timeout:1 attempts:1\n",
        )
        .map_err(|e| Err(format!("cannot write {}: {e}", resolv.display())))?;
        let resolv_conf = CString::new(resolv.as_os_str().as_bytes())
            .map_err(|_| Err(format!("{} holds a NUL byte", resolv.display())))?;
        let made = thread::Builder::new()
            .name("netns-make".into())
            .spawn(make_here)
            .map_err(|e| Err(format!("cannot start a thread: {e}")))?
            .join()
            .map_err(|_| Err("the thread making the network namespace panicked".to_owned()))??;
        let watch = watch::Watch::start(made.canaries, made.dns)
            .map_err(|e| Err(format!("cannot watch the canaries: {e}")))?;
        Ok(Isolation {
            ns: made.ns,
            resolv_conf,
            watch: Some(watch),
            fake_listeners: made.fake_listeners,
        })
    }

    /// Binds a TCP listener at `addr` inside the namespace (from a thread that joins it), for
    /// a fake that needs one more origin there.
    pub fn bind_tcp(&self, addr: SocketAddr) -> io::Result<TcpListener> {
        let ns = self.ns.try_clone()?;
        thread::scope(|s| {
            s.spawn(move || {
                setns(ns.as_fd(), CloneFlags::CLONE_NEWNET).map_err(io::Error::from)?;
                TcpListener::bind(addr)
            })
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("the binding thread panicked")))
        })
    }

    /// Makes `cmd` start inside the namespace, with the DNS fake as its resolver. The closure
    /// runs between fork and exec: only system calls on values prepared here.
    pub fn confine(&self, cmd: &mut Command) {
        let fd = self.ns.as_raw_fd();
        let resolv = self.resolv_conf.clone();
        let target = c"/etc/resolv.conf";
        let root = c"/";
        // SAFETY: the closure only makes system calls on a descriptor and C strings made
        // before the fork (nix passes a `CStr` through without allocating).
        unsafe {
            cmd.pre_exec(move || {
                let ns = BorrowedFd::borrow_raw(fd);
                setns(ns, CloneFlags::CLONE_NEWNET)?;
                unshare(CloneFlags::CLONE_NEWNS)?;
                mount::<CStr, CStr, CStr, CStr>(
                    None,
                    root,
                    None,
                    MsFlags::MS_REC | MsFlags::MS_PRIVATE,
                    None,
                )?;
                mount::<CStr, CStr, CStr, CStr>(
                    Some(resolv.as_c_str()),
                    target,
                    None,
                    MsFlags::MS_BIND,
                    None,
                )?;
                Ok(())
            });
        }
    }

    /// Stops the listeners and closes the namespace (its last processes are already gone);
    /// returns what the canaries and the DNS fake saw.
    pub fn finish(mut self) -> IsolationRun {
        let seen = self
            .watch
            .take()
            .map(watch::Watch::finish)
            .unwrap_or_default();
        IsolationRun {
            connections: seen.connections,
            dns: seen.dns,
        }
    }
}

/// On a thread of its own: moves it into a new network namespace and sets everything up.
fn make_here() -> Result<Made, Result<Unavailable, String>> {
    unshare(CloneFlags::CLONE_NEWNET).map_err(|e| {
        Ok(Unavailable(format!(
            "the runner cannot make a network namespace (unshare(CLONE_NEWNET): {e}); run it as \
             root or with CAP_SYS_ADMIN to run the isolated trials"
        )))
    })?;
    let ns: OwnedFd = File::open("/proc/thread-self/ns/net")
        .map_err(|e| Err(format!("cannot open the namespace: {e}")))?
        .into();
    let mut batch = String::from("link set lo up\n");
    for address in CANARY_ADDRESSES
        .iter()
        .chain(std::iter::once(&IpAddr::V4(dns::PUBLIC)))
    {
        // 127.0.0.2 is on `lo` already (127.0.0.0/8).
        match address {
            IpAddr::V4(v4) if v4.is_loopback() => {}
            IpAddr::V4(v4) => batch.push_str(&format!("addr add {v4}/32 dev lo\n")),
            // `nodad`: bound at once, not after duplicate address detection.
            IpAddr::V6(v6) => batch.push_str(&format!("addr add {v6}/128 dev lo nodad\n")),
        }
    }
    run_ip(&batch)?;
    let bind = |addr: SocketAddr| {
        TcpListener::bind(addr)
            .map_err(|e| Err(format!("cannot bind {addr} in the namespace: {e}")))
    };
    let mut canaries = Vec::new();
    for address in CANARY_ADDRESSES {
        for port in CANARY_PORTS {
            canaries.push(bind(SocketAddr::new(address, port))?);
        }
    }
    // The fake's two addresses, then spare loopback ports for its authorization origins.
    let mut fake_listeners = vec![
        bind(SocketAddr::new(Ipv4Addr::LOCALHOST.into(), FAKE_PORT))?,
        bind(SocketAddr::new(dns::PUBLIC.into(), FAKE_PORT))?,
    ];
    for _ in 0..SPARE_PORTS {
        fake_listeners.push(bind(SocketAddr::new(Ipv4Addr::LOCALHOST.into(), 0))?);
    }
    let dns = UdpSocket::bind((Ipv4Addr::LOCALHOST, 53))
        .map_err(|e| Err(format!("cannot bind the DNS fake in the namespace: {e}")))?;
    Ok(Made {
        ns,
        canaries,
        dns,
        fake_listeners,
    })
}

/// Runs `ip -batch -` with `batch` on its stdin (from the calling thread, so in its namespace).
fn run_ip(batch: &str) -> Result<(), Result<Unavailable, String>> {
    let program = match Path::new(IP).exists() {
        true => IP,
        false => "ip",
    };
    let mut child = Command::new(program)
        .args(["-batch", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| {
            Ok(Unavailable(format!(
                "cannot run `ip` (iproute2) to set up the network namespace: {e}; install iproute2"
            )))
        })?;
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(batch.as_bytes());
    }
    let out = child
        .wait_with_output()
        .map_err(|e| Err(format!("cannot wait for `ip`: {e}")))?;
    match out.status.success() {
        true => Ok(()),
        false => Err(Err(format!(
            "`ip -batch` failed setting up the network namespace ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::net::TcpStream;

    /// Needs CAP_SYS_ADMIN; without it the namespace is reported unavailable, which the
    /// test accepts (the skip path is proven by `xtask/tests/netns.rs`).
    #[test]
    fn a_namespace_has_canaries_on_every_alias_and_nothing_outside() {
        let dir = tempfile::tempdir().unwrap();
        let iso = match Isolation::make(dir.path()) {
            Ok(iso) => iso,
            Err(Ok(Unavailable(why))) => {
                eprintln!("skipped: {why}");
                return;
            }
            Err(Err(e)) => panic!("{e}"),
        };
        assert_eq!(iso.fake_listeners.len(), 2 + SPARE_PORTS);
        let ns = iso.ns.try_clone().unwrap();
        let inode = std::fs::read_link(format!("/proc/self/fd/{}", ns.as_raw_fd())).unwrap();
        thread::spawn(move || {
            setns(ns.as_fd(), CloneFlags::CLONE_NEWNET).unwrap();
            let mut c = TcpStream::connect("169.254.169.254:80").unwrap();
            c.write_all(b"GET /latest/meta-data/ HTTP/1.1\r\n\r\n")
                .unwrap();
            let _ = c.read(&mut [0; 8]);
            drop(TcpStream::connect("[fd00::1]:443").unwrap());
            // No route leaves the namespace.
            assert!(TcpStream::connect("192.0.2.1:443").is_err());
        })
        .join()
        .unwrap();
        let run = iso.finish();
        assert_eq!(run.connections.len(), 2, "{:?}", run.connections);
        assert_eq!(run.connections[0]["address"], "169.254.169.254:80");
        assert_eq!(
            run.connections[0]["request"],
            "GET /latest/meta-data/ HTTP/1.1"
        );
        assert_eq!(run.connections[1]["address"], "[fd00::1]:443");
        // Nothing of this process refers to the namespace any more (its sockets are closed
        // too), so the kernel has let it go.
        let held = std::fs::read_dir("/proc/self/fd")
            .unwrap()
            .flatten()
            .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|l| l == inode));
        assert!(!held, "{} still open", inode.display());
    }
}

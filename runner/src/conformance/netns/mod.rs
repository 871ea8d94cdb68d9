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
//! Without `CAP_SYS_ADMIN` the namespace is owned by a user namespace of the runner's user
//! (see [`userns`]; [`ways`] says which way is tried when). Where no way works (or there is
//! no `ip`), the trial is not run at all: [`Unavailable`] says why, and the trial is graded
//! `not-run` with that reason.

pub mod dns;
pub mod userns;
mod watch;
pub mod ways;

use std::ffi::{CStr, CString};
use std::fs::File;
use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener, UdpSocket};
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::thread;

use nix::mount::{MsFlags, mount};
use nix::sched::{CloneFlags, setns, unshare};
use serde_json::Value;

use ways::Way;

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
/// Listeners on `127.0.0.1:0` made for the fake's authorization origins (it has at most three)
/// and a traces trial's OTLP receiver (the last one, taken first).
const SPARE_PORTS: usize = 4;
/// The port the HTTPS fake listens on inside the namespace: fixed, so the canaries can listen
/// on it too, and not 443, so every origin of the trial names its port (as on the host).
pub const FAKE_PORT: u16 = 8443;

/// Why a trial's namespace could not be made: the trial is graded `not-run` with this.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unavailable(pub String);

/// One trial's namespace and the listeners in it.
pub struct Isolation {
    ns: OwnedFd,
    /// The user namespace that owns `ns`, when the runner is not root (see [`userns`]).
    user: Option<OwnedFd>,
    resolv_conf: CString,
    watch: Option<watch::Watch>,
    /// The HTTPS fake's listeners (`127.0.0.1:8443`, `203.0.113.10:8443`, then spare ones on
    /// `127.0.0.1:0` for its authorization origins and a traces trial's OTLP receiver), for
    /// the fakes to take.
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

/// What the making hands back.
struct Made {
    ns: OwnedFd,
    user: Option<OwnedFd>,
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
        // The first trial finds the way (and keeps what it made meanwhile); the others use it.
        let mut made = None;
        let found = ways::find(|way| {
            made = Some(make_with(way)?);
            Ok(())
        })
        .map_err(Err)?;
        let made = match (made, found) {
            (Some(made), _) => made,
            (None, Ok(way)) => make_with(way).map_err(Err)?,
            (None, Err(why)) => return Err(Ok(Unavailable(why))),
        };
        let watch = watch::Watch::start(made.canaries, made.dns)
            .map_err(|e| Err(format!("cannot watch the canaries: {e}")))?;
        Ok(Isolation {
            ns: made.ns,
            user: made.user,
            resolv_conf,
            watch: Some(watch),
            fake_listeners: made.fake_listeners,
        })
    }

    /// Makes `cmd` start inside the namespace, with the DNS fake as its resolver. The closure
    /// runs between fork and exec: only system calls on values prepared here.
    pub fn confine(&self, cmd: &mut Command) {
        let fd = self.ns.as_raw_fd();
        let user = self.user.as_ref().map(AsRawFd::as_raw_fd);
        let resolv = self.resolv_conf.clone();
        let target = c"/etc/resolv.conf";
        let root = c"/";
        // SAFETY: the closure only makes system calls on descriptors and C strings made
        // before the fork (nix passes a `CStr` through without allocating).
        unsafe {
            cmd.pre_exec(move || {
                match user {
                    Some(user) => userns::join(user, fd)?,
                    None => setns(BorrowedFd::borrow_raw(fd), CloneFlags::CLONE_NEWNET)?,
                }
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

/// Makes one trial's namespace and listeners the way `way`.
fn make_with(way: Way) -> Result<Made, String> {
    let owned = match way {
        Way::Root => {
            return thread::Builder::new()
                .name("netns-make".into())
                .spawn(make_here)
                .map_err(|e| format!("cannot start a thread: {e}"))?
                .join()
                .map_err(|_| "the thread making the network namespace panicked".to_owned())?;
        }
        Way::Sudo => userns::through_sudo()?,
        Way::UserNs => userns::unprivileged()?,
    };
    let mut ip = ip_command();
    userns::enter(&mut ip, &owned);
    run_ip(ip)?;
    let streams = stream_addresses();
    let mut fds = userns::bind_inside(&owned, &streams, dns_address())?.into_iter();
    let canaries: Vec<TcpListener> = fds
        .by_ref()
        .take(CANARY_ADDRESSES.len() * CANARY_PORTS.len())
        .map(TcpListener::from)
        .collect();
    let fake_listeners: Vec<TcpListener> = fds
        .by_ref()
        .take(2 + SPARE_PORTS)
        .map(TcpListener::from)
        .collect();
    let dns = fds
        .next()
        .map(UdpSocket::from)
        .ok_or("the DNS fake's socket did not come")?;
    Ok(Made {
        ns: owned.net,
        user: Some(owned.user),
        canaries,
        dns,
        fake_listeners,
    })
}

/// Every TCP listener of a trial's namespace, in order: the canaries (address by address,
/// each on every port), the fake's two addresses, then spare loopback ports for its
/// authorization origins.
fn stream_addresses() -> Vec<SocketAddr> {
    let mut out: Vec<SocketAddr> = CANARY_ADDRESSES
        .iter()
        .flat_map(|a| CANARY_PORTS.map(|p| SocketAddr::new(*a, p)))
        .collect();
    out.push(SocketAddr::new(Ipv4Addr::LOCALHOST.into(), FAKE_PORT));
    out.push(SocketAddr::new(dns::PUBLIC.into(), FAKE_PORT));
    out.extend((0..SPARE_PORTS).map(|_| SocketAddr::new(Ipv4Addr::LOCALHOST.into(), 0)));
    out
}

/// The DNS fake's address inside the namespace.
fn dns_address() -> SocketAddr {
    SocketAddr::new(Ipv4Addr::LOCALHOST.into(), 53)
}

/// The `ip -batch` that brings `lo` up with every alias.
fn ip_batch() -> String {
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
    batch
}

/// On a thread of its own, with `CAP_SYS_ADMIN`: moves it into a new network namespace and
/// sets everything up.
fn make_here() -> Result<Made, String> {
    unshare(CloneFlags::CLONE_NEWNET).map_err(|e| {
        format!("unshare(CLONE_NEWNET): {e} (the runner is neither root nor has CAP_SYS_ADMIN)")
    })?;
    let ns: OwnedFd = File::open("/proc/thread-self/ns/net")
        .map_err(|e| format!("cannot open the namespace: {e}"))?
        .into();
    run_ip(ip_command())?;
    let bind = |addr: SocketAddr| {
        TcpListener::bind(addr).map_err(|e| format!("cannot bind {addr} in the namespace: {e}"))
    };
    let mut listeners = Vec::new();
    for addr in stream_addresses() {
        let listener = bind(addr)?;
        if addr.is_ipv6() && addr.port() == CANARY_PORTS[0] {
            wait_routable(&listener)?;
        }
        listeners.push(listener);
    }
    let fake_listeners = listeners.split_off(CANARY_ADDRESSES.len() * CANARY_PORTS.len());
    let dns = UdpSocket::bind(dns_address())
        .map_err(|e| format!("cannot bind the DNS fake in the namespace: {e}"))?;
    Ok(Made {
        ns,
        user: None,
        canaries: listeners,
        dns,
        fake_listeners,
    })
}

/// Waits until `listener`'s address is reachable from inside the namespace: an IPv6 alias
/// can be bound before its local route exists (`Network is unreachable` for a moment). The
/// probe's connection is taken off the listener at once, so the canary never records it.
fn wait_routable(listener: &TcpListener) -> Result<(), String> {
    let addr = listener
        .local_addr()
        .map_err(|e| format!("cannot read a canary's address: {e}"))?;
    let until = std::time::Instant::now() + std::time::Duration::from_secs(2);
    loop {
        match std::net::TcpStream::connect(addr) {
            Ok(probe) => {
                drop(probe);
                let _ = listener.accept();
                return Ok(());
            }
            Err(e) if std::time::Instant::now() > until => {
                return Err(format!(
                    "the alias {addr} did not become reachable in the namespace: {e}"
                ));
            }
            Err(_) => thread::sleep(std::time::Duration::from_millis(5)),
        }
    }
}

/// `ip -batch -` (iproute2).
fn ip_command() -> Command {
    let program = match Path::new(IP).exists() {
        true => IP,
        false => "ip",
    };
    let mut cmd = Command::new(program);
    cmd.args(["-batch", "-"]);
    cmd
}

/// Runs `ip` with [`ip_batch`] on its stdin (from the calling thread, so in its namespace,
/// unless `ip` joins one itself).
fn run_ip(mut ip: Command) -> Result<(), String> {
    ip.stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = userns::spawn(&mut ip).map_err(|e| {
        format!("cannot run `ip` (iproute2) to set up the network namespace: {e}; install iproute2")
    })?;
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(ip_batch().as_bytes());
    }
    let out = child
        .wait_with_output()
        .map_err(|e| format!("cannot wait for `ip`: {e}"))?;
    match out.status.success() {
        true => Ok(()),
        false => Err(format!(
            "`ip -batch` failed setting up the network namespace ({}): {}{}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim(),
            ways::userns_hints()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::net::TcpStream;
    use std::os::fd::AsFd;

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

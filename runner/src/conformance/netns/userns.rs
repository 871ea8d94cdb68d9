//! A network namespace owned by a user namespace of the runner's own user: what an ordinary
//! user (a CI runner) can make where the kernel allows it, or get from a root helper through
//! `sudo -n`.
//!
//! The runner has many threads, and a thread may neither enter a user namespace nor (without
//! `CAP_SYS_ADMIN` in the first one) a network namespace. So single-threaded children do
//! what needs to be inside, between fork and exec:
//! 1. a holder (`cat`) unshares the user and network namespaces; the runner writes its
//!    `uid_map`/`gid_map` (the runner's user is root inside) and opens both namespaces, which
//!    outlive the holder;
//! 2. `ip -batch` joins both and brings `lo` and the aliases up (root inside keeps its
//!    capabilities across exec);
//! 3. a binder joins both, binds every listener of the trial and sends them to the runner
//!    over a socket pair (`SCM_RIGHTS`), then execs `true`;
//! 4. the client joins both in its own `pre_exec` ([`super::Isolation::confine`]).

use std::fs::File;
use std::io::{BufRead, BufReader, IoSliceMut};
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};

use nix::libc;
use nix::sched::{CloneFlags, setns, unshare};
use nix::sys::socket::{ControlMessageOwned, MsgFlags, SockaddrLike, SockaddrStorage, recvmsg};

/// A user namespace and the network namespace it owns, held open by the runner.
pub struct Owned {
    /// The user namespace.
    pub user: OwnedFd,
    /// Its network namespace.
    pub net: OwnedFd,
}

/// Makes both namespaces as the runner's own user.
pub fn unprivileged() -> Result<Owned, String> {
    let mut holder = Command::new("cat");
    holder
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: one system call between fork and exec.
    unsafe {
        holder.pre_exec(|| {
            unshare(CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_NEWNET)?;
            Ok(())
        });
    }
    let child = spawn(&mut holder).map_err(|e| {
        format!(
            "unshare(CLONE_NEWUSER | CLONE_NEWNET): {e}{}",
            super::ways::userns_hints()
        )
    })?;
    let pid = child.id();
    let owned = (|| {
        let (uid, gid) = ids();
        let write = |file: &str, text: String| {
            std::fs::write(format!("/proc/{pid}/{file}"), text)
                .map_err(|e| format!("cannot write the user namespace's {file}: {e}"))
        };
        write("setgroups", "deny".to_owned())?;
        write("uid_map", format!("0 {uid} 1"))?;
        write("gid_map", format!("0 {gid} 1"))?;
        open_namespaces(pid)
    })();
    end(child);
    owned
}

/// Makes both namespaces through a root helper (`sudo -n`) that drops to the runner's user
/// with `CAP_SYS_ADMIN` kept, so that the user namespace is the runner's user's, as if made
/// without privileges where the kernel refuses that (AppArmor, sysctls).
pub fn through_sudo() -> Result<Owned, String> {
    let mut probe = Command::new("sudo");
    probe
        .args(["-n", "true"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let works = spawn(&mut probe)
        .and_then(Child::wait_with_output)
        .map_err(|e| format!("no usable `sudo` on PATH ({e})"))?;
    if !works.status.success() {
        return Err(format!(
            "`sudo -n true` failed (a password is needed, or sudo is not allowed): {}",
            String::from_utf8_lossy(&works.stderr).trim()
        ));
    }
    let (uid, gid) = ids();
    let mut helper = Command::new("sudo");
    helper
        .args(["-n", "setpriv"])
        .arg(format!("--reuid={uid}"))
        .arg(format!("--regid={gid}"))
        .args([
            "--clear-groups",
            "--inh-caps=+sys_admin",
            "--ambient-caps=+sys_admin",
            "--",
            "unshare",
            "--user",
            "--net",
            "--map-root-user",
            "--",
            "sh",
            "-c",
            "echo $$; exec cat",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child =
        spawn(&mut helper).map_err(|e| format!("cannot start `sudo -n setpriv … unshare`: {e}"))?;
    let mut line = String::new();
    let read = child
        .stdout
        .take()
        .map(|out| BufReader::new(out).read_line(&mut line));
    let owned = match (read, line.trim().parse::<u32>()) {
        (Some(Ok(_)), Ok(pid)) => open_namespaces(pid),
        _ => {
            drop(child.stdin.take());
            let out = child.wait_with_output();
            let why = out
                .map(|o| String::from_utf8_lossy(&o.stderr).trim().to_owned())
                .unwrap_or_default();
            return Err(format!(
                "the root helper (`sudo -n setpriv … unshare --user --net`) made no namespace: {why}"
            ));
        }
    };
    end(child);
    owned
}

/// Runs `ip` (or any command) inside both namespaces.
pub fn enter(cmd: &mut Command, owned: &Owned) {
    let (user, net) = (owned.user.as_raw_fd(), owned.net.as_raw_fd());
    // SAFETY: two system calls on descriptors opened before the fork.
    unsafe {
        cmd.pre_exec(move || join(user, net));
    }
}

/// Joins the user namespace, then its network namespace (between fork and exec).
pub fn join(user: RawFd, net: RawFd) -> std::io::Result<()> {
    // SAFETY: the descriptors stay open in the runner until the trial ends.
    let (user, net) = unsafe {
        (
            std::os::fd::BorrowedFd::borrow_raw(user),
            std::os::fd::BorrowedFd::borrow_raw(net),
        )
    };
    setns(user, CloneFlags::CLONE_NEWUSER)?;
    setns(net, CloneFlags::CLONE_NEWNET)?;
    Ok(())
}

/// What the binder binds: TCP listeners on `streams` (an IPv6 one waits until routable),
/// then one UDP socket on `datagram`.
pub fn bind_inside(
    owned: &Owned,
    streams: &[SocketAddr],
    datagram: SocketAddr,
) -> Result<Vec<OwnedFd>, String> {
    let addrs: Vec<SockaddrStorage> = streams
        .iter()
        .chain(std::iter::once(&datagram))
        .map(|a| SockaddrStorage::from(*a))
        .collect();
    let count = addrs.len();
    let (ours, theirs) =
        UnixStream::pair().map_err(|e| format!("cannot make a socket pair: {e}"))?;
    // Everything the child uses is made here, before the fork.
    let space = unsafe { libc::CMSG_SPACE((count * size_of::<RawFd>()) as u32) } as usize;
    let mut control = vec![0u8; space];
    let mut fds = vec![-1 as RawFd; count];
    let (user, net) = (owned.user.as_raw_fd(), owned.net.as_raw_fd());
    let to = theirs.as_raw_fd();
    let mut binder = Command::new("true");
    binder
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: between fork and exec the closure makes only system calls, on memory allocated
    // before the fork.
    unsafe {
        binder.pre_exec(move || {
            join(user, net)?;
            for (i, addr) in addrs.iter().enumerate() {
                let udp = i + 1 == count;
                fds[i] = bind_one(addr, udp)?;
            }
            send_fds(to, &fds, &mut control)
        });
    }
    let status = spawn(&mut binder)
        .and_then(|mut child| child.wait())
        .map_err(|e| format!("cannot bind the trial's listeners in the namespace: {e}"))?;
    drop(theirs);
    if !status.success() {
        return Err(format!("the binder ended {status}"));
    }
    receive_fds(&ours, count)
}

/// Binds one socket (between fork and exec: raw system calls only).
fn bind_one(addr: &SockaddrStorage, udp: bool) -> std::io::Result<RawFd> {
    let family = addr.family().map_or(libc::AF_INET, |f| f as i32);
    let kind = match udp {
        true => libc::SOCK_DGRAM,
        false => libc::SOCK_STREAM,
    };
    let check = |r: libc::c_int| match r < 0 {
        true => Err(std::io::Error::last_os_error()),
        false => Ok(r),
    };
    // SAFETY: plain system calls on a socket made here and an address made before the fork.
    unsafe {
        let fd = check(libc::socket(family, kind | libc::SOCK_CLOEXEC, 0))?;
        check(libc::bind(fd, addr.as_ptr(), addr.len()))?;
        if !udp {
            check(libc::listen(fd, 128))?;
            if family == libc::AF_INET6 {
                wait_routable(fd, addr)?;
            }
        }
        Ok(fd)
    }
}

/// An IPv6 alias can be bound before its local route exists: probe until a connection
/// comes through, and take it off the listener so no canary records it.
unsafe fn wait_routable(listener: RawFd, addr: &SockaddrStorage) -> std::io::Result<()> {
    let pause = libc::timespec {
        tv_sec: 0,
        tv_nsec: 5_000_000,
    };
    for _ in 0..400 {
        // SAFETY: system calls on sockets made here.
        unsafe {
            let probe = libc::socket(libc::AF_INET6, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
            if probe < 0 {
                return Err(std::io::Error::last_os_error());
            }
            let connected = libc::connect(probe, addr.as_ptr(), addr.len()) == 0;
            libc::close(probe);
            if connected {
                let taken = libc::accept(listener, std::ptr::null_mut(), std::ptr::null_mut());
                if taken >= 0 {
                    libc::close(taken);
                }
                return Ok(());
            }
            libc::nanosleep(&pause, std::ptr::null_mut());
        }
    }
    Err(std::io::Error::from_raw_os_error(libc::ENETUNREACH))
}

/// Sends `fds` over the socket `to` (between fork and exec: no allocation).
fn send_fds(to: RawFd, fds: &[RawFd], control: &mut [u8]) -> std::io::Result<()> {
    let mut byte = [0u8; 1];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    // SAFETY: the header points at `iov` and `control`, both alive for the call; the
    // control buffer was sized with CMSG_SPACE for `fds`.
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = control.len() as _;
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(std::mem::size_of_val(fds) as u32) as _;
        std::ptr::copy_nonoverlapping(fds.as_ptr(), libc::CMSG_DATA(cmsg).cast(), fds.len());
        match libc::sendmsg(to, &msg, 0) < 0 {
            true => Err(std::io::Error::last_os_error()),
            false => Ok(()),
        }
    }
}

/// Receives the binder's `count` descriptors.
fn receive_fds(from: &UnixStream, count: usize) -> Result<Vec<OwnedFd>, String> {
    let mut byte = [0u8; 1];
    let mut iov = [IoSliceMut::new(&mut byte)];
    let mut space = nix::cmsg_space!([RawFd; 64]);
    let msg = recvmsg::<()>(
        from.as_raw_fd(),
        &mut iov,
        Some(&mut space),
        MsgFlags::MSG_CMSG_CLOEXEC,
    )
    .map_err(|e| format!("cannot receive the namespace's listeners: {e}"))?;
    let mut fds = Vec::new();
    for cmsg in msg
        .cmsgs()
        .map_err(|e| format!("bad control message: {e}"))?
    {
        if let ControlMessageOwned::ScmRights(got) = cmsg {
            // SAFETY: the kernel made these descriptors for this process just now.
            fds.extend(
                got.into_iter()
                    .map(|fd| unsafe { OwnedFd::from_raw_fd(fd) }),
            );
        }
    }
    match fds.len() == count {
        true => Ok(fds),
        false => Err(format!(
            "received {} of the namespace's {count} listeners",
            fds.len()
        )),
    }
}

/// Starts `cmd` as every start of the runner is made, so that a trial's search for its
/// processes by their pipes waits for this child's fork-to-exec window (long here: it joins
/// namespaces and binds sockets) instead of mistaking it for one of its own.
pub fn spawn(cmd: &mut Command) -> std::io::Result<Child> {
    crate::conformance::procs::spawn(cmd).map(|(child, _)| child)
}

/// The runner's user and group.
fn ids() -> (u32, u32) {
    (
        nix::unistd::geteuid().as_raw(),
        nix::unistd::getegid().as_raw(),
    )
}

/// Opens the user and network namespaces of process `pid`.
fn open_namespaces(pid: u32) -> Result<Owned, String> {
    let open = |ns: &str| {
        File::open(format!("/proc/{pid}/ns/{ns}"))
            .map(OwnedFd::from)
            .map_err(|e| format!("cannot open the new {ns} namespace: {e}"))
    };
    Ok(Owned {
        user: open("user")?,
        net: open("net")?,
    })
}

/// Ends a holder once its namespaces are open (they live on in the descriptors).
fn end(mut child: Child) {
    drop(child.stdin.take());
    let _ = child.kill();
    let _ = child.wait();
}

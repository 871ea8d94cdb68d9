//! The namespace's listeners while the client runs: one thread per trial polls every canary
//! listener and the DNS fake's socket (sockets bound inside the namespace stay there, so a
//! thread of the runner's own namespace can serve them), records each connection a canary
//! accepts with the address it was made to, and answers DNS questions.
//!
//! Stopping wakes the thread through a socket pair; it then takes every connection still
//! waiting in a backlog (the client is gone by then, so that is every connection it made)
//! and exits.

use std::io::{self, Write};
use std::net::{SocketAddr, TcpListener, UdpSocket};
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use serde_json::{Value, json};

use super::dns::Dns;
use crate::conformance::canary::first_line;

/// What the namespace's listeners saw.
#[derive(Debug, Default)]
pub struct Seen {
    /// One item per canary connection, in order.
    pub connections: Vec<Value>,
    /// One line per DNS question.
    pub dns: Vec<String>,
}

/// The running watch.
pub struct Watch {
    wake: UnixStream,
    seen: Arc<Mutex<Seen>>,
    thread: Option<JoinHandle<()>>,
}

impl Watch {
    /// Starts serving `canaries` (non-blocking listeners) and `dns`.
    pub fn start(canaries: Vec<TcpListener>, dns: UdpSocket) -> io::Result<Watch> {
        let (wake, woken) = UnixStream::pair()?;
        for listener in &canaries {
            listener.set_nonblocking(true)?;
        }
        dns.set_nonblocking(true)?;
        let seen = Arc::new(Mutex::new(Seen::default()));
        let thread = {
            let seen = Arc::clone(&seen);
            thread::Builder::new()
                .name("netns-watch".into())
                .spawn(move || serve(&canaries, &dns, &woken, &seen))?
        };
        Ok(Watch {
            wake,
            seen,
            thread: Some(thread),
        })
    }

    /// Stops the thread (every connection made before this call is recorded) and returns
    /// what it saw.
    pub fn finish(mut self) -> Seen {
        self.stop();
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        std::mem::take(&mut *seen)
    }

    fn stop(&mut self) {
        if let Some(thread) = self.thread.take() {
            let _ = self.wake.write_all(b"x");
            let _ = thread.join();
        }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.stop();
    }
}

fn serve(canaries: &[TcpListener], dns: &UdpSocket, woken: &UnixStream, seen: &Mutex<Seen>) {
    let mut resolver = Dns::default();
    loop {
        let mut fds: Vec<PollFd<'_>> = canaries
            .iter()
            .map(|l| PollFd::new(l.as_fd(), PollFlags::POLLIN))
            .collect();
        fds.push(PollFd::new(dns.as_fd(), PollFlags::POLLIN));
        fds.push(PollFd::new(woken.as_fd(), PollFlags::POLLIN));
        match poll(&mut fds, PollTimeout::NONE) {
            Ok(_) => {}
            Err(nix::errno::Errno::EINTR) => continue,
            Err(_) => break,
        }
        let ready = |i: usize| {
            fds[i]
                .revents()
                .is_some_and(|r| !(r & (PollFlags::POLLIN | PollFlags::POLLERR)).is_empty())
        };
        let stopping = ready(fds.len() - 1);
        let dns_ready = ready(fds.len() - 2);
        let canaries_ready: Vec<usize> = (0..canaries.len()).filter(|&i| ready(i)).collect();
        drop(fds);
        for i in canaries_ready {
            drain(&canaries[i], seen);
        }
        if dns_ready {
            answer_dns(dns, &mut resolver, seen);
        }
        if stopping {
            for listener in canaries {
                drain(listener, seen);
            }
            answer_dns(dns, &mut resolver, seen);
            break;
        }
    }
}

/// Takes every connection waiting on `listener`.
fn drain(listener: &TcpListener, seen: &Mutex<Seen>) {
    while let Ok((stream, _)) = listener.accept() {
        let address = stream.local_addr().map(|a| shown(&a)).unwrap_or_default();
        let request = first_line(stream);
        if let Ok(mut seen) = seen.lock() {
            seen.connections
                .push(json!({"connected": true, "address": address, "request": request}));
        }
    }
}

fn answer_dns(socket: &UdpSocket, resolver: &mut Dns, seen: &Mutex<Seen>) {
    let mut buf = [0u8; 1500];
    while let Ok((n, peer)) = socket.recv_from(&mut buf) {
        if let Some(reply) = resolver.answer(&buf[..n]) {
            let _ = socket.send_to(&reply, peer);
        }
    }
    if let Ok(mut seen) = seen.lock() {
        seen.dns.append(&mut resolver.log);
    }
}

/// `10.0.0.1:443`, `[fd00::1]:443`.
fn shown(addr: &SocketAddr) -> String {
    addr.to_string()
}

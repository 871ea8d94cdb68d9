//! Seam: shutdown escalation. How a server is stopped and cleaned up after.
//!
//! Defects here: `no-sigterm`, `no-sigkill`, `kill-first`, `kill-direct-child-only`,
//! `leak-on-handshake-failure`, `no-delete`.

use nix::sys::signal::Signal::{SIGKILL, SIGTERM};

use super::Defects;
use crate::seams::wire::Stop;
use crate::session::Session;

impl Defects {
    /// Whether dropping the child process kills it; correct: yes, as a last resort.
    pub(crate) fn kill_on_drop(&self) -> bool {
        !(self.no_sigterm || self.no_sigkill || self.leak_on_handshake_failure)
    }

    /// Whether the stdio server gets a process group of its own, which shutdown signals as
    /// a whole; correct: yes (a wrapper's grandchild is the server too).
    pub(crate) fn server_group(&self) -> bool {
        !self.kill_direct_child_only
    }

    /// The steps that stop a stdio server; correct: `escalation`.
    pub(crate) fn escalation(&self, escalation: &'static [Stop]) -> &'static [Stop] {
        use Stop::{CloseStdin, LeaveRunning, Signal};
        match () {
            _ if self.kill_first => &[Signal(SIGKILL)],
            _ if self.no_sigterm => &[CloseStdin, LeaveRunning],
            _ if self.no_sigkill => &[CloseStdin, Signal(SIGTERM), LeaveRunning],
            _ => escalation,
        }
    }

    /// Whether closing an HTTP connection sends `DELETE`; correct: `has_session`.
    pub(crate) fn delete_on_close(&self, has_session: bool) -> bool {
        has_session && !self.no_delete
    }

    /// Cleans up after a failed connect; correct: the session is shut down.
    pub(crate) async fn clean_up_failed_connect(&self, session: &Session) {
        match self.leak_on_handshake_failure {
            true => session.abandon().await,
            false => session.shutdown().await,
        }
    }
}

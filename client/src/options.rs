//! What the caller chooses: which server to start, which version to offer, how long to wait.
//!
//! Kept apart from the client so the driver can build options from its environment without
//! touching any connection logic.

use std::time::Duration;

use crate::defects::Defects;
use crate::handshake::LATEST_PROTOCOL_VERSION;

/// The command line of a stdio server: the program and its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StdioCommand {
    /// The program to run (looked up on `PATH` when it has no slash).
    pub program: String,
    /// Its arguments, passed as they are (no shell).
    pub args: Vec<String>,
}

impl StdioCommand {
    /// Splits an argv (program first); `None` when it is empty.
    pub fn from_argv(argv: Vec<String>) -> Option<Self> {
        let mut parts = argv.into_iter();
        let program = parts.next()?;
        Some(StdioCommand {
            program,
            args: parts.collect(),
        })
    }
}

/// Settings of one client connection.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// The protocol version offered in `initialize`.
    pub protocol_version: String,
    /// The bound on every single request (`initialize`, each `tools/list` page, `tools/call`).
    pub request_timeout: Duration,
    /// How long shutdown waits before each escalation step (stdin closed → SIGTERM → SIGKILL).
    pub shutdown_grace: Duration,
    /// Deliberate misbehaviour for the harness's self-tests; all off by default.
    #[doc(hidden)]
    pub defects: Defects,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            protocol_version: LATEST_PROTOCOL_VERSION.to_owned(),
            request_timeout: Duration::from_secs(30),
            shutdown_grace: Duration::from_secs(2),
            defects: Defects::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argv_splits_into_program_and_args() {
        let c = StdioCommand::from_argv(vec!["python3".into(), "-c".into(), "x".into()]).unwrap();
        assert_eq!(c.program, "python3");
        assert_eq!(c.args, ["-c", "x"]);
        assert_eq!(StdioCommand::from_argv(vec![]), None);
    }
}

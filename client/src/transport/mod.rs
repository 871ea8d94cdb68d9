//! The seam between the JSON-RPC session and the wire: send a message, deliver what arrives to
//! the [`Router`](crate::router::Router), shut down.
//!
//! A transport owns no protocol logic. It writes the messages it is given, hands every message
//! it receives to the router (sending back whatever reply the router returns), and closes the
//! router when the peer goes away. Streamable HTTP will be a second variant beside `Stdio`: its
//! `send` will POST and feed the JSON or SSE answer to the same router.

pub(crate) mod stdio;

use std::time::Duration;

use serde_json::Value;

use crate::defects::Defects;
use crate::error::Error;

pub(crate) use stdio::StdioTransport;

/// One live connection to a server, whatever carries it.
pub(crate) enum Transport {
    /// A child process speaking newline-delimited JSON-RPC on its stdin and stdout.
    Stdio(StdioTransport),
}

impl Transport {
    /// Queues one message for the server; fails with `transport_closed` once shut down.
    pub(crate) fn send(&self, message: &Value) -> Result<(), Error> {
        match self {
            Transport::Stdio(t) => t.send(message),
        }
    }

    /// Ends the connection, giving the server `grace` before each escalation step. Idempotent.
    pub(crate) async fn shutdown(&self, grace: Duration, defects: &Defects) {
        match self {
            Transport::Stdio(t) => t.shutdown(grace, defects).await,
        }
    }

    /// Walks away without cleaning up (only for the `leak-on-handshake-failure` defect).
    pub(crate) async fn abandon(&self) {
        match self {
            Transport::Stdio(t) => t.abandon().await,
        }
    }
}

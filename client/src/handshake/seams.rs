//! The seam of the `initialize` handshake (see `seams/`). Each default is the correct decision.

use serde_json::Value;

use super::Handshake;
use crate::error::Error;
use crate::session::{InFlight, Session};

/// The decisions of the handshake.
pub(crate) trait HandshakeSeams {
    /// Judges the answer to `initialize`; correct: `judge`'s verdict.
    fn accept_initialize(
        &self,
        outcome: Result<Value, Error>,
        judge: impl FnOnce(Result<Value, Error>) -> Result<Handshake, Error>,
    ) -> Result<Handshake, Error> {
        judge(outcome)
    }

    /// The version sent in `MCP-Protocol-Version` after the handshake; correct: the negotiated.
    fn version_header<'a>(
        &self,
        _offered: &'a str,
        negotiated: Option<&'a str>,
    ) -> Option<&'a str> {
        negotiated
    }

    /// A request sent while `initialize` waits for its result; correct: none.
    fn while_initializing<'s>(&self, _session: &'s Session) -> Option<InFlight<'s>> {
        None
    }

    /// Runs once the handshake is done; correct: nothing.
    async fn after_handshake(&self, _session: &Session) {}
}

#[cfg(not(feature = "defects"))]
impl HandshakeSeams for crate::seams::Seams {}

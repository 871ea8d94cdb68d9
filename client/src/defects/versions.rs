//! Seam: version acceptance and the handshake. Which `initialize` answers are taken, which
//! version the HTTP header carries, whether a session the server ended is renewed, and which
//! version a request is retried with after -32022.
//!
//! Defects here: `accept-any-version`, `ignore-initialize-error`, `offered-version-header`,
//! `no-reinitialize`, `no-version-retry`, `retry-any-version`,
//! `request-before-initialize-result`, `use-undeclared-capability`.

use serde_json::{Value, json};

use super::Defects;
use crate::error::{Error, ErrorKind};
use crate::handshake::Handshake;
use crate::session::{InFlight, Session};

impl Defects {
    /// Judges the answer to `initialize`; the correct client takes `judge`'s verdict.
    pub(crate) fn accept_initialize(
        &self,
        outcome: Result<Value, Error>,
        judge: impl FnOnce(Result<Value, Error>) -> Result<Handshake, Error>,
    ) -> Result<Handshake, Error> {
        match outcome {
            Err(e) if e.kind == ErrorKind::ProtocolError && self.ignore_initialize_error => {
                Ok(Handshake::received(Value::Null))
            }
            Ok(result) if result.is_object() && self.accept_any_version => {
                Ok(Handshake::received(result))
            }
            outcome => judge(outcome),
        }
    }

    /// The version sent in `MCP-Protocol-Version` after the handshake; correct: the negotiated.
    pub(crate) fn version_header<'a>(
        &self,
        offered: &'a str,
        negotiated: Option<&'a str>,
    ) -> Option<&'a str> {
        match self.offered_version_header {
            true => Some(offered),
            false => negotiated,
        }
    }

    /// Runs while `initialize` waits for its result; the correct client sends nothing (no
    /// request but ping before the result). The request it returns is dropped once the
    /// result is in.
    pub(crate) fn while_initializing<'s>(&self, session: &'s Session) -> Option<InFlight<'s>> {
        match self.request_before_initialize_result {
            true => session.start("tools/list", json!({})).ok(),
            false => None,
        }
    }

    /// Runs once the handshake is done; the correct client uses no capability the server did
    /// not declare, so it sends nothing here.
    pub(crate) async fn after_handshake(&self, session: &Session) {
        if !self.use_undeclared_capability {
            return;
        }
        let level = json!({"level": "info"});
        if let Ok(in_flight) = session.start("logging/setLevel", level) {
            let _ = in_flight.wait(std::future::pending()).await;
        }
    }

    /// Whether a new handshake starts a new HTTP session; correct: whenever the last was `lost`.
    pub(crate) fn renew_lost_session(&self, lost: bool) -> bool {
        lost && !self.no_reinitialize
    }

    /// The version to retry with after -32022 (`tried`: every version sent so far, in order);
    /// the correct client takes `choose`'s.
    pub(crate) fn retry_version(
        &self,
        error: &Error,
        tried: &[String],
        choose: impl FnOnce(&Error, &[String]) -> Option<String>,
    ) -> Option<String> {
        if self.no_version_retry {
            return None;
        }
        if self.retry_any_version {
            let listed = error.data.as_ref()?.get("supported")?.as_array()?;
            return listed
                .iter()
                .filter_map(Value::as_str)
                .find(|v| !tried.iter().any(|t| t == v))
                .map(str::to_owned);
        }
        choose(error, tried)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handshake::accept;
    use serde_json::json;

    fn with(name: &str) -> Defects {
        Defects::only(name)
    }

    #[test]
    fn lax_handshakes_take_what_the_correct_client_refuses() {
        let bad = json!({"protocolVersion": "1999-01-01"});
        assert!(
            Defects::default()
                .accept_initialize(Ok(bad.clone()), accept)
                .is_err()
        );
        assert!(
            with("accept-any-version")
                .accept_initialize(Ok(bad), accept)
                .is_ok()
        );
        let refused = Error {
            code: Some(-32602),
            ..Error::new(ErrorKind::ProtocolError, "nope")
        };
        let lax = with("ignore-initialize-error");
        let h = lax.accept_initialize(Err(refused), accept).unwrap();
        assert_eq!(h.protocol_version(), None);
        let slow = Error::new(ErrorKind::Timeout, "slow");
        let e = lax.accept_initialize(Err(slow), accept).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Timeout);
    }

    #[test]
    fn version_retry_defects() {
        let e = Error {
            code: Some(-32022),
            data: Some(json!({"supported": ["2025-11-25", "2026-07-28"]})),
            ..Error::new(ErrorKind::ProtocolError, "x")
        };
        let choose = |_: &Error, _: &[String]| Some("2026-07-28".to_owned());
        let ok = Defects::default().retry_version(&e, &[], choose);
        assert_eq!(ok.as_deref(), Some("2026-07-28"));
        assert_eq!(
            with("no-version-retry").retry_version(&e, &[], choose),
            None
        );
        let any = with("retry-any-version").retry_version(&e, &[], choose);
        assert_eq!(any.as_deref(), Some("2025-11-25"));
    }
}

//! Seam: era fallback. Whether the era is probed, what an error answer to the probe means,
//! whether the era found is cached, and what follows a modern connect.
//!
//! Defects here: `no-discover-probe`, `no-fallback`, `fallback-on-any-error`,
//! `fallback-on-one-code`, `no-era-cache`, `initialize-after-discover`, `get-stream-in-modern`,
//! `claim-server-extensions`, `no-stream-reconnect`, `reinitialize-on-reconnect`,
//! `no-last-event-id`, `ping-in-modern`.

use std::future::pending;

use serde_json::Value;

use super::Defects;
use crate::era::discover;
use crate::era::seams::Verdict;
use crate::era::{Connected, Discovery, is_modern_error};
use crate::error::Error;
use crate::handshake;
use crate::session::Session;

impl Defects {
    /// The origin whose era is cached; correct: the connection's.
    pub(crate) fn era_cache_origin<'a>(&self, origin: Option<&'a str>) -> Option<&'a str> {
        origin.filter(|_| !self.no_era_cache)
    }

    /// What a defect connects with instead of the `server/discover` probe; `None` (the
    /// correct client): probe.
    pub(crate) async fn instead_of_probe(
        &self,
        session: &Session,
        dual: bool,
    ) -> Option<Result<Connected, Error>> {
        if !self.no_discover_probe {
            return None;
        }
        if dual {
            return Some(discover::fall_back(session).await);
        }
        let version = session.options().protocol_version.clone();
        discover::use_version(session, &version);
        Some(Ok(Connected::Modern(Discovery {
            version,
            result: None,
            server_info: None,
        })))
    }

    /// What an error answer to the probe means; correct: `judge(error, dual)`.
    pub(crate) fn judge_probe(
        &self,
        error: Error,
        dual: bool,
        judge: impl FnOnce(Error, bool) -> Verdict,
    ) -> Verdict {
        let modern = error.code.is_some_and(is_modern_error);
        if dual && modern && self.fallback_on_any_error {
            return Verdict::Legacy;
        }
        let keyed_out = self.fallback_on_one_code && error.code != Some(-32601);
        let falls_back = dual && !modern && !self.no_fallback && !keyed_out;
        judge(error, if modern { dual } else { falls_back })
    }

    /// Runs after a `DiscoverResult` was accepted; the correct client sends nothing more.
    pub(crate) async fn after_discover(&self, session: &Session) {
        if !self.initialize_after_discover {
            return;
        }
        let offered = &session.options().legacy_protocol_version;
        if let Ok(in_flight) = session.start(
            "initialize",
            handshake::initialize_params(offered, session.router().listener().offering(offered)),
        ) {
            let _ = in_flight.wait(pending()).await;
        }
        let _ = session.notify("notifications/initialized", None);
    }

    /// The client capabilities a modern request declares in `_meta`; correct: `capabilities`,
    /// the client's own (an extension only the server supports is ignored).
    pub(crate) fn client_capabilities(&self, capabilities: &Value, found: &Discovery) -> Value {
        let offered = found
            .result
            .as_ref()
            .and_then(|r| r.get("capabilities"))
            .and_then(|c| c.get("extensions"));
        match (self.claim_server_extensions, offered, capabilities) {
            (true, Some(extensions), Value::Object(own)) => {
                let mut own = own.clone();
                own.insert("extensions".into(), extensions.clone());
                Value::Object(own)
            }
            _ => capabilities.clone(),
        }
    }

    /// Whether a dropped standalone GET stream is opened again; correct: yes.
    pub(crate) fn reopens_stream(&self) -> bool {
        !self.no_stream_reconnect
    }

    /// The `Last-Event-ID` a reopened GET stream resumes from; correct: the last id seen.
    pub(crate) fn resume_from<'a, T>(&self, last: Option<&'a T>) -> Option<&'a T> {
        last.filter(|_| !self.no_last_event_id)
    }

    /// Whether a dropped standalone GET stream costs the session (a new `initialize` before
    /// the next request); correct: no, reconnecting re-sends nothing.
    pub(crate) fn stream_drop_loses_session(&self) -> bool {
        self.reinitialize_on_reconnect
    }

    /// Runs once a modern-era connect succeeded; the correct client opens no GET stream and
    /// sends no `ping` (2026-07-28 has none).
    pub(crate) async fn after_modern_connect(&self, session: &Session) {
        if self.get_stream_in_modern {
            session.transport().open_server_stream();
            // The stream lets running requests go first; give its GET time to go out before
            // the plan goes on, or a short plan closes before the defect shows.
            tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        }
        if self.ping_in_modern {
            if let Ok(in_flight) = session.start("ping", serde_json::json!({})) {
                let _ = in_flight.wait(pending()).await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    fn rpc(code: i64) -> Error {
        Error {
            code: Some(code),
            ..Error::new(ErrorKind::ProtocolError, "x")
        }
    }

    fn with(name: &str) -> Defects {
        Defects::only(name)
    }

    fn judged(d: &Defects, code: i64) -> Verdict {
        d.judge_probe(rpc(code), true, |e, dual| discover::judge(e, false, dual))
    }

    #[test]
    fn fallback_defects_change_the_verdict() {
        let ok = Defects::default();
        assert!(matches!(judged(&ok, -32601), Verdict::Legacy));
        assert!(matches!(judged(&ok, -32602), Verdict::Legacy));
        assert!(matches!(judged(&ok, -32021), Verdict::Fail(_)));
        let any = with("fallback-on-any-error");
        assert!(matches!(judged(&any, -32021), Verdict::Legacy));
        let one = with("fallback-on-one-code");
        assert!(matches!(judged(&one, -32601), Verdict::Legacy));
        assert!(matches!(judged(&one, -32602), Verdict::Fail(_)));
        let never = with("no-fallback");
        assert!(matches!(judged(&never, -32601), Verdict::Fail(_)));
    }
}

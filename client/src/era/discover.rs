//! Connecting in the modern era: the `server/discover` probe, the retry with another version
//! on `UnsupportedProtocolVersionError` (-32022), and the dual-era decision between staying
//! modern and falling back to the legacy `initialize` handshake.
//!
//! The rules, per transport:
//! - A `DiscoverResult`, or a recognised modern error (-32020, -32021, -32022), means a modern
//!   server: never `initialize` then. On -32022 the probe is sent again (new id) with a version
//!   from `data.supported` that this client speaks (see [`next_version`]), else connect fails
//!   `unsupported_version`.
//! - stdio, dual: any other JSON-RPC error, an unreadable answer, or no answer within the
//!   request timeout means a legacy server: `initialize` on the same process. The probe is
//!   never cancelled on the wire, so a legacy server sees nothing before `initialize` but it.
//! - HTTP, dual: a non-2xx answer without a modern error body, or any other JSON-RPC error,
//!   means legacy. A timeout or a transport failure is reported, not taken for an era.
//! - Modern only: where dual would fall back, connect fails `unsupported_version` instead
//!   (with the JSON-RPC code or HTTP status that answered the probe).
//! - The era found over HTTP is cached per origin (see [`super::EraCache`]); a process started
//!   over stdio is a new server every time, so it is always probed.

use std::future::pending;

use serde_json::{Value, json};

use super::mrtr::{self, Shape};
use super::seams::{EraSeams, Verdict};
use super::{
    Connected, Discovery, Era, MODERN_PROTOCOL_VERSIONS, UNSUPPORTED_PROTOCOL_VERSION,
    is_modern_error, meta,
};
use crate::error::{Error, ErrorKind};
use crate::handshake::exchange;
use crate::session::Session;
use crate::transport::Transport;

/// Finds the server's era (`origin`: the HTTP origin, for the era cache) and connects in it.
pub(crate) async fn detect(session: &Session, origin: Option<&str>) -> Result<Connected, Error> {
    let options = session.options();
    let seams = session.seams();
    let dual = options.era == Era::Dual;
    let origin = seams.era_cache_origin(origin);
    if let Some(cached) = origin.and_then(|o| options.era_cache.get(o)) {
        return match cached {
            Connected::Modern(found) => {
                use_version(session, &found.version);
                Ok(Connected::Modern(Discovery {
                    result: None,
                    ..found
                }))
            }
            Connected::Legacy(_) => fall_back(session).await,
        };
    }
    let found = match seams.instead_of_probe(session, dual).await {
        Some(found) => found,
        None => probe(session, dual).await,
    };
    if let (Ok(found), Some(origin)) = (&found, origin) {
        options.era_cache.put(origin, found.clone());
    }
    found
}

/// Speaks `version` from now on (HTTP: modern mode, and the version header).
pub(crate) fn use_version(session: &Session, version: &str) {
    session.transport().set_modern(true);
    session.router().set_modern(true);
    session.transport().set_protocol_version(Some(version));
}

/// The legacy handshake, offering the legacy version, with the transport switched to the
/// legacy era.
pub(crate) async fn fall_back(session: &Session) -> Result<Connected, Error> {
    session.transport().set_modern(false);
    session.router().set_modern(false);
    session.transport().set_protocol_version(None);
    let offered = &session.options().legacy_protocol_version;
    exchange::run(session, offered).await.map(Connected::Legacy)
}

async fn probe(session: &Session, dual: bool) -> Result<Connected, Error> {
    let seams = session.seams();
    let http = matches!(session.transport(), Transport::Http(_));
    let mut version = session.options().protocol_version.clone();
    let mut tried: Vec<String> = Vec::new();
    loop {
        use_version(session, &version);
        tried.push(version.clone());
        let capabilities = session.router().listener().modern_capabilities(None);
        let params = meta::with_meta(json!({}), &version, &capabilities);
        let outcome = match session.start("server/discover", params) {
            Ok(in_flight) => in_flight.quietly().wait(pending()).await,
            Err(e) => Err(e),
        };
        let error = match outcome {
            Ok(result) => return accept(session, result, version).await,
            Err(e) => e,
        };
        match seams.judge_probe(error, dual, |error, dual| judge(error, http, dual)) {
            Verdict::OtherVersion(error) => {
                match seams.retry_version(&error, &tried, next_version) {
                    Some(next) => version = next,
                    None => return Err(no_common_version(error)),
                }
            }
            Verdict::Legacy => return fall_back(session).await,
            Verdict::Fail(error) => return Err(error),
        }
    }
}

/// What an error answer to the probe means (see the module doc).
pub(crate) fn judge(error: Error, http: bool, dual: bool) -> Verdict {
    if let Some(code) = error.code.filter(|c| is_modern_error(*c)) {
        return match code {
            UNSUPPORTED_PROTOCOL_VERSION => Verdict::OtherVersion(error),
            _ => Verdict::Fail(error),
        };
    }
    let legacy_sign = match error.kind {
        ErrorKind::ProtocolError | ErrorKind::InvalidResponse => true,
        ErrorKind::Timeout => !http,
        ErrorKind::HttpStatus => http,
        _ => false,
    };
    if !legacy_sign {
        return Verdict::Fail(error);
    }
    if dual {
        return Verdict::Legacy;
    }
    if error.kind == ErrorKind::Timeout {
        return Verdict::Fail(error);
    }
    Verdict::Fail(Error {
        message: format!(
            "the server did not answer server/discover as a modern (2026-07-28) server does, so \
             it speaks an era this client is not using: {}",
            error.message
        ),
        ..error.with_kind(ErrorKind::UnsupportedVersion)
    })
}

/// The version to retry with after an `UnsupportedProtocolVersionError` (`tried`: every
/// version sent so far): the first of its `data.supported` that this client speaks and has not
/// sent yet; else one it speaks and sent only once. A server may refuse a request for another
/// reason and list the very version that was sent: that version is retried once, and then the
/// client gives up, so it never loops.
pub(crate) fn next_version(error: &Error, tried: &[String]) -> Option<String> {
    let supported = error.data.as_ref()?.get("supported")?.as_array()?;
    let ours: Vec<&str> = supported
        .iter()
        .filter_map(Value::as_str)
        .filter(|v| MODERN_PROTOCOL_VERSIONS.contains(v))
        .collect();
    let times_sent = |v: &str| tried.iter().filter(|t| *t == v).count();
    let unsent = ours.iter().find(|v| times_sent(v) == 0);
    unsent
        .or_else(|| ours.iter().find(|v| times_sent(v) == 1))
        .map(|v| (*v).to_owned())
}

/// `unsupported_version` for a -32022 that leaves no version to try.
pub(crate) fn no_common_version(error: Error) -> Error {
    let listed = error
        .data
        .as_ref()
        .and_then(|d| d.get("supported"))
        .map_or_else(|| "nothing".to_owned(), Value::to_string);
    Error {
        message: format!(
            "the server supports {listed}; none of them is a version this client speaks (it \
             speaks {}) and has not already retried: {}",
            MODERN_PROTOCOL_VERSIONS.join(", "),
            error.message
        ),
        ..error.with_kind(ErrorKind::UnsupportedVersion)
    }
}

/// Takes in a `DiscoverResult`: its `resultType`, and a version both sides speak.
async fn accept(session: &Session, result: Value, sent: String) -> Result<Connected, Error> {
    let seams = session.seams();
    let (Shape::Complete(result) | Shape::InputRequired(result) | Shape::Task(result)) =
        seams.result_shape(result, |r| mrtr::shape(r, "server/discover", false, false))?;
    let version = match result.get("supportedVersions").and_then(Value::as_array) {
        None => sent,
        Some(listed) => {
            let has = |v: &str| listed.iter().any(|l| l.as_str() == Some(v));
            match MODERN_PROTOCOL_VERSIONS.iter().find(|v| has(v)) {
                _ if has(&sent) => sent,
                Some(v) => (*v).to_owned(),
                None => {
                    return Err(Error::new(
                        ErrorKind::UnsupportedVersion,
                        format!(
                            "the server's supportedVersions {} name no version this client \
                             speaks ({})",
                            Value::Array(listed.clone()),
                            MODERN_PROTOCOL_VERSIONS.join(", ")
                        ),
                    ));
                }
            }
        }
    };
    use_version(session, &version);
    seams.after_discover(session).await;
    let server_info = result
        .get("_meta")
        .and_then(|m| m.get(meta::SERVER_INFO))
        .cloned();
    Ok(Connected::Modern(Discovery {
        version,
        result: Some(result),
        server_info,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rpc(code: i64, data: Value) -> Error {
        Error {
            code: Some(code),
            data: Some(data),
            ..Error::new(ErrorKind::ProtocolError, "x")
        }
    }

    #[test]
    fn retry_versions_come_from_the_supported_list() {
        let e = rpc(-32022, json!({"supported":["2025-11-25","2026-07-28"]}));
        let tried = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            next_version(&e, &tried(&["1900-01-01"])).as_deref(),
            Some("2026-07-28")
        );
        assert_eq!(next_version(&rpc(-32022, json!({})), &[]), None);
        let only_others = rpc(-32022, json!({"supported":["2027-01-01"]}));
        assert_eq!(next_version(&only_others, &tried(&["2026-07-28"])), None);
        let e = no_common_version(e);
        assert_eq!(
            (e.kind, e.code),
            (ErrorKind::UnsupportedVersion, Some(-32022))
        );
    }

    #[test]
    fn the_version_just_sent_is_retried_once_then_given_up() {
        let e = rpc(-32022, json!({"supported":["2026-07-28"]}));
        let once = ["2026-07-28".to_owned()];
        assert_eq!(next_version(&e, &once).as_deref(), Some("2026-07-28"));
        let twice = ["2026-07-28".to_owned(), "2026-07-28".to_owned()];
        assert_eq!(next_version(&e, &twice), None);
    }

    #[test]
    fn modern_errors_stay_modern_others_fall_back_in_dual_only() {
        assert!(matches!(
            judge(rpc(-32022, json!({})), false, true),
            Verdict::OtherVersion(_)
        ));
        assert!(matches!(
            judge(rpc(-32021, json!({})), true, true),
            Verdict::Fail(e) if e.kind == ErrorKind::ProtocolError
        ));
        for code in [-32601, -32602, -32600] {
            assert!(matches!(
                judge(rpc(code, json!(null)), false, true),
                Verdict::Legacy
            ));
            assert!(matches!(
                judge(rpc(code, json!(null)), false, false),
                Verdict::Fail(e) if e.kind == ErrorKind::UnsupportedVersion && e.code == Some(code)
            ));
        }
        let timeout = || Error::new(ErrorKind::Timeout, "slow");
        assert!(matches!(judge(timeout(), false, true), Verdict::Legacy));
        assert!(matches!(judge(timeout(), true, true), Verdict::Fail(_)));
        let status = || Error::http_status(400, "bad");
        assert!(matches!(judge(status(), true, true), Verdict::Legacy));
        let closed = Error::closed("gone");
        assert!(matches!(judge(closed, false, true), Verdict::Fail(_)));
    }
}

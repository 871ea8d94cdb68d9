//! Connecting in the modern era: the `server/discover` probe, the retry with another version
//! on `UnsupportedProtocolVersionError` (-32022), and the dual-era decision between staying
//! modern and falling back to the legacy `initialize` handshake.
//!
//! The rules, per transport:
//! - A `DiscoverResult`, or a recognised modern error (-32020, -32021, -32022), means a modern
//!   server: never `initialize` then. On -32022 the probe is sent again (new id) with a version
//!   from `data.supported` that this client speaks, else connect fails `unsupported_version`.
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
use super::{
    Connected, Discovery, Era, MODERN_PROTOCOL_VERSIONS, UNSUPPORTED_PROTOCOL_VERSION,
    is_modern_error, meta,
};
use crate::defects::Defects;
use crate::error::{Error, ErrorKind};
use crate::handshake;
use crate::session::Session;
use crate::transport::Transport;

/// Finds the server's era (`origin`: the HTTP origin, for the era cache) and connects in it.
pub(crate) async fn detect(session: &Session, origin: Option<&str>) -> Result<Connected, Error> {
    let options = session.options();
    let defects = &options.defects;
    let dual = options.era == Era::Dual;
    let origin = origin.filter(|_| !defects.no_era_cache);
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
    let found = match (defects.no_discover_probe, dual) {
        (true, true) => fall_back(session).await,
        (true, false) => {
            let version = options.protocol_version.clone();
            use_version(session, &version);
            Ok(Connected::Modern(Discovery {
                version,
                result: None,
                server_info: None,
            }))
        }
        (false, _) => probe(session, dual).await,
    };
    if let (Ok(found), Some(origin)) = (&found, origin) {
        options.era_cache.put(origin, found.clone());
    }
    found
}

/// Speaks `version` from now on (HTTP: modern mode, and the version header).
pub(crate) fn use_version(session: &Session, version: &str) {
    session.transport().set_modern(true);
    session.transport().set_protocol_version(Some(version));
}

/// The legacy handshake, with the transport switched to the legacy era.
async fn fall_back(session: &Session) -> Result<Connected, Error> {
    session.transport().set_modern(false);
    session.transport().set_protocol_version(None);
    crate::client::handshake(session)
        .await
        .map(Connected::Legacy)
}

/// What an error answer to the probe means.
enum Verdict {
    /// A modern server that does not speak our version: try another.
    OtherVersion(Error),
    /// A legacy server: fall back to `initialize`.
    Legacy,
    /// Give up with this error.
    Fail(Error),
}

async fn probe(session: &Session, dual: bool) -> Result<Connected, Error> {
    let options = session.options();
    let defects = &options.defects;
    let http = matches!(session.transport(), Transport::Http(_));
    let mut version = options.protocol_version.clone();
    let mut tried: Vec<String> = Vec::new();
    loop {
        use_version(session, &version);
        tried.push(version.clone());
        let params = meta::with_meta(json!({}), &version, &json!({}), defects);
        let outcome = match session.start("server/discover", params) {
            Ok(in_flight) => in_flight.quietly().wait(pending()).await,
            Err(e) => Err(e),
        };
        let error = match outcome {
            Ok(result) => return accept(session, result, version).await,
            Err(e) => e,
        };
        match judge(error, http, dual, defects) {
            Verdict::OtherVersion(error) => match next_version(&error, &tried, defects) {
                Some(next) => version = next,
                None => return Err(no_common_version(error)),
            },
            Verdict::Legacy => return fall_back(session).await,
            Verdict::Fail(error) => return Err(error),
        }
    }
}

fn judge(error: Error, http: bool, dual: bool, defects: &Defects) -> Verdict {
    if let Some(code) = error.code.filter(|c| is_modern_error(*c)) {
        return match (code, dual && defects.fallback_on_any_error) {
            (_, true) => Verdict::Legacy,
            (UNSUPPORTED_PROTOCOL_VERSION, false) if defects.no_version_retry => {
                Verdict::Fail(no_common_version(error))
            }
            (UNSUPPORTED_PROTOCOL_VERSION, false) => Verdict::OtherVersion(error),
            (_, false) => Verdict::Fail(error),
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
    let keyed_out = defects.fallback_on_one_code && error.code != Some(-32601);
    if dual && !defects.no_fallback && !keyed_out {
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

/// The version to retry with after an `UnsupportedProtocolVersionError`: the first of its
/// `data.supported` that this client speaks and has not tried yet.
pub(crate) fn next_version(error: &Error, tried: &[String], defects: &Defects) -> Option<String> {
    let supported = error.data.as_ref()?.get("supported")?.as_array()?;
    supported
        .iter()
        .filter_map(Value::as_str)
        .filter(|v| !tried.iter().any(|t| t == v))
        .find(|v| defects.retry_any_version || MODERN_PROTOCOL_VERSIONS.contains(v))
        .map(str::to_owned)
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
            "the server supports {listed}, none of which this client speaks (it speaks {}) \
             or has not tried already: {}",
            MODERN_PROTOCOL_VERSIONS.join(", "),
            error.message
        ),
        ..error.with_kind(ErrorKind::UnsupportedVersion)
    }
}

/// Takes in a `DiscoverResult`: its `resultType`, and a version both sides speak.
async fn accept(session: &Session, result: Value, sent: String) -> Result<Connected, Error> {
    let options = session.options();
    let defects = &options.defects;
    let (Shape::Complete(result) | Shape::InputRequired(result)) =
        mrtr::shape(result, "server/discover", false, defects)?;
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
    if defects.initialize_after_discover {
        let params = handshake::initialize_params(&options.legacy_protocol_version);
        if let Ok(in_flight) = session.start("initialize", params) {
            let _ = in_flight.wait(pending()).await;
        }
        let _ = session.notify("notifications/initialized", None);
    }
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
        let d = Defects::default();
        assert_eq!(
            next_version(&e, &["1900-01-01".into()], &d).as_deref(),
            Some("2026-07-28")
        );
        assert_eq!(next_version(&e, &["2026-07-28".into()], &d), None);
        let any = Defects {
            retry_any_version: true,
            ..d
        };
        assert_eq!(next_version(&e, &[], &any).as_deref(), Some("2025-11-25"));
        assert_eq!(next_version(&rpc(-32022, json!({})), &[], &d), None);
        let e = no_common_version(e);
        assert_eq!(
            (e.kind, e.code),
            (ErrorKind::UnsupportedVersion, Some(-32022))
        );
    }

    #[test]
    fn modern_errors_stay_modern_others_fall_back_in_dual_only() {
        let d = Defects::default();
        assert!(matches!(
            judge(rpc(-32022, json!({})), false, true, &d),
            Verdict::OtherVersion(_)
        ));
        assert!(matches!(
            judge(rpc(-32021, json!({})), true, true, &d),
            Verdict::Fail(e) if e.kind == ErrorKind::ProtocolError
        ));
        for code in [-32601, -32602, -32600] {
            assert!(matches!(
                judge(rpc(code, json!(null)), false, true, &d),
                Verdict::Legacy
            ));
            assert!(matches!(
                judge(rpc(code, json!(null)), false, false, &d),
                Verdict::Fail(e) if e.kind == ErrorKind::UnsupportedVersion && e.code == Some(code)
            ));
        }
        let timeout = || Error::new(ErrorKind::Timeout, "slow");
        assert!(matches!(judge(timeout(), false, true, &d), Verdict::Legacy));
        assert!(matches!(judge(timeout(), true, true, &d), Verdict::Fail(_)));
        let status = || Error::http_status(400, "bad");
        assert!(matches!(judge(status(), true, true, &d), Verdict::Legacy));
        let closed = Error::closed("gone");
        assert!(matches!(judge(closed, false, true, &d), Verdict::Fail(_)));
    }
}

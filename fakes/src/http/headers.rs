//! What the fake reads from request headers: the allow-listed ones it records, the bearer
//! token it checks (and never records), and the media types and protocol version it
//! validates. Header names compare case-insensitively; `http` lower-cases them for us.

use std::collections::BTreeMap;

use axum::http::HeaderMap;
use axum::http::header::{ACCEPT, AUTHORIZATION};

use crate::modern::params::PARAM_PREFIX;

/// The headers a transcript shows, lower-case. `authorization` is shown only as a verdict.
pub const RECORDED: [&str; 8] = [
    "content-type",
    "accept",
    "mcp-session-id",
    "mcp-protocol-version",
    "mcp-method",
    "mcp-name",
    "last-event-id",
    "authorization",
];

/// The session header (`Mcp-Session-Id`).
pub const SESSION: &str = "mcp-session-id";
/// The protocol version header (`MCP-Protocol-Version`).
pub const PROTOCOL_VERSION: &str = "mcp-protocol-version";

/// How an `Authorization` header is shown when it carries the configured token.
pub const AUTH_VALID: &str = "Bearer [valid]";
/// How any other `Authorization` header is shown.
pub const AUTH_INVALID: &str = "[invalid]";

/// The allow-listed headers of a request, and every `Mcp-Param-*` one ([`PARAM_PREFIX`]), for
/// its `HttpRequest` record. Repeated headers are joined with `, `; bytes that are not UTF-8 are
/// replaced.
pub fn recorded(headers: &HeaderMap, token: Option<&str>) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let params = headers
        .keys()
        .map(|name| name.as_str())
        .filter(|name| name.starts_with(PARAM_PREFIX));
    for name in RECORDED.into_iter().chain(params) {
        let values: Vec<String> = headers
            .get_all(name)
            .iter()
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
            .collect();
        if values.is_empty() {
            continue;
        }
        let shown = if name == AUTHORIZATION.as_str() {
            let valid = token.is_some_and(|t| bearer_matches(headers, t));
            if valid { AUTH_VALID } else { AUTH_INVALID }.to_owned()
        } else {
            values.join(", ")
        };
        out.insert(name.to_owned(), shown);
    }
    out
}

/// Whether the request carries exactly one `Authorization: Bearer <token>` with this token
/// (the scheme name is case-insensitive, the token is not).
pub fn bearer_matches(headers: &HeaderMap, token: &str) -> bool {
    let mut all = headers.get_all(AUTHORIZATION).iter();
    let (Some(value), None) = (all.next(), all.next()) else {
        return false;
    };
    let Ok(text) = value.to_str() else {
        return false;
    };
    match text.split_once(' ') {
        Some((scheme, given)) => scheme.eq_ignore_ascii_case("bearer") && given == token,
        None => false,
    }
}

/// The value of a header as text, if present once and valid.
pub fn single<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    let mut all = headers.get_all(name).iter();
    match (all.next(), all.next()) {
        (Some(value), None) => value.to_str().ok(),
        _ => None,
    }
}

/// Whether `Accept` lists every one of `wanted` (media ranges compared without parameters;
/// wildcards do not count, since the spec asks the client to name both types).
pub fn accepts_all(headers: &HeaderMap, wanted: &[&str]) -> bool {
    let listed: Vec<String> = headers
        .get_all(ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(media_type)
        .collect();
    wanted
        .iter()
        .all(|w| listed.iter().any(|l| l.eq_ignore_ascii_case(w)))
}

/// Whether an `MCP-Protocol-Version` header, if present, names a version the fake knows.
/// A missing header passes: servers assume a default for backward compatibility, and the
/// harness checks its presence from the transcript instead.
/// A fake playing `revision` knows only the versions up to it.
pub fn version_acceptable_at(headers: &HeaderMap, revision: Option<&str>) -> bool {
    // Before 2025-06-18 the header did not exist: a server of that revision never looks.
    if headers.get(PROTOCOL_VERSION).is_none() || revision.is_some_and(|r| r < "2025-06-18") {
        return true;
    }
    let known = crate::script::known_versions(revision);
    single(headers, PROTOCOL_VERSION).is_some_and(|v| known.contains(&v))
}

fn media_type(value: &str) -> String {
    value.split(';').next().unwrap_or("").trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn map(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.append(*name, HeaderValue::from_static(value));
        }
        headers
    }

    #[test]
    fn records_the_allow_list_and_hides_the_token() {
        let headers = map(&[
            ("Accept", "application/json"),
            ("accept", "text/event-stream"),
            ("Authorization", "Bearer s3cret"),
            ("User-Agent", "x"),
            ("Mcp-Session-Id", "abc"),
            ("Mcp-Param-Region", "us-west1"),
            ("mcp-param-region", "eu"),
        ]);
        let shown = recorded(&headers, Some("s3cret"));
        assert_eq!(shown["accept"], "application/json, text/event-stream");
        assert_eq!(shown["authorization"], AUTH_VALID);
        assert_eq!(shown["mcp-session-id"], "abc");
        assert_eq!(shown["mcp-param-region"], "us-west1, eu");
        assert!(!shown.contains_key("user-agent"));
        assert_eq!(
            recorded(&headers, Some("other"))["authorization"],
            AUTH_INVALID
        );
        assert_eq!(recorded(&headers, None)["authorization"], AUTH_INVALID);
    }

    #[test]
    fn bearer_needs_the_exact_token() {
        assert!(bearer_matches(&map(&[("authorization", "bearer t")]), "t"));
        assert!(!bearer_matches(&map(&[("authorization", "Bearer T")]), "t"));
        assert!(!bearer_matches(&map(&[("authorization", "Basic t")]), "t"));
        assert!(!bearer_matches(&map(&[("authorization", "Bearert")]), "t"));
        assert!(!bearer_matches(&HeaderMap::new(), "t"));
    }

    #[test]
    fn media_types_and_versions() {
        let both = map(&[("accept", "application/json;q=0.9, Text/Event-Stream")]);
        assert!(accepts_all(
            &both,
            &["application/json", "text/event-stream"]
        ));
        let star = map(&[("accept", "*/*")]);
        assert!(!accepts_all(&star, &["application/json"]));
        assert!(version_acceptable_at(&HeaderMap::new(), None));
        let v = |value: &'static str| map(&[(PROTOCOL_VERSION, value)]);
        assert!(version_acceptable_at(&v("2025-06-18"), None));
        assert!(!version_acceptable_at(&v("2025-11-25"), Some("2025-06-18")));
        assert!(version_acceptable_at(&v("2026-07-28"), Some("2025-03-26")));
        assert!(!version_acceptable_at(&v("2099-01-01"), None));
    }
}

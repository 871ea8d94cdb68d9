//! Where the authorization server is, and what it supports.
//!
//! 1. Protected Resource Metadata (RFC 9728): from the `resource_metadata` URL of the 401's
//!    challenge when there is one; otherwise the well-known URIs in the order the spec lists
//!    them: path-inserted (`/.well-known/oauth-protected-resource/<path>`), then the root.
//!    Its `resource` must be the resource identifier the well-known URL was built from
//!    (RFC 9728 §3.3: the server's URL for the path-inserted one, its bare origin for the
//!    root), compared as URLs (scheme and host case, a bare origin's trailing slash); from
//!    the challenge's URL, the server's URL or a parent of it on the same origin. Otherwise
//!    nothing from it is used. The `resource` is kept as published: the client sends it,
//!    byte for byte, as the RFC 8707 `resource` parameter.
//! 2. Authorization server metadata for the first of `authorization_servers`, at the
//!    locations the spec lists in its order: for an issuer with a path, RFC 8414 path
//!    insertion, OpenID path insertion, OpenID path appending; without a path, RFC 8414 then
//!    OpenID. The document's `issuer` must be identical to the issuer the URL was built from
//!    (RFC 8414 §3.3), else it is not used.
//! 3. 2025-03-26 back-compat, when no Protected Resource Metadata is found at all: RFC 8414
//!    metadata at the MCP server's origin (the "authorization base URL"), and when that is
//!    missing too, the default endpoints `/authorize`, `/token` and `/register` there.

use reqwest::Url;
use serde_json::{Map, Value};

use super::challenge::Challenge;
use super::net::{Net, failed};
use super::{Secret, canonical_resource};
use crate::error::Error;
use crate::seams::wire::Wire;

const PRM_SUFFIX: &str = "/.well-known/oauth-protected-resource";
const OAUTH_SUFFIX: &str = "/.well-known/oauth-authorization-server";
const OIDC_SUFFIX: &str = "/.well-known/openid-configuration";

/// What the client uses of a Protected Resource Metadata document.
#[derive(Debug, Clone)]
pub(crate) struct ResourceMetadata {
    /// `resource`, exactly as the document published it.
    pub(crate) resource: String,
    /// `authorization_servers` (at least one).
    pub(crate) authorization_servers: Vec<String>,
    /// `scopes_supported`, when present.
    pub(crate) scopes_supported: Option<Vec<String>>,
}

/// What the client uses of an authorization server's metadata (or of the 2025-03-26 defaults).
#[derive(Debug, Clone)]
pub(crate) struct ServerMetadata {
    /// The validated `issuer`; `None` for the 2025-03-26 default endpoints (no document).
    pub(crate) issuer: Option<String>,
    pub(crate) authorization_endpoint: Url,
    pub(crate) token_endpoint: Url,
    pub(crate) registration_endpoint: Option<Url>,
    /// `code_challenge_methods_supported`, when present.
    pub(crate) code_challenge_methods: Option<Vec<String>>,
    /// `client_id_metadata_document_supported` is `true`.
    pub(crate) cimd_supported: bool,
    /// `authorization_response_iss_parameter_supported` is `true` (RFC 9207 §3).
    pub(crate) iss_supported: bool,
    /// `token_endpoint_auth_methods_supported`, when present.
    pub(crate) token_auth_methods: Option<Vec<String>>,
    /// `scopes_supported` lists `offline_access` (a refresh token may be asked for).
    pub(crate) offline_access: bool,
    /// Built from the 2025-03-26 defaults: there was no document to check PKCE support in.
    pub(crate) defaults: bool,
}

/// The well-known locations of Protected Resource Metadata for `server`, in the spec's order
/// (path-inserted, then root; only the root when the server is at the root). `full` false:
/// the root only.
#[cfg(test)]
pub(crate) fn resource_metadata_urls(server: &Url, full: bool) -> Vec<Url> {
    resource_metadata_locations(server, full)
        .into_iter()
        .map(|(url, _)| url)
        .collect()
}

/// [`resource_metadata_urls`], each with the resource identifier it was built from (RFC
/// 9728 §3.1): the server's URL (query and fragment dropped) for the path-inserted one,
/// its bare origin for the root.
fn resource_metadata_locations(server: &Url, full: bool) -> Vec<(Url, Url)> {
    let origin = server.origin().ascii_serialization();
    let path = server.path().trim_end_matches('/');
    let mut urls = Vec::new();
    if full && !path.is_empty() {
        let mut identifier = server.clone();
        identifier.set_query(None);
        identifier.set_fragment(None);
        urls.extend(
            Url::parse(&format!("{origin}{PRM_SUFFIX}{path}"))
                .ok()
                .map(|u| (u, identifier)),
        );
    }
    urls.extend(
        Url::parse(&format!("{origin}{PRM_SUFFIX}"))
            .ok()
            .zip(Url::parse(&origin).ok()),
    );
    urls
}

/// The metadata locations of `issuer` in the spec's order (see the module doc). `full`
/// false: RFC 8414 at the root only (neither path insertion nor OpenID).
pub(crate) fn server_metadata_urls(issuer: &Url, full: bool) -> Vec<Url> {
    let origin = issuer.origin().ascii_serialization();
    let path = issuer.path().trim_end_matches('/');
    let texts = match (full, path.is_empty()) {
        (false, _) => vec![format!("{origin}{OAUTH_SUFFIX}")],
        (true, true) => vec![
            format!("{origin}{OAUTH_SUFFIX}"),
            format!("{origin}{OIDC_SUFFIX}"),
        ],
        (true, false) => vec![
            format!("{origin}{OAUTH_SUFFIX}{path}"),
            format!("{origin}{OIDC_SUFFIX}{path}"),
            format!("{origin}{path}{OIDC_SUFFIX}"),
        ],
    };
    texts.iter().filter_map(|t| Url::parse(t).ok()).collect()
}

/// Whether a Protected Resource Metadata `resource` names `server`: the same origin (scheme
/// and host compared case-insensitively, as URL parsing normalises them) and a path equal to
/// the server's or a parent of it on a segment boundary.
pub(crate) fn resource_matches(resource: &str, server: &Url) -> bool {
    let Ok(resource) = Url::parse(resource) else {
        return false;
    };
    if resource.origin() != server.origin() || resource.fragment().is_some() {
        return false;
    }
    let theirs = resource.path().trim_end_matches('/');
    let ours = server.path().trim_end_matches('/');
    ours == theirs || ours.starts_with(&format!("{theirs}/"))
}

/// Whether a Protected Resource Metadata `resource` is the resource identifier `identifier`
/// its well-known URL was built from (RFC 9728 §3.3), compared as URLs: scheme and host
/// case-insensitively (URL parsing normalises them), paths equal but for a trailing slash,
/// no fragment.
pub(crate) fn resource_is(resource: &str, identifier: &Url) -> bool {
    let Ok(resource) = Url::parse(resource) else {
        return false;
    };
    resource.origin() == identifier.origin()
        && resource.fragment().is_none()
        && resource.query() == identifier.query()
        && resource.path().trim_end_matches('/') == identifier.path().trim_end_matches('/')
}

/// Finds and validates Protected Resource Metadata for `server` (see the module doc).
/// `Ok(None)`: none at any well-known location (the 2025-03-26 back-compat applies).
pub(crate) async fn resource_metadata(
    net: &Net,
    server: &Url,
    challenge: &Challenge,
    bearer: Option<&Secret>,
) -> Result<Option<ResourceMetadata>, Error> {
    let from_challenge = challenge
        .resource_metadata
        .as_deref()
        .filter(|_| net.seams.auth_uses_resource_metadata());
    let candidates = match from_challenge {
        Some(text) => vec![(
            Url::parse(text).map_err(|e| {
                failed(format!(
                    "the resource_metadata URL {text:?} of the WWW-Authenticate challenge does \
                     not parse: {e}"
                ))
            })?,
            None,
        )],
        None => resource_metadata_locations(server, net.seams.auth_full_discovery())
            .into_iter()
            .map(|(url, identifier)| (url, Some(identifier)))
            .collect(),
    };
    let mut tried = Vec::new();
    for (url, identifier) in &candidates {
        let answer = net
            .get_json(url, "the protected resource metadata", bearer)
            .await?;
        let Some(doc) = answer.json.filter(|_| answer.status == 200) else {
            tried.push(format!("{url} (HTTP {})", answer.status));
            if !net.seams.auth_tries_next_location(answer.status) {
                break;
            }
            continue;
        };
        return validate_resource_metadata(net, &doc, url, server, identifier.as_ref()).map(Some);
    }
    match from_challenge {
        Some(_) => Err(failed(format!(
            "no protected resource metadata at the challenge's resource_metadata URL: {}",
            tried.join(", ")
        ))),
        None => Ok(None),
    }
}

fn strings(doc: &Map<String, Value>, key: &str) -> Option<Vec<String>> {
    doc.get(key)?
        .as_array()?
        .iter()
        .map(|v| v.as_str().map(str::to_owned))
        .collect()
}

/// Validates a PRM document read at `url`; `identifier`: the resource identifier a
/// well-known `url` was built from (`None` for the challenge's URL).
fn validate_resource_metadata(
    net: &Net,
    doc: &Map<String, Value>,
    url: &Url,
    server: &Url,
    identifier: Option<&Url>,
) -> Result<ResourceMetadata, Error> {
    let resource = doc.get("resource").and_then(Value::as_str).ok_or_else(|| {
        failed(format!(
            "the protected resource metadata at {url} has no `resource`"
        ))
    })?;
    let strict = identifier.filter(|_| !net.seams.auth_any_prm_resource());
    let (ok, expected) = match strict {
        Some(identifier) => (
            resource_is(resource, identifier),
            format!(
                "the resource identifier {} its well-known URL was built from",
                canonical_resource(identifier)
            ),
        ),
        None => (
            resource_matches(resource, server),
            format!(
                "the server {} or a parent of it",
                canonical_resource(server)
            ),
        ),
    };
    if !ok {
        return Err(failed(format!(
            "the protected resource metadata at {url} is for {resource:?}, not {expected} \
             (RFC 9728 §3.3); nothing from it is used"
        )));
    }
    let authorization_servers = strings(doc, "authorization_servers")
        .filter(|list| !list.is_empty())
        .ok_or_else(|| {
            failed(format!(
                "the protected resource metadata at {url} lists no `authorization_servers`"
            ))
        })?;
    Ok(ResourceMetadata {
        resource: resource.to_owned(),
        authorization_servers,
        scopes_supported: strings(doc, "scopes_supported"),
    })
}

/// Fetches and validates the metadata of the authorization server `issuer` (see the module
/// doc): the first location that answers 200 is used, and only if its `issuer` is identical.
pub(crate) async fn server_metadata(
    net: &Net,
    issuer: &str,
    bearer: Option<&Secret>,
) -> Result<ServerMetadata, Error> {
    let issuer_url = Url::parse(issuer).map_err(|e| {
        failed(format!(
            "the authorization server {issuer:?} named by the protected resource metadata does \
             not parse: {e}"
        ))
    })?;
    net.check(&issuer_url, "the authorization server")?;
    let mut tried = Vec::new();
    for url in server_metadata_urls(&issuer_url, net.seams.auth_full_discovery()) {
        let answer = net
            .get_json(&url, "the authorization server metadata", bearer)
            .await?;
        match answer.json.filter(|_| answer.status == 200) {
            Some(doc) => return validate_server_metadata(net, &doc, &url, issuer),
            None => {
                tried.push(format!("{url} (HTTP {})", answer.status));
                if !net.seams.auth_tries_next_location(answer.status) {
                    break;
                }
            }
        }
    }
    Err(failed(format!(
        "no metadata for the authorization server {issuer}: tried {}",
        tried.join(", ")
    )))
}

/// 2025-03-26 back-compat (see the module doc): RFC 8414 metadata at `server`'s origin, or
/// the default endpoints there.
pub(crate) async fn legacy_server_metadata(
    net: &Net,
    server: &Url,
    bearer: Option<&Secret>,
) -> Result<ServerMetadata, Error> {
    let origin = server.origin().ascii_serialization();
    let at = |path: &str| {
        Url::parse(&format!("{origin}{path}"))
            .map_err(|e| failed(format!("cannot build {origin}{path}: {e}")))
    };
    let url = at(OAUTH_SUFFIX)?;
    let answer = net
        .get_json(
            &url,
            "the authorization server metadata (2025-03-26)",
            bearer,
        )
        .await?;
    if let Some(doc) = answer.json.filter(|_| answer.status == 200) {
        return validate_server_metadata(net, &doc, &url, &origin);
    }
    Ok(ServerMetadata {
        issuer: None,
        authorization_endpoint: at("/authorize")?,
        token_endpoint: at("/token")?,
        registration_endpoint: Some(at("/register")?),
        code_challenge_methods: None,
        cimd_supported: false,
        iss_supported: false,
        token_auth_methods: None,
        offline_access: false,
        defaults: true,
    })
}

fn validate_server_metadata(
    net: &Net,
    doc: &Map<String, Value>,
    url: &Url,
    issuer: &str,
) -> Result<ServerMetadata, Error> {
    let stated = doc.get("issuer").and_then(Value::as_str);
    if !net.seams.auth_issuer_accepted(stated == Some(issuer)) {
        return Err(failed(format!(
            "the authorization server metadata at {url} names the issuer {stated:?}, not \
             {issuer:?}, from which its URL was built; it is not used (RFC 8414 §3.3)"
        )));
    }
    let endpoint = |key: &str| -> Result<Option<Url>, Error> {
        match doc.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) => Url::parse(text).map(Some).map_err(|e| {
                failed(format!(
                    "the `{key}` {text:?} of the metadata at {url} does not parse: {e}"
                ))
            }),
            Some(_) => Err(failed(format!(
                "the `{key}` of the metadata at {url} is not a string"
            ))),
        }
    };
    let required = |key: &str| {
        endpoint(key)?.ok_or_else(|| failed(format!("the metadata at {url} has no `{key}`")))
    };
    Ok(ServerMetadata {
        issuer: Some(issuer.to_owned()),
        authorization_endpoint: required("authorization_endpoint")?,
        token_endpoint: required("token_endpoint")?,
        registration_endpoint: endpoint("registration_endpoint")?,
        code_challenge_methods: strings(doc, "code_challenge_methods_supported"),
        cimd_supported: doc.get("client_id_metadata_document_supported")
            == Some(&Value::Bool(true)),
        iss_supported: doc.get("authorization_response_iss_parameter_supported")
            == Some(&Value::Bool(true)),
        token_auth_methods: strings(doc, "token_endpoint_auth_methods_supported"),
        offline_access: strings(doc, "scopes_supported")
            .is_some_and(|s| s.iter().any(|s| s == "offline_access")),
        defaults: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    fn texts(urls: Vec<Url>) -> Vec<String> {
        urls.into_iter().map(String::from).collect()
    }

    #[test]
    fn protected_resource_metadata_order() {
        assert_eq!(
            texts(resource_metadata_urls(
                &url("https://example.com/public/mcp"),
                true
            )),
            [
                "https://example.com/.well-known/oauth-protected-resource/public/mcp",
                "https://example.com/.well-known/oauth-protected-resource",
            ]
        );
        assert_eq!(
            texts(resource_metadata_urls(&url("https://example.com/"), true)),
            ["https://example.com/.well-known/oauth-protected-resource"]
        );
        assert_eq!(
            texts(resource_metadata_urls(
                &url("https://example.com:8443/mcp/"),
                false
            )),
            ["https://example.com:8443/.well-known/oauth-protected-resource"]
        );
    }

    #[test]
    fn authorization_server_metadata_order() {
        assert_eq!(
            texts(server_metadata_urls(
                &url("https://auth.example.com/tenant1"),
                true
            )),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example.com/.well-known/openid-configuration/tenant1",
                "https://auth.example.com/tenant1/.well-known/openid-configuration",
            ]
        );
        assert_eq!(
            texts(server_metadata_urls(&url("https://auth.example.com"), true)),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server",
                "https://auth.example.com/.well-known/openid-configuration",
            ]
        );
        assert_eq!(
            texts(server_metadata_urls(
                &url("https://auth.example.com/t/"),
                false
            )),
            ["https://auth.example.com/.well-known/oauth-authorization-server"]
        );
    }

    #[test]
    fn a_resource_names_the_server_or_a_parent_of_it() {
        let server = url("https://mcp.example.com:8443/api/mcp");
        for ok in [
            "https://mcp.example.com:8443/api/mcp",
            "https://MCP.example.com:8443/api/mcp/",
            "HTTPS://mcp.example.com:8443/api",
            "https://mcp.example.com:8443",
            "https://mcp.example.com:8443/",
        ] {
            assert!(resource_matches(ok, &server), "{ok}");
        }
        for bad in [
            "https://evil.example.com/mcp",
            "https://mcp.example.com/api/mcp",
            "http://mcp.example.com:8443/api/mcp",
            "https://mcp.example.com:8443/ap",
            "https://mcp.example.com:8443/api/mcp/deeper",
            "https://mcp.example.com:8443/api/mcp#f",
            "mcp.example.com",
            "",
        ] {
            assert!(!resource_matches(bad, &server), "{bad}");
        }
    }

    #[test]
    fn server_metadata_needs_its_issuer_and_endpoints() {
        let net = super::super::tests::net(crate::seams::Seams::default());
        let at = url("https://as.example/.well-known/oauth-authorization-server");
        let doc = |v: Value| v.as_object().unwrap().clone();
        let good = doc(serde_json::json!({
            "issuer": "https://as.example",
            "authorization_endpoint": "https://as.example/authorize",
            "token_endpoint": "https://as.example/token",
            "code_challenge_methods_supported": ["S256"],
            "authorization_response_iss_parameter_supported": true,
        }));
        let m = validate_server_metadata(&net, &good, &at, "https://as.example").unwrap();
        assert_eq!(m.issuer.as_deref(), Some("https://as.example"));
        assert!(m.iss_supported && !m.cimd_supported && !m.defaults);
        assert_eq!(
            m.code_challenge_methods.as_deref(),
            Some(&["S256".to_owned()][..])
        );
        // Identical means identical: no trailing-slash or case folding.
        for other in [
            "https://as.example/",
            "https://AS.example",
            "https://honest.example",
        ] {
            let e = validate_server_metadata(&net, &good, &at, other).unwrap_err();
            assert_eq!(e.kind, crate::error::ErrorKind::AuthFailed);
            assert!(e.message.contains("issuer"), "{}", e.message);
        }
        #[cfg(feature = "defects")]
        {
            let lax = crate::seams::Seams::only("auth-no-issuer-check");
            let lax_net = super::super::tests::net(lax);
            assert!(
                validate_server_metadata(&lax_net, &good, &at, "https://honest.example").is_ok()
            );
        }
        let mut no_token = good.clone();
        no_token.remove("token_endpoint");
        let e = validate_server_metadata(&net, &no_token, &at, "https://as.example").unwrap_err();
        assert!(e.message.contains("token_endpoint"), "{}", e.message);
    }

    #[test]
    fn resource_metadata_must_name_the_server_and_an_authorization_server() {
        let net = super::super::tests::net(crate::seams::Seams::default());
        let server = url("https://localhost:9/mcp");
        let at = url("https://localhost:9/.well-known/oauth-protected-resource/mcp");
        let doc = |v: Value| v.as_object().unwrap().clone();
        let ok = validate_resource_metadata(
            &net,
            &doc(serde_json::json!({"resource":"https://localhost:9/mcp",
                "authorization_servers":["https://localhost:10"],"scopes_supported":["a","b"]})),
            &at,
            &server,
            None,
        )
        .unwrap();
        assert_eq!(ok.resource, "https://localhost:9/mcp");
        assert_eq!(ok.authorization_servers, ["https://localhost:10"]);
        assert_eq!(ok.scopes_supported.unwrap(), ["a", "b"]);
        for bad in [
            serde_json::json!({"resource":"https://evil.example/mcp","authorization_servers":["https://a"]}),
            serde_json::json!({"authorization_servers":["https://a"]}),
            serde_json::json!({"resource":"https://localhost:9/mcp","authorization_servers":[]}),
            serde_json::json!({"resource":"https://localhost:9/mcp"}),
        ] {
            let e = validate_resource_metadata(&net, &doc(bad), &at, &server, None).unwrap_err();
            assert_eq!(e.kind, crate::error::ErrorKind::AuthFailed);
        }
    }

    #[test]
    fn a_well_known_document_names_the_identifier_its_url_was_built_from() {
        let net = super::super::tests::net(crate::seams::Seams::default());
        let server = url("https://localhost:9/mcp");
        let locations = resource_metadata_locations(&server, true);
        let identifiers: Vec<String> = locations
            .iter()
            .map(|(_, i)| canonical_resource(i))
            .collect();
        assert_eq!(
            identifiers,
            ["https://localhost:9/mcp", "https://localhost:9"]
        );
        let (root, origin) = &locations[1];
        let doc = |resource: &str| {
            serde_json::json!({"resource": resource, "authorization_servers": ["https://a"]})
                .as_object()
                .unwrap()
                .clone()
        };
        // The root document names the bare origin, kept as published (a trailing slash too).
        for published in [
            "https://localhost:9",
            "https://localhost:9/",
            "HTTPS://LOCALHOST:9",
        ] {
            let m = validate_resource_metadata(&net, &doc(published), root, &server, Some(origin))
                .unwrap();
            assert_eq!(m.resource, published);
        }
        // The server's own URL at the root is not what that URL was built from.
        let e = validate_resource_metadata(
            &net,
            &doc("https://localhost:9/mcp"),
            root,
            &server,
            Some(origin),
        )
        .unwrap_err();
        assert!(e.message.contains("RFC 9728"), "{}", e.message);
        // Nor is the origin at the path-inserted URL.
        let (inserted, endpoint) = &locations[0];
        assert!(
            validate_resource_metadata(
                &net,
                &doc("https://localhost:9"),
                inserted,
                &server,
                Some(endpoint)
            )
            .is_err()
        );
        // The lax defect takes any parent of the server wherever the document was found.
        #[cfg(feature = "defects")]
        {
            let lax = super::super::tests::net(crate::seams::Seams::only("auth-any-prm-resource"));
            assert!(
                validate_resource_metadata(
                    &lax,
                    &doc("https://localhost:9/mcp"),
                    root,
                    &server,
                    Some(origin)
                )
                .is_ok()
            );
        }
    }
}

//! The authorization code grant with PKCE (OAuth 2.1 §4.1), as an MCP client runs it: the
//! authorization request URL, the checks on the redirect that comes back, and the token
//! requests (code exchange and refresh).
//!
//! - The authorization request carries `response_type=code`, `client_id`, `redirect_uri`,
//!   the `S256` `code_challenge`, a fresh random `state`, the selected `scope` (when there is
//!   one) and the RFC 8707 `resource`.
//! - The redirect is checked in this order before anything in it is acted on: it must come
//!   back to the registered redirect URI; `state` must be present and equal (else the result
//!   is discarded); RFC 9207 `iss`, decoded from the query, must equal the issuer recorded
//!   before the redirect by simple string comparison, and must be present when the server
//!   advertises `authorization_response_iss_parameter_supported`. Only then is an `error`
//!   reported (its `error_description` included), or the `code` taken.
//! - Token requests carry the `code_verifier` and the same `resource`, and authenticate the
//!   client as registered (`client_secret_basic`, `client_secret_post`, `none`).
//! - Nothing secret (code, verifier, tokens, client secret) appears in an error message.

use std::time::Duration;

use reqwest::Url;
use reqwest::header::HeaderValue;
use serde_json::Value;

use super::Secret;
use super::discovery::ServerMetadata;
use super::net::{Answer, ClientAuth, Net, failed};
use super::pkce;
use super::registration::{Credentials, Method};
use crate::error::Error;
use crate::seams::wire::Wire;
use crate::seams::wire::{Pkce, TokenMethod};

/// What one authorization attempt keeps between sending the user away and the redirect.
#[derive(Debug)]
pub(crate) struct Pending {
    pub(crate) state: String,
    /// The PKCE verifier; `None` only under a defect.
    pub(crate) verifier: Option<Secret>,
    /// The issuer recorded before the redirect (RFC 9207); `None` for the 2025-03-26 default
    /// endpoints, which have no metadata.
    pub(crate) issuer: Option<String>,
    pub(crate) iss_supported: bool,
}

/// Whether authorization may proceed with the server's `code_challenge_methods_supported`:
/// only with `S256` listed (a missing list means no PKCE support: refuse). The 2025-03-26
/// default endpoints have no document to check: S256 is used, as that revision requires.
pub(crate) fn pkce_method(meta: &ServerMetadata) -> Result<Pkce, String> {
    if meta.defaults {
        return Ok(Pkce::S256);
    }
    match meta.code_challenge_methods.as_deref() {
        Some(list) if list.iter().any(|m| m == "S256") => Ok(Pkce::S256),
        Some(list) => Err(format!(
            "the authorization server does not support PKCE with S256 \
             (code_challenge_methods_supported: {list:?}); refusing to proceed"
        )),
        None => Err(
            "the authorization server metadata has no code_challenge_methods_supported, \
                     so PKCE support cannot be verified; refusing to proceed"
                .into(),
        ),
    }
}

/// Builds the authorization request URL; returns it with what the redirect is checked against.
#[allow(clippy::too_many_arguments)]
pub(crate) fn authorization_request(
    meta: &ServerMetadata,
    creds: &Credentials,
    redirect_uri: &str,
    scopes: &[String],
    resource: Option<&str>,
    pkce: Pkce,
) -> Result<(Url, Pending), Error> {
    let state = pkce::random(24)?;
    let verifier = match pkce {
        Pkce::Off => None,
        _ => Some(pkce::verifier()?),
    };
    let mut url = meta.authorization_endpoint.clone();
    {
        let mut q = url.query_pairs_mut();
        q.append_pair("response_type", "code")
            .append_pair("client_id", &creds.client_id)
            .append_pair("redirect_uri", redirect_uri);
        match (&verifier, pkce) {
            (Some(v), Pkce::S256) => {
                q.append_pair("code_challenge", &pkce::challenge(v))
                    .append_pair("code_challenge_method", "S256");
            }
            (Some(v), Pkce::Plain) => {
                q.append_pair("code_challenge", v.expose())
                    .append_pair("code_challenge_method", "plain");
            }
            _ => {}
        }
        q.append_pair("state", &state);
        if !scopes.is_empty() {
            q.append_pair("scope", &scopes.join(" "));
        }
        if let Some(resource) = resource {
            q.append_pair("resource", resource);
        }
    }
    let pending = Pending {
        state,
        verifier,
        issuer: meta.issuer.clone(),
        iss_supported: meta.iss_supported,
    };
    Ok((url, pending))
}

/// The decisions a deliberate defect may bend while the redirect is read.
pub(crate) struct Checks {
    pub(crate) state: bool,
    pub(crate) iss: bool,
}

/// Reads the redirect the user agent reached (see the module doc); the authorization code.
pub(crate) fn read_redirect(
    reached: &str,
    redirect_uri: &str,
    pending: &Pending,
    checks: Checks,
) -> Result<Secret, Error> {
    let url = Url::parse(reached).map_err(|e| {
        failed(format!(
            "the user agent's redirect is not a URL ({e}); expected the redirect URI with the \
             authorization response"
        ))
    })?;
    let expected = Url::parse(redirect_uri).map_err(|e| {
        failed(format!(
            "the redirect URI {redirect_uri:?} does not parse: {e}"
        ))
    })?;
    if url.origin() != expected.origin() || url.path() != expected.path() {
        return Err(failed(format!(
            "the authorization response came back to {}{}, not to the redirect URI {redirect_uri}",
            url.origin().ascii_serialization(),
            url.path()
        )));
    }
    let param = |name: &str| {
        url.query_pairs()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.into_owned())
    };
    let state = param("state");
    if checks.state && state.as_deref() != Some(pending.state.as_str()) {
        return Err(failed(match state {
            None => "the authorization response has no `state`; discarded",
            Some(_) => "the authorization response's `state` is not the one sent; discarded",
        }));
    }
    let iss = param("iss");
    if checks.iss {
        match (&iss, &pending.issuer) {
            (Some(got), Some(recorded)) if got == recorded => {}
            (Some(got), recorded) => {
                return Err(failed(format!(
                    "the authorization response's `iss` {got:?} is not the issuer {recorded:?} \
                     recorded before the redirect (RFC 9207 §2.4); discarded, error included"
                )));
            }
            (None, _) if pending.iss_supported => {
                return Err(failed(
                    "the authorization response has no `iss` although the authorization server \
                     advertises authorization_response_iss_parameter_supported (RFC 9207 §2.4); \
                     discarded",
                ));
            }
            (None, _) => {}
        }
    }
    if let Some(error) = param("error") {
        let description = param("error_description")
            .map(|d| format!(": {}", crate::error::excerpt(&d)))
            .unwrap_or_default();
        return Err(failed(format!(
            "the authorization server refused the authorization: {}{description}",
            crate::error::excerpt(&error)
        )));
    }
    param("code")
        .filter(|c| !c.is_empty())
        .map(Secret::new)
        .ok_or_else(|| failed("the authorization response has neither `code` nor `error`"))
}

/// An access token answer (RFC 6749 §5.1).
#[derive(Debug, Clone)]
pub(crate) struct TokenAnswer {
    pub(crate) access: Secret,
    /// The `Authorization` header value for it, marked sensitive.
    pub(crate) header: HeaderValue,
    pub(crate) refresh: Option<Secret>,
    pub(crate) expires_in: Option<Duration>,
}

pub(super) fn token_answer(answer: Answer, what: &str) -> Result<TokenAnswer, Error> {
    let doc = match (answer.status, &answer.json) {
        (200, Some(doc)) => doc,
        _ => {
            return Err(failed(format!(
                "the token endpoint refused {what}: {}",
                answer.oauth_error()
            )));
        }
    };
    let access = doc
        .get("access_token")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| failed(format!("the token answer to {what} has no access_token")))?;
    // A DPoP-bound token (RFC 9449 §5) is sent under its own scheme, with a proof.
    let scheme = match doc.get("token_type").and_then(Value::as_str) {
        None => "Bearer",
        Some(kind) if kind.eq_ignore_ascii_case("bearer") => "Bearer",
        Some(kind) if kind.eq_ignore_ascii_case("dpop") => "DPoP",
        Some(kind) => {
            return Err(failed(format!(
                "the token answer to {what} is of type {kind:?}; only Bearer and DPoP tokens are supported"
            )));
        }
    };
    let mut header = HeaderValue::try_from(format!("{scheme} {access}")).map_err(|_| {
        failed(format!(
            "the access token answering {what} holds characters not allowed in a header"
        ))
    })?;
    header.set_sensitive(true);
    let expires_in = match doc.get("expires_in") {
        Some(Value::Number(n)) => n.as_f64(),
        Some(Value::String(s)) => s.trim().parse::<f64>().ok(),
        _ => None,
    }
    .filter(|s| s.is_finite() && *s >= 0.0)
    .map(|s| Duration::from_secs_f64(s.min(1e9)));
    Ok(TokenAnswer {
        access: Secret::new(access),
        header,
        refresh: doc
            .get("refresh_token")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
            .map(Secret::new),
        expires_in,
    })
}

/// Adds the client's authentication to a token request's form.
fn authenticate<'a>(
    seams: &crate::seams::Seams,
    creds: &'a Credentials,
    form: &mut Vec<(&'static str, String)>,
) -> ClientAuth<'a> {
    let basic = creds.method == Method::Basic;
    let method = seams.auth_token_method(TokenMethod {
        basic,
        form: !basic,
    });
    match (creds.method, &creds.secret) {
        (Method::Basic | Method::Post, Some(secret)) if method.basic => {
            if method.form {
                form.push(("client_secret", secret.expose().to_owned()));
            }
            ClientAuth::Basic(&creds.client_id, secret)
        }
        (Method::Basic | Method::Post, Some(secret)) => {
            form.push(("client_id", creds.client_id.clone()));
            form.push(("client_secret", secret.expose().to_owned()));
            ClientAuth::InForm
        }
        _ => {
            form.push(("client_id", creds.client_id.clone()));
            ClientAuth::InForm
        }
    }
}

pub(super) async fn token_request(
    net: &Net,
    endpoint: &Url,
    creds: &Credentials,
    form: Vec<(&'static str, String)>,
    what: &str,
    bearer: Option<&Secret>,
) -> Result<Answer, Error> {
    token_request_proved(net, endpoint, creds, form, what, bearer, None).await
}

/// [`token_request`] with a DPoP proof header, when given.
pub(super) async fn token_request_proved(
    net: &Net,
    endpoint: &Url,
    creds: &Credentials,
    mut form: Vec<(&'static str, String)>,
    what: &str,
    bearer: Option<&Secret>,
    proof: Option<HeaderValue>,
) -> Result<Answer, Error> {
    let auth = authenticate(&net.seams, creds, &mut form);
    let pairs: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
    net.post_form_proved(endpoint, what, &pairs, auth, bearer, proof)
        .await
}

/// Exchanges an authorization code (OAuth 2.1 §4.1.3).
#[allow(clippy::too_many_arguments)]
pub(crate) async fn exchange_code(
    net: &Net,
    endpoint: &Url,
    creds: &Credentials,
    code: &Secret,
    pending: &Pending,
    redirect_uri: &str,
    resource: Option<&str>,
    bearer: Option<&Secret>,
) -> Result<TokenAnswer, Error> {
    let mut form = vec![
        ("grant_type", "authorization_code".to_owned()),
        ("code", code.expose().to_owned()),
        ("redirect_uri", redirect_uri.to_owned()),
    ];
    if let Some(verifier) = &pending.verifier {
        form.push(("code_verifier", verifier.expose().to_owned()));
    }
    if let Some(resource) = resource {
        form.push(("resource", resource.to_owned()));
    }
    let what = "the authorization code exchange";
    let answer = token_request(net, endpoint, creds, form, what, bearer).await?;
    token_answer(answer, what)
}

/// How a refresh ended.
pub(crate) enum Refreshed {
    Tokens(TokenAnswer),
    /// The server refused the refresh token (or answered otherwise unusably): authorize anew.
    Refused(String),
}

/// Uses a refresh token (OAuth 2.1 §4.3).
pub(crate) async fn refresh(
    net: &Net,
    endpoint: &Url,
    creds: &Credentials,
    refresh_token: &Secret,
    resource: Option<&str>,
    bearer: Option<&Secret>,
) -> Result<Refreshed, Error> {
    let mut form = vec![
        ("grant_type", "refresh_token".to_owned()),
        ("refresh_token", refresh_token.expose().to_owned()),
    ];
    if let Some(resource) = resource {
        form.push(("resource", resource.to_owned()));
    }
    let what = "the refresh";
    let answer = token_request(net, endpoint, creds, form, what, bearer).await?;
    Ok(match token_answer(answer, what) {
        Ok(tokens) => Refreshed::Tokens(tokens),
        Err(e) => Refreshed::Refused(e.message),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    fn meta(methods: Option<&[&str]>, iss_supported: bool) -> ServerMetadata {
        ServerMetadata {
            issuer: Some("https://as.example".into()),
            authorization_endpoint: Url::parse("https://as.example/authorize?x=1").unwrap(),
            token_endpoint: Url::parse("https://as.example/token").unwrap(),
            registration_endpoint: None,
            code_challenge_methods: methods.map(|m| m.iter().map(|s| (*s).into()).collect()),
            cimd_supported: false,
            iss_supported,
            token_auth_methods: None,
            offline_access: false,
            defaults: false,
        }
    }

    fn creds() -> Credentials {
        Credentials {
            client_id: "client 1".into(),
            secret: None,
            method: Method::None,
        }
    }

    const REDIRECT: &str = "http://127.0.0.1:5555/callback";
    const ALL: Checks = Checks {
        state: true,
        iss: true,
    };

    #[test]
    fn pkce_needs_s256_advertised() {
        assert_eq!(
            pkce_method(&meta(Some(&["plain", "S256"]), false)),
            Ok(Pkce::S256)
        );
        assert!(pkce_method(&meta(Some(&["plain"]), false)).is_err());
        assert!(pkce_method(&meta(Some(&[]), false)).is_err());
        assert!(pkce_method(&meta(None, false)).is_err());
        let defaults = ServerMetadata {
            defaults: true,
            ..meta(None, false)
        };
        assert_eq!(pkce_method(&defaults), Ok(Pkce::S256));
    }

    #[test]
    fn the_authorization_request_carries_every_parameter() {
        let scopes = ["a".to_owned(), "b:c".to_owned()];
        let (url, pending) = authorization_request(
            &meta(Some(&["S256"]), false),
            &creds(),
            REDIRECT,
            &scopes,
            Some("https://mcp.example/mcp"),
            Pkce::S256,
        )
        .unwrap();
        let q: std::collections::HashMap<String, String> = url.query_pairs().into_owned().collect();
        assert_eq!(q["x"], "1", "the endpoint's own query is kept");
        assert_eq!(q["response_type"], "code");
        assert_eq!(q["client_id"], "client 1");
        assert_eq!(q["redirect_uri"], REDIRECT);
        assert_eq!(q["code_challenge_method"], "S256");
        assert_eq!(
            q["code_challenge"],
            pkce::challenge(pending.verifier.as_ref().unwrap())
        );
        assert_eq!(q["state"], pending.state);
        assert_eq!(q["scope"], "a b:c");
        assert_eq!(q["resource"], "https://mcp.example/mcp");
        assert!(
            !url.as_str()
                .contains(pending.verifier.as_ref().unwrap().expose())
        );
        let (url, pending) =
            authorization_request(&meta(None, false), &creds(), REDIRECT, &[], None, Pkce::Off)
                .unwrap();
        assert!(pending.verifier.is_none());
        for absent in [
            "scope",
            "resource",
            "code_challenge",
            "code_challenge_method",
        ] {
            assert!(!url.query_pairs().any(|(k, _)| k == absent), "{absent}");
        }
    }

    fn pending(issuer: Option<&str>, iss_supported: bool) -> Pending {
        Pending {
            state: "st8".into(),
            verifier: None,
            issuer: issuer.map(str::to_owned),
            iss_supported,
        }
    }

    fn reached(query: &str) -> String {
        format!("{REDIRECT}?{query}")
    }

    #[test]
    fn state_is_required_and_compared() {
        let p = pending(None, false);
        let code = read_redirect(&reached("code=c1&state=st8"), REDIRECT, &p, ALL).unwrap();
        assert_eq!(code.expose(), "c1");
        for bad in ["code=c1", "code=c1&state=other", "code=c1&state="] {
            let e = read_redirect(&reached(bad), REDIRECT, &p, ALL).unwrap_err();
            assert_eq!(e.kind, ErrorKind::AuthFailed);
            assert!(!e.message.contains("c1"), "{}", e.message);
        }
        let lax = Checks {
            state: false,
            iss: true,
        };
        assert!(read_redirect(&reached("code=c1&state=other"), REDIRECT, &p, lax).is_ok());
        let e = read_redirect(
            "http://127.0.0.1:5555/elsewhere?code=c1&state=st8",
            REDIRECT,
            &p,
            ALL,
        )
        .unwrap_err();
        assert!(e.message.contains("redirect URI"), "{}", e.message);
    }

    #[test]
    fn iss_follows_the_rfc_9207_table() {
        let iss = "https%3A%2F%2Fas.example";
        // Advertised: present and equal passes, absent or different fails.
        let adv = pending(Some("https://as.example"), true);
        assert!(
            read_redirect(
                &reached(&format!("code=c&state=st8&iss={iss}")),
                REDIRECT,
                &adv,
                ALL
            )
            .is_ok()
        );
        assert!(read_redirect(&reached("code=c&state=st8"), REDIRECT, &adv, ALL).is_err());
        // Not advertised: absent proceeds, present is still compared.
        let quiet = pending(Some("https://as.example"), false);
        assert!(read_redirect(&reached("code=c&state=st8"), REDIRECT, &quiet, ALL).is_ok());
        for wrong in [
            "https%3A%2F%2Fevil.example",
            "https%3A%2F%2Fas.example%2F",
            "https%3A%2F%2FAS.example",
        ] {
            let e = read_redirect(
                &reached(&format!("code=c&state=st8&iss={wrong}")),
                REDIRECT,
                &quiet,
                ALL,
            )
            .unwrap_err();
            assert!(e.message.contains("iss"), "{}", e.message);
        }
        // A mismatch wins over an error: the error is not acted on.
        let e = read_redirect(
            &reached("error=access_denied&state=st8&iss=https%3A%2F%2Fevil.example"),
            REDIRECT,
            &quiet,
            ALL,
        )
        .unwrap_err();
        assert!(!e.message.contains("access_denied"), "{}", e.message);
        let lax = Checks {
            state: true,
            iss: false,
        };
        assert!(read_redirect(&reached("code=c&state=st8&iss=x"), REDIRECT, &adv, lax).is_ok());
    }

    #[test]
    fn an_error_redirect_is_reported_after_the_checks() {
        let p = pending(None, false);
        let e = read_redirect(
            &reached("error=access_denied&error_description=no+way&state=st8"),
            REDIRECT,
            &p,
            ALL,
        )
        .unwrap_err();
        assert_eq!(e.kind, ErrorKind::AuthFailed);
        assert!(
            e.message.contains("access_denied") && e.message.contains("no way"),
            "{}",
            e.message
        );
        assert!(read_redirect(&reached("state=st8"), REDIRECT, &p, ALL).is_err());
    }

    #[test]
    fn token_answers_are_read_and_secrets_kept_out_of_errors() {
        let answer = |status, v: Value| Answer {
            status,
            json: v.as_object().cloned(),
            dpop_nonce: None,
        };
        let t = token_answer(
            answer(
                200,
                serde_json::json!({"access_token":"at1","token_type":"bearer",
                "expires_in":60,"refresh_token":"rt1"}),
            ),
            "x",
        )
        .unwrap();
        assert_eq!(t.access.expose(), "at1");
        assert_eq!(t.refresh.unwrap().expose(), "rt1");
        assert_eq!(t.expires_in, Some(Duration::from_secs(60)));
        assert!(t.header.is_sensitive());
        let e = token_answer(
            answer(400, serde_json::json!({"error":"invalid_grant"})),
            "the refresh",
        )
        .unwrap_err();
        assert!(e.message.contains("invalid_grant"), "{}", e.message);
        // A DPoP-bound token goes under its own scheme; an unknown type is refused.
        let dpop = token_answer(
            answer(
                200,
                serde_json::json!({"access_token":"a","token_type":"DPoP"}),
            ),
            "x",
        )
        .unwrap();
        assert_eq!(dpop.header.to_str().unwrap(), "DPoP a");
        assert!(
            token_answer(
                answer(
                    200,
                    serde_json::json!({"access_token":"a","token_type":"MAC"})
                ),
                "x"
            )
            .is_err()
        );
        assert!(
            token_answer(answer(200, serde_json::json!({"token_type":"Bearer"})), "x").is_err()
        );
        assert!(
            token_answer(answer(200, serde_json::json!({"access_token":"a\nb"})), "x").is_err()
        );
    }
}

//! Which client id the client presents to an authorization server, in the spec's priority
//! order (2025-11-25 "Client Registration Approaches", draft client-registration.mdx):
//! 1. pre-registered credentials the caller supplied;
//! 2. a Client ID Metadata Document URL, when the server advertises
//!    `client_id_metadata_document_supported` (the URL itself is the `client_id`);
//! 3. credentials from an earlier Dynamic Client Registration with this same server;
//! 4. Dynamic Client Registration (RFC 7591) when the server has a `registration_endpoint`,
//!    with `application_type` `native` for a loopback redirect URI (`web` otherwise), as the
//!    draft asks;
//!
//! otherwise authorization fails (`auth_failed`): there is no user to prompt.
//!
//! Credentials obtained by registration are kept keyed by the authorization server's
//! `issuer` (draft "Authorization Server Binding"), so a client never presents one server's
//! client id to another, and re-registers when the server changes. The caller's pre-registered
//! credentials belong to the first server they are used with (the caller does not name it):
//! after a change of server they are not presented there.

use reqwest::Url;
use serde_json::{Value, json};

use super::discovery::ServerMetadata;
use super::net::{Net, failed};
use super::{AuthOptions, Secret};
use crate::error::Error;
use crate::seams::wire::Wire;

/// How the client authenticates at the token endpoint (`token_endpoint_auth_method`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// `client_secret_basic`.
    Basic,
    /// `client_secret_post`.
    Post,
    /// `none`: a public client, `client_id` in the form.
    None,
}

impl Method {
    /// The method by its registered name (`client_secret_basic`, `client_secret_post`,
    /// `none`); `None` for any other.
    pub fn from_name(text: &str) -> Option<Method> {
        match text {
            "client_secret_basic" => Some(Method::Basic),
            "client_secret_post" => Some(Method::Post),
            "none" => Some(Method::None),
            _ => None,
        }
    }
}

/// A client id, its secret if any, and how to authenticate with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Credentials {
    pub(crate) client_id: String,
    pub(crate) secret: Option<Secret>,
    pub(crate) method: Method,
}

/// The token endpoint authentication method for a client with or without a secret, given
/// the server's `token_endpoint_auth_methods_supported` (absent: `client_secret_basic`, the
/// RFC 8414 default).
pub(crate) fn choose_method(supported: Option<&[String]>, has_secret: bool) -> Method {
    if !has_secret {
        return Method::None;
    }
    let Some(list) = supported else {
        return Method::Basic;
    };
    let listed = |m: &str| list.iter().any(|s| s == m);
    if listed("client_secret_basic") {
        Method::Basic
    } else if listed("client_secret_post") {
        Method::Post
    } else if listed("none") {
        Method::None
    } else {
        Method::Basic
    }
}

/// Whether `redirect_uri` is a loopback URI (a native application's).
pub(crate) fn is_loopback_redirect(redirect_uri: &str) -> bool {
    let Ok(url) = Url::parse(redirect_uri) else {
        return false;
    };
    let host = url.host_str().unwrap_or("");
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    match bare.parse::<std::net::IpAddr>() {
        Ok(ip) => ip.is_loopback(),
        Err(_) => host.eq_ignore_ascii_case("localhost"),
    }
}

/// The client's credentials for the authorization server `meta` (see the module doc).
/// `issuer` keys what registration obtains.
pub(crate) async fn credentials(
    net: &Net,
    meta: &ServerMetadata,
    options: &AuthOptions,
    issuer: &str,
    bearer: Option<&Secret>,
) -> Result<Credentials, Error> {
    let seams = &net.seams;
    let dcr_first = seams.auth_prefers_dcr() && meta.registration_endpoint.is_some();
    let by_issuer = seams.auth_credentials_by_issuer();
    if !dcr_first {
        let pre = options
            .client
            .as_ref()
            .filter(|_| options.store.pre_registered_for(issuer, by_issuer));
        if let Some(pre) = pre {
            let supported = meta.token_auth_methods.as_deref();
            // The method the client is registered with, when the caller knows it; else the
            // best the server's metadata allows.
            let method = pre
                .auth_method
                .unwrap_or_else(|| choose_method(supported, pre.client_secret.is_some()));
            return Ok(Credentials {
                client_id: pre.client_id.clone(),
                secret: pre.client_secret.clone(),
                method,
            });
        }
        if let Some(url) = options
            .client_metadata_url
            .as_ref()
            .filter(|_| meta.cimd_supported)
        {
            return Ok(Credentials {
                client_id: url.clone(),
                secret: None,
                method: Method::None,
            });
        }
        if let Some(known) = options.store.client(issuer, by_issuer) {
            return Ok(known);
        }
    }
    let Some(endpoint) = &meta.registration_endpoint else {
        if options.client.is_some() {
            return Err(failed(format!(
                "the authorization server is now {issuer}, not the one the pre-registered client \
                 was used with; its credentials are not presented to another server, and this \
                 one offers no client metadata document support and no registration_endpoint"
            )));
        }
        return Err(failed(format!(
            "no way to obtain a client id for the authorization server {issuer}: no \
             pre-registered client, no client metadata document it accepts \
             (client_id_metadata_document_supported), and no registration_endpoint"
        )));
    };
    let registered = register(net, meta, options, endpoint, bearer).await?;
    options.store.keep_client(issuer, registered.clone());
    Ok(registered)
}

/// Dynamic Client Registration (RFC 7591 §3).
async fn register(
    net: &Net,
    meta: &ServerMetadata,
    options: &AuthOptions,
    endpoint: &Url,
    bearer: Option<&Secret>,
) -> Result<Credentials, Error> {
    let supported = meta.token_auth_methods.as_deref();
    // Ask to be a public client unless the server lists methods without `none`.
    let asked = match supported {
        Some(list) if !list.iter().any(|m| m == "none") => {
            if list.iter().any(|m| m == "client_secret_basic") {
                "client_secret_basic"
            } else if list.iter().any(|m| m == "client_secret_post") {
                "client_secret_post"
            } else {
                "none"
            }
        }
        _ => "none",
    };
    let application_type = match is_loopback_redirect(&options.redirect_uri) {
        true => "native",
        false => "web",
    };
    let body = net.seams.auth_registration(json!({
        "client_name": options.client_name,
        "redirect_uris": [options.redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": asked,
        "application_type": application_type,
    }));
    let answer = net
        .post_json(endpoint, "the client registration", &body, bearer)
        .await?;
    let doc = match (answer.status, &answer.json) {
        (200 | 201, Some(doc)) => doc,
        _ => {
            return Err(failed(format!(
                "the authorization server refused the client registration at {endpoint}: {}",
                answer.oauth_error()
            )));
        }
    };
    let client_id = doc
        .get("client_id")
        .and_then(Value::as_str)
        .filter(|id| !id.is_empty())
        .ok_or_else(|| {
            failed(format!(
                "the registration answer from {endpoint} has no client_id"
            ))
        })?;
    let secret = doc
        .get("client_secret")
        .and_then(Value::as_str)
        .map(Secret::new);
    let method = doc
        .get("token_endpoint_auth_method")
        .and_then(Value::as_str)
        .and_then(Method::from_name)
        .unwrap_or_else(|| choose_method(supported, secret.is_some()));
    Ok(Credentials {
        client_id: client_id.to_owned(),
        secret,
        method,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_endpoint_method_follows_what_the_server_supports() {
        let list = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(choose_method(None, false), Method::None);
        assert_eq!(choose_method(None, true), Method::Basic);
        let post = list(&["client_secret_post"]);
        assert_eq!(choose_method(Some(&post), true), Method::Post);
        let both = list(&["client_secret_post", "client_secret_basic"]);
        assert_eq!(choose_method(Some(&both), true), Method::Basic);
        let none = list(&["none"]);
        assert_eq!(choose_method(Some(&none), true), Method::None);
        assert_eq!(choose_method(Some(&post), false), Method::None);
    }

    #[test]
    fn loopback_redirects_are_native() {
        for uri in [
            "http://127.0.0.1:3000/callback",
            "http://localhost:1/cb",
            "http://[::1]:5/cb",
        ] {
            assert!(is_loopback_redirect(uri), "{uri}");
        }
        for uri in [
            "https://app.example.com/cb",
            "not a url",
            "http://10.0.0.1/cb",
        ] {
            assert!(!is_loopback_redirect(uri), "{uri}");
        }
    }
}

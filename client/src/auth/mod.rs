//! The client as an OAuth 2.1 client of an MCP server's authorization server (MCP
//! authorization, revisions 2025-06-18, 2025-11-25 and the draft, with 2025-03-26 back-compat).
//!
//! Why it is shaped this way:
//! - **The transport asks, this module answers.** Before each MCP request (POST, GET, DELETE)
//!   the HTTP transport asks the connection's OAuth client (`oauth.rs`) for the
//!   `Authorization` value; a 401 or a 403 answer is handed to it, and it decides whether the
//!   request is sent again (once after obtaining a token; once more after a step-up) or fails. The token only ever
//!   goes to the MCP endpoint, in the header, never in a URL.
//! - **The user's part belongs to the caller.** The library never opens the authorization
//!   URL: it hands it to the caller's [`UserAgent`], which returns the redirect URL the browser
//!   would reach; the library then checks `state` and `iss` itself.
//! - **One flow at a time.** Concurrent requests that meet a 401 together wait for one
//!   authorization (or refresh) and then retry with its token.
//! - **Hand-written mechanics.** The `oauth2` crate covers the code exchange and PKCE only,
//!   not Protected Resource Metadata, the discovery order, RFC 9207 `iss`, RFC 8707
//!   `resource`, client ID metadata documents or step-up, and it would add `chrono`, `rand`,
//!   `sha2` and `serde_path_to_error` to a tree that already has `ring` and `base64`; PKCE
//!   takes a dozen lines with those (`pkce.rs`), the forms `form_urlencoded` (already in the
//!   tree through `url`).
//!
//! Modules: `oauth` (the per-connection client: bearer, 401, 403, refresh, authorization),
//! `challenge` (`WWW-Authenticate`), `discovery` (metadata), `registration` (which client
//! id), `flow` (authorization request, redirect checks, token requests), `pkce`, `net` (the
//! authorization side's HTTP and its URL checks), `store` (tokens by resource, credentials by
//! issuer), `secret`, `machine` (the `client_credentials` grant).

mod challenge;
mod discovery;
pub(crate) mod dpop;
mod flow;
mod machine;
mod net;
mod oauth;
pub(crate) mod pkce;
mod registration;
pub(crate) mod secret;
mod store;

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use reqwest::Url;

pub use machine::{ClientCredentials, MachineMethod};
pub(crate) use net::Net;
pub(crate) use oauth::{Budget, Decision, OAuth};
pub use registration::Method as TokenEndpointAuthMethod;
pub use secret::Secret;
pub use store::AuthStore;

use crate::error::Error;

/// What a [`UserAgent`] returns: the redirect URL reached, or why there is none.
pub type AgentFuture<'a> = Pin<Box<dyn Future<Output = Result<String, Error>> + Send + 'a>>;

/// The user's part of the authorization: what a browser would do with the authorization URL.
///
/// Given the authorization URL, return the full URL of the redirect the browser would reach
/// (the redirect URI with `code` and `state`, or with `error`). The client checks what comes
/// back; the user agent adds no check of its own. An error fails the authorization with it.
pub trait UserAgent: Send + Sync {
    /// Sends the user to `authorization_url`; resolves to the redirect URL reached.
    fn authorize<'a>(&'a self, authorization_url: &'a str) -> AgentFuture<'a>;
}

/// A client id (and secret) registered with the authorization server beforehand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreRegistered {
    /// The client id.
    pub client_id: String,
    /// The client secret of a confidential client.
    pub client_secret: Option<Secret>,
    /// How the client is registered to authenticate at the token endpoint; when `None`, the
    /// best method the server's metadata allows (`client_secret_basic` first).
    pub auth_method: Option<TokenEndpointAuthMethod>,
}

/// How the client obtains authorization from an MCP server's authorization server.
#[derive(Clone)]
pub struct AuthOptions {
    /// The redirect URI registered for the client: `https://…`, or `http://` to a loopback
    /// host (`localhost`, 127.0.0.0/8, `::1`).
    pub redirect_uri: String,
    /// Pre-registered client credentials, used first when set.
    pub client: Option<PreRegistered>,
    /// The `https://` URL of this client's metadata document, used as the `client_id` where
    /// the authorization server advertises `client_id_metadata_document_supported`.
    pub client_metadata_url: Option<String>,
    /// The `client_name` sent in a dynamic client registration.
    pub client_name: String,
    /// The user's part (see [`UserAgent`]).
    pub user_agent: Arc<dyn UserAgent>,
    /// Tokens and registrations, shared by clones of these options.
    pub store: AuthStore,
    /// Machine-to-machine: credentials for the `client_credentials` grant. When set, tokens
    /// come from that grant alone (no authorization request, no registration, no user).
    pub client_credentials: Option<ClientCredentials>,
}

impl AuthOptions {
    /// Options with `redirect_uri` and `user_agent`, no pre-registration, no metadata document.
    pub fn new(redirect_uri: impl Into<String>, user_agent: Arc<dyn UserAgent>) -> Self {
        AuthOptions {
            redirect_uri: redirect_uri.into(),
            client: None,
            client_metadata_url: None,
            client_name: "mcp-harness-client".into(),
            user_agent,
            store: AuthStore::default(),
            client_credentials: None,
        }
    }
}

impl fmt::Debug for AuthOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthOptions")
            .field("redirect_uri", &self.redirect_uri)
            .field("client", &self.client)
            .field("client_metadata_url", &self.client_metadata_url)
            .field("client_name", &self.client_name)
            .field("store", &self.store)
            .field("client_credentials", &self.client_credentials)
            .finish_non_exhaustive()
    }
}

impl PartialEq for AuthOptions {
    fn eq(&self, other: &Self) -> bool {
        self.redirect_uri == other.redirect_uri
            && self.client == other.client
            && self.client_metadata_url == other.client_metadata_url
            && self.client_name == other.client_name
            && Arc::ptr_eq(&self.user_agent, &other.user_agent)
            && self.store == other.store
            && self.client_credentials == other.client_credentials
    }
}

impl Eq for AuthOptions {}

/// The canonical URI of the MCP server (RFC 8707 §2, "Canonical Server URI"): the endpoint
/// URL without fragment, scheme and host lower-cased (URL parsing does that), and without
/// the trailing slash of a bare origin.
pub(crate) fn canonical_resource(server: &Url) -> String {
    let mut url = server.clone();
    url.set_fragment(None);
    let text = String::from(url);
    match server.path() == "/" && server.query().is_none() {
        true => text.trim_end_matches('/').to_owned(),
        false => text,
    }
}

/// The scope selection strategy for a first authorization: the challenge's `scope` when it
/// names any, else every `scopes_supported` of the Protected Resource Metadata, else none
/// (the `scope` parameter is then left out).
pub(crate) fn select_scopes(challenged: &[String], supported: Option<&[String]>) -> Vec<String> {
    match (challenged.is_empty(), supported) {
        (false, _) => challenged.to_vec(),
        (true, Some(all)) => all.to_vec(),
        (true, None) => Vec::new(),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::seams::Seams;
    use crate::transport::http::security::DestinationPolicy;

    /// A `Net` that is never used to send (unit tests of the pure parts).
    pub(crate) fn net(seams: Seams) -> Net {
        let server = Url::parse("https://localhost:1/mcp").unwrap();
        let policy = DestinationPolicy::new(&server, &[]).with_seams(seams);
        Net {
            client: crate::transport::http::security::auth_client(&[], &seams, &policy).unwrap(),
            policy,
            seams,
            timeout: std::time::Duration::from_secs(1),
            protocol_version: None,
        }
    }

    #[test]
    fn scope_selection_prefers_the_challenge() {
        let s = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let all = s(&["a", "b"]);
        assert_eq!(select_scopes(&s(&["x"]), Some(&all)), ["x"]);
        assert_eq!(select_scopes(&[], Some(&all)), ["a", "b"]);
        assert!(select_scopes(&[], None).is_empty());
        assert_eq!(select_scopes(&s(&["y"]), None), ["y"]);
    }

    #[test]
    fn the_canonical_resource_drops_fragment_and_bare_slash() {
        let c = |s: &str| canonical_resource(&Url::parse(s).unwrap());
        assert_eq!(
            c("HTTPS://MCP.Example.com/mcp#x"),
            "https://mcp.example.com/mcp"
        );
        assert_eq!(c("https://mcp.example.com/"), "https://mcp.example.com");
        assert_eq!(
            c("https://mcp.example.com:8443"),
            "https://mcp.example.com:8443"
        );
        assert_eq!(
            c("https://mcp.example.com/server/mcp/"),
            "https://mcp.example.com/server/mcp/"
        );
    }

    #[test]
    fn options_debug_shows_no_secret() {
        struct Never;
        impl UserAgent for Never {
            fn authorize<'a>(&'a self, _: &'a str) -> AgentFuture<'a> {
                Box::pin(async { Err(net::failed("no")) })
            }
        }
        let mut options = AuthOptions::new("http://127.0.0.1:1/cb", Arc::new(Never));
        options.client = Some(PreRegistered {
            client_id: "id".into(),
            client_secret: Some(Secret::new("cl-s3cret")),
            auth_method: None,
        });
        let shown = format!("{options:?}");
        assert!(
            !shown.contains("s3cret") && shown.contains("<redacted>"),
            "{shown}"
        );
        assert_eq!(options, options.clone());
    }
}

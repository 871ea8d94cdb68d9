//! The client as an OAuth 2.1 client of an MCP server's authorization server (MCP
//! authorization, revisions 2025-06-18, 2025-11-25 and the draft, with 2025-03-26 back-compat).
//!
//! Why it is shaped this way:
//! - **The transport asks, this module answers.** Before each MCP request (POST, GET, DELETE)
//!   the HTTP transport asks [`OAuth::bearer`] for the `Authorization` value; a 401 or a 403
//!   answer is handed to [`OAuth::answer`], which decides whether the request is sent again
//!   (once after obtaining a token; once more after a step-up) or fails. The token only ever
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
//!   takes a dozen lines with those ([`pkce`]), the forms `form_urlencoded` (already in the
//!   tree through `url`).
//!
//! Modules: [`challenge`] (`WWW-Authenticate`), [`discovery`] (metadata), [`registration`]
//! (which client id), [`flow`] (authorization request, redirect checks, token requests),
//! [`pkce`], [`net`] (the authorization side's HTTP and its URL checks), [`store`] (tokens by
//! resource, credentials by issuer), [`secret`].

mod challenge;
mod discovery;
mod flow;
mod net;
mod pkce;
mod registration;
mod secret;
mod store;

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use reqwest::Url;
use reqwest::header::{HeaderMap, HeaderValue};
use tokio::time::Instant;

pub(crate) use flow::Pkce as PkceChoice;
pub(crate) use net::Net;
pub use secret::Secret;
pub use store::AuthStore;

use challenge::Challenge;
use store::Tokens;

use crate::error::{Error, ErrorKind};

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

/// How many times one request may still be sent again for authorization.
#[derive(Debug, Default)]
pub(crate) struct Budget {
    unauthorized: bool,
    step_ups: u32,
}

/// What the transport does with an answer it handed to [`OAuth::answer`].
pub(crate) enum Decision {
    /// Not an authorization matter: handle the answer as usual.
    Pass,
    /// Send the request again (with the token [`OAuth::bearer`] now gives).
    Retry,
    /// Fail the request with this.
    Fail(Error),
}

/// The bearer for one request: the header value, and the token (for a defect's URL).
pub(crate) struct Bearer {
    pub(crate) header: HeaderValue,
    pub(crate) token: Secret,
}

/// One connection's OAuth client (see the module doc).
pub(crate) struct OAuth {
    options: AuthOptions,
    net: Net,
    server: Url,
    /// The canonical resource: the `resource` parameter and the token store's key.
    resource: String,
    /// Held while a refresh or an authorization runs.
    flow: tokio::sync::Mutex<()>,
}

/// The step-up retry limit: one re-authorization per request.
const STEP_UPS: u32 = 1;
/// The cap under the `auth-step-up-forever` defect, so a broken run still ends.
const STEP_UPS_UNBOUNDED: u32 = 20;

impl OAuth {
    /// An OAuth client for the MCP endpoint `server`. The redirect URI must be `https` or
    /// loopback `http` (OAuth 2.1 §1.5), and a metadata document URL `https` with a path.
    pub(crate) fn new(server: Url, options: AuthOptions, net: Net) -> Result<OAuth, Error> {
        let redirect = Url::parse(&options.redirect_uri).map_err(|e| {
            net::failed(format!(
                "the redirect URI {:?} does not parse: {e}",
                options.redirect_uri
            ))
        })?;
        let loopback = registration::is_loopback_redirect(&options.redirect_uri);
        if !(redirect.scheme() == "https" || (redirect.scheme() == "http" && loopback)) {
            return Err(Error::new(
                ErrorKind::InsecureUrl,
                format!(
                    "the redirect URI {} must be https:// or http:// to a loopback host",
                    options.redirect_uri
                ),
            ));
        }
        if let Some(text) = &options.client_metadata_url {
            let ok = Url::parse(text)
                .is_ok_and(|u| u.scheme() == "https" && u.path() != "/" && !u.path().is_empty());
            if !ok {
                return Err(Error::new(
                    ErrorKind::InsecureUrl,
                    format!(
                        "the client metadata document URL {text:?} must be https:// with a path"
                    ),
                ));
            }
        }
        Ok(OAuth {
            resource: canonical_resource(&server),
            options,
            net,
            server,
            flow: tokio::sync::Mutex::new(()),
        })
    }

    fn seams(&self) -> &crate::defects::Defects {
        &self.net.seams
    }

    /// The bearer for the next request to the MCP server, if a token is held. A token the
    /// server said has expired is refreshed first when a refresh token is held; without one
    /// (or when the refresh is refused) no token is sent, and the 401 that follows starts a
    /// new authorization.
    pub(crate) async fn bearer(&self) -> Option<Bearer> {
        let tokens = self.options.store.tokens(&self.resource)?;
        if !tokens.expired() {
            return Some(bearer(&tokens));
        }
        let _flow = self.flow.lock().await;
        let tokens = self.options.store.tokens(&self.resource)?;
        if !tokens.expired() {
            return Some(bearer(&tokens));
        }
        match self.refresh(&tokens).await {
            Ok(true) => self
                .options
                .store
                .tokens(&self.resource)
                .map(|t| bearer(&t)),
            Ok(false) => None,
            Err(e) => {
                eprintln!("mcp-harness-client: could not refresh the expired token: {e}");
                None
            }
        }
    }

    /// Decides what a 401 or 403 answer to a request that carried `sent` means (see
    /// [`Decision`]); anything else passes.
    pub(crate) async fn answer(
        &self,
        status: u16,
        headers: &HeaderMap,
        sent: Option<&HeaderValue>,
        budget: &mut Budget,
    ) -> Decision {
        match status {
            401 => {
                self.unauthorized(Challenge::from_headers(headers), sent, budget)
                    .await
            }
            403 => {
                self.forbidden(Challenge::from_headers(headers), sent, budget)
                    .await
            }
            _ => Decision::Pass,
        }
    }

    async fn unauthorized(
        &self,
        challenge: Challenge,
        sent: Option<&HeaderValue>,
        budget: &mut Budget,
    ) -> Decision {
        if budget.unauthorized {
            return Decision::Fail(net::failed(format!(
                "the server answered HTTP 401 again after authorization{}",
                describe(&challenge)
            )));
        }
        budget.unauthorized = true;
        let _flow = self.flow.lock().await;
        let current = self.options.store.tokens(&self.resource);
        if let Some(tokens) = &current {
            // Another request obtained a new token meanwhile: use it.
            if Some(&tokens.header) != sent {
                return Decision::Retry;
            }
            match self.refresh(tokens).await {
                Ok(true) => return self.after_401(),
                Ok(false) => {}
                Err(e) => return Decision::Fail(e),
            }
        }
        match self.authorize(&challenge, None).await {
            Ok(()) => self.after_401(),
            Err(e) => Decision::Fail(e),
        }
    }

    /// A token was obtained after a 401: retry (a defect reports the 401 instead).
    fn after_401(&self) -> Decision {
        match self.seams().auth_retries_after_401() {
            true => Decision::Retry,
            false => Decision::Fail(Error::http_status(
                401,
                "the server answered HTTP 401 (a token was obtained; the request was not retried)",
            )),
        }
    }

    async fn forbidden(
        &self,
        challenge: Challenge,
        sent: Option<&HeaderValue>,
        budget: &mut Budget,
    ) -> Decision {
        if challenge.error.as_deref() != Some("insufficient_scope") || !self.seams().auth_steps_up()
        {
            return Decision::Pass;
        }
        let limit = match self.seams().auth_step_up_unbounded() {
            true => STEP_UPS_UNBOUNDED,
            false => STEP_UPS,
        };
        if budget.step_ups >= limit {
            return Decision::Fail(net::failed(format!(
                "the server still answers HTTP 403 insufficient_scope after re-authorizing with \
                 the scopes it asked for{}",
                describe(&challenge)
            )));
        }
        budget.step_ups += 1;
        let _flow = self.flow.lock().await;
        let current = self.options.store.tokens(&self.resource);
        if current.as_ref().map(|t| &t.header) != sent && current.is_some() {
            return Decision::Retry;
        }
        // The union of what was asked before and what the challenge names (draft "Step-Up
        // Authorization Flow" step 2), so earlier permissions are not lost.
        let mut scopes = current.map(|t| t.scopes).unwrap_or_default();
        for scope in &challenge.scope {
            if !scopes.contains(scope) {
                scopes.push(scope.clone());
            }
        }
        match self.authorize(&challenge, Some(scopes)).await {
            Ok(()) => Decision::Retry,
            Err(e) => Decision::Fail(e),
        }
    }

    /// Refreshes `tokens`: `Ok(true)` with new tokens stored, `Ok(false)` when there is no
    /// refresh token (or a defect never uses it) or the server refused it (the tokens are
    /// then forgotten, so a new authorization follows).
    async fn refresh(&self, tokens: &Tokens) -> Result<bool, Error> {
        let Some(refresh_token) = tokens
            .refresh
            .as_ref()
            .filter(|_| self.seams().auth_refreshes())
        else {
            self.options.store.forget_tokens(&self.resource);
            return Ok(false);
        };
        let resource = self.seams().auth_resource(&self.resource);
        let refreshed = flow::refresh(
            &self.net,
            &tokens.token_endpoint,
            &tokens.credentials,
            refresh_token,
            resource,
            Some(&tokens.access),
        )
        .await?;
        match refreshed {
            flow::Refreshed::Tokens(answer) => {
                // Rotation: a new refresh token replaces the old one; none keeps the old one.
                let refresh = match answer.refresh {
                    Some(new) => Some(self.seams().auth_rotated_refresh(new, refresh_token)),
                    None => Some(refresh_token.clone()),
                };
                let kept = Tokens {
                    access: answer.access,
                    header: answer.header,
                    refresh,
                    expires_at: answer.expires_in.map(|d| Instant::now() + d),
                    ..tokens.clone()
                };
                self.options.store.keep_tokens(&self.resource, kept);
                Ok(true)
            }
            flow::Refreshed::Refused(why) => {
                eprintln!("mcp-harness-client: the refresh was refused ({why}); authorizing anew");
                self.options.store.forget_tokens(&self.resource);
                Ok(false)
            }
        }
    }

    /// A full authorization: discovery, registration, the user's part, the code exchange.
    /// `step_up`: the scopes to ask for instead of the scope selection strategy's.
    async fn authorize(
        &self,
        challenge: &Challenge,
        step_up: Option<Vec<String>>,
    ) -> Result<(), Error> {
        let net = &self.net;
        let seams = self.seams();
        let held = self.options.store.tokens(&self.resource).map(|t| t.access);
        let held = held.as_ref();
        let prm = discovery::resource_metadata(net, &self.server, challenge, held).await?;
        let meta = match &prm {
            Some(prm) => {
                discovery::server_metadata(net, &prm.authorization_servers[0], held).await?
            }
            None => discovery::legacy_server_metadata(net, &self.server, held).await?,
        };
        net.check(&meta.authorization_endpoint, "the authorization endpoint")?;
        net.check(&meta.token_endpoint, "the token endpoint")?;
        let pkce = seams
            .auth_pkce(
                flow::pkce_method(&meta),
                meta.code_challenge_methods.as_deref(),
            )
            .map_err(net::failed)?;
        let issuer = meta
            .issuer
            .clone()
            .unwrap_or_else(|| self.server.origin().ascii_serialization());
        let credentials =
            registration::credentials(net, &meta, &self.options, &issuer, held).await?;
        let supported = prm.as_ref().and_then(|p| p.scopes_supported.as_deref());
        let scopes = match step_up {
            Some(scopes) => scopes,
            None => select_scopes(&challenge.scope, supported),
        };
        let scopes = seams.auth_scopes(scopes, supported);
        let resource = seams.auth_resource(&self.resource);
        let redirect_uri = &self.options.redirect_uri;
        let (url, pending) = flow::authorization_request(
            &meta,
            &credentials,
            redirect_uri,
            &scopes,
            resource,
            pkce,
        )?;
        let reached = self.options.user_agent.authorize(url.as_str()).await?;
        let checks = flow::Checks {
            state: seams.auth_checks_state(),
            iss: seams.auth_checks_iss(),
        };
        let code = flow::read_redirect(&reached, redirect_uri, &pending, checks)?;
        let answer = flow::exchange_code(
            net,
            &meta.token_endpoint,
            &credentials,
            &code,
            &pending,
            redirect_uri,
            resource,
            held,
        )
        .await?;
        let tokens = Tokens {
            access: answer.access,
            header: answer.header,
            refresh: answer.refresh,
            expires_at: answer.expires_in.map(|d| Instant::now() + d),
            scopes,
            token_endpoint: meta.token_endpoint.clone(),
            credentials,
        };
        self.options.store.keep_tokens(&self.resource, tokens);
        Ok(())
    }
}

fn bearer(tokens: &Tokens) -> Bearer {
    Bearer {
        header: tokens.header.clone(),
        token: tokens.access.clone(),
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

/// `: error "…", scope "…"` of a challenge, for messages.
fn describe(challenge: &Challenge) -> String {
    match (&challenge.error, challenge.scope.is_empty()) {
        (Some(e), true) => format!(" (error {e:?})"),
        (Some(e), false) => format!(" (error {e:?}, scope {:?})", challenge.scope.join(" ")),
        (None, false) => format!(" (scope {:?})", challenge.scope.join(" ")),
        (None, true) => String::new(),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::defects::Defects;
    use crate::transport::http::security::DestinationPolicy;

    /// A `Net` that is never used to send (unit tests of the pure parts).
    pub(crate) fn net(seams: Defects) -> Net {
        let server = Url::parse("https://localhost:1/mcp").unwrap();
        let policy = DestinationPolicy::new(&server, &[]).with_defects(seams);
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
        });
        let shown = format!("{options:?}");
        assert!(
            !shown.contains("s3cret") && shown.contains("<redacted>"),
            "{shown}"
        );
        assert_eq!(options, options.clone());
    }
}

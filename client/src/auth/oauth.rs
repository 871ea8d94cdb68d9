//! One connection's OAuth client: the bearer for each MCP request, and what a 401 or 403
//! answer leads to.
//!
//! - **Bearer.** The token held for the resource; one the server said has expired is
//!   refreshed first (a refresh token held), else none is sent and the 401 that follows starts
//!   a new authorization.
//! - **401.** Once per request: refresh the token sent (when a refresh token is held), or use
//!   the newer token another request obtained meanwhile; if that does not satisfy the server
//!   (a refused refresh, or still 401: a migrated authorization server is only found by a new
//!   discovery), one full authorization. Then the request is sent again; a further 401 fails
//!   it `auth_failed`.
//! - **403 `insufficient_scope`** (step-up): one re-authorization per request with the union
//!   of the scopes asked for before and the challenge's (draft "Step-Up Authorization Flow"),
//!   then the request is sent again; still 403 fails it `auth_failed`. Any other 403 is the
//!   caller's (`http_status`).
//! - **Background requests** (the standalone GET stream) never start a refresh or an
//!   authorization, which may involve the user: they send the token held, expired or not,
//!   retry once with a newer one another request obtained, and otherwise fail (the stream
//!   reconnects later). So the requests the caller makes drive every authorization, and their
//!   order does not depend on when the stream reconnects.
//! - Every refresh or authorization runs under one lock, so concurrent requests meeting a 401
//!   together wait for one flow and then retry with its token.

use reqwest::Url;
use reqwest::header::{HeaderMap, HeaderValue};
use tokio::time::Instant;

use super::challenge::Challenge;
use super::store::Tokens;
use super::{
    AuthOptions, Net, Secret, canonical_resource, discovery, flow, net, registration, select_scopes,
};
use crate::error::{Error, ErrorKind};
use crate::seams::wire::Wire;

/// How many times one request may still be sent again for authorization.
#[derive(Debug, Default)]
pub(crate) struct Budget {
    /// A background request (the standalone GET stream): it never starts a refresh or an
    /// authorization (which may involve the user), and uses the token requests obtain.
    passive: bool,
    /// A 401 was answered with a refreshed (or another request's newer) token.
    refreshed: bool,
    /// A 401 was answered with a new authorization.
    authorized: bool,
    step_ups: u32,
    /// A 401 asking for a DPoP nonce was answered with a request carrying it.
    dpop_nonce: bool,
}

impl Budget {
    /// The budget of a background request: it never starts a refresh or an authorization.
    pub(crate) fn passive() -> Budget {
        Budget {
            passive: true,
            ..Budget::default()
        }
    }
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
    /// The canonical server URI: the token store's key, and the `resource` parameter when
    /// there is no Protected Resource Metadata (else PRM's `resource` is).
    resource: String,
    /// Held while a refresh or an authorization runs.
    flow: tokio::sync::Mutex<()>,
    /// A DPoP client's key and nonces (machine clients asked to use DPoP).
    dpop: Option<super::dpop::Dpop>,
}

/// The step-up retry limit: one re-authorization per request.
const STEP_UPS: u32 = 1;
/// No limit (the `auth-step-up-forever` defect): the request's timeout ends the loop.
const STEP_UPS_UNBOUNDED: u32 = u32::MAX;

impl OAuth {
    /// An OAuth client for the MCP endpoint `server`. The redirect URI must be `https` or
    /// loopback `http` (OAuth 2.1 §1.5), and a metadata document URL `https` with a path.
    pub(crate) fn new(server: Url, options: AuthOptions, net: Net) -> Result<OAuth, Error> {
        let redirect = match (
            Url::parse(&options.redirect_uri),
            &options.client_credentials,
        ) {
            (Ok(url), _) => url,
            // A machine client has no redirect URI to check.
            (Err(_), Some(_)) => {
                Url::parse("https://localhost/").map_err(|e| net::failed(e.to_string()))?
            }
            (Err(e), None) => {
                return Err(net::failed(format!(
                    "the redirect URI {:?} does not parse: {e}",
                    options.redirect_uri
                )));
            }
        };
        let loopback = registration::is_loopback_redirect(&options.redirect_uri);
        let machine = options.client_credentials.is_some();
        let allowed = redirect.scheme() == "https" || (redirect.scheme() == "http" && loopback);
        if !(machine || allowed) {
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
        let wants_dpop = options.client_credentials.as_ref().is_some_and(|c| c.dpop);
        let dpop = match net.seams.auth_dpop_shape().filter(|_| wants_dpop) {
            Some(shape) => Some(super::dpop::Dpop::new(shape)?),
            None => None,
        };
        Ok(OAuth {
            resource: canonical_resource(&server),
            options,
            net,
            server,
            flow: tokio::sync::Mutex::new(()),
            dpop,
        })
    }

    fn seams(&self) -> &crate::seams::Seams {
        &self.net.seams
    }

    /// The DPoP proof for one MCP request (`method` on `url`) carrying `token`, when this
    /// client uses DPoP and holds a DPoP-bound token (its header's scheme says so).
    pub(crate) fn dpop_proof(
        &self,
        method: &str,
        url: &Url,
        header: &HeaderValue,
        token: &Secret,
    ) -> Option<HeaderValue> {
        let dpop = self.dpop.as_ref()?;
        let bound = header
            .to_str()
            .is_ok_and(|h| h.len() > 5 && h[..5].eq_ignore_ascii_case("dpop "));
        if !bound {
            return None;
        }
        match dpop.proof(
            method,
            url,
            Some(token.expose()),
            super::dpop::Side::Resource,
        ) {
            Ok(proof) => Some(proof),
            Err(e) => {
                eprintln!("mcp-harness-client: no DPoP proof: {e}");
                None
            }
        }
    }

    /// The bearer for the next request to the MCP server, if a token is held. A token the
    /// server said has expired is refreshed first when a refresh token is held; without one
    /// (or when the refresh is refused) no token is sent, and the 401 that follows starts a
    /// new authorization.
    pub(crate) async fn bearer(&self, budget: &Budget) -> Option<Bearer> {
        let tokens = self.options.store.tokens(&self.resource)?;
        if !tokens.expired() || budget.passive {
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

    /// The tokens held for this server, if any (their scopes go in a request's span).
    pub(crate) fn held(&self) -> Option<super::store::Tokens> {
        self.options.store.tokens(&self.resource)
    }

    /// Which access token the next request carries (see [`super::AuthStore::generation`]);
    /// `None` before the first.
    pub(crate) fn generation(&self) -> Option<u64> {
        self.options.store.generation(&self.resource)
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
        // RFC 9449 §9: a DPoP server may ask for a nonce; the request goes again once with it.
        if let Some(dpop) = &self.dpop
            && status == 401
            && !budget.dpop_nonce
            && super::dpop::asks_for_nonce(super::challenge::dpop_error(headers).as_deref())
            && dpop.take_nonce(
                super::dpop::Side::Resource,
                headers
                    .get(super::dpop::NONCE_HEADER)
                    .and_then(|v| v.to_str().ok()),
            )
        {
            budget.dpop_nonce = true;
            return Decision::Retry;
        }
        if budget.passive && matches!(status, 401 | 403) {
            let current = self.options.store.tokens(&self.resource);
            let newer = current.is_some_and(|t| Some(&t.header) != sent);
            if newer && !budget.refreshed {
                budget.refreshed = true;
                return Decision::Retry;
            }
            return Decision::Fail(net::failed(format!(
                "HTTP {status} to a background request; authorization is left to the requests"
            )));
        }
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

    /// A 401: refresh the token when one is held (once per request), else (or when the
    /// token refreshed is refused again, e.g. after an authorization server migration, which
    /// only a new discovery finds) authorize anew, once per request.
    async fn unauthorized(
        &self,
        challenge: Challenge,
        sent: Option<&HeaderValue>,
        budget: &mut Budget,
    ) -> Decision {
        if budget.authorized {
            return Decision::Fail(net::failed(format!(
                "the server answered HTTP 401 again after authorization{}",
                describe(&challenge)
            )));
        }
        let _flow = self.flow.lock().await;
        let current = self.options.store.tokens(&self.resource);
        if let Some(tokens) = &current {
            // Another request obtained a new token meanwhile: use it (once).
            if Some(&tokens.header) != sent
                && !budget.refreshed
                && self.seams().auth_shares_new_token()
            {
                budget.refreshed = true;
                return Decision::Retry;
            }
            if !budget.refreshed {
                budget.refreshed = true;
                match self.refresh(tokens).await {
                    Ok(true) => return self.after_401(),
                    Ok(false) => {}
                    Err(e) => return Decision::Fail(e),
                }
            }
        }
        budget.authorized = true;
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
        let mut scopes = current
            .map(|t| t.scopes)
            .filter(|_| self.seams().auth_step_up_keeps_scopes())
            .unwrap_or_default();
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
        let resource = self.seams().auth_resource(&tokens.resource);
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
        if let Some(creds) = self
            .options
            .client_credentials
            .as_ref()
            .filter(|_| seams.auth_uses_client_credentials())
        {
            return self
                .machine(creds, &meta, prm.as_ref(), challenge, step_up)
                .await;
        }
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
        let mut scopes = seams.auth_scopes(scopes, supported);
        // Ask for a refresh token where the authorization server offers one by scope (the
        // draft's "Refresh Tokens": MAY). Not alone: an empty selection leaves the scope to
        // the server's default, which `offline_access` alone could narrow.
        if seams.auth_adds_offline_access(meta.offline_access)
            && !scopes.is_empty()
            && !scopes.iter().any(|s| s == "offline_access")
        {
            scopes.push("offline_access".to_owned());
        }
        // RFC 8707 `resource`: the identifier the validated PRM published, byte for byte
        // (RFC 9728 §3.3 made sure it names this server); the canonical URI without PRM.
        let identifier = match &prm {
            Some(prm) => seams.auth_prm_resource(&prm.resource, &self.resource),
            None => self.resource.as_str(),
        };
        let resource = seams.auth_resource(identifier);
        let redirect_uri = &self.options.redirect_uri;
        let (url, mut pending) = flow::authorization_request(
            &meta,
            &credentials,
            redirect_uri,
            &scopes,
            resource,
            pkce,
        )?;
        pending.iss_supported = seams.auth_iss_required(pending.iss_supported);
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
        if !seams.auth_token_answer_usable(answer.refresh.is_some()) {
            return Err(net::failed(
                "the token answer has no refresh_token (a defect that counts on one)",
            ));
        }
        let mut tokens = Tokens::from_answer(
            answer,
            scopes,
            meta.token_endpoint.clone(),
            credentials,
            identifier.to_owned(),
        );
        tokens.issuer = meta.issuer.clone();
        self.options.store.keep_tokens(&self.resource, tokens);
        Ok(())
    }
}

impl OAuth {
    /// Machine-to-machine: a token by the `client_credentials` grant, for the scopes the
    /// selection strategy (or a step-up) names and the resource PRM published.
    async fn machine(
        &self,
        creds: &super::ClientCredentials,
        meta: &discovery::ServerMetadata,
        prm: Option<&discovery::ResourceMetadata>,
        challenge: &Challenge,
        step_up: Option<Vec<String>>,
    ) -> Result<(), Error> {
        let seams = self.seams();
        self.net.check(&meta.token_endpoint, "the token endpoint")?;
        let supported = prm.and_then(|p| p.scopes_supported.as_deref());
        let scopes = step_up.unwrap_or_else(|| select_scopes(&challenge.scope, supported));
        let identifier = match prm {
            Some(prm) => seams.auth_prm_resource(&prm.resource, &self.resource),
            None => self.resource.as_str(),
        };
        let resource = seams.auth_resource(identifier);
        let issuer = meta
            .issuer
            .clone()
            .unwrap_or_else(|| meta.token_endpoint.to_string());
        let answer = super::machine::token(
            &self.net,
            &meta.token_endpoint,
            creds,
            &issuer,
            &scopes,
            resource,
            self.dpop.as_ref(),
        )
        .await?;
        let mut tokens = Tokens::from_answer(
            answer,
            scopes,
            meta.token_endpoint.clone(),
            super::machine::credentials(creds),
            identifier.to_owned(),
        );
        tokens.issuer = meta.issuer.clone();
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
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::auth::tests::net;
    use crate::auth::{AgentFuture, UserAgent};
    use crate::seams::Seams;

    struct Never;
    impl UserAgent for Never {
        fn authorize<'a>(&'a self, _: &'a str) -> AgentFuture<'a> {
            Box::pin(async { Err(net::failed("no user agent in this test")) })
        }
    }

    fn oauth(seams: Seams, redirect_uri: &str) -> Result<OAuth, Error> {
        let server = Url::parse("https://localhost:1/mcp").unwrap();
        OAuth::new(
            server,
            AuthOptions::new(redirect_uri, Arc::new(Never)),
            net(seams),
        )
    }

    fn challenge(value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert("www-authenticate", HeaderValue::from_str(value).unwrap());
        h
    }

    #[tokio::test]
    async fn what_is_not_an_authorization_matter_passes_and_limits_hold() {
        let o = oauth(Seams::default(), "http://127.0.0.1:9/cb").unwrap();
        let mut budget = Budget::default();
        let pass = |d: Decision| matches!(d, Decision::Pass);
        let failed =
            |d: Decision| matches!(d, Decision::Fail(e) if e.kind == ErrorKind::AuthFailed);
        assert!(pass(
            o.answer(500, &HeaderMap::new(), None, &mut budget).await
        ));
        assert!(pass(
            o.answer(403, &HeaderMap::new(), None, &mut budget).await
        ));
        let invalid = challenge("Bearer error=\"invalid_token\"");
        assert!(pass(o.answer(403, &invalid, None, &mut budget).await));
        // One step-up per request, then a permanent failure.
        let scope = challenge("Bearer error=\"insufficient_scope\", scope=\"b\"");
        budget.step_ups = STEP_UPS;
        assert!(failed(o.answer(403, &scope, None, &mut budget).await));
        // One new authorization per request on 401.
        budget.authorized = true;
        assert!(failed(o.answer(401, &invalid, None, &mut budget).await));
        // A background request never starts a flow: without a newer token it fails at once.
        let mut passive = Budget::passive();
        assert!(failed(o.answer(401, &invalid, None, &mut passive).await));
        assert!(failed(
            o.answer(403, &scope, None, &mut Budget::passive()).await
        ));
        // Treating insufficient_scope as final is a defect.
        #[cfg(feature = "defects")]
        {
            let o = oauth(Seams::only("auth-no-step-up"), "http://127.0.0.1:9/cb").unwrap();
            assert!(pass(
                o.answer(403, &scope, None, &mut Budget::default()).await
            ));
        }
    }

    #[test]
    fn redirect_uris_must_be_https_or_loopback() {
        for ok in [
            "http://127.0.0.1:9/cb",
            "http://localhost:9/cb",
            "https://app.example/cb",
        ] {
            assert!(oauth(Seams::default(), ok).is_ok(), "{ok}");
        }
        for bad in ["http://app.example/cb", "http://10.0.0.1/cb"] {
            let e = oauth(Seams::default(), bad).err().unwrap();
            assert_eq!(e.kind, ErrorKind::InsecureUrl, "{bad}");
        }
        let e = oauth(Seams::default(), "not a url").err().unwrap();
        assert_eq!(e.kind, ErrorKind::AuthFailed);
    }
}

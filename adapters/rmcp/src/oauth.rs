//! rmcp's OAuth client (its `auth` feature) on authorization trials (CLIENTS.md,
//! "Authorization"), driven the way rmcp's documentation drives it, reactively:
//!
//! - the streamable HTTP transport runs on rmcp's `AuthClient`, which sends a bearer token when
//!   its `AuthorizationManager` has one, refreshes once on a rejected token, and otherwise lets
//!   the server's 401 (`AuthRequired`) or 403 (`InsufficientScope`) challenge out as the
//!   request's error;
//! - on such a challenge the application authorizes: `OAuthState::start_authorization` with an
//!   `AuthorizationRequest` carrying the challenge, the redirect URI, and the pre-registered id
//!   and secret or the CIMD URL when the harness gives them (rmcp picks pre-registered, then
//!   CIMD where advertised, then DCR; discovery, PKCE, scopes and `resource` are rmcp's), then
//!   the user's part (the kit's headless step on rmcp's authorization URL), then
//!   `handle_callback_url` with the whole redirect, where rmcp checks `state` and `iss`;
//! - then the step is run again (the connect with a new transport on the same manager), at
//!   most twice per step: a user asked a third time within one action gives up.
//!
//! The manager is rmcp's default (`AuthorizationManager::new`): its own destination policy for
//! discovered URLs (loopback only when the server URL is loopback, never link-local), and the
//! run's CA through `SSL_CERT_FILE`, which its TLS verifier reads. The adapter adds no check.
//! Tokens rmcp holds are handed to the kit's redaction after each authorization.

use std::sync::{Arc, Mutex as StdMutex};
use std::time::Duration;

use mcp_harness_kit::{AuthConfig, Env, Kind, StepError, Transport, callback_params, secret};
use rmcp::transport::auth::{
    AuthClient, AuthError, AuthorizationManager, AuthorizationRequest, OAuthState,
};
use tokio::sync::Mutex;

/// The last `WWW-Authenticate` challenge a request met (401 or 403), noted by the error
/// classification (`failure::rmcp_link`) and taken by the step that failed on it.
static CHALLENGE: StdMutex<Option<String>> = StdMutex::new(None);

/// Notes a challenge seen in an error chain.
pub fn note_challenge(challenge: &str) {
    *CHALLENGE.lock().unwrap_or_else(|p| p.into_inner()) = Some(challenge.to_owned());
}

/// Takes the challenge noted since the last call.
pub fn take_challenge() -> Option<String> {
    CHALLENGE.lock().unwrap_or_else(|p| p.into_inner()).take()
}

/// How many times one step may send the user to authorize.
pub const AUTHORIZATIONS_PER_STEP: usize = 2;

/// A trial's OAuth client: rmcp's manager, shared by every transport the trial builds.
pub struct OAuth {
    manager: Arc<Mutex<AuthorizationManager>>,
    auth: AuthConfig,
    url: String,
    ca_file: Option<String>,
    timeout: Duration,
}

/// rmcp's OAuth errors in the contract's kinds: a destination its policy refused before
/// connecting is `insecure_url` (rmcp's fixed wording for that one condition is the only way
/// to tell it: its error type is private), the rest `auth_failed`.
pub fn auth_error(error: &AuthError) -> StepError {
    let text = mcp_harness_kit::chain_text(error);
    if text.contains("address not allowed for this resource") {
        return StepError::new(Kind::InsecureUrl, text);
    }
    StepError::new(Kind::AuthFailed, text)
}

impl OAuth {
    /// The trial's OAuth client, when it is an authorization trial over HTTP.
    pub async fn for_trial(env: &Env) -> Result<Option<OAuth>, StepError> {
        let (Some(auth), Transport::Http { url, ca_file }) = (&env.auth, &env.transport) else {
            return Ok(None);
        };
        let manager = AuthorizationManager::new(url.as_str())
            .await
            .map_err(|e| auth_error(&e))?;
        Ok(Some(OAuth {
            manager: Arc::new(Mutex::new(manager)),
            auth: auth.clone(),
            url: url.clone(),
            ca_file: ca_file.clone(),
            timeout: env.timeout.unwrap_or(Duration::from_secs(10)),
        }))
    }

    /// rmcp's `AuthClient` on `http`, sharing this trial's manager (`AuthClient::new` takes a
    /// manager of its own; it is replaced at once by the shared one).
    pub async fn client(
        &self,
        http: reqwest::Client,
    ) -> Result<AuthClient<reqwest::Client>, StepError> {
        let own = AuthorizationManager::new(self.url.as_str())
            .await
            .map_err(|e| auth_error(&e))?;
        let mut client = AuthClient::new(http, own);
        client.auth_manager = self.manager.clone();
        Ok(client)
    }

    /// The application's answer to `challenge`: rmcp's authorization, the user's part headless.
    pub async fn authorize(&self, challenge: &str) -> Result<(), StepError> {
        let mut guard = self.manager.lock().await;
        let placeholder = AuthorizationManager::new(self.url.as_str())
            .await
            .map_err(|e| auth_error(&e))?;
        let mut state = OAuthState::Unauthorized(std::mem::replace(&mut *guard, placeholder));
        let outcome = self.run(&mut state, challenge).await;
        // Whatever happened, the manager goes back where the transports find it.
        *guard = match state {
            OAuthState::Unauthorized(manager) | OAuthState::Authorized(manager) => manager,
            OAuthState::Session(session) => session.auth_manager,
            _ => {
                return Err(StepError::new(
                    Kind::AuthFailed,
                    "rmcp left its OAuth state in a form this adapter does not use",
                ));
            }
        };
        if let Ok((_, Some(tokens))) = guard.get_credentials().await
            && let Ok(value) = serde_json::to_value(&tokens)
        {
            for name in ["access_token", "refresh_token"] {
                if let Some(token) = value.get(name).and_then(|t| t.as_str()) {
                    secret(token);
                }
            }
        }
        outcome
    }

    async fn run(&self, state: &mut OAuthState, challenge: &str) -> Result<(), StepError> {
        let mut request = AuthorizationRequest::new(self.auth.redirect_uri.as_str())
            .with_client_name("mcp-harness rmcp adapter")
            .with_challenge(challenge);
        if let Some(id) = &self.auth.client_id {
            request = request.with_preregistered_client(id.as_str());
            if let Some(client_secret) = &self.auth.client_secret {
                request = request.with_client_secret(client_secret.as_str());
            }
        }
        if let Some(url) = &self.auth.client_metadata_url {
            request = request.with_client_metadata_url(url.as_str());
        }
        state
            .start_authorization(request)
            .await
            .map_err(|e| auth_error(&e))?;
        let url = state
            .get_authorization_url()
            .await
            .map_err(|e| auth_error(&e))?;
        let location =
            mcp_harness_kit::headless_authorize(&url, self.ca_file.as_deref(), self.timeout)
                .await?;
        if let Some(code) = callback_params(&location).get("code") {
            secret(code);
        }
        state
            .handle_callback_url(&location)
            .await
            .map_err(|e| auth_error(&e))
    }
}

//! What the authorization side has issued and seen in one trial, and how its secrets are
//! shown in the transcript: by labels numbered in issue order (`[code 1]`, `[refresh 2]`),
//! which are deterministic, so snapshots stay stable and wire checks can name them.

use mcp_harness_scenarios::model::auth::ClientAuth;

use super::Server;

/// A registered client (pre-registered, or registered dynamically at one server).
#[derive(Clone)]
pub struct Client {
    /// The server it is registered with.
    pub server: Server,
    /// Its `client_id`.
    pub id: String,
    /// Its secret, for `client_secret_basic` and `client_secret_post`.
    pub secret: Option<String>,
    /// Its token endpoint authentication method.
    pub method: ClientAuth,
    /// Its registered redirect URIs.
    pub redirect_uris: Vec<String>,
}

/// An authorization code and the request it answered.
pub struct Code {
    /// The code.
    pub value: String,
    /// The server that issued it.
    pub server: Server,
    /// The client it was issued to.
    pub client_id: String,
    /// The authorization request's `redirect_uri`, if it had one.
    pub redirect_uri: Option<String>,
    /// The request's `code_challenge` and its method, if PKCE was used.
    pub challenge: Option<(String, String)>,
    /// The request's `resource`, if any.
    pub resource: Option<String>,
    /// The request's `scope`, split.
    pub scopes: Vec<String>,
    /// Redeemed already (a code works once).
    pub used: bool,
}

/// An access token.
pub struct Access {
    /// The token.
    pub value: String,
    /// The server that issued it.
    pub server: Server,
    /// Its audience: the `resource` it was issued for.
    pub audience: String,
    /// Its scopes.
    pub scopes: Vec<String>,
    /// How many MCP requests it authorized.
    pub uses: u32,
    /// The client it was issued to.
    pub client_id: String,
    /// Revoked with its grant (a rotated refresh token was used again).
    pub revoked: bool,
    /// The thumbprint of the key a DPoP-bound token is bound to (`cnf.jkt`).
    pub jkt: Option<String>,
}

/// A refresh token.
pub struct Refresh {
    /// The token.
    pub value: String,
    /// The server that issued it.
    pub server: Server,
    /// The client it belongs to.
    pub client_id: String,
    /// The audience and scopes of the grant.
    pub audience: String,
    /// The scopes of the grant.
    pub scopes: Vec<String>,
    /// Still usable (a rotated one is not).
    pub valid: bool,
}

/// Everything issued and seen so far.
#[derive(Default)]
pub struct State {
    /// Registered clients.
    pub clients: Vec<Client>,
    /// Codes, in issue order (their labels count from 1).
    pub codes: Vec<Code>,
    /// Access tokens, in issue order.
    pub tokens: Vec<Access>,
    /// Refresh tokens, in issue order.
    pub refresh: Vec<Refresh>,
    /// Authorization requests answered so far, by server (first, second).
    pub authorizations: [usize; 2],
    /// Dynamic registrations so far, by server.
    pub registrations: [usize; 2],
    /// MCP requests authorized by the first server's tokens.
    pub first_server_uses: u32,
    /// Whether PRM now names the second server.
    pub migrated: bool,
    /// Every secret made or received, for the runner.
    pub secrets: Vec<String>,
    /// The `jti` of every DPoP proof accepted (each is good once).
    pub dpop_jtis: Vec<String>,
}

impl State {
    /// The client `id` registered with `server`.
    pub fn client(&self, server: Server, id: &str) -> Option<&Client> {
        self.clients
            .iter()
            .find(|c| c.server == server && c.id == id)
    }

    /// The label of a value that is a secret this trial issued or knows, if it is one.
    pub fn secret_label(&self, value: &str) -> Option<String> {
        if let Some(i) = self.codes.iter().position(|c| c.value == value) {
            return Some(format!("[code {}]", i + 1));
        }
        if let Some(i) = self.tokens.iter().position(|t| t.value == value) {
            return Some(format!("[access token {}]", i + 1));
        }
        if let Some(i) = self.refresh.iter().position(|r| r.value == value) {
            return Some(format!("[refresh {}]", i + 1));
        }
        if self
            .clients
            .iter()
            .any(|c| c.secret.as_deref() == Some(value))
        {
            return Some("[client secret]".to_owned());
        }
        self.secrets
            .iter()
            .any(|s| s == value)
            .then(|| "[secret]".to_owned())
    }

    /// Keeps a secret the client sent, for redaction.
    pub fn received(&mut self, value: &str) {
        if !value.is_empty() && !self.secrets.iter().any(|s| s == value) {
            self.secrets.push(value.to_owned());
        }
    }
}

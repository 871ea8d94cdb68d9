//! The authorization server fake: what an authorization case's MCP origin and its
//! authorization server(s) serve, played from `server.auth` (see
//! `mcp_harness_scenarios::model::auth`).
//!
//! It lives beside the MCP endpoint in the in-process HTTPS fake and shares its transcript:
//! extra TLS listeners on `127.0.0.1:0` with the run's `localhost` certificate for the
//! authorization server (`as`), a second origin (`as2`: a second authorization server after
//! a migration, and the target of cross-origin redirects) and, when a case asks for `http://`
//! endpoints, a plain listener (`as_http`). Every request to them is recorded as an
//! `http_request` with its role, endpoint and labelled parameters, so wire checks can judge
//! the OAuth side like the MCP side, while no secret reaches the transcript; every secret
//! made or received is kept for the runner, which redacts it from what the client printed.
//!
//! | module | role |
//! |---|---|
//! | `state` | clients, codes, tokens, refresh tokens; labels for the transcript |
//! | `metadata` | PRM and authorization server metadata documents and where they answer |
//! | `grant` | `/authorize`, `/token`, `/register`, the client metadata document |
//! | `bearer` | the MCP endpoint as a protected resource: 401/403 challenges |
//! | `routes` | requests to auth paths: dispatch, recording |
//! | `secret` | random values, PKCE, Basic credentials |
//! | `machine` | the machine-to-machine client: its secret or key, JWT assertions |
//! | `dpop` | DPoP proofs at the token and MCP endpoints, key-bound tokens, nonces |

mod bearer;
mod dpop;
mod grant;
mod machine;
mod metadata;
mod routes;
mod secret;
mod state;

use std::sync::{Mutex, PoisonError};

use mcp_harness_scenarios::model::auth::{AuthScript, ClientAuth, IssuerOrigin, MachineAuth};

pub use routes::{mcp_origin_request, router};
use state::{Client, State};

/// The origins of an authorization trial, by the role the transcript names them with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The MCP origin.
    Mcp,
    /// The authorization server's own origin.
    As,
    /// The second origin.
    As2,
    /// The plain-HTTP listener playing the first authorization server.
    AsHttp,
}

impl Role {
    /// The role's name in the transcript.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Mcp => "mcp",
            Role::As => "as",
            Role::As2 => "as2",
            Role::AsHttp => "as_http",
        }
    }
}

/// Which authorization server: the first (named by PRM from the start) or the second (after
/// a migration).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Server {
    /// The first authorization server.
    First,
    /// The second one, on the `as2` origin.
    Second,
}

/// The ports of the trial's origins.
#[derive(Debug, Clone, Copy)]
pub struct Ports {
    /// The MCP origin.
    pub mcp: u16,
    /// The authorization server's origin, unless it is the MCP origin.
    pub auth: Option<u16>,
    /// The second origin.
    pub as2: u16,
    /// The plain-HTTP listener, when the case asks for `http://` endpoints.
    pub plain: Option<u16>,
}

/// One trial's authorization side.
pub struct Auth {
    script: AuthScript,
    redirect_uri: String,
    ports: Ports,
    state: Mutex<State>,
    /// The machine-to-machine client, when the case has one.
    machine: Option<machine::Machine>,
    /// The DPoP nonces the token endpoint and the MCP endpoint demand (when the case says).
    dpop_nonces: (String, String),
}

/// Written by hand: the state holds secrets.
impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Auth")
            .field("ports", &self.ports)
            .finish_non_exhaustive()
    }
}

/// The pre-registered client's id.
pub const PRE_REGISTERED_ID: &str = "mcp-harness-client";
/// Where the MCP origin serves the client metadata document.
pub const CLIENT_METADATA_PATH: &str = "/client-metadata.json";

impl Auth {
    /// The authorization side of a trial whose origins listen on `ports`; `redirect_uri` is
    /// the one the client is registered with.
    pub fn new(script: AuthScript, redirect_uri: String, ports: Ports) -> Auth {
        let mut state = State::default();
        if let Some(method) = script.client.pre_registered {
            let secret = (method != ClientAuth::None).then(|| secret::fresh("cs-"));
            state.secrets.extend(secret.clone());
            state.clients.push(Client {
                server: Server::First,
                id: PRE_REGISTERED_ID.to_owned(),
                secret,
                method,
                redirect_uris: vec![redirect_uri.clone()],
            });
        }
        let machine = script.client_credentials.map(machine::Machine::new);
        if let Some(m) = &machine {
            state.secrets.extend(m.secret.clone());
            state.secrets.extend(m.private_pem.clone());
            // A secret client is checked like any registered one; an assertion is verified
            // against the key instead (`grant.rs`).
            let method = match m.method {
                MachineAuth::ClientSecretBasic => Some(ClientAuth::Basic),
                MachineAuth::ClientSecretPost => Some(ClientAuth::Post),
                MachineAuth::PrivateKeyJwt => None,
            };
            if let Some(method) = method {
                state.clients.push(Client {
                    server: Server::First,
                    id: machine::MACHINE_ID.to_owned(),
                    secret: m.secret.clone(),
                    method,
                    redirect_uris: Vec::new(),
                });
            }
        }
        Auth {
            script,
            redirect_uri,
            ports,
            state: Mutex::new(state),
            machine,
            dpop_nonces: (secret::fresh("asn-"), secret::fresh("rsn-")),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The variables the client is handed besides the redirect URI (which the runner
    /// owns): the pre-registered client, the metadata document's URL, the local origins.
    pub fn vars(&self) -> Vec<(&'static str, String)> {
        let mut vars = Vec::new();
        if let Some(method) = self.script.client.pre_registered {
            vars.push(("MCP_HARNESS_AUTH_CLIENT_ID", PRE_REGISTERED_ID.to_owned()));
            // The authorization server the client is registered with: a library that binds
            // credentials to their issuer (2026-07-28) must be told which.
            vars.push(("MCP_HARNESS_AUTH_CLIENT_ISSUER", self.issuer(Server::First)));
            // How the client is registered to authenticate at the token endpoint: a user of a
            // pre-registered client knows it, and some libraries must be told (CLIENTS.md).
            vars.push((
                "MCP_HARNESS_AUTH_CLIENT_AUTH_METHOD",
                method.as_str().to_owned(),
            ));
            let state = self.state();
            if let Some(secret) = state.clients.first().and_then(|c| c.secret.clone()) {
                vars.push(("MCP_HARNESS_AUTH_CLIENT_SECRET", secret));
            }
        }
        if let Some(m) = &self.machine {
            vars.push(("MCP_HARNESS_CLIENT_CREDENTIALS", m.handed(self.dpop())));
        }
        if self.script.client.metadata_document {
            vars.push((
                "MCP_HARNESS_AUTH_CLIENT_METADATA_URL",
                self.client_metadata_url(),
            ));
        }
        let mut origins = vec![self.origin(Role::Mcp), self.origin(Role::As2)];
        if self.ports.auth.is_some() {
            origins.insert(1, self.origin(Role::As));
        }
        // The plain listener is allowed as a destination too: what must stop a client there
        // is its scheme (authorization endpoints are https only), which is what the case
        // judges, not the destination policy.
        if self.ports.plain.is_some() {
            origins.push(self.origin(Role::AsHttp));
        }
        vars.push(("MCP_HARNESS_LOCAL_ORIGINS", origins.join(" ")));
        vars
    }

    /// Every secret made or received so far (tokens, codes, refresh tokens, client secrets,
    /// verifiers), for the runner to redact.
    pub fn secrets(&self) -> Vec<String> {
        self.state().secrets.clone()
    }

    /// The origin of a role, `https://localhost:PORT` (`http://` for the plain listener).
    pub fn origin(&self, role: Role) -> String {
        match role {
            Role::Mcp => format!("https://localhost:{}", self.ports.mcp),
            Role::As => format!(
                "https://localhost:{}",
                self.ports.auth.unwrap_or(self.ports.mcp)
            ),
            Role::As2 => format!("https://localhost:{}", self.ports.as2),
            Role::AsHttp => format!(
                "http://localhost:{}",
                self.ports.plain.unwrap_or(self.ports.mcp)
            ),
        }
    }

    /// The role whose origin the first authorization server is served from.
    fn first_role(&self) -> Role {
        match self.script.issuer.origin {
            IssuerOrigin::Mcp => Role::Mcp,
            IssuerOrigin::Separate => Role::As,
        }
    }

    /// The authorization server a role's origin plays, if any.
    pub fn server_at(&self, role: Role) -> Option<Server> {
        match role {
            Role::As | Role::AsHttp => Some(Server::First),
            Role::As2 => Some(Server::Second),
            Role::Mcp => (self.first_role() == Role::Mcp).then_some(Server::First),
        }
    }

    /// An authorization server's issuer.
    pub fn issuer(&self, server: Server) -> String {
        let origin = match server {
            Server::First => self.origin(self.first_role()),
            Server::Second => self.origin(Role::As2),
        };
        format!("{origin}{}", self.issuer_path())
    }

    fn issuer_path(&self) -> &str {
        self.script.issuer.path.as_deref().unwrap_or("")
    }

    /// The MCP endpoint's canonical URI.
    pub fn resource(&self) -> String {
        format!("{}/mcp", self.origin(Role::Mcp))
    }

    /// The client metadata document's URL.
    pub fn client_metadata_url(&self) -> String {
        format!("{}{CLIENT_METADATA_PATH}", self.origin(Role::Mcp))
    }

    /// The port of the second origin (a cross-origin redirect's target).
    pub fn other_origin_port(&self) -> u16 {
        self.ports.as2
    }

    /// `value` with every harness origin written by its role (`https://{as}`), and the
    /// redirect URI as `[redirect uri]`, for the transcript.
    fn normalize(&self, value: &str) -> String {
        if value == self.redirect_uri {
            return "[redirect uri]".to_owned();
        }
        let mut out = value.to_owned();
        let mut roles = vec![Role::Mcp, Role::As2];
        if self.ports.auth.is_some() {
            roles.push(Role::As);
        }
        if self.ports.plain.is_some() {
            roles.push(Role::AsHttp);
        }
        for role in roles {
            let origin = self.origin(role);
            let (scheme, rest) = origin.split_once("://").unwrap_or(("", &origin));
            out = out.replace(&origin, &format!("{scheme}://{{{}}}", role.as_str()));
            out = out.replace(
                &rest.replace("localhost", "127.0.0.1"),
                &format!("{{{}}}", role.as_str()),
            );
        }
        if let Some((redirect_origin, _)) = self
            .redirect_uri
            .strip_prefix("http://")
            .and_then(|r| r.split_once('/'))
        {
            out = out.replace(redirect_origin, "{redirect}");
        }
        out
    }
}

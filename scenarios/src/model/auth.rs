//! `server.auth`: the authorization side of an HTTPS case. With it the MCP endpoint is a
//! protected resource (every request needs a bearer token its authorization server issued
//! for it), and the HTTPS fake also plays that authorization server on loopback TLS
//! listeners of its own (`fakes/src/http/auth/`): Protected Resource Metadata, authorization
//! server metadata, `/authorize`, `/token`, `/register` and a client metadata document.
//! Every member has a default, so `"auth": {}` is the common case: PRM at the path-inserted
//! well-known URL named in the 401's `resource_metadata`, an authorization server on an
//! origin of its own with RFC 8414 metadata advertising S256 and dynamic registration, each
//! authorization approved, tokens with a refresh token.
//!
//! Everything here is data the fake plays; the secrets it makes (codes, tokens, client
//! secrets) are random per trial and never written anywhere but to the client.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

fn yes() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_default<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

/// The authorization side of a case (HTTPS only).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AuthScript {
    /// Where and what Protected Resource Metadata (RFC 9728) the MCP origin serves.
    #[serde(default, skip_serializing_if = "is_default")]
    pub prm: PrmScript,
    /// Where the authorization server lives (its issuer).
    #[serde(default, skip_serializing_if = "is_default")]
    pub issuer: IssuerScript,
    /// The authorization server's metadata and what it advertises.
    #[serde(default, skip_serializing_if = "is_default")]
    pub metadata: AsMetadataScript,
    /// What the client is given to identify itself (besides dynamic registration, which the
    /// metadata's `registration` offers).
    #[serde(default, skip_serializing_if = "is_default")]
    pub client: ClientScript,
    /// What `/authorize` does, one entry per authorization request in order; the last entry
    /// repeats. Default `["approve"]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub authorize: Vec<AuthorizeAttempt>,
    /// The tokens `/token` issues.
    #[serde(default, skip_serializing_if = "is_default")]
    pub tokens: TokenScript,
    /// The `scope` parameter of the MCP endpoint's 401 challenge (absent when not given), e.g.
    /// `"mcp:read"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub challenge_scope: Option<String>,
    /// Step-up: a `tools/call` of one tool needs more scope than the first authorization
    /// asked for, and is answered 403 `insufficient_scope` until a token carries it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_up: Option<StepUp>,
    /// Authorization server migration: after this many MCP POST requests authorized by the first
    /// authorization server's tokens, PRM names a second one (its own origin, `as2`, with the
    /// same behaviour but its own registrations) and the first one's tokens are answered 401
    /// `invalid_token`; the first server then refuses refreshes (`invalid_grant`) and
    /// authorizations (an `invalid_target` error redirect) for the resource. The client must
    /// find the new server through PRM and register anew there (credentials are keyed by
    /// issuer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub migrate_after_requests: Option<u32>,
    /// Machine-to-machine (the `client_credentials` extension): a client registered beforehand
    /// that authenticates with this method and obtains tokens by the `client_credentials`
    /// grant, without a user, an authorization request or a registration. The client is
    /// handed its credentials in `MCP_HARNESS_CLIENT_CREDENTIALS` (a JSON object: `client_id`,
    /// `method`, and `client_secret` or `private_key_pem` with `alg` `ES256`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_credentials: Option<MachineAuth>,
    /// DPoP (RFC 9449, the MCP DPoP extension): the authorization server advertises
    /// `dpop_signing_alg_values_supported` (`ES256`), wants a DPoP proof on every token
    /// request and binds the token it issues to the proof's key (`token_type` `DPoP`); the MCP
    /// endpoint then wants `Authorization: DPoP <token>` with a proof by that key naming the
    /// token's hash (`ath`). Either side may first answer `use_dpop_nonce`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop: Option<DpopScript>,
    /// The HTTP status of every well-known metadata location that serves nothing (Protected
    /// Resource Metadata and authorization server metadata), default 404: a 4xx other than
    /// 404 (400, 401, 403, 405, 410…) as gateways and servers answer unknown paths, after
    /// which a client still tries the next location.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing_status: Option<u16>,
    /// SSRF cases: one discovered URL replaced by the case's (only with
    /// `"network": "isolated"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discovered_url: Option<super::auth_ssrf::DiscoveredUrl>,
}

/// Where the MCP origin serves Protected Resource Metadata, and what it says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PrmScript {
    /// The one location that answers (every other PRM location answers 404).
    #[serde(default, skip_serializing_if = "is_default")]
    pub at: PrmAt,
    /// Name the document's URL in the 401's `WWW-Authenticate` as `resource_metadata`.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub in_challenge: bool,
    /// The document's `resource`.
    #[serde(default, skip_serializing_if = "is_default")]
    pub resource: PrmResource,
    /// The document's `scopes_supported` (absent when not given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes_supported: Option<Vec<String>>,
}

impl Default for PrmScript {
    fn default() -> Self {
        PrmScript {
            at: PrmAt::default(),
            in_challenge: true,
            resource: PrmResource::default(),
            scopes_supported: None,
        }
    }
}

/// Where Protected Resource Metadata is served on the MCP origin.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PrmAt {
    /// The path-inserted well-known URL, `/.well-known/oauth-protected-resource/mcp`.
    #[default]
    Path,
    /// The root well-known URL, `/.well-known/oauth-protected-resource`.
    Root,
    /// A URL no well-known rule builds, `/custom/metadata/prm.json` (only `resource_metadata`
    /// finds it: use with `in_challenge`).
    Custom,
    /// Nowhere: no PRM at all (2025-03-26, where the client finds the authorization server at
    /// the MCP origin: use with `issuer.origin: "mcp"`).
    None,
}

/// The `resource` value the PRM document names.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PrmResource {
    /// The resource identifier the document's URL was built from (RFC 9728 §3.3): the MCP
    /// endpoint's URI, `https://localhost:PORT/mcp`, at the path-inserted and the custom
    /// location, the bare origin `https://localhost:PORT` at the root well-known URL.
    #[default]
    Canonical,
    /// The MCP endpoint's URI `https://localhost:PORT/mcp` wherever the document is: at the
    /// root well-known URL, which is built from the bare origin, a client must not use it
    /// (RFC 9728 §3.3).
    Endpoint,
    /// Another resource on the same origin, `https://localhost:PORT/other`: a client must not
    /// use this metadata (RFC 9728 §3.3).
    Other,
}

/// Where the authorization server lives.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IssuerScript {
    /// The origin of the issuer.
    #[serde(default, skip_serializing_if = "is_default")]
    pub origin: IssuerOrigin,
    /// A path the issuer URL carries, e.g. `/tenant1` (the well-known locations then insert
    /// or append it; the endpoints live below it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

/// The origin the authorization server is served from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum IssuerOrigin {
    /// An origin of its own, `https://localhost:AS_PORT` (role `as` in the transcript).
    #[default]
    Separate,
    /// The MCP origin itself (2025-03-26: metadata at the MCP origin's root, and the
    /// `/authorize`, `/token`, `/register` fallbacks there).
    Mcp,
}

/// The authorization server's metadata.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AsMetadataScript {
    /// The well-known locations that answer with the metadata, each `oauth` (RFC 8414,
    /// `/.well-known/oauth-authorization-server`, path-inserted for an issuer with a path),
    /// `openid` (OpenID Connect discovery, `/.well-known/openid-configuration`, path-inserted)
    /// or `openid_append` (the issuer's path then `/.well-known/openid-configuration`; an
    /// issuer with a path only). Every other location answers 404. Empty: no metadata at all
    /// (2025-03-26 fallbacks). Default `["oauth"]`.
    #[serde(default = "oauth_only", skip_serializing_if = "is_oauth_only")]
    pub at: Vec<AsMetadataAt>,
    /// The `issuer` the document names.
    #[serde(default, skip_serializing_if = "is_default")]
    pub issuer: IssuerValue,
    /// `code_challenge_methods_supported`; `null` leaves the member out. Default `["S256"]`.
    #[serde(default = "s256", skip_serializing_if = "is_s256")]
    pub code_challenge_methods_supported: Option<Vec<String>>,
    /// `token_endpoint_auth_methods_supported` (absent when not given: RFC 8414's default is
    /// `client_secret_basic`). A dynamically registered client gets the method it asks for
    /// when listed here, else the first one listed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    /// Advertise `registration_endpoint` (dynamic client registration, `/register`).
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub registration: bool,
    /// Advertise `client_id_metadata_document_supported: true`: a `client_id` equal to the
    /// client metadata document's URL is accepted.
    #[serde(default, skip_serializing_if = "is_false")]
    pub client_id_metadata_document_supported: bool,
    /// Advertise `authorization_response_iss_parameter_supported: true` (RFC 9207): an
    /// approved authorization's redirect then carries `iss`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub iss_parameter_supported: bool,
    /// `scopes_supported` in the metadata (absent when not given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes_supported: Option<Vec<String>>,
    /// Name `http://` URLs for `authorization_endpoint`, `token_endpoint` and
    /// `registration_endpoint` (a plain listener, role `as_http`, that plays the same server):
    /// a client must refuse them.
    #[serde(default, skip_serializing_if = "is_false")]
    pub plain_http_endpoints: bool,
}

fn oauth_only() -> Vec<AsMetadataAt> {
    vec![AsMetadataAt::Oauth]
}

fn is_oauth_only(at: &[AsMetadataAt]) -> bool {
    at == [AsMetadataAt::Oauth]
}

fn s256() -> Option<Vec<String>> {
    Some(vec!["S256".to_owned()])
}

fn is_s256(methods: &Option<Vec<String>>) -> bool {
    *methods == s256()
}

impl Default for AsMetadataScript {
    fn default() -> Self {
        AsMetadataScript {
            at: oauth_only(),
            issuer: IssuerValue::default(),
            code_challenge_methods_supported: s256(),
            token_endpoint_auth_methods_supported: None,
            registration: true,
            client_id_metadata_document_supported: false,
            iss_parameter_supported: false,
            scopes_supported: None,
            plain_http_endpoints: false,
        }
    }
}

/// A well-known location of authorization server metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AsMetadataAt {
    /// RFC 8414: `/.well-known/oauth-authorization-server[/path]`.
    Oauth,
    /// OpenID Connect discovery, path-inserted: `/.well-known/openid-configuration[/path]`.
    Openid,
    /// OpenID Connect discovery, path-appended: `/path/.well-known/openid-configuration`.
    OpenidAppend,
}

/// The `issuer` value the metadata document names.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum IssuerValue {
    /// The issuer the well-known URL was built from.
    #[default]
    Correct,
    /// Another issuer (`https://localhost:PORT/other-issuer`): a client must discard the
    /// document (RFC 8414 §3.3).
    Other,
}

/// What the client is handed to identify itself.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClientScript {
    /// A pre-registered client (`MCP_HARNESS_AUTH_CLIENT_ID`, and for `basic` or `post` a
    /// secret in `MCP_HARNESS_AUTH_CLIENT_SECRET`), registered with this token endpoint
    /// authentication method, which `/token` then requires. Known to the first authorization
    /// server only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pre_registered: Option<ClientAuth>,
    /// Serve a client metadata document (CIMD) and hand its URL to the client
    /// (`MCP_HARNESS_AUTH_CLIENT_METADATA_URL`, on the MCP origin). The authorization server
    /// accepts a `client_id` equal to that URL when it advertises
    /// `client_id_metadata_document_supported`, validating the request against the document
    /// it serves itself (its redirect URI, public client `none`), without fetching it.
    #[serde(default, skip_serializing_if = "is_false")]
    pub metadata_document: bool,
}

/// A token endpoint authentication method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ClientAuth {
    /// `client_secret_basic`: HTTP Basic with the id and secret.
    Basic,
    /// `client_secret_post`: `client_id` and `client_secret` in the form.
    Post,
    /// `none`: a public client, `client_id` in the form and no secret.
    None,
}

impl ClientAuth {
    /// The method's registered name.
    pub fn as_str(self) -> &'static str {
        match self {
            ClientAuth::Basic => "client_secret_basic",
            ClientAuth::Post => "client_secret_post",
            ClientAuth::None => "none",
        }
    }

    /// The method by its registered name.
    pub fn from_name(name: &str) -> Option<ClientAuth> {
        match name {
            "client_secret_basic" => Some(ClientAuth::Basic),
            "client_secret_post" => Some(ClientAuth::Post),
            "none" => Some(ClientAuth::None),
            _ => None,
        }
    }
}

/// DPoP as a case plays it: which side, if any, wants a server nonce in the proofs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DpopScript {
    /// The token endpoint answers a proof without its nonce 400 `use_dpop_nonce` with a
    /// `DPoP-Nonce` header (RFC 9449 §8).
    #[serde(default, skip_serializing_if = "is_false")]
    pub as_nonce: bool,
    /// The MCP endpoint answers a proof without its nonce 401 `use_dpop_nonce` with a
    /// `DPoP-Nonce` header (RFC 9449 §9).
    #[serde(default, skip_serializing_if = "is_false")]
    pub rs_nonce: bool,
}

/// How a machine-to-machine client authenticates at the token endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MachineAuth {
    /// `client_secret_basic`: HTTP Basic with the id and secret.
    ClientSecretBasic,
    /// `client_secret_post`: `client_id` and `client_secret` in the form.
    ClientSecretPost,
    /// `private_key_jwt` (RFC 7523 §2.2): a JWT assertion signed with ES256 by the private
    /// key the client is handed; the server verifies it with the public key.
    PrivateKeyJwt,
}

impl MachineAuth {
    /// The method's registered name.
    pub fn as_str(self) -> &'static str {
        match self {
            MachineAuth::ClientSecretBasic => "client_secret_basic",
            MachineAuth::ClientSecretPost => "client_secret_post",
            MachineAuth::PrivateKeyJwt => "private_key_jwt",
        }
    }
}

/// What `/authorize` does with one authorization request that names a known client and its
/// registered redirect URI (any other request is answered 400 without a redirect).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AuthorizeAttempt {
    /// 302 to the redirect URI with a fresh `code` and the request's `state`, and `iss` when
    /// the metadata advertises `iss_parameter_supported`.
    Approve,
    /// As `approve`, and always with the right `iss`.
    ApproveWithIss,
    /// As `approve`, but never with `iss` (even when advertised).
    ApproveWithoutIss,
    /// As `approve`, with an `iss` naming another issuer.
    ApproveWrongIss,
    /// As `approve`, with the issuer written with a trailing `/` (equal only after a
    /// normalization the client must not apply).
    ApproveNormalizedIss,
    /// A code, but a `state` that is not the request's.
    WrongState,
    /// A redirect with the request's `state` and a code `/token` refuses (`invalid_grant`):
    /// one it never issued, as an expired or already used code would be.
    WrongCode,
    /// `error=access_denied` (the user said no), with the request's `state`.
    Deny,
    /// `error=server_error` with an `error_description`, with the request's `state`.
    Error,
}

/// The tokens the authorization server issues.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TokenScript {
    /// `expires_in` of each access token, in seconds (default 3600).
    #[serde(default = "hour", skip_serializing_if = "is_hour")]
    pub expires_in: u64,
    /// Each access token is accepted for this many MCP POST requests, then answered 401
    /// `error="invalid_token"` (expiry made deterministic; GETs, whose timing races the
    /// POSTs, do not count). Absent: never expires.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid_for_requests: Option<u32>,
    /// What happens with refresh tokens.
    #[serde(default, skip_serializing_if = "is_default")]
    pub refresh: RefreshMode,
}

fn hour() -> u64 {
    3600
}

fn is_hour(n: &u64) -> bool {
    *n == 3600
}

impl Default for TokenScript {
    fn default() -> Self {
        TokenScript {
            expires_in: hour(),
            valid_for_requests: None,
            refresh: RefreshMode::default(),
        }
    }
}

/// Refresh tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RefreshMode {
    /// A refresh token with each authorization code exchange; a refresh keeps it valid.
    #[default]
    Issue,
    /// No refresh token.
    None,
    /// Rotation: each refresh returns a new refresh token and the old one stops working
    /// (`invalid_grant`); a rotated one used again revokes the whole grant, its refresh and
    /// access tokens alike (reuse detection, RFC 9700 §4.14.2).
    Rotate,
    /// A refresh token is issued, but every refresh is refused `invalid_grant` (the client
    /// must authorize again).
    Reject,
}

/// A step-up requirement on one tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StepUp {
    /// The tool whose `tools/call` needs more scope.
    pub tool: String,
    /// The scopes that call needs (space-separated), also the 403 challenge's `scope`, e.g.
    /// `"mcp:read mcp:write"`: a token granted without all of them gets 403
    /// `error="insufficient_scope"`.
    pub scope: String,
    /// Answer 403 whatever the token (a client must stop retrying after a few attempts).
    #[serde(default, skip_serializing_if = "is_false")]
    pub always: bool,
}

impl AuthScript {
    /// The authorization attempts, with the default (`approve`) when none is listed.
    pub fn attempt(&self, index: usize) -> AuthorizeAttempt {
        match self.authorize.as_slice() {
            [] => AuthorizeAttempt::Approve,
            list => list[index.min(list.len() - 1)],
        }
    }

    /// Why this script cannot be played, if it cannot: combinations that mean nothing.
    pub fn problem(&self) -> Option<String> {
        if self.prm.at == PrmAt::Custom && !self.prm.in_challenge {
            return Some("`prm.at: custom` is found only through the challenge: set `prm.in_challenge` (or leave it at its default, true)".into());
        }
        if self.prm.at == PrmAt::None && self.issuer.origin != IssuerOrigin::Mcp {
            return Some("`prm.at: none` (2025-03-26 discovery) needs `issuer.origin: \"mcp\"`: without PRM the client looks for the authorization server at the MCP origin".into());
        }
        if self.metadata.at.contains(&AsMetadataAt::OpenidAppend) && self.issuer.path.is_none() {
            return Some(
                "`metadata.at: openid_append` needs an issuer with a path (`issuer.path`)".into(),
            );
        }
        if let Some(path) = &self.issuer.path {
            let ok = path.starts_with('/')
                && path.len() > 1
                && !path.ends_with('/')
                && path[1..]
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '/');
            if !ok {
                return Some(format!(
                    "`issuer.path` {path:?}: expected a path like \"/tenant1\" (a leading /, no trailing /, letters, digits, - and _)"
                ));
            }
        }
        if let Some(status) = self.missing_status
            && !(400..500).contains(&status)
        {
            return Some(format!(
                "`missing_status` {status}: expected a 4xx status (400-499)"
            ));
        }
        if self.migrate_after_requests == Some(0) {
            return Some("`migrate_after_requests`: expected at least 1".into());
        }
        if self.tokens.valid_for_requests == Some(0) {
            return Some("`tokens.valid_for_requests`: expected at least 1".into());
        }
        if let Some(step_up) = &self.step_up
            && step_up.scope.split_whitespace().next().is_none()
        {
            return Some("`step_up.scope`: expected at least one scope".into());
        }
        None
    }
}

//! `server.auth.discovered_url`: one URL of the authorization side replaced by a URL of the
//! case's choosing, for the SSRF cases (`scenarios/ssrf/`), which run with
//! `"network": "isolated"`: the client's namespace has canaries on the internal addresses
//! such a URL names, and a DNS fake for the names (see `file::CaseFile::network`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Which URL the authorization side names differently, and what it names instead.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiscoveredUrl {
    /// Where the URL appears.
    pub at: DiscoveredAt,
    /// The URL, e.g. `https://169.254.169.254/latest/meta-data/` or
    /// `https://rebind.test:8443/.well-known/oauth-protected-resource/mcp`.
    pub url: String,
}

/// A URL of the authorization side a client discovers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DiscoveredAt {
    /// The 401 challenge's `resource_metadata` parameter.
    ResourceMetadata,
    /// The one entry of Protected Resource Metadata's `authorization_servers`.
    AuthorizationServer,
    /// The authorization server metadata's `authorization_endpoint`.
    AuthorizationEndpoint,
    /// The authorization server metadata's `token_endpoint`.
    TokenEndpoint,
    /// The authorization server metadata's `registration_endpoint`.
    RegistrationEndpoint,
}

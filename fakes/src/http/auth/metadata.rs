//! The metadata documents and the well-known locations where they answer: Protected
//! Resource Metadata on the MCP origin (RFC 9728: path-inserted, root, or a custom URL only
//! the challenge names) and authorization server metadata (RFC 8414 and OpenID Connect
//! discovery, path-inserted or path-appended for an issuer with a path). Only the locations
//! the case lists answer; every other well-known URL is a 404, so the order a client tries
//! them in shows in the transcript.

use mcp_harness_scenarios::model::auth::{
    AsMetadataAt, IssuerValue, MachineAuth, PrmAt, PrmResource,
};
use mcp_harness_scenarios::model::auth_ssrf::DiscoveredAt;
use serde_json::{Map, Value, json};

use super::{Auth, Role, Server};

/// The PRM path-inserted well-known path for the `/mcp` endpoint.
pub const PRM_PATH: &str = "/.well-known/oauth-protected-resource/mcp";
/// The root PRM well-known path.
pub const PRM_ROOT: &str = "/.well-known/oauth-protected-resource";
/// The custom PRM location.
pub const PRM_CUSTOM: &str = "/custom/metadata/prm.json";

const OAUTH: &str = "/.well-known/oauth-authorization-server";
const OPENID: &str = "/.well-known/openid-configuration";

/// Whether `path` is a PRM location a client might try.
pub fn is_prm_path(path: &str) -> bool {
    path.starts_with(PRM_ROOT) || path == PRM_CUSTOM
}

/// Whether `path` is an authorization server metadata location a client might try.
pub fn is_as_metadata_path(path: &str) -> bool {
    path.starts_with(OAUTH) || path.starts_with(OPENID) || path.ends_with(OPENID)
}

impl Auth {
    /// The path PRM answers at, if any.
    fn prm_path(&self) -> Option<&'static str> {
        match self.script.prm.at {
            PrmAt::Path => Some(PRM_PATH),
            PrmAt::Root => Some(PRM_ROOT),
            PrmAt::Custom => Some(PRM_CUSTOM),
            PrmAt::None => None,
        }
    }

    /// The resource identifier a correct PRM document names (RFC 9728 §3.3): the one its
    /// well-known URL was built from, so the bare MCP origin at the root well-known URL and
    /// the endpoint's URI elsewhere (or without PRM).
    pub fn published_resource(&self) -> String {
        match self.script.prm.at {
            PrmAt::Root => self.origin(Role::Mcp),
            PrmAt::Path | PrmAt::Custom | PrmAt::None => self.resource(),
        }
    }

    /// The PRM document's URL, for the challenge's `resource_metadata`.
    pub fn prm_url(&self) -> Option<String> {
        if let Some(url) = self.discovered(DiscoveredAt::ResourceMetadata) {
            return Some(url);
        }
        self.prm_path()
            .map(|p| format!("{}{p}", self.origin(Role::Mcp)))
    }

    /// The case's URL in place of the one at `at` (SSRF cases), if it names one there.
    fn discovered(&self, at: DiscoveredAt) -> Option<String> {
        let replaced = self.script.discovered_url.as_ref()?;
        (replaced.at == at).then(|| replaced.url.clone())
    }

    /// The PRM document, when `path` is where it answers.
    pub fn prm_document(&self, path: &str) -> Option<Value> {
        (self.prm_path() == Some(path)).then(|| {
            let prm = &self.script.prm;
            let resource = match prm.resource {
                PrmResource::Canonical => self.published_resource(),
                PrmResource::Endpoint => self.resource(),
                PrmResource::Other => format!("{}/other", self.origin(Role::Mcp)),
            };
            let server = match self.state().migrated {
                true => Server::Second,
                false => Server::First,
            };
            let mut doc = json!({
                "resource": resource,
                "authorization_servers": [self.issuer(server)],
                "bearer_methods_supported": ["header"],
            });
            if let Some(scopes) = &prm.scopes_supported {
                doc["scopes_supported"] = json!(scopes);
            }
            if let Some(url) = self.discovered(DiscoveredAt::AuthorizationServer) {
                doc["authorization_servers"] = json!([url]);
            }
            doc
        })
    }

    /// The metadata paths of the server's issuer that answer, by kind.
    fn as_metadata_paths(&self) -> Vec<String> {
        let issuer_path = self.issuer_path();
        self.script
            .metadata
            .at
            .iter()
            .map(|at| match at {
                AsMetadataAt::Oauth => format!("{OAUTH}{issuer_path}"),
                AsMetadataAt::Openid => format!("{OPENID}{issuer_path}"),
                AsMetadataAt::OpenidAppend => format!("{issuer_path}{OPENID}"),
            })
            .collect()
    }

    /// The authorization server metadata `server` answers at `path` (reached through the
    /// origin of `role`), if it answers there.
    pub fn as_metadata_document(&self, role: Role, server: Server, path: &str) -> Option<Value> {
        if role == Role::AsHttp || !self.as_metadata_paths().iter().any(|p| p == path) {
            return None;
        }
        let m = &self.script.metadata;
        let issuer = self.issuer(server);
        let endpoints = match (m.plain_http_endpoints, server) {
            (true, Server::First) => format!("{}{}", self.origin(Role::AsHttp), self.issuer_path()),
            _ => issuer.clone(),
        };
        let mut doc = Map::new();
        let shown_issuer = match m.issuer {
            IssuerValue::Correct => issuer.clone(),
            IssuerValue::Other => format!("{}/other-issuer", self.origin(Role::As2)),
        };
        doc.insert("issuer".into(), json!(shown_issuer));
        doc.insert(
            "authorization_endpoint".into(),
            json!(format!("{endpoints}/authorize")),
        );
        doc.insert("token_endpoint".into(), json!(format!("{endpoints}/token")));
        if m.registration {
            doc.insert(
                "registration_endpoint".into(),
                json!(format!("{endpoints}/register")),
            );
        }
        for (at, member) in [
            (
                DiscoveredAt::AuthorizationEndpoint,
                "authorization_endpoint",
            ),
            (DiscoveredAt::TokenEndpoint, "token_endpoint"),
            (DiscoveredAt::RegistrationEndpoint, "registration_endpoint"),
        ] {
            if let Some(url) = self.discovered(at) {
                doc.insert(member.into(), json!(url));
            }
        }
        doc.insert("response_types_supported".into(), json!(["code"]));
        let mut grants = vec!["authorization_code", "refresh_token"];
        if let Some(method) = self.script.client_credentials {
            grants.push("client_credentials");
            // The extension's metadata: the machine client's method, and ES256 for JWTs.
            if m.token_endpoint_auth_methods_supported.is_none() {
                doc.insert(
                    "token_endpoint_auth_methods_supported".into(),
                    json!([method.as_str()]),
                );
            }
            if method == MachineAuth::PrivateKeyJwt {
                doc.insert(
                    "token_endpoint_auth_signing_alg_values_supported".into(),
                    json!(["ES256"]),
                );
            }
        }
        doc.insert("grant_types_supported".into(), json!(grants));
        if self.script.dpop.is_some() {
            doc.insert("dpop_signing_alg_values_supported".into(), json!(["ES256"]));
        }
        if let Some(methods) = &m.code_challenge_methods_supported {
            doc.insert("code_challenge_methods_supported".into(), json!(methods));
        }
        if let Some(methods) = &m.token_endpoint_auth_methods_supported {
            doc.insert(
                "token_endpoint_auth_methods_supported".into(),
                json!(methods),
            );
        }
        if let Some(scopes) = &m.scopes_supported {
            doc.insert("scopes_supported".into(), json!(scopes));
        }
        if m.client_id_metadata_document_supported {
            doc.insert("client_id_metadata_document_supported".into(), json!(true));
        }
        if m.iss_parameter_supported {
            doc.insert(
                "authorization_response_iss_parameter_supported".into(),
                json!(true),
            );
        }
        if path.contains("openid-configuration") {
            // What OpenID Connect discovery requires besides, for libraries that check it.
            doc.insert("subject_types_supported".into(), json!(["public"]));
            doc.insert(
                "id_token_signing_alg_values_supported".into(),
                json!(["RS256"]),
            );
            doc.insert("jwks_uri".into(), json!(format!("{issuer}/jwks")));
        }
        Some(Value::Object(doc))
    }
}

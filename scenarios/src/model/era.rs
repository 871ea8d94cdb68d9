//! The protocol-era part of a scenario: which era the client is asked to speak
//! (`MCP_HARNESS_ERA`), which era the fake serves, the modern (2026-07-28) server's settings,
//! and the protocol-revision dimension (`revisions`), which runs one case once per revision.
//!
//! The legacy era (2024-11-05 to 2025-11-25) has an `initialize` handshake and, over HTTP,
//! sessions; the modern era (2026-07-28) has neither: every request carries the protocol
//! version and client capabilities in `_meta`, and `server/discover` replaces the handshake.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Scenario;

/// The modern protocol revision the harness knows.
pub const MODERN_VERSION: &str = "2026-07-28";

/// The version a legacy-era case has the client offer unless it says otherwise.
pub const LEGACY_DEFAULT_VERSION: &str = "2025-03-26";

/// The version a dual-era client offers in its fallback `initialize` unless the case says
/// otherwise (`MCP_HARNESS_LEGACY_PROTOCOL_VERSION`).
pub const DEFAULT_LEGACY_VERSION: &str = "2025-11-25";

/// Every protocol revision a case may list in `revisions`, oldest first.
pub const REVISIONS: [&str; 5] = [
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    MODERN_VERSION,
];

/// Whether `revision` belongs to the modern era (2026-07-28 and later).
pub fn is_modern(revision: &str) -> bool {
    revision >= MODERN_VERSION
}

/// The era the client is asked to speak (`MCP_HARNESS_ERA`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ClientEra {
    /// The `initialize` handshake (2024-11-05 to 2025-11-25), as when the variable is unset.
    Legacy,
    /// 2026-07-28 only: `_meta` on every request, `server/discover`, never `initialize`.
    Modern,
    /// Probe with `server/discover` first and fall back to `initialize` on a legacy answer.
    Dual,
}

impl ClientEra {
    /// The value of `MCP_HARNESS_ERA`.
    pub fn as_str(self) -> &'static str {
        match self {
            ClientEra::Legacy => "legacy",
            ClientEra::Modern => "modern",
            ClientEra::Dual => "dual",
        }
    }
}

/// The era the fake server speaks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ServerEra {
    /// A 2025-era server: `initialize`, sessions over HTTP, no `server/discover` unless a
    /// handler answers it (so a probe gets -32601 over stdio).
    #[default]
    Legacy,
    /// A 2026-07-28 server: every request must carry `_meta` with a supported protocol
    /// version and the client capabilities (else -32602, or -32022 listing the supported
    /// versions; HTTP 400); `initialize` is an unknown method (-32601; HTTP 404); over HTTP
    /// no sessions, GET and DELETE answer 405, and `Mcp-Method`/`Mcp-Name` must match the body.
    Modern,
    /// Both: a request carrying `_meta` protocol version (and `server/discover`) is served
    /// as by a modern server, anything else as by a legacy one.
    Dual,
}

/// Settings of the modern (and dual) fake.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModernScript {
    /// The protocol versions accepted in `_meta["io.modelcontextprotocol/protocolVersion"]`;
    /// any other gets -32022 (UnsupportedProtocolVersion) with these as `data.supported`.
    /// The built-in `server/discover` answer lists them as `supportedVersions`.
    #[serde(
        default = "default_supported",
        skip_serializing_if = "is_default_supported"
    )]
    pub supported_versions: Vec<String>,
    /// Add `resultType: "complete"` to scripted results that have no `resultType`
    /// (a modern server always sends it; turn off to play one that omits it).
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub add_result_type: bool,
    /// Check the HTTP request metadata headers (`MCP-Protocol-Version`, `Mcp-Method`,
    /// `Mcp-Name`) against the body and answer 400 with -32020 (HeaderMismatch) when one
    /// is missing or differs. Off, the headers are only recorded.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub check_headers: bool,
}

fn default_supported() -> Vec<String> {
    vec![MODERN_VERSION.to_owned()]
}

fn is_default_supported(v: &[String]) -> bool {
    v == default_supported().as_slice()
}

fn yes() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
}

/// The protocol version a client of `era` offers unless the case says otherwise: the
/// legacy era's `2025-03-26`, or the modern version for a modern or dual-era client.
pub fn default_protocol_version(era: Option<ClientEra>) -> &'static str {
    match era {
        None | Some(ClientEra::Legacy) => LEGACY_DEFAULT_VERSION,
        Some(ClientEra::Modern | ClientEra::Dual) => MODERN_VERSION,
    }
}

impl Default for ModernScript {
    /// The same as `"modern": {}`.
    fn default() -> Self {
        ModernScript {
            supported_versions: default_supported(),
            add_result_type: true,
            check_headers: true,
        }
    }
}

/// The contract's protocol versions for one trial: what the client offers
/// (`MCP_HARNESS_PROTOCOL_VERSION`) and, for a dual-era client, the version of its fallback
/// `initialize` (`MCP_HARNESS_LEGACY_PROTOCOL_VERSION`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContractVersions {
    /// `MCP_HARNESS_PROTOCOL_VERSION`.
    pub protocol: String,
    /// `MCP_HARNESS_LEGACY_PROTOCOL_VERSION`, set for dual-era clients only.
    pub legacy: Option<String>,
}

/// The versions a trial of `scenario` hands the client at `revision` (none: the case's own).
/// A revision sets the offered version; for a dual-era client a legacy revision sets the
/// fallback version instead, and the modern one stays the case's `protocol_version`.
pub fn contract_versions(scenario: &Scenario, revision: Option<&str>) -> ContractVersions {
    let dual = scenario.client_era == Some(ClientEra::Dual);
    let legacy_default = || {
        scenario
            .legacy_protocol_version
            .clone()
            .unwrap_or_else(|| DEFAULT_LEGACY_VERSION.to_owned())
    };
    match revision {
        Some(rev) if dual && !is_modern(rev) => ContractVersions {
            protocol: scenario.protocol_version.clone(),
            legacy: Some(rev.to_owned()),
        },
        Some(rev) => ContractVersions {
            protocol: rev.to_owned(),
            legacy: dual.then(legacy_default),
        },
        None => ContractVersions {
            protocol: scenario.protocol_version.clone(),
            legacy: dual.then(legacy_default),
        },
    }
}

/// The `_meta` keys of the modern era.
pub mod meta {
    /// The protocol version of a request.
    pub const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
    /// The client's capabilities on a request.
    pub const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
    /// The client's name and version on a request.
    pub const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
    /// The server's name and version on a result.
    pub const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
}

/// The protocol version a request's `_meta` names, if any.
pub fn meta_version(params: Option<&Value>) -> Option<&str> {
    params?.get("_meta")?.get(meta::PROTOCOL_VERSION)?.as_str()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eras_are_told_by_revision() {
        assert!(is_modern("2026-07-28"));
        assert!(!is_modern("2025-11-25"));
        assert!(REVISIONS.windows(2).all(|w| w[0] < w[1]));
    }
}

//! The 2026-07-28 ("modern") era of the protocol, kept apart from the legacy handshake era.
//!
//! A modern client never sends `initialize`: every request carries its protocol version,
//! client capabilities and client info in `params._meta` ([`meta`]). Connecting is a
//! `server/discover` probe that also tells a dual-era client which era the server speaks
//! ([`discover`]); results carry a `resultType`, and `input_required` results drive the multi
//! round-trip retries of [`mrtr`]; cacheable results are kept by `ttlMs` ([`cache`]).
//! The legacy code paths never call into this module, so legacy behaviour stays as it was.

pub(crate) mod cache;
pub(crate) mod discover;
pub(crate) mod meta;
pub(crate) mod mrtr;
pub(crate) mod ops;
pub(crate) mod param_headers;
pub(crate) mod seams;

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::handshake::Handshake;

pub use mrtr::InputHandler;

/// The modern protocol versions this client speaks.
pub const MODERN_PROTOCOL_VERSIONS: [&str; 1] = ["2026-07-28"];

/// The modern version offered unless the caller chooses another.
pub const LATEST_MODERN_PROTOCOL_VERSION: &str = "2026-07-28";

/// The legacy version a dual-era client offers in its fallback `initialize` by default.
pub const DEFAULT_LEGACY_FALLBACK_VERSION: &str = "2025-11-25";

/// `HeaderMismatch`: HTTP headers and body disagree.
pub(crate) const HEADER_MISMATCH: i64 = -32020;
/// `MissingRequiredClientCapabilityError`.
pub(crate) const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;
/// `UnsupportedProtocolVersionError`, with `data.supported` and `data.requested`.
pub(crate) const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

/// Whether a JSON-RPC error code is one only a modern server sends: it identifies the server
/// as modern, so a dual-era client must not fall back to `initialize` on it.
pub(crate) fn is_modern_error(code: i64) -> bool {
    matches!(
        code,
        HEADER_MISMATCH | MISSING_REQUIRED_CLIENT_CAPABILITY | UNSUPPORTED_PROTOCOL_VERSION
    )
}

/// Which protocol era the client speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Era {
    /// The `initialize` handshake (revisions up to 2025-11-25). The default.
    #[default]
    Legacy,
    /// Revision 2026-07-28 only: per-request `_meta`, never `initialize`.
    Modern,
    /// Detect the server's era: a `server/discover` probe first, `initialize` as the fallback.
    Dual,
}

/// What `connect` found: the legacy handshake, or a modern server.
#[derive(Debug, Clone, PartialEq)]
pub enum Connected {
    /// The server answered `initialize` (legacy era, or a dual-era fallback).
    Legacy(Handshake),
    /// The server speaks the modern era.
    Modern(Discovery),
}

/// A modern server as found by `server/discover`.
#[derive(Debug, Clone, PartialEq)]
pub struct Discovery {
    /// The protocol version the client uses with this server.
    pub version: String,
    /// The `DiscoverResult` as received; `None` when the era came from the per-origin cache
    /// or no probe was sent.
    pub result: Option<Value>,
    /// The server's self-reported `_meta["io.modelcontextprotocol/serverInfo"]`, if any
    /// (for display only).
    pub server_info: Option<Value>,
}

/// The era detected per HTTP origin, shared by every client built from the same options
/// (clones share it), so a second connection to an origin does not probe again.
#[derive(Clone, Default)]
pub struct EraCache(Arc<Mutex<HashMap<String, Connected>>>);

impl EraCache {
    pub(crate) fn get(&self, origin: &str) -> Option<Connected> {
        let map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        map.get(origin).cloned()
    }

    pub(crate) fn put(&self, origin: &str, found: Connected) {
        let mut map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        map.insert(origin.to_owned(), found);
    }
}

impl fmt::Debug for EraCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        f.debug_set().entries(map.keys()).finish()
    }
}

/// The origin (`scheme://host:port`) of a URL, the key of the era cache.
pub(crate) fn origin(url: &str) -> Option<String> {
    reqwest::Url::parse(url)
        .ok()
        .map(|u| u.origin().ascii_serialization())
}

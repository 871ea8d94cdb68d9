//! The trace context a plan's `connect` hands the client to propagate (CLIENTS.md § Trace
//! context): W3C Trace Context and Baggage values, which 2026-07-28 reserves `_meta` keys for.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A W3C trace context, each member as its HTTP header value would be.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TraceContext {
    /// `version-traceid-parentid-flags` in lower-case hex, e.g.
    /// `00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01`.
    pub traceparent: String,
    /// The W3C `tracestate` list (`vendor=value`, comma-separated), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tracestate: Option<String>,
    /// The W3C Baggage list (`key=value`, comma-separated), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baggage: Option<String>,
}

//! The reference MCP client of the conformance harness: small, strict, and fast.
//!
//! It implements the client boundary the harness checks (seed 000): the handshake with version
//! negotiation, pagination of every listing (tools, resources, resource templates, prompts)
//! that rejects repeated cursors, duplicate entries and pages that never end, `tools/call`
//! results (`isError` first, then `structuredContent`, then text blocks; every content block
//! as seen, binary data by its length and SHA-256), resources, prompts, completion, `ping`
//! and the log level, each only when the server declared the capability it needs,
//! per-request timeouts, cancellation with `notifications/cancelled`, a child-process shutdown
//! that escalates from closing stdin to SIGTERM to SIGKILL and always reaps, and Streamable HTTP
//! with sessions, verified TLS and a refusal of plain HTTP to remote hosts.
//!
//! | transport | status | module |
//! |---|---|---|
//! | stdio (newline-delimited JSON-RPC to a child process) | implemented | `transport::stdio` |
//! | Streamable HTTP 2025-03-26+ (POST + JSON or SSE, sessions, GET stream, TLS, bearer) | implemented | `transport::http` |
//! | 2026-07-28 era on both transports (`_meta`, `server/discover`, dual-era fallback, MRTR, `ttlMs` cache, `Mcp-Method`/`Mcp-Name`) | implemented, chosen by [`ClientOptions::era`] | `era`, `transport::http::modern` |
//! | tasks as requestor of `tools/call`: 2025-11-25 and the 2026-07-28 extension ([`Client::call_tool_as_task`]) | implemented | `tasks` |
//! | OAuth 2.1 authorization over HTTP (discovery, registration, PKCE, `state`/`iss`, `resource`, refresh, step-up) | implemented, with [`HttpOptions::auth`] | `auth` |
//! | HTTP+SSE (2024-11-05), as the fallback after a refused first POST | implemented | `transport::http::legacy_sse` |
//!
//! ```no_run
//! # async fn demo() -> Result<(), mcp_harness_client::Error> {
//! use mcp_harness_client::{Client, ClientOptions, StdioCommand};
//! let server = StdioCommand::from_argv(vec!["my-server".into()]).expect("non-empty argv");
//! let client = Client::connect_stdio(&server, ClientOptions::default()).await?;
//! let tools = client.list_tools().await?;
//! let output = client.call_tool("echo", serde_json::json!({"text": "hi"})).await?.output;
//! client.close().await;
//! # let _ = (tools, output); Ok(()) }
//! ```
//!
//! Over Streamable HTTP, with an extra CA to trust and a bearer token:
//!
//! ```no_run
//! # async fn demo() -> Result<(), mcp_harness_client::Error> {
//! use mcp_harness_client::{BearerToken, Client, ClientOptions, HttpOptions};
//! let http = HttpOptions {
//!     ca_files: vec!["ca.pem".into()],
//!     bearer_token: Some(BearerToken::new("token")),
//!     ..HttpOptions::default()
//! };
//! let client = Client::connect_http("https://localhost:8443/mcp", http, ClientOptions::default())
//!     .await?;
//! client.close().await;
//! # Ok(()) }
//! ```
//!
//! The `mcp-harness-driver` binary runs this client through the harness's driver contract
//! (see [`driver`]).
//!
//! The harness's deliberate defects build only with the `defects` feature, which the harness's
//! driver turns on. Without it the options have no `defects` field, so the library cannot
//! switch off its own checks (this example fails to compile unless the feature is on):
//!
#![cfg_attr(not(feature = "defects"), doc = "```compile_fail")]
#![cfg_attr(feature = "defects", doc = "```")]
//! let mut options = mcp_harness_client::ClientOptions::default();
//! assert!(options.defects.enable("allow-insecure-http"));
//! ```

#![warn(missing_docs)]

pub mod aggregate;
mod answers;
pub mod auth;
mod client;
mod content;
#[cfg(feature = "defects")]
mod defects;
pub mod driver;
pub mod era;
mod error;
mod handlers;
mod handshake;
mod icons;
mod jsonrpc;
mod listener;
mod listing;
mod options;
mod router;
mod schema;
mod seams;
mod session;
mod tasks;
pub mod telemetry;
mod tools;
mod trace;
mod transport;

pub use auth::{AuthOptions, AuthStore, PreRegistered, Secret, TokenEndpointAuthMethod, UserAgent};
pub use client::Client;
pub use era::{Connected, Discovery, Era, EraCache, InputHandler};
pub use error::{Error, ErrorKind};
pub use handlers::{HANDLED_METHODS, Handlers};
pub use handshake::{Handshake, LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS};
pub use options::{
    BearerToken, ClientOptions, DEFAULT_MAX_MESSAGE_BYTES, HttpOptions, StdioCommand,
};
/// The deliberate defects the harness's driver switches on (`--defect`); only with the
/// `defects` feature, which the library as published leaves off.
#[cfg(feature = "defects")]
#[doc(hidden)]
pub use seams::Defects;

/// How received bytes become messages, exposed for the fuzz targets in `fuzz/` (which must
/// exercise the real code); not a stable interface.
#[doc(hidden)]
pub mod decode {
    pub use crate::jsonrpc::{Incoming, classify, response_id};
    pub use crate::transport::framing::*;
}
pub use tasks::received::TASK_METHODS;
pub use tasks::{DEFAULT_POLL_INTERVAL, TaskCall, TaskOptions};
pub use tools::{ToolOutput, ToolResult};
pub use trace::TraceContext;
/// The destination policy for URLs a server names (SSRF): see `transport/http/security`.
pub use transport::http::security::{
    DestinationPolicy, GuardedResolver, check_discovered_url, is_internal,
};

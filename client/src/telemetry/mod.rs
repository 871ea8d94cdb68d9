//! Production traces and metrics of the reference client (issue 34): one CLIENT span per
//! JSON-RPC request it sends, by the OpenTelemetry conventions for MCP, and the operation and
//! session duration histograms.
//!
//! The library speaks the `opentelemetry` API only (the global tracer and meter, scope
//! `mcp-harness-client`): with no SDK installed every span is a no-op and the client sends
//! exactly what it sent before. The driver installs the SDK and the OTLP/HTTP exporter
//! ([`export`]) when the standard `OTEL_*` variables ask for it. Nothing secret is ever put in a
//! span: the attributes are built from the method, the id, names and URIs, never from
//! arguments, results, headers, tokens or answers (`spans.rs`).

pub mod export;
pub(crate) mod metrics;
pub(crate) mod seams;
pub(crate) mod spans;

/// The instrumentation scope of every span and metric the client makes.
pub const SCOPE: &str = "mcp-harness-client";

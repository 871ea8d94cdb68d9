//! A traces case's collection (CLIENTS.md § Traces): what the trial's loopback OTLP receiver
//! got from the client, once every secret the trial knows of was looked for and replaced.
//! The receiver itself is a fake (`mcp_harness_fakes::otlp`); the span checks read this.

use serde_json::Value;

/// What a traces trial collected.
#[derive(Debug, Clone, Default)]
pub struct TracesRun {
    /// The encoding the client was asked for (`http/protobuf` or `http/json`).
    pub asked: String,
    /// The spans, in the order received, normalised (the shape of a transcript `span`
    /// event) and with every secret replaced by a label.
    pub spans: Vec<Value>,
    /// The metrics' data points, normalised: `{"name", "unit", "attributes", "encoding"}`
    /// per point, secrets replaced.
    pub metrics: Vec<Value>,
    /// Export requests the receiver could not take, each saying why (an encoding it could
    /// not decode, a body past its cap): the request's path and the reason, never the body.
    pub rejected: Vec<String>,
    /// Where a secret was found before it was replaced: `"bearer token in attribute
    /// auth.header of span \"tools/call echo\""`, never the value (`CONTRACT-33`).
    pub leaks: Vec<String>,
}

//! A case that asks for the client's OpenTelemetry traces (CLIENTS.md § Traces): which OTLP
//! encoding the client is asked to export in, and the values the case plants that must never
//! appear in a span (besides the secrets the trial itself hands out: a bearer token, OAuth
//! codes, verifiers and tokens).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What a traces case asks of the client's telemetry.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Traces {
    /// The OTLP/HTTP encoding the client is asked for (`OTEL_EXPORTER_OTLP_PROTOCOL`):
    /// `http/protobuf` (the default) or `http/json`. The receiver takes either whatever was
    /// asked; the variable only says which one this case exercises.
    #[serde(default, skip_serializing_if = "is_default_encoding")]
    pub encoding: OtlpEncoding,
    /// Values the case plants that are sensitive (an elicitation answer to a `password`
    /// field, an argument marked secret): none may appear anywhere in the client's spans
    /// (`CONTRACT-33`). The trial's own secrets are always looked for too.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sensitive: Vec<String>,
}

/// An OTLP/HTTP encoding.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum OtlpEncoding {
    /// Binary protobuf, `application/x-protobuf`.
    #[default]
    #[serde(rename = "http/protobuf")]
    Protobuf,
    /// OTLP/JSON, `application/json`.
    #[serde(rename = "http/json")]
    Json,
}

impl OtlpEncoding {
    /// The value of `OTEL_EXPORTER_OTLP_PROTOCOL` that asks for it.
    pub fn protocol(self) -> &'static str {
        match self {
            OtlpEncoding::Protobuf => "http/protobuf",
            OtlpEncoding::Json => "http/json",
        }
    }
}

fn is_default_encoding(e: &OtlpEncoding) -> bool {
    *e == OtlpEncoding::Protobuf
}

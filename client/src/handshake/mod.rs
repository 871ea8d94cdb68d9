//! The `initialize` handshake of the legacy era: what we offer, which answers we accept, and
//! the exchange itself ([`exchange`]).
//!
//! The acceptance rules (a JSON-RPC error is `handshake_failed`, a bad negotiated version is
//! `unsupported_version`) are pure functions, tested without a server.

pub(crate) mod exchange;
pub(crate) mod seams;

use serde_json::{Value, json};

use crate::error::{Error, ErrorKind};

/// Protocol versions this client can speak, oldest first.
pub const SUPPORTED_PROTOCOL_VERSIONS: [&str; 4] =
    ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// The version offered unless the caller chooses another.
pub const LATEST_PROTOCOL_VERSION: &str = "2025-11-25";

/// What the server said in answer to `initialize`.
#[derive(Debug, Clone, PartialEq)]
pub struct Handshake {
    result: Value,
}

impl Handshake {
    /// The negotiated protocol version, when the server gave a string.
    pub fn protocol_version(&self) -> Option<&str> {
        self.result.get("protocolVersion").and_then(Value::as_str)
    }

    /// The server's `serverInfo`, exactly as received.
    pub fn server_info(&self) -> Option<&Value> {
        self.result.get("serverInfo")
    }

    /// The whole `initialize` result as received.
    pub fn result(&self) -> &Value {
        &self.result
    }

    /// A handshake whose result is taken as received (only a defect takes one so).
    #[cfg(feature = "defects")]
    pub(crate) fn received(result: Value) -> Self {
        Handshake { result }
    }
}

/// The `params` of our `initialize` request, declaring `capabilities` (those the handlers
/// imply; see [`crate::handlers`]).
pub(crate) fn initialize_params(offered_version: &str, capabilities: Value) -> Value {
    json!({
        "protocolVersion": offered_version,
        "capabilities": capabilities,
        "clientInfo": {"name": "mcp-harness-client", "version": env!("CARGO_PKG_VERSION")},
    })
}

/// Judges the answer to `initialize`.
pub(crate) fn accept(outcome: Result<Value, Error>) -> Result<Handshake, Error> {
    let result = match outcome {
        Ok(result) => result,
        Err(e) if e.kind == ErrorKind::ProtocolError => {
            return Err(Error {
                message: format!("initialize was refused: {}", e.message),
                ..e.with_kind(ErrorKind::HandshakeFailed)
            });
        }
        Err(e) => return Err(e),
    };
    if !result.is_object() {
        return Err(Error::invalid(format!(
            "the initialize result is not an object: {result}"
        )));
    }
    let version = result.get("protocolVersion").and_then(Value::as_str);
    let supported = version.is_some_and(|v| SUPPORTED_PROTOCOL_VERSIONS.contains(&v));
    if !supported {
        let got = result.get("protocolVersion").unwrap_or(&Value::Null);
        return Err(Error::new(
            ErrorKind::UnsupportedVersion,
            format!(
                "the server negotiated protocol version {got}, which this client does not \
                 support (supported: {})",
                SUPPORTED_PROTOCOL_VERSIONS.join(", ")
            ),
        ));
    }
    Ok(Handshake { result })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rpc_error() -> Error {
        Error {
            kind: ErrorKind::ProtocolError,
            message: "nope".into(),
            code: Some(-32602),
            status: None,
            data: None,
        }
    }

    #[test]
    fn offers_version_empty_capabilities_and_client_info() {
        let p = initialize_params("2025-03-26", json!({}));
        assert_eq!(p["protocolVersion"], "2025-03-26");
        assert_eq!(p["capabilities"], json!({}));
        assert_eq!(p["clientInfo"]["name"], "mcp-harness-client");
        assert_eq!(p["clientInfo"]["version"], env!("CARGO_PKG_VERSION"));
    }

    #[test]
    fn accepts_supported_versions_only() {
        let ok = accept(Ok(
            json!({"protocolVersion":"2025-06-18","serverInfo":{"name":"s"}}),
        ))
        .unwrap();
        assert_eq!(ok.protocol_version(), Some("2025-06-18"));
        assert_eq!(ok.server_info(), Some(&json!({"name":"s"})));
        for bad in [
            json!({}),
            json!({"protocolVersion": ""}),
            json!({"protocolVersion": null}),
            json!({"protocolVersion": 2025}),
            json!({"protocolVersion": "1999-01-01"}),
        ] {
            let e = accept(Ok(bad.clone())).unwrap_err();
            assert_eq!(e.kind, ErrorKind::UnsupportedVersion, "{bad}");
        }
    }

    #[test]
    fn json_rpc_error_is_handshake_failed_with_code() {
        let e = accept(Err(rpc_error())).unwrap_err();
        assert_eq!(e.kind, ErrorKind::HandshakeFailed);
        assert_eq!(e.code, Some(-32602));
        let timeout = Error::new(ErrorKind::Timeout, "slow");
        assert_eq!(accept(Err(timeout)).unwrap_err().kind, ErrorKind::Timeout);
    }
}

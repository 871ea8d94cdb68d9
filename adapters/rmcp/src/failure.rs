//! The contract's closed vocabulary of error kinds, and how rmcp's errors map onto it.

use std::error::Error as StdError;

use rmcp::model::ErrorData;
use rmcp::service::{ClientInitializeError, ServiceError};
use rmcp::transport::streamable_http_client::StreamableHttpError;
use serde_json::{Map, Value, json};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    UnsupportedVersion,
    HandshakeFailed,
    ProtocolError,
    ToolError,
    Timeout,
    Cancelled,
    TransportClosed,
    InvalidResponse,
    Tls,
    HttpStatus,
    UnsupportedOp,
    InputUnsupported,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::UnsupportedVersion => "unsupported_version",
            Kind::HandshakeFailed => "handshake_failed",
            Kind::ProtocolError => "protocol_error",
            Kind::ToolError => "tool_error",
            Kind::Timeout => "timeout",
            Kind::Cancelled => "cancelled",
            Kind::TransportClosed => "transport_closed",
            Kind::InvalidResponse => "invalid_response",
            Kind::Tls => "tls",
            Kind::HttpStatus => "http_status",
            Kind::UnsupportedOp => "unsupported_op",
            Kind::InputUnsupported => "input_unsupported",
        }
    }
}

#[derive(Debug)]
pub(crate) struct Failure {
    kind: Kind,
    message: String,
    code: Option<i64>,
    status: Option<u16>,
}

type HttpError = StreamableHttpError<reqwest::Error>;

impl Failure {
    pub fn new(kind: Kind, message: impl Into<String>) -> Failure {
        Failure {
            kind,
            message: message.into(),
            code: None,
            status: None,
        }
    }

    pub fn not_connected() -> Failure {
        Failure::new(
            Kind::TransportClosed,
            "no connection (not connected yet, the connect failed, or it was closed)",
        )
    }

    fn json_rpc(kind: Kind, error: &ErrorData) -> Failure {
        Failure {
            kind,
            message: error.message.to_string(),
            code: Some(i64::from(error.code.0)),
            status: None,
        }
    }

    /// An error from rmcp's `serve` (transport start and the `initialize` handshake).
    pub fn from_initialize(error: &ClientInitializeError) -> Failure {
        use ClientInitializeError as E;
        match error {
            E::JsonRpcError(data) => Failure::json_rpc(Kind::HandshakeFailed, data),
            E::TransportError { error, .. } => Failure::from_transport(error, chain_text(error)),
            E::LegacyFallbackFailed { fallback, .. } => Failure::from_initialize(fallback),
            E::NoCompatibleProtocolVersion { .. } | E::NoPreferredProtocolVersion => {
                Failure::new(Kind::UnsupportedVersion, chain_text(error))
            }
            E::Cancelled => Failure::new(Kind::Cancelled, chain_text(error)),
            E::ExpectedInitResponse(_)
            | E::ExpectedInitResult(_)
            | E::ConflictInitResponseId(..)
            | E::UncorrelatedErrorResponse { .. } => {
                Failure::new(Kind::InvalidResponse, chain_text(error))
            }
            _ => Failure::new(Kind::TransportClosed, chain_text(error)),
        }
    }

    /// An error from a request made on an established rmcp connection.
    pub fn from_service(error: &ServiceError) -> Failure {
        use ServiceError as E;
        match error {
            E::McpError(data) => Failure::json_rpc(Kind::ProtocolError, data),
            E::TransportSend(inner) => Failure::from_transport(inner, chain_text(error)),
            E::TransportClosed => Failure::new(Kind::TransportClosed, chain_text(error)),
            E::Timeout { .. } => Failure::new(Kind::Timeout, chain_text(error)),
            E::Cancelled { .. } => Failure::new(Kind::Cancelled, chain_text(error)),
            _ => Failure::new(Kind::InvalidResponse, chain_text(error)),
        }
    }

    /// Classifies a transport error by walking its source chain. rmcp's `StreamableHttpError`
    /// keeps the reqwest error of its `Client` variant out of the chain, and `io::Error` hides
    /// the error it wraps from `source()`, so both are opened explicitly.
    fn from_transport(root: &(dyn StdError + 'static), message: String) -> Failure {
        let mut pending: Vec<&(dyn StdError + 'static)> = vec![root];
        while let Some(current) = pending.pop() {
            if current.downcast_ref::<rustls::Error>().is_some() {
                return Failure::new(Kind::Tls, message);
            }
            if let Some(http) = current.downcast_ref::<HttpError>() {
                let status = match http {
                    HttpError::HttpStatus(status) => Some(status.status),
                    HttpError::AuthRequired(_) => Some(401),
                    HttpError::InsufficientScope(_) => Some(403),
                    HttpError::SessionExpired => Some(404),
                    HttpError::UnexpectedServerResponse(text) => status_in(text),
                    _ => None,
                };
                if let Some(status) = status {
                    return Failure {
                        kind: Kind::HttpStatus,
                        message,
                        code: None,
                        status: Some(status),
                    };
                }
                match http {
                    HttpError::UnexpectedContentType(_)
                    | HttpError::UnexpectedServerResponse(_)
                    | HttpError::Deserialize(_)
                    | HttpError::ResponseBodyTooLarge { .. }
                    | HttpError::MissingSessionIdInResponse => {
                        return Failure::new(Kind::InvalidResponse, message);
                    }
                    HttpError::Client(inner) => pending.push(inner),
                    _ => {}
                }
            }
            if let Some(http) = current.downcast_ref::<reqwest::Error>()
                && let Some(status) = http.status()
            {
                return Failure {
                    kind: Kind::HttpStatus,
                    message,
                    code: None,
                    status: Some(status.as_u16()),
                };
            }
            if let Some(io) = current.downcast_ref::<std::io::Error>()
                && let Some(inner) = io.get_ref()
            {
                pending.push(inner);
            }
            if let Some(next) = current.source() {
                pending.push(next);
            }
        }
        Failure::new(Kind::TransportClosed, message)
    }

    /// The `error` object of an outcome line, with the bearer token (if any) blanked out.
    pub fn to_json(&self, secret: Option<&str>) -> Value {
        let mut message = self.message.clone();
        if let Some(secret) = secret {
            message = message.replace(secret, "[token]");
        }
        let mut error = Map::new();
        error.insert("kind".into(), json!(self.kind.as_str()));
        error.insert("message".into(), json!(message));
        if let Some(code) = self.code {
            error.insert("code".into(), json!(code));
        }
        if let Some(status) = self.status {
            error.insert("status".into(), json!(status));
        }
        Value::Object(error)
    }
}

/// rmcp reports a 4xx other than 401/403/404-with-session only as text: "HTTP 400 Bad Request: …".
fn status_in(text: &str) -> Option<u16> {
    let rest = text.strip_prefix("HTTP ")?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits
        .parse()
        .ok()
        .filter(|status| (100..=599).contains(status))
}

/// The error and its sources, joined, for the outcome line's message.
fn chain_text(error: &(dyn StdError + 'static)) -> String {
    let mut text = error.to_string();
    let mut current = error.source();
    while let Some(next) = current {
        let part = next.to_string();
        if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        current = next.source();
    }
    text
}

impl Failure {
    /// At a modern-era connect, a JSON-RPC error with a modern code (-32020 header mismatch,
    /// -32021 missing capability, -32022 unsupported version) answered `server/discover`, not
    /// `initialize`: the contract's `protocol_error`, not `handshake_failed`.
    pub fn discover_refused(mut self) -> Failure {
        let modern_code = matches!(self.code, Some(-32022..=-32020));
        if self.kind == Kind::HandshakeFailed && modern_code {
            self.kind = Kind::ProtocolError;
        }
        self
    }
}

//! The one error type of the client, whose kinds are the driver contract's closed vocabulary.
//!
//! Every failure the client can report maps to exactly one [`ErrorKind`], so the driver can print
//! it without any translation table of its own.

use std::fmt;

/// What went wrong, as one of the driver contract's error kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// The negotiated protocol version is empty, missing or not one this client supports.
    UnsupportedVersion,
    /// The server answered `initialize` with a JSON-RPC error.
    HandshakeFailed,
    /// The server answered a request (other than `initialize`) with a JSON-RPC error.
    ProtocolError,
    /// The tool ran and reported failure (`isError: true`).
    ToolError,
    /// A listing returned a cursor that was already sent in the same listing.
    RepeatedCursor,
    /// `tools/list` returned a tool name that was already seen in the same listing.
    DuplicateToolName,
    /// A listing of resources, resource templates or prompts returned the same `uri`,
    /// `uriTemplate` or `name` twice.
    DuplicateName,
    /// The request needs a server capability the server did not declare; nothing was sent.
    CapabilityMissing,
    /// A tool's `structuredContent` does not validate against the `outputSchema` of its last
    /// listing, or that schema cannot be evaluated (an unsupported dialect, an unresolved
    /// `$ref`, past the cost bounds).
    SchemaMismatch,
    /// No response arrived within the per-request timeout.
    Timeout,
    /// The caller cancelled the request before a response arrived.
    Cancelled,
    /// There is no usable connection: never opened, closed, or the server went away.
    TransportClosed,
    /// The server sent something that is not a valid answer to the request.
    InvalidResponse,
    /// The server URL is not acceptable (not parseable, or not http/https, or plain remote HTTP).
    InsecureUrl,
    /// The TLS connection to the server could not be established.
    Tls,
    /// The HTTP server answered with a status that is not a success.
    HttpStatus,
    /// The operation or transport is not supported by this client.
    UnsupportedOp,
    /// The server asked for input (multi round-trip) that the caller's input handler cannot
    /// give, so the request was not retried.
    InputUnsupported,
    /// Authorization could not be obtained or was given up: metadata missing or invalid, an
    /// issuer mismatch, PKCE S256 not advertised, no way to register, a denied or error
    /// redirect, a `state` or `iss` mismatch, a refused token request or refresh, or still
    /// 401/403 after the retry limit.
    AuthFailed,
}

impl ErrorKind {
    /// Every kind, in the order the driver contract lists them.
    pub const ALL: [ErrorKind; 19] = [
        ErrorKind::UnsupportedVersion,
        ErrorKind::HandshakeFailed,
        ErrorKind::ProtocolError,
        ErrorKind::ToolError,
        ErrorKind::RepeatedCursor,
        ErrorKind::DuplicateToolName,
        ErrorKind::DuplicateName,
        ErrorKind::CapabilityMissing,
        ErrorKind::SchemaMismatch,
        ErrorKind::Timeout,
        ErrorKind::Cancelled,
        ErrorKind::TransportClosed,
        ErrorKind::InvalidResponse,
        ErrorKind::InsecureUrl,
        ErrorKind::Tls,
        ErrorKind::HttpStatus,
        ErrorKind::UnsupportedOp,
        ErrorKind::InputUnsupported,
        ErrorKind::AuthFailed,
    ];

    /// The snake_case name the driver contract uses for this kind.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::UnsupportedVersion => "unsupported_version",
            ErrorKind::HandshakeFailed => "handshake_failed",
            ErrorKind::ProtocolError => "protocol_error",
            ErrorKind::ToolError => "tool_error",
            ErrorKind::RepeatedCursor => "repeated_cursor",
            ErrorKind::DuplicateToolName => "duplicate_tool_name",
            ErrorKind::DuplicateName => "duplicate_name",
            ErrorKind::CapabilityMissing => "capability_missing",
            ErrorKind::SchemaMismatch => "schema_mismatch",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Cancelled => "cancelled",
            ErrorKind::TransportClosed => "transport_closed",
            ErrorKind::InvalidResponse => "invalid_response",
            ErrorKind::InsecureUrl => "insecure_url",
            ErrorKind::Tls => "tls",
            ErrorKind::HttpStatus => "http_status",
            ErrorKind::UnsupportedOp => "unsupported_op",
            ErrorKind::InputUnsupported => "input_unsupported",
            ErrorKind::AuthFailed => "auth_failed",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failure reported by the client: a kind, a human-readable message, the JSON-RPC error code
/// when a JSON-RPC error caused it, and the HTTP status when one did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// Which failure this is.
    pub kind: ErrorKind,
    /// What happened, for a human.
    pub message: String,
    /// The JSON-RPC `error.code` of the response that caused this failure, if one did.
    pub code: Option<i64>,
    /// The HTTP status of the answer that caused this failure (kind `http_status`), if one did.
    pub status: Option<u16>,
    /// The JSON-RPC `error.data` of the response that caused this failure, if it had one
    /// (e.g. the `supported` versions of an `UnsupportedProtocolVersionError`).
    pub data: Option<serde_json::Value>,
}

impl Error {
    /// An error of `kind` with `message` and no JSON-RPC code.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error {
            kind,
            message: message.into(),
            code: None,
            status: None,
            data: None,
        }
    }

    /// An `http_status` error for an answer with HTTP `status`.
    pub fn http_status(status: u16, message: impl Into<String>) -> Self {
        Error {
            status: Some(status),
            ..Error::new(ErrorKind::HttpStatus, message)
        }
    }

    /// The same error with its kind replaced (the code and message are kept).
    pub fn with_kind(mut self, kind: ErrorKind) -> Self {
        self.kind = kind;
        self
    }

    pub(crate) fn closed(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::TransportClosed, message)
    }

    pub(crate) fn invalid(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::InvalidResponse, message)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind, self.message)?;
        if let Some(code) = self.code {
            write!(f, " (JSON-RPC code {code})")?;
        }
        if let Some(status) = self.status {
            write!(f, " (HTTP status {status})")?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {}

/// At most the first 200 characters of `text` (`…` marks a cut), for messages and
/// diagnostics about a large input.
pub(crate) fn excerpt(text: &str) -> String {
    match text.char_indices().nth(200) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_names_are_the_contract_vocabulary() {
        let names: Vec<&str> = ErrorKind::ALL.iter().map(|k| k.as_str()).collect();
        assert_eq!(
            names,
            [
                "unsupported_version",
                "handshake_failed",
                "protocol_error",
                "tool_error",
                "repeated_cursor",
                "duplicate_tool_name",
                "duplicate_name",
                "capability_missing",
                "schema_mismatch",
                "timeout",
                "cancelled",
                "transport_closed",
                "invalid_response",
                "insecure_url",
                "tls",
                "http_status",
                "unsupported_op",
                "input_unsupported",
                "auth_failed",
            ]
        );
    }

    #[test]
    fn display_mentions_kind_and_code() {
        let mut e = Error::new(ErrorKind::ProtocolError, "no such tool");
        e.code = Some(-32602);
        assert_eq!(
            e.to_string(),
            "protocol_error: no such tool (JSON-RPC code -32602)"
        );
        assert_eq!(Error::closed("gone").to_string(), "transport_closed: gone");
        assert_eq!(
            Error::http_status(404, "no session").to_string(),
            "http_status: no session (HTTP status 404)"
        );
    }
}

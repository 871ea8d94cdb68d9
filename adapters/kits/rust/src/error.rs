//! The contract's closed vocabulary of error kinds (CLIENTS.md, "Error kinds"), the error a
//! step reports, and the mapping of common transport errors onto kinds.
//!
//! The kit depends on no HTTP or TLS crate, so it can only read what `std` types say: an
//! `io::Error`'s kind (timed out, connection refused or reset, broken pipe, end of file). An
//! adapter recognises its own library's types (a TLS error, an HTTP status) in the hook it hands
//! to [`classify`]; the kit walks the error's source chain, opening `io::Error`'s wrapped error
//! too (which `source()` hides), and asks the hook at every link first.

use std::error::Error;
use std::fmt;

use serde_json::{Map, Value, json};

/// One kind of the contract's closed vocabulary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    UnsupportedVersion,
    HandshakeFailed,
    ProtocolError,
    ToolError,
    RepeatedCursor,
    DuplicateToolName,
    DuplicateName,
    CapabilityMissing,
    SchemaMismatch,
    Timeout,
    Cancelled,
    TransportClosed,
    InvalidResponse,
    InsecureUrl,
    Tls,
    HttpStatus,
    UnsupportedOp,
    InputUnsupported,
    AuthFailed,
}

impl Kind {
    /// The kind as an outcome line spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::UnsupportedVersion => "unsupported_version",
            Kind::HandshakeFailed => "handshake_failed",
            Kind::ProtocolError => "protocol_error",
            Kind::ToolError => "tool_error",
            Kind::RepeatedCursor => "repeated_cursor",
            Kind::DuplicateToolName => "duplicate_tool_name",
            Kind::DuplicateName => "duplicate_name",
            Kind::CapabilityMissing => "capability_missing",
            Kind::SchemaMismatch => "schema_mismatch",
            Kind::Timeout => "timeout",
            Kind::Cancelled => "cancelled",
            Kind::TransportClosed => "transport_closed",
            Kind::InvalidResponse => "invalid_response",
            Kind::InsecureUrl => "insecure_url",
            Kind::Tls => "tls",
            Kind::HttpStatus => "http_status",
            Kind::UnsupportedOp => "unsupported_op",
            Kind::InputUnsupported => "input_unsupported",
            Kind::AuthFailed => "auth_failed",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a failed step reports: `{"kind":…,"message":…,"code":…,"status":…}`.
#[derive(Clone, Debug, PartialEq)]
pub struct StepError {
    pub kind: Kind,
    pub message: String,
    /// The JSON-RPC error code, when a JSON-RPC error caused it.
    pub code: Option<i64>,
    /// The HTTP status, for `http_status`.
    pub status: Option<u16>,
}

impl StepError {
    pub fn new(kind: Kind, message: impl Into<String>) -> StepError {
        StepError {
            kind,
            message: message.into(),
            code: None,
            status: None,
        }
    }

    /// A JSON-RPC error the server sent (`protocol_error`, or `handshake_failed` at connect).
    pub fn json_rpc(kind: Kind, code: i64, message: impl Into<String>) -> StepError {
        StepError {
            code: Some(code),
            ..StepError::new(kind, message)
        }
    }

    /// A non-success HTTP status.
    pub fn http_status(status: u16, message: impl Into<String>) -> StepError {
        StepError {
            status: Some(status),
            ..StepError::new(Kind::HttpStatus, message)
        }
    }

    /// A step the adapter cannot carry out (an op it does not provide, a value its library
    /// cannot express): the trial grades `unimplemented`.
    pub fn unsupported(message: impl Into<String>) -> StepError {
        StepError::new(Kind::UnsupportedOp, message)
    }

    /// A step before a successful `connect` or after `close`.
    pub fn not_connected() -> StepError {
        StepError::new(
            Kind::TransportClosed,
            "no connection (not connected yet, the connect failed, or it was closed)",
        )
    }

    /// The `error` object of an outcome line, with `secret` (the bearer token) blanked out.
    pub fn to_json(&self, secret: Option<&str>) -> Value {
        let mut error = Map::new();
        error.insert("kind".into(), json!(self.kind.as_str()));
        error.insert("message".into(), json!(redact(&self.message, secret)));
        if let Some(code) = self.code {
            error.insert("code".into(), json!(code));
        }
        if let Some(status) = self.status {
            error.insert("status".into(), json!(status));
        }
        Value::Object(error)
    }
}

impl fmt::Display for StepError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind, self.message)
    }
}

impl Error for StepError {}

/// `text` with every occurrence of `secret` replaced by `[token]` (an empty secret hides
/// nothing), and every secret registered with [`crate::secret`] by `[secret]`.
pub fn redact(text: &str, secret: Option<&str>) -> String {
    let text = match secret {
        Some(secret) if !secret.is_empty() => text.replace(secret, "[token]"),
        _ => text.to_owned(),
    };
    crate::auth::redact_registered(&text)
}

/// `value` with every string in it (object keys too) passed through [`redact`].
pub fn redact_json(value: &mut Value, secret: Option<&str>) {
    match value {
        Value::String(text) => *text = redact(text, secret),
        Value::Array(items) => items.iter_mut().for_each(|v| redact_json(v, secret)),
        Value::Object(map) => {
            let entries = std::mem::take(map);
            for (key, mut v) in entries {
                redact_json(&mut v, secret);
                map.insert(redact(&key, secret), v);
            }
        }
        _ => {}
    }
}

/// An adapter's own reading of one link of an error chain: the error it stands for, if the link
/// is a type the adapter knows (its message is replaced by the whole chain's text).
pub type Hook<'a> = &'a dyn Fn(&(dyn Error + 'static)) -> Option<StepError>;

/// Classifies a transport error: the first link of its chain that `hook` recognises names the
/// kind; failing that, the first `io::Error` with a telling kind (timed out: `timeout`; refused,
/// reset, broken pipe, end of file: `transport_closed`); failing that, `transport_closed` (no
/// usable connection). The message is the whole chain, see [`chain_text`].
pub fn classify(error: &(dyn Error + 'static), hook: Hook<'_>) -> StepError {
    let message = chain_text(error);
    let mut pending: Vec<&(dyn Error + 'static)> = vec![error];
    let mut fallback = None;
    let mut seen = 0;
    while let Some(current) = pending.pop() {
        seen += 1;
        if seen > 64 {
            break; // a cycle in a hand-written `source()`; give up rather than loop
        }
        if let Some(known) = hook(current) {
            return StepError { message, ..known };
        }
        if let Some(io) = current.downcast_ref::<std::io::Error>() {
            if fallback.is_none() {
                fallback = io_kind(io.kind());
            }
            if let Some(inner) = io.get_ref() {
                pending.push(inner);
            }
        }
        if let Some(next) = current.source() {
            pending.push(next);
        }
    }
    StepError::new(fallback.unwrap_or(Kind::TransportClosed), message)
}

fn io_kind(kind: std::io::ErrorKind) -> Option<Kind> {
    use std::io::ErrorKind as K;
    match kind {
        K::TimedOut => Some(Kind::Timeout),
        K::ConnectionRefused
        | K::ConnectionReset
        | K::ConnectionAborted
        | K::NotConnected
        | K::BrokenPipe
        | K::UnexpectedEof => Some(Kind::TransportClosed),
        _ => None,
    }
}

/// The error and its sources on one line, each cause once (many errors repeat their source's
/// text in their own).
pub fn chain_text(error: &(dyn Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut current = error.source();
    let mut links = 0;
    while let Some(next) = current {
        links += 1;
        if links > 64 {
            break;
        }
        let part = next.to_string();
        if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        current = next.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Wrapper(std::io::Error);
    impl fmt::Display for Wrapper {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("request failed")
        }
    }
    impl Error for Wrapper {
        fn source(&self) -> Option<&(dyn Error + 'static)> {
            Some(&self.0)
        }
    }

    #[derive(Debug)]
    struct Status(u16);
    impl fmt::Display for Status {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "HTTP {}", self.0)
        }
    }
    impl Error for Status {}

    fn none(_: &(dyn Error + 'static)) -> Option<StepError> {
        None
    }

    #[test]
    fn io_kinds_deep_in_the_chain_name_the_kind() {
        let timed_out = Wrapper(std::io::Error::new(std::io::ErrorKind::TimedOut, "slow"));
        let error = classify(&timed_out, &none);
        assert_eq!(error.kind, Kind::Timeout);
        assert_eq!(error.message, "request failed: slow");
        let reset = Wrapper(std::io::ErrorKind::ConnectionReset.into());
        assert_eq!(classify(&reset, &none).kind, Kind::TransportClosed);
    }

    #[test]
    fn the_hook_sees_the_error_an_io_error_wraps() {
        let wrapped = Wrapper(std::io::Error::other(Status(503)));
        let hook = |e: &(dyn Error + 'static)| {
            e.downcast_ref::<Status>()
                .map(|s| StepError::http_status(s.0, ""))
        };
        let error = classify(&wrapped, &hook);
        assert_eq!((error.kind, error.status), (Kind::HttpStatus, Some(503)));
        assert_eq!(error.message, "request failed: HTTP 503");
    }

    #[test]
    fn an_unknown_error_is_transport_closed() {
        let error = classify(&Status(200), &none);
        assert_eq!(error.kind, Kind::TransportClosed);
    }

    #[test]
    fn the_token_never_reaches_an_error_line() {
        let error = StepError::json_rpc(Kind::ProtocolError, -32600, "bad header Bearer s3cret!");
        let line = error.to_json(Some("s3cret!"));
        assert_eq!(
            line,
            json!({"kind":"protocol_error","message":"bad header Bearer [token]","code":-32600})
        );
        assert_eq!(redact("x", Some("")), "x");
    }
}

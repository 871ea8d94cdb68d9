//! How rmcp's errors map onto the contract's kinds. The kit walks error chains
//! (`mcp_harness_kit::classify`); [`rmcp_link`] is the hook that recognises rmcp's, reqwest's
//! and rustls's own types in them.

use std::error::Error as StdError;

use mcp_harness_kit::{Kind, StepError, chain_text, classify};
use rmcp::model::ErrorData;
use rmcp::service::{ClientInitializeError, ServiceError};
use rmcp::transport::auth::AuthError;
use rmcp::transport::streamable_http_client::StreamableHttpError;

type HttpError = StreamableHttpError<reqwest::Error>;

fn json_rpc(kind: Kind, error: &ErrorData) -> StepError {
    StepError::json_rpc(kind, i64::from(error.code.0), error.message.to_string())
}

/// An error from rmcp's `serve` (transport start and the `initialize` handshake).
pub fn from_initialize(error: &ClientInitializeError) -> StepError {
    use ClientInitializeError as E;
    let plain = |kind| StepError::new(kind, chain_text(error));
    match error {
        E::JsonRpcError(data) => json_rpc(Kind::HandshakeFailed, data),
        E::TransportError { error, .. } => classify(error, &rmcp_link),
        E::LegacyFallbackFailed { fallback, .. } => from_initialize(fallback),
        E::NoCompatibleProtocolVersion { .. } | E::NoPreferredProtocolVersion => {
            plain(Kind::UnsupportedVersion)
        }
        E::Cancelled => plain(Kind::Cancelled),
        E::ExpectedInitResponse(_)
        | E::ExpectedInitResult(_)
        | E::ConflictInitResponseId(..)
        | E::UncorrelatedErrorResponse { .. } => plain(Kind::InvalidResponse),
        _ => plain(Kind::TransportClosed),
    }
}

/// An error from a request made on an established rmcp connection.
pub fn from_service(error: &ServiceError) -> StepError {
    use ServiceError as E;
    let plain = |kind| StepError::new(kind, chain_text(error));
    match error {
        E::McpError(data) => json_rpc(Kind::ProtocolError, data),
        E::TransportSend(inner) => StepError {
            message: chain_text(error),
            ..classify(inner, &rmcp_link)
        },
        E::TransportClosed => plain(Kind::TransportClosed),
        E::Timeout { .. } => plain(Kind::Timeout),
        E::Cancelled { .. } => plain(Kind::Cancelled),
        _ => plain(Kind::InvalidResponse),
    }
}

/// At a modern-era connect, a JSON-RPC error with a modern code (-32020 header mismatch,
/// -32021 missing capability, -32022 unsupported version) answered `server/discover`, not
/// `initialize`: the contract's `protocol_error`, not `handshake_failed`.
pub fn discover_refused(mut error: StepError) -> StepError {
    if error.kind == Kind::HandshakeFailed && matches!(error.code, Some(-32022..=-32020)) {
        error.kind = Kind::ProtocolError;
    }
    error
}

/// The kit's hook: one link of a transport error's chain, if it is a type rmcp's stack uses to
/// say what went wrong. rmcp's `StreamableHttpError` keeps the reqwest error of its `Client`
/// variant out of the chain, so that one is opened here.
fn rmcp_link(link: &(dyn StdError + 'static)) -> Option<StepError> {
    if link.downcast_ref::<rustls::Error>().is_some() {
        return Some(StepError::new(Kind::Tls, ""));
    }
    if let Some(auth) = link.downcast_ref::<AuthError>() {
        return Some(crate::oauth::auth_error(auth));
    }
    if let Some(http) = link.downcast_ref::<HttpError>() {
        // A 401 or 403 challenge: noted for the application's authorization (main.rs).
        if let Some(challenge) = http.auth_challenge() {
            crate::oauth::note_challenge(challenge);
        }
        if let HttpError::Auth(auth) = http {
            return Some(crate::oauth::auth_error(auth));
        }
        let status = match http {
            HttpError::HttpStatus(status) => Some(status.status),
            HttpError::AuthRequired(_) => Some(401),
            HttpError::InsufficientScope(_) => Some(403),
            HttpError::SessionExpired => Some(404),
            HttpError::UnexpectedServerResponse(text) => status_in(text),
            _ => None,
        };
        if let Some(status) = status {
            return Some(StepError::http_status(status, ""));
        }
        match http {
            HttpError::UnexpectedContentType(_)
            | HttpError::UnexpectedServerResponse(_)
            | HttpError::Deserialize(_)
            | HttpError::ResponseBodyTooLarge { .. }
            | HttpError::MissingSessionIdInResponse => {
                return Some(StepError::new(Kind::InvalidResponse, ""));
            }
            HttpError::Client(inner) => return Some(classify(inner, &rmcp_link)),
            _ => {}
        }
    }
    let status = link.downcast_ref::<reqwest::Error>()?.status()?;
    Some(StepError::http_status(status.as_u16(), ""))
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

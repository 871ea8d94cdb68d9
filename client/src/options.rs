//! What the caller chooses: which server to start or reach, which version to offer, how long to
//! wait, and what to trust and present over HTTP.
//!
//! Kept apart from the client so the driver can build options from its environment without
//! touching any connection logic.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use crate::auth::AuthOptions;
use crate::era::{DEFAULT_LEGACY_FALLBACK_VERSION, Era, EraCache};
use crate::handlers::Handlers;
use crate::handshake::LATEST_PROTOCOL_VERSION;
#[cfg(feature = "defects")]
use crate::seams::Defects;
use crate::seams::Seams;
use crate::trace::TraceContext;

/// The default of [`ClientOptions::max_message_bytes`]: 64 MiB, well above the largest
/// messages real servers send (the harness checks 16 MiB).
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;

/// The command line of a stdio server: the program and its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StdioCommand {
    /// The program to run (looked up on `PATH` when it has no slash).
    pub program: String,
    /// Its arguments, passed as they are (no shell).
    pub args: Vec<String>,
}

impl StdioCommand {
    /// Splits an argv (program first); `None` when it is empty.
    pub fn from_argv(argv: Vec<String>) -> Option<Self> {
        let mut parts = argv.into_iter();
        let program = parts.next()?;
        Some(StdioCommand {
            program,
            args: parts.collect(),
        })
    }
}

/// Settings of one client connection.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// The protocol version offered in `initialize` (legacy era), or put in every request's
    /// `_meta` (modern and dual eras: the modern version, normally `2026-07-28`).
    pub protocol_version: String,
    /// Which era to speak; [`Era::Legacy`] (the handshake) by default.
    pub era: Era,
    /// Dual era: the version offered in the fallback `initialize`.
    pub legacy_protocol_version: String,
    /// The era found per HTTP origin; clones of these options share it.
    pub era_cache: EraCache,
    /// The bound on every single request (`initialize`, each `tools/list` page, `tools/call`).
    pub request_timeout: Duration,
    /// How long shutdown waits before each escalation step (stdin closed → SIGTERM → SIGKILL).
    pub shutdown_grace: Duration,
    /// The largest message accepted from the server, in bytes: a stdio line, an SSE event, a
    /// JSON body. A larger one is never buffered whole; it is skipped and reported, and the
    /// request it answers fails with `invalid_response` when that can be told (always over
    /// HTTP; over stdio when its first bytes name the id), else that request times out.
    /// Default [`DEFAULT_MAX_MESSAGE_BYTES`].
    pub max_message_bytes: usize,
    /// The answers to requests the server sends (`roots/list`, `sampling/createMessage`,
    /// `elicitation/create`), which also decide the client capabilities declared. Default:
    /// none, so no capabilities.
    pub handlers: Handlers,
    /// A W3C trace context put in every request's `_meta` (`traceparent`, `tracestate`,
    /// `baggage`), unchanged. Default: none.
    pub trace_context: Option<TraceContext>,
    /// Deliberate misbehaviour for the harness's self-tests; all off by default. Only with
    /// the `defects` feature.
    #[cfg(feature = "defects")]
    #[doc(hidden)]
    pub defects: Defects,
}

impl ClientOptions {
    /// The version a modern or dual-era client puts in `_meta`; none in the legacy era.
    pub(crate) fn meta_version(&self) -> Option<String> {
        (self.era != Era::Legacy).then(|| self.protocol_version.clone())
    }

    /// What the connection asks at each seam.
    pub(crate) fn seams(&self) -> Seams {
        #[cfg(feature = "defects")]
        return Seams(self.defects);
        #[cfg(not(feature = "defects"))]
        Seams::default()
    }
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            protocol_version: LATEST_PROTOCOL_VERSION.to_owned(),
            era: Era::Legacy,
            legacy_protocol_version: DEFAULT_LEGACY_FALLBACK_VERSION.to_owned(),
            era_cache: EraCache::default(),
            request_timeout: Duration::from_secs(30),
            shutdown_grace: Duration::from_secs(2),
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            handlers: Handlers::default(),
            trace_context: None,
            #[cfg(feature = "defects")]
            defects: Defects::default(),
        }
    }
}

/// A bearer token, sent as `Authorization: Bearer …` over HTTP.
///
/// The value can only be read by the transport that sends it: there is no `Display`, and `Debug`
/// prints `BearerToken(<redacted>)`, so it cannot end up in a log line, an error or a panic.
#[derive(Clone, PartialEq, Eq)]
pub struct BearerToken(String);

impl BearerToken {
    /// Wraps a token supplied by the caller.
    pub fn new(token: impl Into<String>) -> Self {
        BearerToken(token.into())
    }

    pub(crate) fn secret(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for BearerToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("BearerToken(<redacted>)")
    }
}

/// Settings that only the Streamable HTTP transport uses.
///
/// Certificates are always verified, against the system roots plus `ca_files`; there is no
/// option to turn verification off.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpOptions {
    /// PEM files of extra certificate authorities to trust besides the system roots.
    pub ca_files: Vec<PathBuf>,
    /// Sent as `Authorization: Bearer …` on every request when set.
    pub bearer_token: Option<BearerToken>,
    /// Open the optional standalone `GET` event stream after the handshake (default true).
    pub listen: bool,
    /// Act as an OAuth 2.1 client of the server's authorization server (see
    /// [`crate::auth`]); takes the place of `bearer_token` when set.
    pub auth: Option<AuthOptions>,
    /// The caller's local policy: origins (`https://localhost:8443`) that discovered URLs may
    /// reach although they are loopback or private. The server's own origin always may.
    pub local_origins: Vec<String>,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            ca_files: Vec::new(),
            bearer_token: None,
            listen: true,
            auth: None,
            local_origins: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_never_shows_in_debug() {
        let options = HttpOptions {
            bearer_token: Some(BearerToken::new("s3cret-value")),
            ..HttpOptions::default()
        };
        let shown = format!("{options:?} {options:#?}");
        assert!(!shown.contains("s3cret"), "{shown}");
        assert!(shown.contains("<redacted>"));
    }

    #[test]
    fn argv_splits_into_program_and_args() {
        let c = StdioCommand::from_argv(vec!["python3".into(), "-c".into(), "x".into()]).unwrap();
        assert_eq!(c.program, "python3");
        assert_eq!(c.args, ["-c", "x"]);
        assert_eq!(StdioCommand::from_argv(vec![]), None);
    }
}

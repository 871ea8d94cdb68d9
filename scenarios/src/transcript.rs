//! The transcript a fake server records: one JSON object per line, appended as things
//! happen, so that a fake killed mid-trial still leaves everything it saw. Every record
//! carries the fake's pid, because a client may launch the server more than once.
//!
//! The fakes write it and the runner reads it; this module is the whole format.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One line of a transcript.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// The process that recorded it.
    pub pid: u32,
    /// On `Received` records: when the message arrived, in milliseconds since the fake
    /// started (what the `spaced` wire rule judges). Absent elsewhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_ms: Option<u64>,
    /// What happened.
    #[serde(flatten)]
    pub event: Event,
}

/// What a fake saw or did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// The fake started (its pid is the record's `pid`).
    Started,
    /// A line from the client that parsed as JSON.
    Received {
        /// The message, as parsed.
        message: Value,
    },
    /// A line from the client that is not JSON.
    ReceivedInvalid {
        /// The line (cut to a bounded length).
        line: String,
        /// Why it did not parse.
        error: String,
    },
    /// A message the fake wrote.
    Sent {
        /// The message.
        message: Value,
    },
    /// A raw line the fake wrote in place of a message.
    SentRaw {
        /// The line.
        line: String,
    },
    /// An HTTP request reached the fake (Streamable HTTP). Any JSON-RPC messages in its body
    /// follow as `Received` records.
    HttpRequest {
        /// The method, e.g. `POST`.
        method: String,
        /// The path, e.g. `/mcp`.
        path: String,
        /// Allow-listed headers, lower-case names: content-type, accept, mcp-session-id,
        /// mcp-protocol-version, last-event-id, and authorization as `Bearer [valid]` or
        /// `[invalid]` (never the credential).
        headers: std::collections::BTreeMap<String, String>,
        /// The status the fake answered with.
        status: u16,
        /// Authorization trials: the role of the origin that received it, `mcp` (the MCP
        /// origin), `as` (the authorization server), `as2` (a second origin: another
        /// authorization server, or a redirect's target) or `as_http` (a plain-HTTP one).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        origin: Option<String>,
        /// Authorization trials: which authorization endpoint it reached (`prm`,
        /// `as_metadata`, `authorize`, `token`, `register`, `client_metadata`, or `other` on
        /// an authorization server's origin); absent for the MCP endpoint. The always-on HTTP
        /// rules judge only requests without it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        endpoint: Option<String>,
        /// Authorization trials: the query and form parameters (or a registration's JSON
        /// members), every secret replaced by a label (`[code 1]`, `[verifier: matches]`,
        /// `[refresh 1]`, `[client secret]`, `[access token]`) and every harness URL written
        /// with its origin's role (`https://{mcp}/mcp`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        params: Option<serde_json::Map<String, Value>>,
    },
    /// Streamable HTTP: a client opened a TCP connection to the fake (recorded as it is
    /// accepted, before any TLS handshake, so a client that refuses the certificate has
    /// still shown that it tried).
    Connected,
    /// Stdin reached end of file.
    StdinEof,
    /// A signal arrived.
    Signal {
        /// Its name, e.g. `SIGTERM`.
        name: String,
    },
    /// The fake stopped recording messages because the transcript reached its cap.
    Truncated,
    /// Streamable HTTP, modern or dual fake: the response stream of the request `id` went
    /// away before the fake answered it (in 2026-07-28 closing it is how a client cancels).
    StreamClosed {
        /// The id of the request whose stream closed.
        id: Value,
    },
    /// The recording proxy (`mcp-harness record --fault`) applied a fault here: what the
    /// client saw next (a raw line, a status, a rewritten answer, a cut) is the fault's doing,
    /// not the server's.
    Fault {
        /// The fault as given on the command line, e.g. `delay=500:tools/call@2`.
        spec: String,
        /// The id of the request whose answer it changed, when there is one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<Value>,
    },
    /// A span the client exported to the trial's OTLP receiver (a traces case, CLIENTS.md §
    /// Traces), appended by the runner after the client exited, in the order received. Every
    /// secret the trial knows of is already replaced by a label.
    Span {
        /// The span, normalised from either OTLP encoding: `trace_id`, `span_id`,
        /// `parent_span_id` (lower-case hex; absent for a root), `name`, `kind` (`client`,
        /// `server`, `internal`, `producer`, `consumer` or `unspecified`), `start_ns`,
        /// `end_ns`, `status` (`{"code": "unset"|"ok"|"error", "message"?}`), `attributes`
        /// (an object; OTLP values as JSON), `events` (`[{"name", "attributes"}]`), `scope`
        /// (the instrumentation scope's name), `resource` (its attributes) and `encoding`
        /// (`http/protobuf` or `http/json`: how it arrived); when the client sent them,
        /// `trace_state`, `links`, `scope_version`, `scope_attributes` and the schema URLs
        /// (every string it exported is kept, for the secrets scan).
        span: Value,
    },
    /// The fake is exiting by itself with this status.
    Exited {
        /// The exit status.
        code: i32,
    },
}

/// Parses a transcript file's text. Lines that do not parse are returned as errors with
/// their line number, so a corrupt transcript is reported rather than silently skipped.
pub fn parse(text: &str) -> Result<Vec<Record>, String> {
    let mut records = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str(line) {
            Ok(record) => records.push(record),
            // The last line may be cut short by a kill mid-write: that is not corruption.
            Err(_) if index + 1 == text.lines().count() && !text.ends_with('\n') => break,
            Err(e) => return Err(format!("transcript line {}: {e}", index + 1)),
        }
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_tolerates_a_torn_last_line() {
        let record = Record {
            pid: 7,
            at_ms: Some(12),
            event: Event::Received {
                message: serde_json::json!({"jsonrpc": "2.0", "method": "ping", "id": 1}),
            },
        };
        let line = serde_json::to_string(&record).unwrap();
        assert!(line.contains(r#""event":"received""#), "{line}");
        assert!(line.contains(r#""at_ms":12"#), "{line}");
        let text = format!("{line}\n{{\"pid\":7,\"ev");
        assert_eq!(parse(&text).unwrap(), vec![record]);
        assert!(parse("{\"pid\":1}\n{}\n").is_err());
    }
}

//! `mcp-harness record`: a recording proxy between a real host and a real server, over stdio
//! (`record -- CMD ARGS…`) or Streamable HTTP (`record --upstream URL`, a loopback TLS front
//! with the run's CA). It writes the harness's own transcript format
//! (`mcp_harness_scenarios::transcript`), so a recording is read like a fake's transcript:
//! `received` is what the host sent, `sent` what the server answered.
//!
//! | module   | role                                                                  |
//! |----------|-----------------------------------------------------------------------|
//! | `redact` | every secret out of what is written, before it is written             |
//! | `fault`  | `--fault SPEC`: the case model's server faults on live traffic        |
//! | `writer` | whole lines, written before the bytes they describe are relayed       |
//! | `stdio`  | the child server, both pipes, signals and its end                     |
//! | `https`  | the TLS front, forwarding each request with reqwest                  |
//! | `ledger` | HTTP requests written in arrival order, with their status when known  |
//! | `answer` | the upstream's answers back to the host, JSON whole, SSE event by event |
//! | `sse`    | raw SSE events cut out of a byte stream                               |
//!
//! On stdio the recorder's stdout is the protocol: every note goes to stderr.

mod answer;
pub mod fault;
pub mod https;
mod ledger;
pub mod redact;
pub mod sse;
pub mod stdio;
pub mod writer;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// The requests a host has sent and not yet had answered, by id: the method and the cursor
/// it asked with (what `repeat-cursor` and the faults' `:METHOD` need of the answer).
pub type Asked = HashMap<String, (String, Option<Value>)>;

/// Notes `message` in `asked` when it is a request (an id and a method).
pub fn note_request(asked: &mut Asked, message: &Value) {
    if let (Some(id), Some(method)) = (
        message.get("id"),
        message.get("method").and_then(Value::as_str),
    ) {
        let cursor = message.pointer("/params/cursor").cloned();
        asked.insert(id.to_string(), (method.to_owned(), cursor));
    }
}

/// The line a `malformed` fault puts ahead of an answer.
pub const MALFORMED_LINE: &str = "{this is not JSON: mcp-harness record --fault malformed";

/// A note on stderr (never stdout: over stdio that is the protocol).
pub fn note(text: &str) {
    eprintln!("mcp-harness record: {text}");
}

/// The default recording: `mcp-recording-<unix seconds>.jsonl` in the current directory.
pub fn default_out() -> PathBuf {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    PathBuf::from(format!("mcp-recording-{secs}.jsonl"))
}

/// The default CA file of an HTTPS recording: next to it, `<stem>.ca.pem`.
pub fn default_ca_out(out: &Path) -> PathBuf {
    let stem = out.file_stem().map_or_else(
        || "mcp-recording".into(),
        |s| s.to_string_lossy().into_owned(),
    );
    out.with_file_name(format!("{stem}.ca.pem"))
}

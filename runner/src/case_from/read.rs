//! Reading a recording: the harness transcript (`Record` lines, what the fakes and `record`
//! write) or the import format (`{"from": "client"|"server", "message": {…}}` lines, what
//! other tools capture). A file is all one or all the other; each error names the file, the
//! line and what was expected there.

use std::path::Path;

use mcp_harness_scenarios::transcript::{Event, Record};
use serde_json::Value;

/// The records of the recording at `path`, import lines turned into `Received` (from the
/// client) and `Sent` (from the server) records.
pub fn read_recording(path: &Path) -> Result<Vec<Record>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{}: cannot read the recording: {e}", path.display()))?;
    parse_recording(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// The records of a recording's text (see [`read_recording`]); errors name the line.
pub fn parse_recording(text: &str) -> Result<Vec<Record>, String> {
    let mut records = Vec::new();
    let mut import: Option<bool> = None;
    let last = text.lines().count();
    for (index, line) in text.lines().enumerate() {
        let n = index + 1;
        if line.trim().is_empty() {
            continue;
        }
        let value: Value = match serde_json::from_str(line) {
            Ok(value) => value,
            // A recorder killed mid-write leaves a torn last line: not corruption.
            Err(_) if n == last && !text.ends_with('\n') => break,
            Err(e) => return Err(format!("line {n}: not JSON ({e})")),
        };
        let is_import = value.get("from").is_some() && value.get("event").is_none();
        match import {
            Some(kind) if kind != is_import => {
                return Err(format!(
                    "line {n}: expected {} like the lines before it; a recording is either all \
                     harness transcript records or all import lines",
                    if kind {
                        "an import line {\"from\": \"client\"|\"server\", \"message\": {…}}"
                    } else {
                        "a transcript record {\"pid\", \"event\", …}"
                    }
                ));
            }
            _ => import = Some(is_import),
        }
        records.push(match is_import {
            true => import_line(&value).map_err(|e| format!("line {n}: {e}"))?,
            false => serde_json::from_value(value).map_err(|e| {
                format!("line {n}: not a transcript record ({e}); expected {{\"pid\": N, \"event\": \"received\"|\"sent\"|…}}")
            })?,
        });
    }
    Ok(records)
}

fn import_line(value: &Value) -> Result<Record, String> {
    let message = value
        .get("message")
        .filter(|m| m.is_object())
        .cloned()
        .ok_or("field `message`: expected a JSON-RPC message (an object)")?;
    let event = match value.get("from").and_then(Value::as_str) {
        Some("client") => Event::Received { message },
        Some("server") => Event::Sent { message },
        other => {
            return Err(format!(
                "field `from`: expected \"client\" or \"server\", found {}",
                other.map_or_else(|| value["from"].to_string(), |s| format!("{s:?}"))
            ));
        }
    };
    let at_ms = match value.get("at_ms") {
        None => None,
        Some(v) => Some(
            v.as_u64()
                .ok_or("field `at_ms`: expected a whole number of milliseconds")?,
        ),
    };
    Ok(Record {
        pid: 0,
        at_ms,
        event,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_formats_and_names_the_line_of_a_mix() {
        let import = "{\"from\":\"client\",\"message\":{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}}\n\
                      {\"from\":\"server\",\"message\":{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}}\n";
        let records = parse_recording(import).unwrap();
        assert!(matches!(records[0].event, Event::Received { .. }));
        assert!(matches!(records[1].event, Event::Sent { .. }));
        let mixed = format!("{import}{{\"pid\":1,\"event\":\"started\"}}\n");
        let err = parse_recording(&mixed).unwrap_err();
        assert!(err.starts_with("line 3:"), "{err}");
        let err = parse_recording("{\"from\":\"host\",\"message\":{}}\n").unwrap_err();
        assert!(err.contains("field `from`"), "{err}");
        let err = parse_recording("nope\n").unwrap_err();
        assert!(err.contains("line 1: not JSON"), "{err}");
    }
}

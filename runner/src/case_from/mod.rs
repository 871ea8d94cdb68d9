//! `case-from`: a recorded session (a harness transcript, or import lines) turned into a
//! case, so that an incident seen in production becomes a regression case in one command.
//! The server side of the recording becomes the fake's script, the client's requests become
//! the plan, and the checks judge that a client sends those requests and reports what the
//! recorded answers imply. Only what the case model can replay is kept; everything else is
//! named in the case's description, never dropped silently.
//!
//! The case runs on both transports: the script is the server's messages, which both fakes
//! play alike; HTTP statuses and headers of an HTTPS recording are not replayed (named in
//! the description when one was not a success).

mod exchanges;
mod plan;
mod read;
mod script;

use std::path::{Path, PathBuf};

use mcp_harness_scenarios::transcript::Record;
use serde_json::{Value, json};

pub use read::{parse_recording, read_recording};

/// The case replaying `records` (a session opened with `initialize`, or at 2026-07-28 with
/// `server/discover`), as the JSON of a case file; `name` is the case's id (`area/name`), shown in its description.
pub fn case_from_records(records: &[Record], name: &str) -> Result<Value, String> {
    let session = exchanges::session(records);
    let Some(first) = session.exchanges.first() else {
        return Err("the recording holds no request from the client".into());
    };
    let modern = match first.method() {
        "initialize" => false,
        "server/discover" => true,
        other => {
            return Err(format!(
                "the recording's first request is {other:?}: expected the opening of a session, \
                 `initialize` (or `server/discover` at 2026-07-28)"
            ));
        }
    };
    if first.answer.is_none() {
        return Err(format!(
            "the recording's {} request got no answer: nothing to replay",
            first.method()
        ));
    }
    let mut plan = plan::plan(&session.exchanges);
    let replayed: Vec<&exchanges::Exchange> = plan
        .replayed
        .iter()
        .map(|&i| &session.exchanges[i])
        .collect();
    let script = script::script(&session, &replayed, &mut plan.notes);
    if !script.connect_handlers.is_empty()
        && let Some(connect) = plan.steps.first_mut()
    {
        connect["handlers"] = Value::Object(script.connect_handlers.clone());
    }
    plan.wire.extend(script.checks.iter().cloned());
    for (i, exchange) in session.exchanges.iter().enumerate() {
        if !plan.replayed.contains(&i) && !exchange.server_messages.is_empty() {
            plan.notes.push(format!(
                "the server's messages before the answer to {}",
                exchange.method()
            ));
        }
    }
    for message in &session.unattributed {
        plan.notes.push(format!(
            "the server's {} sent after the last answer",
            message["method"].as_str().unwrap_or("message")
        ));
    }
    if session.authorized {
        plan.notes.push(
            "the client's authorization (the replay asks for none; the recording holds no \
             credential to give)"
                .into(),
        );
    }
    if !session.http_errors.is_empty() {
        plan.notes.push(format!(
            "the HTTP statuses {:?} (the replay answers every request with success)",
            session.http_errors
        ));
    }
    let requests = plan.steps.len().saturating_sub(2);
    let mut description = format!(
        "{name}: replays a recorded {} session ({requests} step{} after connect); the client \
         must send the recorded requests and report what the recorded answers imply",
        if session.https { "HTTPS" } else { "stdio" },
        if requests == 1 { "" } else { "s" },
    );
    if !plan.notes.is_empty() {
        description.push_str(". Not replayed: ");
        description.push_str(&counted(&plan.notes).join("; "));
    }
    let mut case = json!({
        "description": description,
        "requirement": "CONTRACT-7",
    });
    let offered = match modern {
        true => first
            .request
            .pointer("/params/_meta/io.modelcontextprotocol~1protocolVersion"),
        false => first.params().get("protocolVersion"),
    };
    if let Some(version) = offered.and_then(Value::as_str) {
        case["protocol_version"] = json!(version);
    }
    if modern {
        case["client_era"] = json!("modern");
    }
    case["server"] = json!({ "handlers": script.handlers });
    if modern {
        case["server"]["era"] = json!("modern");
    }
    case["plan"] = Value::Array(plan.steps);
    case["wire"] = Value::Array(plan.wire);
    // The case must read back as a case file: the canonical printer parses it.
    mcp_harness_scenarios::canonical::format_case(&case.to_string())
        .map_err(|e| format!("the derived case does not read back as a case file: {e}"))?;
    Ok(case)
}

/// Each note once, in order of first mention, with how often it came when more than once.
fn counted(notes: &[String]) -> Vec<String> {
    let mut seen: Vec<(&str, usize)> = Vec::new();
    for note in notes {
        match seen.iter_mut().find(|(n, _)| *n == note) {
            Some((_, count)) => *count += 1,
            None => seen.push((note, 1)),
        }
    }
    seen.into_iter()
        .map(|(note, count)| match count {
            1 => note.to_owned(),
            n => format!("{note} ({n} times)"),
        })
        .collect()
}

/// Writes `case` canonical-formatted (what `cargo xtask fmt-cases` writes) to
/// `dir/name.json`, creating directories; `name` is a case id (`area/name`: lower-case
/// letters, digits, `-`, `_` and `/` between parts). Returns the path written.
pub fn write_case(dir: &Path, name: &str, case: &Value) -> Result<PathBuf, String> {
    check_name(name)?;
    let text = mcp_harness_scenarios::canonical::format_case(&case.to_string())
        .map_err(|e| format!("the case does not read back as a case file: {e}"))?;
    let path = dir.join(format!("{name}.json"));
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("{}: cannot create the directory: {e}", parent.display()))?;
    }
    std::fs::write(&path, text).map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
    Ok(path)
}

/// A case id: parts of lower-case letters, digits, `-` and `_`, joined by `/`.
pub fn check_name(name: &str) -> Result<(), String> {
    let good = |part: &str| {
        !part.is_empty()
            && part
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
    };
    match name.split('/').all(good) {
        true => Ok(()),
        false => Err(format!(
            "--name {name:?}: expected a case id, parts of lower-case letters, digits, `-` and \
             `_` joined by `/` (e.g. `incidents/pages-lost`)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_harness_scenarios::transcript::Event;

    /// An imported session: a roots request after initialization, a call refused with a
    /// JSON-RPC error, a read the server had no capability for, a method no step sends.
    const IMPORTED: &str = r#"{"from":"client","message":{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"roots":{}},"clientInfo":{"name":"c","version":"1"}}}}
{"from":"server","message":{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"real","version":"2"}}}}
{"from":"client","message":{"jsonrpc":"2.0","method":"notifications/initialized"}}
{"from":"server","message":{"jsonrpc":"2.0","id":"r1","method":"roots/list"}}
{"from":"client","message":{"jsonrpc":"2.0","id":"r1","result":{"roots":[{"uri":"file:///a"}]}}}
{"from":"client","message":{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get","arguments":{"k":"$x"}}}}
{"from":"server","message":{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad"}}}
{"from":"client","message":{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"file:///a/b"}}}
{"from":"server","message":{"jsonrpc":"2.0","id":2,"result":{"contents":[{"uri":"file:///a/b","text":"hello"}]}}}
{"from":"client","message":{"jsonrpc":"2.0","id":3,"method":"tasks/list"}}
{"from":"server","message":{"jsonrpc":"2.0","id":3,"result":{"tasks":[]}}}
"#;

    #[test]
    fn an_imported_session_becomes_a_case_naming_what_it_leaves_out() {
        let records = parse_recording(IMPORTED).unwrap();
        let case = case_from_records(&records, "inc/roots").unwrap();
        let plan = case["plan"].as_array().unwrap();
        assert_eq!(plan.len(), 4, "{case}");
        assert_eq!(
            plan[0]["handlers"]["roots/list"],
            json!({"roots": [{"uri": "file:///a"}]})
        );
        assert_eq!(
            plan[1]["error"],
            json!({"kind": "protocol_error", "code": -32602})
        );
        assert_eq!(plan[1]["requirement"], "PROF-RES-4");
        // The arguments hold a `$` value: matched literally.
        assert_eq!(plan[1]["arguments"], json!({"k": "$x"}));
        assert_eq!(plan[2]["error"], "capability_missing");
        let handlers = case["server"]["handlers"].as_array().unwrap();
        let call = handlers
            .iter()
            .find(|h| h["method"] == "tools/call")
            .unwrap();
        assert_eq!(call["sends"][0]["message"]["method"], "roots/list");
        assert_eq!(call["sends"][0]["await_response"], true);
        assert!(!handlers.iter().any(|h| h["method"] == "tasks/list"));
        let wire = case["wire"].as_array().unwrap();
        assert!(wire.iter().any(|w| w["requirement"] == "CONTRACT-17"));
        assert!(!wire.iter().any(|w| w["sent"]["method"] == "resources/read"));
        let description = case["description"].as_str().unwrap();
        assert!(description.contains("tasks/list (no plan step sends it)"));
        assert!(description.contains("had not declared `resources`"));
        assert_eq!(
            counted(&["a".into(), "b".into(), "a".into()]),
            ["a (2 times)", "b"]
        );

        let dir = tempfile::tempdir().unwrap();
        let path = write_case(dir.path(), "inc/roots", &case).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            mcp_harness_scenarios::canonical::format_case(&text).unwrap(),
            text
        );
        assert!(write_case(dir.path(), "Inc/../x", &case).is_err());
    }

    #[test]
    fn an_https_recording_is_replayed_on_both_transports_naming_what_http_showed() {
        let http = |status: u16, auth: bool| {
            let mut headers = std::collections::BTreeMap::new();
            headers.insert("content-type".to_owned(), "application/json".to_owned());
            if auth {
                headers.insert("authorization".to_owned(), "Bearer [redacted]".to_owned());
            }
            Record {
                pid: 1,
                at_ms: None,
                event: Event::HttpRequest {
                    method: "POST".into(),
                    path: "/mcp".into(),
                    headers,
                    status,
                    origin: None,
                    endpoint: None,
                    params: None,
                },
            }
        };
        let message = |event: Event| Record {
            pid: 1,
            at_ms: None,
            event,
        };
        let records = vec![
            message(Event::Connected),
            http(401, false),
            http(200, true),
            message(Event::Received {
                message: json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}}),
            }),
            message(Event::Sent {
                message: json!({"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "s", "version": "1"}}}),
            }),
            http(200, true),
            message(Event::Received {
                message: json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
            }),
            message(Event::Sent {
                message: json!({"jsonrpc": "2.0", "id": 2, "result": {"tools": [{"name": "a", "inputSchema": {"type": "object"}}]}}),
            }),
        ];
        let case = case_from_records(&records, "inc/http").unwrap();
        assert!(case.get("transports").is_none(), "{case}");
        assert_eq!(case["protocol_version"], "2025-11-25");
        let description = case["description"].as_str().unwrap();
        assert!(
            description.contains("recorded HTTPS session"),
            "{description}"
        );
        assert!(description.contains("HTTP statuses [401]"), "{description}");
        assert!(
            description.contains("the client's authorization"),
            "{description}"
        );
        assert!(!case.to_string().contains("Bearer"), "{case}");
        assert_eq!(
            case["plan"][1]["ok"],
            json!({"tools": {"$unordered": [{"name": "a"}]}})
        );
    }

    #[test]
    fn a_session_without_an_answered_opening_is_refused() {
        let records = parse_recording(
            "{\"from\":\"client\",\"message\":{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\"}}\n",
        )
        .unwrap();
        let err = case_from_records(&records, "x").unwrap_err();
        assert!(err.contains("got no answer"), "{err}");
        let records = parse_recording(
            "{\"from\":\"client\",\"message\":{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}}\n",
        )
        .unwrap();
        let err = case_from_records(&records, "x").unwrap_err();
        assert!(err.contains("expected the opening of a session"), "{err}");
        assert!(case_from_records(&[], "x").is_err());
    }
}

//! The rules every trial is held to whatever its case: JSON-RPC base rules on everything the
//! client sent, and over HTTP the POST header rules.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use mcp_harness_scenarios::matcher;
use mcp_harness_scenarios::model::{Level, era};
use mcp_harness_scenarios::transcript::Event;

use super::Checker;
use crate::conformance::trial::TrialRun;

const SPEC_BASE: &str = "docs/specification/2025-11-25/basic/index.mdx";
const SPEC_STDIO: &str = "docs/specification/2025-11-25/basic/transports.mdx § stdio";

pub(super) fn base_rules(c: &mut Checker<'_>, run: &TrialRun) {
    let events: Vec<&Event> = run.records.iter().flatten().map(|r| &r.event).collect();
    let invalid = events.iter().find_map(|e| match e {
        Event::ReceivedInvalid { line, error } => Some(format!("{line:?} ({error})")),
        _ => None,
    });
    let not_rpc = run.received().into_iter().find(|m| !is_jsonrpc(m));
    c.push(
        "every line the client wrote to the server is one JSON-RPC 2.0 message",
        Level::Must,
        "Messages are newline-delimited JSON-RPC and the client must not write anything to the server's stdin that is not a valid MCP message.",
        SPEC_STDIO,
        match (invalid, not_rpc) {
            (Some(line), _) => Err(("a JSON object per line".into(), format!("the line {line}"))),
            (None, Some(m)) => Err(("a JSON-RPC 2.0 message".into(), matcher::short(m))),
            (None, None) => Ok(()),
        },
    );
    let mut ids_problem = None;
    // A session is one server process (stdio) and, within it, what follows an `initialize`
    // (over HTTP a 404 makes the client start a new session, which may count from 1 again).
    let mut seen: HashSet<(u32, usize, String)> = HashSet::new();
    let mut sessions: HashMap<u32, usize> = HashMap::new();
    // The modern era has no sessions: an id only must not be one still outstanding.
    let mut outstanding: HashSet<(u32, String)> = HashSet::new();
    for r in run.records.iter().flatten() {
        let message = match &r.event {
            Event::Received { message } => message,
            Event::Sent { message } => {
                if let Some(id) = message.get("id").filter(|_| is_response(message)) {
                    outstanding.remove(&(r.pid, id.to_string()));
                }
                continue;
            }
            // A request the client gave up on is no longer outstanding either: by closing its
            // response stream (HTTP) or by `notifications/cancelled` (stdio).
            Event::StreamClosed { id } => {
                outstanding.remove(&(r.pid, id.to_string()));
                continue;
            }
            _ => continue,
        };
        if message.get("method") == Some(&Value::from("notifications/cancelled"))
            && let Some(id) = message.pointer("/params/requestId")
        {
            outstanding.remove(&(r.pid, id.to_string()));
        }
        let (Some(method), Some(id)) = (message.get("method"), message.get("id")) else {
            continue;
        };
        let session = sessions.entry(r.pid).or_default();
        if method == "initialize" {
            *session += 1;
        }
        let modern = era::meta_version(message.get("params")).is_some_and(era::is_modern);
        let problem = match id {
            Value::String(_) | Value::Number(_) if id.is_string() || id.is_i64() || id.is_u64() => {
                let key = id.to_string();
                let reused = match modern {
                    true => !outstanding.insert((r.pid, key)),
                    false => !seen.insert((r.pid, *session, key)),
                };
                reused.then(|| format!("the id {id} used twice"))
            }
            other => Some(format!("the id {other}")),
        };
        if problem.is_some() {
            ids_problem = problem;
            break;
        }
    }
    c.push(
        "request ids are strings or integers, never reused in a session",
        Level::Must,
        "Requests must include a string or integer ID that is not null and that the requestor has not used before in the same session (2026-07-28: that is not the id of another request still outstanding).",
        &format!("{SPEC_BASE} § Requests"),
        ids_problem.map_or(Ok(()), |p| Err(("unique string or integer ids".into(), p))),
    );
    let numbered = run.received().into_iter().find(|m| {
        m.get("id").is_some()
            && m.get("method")
                .and_then(Value::as_str)
                .is_some_and(|n| n.starts_with("notifications/"))
    });
    c.push(
        "notifications carry no id",
        Level::Must,
        "Notifications must not include an ID.",
        &format!("{SPEC_BASE} § Notifications"),
        numbered.map_or(Ok(()), |m| {
            Err(("no `id` member".into(), matcher::short(m)))
        }),
    );
}

/// The HTTP requests the fake saw, as the values `http_requests` wire checks match, and where
/// a modern or dual fake saw a response stream closed before its answer, `{"stream_closed": id}`.
pub(super) fn http_requests(run: &TrialRun) -> Vec<Value> {
    run.records
        .iter()
        .flatten()
        .filter_map(|r| match &r.event {
            Event::HttpRequest {
                method,
                path,
                headers,
                status,
            } => Some(serde_json::json!({
                "method": method, "path": path, "headers": headers, "status": status,
            })),
            Event::StreamClosed { id } => Some(serde_json::json!({"stream_closed": id})),
            _ => None,
        })
        .collect()
}

pub(super) fn http_rules(c: &mut Checker<'_>, requests: &[Value]) {
    const SENDING: &str =
        "docs/specification/2025-11-25/basic/transports.mdx § Sending Messages to the Server";
    let posts: Vec<&Value> = requests.iter().filter(|r| r["method"] == "POST").collect();
    let bad_accept = posts.iter().find(|r| {
        let accept = r["headers"]["accept"]
            .as_str()
            .unwrap_or_default()
            .to_ascii_lowercase();
        !(accept.contains("application/json") && accept.contains("text/event-stream"))
    });
    c.push(
        "every POST accepts both application/json and text/event-stream",
        Level::Must,
        "The client must include an Accept header listing both application/json and text/event-stream.",
        SENDING,
        bad_accept.map_or(Ok(()), |r| {
            Err(("Accept: application/json, text/event-stream".into(), matcher::short(&r["headers"])))
        }),
    );
    let bad_type = posts.iter().find(|r| {
        !r["headers"]["content-type"]
            .as_str()
            .unwrap_or_default()
            .to_ascii_lowercase()
            .starts_with("application/json")
    });
    c.push(
        "every POST body is sent as application/json",
        Level::Must,
        "Every JSON-RPC message sent from the client is a new HTTP POST request to the MCP endpoint, with a JSON body.",
        SENDING,
        bad_type.map_or(Ok(()), |r| {
            Err(("Content-Type: application/json".into(), matcher::short(&r["headers"])))
        }),
    );
}

fn is_response(m: &Value) -> bool {
    m.get("method").is_none() && (m.get("result").is_some() || m.get("error").is_some())
}

/// A request or notification, a result with its id, or an error response: since 2025-11-25
/// an error answering a message whose id could not be read may leave the id out (JSON-RPC
/// 2.0 itself sends `null` there), so an id-less error is judged well formed.
fn is_jsonrpc(m: &Value) -> bool {
    let has = |k: &str| m.get(k).is_some();
    m.get("jsonrpc") == Some(&Value::from("2.0"))
        && (m.get("method").is_some_and(Value::is_string)
            || (has("id") && has("result"))
            || (m.get("error").is_some_and(Value::is_object) && !has("result")))
}

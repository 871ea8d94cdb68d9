//! The fake's script of a recorded session: one handler per distinct request (its method
//! and the params that tell answers apart), answering with what the server answered, in
//! order (`times`) where the same request got different answers; the server's own messages
//! go out again before the answer they preceded (`sends`).

use serde_json::{Map, Value, json};

use super::exchanges::{Exchange, Session};

/// The list methods, whose pages a cursor tells apart.
pub const LISTINGS: [&str; 4] = [
    "tools/list",
    "resources/list",
    "resources/templates/list",
    "prompts/list",
];

/// The methods a plan step sends (besides `initialize`): the ones a script answers.
pub const REPLAYED: [&str; 12] = [
    "tools/list",
    "resources/list",
    "resources/templates/list",
    "prompts/list",
    "tools/call",
    "resources/read",
    "prompts/get",
    "completion/complete",
    "ping",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
];

/// A matcher for a map of arguments as sent: exactly these, or (none given) absent or `{}`,
/// which libraries send alike.
pub fn arguments_matcher(arguments: Option<&Value>) -> Value {
    match arguments {
        Some(Value::Object(map)) if !map.is_empty() => json!({"$literal": arguments}),
        _ => json!({"$one_of": [{"$absent": true}, {"$literal": {}}]}),
    }
}

/// The params matcher that tells this request's answers apart, or `None` (any params).
pub fn distinguishing(method: &str, params: &Value) -> Option<Value> {
    let member = |name: &str| params.get(name).cloned().unwrap_or(Value::Null);
    match method {
        m if LISTINGS.contains(&m) => Some(match params.get("cursor") {
            Some(cursor) => json!({"cursor": cursor}),
            None => json!({"cursor": {"$absent": true}}),
        }),
        "tools/call" | "prompts/get" => Some(json!({
            "name": member("name"),
            "arguments": arguments_matcher(params.get("arguments")),
        })),
        "resources/read" | "resources/subscribe" | "resources/unsubscribe" => {
            Some(json!({"uri": member("uri")}))
        }
        "completion/complete" => Some(json!({
            "ref": {"$literal": member("ref")},
            "argument": {"$literal": member("argument")},
        })),
        "logging/setLevel" => Some(json!({"level": member("level")})),
        _ => None,
    }
}

/// The fake's script, and what the client must do for the server's own requests.
#[derive(Debug, Default)]
pub struct Script {
    /// The handlers, in order.
    pub handlers: Vec<Value>,
    /// The client's recorded answers to server requests, by method: `connect`'s `handlers`.
    pub connect_handlers: Map<String, Value>,
    /// Wire checks that the client answered each server request as recorded.
    pub checks: Vec<Value>,
}

/// The script answering `replayed` (those with an answer); notes name what is left out.
pub fn script(session: &Session, replayed: &[&Exchange], notes: &mut Vec<String>) -> Script {
    let mut out = Script::default();
    // (method, params matcher) in order of first appearance, each with its answers in order.
    let mut keys: Vec<(String, Option<Value>, Vec<Value>)> = Vec::new();
    for exchange in replayed {
        let Some(answer) = &exchange.answer else {
            continue;
        };
        let method = exchange.method();
        let params = distinguishing(method, exchange.params());
        let mut handler = json!({"method": method});
        if let Some(p) = &params {
            handler["params"] = p.clone();
        }
        handler["reply"] = match answer {
            Ok(result) => json!({"result": result}),
            Err(error) => json!({"error": rpc_error(error)}),
        };
        let context = format!("before the answer to {method}");
        let sends = sends(
            session,
            &exchange.server_messages,
            Some(&exchange.request),
            &context,
            &mut out,
            notes,
        );
        if !sends.is_empty() {
            handler["sends"] = Value::Array(sends);
        }
        match keys
            .iter_mut()
            .find(|(m, p, _)| m == method && *p == params)
        {
            Some((_, _, answers)) => answers.push(handler),
            None => keys.push((method.to_owned(), params, vec![handler])),
        }
    }
    for (_, _, answers) in keys {
        // Runs of the same answer become one handler; all but the last run answer `times`.
        let mut runs: Vec<(Value, u32)> = Vec::new();
        for handler in answers {
            match runs.last_mut() {
                Some((last, n)) if *last == handler => *n += 1,
                _ => runs.push((handler, 1)),
            }
        }
        let count = runs.len();
        for (i, (mut handler, n)) in runs.into_iter().enumerate() {
            if i + 1 < count {
                handler["times"] = json!(n);
            }
            out.handlers.push(handler);
        }
    }
    out
}

/// A JSON-RPC error object as the case model holds it (`code`, `message`, `data`).
fn rpc_error(error: &Value) -> Value {
    let mut out = json!({
        "code": error.get("code").and_then(Value::as_i64).unwrap_or(-32603),
        "message": error.get("message").and_then(Value::as_str).unwrap_or_default(),
    });
    if let Some(data) = error.get("data") {
        out["data"] = data.clone();
    }
    out
}

/// The server requests a client answers from `connect`'s handlers.
const ANSWERED: [&str; 3] = ["roots/list", "sampling/createMessage", "elicitation/create"];

/// `messages` (the server's, while `request` was open or after a notification) as `sends`:
/// notifications and `ping` as they were (a progress token equal to the request's becomes a
/// pointer to it, so the replay names the token the client under test chose); a roots,
/// sampling or elicitation request the client answered waits for the answer, which becomes
/// the client's handler for it and a wire check. Other server requests are noted.
fn sends(
    session: &Session,
    messages: &[Value],
    request: Option<&Value>,
    context: &str,
    out: &mut Script,
    notes: &mut Vec<String>,
) -> Vec<Value> {
    let token = request.and_then(|r| r.pointer("/params/_meta/progressToken"));
    let mut sends = Vec::new();
    for message in messages {
        let method = message["method"].as_str().unwrap_or_default();
        let mut send = json!({"message": message});
        if method == "ping"
            && let Some(id) = message.get("id")
            && let Some(Ok(_)) = session.client_answer(id)
        {
            out.checks.push(json!({
                "check": format!("the client answers the server's ping (id {id}) {context}"),
                "sent": {"id": id, "result": {}, "error": {"$absent": true}},
                "requirement": "PING-01",
            }));
        }
        if let Some(id) = message.get("id").filter(|_| method != "ping") {
            if !ANSWERED.contains(&method) {
                notes.push(format!("the server's {method} request {context}"));
                continue;
            }
            if let Some(Ok(answer)) = session.client_answer(id) {
                send["await_response"] = json!(true);
                let first = out
                    .connect_handlers
                    .entry(method.to_owned())
                    .or_insert_with(|| answer.clone());
                if first != answer {
                    notes.push(format!(
                        "the client's other answer to {method} {context} (the case's client \
                         answers as it first did, unchecked)"
                    ));
                } else {
                    out.checks.push(json!({
                    "check": format!("the client answers the server's {method} (id {id}) {context} as recorded"),
                    "sent": {"id": id, "result": answer_matcher(method, answer)},
                    "requirement": "CONTRACT-17",
                    }));
                }
            }
        }
        if token.is_some() && message.pointer("/params/progressToken") == token {
            send["message"]["params"]["progressToken"] =
                json!({"$request": "/params/_meta/progressToken"});
        }
        sends.push(send);
    }
    sends
}

/// What the client's answer must hold: the roots in any order (no text orders them), else
/// the answer's members (a subset match, so a library's `_meta` is allowed).
fn answer_matcher(method: &str, answer: &Value) -> Value {
    match (method, answer.get("roots")) {
        ("roots/list", Some(Value::Array(roots))) => json!({"roots": {"$unordered": roots}}),
        _ if has_dollar_member(answer) => json!({"$literal": answer}),
        _ => answer.clone(),
    }
}

fn has_dollar_member(value: &Value) -> bool {
    match value {
        Value::Object(map) => map
            .iter()
            .any(|(k, v)| k.starts_with('$') || has_dollar_member(v)),
        Value::Array(items) => items.iter().any(has_dollar_member),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_harness_scenarios::matcher::{Captures, matches};

    #[test]
    fn empty_arguments_match_absent_or_empty_and_others_exactly() {
        let any = arguments_matcher(None);
        let m = |v: Value| matches(&json!({"arguments": any}), &v, &mut Captures::new()).is_ok();
        assert!(m(json!({})));
        assert!(m(json!({"arguments": {}})));
        assert!(!m(json!({"arguments": {"a": 1}})));
        let exact = arguments_matcher(Some(&json!({"a": 1})));
        let m = |v: Value| matches(&exact, &v, &mut Captures::new()).is_ok();
        assert!(m(json!({"a": 1})));
        assert!(!m(json!({"a": 1, "b": 2})));
    }

    #[test]
    fn the_same_request_answered_differently_plays_its_answers_in_order() {
        let call = |n: i64| Exchange {
            request: json!({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": "t"}}),
            answer: Some(Ok(
                json!({"content": [{"type": "text", "text": if n < 3 { "a" } else { "b" }}]}),
            )),
            server_messages: Vec::new(),
        };
        let calls = [call(1), call(2), call(3)];
        let refs: Vec<&Exchange> = calls.iter().collect();
        let session = Session::default();
        let handlers = script(&session, &refs, &mut Vec::new()).handlers;
        assert_eq!(handlers.len(), 2, "{handlers:?}");
        assert_eq!(handlers[0]["times"], 2);
        assert!(handlers[1].get("times").is_none());
    }
}

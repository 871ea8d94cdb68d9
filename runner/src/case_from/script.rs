//! The fake's script of a recorded session: one handler per distinct request (its method
//! and the params that tell answers apart), answering with what the server answered, in
//! order (`times`) where the same request got different answers; the server's own messages
//! sent while a request was open go out again before its answer (`sends`).

use serde_json::{Value, json};

use super::exchanges::Exchange;

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

/// The handlers answering `exchanges` (those with an answer, of `initialize` or a replayed
/// method), and notes on the server messages left out.
pub fn handlers(exchanges: &[&Exchange], notes: &mut Vec<String>) -> Vec<Value> {
    // (method, params matcher) in order of first appearance, each with its answers in order.
    let mut keys: Vec<(String, Option<Value>, Vec<Value>)> = Vec::new();
    for exchange in exchanges {
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
        let sends = sends(exchange, notes);
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
    let mut out = Vec::new();
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
            out.push(handler);
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

/// The server's messages while `exchange` was open, as `sends` before its answer: every
/// notification and `ping` (a progress token equal to the request's becomes a pointer to
/// it, so the replay names the token the client under test chose). Other server requests
/// need the client's answers, which a case's `connect` handlers give: left out, noted.
fn sends(exchange: &Exchange, notes: &mut Vec<String>) -> Vec<Value> {
    let token = exchange.request.pointer("/params/_meta/progressToken");
    let mut out = Vec::new();
    for message in &exchange.server_messages {
        let method = message["method"].as_str().unwrap_or_default();
        if message.get("id").is_some() && method != "ping" {
            notes.push(format!(
                "the server's {method} request during {} (it needs the client's answer)",
                exchange.method()
            ));
            continue;
        }
        let mut message = message.clone();
        if token.is_some() && message.pointer("/params/progressToken") == token {
            message["params"]["progressToken"] = json!({"$request": "/params/_meta/progressToken"});
        }
        out.push(json!({"message": message}));
    }
    out
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
        let handlers = handlers(&refs, &mut Vec::new());
        assert_eq!(handlers.len(), 2, "{handlers:?}");
        assert_eq!(handlers[0]["times"], 2);
        assert!(handlers[1].get("times").is_none());
    }
}

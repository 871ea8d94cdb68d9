//! The few JSON-RPC 2.0 shapes a fake needs: telling requests from notifications and
//! responses, and building the messages it answers with.
//!
//! Written here rather than shared with the client crate on purpose: the harness keeps two
//! independent implementations of the wire format, so a bug in one cannot hide itself.

use mcp_harness_scenarios::model::RpcError;
use serde_json::{Map, Value, json};

/// JSON-RPC code for a line that is not valid JSON.
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC code for a method the server does not know.
pub const METHOD_NOT_FOUND: i64 = -32601;

/// What a parsed incoming message is, as far as the fake cares.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming<'a> {
    /// Has a string `method` and an `id` member: it must be answered.
    Request {
        /// The id, echoed unchanged (same JSON type) in the answer.
        id: &'a Value,
        /// The method name.
        method: &'a str,
        /// The `params` member, if present.
        params: Option<&'a Value>,
    },
    /// Has a string `method` and no `id`: never answered.
    Notification,
    /// Anything else (a response, a batch, a scalar): recorded, never answered.
    Other,
}

/// Classifies a parsed message.
pub fn classify(message: &Value) -> Incoming<'_> {
    let Some(object) = message.as_object() else {
        return Incoming::Other;
    };
    let Some(method) = object.get("method").and_then(Value::as_str) else {
        return Incoming::Other;
    };
    match object.get("id") {
        Some(id) => Incoming::Request {
            id,
            method,
            params: object.get("params"),
        },
        None => Incoming::Notification,
    }
}

/// The method of a notification (a string `method` and no `id`), if `message` is one.
pub fn notification_method(message: &Value) -> Option<&str> {
    let object = message.as_object()?;
    match object.contains_key("id") {
        true => None,
        false => object.get("method").and_then(Value::as_str),
    }
}

/// Whether a message is a JSON-RPC response: an object with an `id` and a `result` or an
/// `error`, and no `method`.
pub fn is_response(message: &Value) -> bool {
    message.as_object().is_some_and(|o| {
        o.contains_key("id")
            && !o.contains_key("method")
            && (o.contains_key("result") || o.contains_key("error"))
    })
}

/// A success response carrying `result`.
pub fn result(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// An error response carrying `error` (its `data` only when the script gives one).
pub fn error(id: &Value, error: &RpcError) -> Value {
    let mut object = Map::new();
    object.insert("code".into(), error.code.into());
    object.insert("message".into(), error.message.clone().into());
    if let Some(data) = &error.data {
        object.insert("data".into(), data.clone());
    }
    json!({"jsonrpc": "2.0", "id": id, "error": object})
}

/// The answer to a line that did not parse: a parse error with a null id.
pub fn parse_error() -> Value {
    error(
        &Value::Null,
        &RpcError {
            code: PARSE_ERROR,
            message: "Parse error".into(),
            data: None,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_by_method_and_id() {
        let request = json!({"jsonrpc": "2.0", "id": "a", "method": "ping"});
        assert_eq!(
            classify(&request),
            Incoming::Request {
                id: &json!("a"),
                method: "ping",
                params: None
            }
        );
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        assert_eq!(classify(&note), Incoming::Notification);
        let response = json!({"jsonrpc": "2.0", "id": 1, "result": {}});
        assert_eq!(classify(&response), Incoming::Other);
        assert_eq!(classify(&json!([request])), Incoming::Other);
        assert_eq!(classify(&json!({"id": 1, "method": 5})), Incoming::Other);
    }

    #[test]
    fn responses_are_told_from_junk() {
        assert!(is_response(
            &json!({"jsonrpc": "2.0", "id": 1, "result": {}})
        ));
        assert!(is_response(
            &json!({"jsonrpc": "2.0", "id": 1, "error": {}})
        ));
        assert!(!is_response(&json!({"jsonrpc": "2.0", "id": 1})));
        assert!(!is_response(&json!({"id": 1, "method": "x", "result": 1})));
        assert!(!is_response(&json!(5)));
    }

    #[test]
    fn answers_keep_the_id_type_and_omit_absent_data() {
        assert_eq!(
            result(&json!(7), json!({})).to_string(),
            r#"{"jsonrpc":"2.0","id":7,"result":{}}"#
        );
        let e = RpcError {
            code: -32602,
            message: "bad".into(),
            data: None,
        };
        assert_eq!(
            error(&json!("7"), &e).to_string(),
            r#"{"jsonrpc":"2.0","id":"7","error":{"code":-32602,"message":"bad"}}"#
        );
        assert_eq!(parse_error()["id"], Value::Null);
        assert_eq!(parse_error()["error"]["code"], json!(PARSE_ERROR));
    }
}

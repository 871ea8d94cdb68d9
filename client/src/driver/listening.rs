//! The steps about what the server starts: `connect`'s `handlers`, `call_tool`'s `progress`
//! and `max_timeout_ms`, `events`, `set_roots`, `subscribe_resource`, `unsubscribe_resource`
//! and `listen` (CLIENTS.md, "What the server starts").
//!
//! A malformed step is `unsupported_op` with the reason, read before the connection is looked
//! at, like every other step.

use std::time::Duration;

use serde_json::{Value, json};

use super::step::not_connected;
use crate::client::Client;
use crate::error::{Error, ErrorKind};
use crate::handlers::Handlers;

fn malformed(message: String) -> Error {
    Error::new(ErrorKind::UnsupportedOp, message)
}

/// `connect`'s optional `handlers`: the answers to server requests, by method; and its
/// optional `tasks`: the methods among them served as tasks (2025-11-25).
pub(super) fn handlers(step: &Value) -> Result<Handlers, Error> {
    let mut handlers = match step.get("handlers") {
        None | Some(Value::Null) => Handlers::new(),
        Some(Value::Object(map)) => {
            Handlers::from_json(map).map_err(|why| malformed(format!("connect: {why}")))?
        }
        Some(other) => {
            return Err(malformed(format!(
                "connect: handlers must be an object of answers by method, got {other}"
            )));
        }
    };
    let methods: Vec<String> = match step.get("tasks") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|m| m.as_str().map(str::to_owned))
            .collect::<Option<_>>()
            .ok_or_else(|| malformed("connect: tasks must be an array of method names".into()))?,
        Some(other) => {
            return Err(malformed(format!(
                "connect: tasks must be an array of method names, got {other}"
            )));
        }
    };
    handlers
        .serve_as_tasks(&methods)
        .map_err(|why| malformed(format!("connect: {why}")))?;
    Ok(handlers)
}

/// `call_tool`'s `progress` and `max_timeout_ms`: `None` when no progress is asked for, else
/// the maximum timeout (if any).
pub(super) fn progress(step: &Value) -> Result<Option<Option<Duration>>, Error> {
    let asked = match step.get("progress") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            return Err(malformed(format!(
                "call_tool: progress must be a boolean, got {other}"
            )));
        }
    };
    let max = match step.get("max_timeout_ms") {
        None | Some(Value::Null) => None,
        Some(ms) => match ms.as_u64() {
            Some(ms) => Some(Duration::from_millis(ms)),
            None => {
                return Err(malformed(format!(
                    "call_tool: max_timeout_ms must be a non-negative integer, got {ms}"
                )));
            }
        },
    };
    if max.is_some() && !asked {
        return Err(malformed(
            "call_tool: max_timeout_ms bounds a call that asks for progress or accepts a task; \
             add \"progress\": true or \"task\": {}"
                .into(),
        ));
    }
    Ok(asked.then_some(max))
}

/// Runs one of this module's steps.
pub(super) async fn run(op: &str, step: &Value, client: Option<&Client>) -> Result<Value, Error> {
    match op {
        "events" => {
            let min = match step.get("min") {
                None | Some(Value::Null) => 0,
                Some(n) => n.as_u64().ok_or_else(|| {
                    malformed(format!(
                        "events: min must be a non-negative integer, got {n}"
                    ))
                })?,
            };
            let client = client.ok_or_else(not_connected)?;
            let min = usize::try_from(min).unwrap_or(usize::MAX);
            Ok(json!({"events": client.events(min).await}))
        }
        "set_roots" => {
            let Some(Value::Array(roots)) = step.get("roots") else {
                return Err(malformed(format!(
                    "set_roots needs an array \"roots\": {step}"
                )));
            };
            let client = client.ok_or_else(not_connected)?;
            client.set_roots(roots.clone()).await.map(|()| json!({}))
        }
        "subscribe_resource" | "unsubscribe_resource" => {
            let Some(uri) = step.get("uri").and_then(Value::as_str) else {
                return Err(malformed(format!("{op} needs a string \"uri\": {step}")));
            };
            let client = client.ok_or_else(not_connected)?;
            let done = match op {
                "subscribe_resource" => client.subscribe_resource(uri).await,
                _ => client.unsubscribe_resource(uri).await,
            };
            done.map(|()| json!({}))
        }
        "listen" => {
            let Some(filter) = step.get("notifications").filter(|f| f.is_object()) else {
                return Err(malformed(format!(
                    "listen needs an object \"notifications\" (the filter): {step}"
                )));
            };
            let client = client.ok_or_else(not_connected)?;
            client.listen(filter.clone()).await
        }
        other => Err(malformed(format!(
            "this driver does not know the step {other}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_steps_say_why() {
        let bad = [
            handlers(&json!({"handlers": []})).unwrap_err(),
            handlers(&json!({"handlers": {"ping": {}}})).unwrap_err(),
            handlers(&json!({"tasks": "sampling/createMessage"})).unwrap_err(),
            handlers(&json!({"tasks": [1]})).unwrap_err(),
            handlers(&json!({"tasks": ["sampling/createMessage"]})).unwrap_err(),
            progress(&json!({"progress": "yes"})).unwrap_err(),
            progress(&json!({"progress": true, "max_timeout_ms": -1})).unwrap_err(),
            progress(&json!({"max_timeout_ms": 5})).unwrap_err(),
        ];
        for e in bad {
            assert_eq!(e.kind, ErrorKind::UnsupportedOp, "{}", e.message);
        }
        let sampling = json!({"handlers": {"sampling/createMessage": {}},
            "tasks": ["sampling/createMessage"]});
        assert!(handlers(&sampling).is_ok());
        assert_eq!(progress(&json!({})).unwrap(), None);
        assert_eq!(
            progress(&json!({"progress": true, "max_timeout_ms": 5})).unwrap(),
            Some(Some(Duration::from_millis(5)))
        );
    }

    #[tokio::test]
    async fn steps_are_read_before_the_connection_is_looked_at() {
        let kind = |r: Result<Value, Error>| r.unwrap_err().kind;
        let closed = ErrorKind::TransportClosed;
        let malformed = ErrorKind::UnsupportedOp;
        assert_eq!(kind(run("events", &json!({}), None).await), closed);
        assert_eq!(
            kind(run("events", &json!({"min": "2"}), None).await),
            malformed
        );
        assert_eq!(
            kind(run("set_roots", &json!({"roots": []}), None).await),
            closed
        );
        assert_eq!(kind(run("set_roots", &json!({}), None).await), malformed);
        assert_eq!(
            kind(run("subscribe_resource", &json!({"uri": "a"}), None).await),
            closed
        );
        assert_eq!(
            kind(run("unsubscribe_resource", &json!({}), None).await),
            malformed
        );
        assert_eq!(
            kind(run("listen", &json!({"notifications": {}}), None).await),
            closed
        );
        assert_eq!(
            kind(run("listen", &json!({"notifications": 1}), None).await),
            malformed
        );
    }
}

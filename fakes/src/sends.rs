//! Messages the fake starts itself (a handler's `sends`), transport-independent: filling in
//! `{"$request": "/pointer"}` from the triggering request and
//! `{"$response": {"id": …, "pointer": "/pointer"}}` from the client's response to a request
//! the fake sent earlier, splitting a rule's messages into those before and after its reply,
//! and waiting for the client's response to a request the fake sent (`await_response`).

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use mcp_harness_scenarios::model::{Send, SendAt, Via};
use serde_json::Value;
use tokio::sync::oneshot;

use crate::jsonrpc;

/// `message` with every member whose value is `{"$request": P}` replaced by the value at the
/// JSON pointer `P` in `trigger` (the whole request or notification that matched the rule),
/// and every member whose value is `{"$response": {"id": I, "pointer": P}}` by the value at
/// `P` in the client's response to the request with id `I` the fake sent (kept by
/// `responses`); an absent value becomes `null`.
pub fn substitute(message: &Value, trigger: &Value, responses: &Awaited) -> Value {
    match message {
        Value::Object(map) if map.len() == 1 && map.contains_key("$request") => {
            match map.get("$request").and_then(Value::as_str) {
                Some(pointer) => trigger.pointer(pointer).cloned().unwrap_or(Value::Null),
                None => message.clone(),
            }
        }
        Value::Object(map) if map.len() == 1 && map.contains_key("$response") => {
            let reference = map.get("$response");
            let id = reference.and_then(|r| r.get("id"));
            let pointer = reference
                .and_then(|r| r.get("pointer"))
                .and_then(Value::as_str);
            match (id, pointer) {
                (Some(id), Some(pointer)) => responses
                    .response(id)
                    .and_then(|r| r.pointer(pointer).cloned())
                    .unwrap_or(Value::Null),
                _ => message.clone(),
            }
        }
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), substitute(v, trigger, responses)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|v| substitute(v, trigger, responses))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// A rule's messages sent before its reply, then those sent after it, each in script order.
pub fn split(sends: &[Send]) -> (Vec<Send>, Vec<Send>) {
    sends.iter().cloned().partition(|s| s.at == SendAt::Before)
}

/// The HTTP stream a message travels on: as scripted, else `post` before the reply and `get`
/// after it; a rule on a notification (which has no reply stream of its own) always `get`.
pub fn via(send: &Send, on_notification: bool) -> Via {
    match send.via {
        Some(via) if !on_notification => via,
        _ if on_notification => Via::Get,
        _ => match send.at {
            SendAt::Before => Via::Post,
            SendAt::After => Via::Get,
        },
    }
}

/// The id of `message` when it is a request the fake waits for the client to answer.
pub fn awaited_id(send: &Send, message: &Value) -> Option<Value> {
    if !send.await_response {
        return None;
    }
    let object = message.as_object()?;
    object.get("method")?;
    object.get("id").cloned()
}

/// Whether `message` is the response to the request `id` (a result or an error with its id).
pub fn answers(message: &Value, id: &Value) -> bool {
    jsonrpc::is_response(message) && message.get("id") == Some(id)
}

/// The responses the fake is waiting for, by the id of the request it sent; and the
/// responses the client sent, the last for each id (what `$response` refers to).
#[derive(Debug, Default)]
pub struct Awaited {
    waiting: Mutex<Vec<(Value, oneshot::Sender<()>)>>,
    received: Mutex<Vec<(Value, Value)>>,
}

impl Awaited {
    /// Starts waiting for a response with `id`; register before sending the request, so a
    /// quick answer is not missed.
    pub fn expect(&self, id: Value) -> oneshot::Receiver<()> {
        let (tx, rx) = oneshot::channel();
        self.lock().push((id, tx));
        rx
    }

    /// Notes a message from the client: when it is a response, it is kept (the last one per
    /// id) and every wait for its id ends.
    pub fn arrived(&self, message: &Value) {
        if jsonrpc::is_response(message)
            && let Some(id) = message.get("id")
        {
            {
                let mut received = self.received.lock().unwrap_or_else(PoisonError::into_inner);
                received.retain(|(kept, _)| kept != id);
                received.push((id.clone(), message.clone()));
            }
            self.answered(id);
        }
    }

    /// The client's last response to the request with `id`, if one came.
    pub fn response(&self, id: &Value) -> Option<Value> {
        let received = self.received.lock().unwrap_or_else(PoisonError::into_inner);
        received
            .iter()
            .find(|(kept, _)| kept == id)
            .map(|(_, m)| m.clone())
    }

    /// Ends every wait for a response with `id`.
    pub fn answered(&self, id: &Value) {
        let mut waiting = self.lock();
        let (done, rest): (Vec<_>, Vec<_>) = waiting.drain(..).partition(|(want, _)| want == id);
        *waiting = rest;
        drop(waiting);
        for (_, tx) in done {
            let _ = tx.send(());
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(Value, oneshot::Sender<()>)>> {
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Waits for `response` (from [`Awaited::expect`]) for at most `limit`; whether it came.
pub async fn wait(response: oneshot::Receiver<()>, limit: Duration) -> bool {
    matches!(tokio::time::timeout(limit, response).await, Ok(Ok(())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn request_pointers_are_filled_from_the_trigger() {
        let trigger = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": "slow", "_meta": {"progressToken": "tok"}}});
        let message = json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {
            "progressToken": {"$request": "/params/_meta/progressToken"},
            "progress": 1,
            "also": [{"$request": "/id"}, {"$request": "/params/missing"}],
            "two": {"$request": "/id", "other": 1}}});
        let sent = substitute(&message, &trigger, &Awaited::default());
        assert_eq!(sent["params"]["progressToken"], "tok");
        assert_eq!(sent["params"]["also"], json!([7, null]));
        // Only a one-member object is a reference.
        assert_eq!(
            sent["params"]["two"],
            json!({"$request": "/id", "other": 1})
        );
    }

    #[test]
    fn default_streams_follow_the_reply() {
        let send = |at: &str, via: Option<&str>| -> Send {
            let mut v = json!({"message": {}, "at": at});
            if let Some(via) = via {
                v["via"] = json!(via);
            }
            serde_json::from_value(v).unwrap()
        };
        assert_eq!(via(&send("before", None), false), Via::Post);
        assert_eq!(via(&send("after", None), false), Via::Get);
        assert_eq!(via(&send("after", Some("post")), false), Via::Post);
        assert_eq!(via(&send("before", Some("post")), true), Via::Get);
    }

    #[test]
    fn response_pointers_are_filled_from_the_clients_answer() {
        let awaited = Awaited::default();
        awaited.arrived(&json!({"jsonrpc": "2.0", "id": "make",
            "result": {"task": {"taskId": "t-1"}}}));
        let message = json!({"jsonrpc": "2.0", "id": "get", "method": "tasks/get", "params": {
            "taskId": {"$response": {"id": "make", "pointer": "/result/task/taskId"}},
            "none": {"$response": {"id": "other", "pointer": "/result"}}}});
        let sent = substitute(&message, &json!({}), &awaited);
        assert_eq!(sent["params"]["taskId"], "t-1");
        assert_eq!(sent["params"]["none"], Value::Null);
    }

    #[tokio::test]
    async fn a_response_ends_the_wait_for_its_id_only() {
        let awaited = Awaited::default();
        let one = awaited.expect(json!(1));
        let two = awaited.expect(json!("1"));
        awaited.arrived(&json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
        assert!(wait(one, Duration::from_secs(1)).await);
        assert!(!wait(two, Duration::from_millis(20)).await);
    }
}

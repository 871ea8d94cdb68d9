//! Tasks, as the requestor of a task-augmented `tools/call`: the 2025-11-25 tasks of the
//! legacy eras, and the 2026-07-28 tasks extension (`io.modelcontextprotocol/tasks`).
//!
//! A task lets a server answer a call with a handle first and the outcome later. The client
//! polls `tasks/get`, waiting the interval the server suggests between polls, and takes the
//! outcome when the task ends: legacy through `tasks/result` (which also carries the task's
//! input requests, answered by the connection's handlers), modern from the `tasks/get`
//! result itself (input requests answered by `tasks/update`). Cancelling a task is
//! `tasks/cancel`, never `notifications/cancelled`. Status notifications are surfaced as
//! events and never waited for.
//!
//! This file holds the pure rules (when a call is augmented, which interval is waited, what
//! a created task looks like, the related-task `_meta`); [`drive`] runs a task to its end,
//! [`received`] keeps the tasks the client runs as a receiver, [`seams`] holds the decisions
//! a deliberate defect may change.

pub(crate) mod drive;
pub(crate) mod received;
pub(crate) mod seams;

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::error::{Error, ErrorKind};
use crate::tools::ToolResult;

/// The extension identifier of the 2026-07-28 tasks extension.
pub(crate) const EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// `_meta` key that ties a message to a task (2025-11-25).
pub(crate) const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

/// How long the client waits between two polls when the server suggested no interval.
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_millis(1000);

/// How a caller accepts that a `tools/call` runs as a task (see
/// [`crate::Client::call_tool_as_task`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaskOptions {
    /// Legacy eras: the task lifetime asked for, in milliseconds, sent as `params.task.ttl`
    /// (the server may choose another). The modern extension has no such request member.
    pub ttl_ms: Option<u64>,
    /// Give the whole task up after this long from the call (`tasks/cancel`, then `timeout`).
    /// `None`: only each request's own timeout bounds it.
    pub max_time: Option<Duration>,
    /// Do not drive a created task: return it at once ([`TaskCall::Task`]).
    pub background: bool,
}

/// What a call that accepted a task ended with.
#[derive(Debug, Clone, PartialEq)]
pub enum TaskCall {
    /// The call's outcome: a plain answer, or the outcome of the task it ran as.
    Done(ToolResult),
    /// With [`TaskOptions::background`]: the task the server created, as received (legacy:
    /// `result.task`; modern: the result's fields, `resultType` left out).
    Task(Value),
}

/// A task's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    Working,
    InputRequired,
    Completed,
    Failed,
    Cancelled,
}

impl Status {
    /// The `status` of `task`; anything else is `invalid_response`.
    pub(crate) fn of(task: &Value) -> Result<Status, Error> {
        match task.get("status").and_then(Value::as_str) {
            Some("working") => Ok(Status::Working),
            Some("input_required") => Ok(Status::InputRequired),
            Some("completed") => Ok(Status::Completed),
            Some("failed") => Ok(Status::Failed),
            Some("cancelled") => Ok(Status::Cancelled),
            _ => Err(Error::invalid(format!(
                "the task's status is not one of working, input_required, completed, failed, \
                 cancelled: {}",
                task.get("status").unwrap_or(&Value::Null)
            ))),
        }
    }
}

/// The `taskId` of `task`, a string; anything else is `invalid_response`.
pub(crate) fn task_id(task: &Value) -> Result<String, Error> {
    match task.get("taskId") {
        Some(Value::String(id)) => Ok(id.clone()),
        other => Err(Error::invalid(format!(
            "the task has no string taskId: {}",
            other.unwrap_or(&Value::Null)
        ))),
    }
}

/// Legacy eras: whether a `tools/call` is task-augmented. Only when the server `declared`
/// `tasks.requests.tools.call` (else MUST NOT), then by the tool's `execution.taskSupport`
/// (`support`, from the last listing): `required` always (MUST), `optional` when the caller
/// `asked`, absent or `forbidden` never (MUST NOT).
pub(crate) fn augment(declared: bool, support: Option<&str>, asked: bool) -> bool {
    declared
        && match support {
            Some("required") => true,
            Some("optional") => asked,
            _ => false,
        }
}

/// The interval to wait before the next poll: the `task`'s suggestion (`pollInterval`
/// legacy, `pollIntervalMs` modern; a non-negative number of milliseconds), else the `last`
/// one waited (the interval may change over a task's life; an answer without one keeps it).
pub(crate) fn poll_interval(task: &Value, modern: bool, last: Duration) -> Duration {
    let member = if modern {
        "pollIntervalMs"
    } else {
        "pollInterval"
    };
    let suggested = task
        .get(member)
        .and_then(|ms| match (ms.as_u64(), ms.as_f64()) {
            (Some(ms), _) => Some(ms),
            (None, Some(f)) if f >= 0.0 && f.is_finite() => Some(f as u64),
            _ => None,
        });
    suggested.map_or(last, Duration::from_millis)
}

/// Modern era: whether a `CreateTaskResult` (`resultType: "task"`) is a valid answer to
/// `method` sent with the extension `declared` in its capabilities: only `tools/call` (the
/// one method the extension supports) and only when declared. Anything else MUST be taken as
/// an invalid response.
pub(crate) fn may_create_task(method: &str, declared: bool) -> bool {
    declared && method == "tools/call"
}

/// Legacy eras: the task of a `CreateTaskResult` answering a task-augmented request (its
/// `task` member, an object), if the result is one.
pub(crate) fn legacy_created(result: &Value) -> Option<&Value> {
    result.get("task").filter(|task| task.is_object())
}

/// Modern era: the task of a `CreateTaskResult` (the result's own members, without
/// `resultType`).
pub(crate) fn modern_task(result: &Value) -> Value {
    let mut task = result.clone();
    if let Value::Object(map) = &mut task {
        map.remove("resultType");
    }
    task
}

/// The `related-task` `_meta` of a server request's `params`, if it names a task.
pub(crate) fn related_task(params: &Value) -> Option<&Value> {
    params
        .pointer("/_meta")
        .and_then(|meta| meta.get(RELATED_TASK))
        .filter(|related| related.is_object())
}

/// `result` with the `related-task` `_meta` added (beside any `_meta` keys already there):
/// the answer to a request about a task carries the same task (MUST).
pub(crate) fn with_related_task(result: Value, related: &Value) -> Value {
    let Value::Object(mut map) = result else {
        return result;
    };
    let mut meta = match map.remove("_meta") {
        Some(Value::Object(meta)) => meta,
        _ => Map::new(),
    };
    meta.insert(RELATED_TASK.into(), related.clone());
    map.insert("_meta".into(), Value::Object(meta));
    Value::Object(map)
}

/// Modern era: `capabilities` (a request's client capabilities) declaring the tasks
/// extension, beside any other extension.
pub(crate) fn with_extension(capabilities: Value) -> Value {
    let Value::Object(mut caps) = capabilities else {
        return capabilities;
    };
    let extensions = caps
        .entry("extensions")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(extensions) = extensions {
        extensions.insert(EXTENSION.into(), json!({}));
    }
    Value::Object(caps)
}

/// A modern `failed` task's `error` (a JSON-RPC error object) as the caller's error:
/// `protocol_error` with its code; a missing or malformed error is `invalid_response`.
pub(crate) fn failed(task: &Value) -> Error {
    let error = task.get("error");
    let Some(code) = error.and_then(|e| e.get("code")).and_then(Value::as_i64) else {
        return Error::invalid(format!(
            "the task failed without a JSON-RPC error object with an integer code: {}",
            error.unwrap_or(&Value::Null)
        ));
    };
    let message = error
        .and_then(|e| e.get("message"))
        .and_then(Value::as_str)
        .unwrap_or("(no message)");
    Error {
        kind: ErrorKind::ProtocolError,
        message: format!("the task failed with JSON-RPC error {code}: {message}"),
        code: Some(code),
        status: None,
        data: error.and_then(|e| e.get("data")).cloned(),
    }
}

/// A task that ended `cancelled` although the caller never asked: kind `cancelled`.
pub(crate) fn cancelled_by_server(task_id: &str) -> Error {
    Error::new(
        ErrorKind::Cancelled,
        format!("the task {task_id} ended cancelled; the client did not cancel it"),
    )
}

/// The tools' `execution.taskSupport`, from the last listing.
#[derive(Default)]
pub(crate) struct Support(Mutex<HashMap<String, String>>);

impl Support {
    /// Remembers every listed tool's `execution.taskSupport` (replacing the last listing's).
    pub(crate) fn remember(&self, tools: &[Value]) {
        let known = tools
            .iter()
            .filter_map(|tool| {
                let name = tool.get("name")?.as_str()?;
                let support = tool.pointer("/execution/taskSupport")?.as_str()?;
                Some((name.to_owned(), support.to_owned()))
            })
            .collect();
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = known;
    }

    /// The tool `name`'s `execution.taskSupport`, if it was listed with one.
    pub(crate) fn of(&self, name: &str) -> Option<String> {
        let known = self.0.lock().unwrap_or_else(|p| p.into_inner());
        known.get(name).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handlers::Handlers;
    use crate::listener::Listener;
    use crate::seams::Seams;

    #[tokio::test]
    async fn task_status_notifications_are_events_and_answers_carry_the_related_task() {
        let l = Listener::new(Handlers::new(), Seams::default());
        let mut watching = l.task_statuses();
        let note = json!({"taskId": "t", "status": "working", "ttl": null});
        l.notification("notifications/tasks/status", &note);
        assert_eq!(
            l.take_events(0, Duration::ZERO).await,
            [json!({"type": "task_status", "taskId": "t", "status": "working"})]
        );
        assert!(watching.has_changed().unwrap());
        assert_eq!(*watching.borrow_and_update(), note);
        let handlers = json!({"elicitation/create": {"action": "decline"}});
        let Value::Object(handlers) = handlers else {
            panic!()
        };
        let related = json!({RELATED_TASK: {"taskId": "t"}});
        let answer = |l: &Listener| {
            l.server_request(
                &json!(9),
                "elicitation/create",
                &json!({"message": "m", "_meta": related}),
            )
        };
        let l = Listener::new(Handlers::from_json(&handlers).unwrap(), Seams::default());
        let reply = answer(&l).unwrap().unwrap();
        assert_eq!(reply["result"]["_meta"], related);
        assert_eq!(reply["result"]["action"], "decline");
        #[cfg(feature = "defects")]
        {
            let bare = Listener::new(
                Handlers::from_json(&handlers).unwrap(),
                Seams::only("task-no-related-meta"),
            );
            assert!(
                answer(&bare).unwrap().unwrap()["result"]
                    .get("_meta")
                    .is_none()
            );
        }
    }

    #[test]
    fn augmentation_follows_the_capability_then_the_tool() {
        for (declared, support, asked, augmented) in [
            (false, Some("required"), true, false),
            (false, Some("optional"), true, false),
            (true, None, true, false),
            (true, Some("forbidden"), true, false),
            (true, Some("banana"), true, false),
            (true, Some("optional"), true, true),
            (true, Some("optional"), false, false),
            (true, Some("required"), false, true),
            (true, Some("required"), true, true),
        ] {
            assert_eq!(
                augment(declared, support, asked),
                augmented,
                "{declared} {support:?} {asked}"
            );
        }
    }

    #[test]
    fn the_poll_interval_is_the_last_suggested() {
        let last = Duration::from_millis(700);
        let legacy = json!({"pollInterval": 250, "pollIntervalMs": 9});
        assert_eq!(
            poll_interval(&legacy, false, last),
            Duration::from_millis(250)
        );
        assert_eq!(poll_interval(&legacy, true, last), Duration::from_millis(9));
        for none in [
            json!({}),
            json!({"pollInterval": -1}),
            json!({"pollInterval": "5"}),
        ] {
            assert_eq!(poll_interval(&none, false, last), last, "{none}");
        }
        assert_eq!(
            poll_interval(&json!({"pollIntervalMs": 12.0}), true, last),
            Duration::from_millis(12)
        );
        assert_eq!(DEFAULT_POLL_INTERVAL, Duration::from_secs(1));
    }

    #[test]
    fn a_created_task_answers_only_a_declared_tools_call() {
        assert!(may_create_task("tools/call", true));
        assert!(!may_create_task("tools/call", false));
        for method in ["resources/read", "prompts/get", "tasks/get", "tools/list"] {
            assert!(!may_create_task(method, true), "{method}");
        }
        let created = json!({"task": {"taskId": "t", "status": "working"}});
        assert_eq!(legacy_created(&created), Some(&created["task"]));
        assert_eq!(legacy_created(&json!({"content": []})), None);
        assert_eq!(legacy_created(&json!({"task": "t"})), None);
        let modern = json!({"resultType": "task", "taskId": "t", "status": "working"});
        assert_eq!(
            modern_task(&modern),
            json!({"taskId": "t", "status": "working"})
        );
    }

    #[test]
    fn related_task_meta_is_carried_into_the_answer() {
        let params = json!({"message": "m", "_meta": {RELATED_TASK: {"taskId": "t"}}});
        let related = related_task(&params).unwrap();
        let answered = with_related_task(json!({"action": "accept", "_meta": {"x": 1}}), related);
        assert_eq!(
            answered,
            json!({"action": "accept", "_meta": {"x": 1, RELATED_TASK: {"taskId": "t"}}})
        );
        assert_eq!(related_task(&json!({"_meta": {RELATED_TASK: "t"}})), None);
        assert_eq!(related_task(&json!({})), None);
    }

    #[test]
    fn statuses_ids_and_failures_are_read_strictly() {
        assert_eq!(
            Status::of(&json!({"status": "input_required"})).unwrap(),
            Status::InputRequired
        );
        assert_eq!(
            Status::of(&json!({"status": "cancelled"})).unwrap(),
            Status::Cancelled
        );
        let bad = Status::of(&json!({"status": "done"})).unwrap_err();
        assert_eq!(bad.kind, ErrorKind::InvalidResponse);
        assert_eq!(
            task_id(&json!({"taskId": 5})).unwrap_err().kind,
            ErrorKind::InvalidResponse
        );
        let e = failed(&json!({"error": {"code": -32603, "message": "boom", "data": 1}}));
        assert_eq!(
            (e.kind, e.code, e.data),
            (ErrorKind::ProtocolError, Some(-32603), Some(json!(1)))
        );
        assert_eq!(failed(&json!({})).kind, ErrorKind::InvalidResponse);
        assert_eq!(cancelled_by_server("t").kind, ErrorKind::Cancelled);
    }

    #[test]
    fn the_extension_is_declared_beside_others() {
        let caps = with_extension(json!({"elicitation": {}, "extensions": {"x/y": {}}}));
        assert_eq!(
            caps,
            json!({"elicitation": {}, "extensions": {"x/y": {}, EXTENSION: {}}})
        );
        assert_eq!(
            with_extension(json!({}))["extensions"][EXTENSION],
            json!({})
        );
    }

    #[test]
    fn task_support_comes_from_the_last_listing() {
        let support = Support::default();
        support.remember(&[
            json!({"name": "a", "execution": {"taskSupport": "required"}}),
            json!({"name": "b"}),
        ]);
        assert_eq!(support.of("a").as_deref(), Some("required"));
        assert_eq!(support.of("b"), None);
        support.remember(&[json!({"name": "b", "execution": {"taskSupport": "optional"}})]);
        assert_eq!(support.of("a"), None);
        assert_eq!(support.of("b").as_deref(), Some("optional"));
    }
}

//! The task steps (CLIENTS.md, Tasks): `call_tool`'s `task` and `background`, and the ops
//! `get_task`, `cancel_task`, `task_result` and `list_tasks`.
//!
//! A malformed step is `unsupported_op` with the reason, read before the connection is looked
//! at, like every other step.

use std::time::Duration;

use serde_json::{Value, json};

use super::step::not_connected;
use crate::client::Client;
use crate::error::{Error, ErrorKind};
use crate::tasks::TaskOptions;

fn malformed(message: String) -> Error {
    Error::new(ErrorKind::UnsupportedOp, message)
}

/// `call_tool`'s `task` (an object, its `ttl` a non-negative integer of milliseconds),
/// `background` (with `task` only) and `max_timeout_ms` (the whole task's bound); `None`
/// when the step accepts no task. A task with `progress` is not supported.
pub(super) fn options(step: &Value) -> Result<Option<TaskOptions>, Error> {
    let background = match step.get("background") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            return Err(malformed(format!(
                "call_tool: background must be a boolean, got {other}"
            )));
        }
    };
    let task = match step.get("task") {
        None | Some(Value::Null) if background => {
            return Err(malformed(
                "call_tool: background needs \"task\" (the call must accept a task)".into(),
            ));
        }
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Object(task)) => task,
        Some(other) => {
            return Err(malformed(format!(
                "call_tool: task must be an object (its optional ttl in ms), got {other}"
            )));
        }
    };
    let ttl_ms = match task.get("ttl") {
        None | Some(Value::Null) => None,
        Some(ttl) => Some(ttl.as_u64().ok_or_else(|| {
            malformed(format!(
                "call_tool: task.ttl must be a non-negative integer (milliseconds), got {ttl}"
            ))
        })?),
    };
    if step
        .get("progress")
        .is_some_and(|p| p != &json!(false) && !p.is_null())
    {
        return Err(malformed(
            "call_tool: progress with a task is not supported by this client".into(),
        ));
    }
    let max_time = match step.get("max_timeout_ms") {
        None | Some(Value::Null) => None,
        Some(ms) => Some(Duration::from_millis(ms.as_u64().ok_or_else(|| {
            malformed(format!(
                "call_tool: max_timeout_ms must be a non-negative integer, got {ms}"
            ))
        })?)),
    };
    Ok(Some(TaskOptions {
        ttl_ms,
        max_time,
        background,
    }))
}

/// Runs one of the task ops.
pub(super) async fn run(op: &str, step: &Value, client: Option<&Client>) -> Result<Value, Error> {
    let task_id = match op {
        "list_tasks" => None,
        _ => match step.get("task_id") {
            Some(Value::String(id)) => Some(id.as_str()),
            _ => {
                return Err(malformed(format!(
                    "{op} needs a string \"task_id\": {step}"
                )));
            }
        },
    };
    let client = client.ok_or_else(not_connected)?;
    let id = task_id.unwrap_or_default();
    match op {
        "get_task" => Ok(json!({"task": client.get_task(id).await?})),
        "cancel_task" => client.cancel_task(id).await.map(|()| json!({})),
        "task_result" => Ok(super::plan::reported(client.task_result(id).await?)),
        _ => Ok(json!({"tasks": client.list_tasks().await?})),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_fields_are_read_strictly() {
        assert_eq!(options(&json!({"name": "t"})).unwrap(), None);
        let got = options(&json!({"task": {"ttl": 5000}, "background": true,
            "max_timeout_ms": 900}))
        .unwrap()
        .unwrap();
        assert_eq!(
            got,
            TaskOptions {
                ttl_ms: Some(5000),
                max_time: Some(Duration::from_millis(900)),
                background: true
            }
        );
        assert_eq!(
            options(&json!({"task": {}})).unwrap(),
            Some(TaskOptions::default())
        );
        for bad in [
            json!({"background": true}),
            json!({"task": true}),
            json!({"task": {"ttl": -1}}),
            json!({"task": {}, "background": "yes"}),
            json!({"task": {}, "progress": true}),
            json!({"task": {}, "max_timeout_ms": "soon"}),
        ] {
            let e = options(&bad).unwrap_err();
            assert_eq!(e.kind, ErrorKind::UnsupportedOp, "{bad}");
        }
    }

    #[tokio::test]
    async fn ops_need_a_task_id_then_a_connection() {
        for op in ["get_task", "cancel_task", "task_result"] {
            let e = run(op, &json!({"op": op}), None).await.unwrap_err();
            assert_eq!(e.kind, ErrorKind::UnsupportedOp, "{op}");
            let e = run(op, &json!({"op": op, "task_id": "t"}), None)
                .await
                .unwrap_err();
            assert_eq!(e.kind, ErrorKind::TransportClosed, "{op}");
        }
        let e = run("list_tasks", &json!({"op": "list_tasks"}), None)
            .await
            .unwrap_err();
        assert_eq!(e.kind, ErrorKind::TransportClosed);
    }
}

//! The events the client surfaced to its caller (CLIENTS.md, "What the server starts"), built
//! from rmcp's typed notifications and requests; the kit's `Events` queue keeps them, in the
//! order the handler saw them, until the next `events` step takes them.

use serde_json::{Map, Value, json};

/// `{"type":"request","method":M,"params":P}`; `params` only when there were any.
pub(crate) fn request(method: &str, params: Option<Value>) -> Value {
    let mut event = json!({ "type": "request", "method": method });
    if let Some(params) = params {
        event["params"] = params;
    }
    event
}

/// `{"type":"progress",…}` from rmcp's progress parameters, numbers as received where rmcp
/// kept them whole (it stores them as `f64`).
pub(crate) fn progress(params: &rmcp::model::ProgressNotificationParam) -> Value {
    let mut event = Map::new();
    event.insert("type".into(), json!("progress"));
    event.insert(
        "progressToken".into(),
        serde_json::to_value(&params.progress_token).unwrap_or(Value::Null),
    );
    event.insert("progress".into(), number(params.progress));
    if let Some(total) = params.total {
        event.insert("total".into(), number(total));
    }
    if let Some(message) = &params.message {
        event.insert("message".into(), json!(message));
    }
    Value::Object(event)
}

/// A whole `f64` as a JSON integer (as the server most likely sent it), else as a float.
fn number(value: f64) -> Value {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    if value.is_finite() && value.fract() == 0.0 && value.abs() <= EXACT {
        json!(value as i64)
    } else {
        json!(value)
    }
}

#[allow(deprecated)] // logging is deprecated in rmcp (SEP-2577); servers still send it.
pub(crate) fn log(params: &rmcp::model::LoggingMessageNotificationParam) -> Value {
    let mut event = json!({
        "type": "log",
        "level": serde_json::to_value(params.level).unwrap_or(Value::Null),
        "data": params.data,
    });
    if let Some(logger) = &params.logger {
        event["logger"] = json!(logger);
    }
    event
}

pub(crate) fn list_changed(list: &str) -> Value {
    json!({ "type": "list_changed", "list": list })
}

pub(crate) fn resource_updated(uri: &str) -> Value {
    json!({ "type": "resource_updated", "uri": uri })
}

/// `{"type":"task_status","taskId":T,"status":S}` from rmcp's `notifications/tasks`.
pub(crate) fn task_status(params: &rmcp::model::TaskStatusNotificationParams) -> Value {
    let task = &params.task.task;
    json!({
        "type": "task_status",
        "taskId": task.task_id,
        "status": serde_json::to_value(task.status).unwrap_or(Value::Null),
    })
}

/// The event for a notification that reached the caller through a `subscriptions/listen`
/// subscription (rmcp routes those past the handler), if it is one the contract reports.
pub(crate) fn from_notification(notification: &rmcp::model::ServerNotification) -> Option<Value> {
    use rmcp::model::ServerNotification as N;
    match notification {
        N::ToolListChangedNotification(_) => Some(list_changed("tools")),
        N::PromptListChangedNotification(_) => Some(list_changed("prompts")),
        N::ResourceListChangedNotification(_) => Some(list_changed("resources")),
        N::ResourceUpdatedNotification(n) => Some(resource_updated(&n.params.uri)),
        N::LoggingMessageNotification(n) => Some(log(&n.params)),
        N::TaskStatusNotification(n) => Some(task_status(&n.params)),
        _ => None,
    }
}

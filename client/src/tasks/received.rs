//! The tasks the client runs as a receiver (2025-11-25): a server's task-augmented
//! `sampling/createMessage` or `elicitation/create`, of a method the client declared in
//! `capabilities.tasks.requests`.
//!
//! Such a request is answered at once with a `CreateTaskResult`; the handler's answer becomes
//! the task's outcome once its `delay_ms` has passed (how long the task works). The server
//! then asks about the task: `tasks/get`, `tasks/result` (which waits for the end, and
//! carries the related-task `_meta`), `tasks/list` and `tasks/cancel`, all answered from this
//! store. An unknown task id is -32602, as is cancelling a task that already ended.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

use serde_json::{Map, Value, json};
use tokio::sync::watch;

use super::seams::TaskSeams;
use crate::jsonrpc::INVALID_PARAMS;
use crate::seams::Seams;

/// The methods a client may serve as tasks (2025-11-25 `tasks.requests`).
pub const TASK_METHODS: [&str; 2] = ["sampling/createMessage", "elicitation/create"];

/// The lifetime a task is given when the request asks for none, in milliseconds.
pub(crate) const DEFAULT_TTL_MS: u64 = 60_000;

/// The poll interval the client suggests, in milliseconds.
pub(crate) const POLL_INTERVAL_MS: u64 = 100;

/// An answer to a request about a task: a result, or a JSON-RPC error (code, message).
pub(crate) type Reply = Result<Value, (i64, String)>;

/// One received task.
struct Entry {
    status: &'static str,
    created_at: String,
    updated_at: String,
    ttl: Value,
    /// What the underlying request answers: the handler's result or error.
    outcome: Reply,
    /// Changes with `status`; `tasks/result` waits on it.
    changed: watch::Sender<&'static str>,
}

impl Entry {
    /// The task object, as every task response carries it (without its times and ttl only
    /// when `times` is false: a deliberate defect).
    fn view(&self, id: &str, times: bool) -> Value {
        let mut task = json!({"taskId": id, "status": self.status,
            "pollInterval": POLL_INTERVAL_MS});
        if times {
            task["createdAt"] = json!(self.created_at);
            task["lastUpdatedAt"] = json!(self.updated_at);
            task["ttl"] = self.ttl.clone();
        }
        task
    }

    fn set(&mut self, status: &'static str) {
        self.status = status;
        self.updated_at = now();
        self.changed.send_replace(status);
    }
}

/// Whether `status` is terminal.
fn terminal(status: &str) -> bool {
    matches!(status, "completed" | "failed" | "cancelled")
}

/// The tasks the client received, by id, in creation order.
pub(crate) struct Received {
    tasks: Mutex<(HashMap<String, Entry>, Vec<String>)>,
    seams: Seams,
}

impl Received {
    pub(crate) fn new(seams: Seams) -> Self {
        Received {
            tasks: Mutex::new((HashMap::new(), Vec::new())),
            seams,
        }
    }

    fn lock(&self) -> MutexGuard<'_, (HashMap<String, Entry>, Vec<String>)> {
        self.tasks.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Creates a task for a request with `params` whose outcome is `outcome`, ready after
    /// `delay` (none: at once); returns the `CreateTaskResult`. The task ends by a timer of its
    /// own on `runtime` (at once without one).
    pub(crate) fn create(
        self: &Arc<Self>,
        params: &Value,
        outcome: Reply,
        delay: Option<Duration>,
        runtime: Option<&tokio::runtime::Handle>,
    ) -> Value {
        let id = new_id();
        let ttl = match params.pointer("/task/ttl") {
            Some(ttl) if ttl.is_u64() || ttl.is_null() => ttl.clone(),
            _ => json!(DEFAULT_TTL_MS),
        };
        let created = now();
        let status = self.seams.created_status("working");
        let entry = Entry {
            status,
            created_at: created.clone(),
            updated_at: created,
            ttl,
            outcome,
            changed: watch::Sender::new(status),
        };
        let view = entry.view(&id, self.seams.task_times());
        {
            let mut tasks = self.lock();
            tasks.0.insert(id.clone(), entry);
            tasks.1.push(id.clone());
        }
        match runtime {
            Some(runtime) => {
                let store = Arc::clone(self);
                let delay = delay.unwrap_or_default();
                runtime.spawn(async move {
                    tokio::time::sleep(delay).await;
                    store.finish(&id);
                });
            }
            None => self.finish(&id),
        }
        json!({"task": view})
    }

    /// The task `id` worked its outcome out: `completed` (or `failed` for an error), unless
    /// it already ended (a cancelled task stays cancelled).
    fn finish(&self, id: &str) {
        let mut tasks = self.lock();
        if let Some(entry) = tasks.0.get_mut(id)
            && entry.status != "cancelled"
        {
            let status = match entry.outcome {
                Ok(_) => "completed",
                Err(_) => "failed",
            };
            entry.set(status);
        }
    }

    fn unknown(id: &Value) -> Reply {
        Err((INVALID_PARAMS, format!("no task with taskId {id}")))
    }

    /// The answer to `tasks/get`, `tasks/list` or `tasks/cancel` (`tasks/result` is
    /// [`Received::result`]); `None` for another method.
    pub(crate) fn serve(&self, method: &str, params: &Value) -> Option<Reply> {
        let id = params.get("taskId").cloned().unwrap_or(Value::Null);
        let key = id.as_str().unwrap_or_default();
        let times = self.seams.task_times();
        let mut tasks = self.lock();
        let found = tasks.0.get_mut(key);
        let answer = match (method, found) {
            ("tasks/list", _) => {
                let (map, order) = &*tasks;
                let list: Vec<Value> = order
                    .iter()
                    .filter(|_| self.seams.lists_received())
                    .filter_map(|id| map.get(id).map(|e| e.view(id, times)))
                    .collect();
                Ok(json!({"tasks": list}))
            }
            ("tasks/get", Some(entry)) => Ok(entry.view(key, times)),
            ("tasks/cancel", Some(entry)) if terminal(entry.status) => {
                match self.seams.refuses_terminal_cancel() {
                    true => Err((
                        INVALID_PARAMS,
                        format!(
                            "the task {key} already ended ({}); it cannot be cancelled",
                            entry.status
                        ),
                    )),
                    false => Ok(entry.view(key, times)),
                }
            }
            ("tasks/cancel", Some(entry)) => {
                if self.seams.cancels_received() {
                    entry.set("cancelled");
                }
                Ok(entry.view(key, times))
            }
            ("tasks/get" | "tasks/cancel", None) => match self.seams.refuses_unknown_task() {
                true => Self::unknown(&id),
                false => Ok(json!({"taskId": id, "status": "working"})),
            },
            _ => return None,
        };
        Some(answer)
    }

    /// The answer to `tasks/result`: once the task is terminal, what its request answered (a
    /// result carries the related-task `_meta`); an unknown id is -32602.
    pub(crate) async fn result(&self, params: &Value) -> Reply {
        let id = params.get("taskId").cloned().unwrap_or(Value::Null);
        let key = id.as_str().unwrap_or_default();
        let changed = match self.lock().0.get(key) {
            Some(entry) => entry.changed.subscribe(),
            None if self.seams.refuses_unknown_task() => return Self::unknown(&id),
            None => return Ok(json!({})),
        };
        if !self.seams.result_waits() && !terminal(*changed.borrow()) {
            return Err((
                crate::jsonrpc::INTERNAL_ERROR,
                format!("the task {key} has not ended yet"),
            ));
        }
        let mut changed = changed;
        // The sender lives as long as the entry; a closed channel only means it is gone.
        let _ = changed.wait_for(|status| terminal(status)).await;
        let tasks = self.lock();
        let Some(entry) = tasks.0.get(key) else {
            return Self::unknown(&id);
        };
        match (&entry.outcome, entry.status) {
            (_, "cancelled") => Err((
                crate::jsonrpc::INTERNAL_ERROR,
                format!("the task {key} was cancelled"),
            )),
            (Ok(result), _) => Ok(match self.seams.result_related(true) {
                true => super::with_related_task(result.clone(), &json!({"taskId": key})),
                false => result.clone(),
            }),
            (Err(error), _) => Err(error.clone()),
        }
    }
}

/// The JSON-RPC response to request `id` carrying `reply`.
pub(crate) fn response(id: Value, reply: Reply) -> Value {
    match reply {
        Ok(result) => crate::jsonrpc::result_response(id, result),
        Err((code, message)) => crate::jsonrpc::error_response(id, code, &message),
    }
}

/// A fresh task id: 16 random bytes, base64url (unique and unguessable).
fn new_id() -> String {
    use base64::Engine;
    use ring::rand::{SecureRandom, SystemRandom};
    let mut bytes = [0u8; 16];
    if SystemRandom::new().fill(&mut bytes).is_err() {
        // No randomness: still unique within this process.
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        return format!("task-{n}");
    }
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// The wall-clock time now, RFC 3339 UTC to the millisecond (an ISO 8601 profile).
fn now() -> String {
    let at = time::OffsetDateTime::from(SystemTime::now());
    let at = at
        .replace_nanosecond(u32::from(at.millisecond()) * 1_000_000)
        .unwrap_or(at);
    at.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_else(|_| "1970-01-01T00:00:00Z".to_owned())
}

/// The `tasks` capability a client serving `methods` as tasks declares (2025-11-25).
pub(crate) fn capability<'a>(methods: impl IntoIterator<Item = &'a String>) -> Value {
    let mut requests = Map::new();
    for method in methods {
        if let Some((group, name)) = method.split_once('/') {
            let entry = requests
                .entry(group.to_owned())
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(group) = entry {
                group.insert(name.to_owned(), json!({}));
            }
        }
    }
    json!({"list": {}, "cancel": {}, "requests": requests})
}

#[cfg(test)]
mod tests;

//! The fakes' task engine (`server.tasks`), independent of the transport: the tasks a fake
//! created (one [`Store`] per fake, shared by every connection over HTTP, like the `Tally`),
//! their statuses over time ([`timeline`]), and the answers of both eras, given before any
//! handler:
//!
//! - 2025-11-25: a `tools/call` of a task's tool with `params.task` answers `{"task": …}`;
//!   `tasks/get`, `tasks/list` and `tasks/cancel` answer at once; `tasks/result` waits until
//!   the task is terminal ([`Store::wait_result`]), meanwhile sending the input requests of
//!   an `input_required` phase on its own stream, then answers the outcome with the
//!   `related-task` `_meta`. Status notifications, when scripted, come from
//!   [`Store::watch_status`].
//! - 2026-07-28 (the tasks extension): a `tools/call` whose `_meta` client capabilities list
//!   the extension answers `resultType: "task"`; `tasks/get` shows input requests and the
//!   outcome inline; `tasks/update` answers them; `tasks/cancel` acknowledges.
//!
//! The waits are the transport's tasks: the stdio fake runs each request in a task of its
//! own (the process ends with the trial), the HTTP fake in tasks its `stop` aborts.

pub mod timeline;

use std::collections::BTreeSet;
use std::sync::{Mutex, MutexGuard, PoisonError};

use mcp_harness_scenarios::model::{
    CancelMode, HttpReply, Reply, ReplyFormat, RpcError, ServerScript, TaskScript, TaskStatus,
    era::meta,
};
use serde_json::{Map, Value, json};
use tokio::sync::watch;
use tokio::time::Instant;

use crate::script::Answer;
use timeline::{Task, related};

/// The `_meta` key tying a message to a task.
pub const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

/// The 2026-07-28 tasks extension's name.
pub const EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// The first revision with tasks.
pub const FIRST_REVISION: &str = "2025-11-25";

/// JSON-RPC invalid params: an unknown task, a terminal task cancelled, a cursor.
const INVALID_PARAMS: i64 = -32602;

/// What a transport does after (or instead of) replying at once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Work {
    /// 2025-11-25 `tasks/result` of a task not yet terminal: wait with
    /// [`Store::wait_result`] and answer what it returns.
    Result(String),
    /// After answering the creating call: send status notifications with
    /// [`Store::watch_status`].
    Watch(String),
}

/// The tasks of one fake.
#[derive(Debug)]
pub struct Store {
    tasks: Mutex<Vec<Task>>,
    /// Bumped on every change a wait must see (an answer, a cancel, a new task).
    changed: watch::Sender<u64>,
}

impl Default for Store {
    fn default() -> Store {
        Store {
            tasks: Mutex::new(Vec::new()),
            changed: watch::Sender::new(0),
        }
    }
}

/// The task capability a 2025-11-25 server declares for `tools/call`.
pub fn legacy_capability() -> Value {
    json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}})
}

fn invalid(message: &str) -> Option<Answer> {
    Some(Answer::reply(Reply::Error(RpcError {
        code: INVALID_PARAMS,
        message: message.to_owned(),
        data: None,
    })))
}

fn result(value: Value) -> Option<Answer> {
    Some(Answer::reply(Reply::Result(value)))
}

/// The request's `taskId`, if it has a string one.
fn task_id(params: Option<&Value>) -> Option<&str> {
    params?.get("taskId")?.as_str()
}

/// [`task_id`], or a -32602 answer returned from the enclosing function.
macro_rules! task_id_or_answer {
    ($params:expr) => {
        match task_id($params) {
            Some(id) => id,
            None => return invalid("Invalid params: expected a string taskId"),
        }
    };
}

impl Store {
    fn lock(&self) -> MutexGuard<'_, Vec<Task>> {
        self.tasks.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn bump(&self) {
        self.changed.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// Runs `f` on the task `id`, moved on to `now`, with its script.
    fn with<R>(
        &self,
        script: &ServerScript,
        id: &str,
        f: impl FnOnce(&mut Task, &TaskScript, Instant) -> R,
    ) -> Option<R> {
        let now = Instant::now();
        let mut tasks = self.lock();
        let task = tasks.iter_mut().find(|t| t.id == id)?;
        let task_script = script.tasks.get(task.script)?;
        task.advance(task_script, now);
        Some(f(task, task_script, now))
    }

    /// A new task for the script's task `index`: `task_id`, then `-2`, `-3`… after it.
    fn create(&self, script: &ServerScript, index: usize) -> String {
        let mut tasks = self.lock();
        let n = tasks.iter().filter(|t| t.script == index).count();
        let first = &script.tasks[index].task_id;
        let id = match n {
            0 => first.clone(),
            n => format!("{first}-{}", n + 1),
        };
        tasks.push(Task::new(id.clone(), index, Instant::now()));
        drop(tasks);
        self.bump();
        id
    }

    /// Notes a message from the client: a response to an input request a `tasks/result`
    /// sent answers its key (an error response too: the client answered).
    pub fn arrived(&self, script: &ServerScript, message: &Value) {
        if script.tasks.is_empty() || !crate::jsonrpc::is_response(message) {
            return;
        }
        let Some(id) = message.get("id").and_then(Value::as_str) else {
            return;
        };
        let now = Instant::now();
        let mut tasks = self.lock();
        let mut counted = false;
        for task in tasks.iter_mut() {
            let Some(key) = task.sent.get(id).cloned() else {
                continue;
            };
            if let Some(task_script) = script.tasks.get(task.script) {
                task.advance(task_script, now);
                counted |= task.answer(task_script, &key, now);
            }
        }
        drop(tasks);
        if counted {
            self.bump();
        }
    }

    /// The 2025-11-25 answer to a request, when the engine gives it: `None` leaves the
    /// request to the handlers. `version` is the protocol version in force (negotiated, or
    /// the trial's revision); tasks exist from 2025-11-25, and only where the fake's
    /// capabilities (`server.capabilities` merged in) declare task-augmented `tools/call`.
    pub fn legacy(
        &self,
        script: &ServerScript,
        version: Option<&str>,
        method: &str,
        params: Option<&Value>,
    ) -> Option<Answer> {
        if script.tasks.is_empty() || version.is_some_and(|v| v < FIRST_REVISION) {
            return None;
        }
        let declared = crate::script::capabilities(script, Some(version.unwrap_or(FIRST_REVISION)));
        // What the fake declared, `server.capabilities` merged in: nothing else creates tasks.
        declared.pointer("/tasks/requests/tools/call")?;
        match method {
            "tools/call" => {
                let asked = params
                    .and_then(|p| p.get("task"))
                    .is_some_and(Value::is_object);
                let index = self.tool_index(script, params).filter(|_| asked)?;
                let id = self.create(script, index);
                let task = self.with(script, &id, |t, s, _| legacy_task(t, s))?;
                let mut answer = result(json!({ "task": task }))?;
                if script.tasks[index].notify {
                    answer.task = Some(Work::Watch(id));
                }
                Some(answer)
            }
            "tasks/get" => {
                let id = task_id_or_answer!(params);
                let mut answer = match self.with(script, id, |t, s, _| legacy_task(t, s)) {
                    Some(task) => result(task)?,
                    None => return invalid("Failed to retrieve task: Task not found"),
                };
                // The text: where possible, no SSE stream for a tasks/get (the client polls).
                answer.http = Some(HttpReply {
                    format: Some(ReplyFormat::Json),
                    ..HttpReply::default()
                });
                Some(answer)
            }
            "tasks/result" => {
                let id = task_id_or_answer!(params).to_owned();
                match self.with(script, &id, |t, s, _| legacy_outcome(t, s)) {
                    None => invalid("Failed to retrieve task: Task not found"),
                    Some(Some(reply)) => Some(Answer::reply(reply)),
                    Some(None) => {
                        let mut answer = Answer::reply(Reply::Hang);
                        answer.task = Some(Work::Result(id));
                        Some(answer)
                    }
                }
            }
            "tasks/list" => {
                if params
                    .and_then(|p| p.get("cursor"))
                    .is_some_and(|c| !c.is_null())
                {
                    // The fake lists every task on one page: it never hands out a cursor.
                    return invalid("Invalid params: unknown cursor");
                }
                let now = Instant::now();
                let mut tasks = self.lock();
                let listed: Vec<Value> = tasks
                    .iter_mut()
                    .filter_map(|t| {
                        let s = script.tasks.get(t.script)?;
                        t.advance(s, now);
                        Some(legacy_task(t, s))
                    })
                    .collect();
                result(json!({ "tasks": listed }))
            }
            "tasks/cancel" => {
                let id = task_id_or_answer!(params);
                let cancelled = self.with(script, id, |t, s, now| {
                    if t.status(s).is_terminal() {
                        return None;
                    }
                    // `cancel: ignore` is refused at 2025-11-25 by the loader.
                    t.cancel(now);
                    Some(legacy_task(t, s))
                });
                match cancelled {
                    None => invalid("Failed to cancel task: Task not found"),
                    Some(None) => invalid("Cannot cancel task: already in a terminal status"),
                    Some(Some(task)) => {
                        self.bump();
                        result(task)
                    }
                }
            }
            _ => None,
        }
    }

    /// The 2026-07-28 answer to a request the modern era serves (after its `_meta` and
    /// header checks), when the engine gives it: `None` leaves it to the handlers (and the
    /// era's -32601 for an unknown method: there is no `tasks/result` or `tasks/list`).
    pub fn modern(
        &self,
        script: &ServerScript,
        method: &str,
        params: Option<&Value>,
    ) -> Option<Answer> {
        if script.tasks.is_empty() {
            return None;
        }
        match method {
            "tools/call" => {
                let extensions = params
                    .and_then(|p| p.get("_meta"))
                    .and_then(|m| m.get(meta::CLIENT_CAPABILITIES))
                    .and_then(|c| c.get("extensions"));
                let asked = extensions.is_some_and(|e| e.get(EXTENSION).is_some());
                let index = self.tool_index(script, params).filter(|_| asked)?;
                let id = self.create(script, index);
                let mut task = self.with(script, &id, |t, s, _| modern_task(t, s, false))?;
                task.insert("resultType".into(), "task".into());
                result(Value::Object(task))
            }
            "tasks/get" => {
                let id = task_id_or_answer!(params);
                match self.with(script, id, |t, s, _| modern_task(t, s, true)) {
                    Some(mut task) => {
                        task.shift_insert(0, "resultType".into(), "complete".into());
                        result(Value::Object(task))
                    }
                    None => invalid("Failed to retrieve task: Task not found"),
                }
            }
            "tasks/update" => {
                let id = task_id_or_answer!(params);
                let responses = params
                    .and_then(|p| p.get("inputResponses"))
                    .and_then(Value::as_object);
                let counted = self.with(script, id, |t, s, now| {
                    // Keys not outstanding are ignored (the text: SHOULD ignore).
                    let keys = responses.into_iter().flat_map(Map::keys);
                    keys.fold(false, |any, key| t.answer(s, key, now) | any)
                });
                match counted {
                    None => invalid("Failed to update task: Task not found"),
                    Some(counted) => {
                        if counted {
                            self.bump();
                        }
                        result(json!({"resultType": "complete"}))
                    }
                }
            }
            "tasks/cancel" => {
                let id = task_id_or_answer!(params);
                let done = self.with(script, id, |t, s, now| {
                    if s.cancel == CancelMode::Honour && !t.status(s).is_terminal() {
                        t.cancel(now);
                    }
                });
                match done {
                    None => invalid("Failed to cancel task: Task not found"),
                    Some(()) => {
                        self.bump();
                        result(json!({"resultType": "complete"}))
                    }
                }
            }
            _ => None,
        }
    }

    /// Which of the script's tasks a `tools/call` names.
    fn tool_index(&self, script: &ServerScript, params: Option<&Value>) -> Option<usize> {
        let name = params?.get("name")?.as_str()?;
        script.tasks.iter().position(|t| t.tool == name)
    }

    /// 2025-11-25 `tasks/result` of the task `id`, not terminal when asked: waits until it
    /// is, and returns the outcome to answer. Meanwhile, whenever the task is
    /// `input_required`, each of the phase's input requests not answered yet goes out through
    /// `send`, once per wait, as a request of the fake's (id `<taskId>:<key>`) with the `related-task`
    /// `_meta`; the client's responses reach [`Store::arrived`]. Never returns for a task that
    /// never ends: the transport's task ends with the trial.
    pub async fn wait_result<F, Fut>(&self, script: &ServerScript, id: &str, mut send: F) -> Reply
    where
        F: FnMut(Value) -> Fut,
        Fut: Future<Output = ()>,
    {
        let mut changes = self.changed.subscribe();
        // Sent on this stream: a client that closed an earlier one gets what it left
        // unanswered again here.
        let mut sent_here: BTreeSet<String> = BTreeSet::new();
        loop {
            changes.mark_unchanged();
            let step = self.with(script, id, |t, s, _| {
                if let Some(reply) = legacy_outcome(t, s) {
                    return Err(reply);
                }
                let mut due = Vec::new();
                for (key, request) in t.input_requests(s).into_iter().flatten() {
                    let request_id = format!("{}:{key}", t.id);
                    if t.is_answered(key) || !sent_here.insert(request_id.clone()) {
                        continue;
                    }
                    t.sent.insert(request_id.clone(), key.clone());
                    let mut params = request.params.clone().unwrap_or_else(|| json!({}));
                    if let Some(object) = params.as_object_mut() {
                        let meta = object.entry("_meta").or_insert_with(|| json!({}));
                        if let Some(meta) = meta.as_object_mut() {
                            meta.insert(RELATED_TASK.into(), related(&t.id));
                        }
                    }
                    due.push(json!({
                        "jsonrpc": "2.0",
                        "id": request_id,
                        "method": request.method,
                        "params": params,
                    }));
                }
                Ok((due, t.phase_end(s)))
            });
            let (due, next) = match step {
                None => return not_found(),
                Some(Err(reply)) => return reply,
                Some(Ok(step)) => step,
            };
            for message in due {
                send(message).await;
            }
            wait(&mut changes, next).await;
        }
    }

    /// 2025-11-25, a task with `notify`: sends `notifications/tasks/status` with the whole
    /// task through `send` on each status change after its creation, until it is terminal.
    pub async fn watch_status<F, Fut>(&self, script: &ServerScript, id: &str, mut send: F)
    where
        F: FnMut(Value) -> Fut,
        Fut: Future<Output = ()>,
    {
        let mut changes = self.changed.subscribe();
        let mut shown = TaskStatus::Working;
        loop {
            changes.mark_unchanged();
            let now = self.with(script, id, |t, s, _| {
                (t.status(s), legacy_task(t, s), t.phase_end(s))
            });
            let Some((status, task, next)) = now else {
                return;
            };
            if status != shown {
                shown = status;
                let note = json!({
                    "jsonrpc": "2.0",
                    "method": "notifications/tasks/status",
                    "params": task,
                });
                send(note).await;
            }
            if status.is_terminal() {
                return;
            }
            wait(&mut changes, next).await;
        }
    }
}

/// Waits for a change of the store, or until `next` (when the task's phase ends).
async fn wait(changes: &mut watch::Receiver<u64>, next: Option<Instant>) {
    match next {
        Some(at) => {
            tokio::select! {
                _ = tokio::time::sleep_until(at) => {}
                _ = changes.changed() => {}
            }
        }
        None => {
            if changes.changed().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
    }
}

fn not_found() -> Reply {
    Reply::Error(RpcError {
        code: INVALID_PARAMS,
        message: "Failed to retrieve task: Task not found".into(),
        data: None,
    })
}

/// The fields both eras share, with the era's names for the ttl and poll interval.
fn task_fields(task: &Task, script: &TaskScript, ttl: &str, poll: &str) -> Map<String, Value> {
    let mut fields = Map::new();
    fields.insert("taskId".into(), task.id.clone().into());
    fields.insert("status".into(), task.status(script).as_str().into());
    if let Some(message) = task.message(script) {
        fields.insert("statusMessage".into(), message.into());
    }
    fields.insert("createdAt".into(), task.created_at().into());
    fields.insert("lastUpdatedAt".into(), task.last_updated_at().into());
    fields.insert(ttl.into(), script.ttl_ms.map_or(Value::Null, Value::from));
    if let Some(ms) = script.poll_interval_ms {
        fields.insert(poll.into(), ms.into());
    }
    fields
}

/// A 2025-11-25 `Task`.
fn legacy_task(task: &Task, script: &TaskScript) -> Value {
    Value::Object(task_fields(task, script, "ttl", "pollInterval"))
}

/// A 2026-07-28 task: with `detailed` (`tasks/get`), its input requests while
/// `input_required`, and its outcome once `completed` or `failed`.
fn modern_task(task: &Task, script: &TaskScript, detailed: bool) -> Map<String, Value> {
    let mut fields = task_fields(task, script, "ttlMs", "pollIntervalMs");
    if !detailed {
        return fields;
    }
    if let Some(requests) = task.input_requests(script) {
        let requests = serde_json::to_value(requests).unwrap_or_else(|_| json!({}));
        fields.insert("inputRequests".into(), requests);
    }
    match (task.status(script), &script.result, &script.error) {
        (TaskStatus::Completed, Some(result), _) => {
            fields.insert("result".into(), result.clone());
        }
        (TaskStatus::Failed, _, Some(error)) => {
            let error = serde_json::to_value(error).unwrap_or_else(|_| json!({}));
            fields.insert("error".into(), error);
        }
        _ => {}
    }
    fields
}

/// A terminal task's `tasks/result` answer (2025-11-25): the underlying call's result with
/// the `related-task` `_meta`, or its error; `None` while it is not terminal.
fn legacy_outcome(task: &Task, script: &TaskScript) -> Option<Reply> {
    if !task.status(script).is_terminal() {
        return None;
    }
    Some(match (&script.result, &script.error) {
        (_, Some(error)) => Reply::Error(error.clone()),
        (Some(result), None) => {
            let mut result = result.clone();
            if let Some(object) = result.as_object_mut() {
                let meta = object.entry("_meta").or_insert_with(|| json!({}));
                if let Some(meta) = meta.as_object_mut() {
                    meta.insert(RELATED_TASK.into(), related(&task.id));
                }
            }
            Reply::Result(result)
        }
        (None, None) => Reply::Result(json!({
            "content": [],
            "_meta": { RELATED_TASK: related(&task.id) },
        })),
    })
}

#[cfg(test)]
mod tests;

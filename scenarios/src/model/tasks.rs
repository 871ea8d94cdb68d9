//! A fake's scripted tasks (`server.tasks`): a tool whose calls become tasks, the statuses
//! such a task goes through over time, and its outcome. The fakes play them in both eras: the
//! 2025-11-25 tasks (`tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel`) and the
//! 2026-07-28 tasks extension (`resultType: "task"`, `tasks/get`, `tasks/update`,
//! `tasks/cancel`). The loader checks what the texts require of a server (a terminal status
//! last, one outcome that fits its status); see `load/tasks.rs`.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::RpcError;

/// The task id the first task of a script gets when it names none.
pub const DEFAULT_TASK_ID: &str = "task-1";

/// The `ttl_ms` of a task whose script names none.
pub const DEFAULT_TTL_MS: u64 = 60_000;

fn default_task_id() -> String {
    DEFAULT_TASK_ID.to_owned()
}

fn is_default_task_id(id: &str) -> bool {
    id == DEFAULT_TASK_ID
}

fn default_ttl() -> Option<u64> {
    Some(DEFAULT_TTL_MS)
}

fn is_default_ttl(ttl: &Option<u64>) -> bool {
    *ttl == Some(DEFAULT_TTL_MS)
}

fn is_default<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

/// A tool whose calls the fake runs as tasks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskScript {
    /// The tool: a `tools/call` of this name creates a task when the client asks for one (at
    /// 2025-11-25, the request has a `task` object in its params; at 2026-07-28, the
    /// request's `_meta` client capabilities list the `io.modelcontextprotocol/tasks`
    /// extension). Any other call of it goes to the handlers, like any request. Each such
    /// call creates a new task. The built-in `tools/list` lists the tool with
    /// `execution.taskSupport` `optional` when a handler answers its plain calls, else
    /// `required` (a plain call then gets -32601).
    pub tool: String,
    /// The id of the first task the tool's calls create; later ones get `-2`, `-3`, … after
    /// it.
    #[serde(
        default = "default_task_id",
        skip_serializing_if = "is_default_task_id"
    )]
    pub task_id: String,
    /// The polling interval the fake suggests, in milliseconds (scaled with the trial), in
    /// every task it shows: `pollInterval` (2025-11-25) or `pollIntervalMs` (2026-07-28).
    /// Omitted: none is suggested.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_interval_ms: Option<u64>,
    /// The task's time to live, in milliseconds (never scaled: it is a value the client
    /// sees, not a wait), shown as `ttl` (2025-11-25) or `ttlMs` (2026-07-28); `null` for
    /// unlimited. The fake never deletes a task. Default 60000.
    #[serde(default = "default_ttl", skip_serializing_if = "is_default_ttl")]
    pub ttl_ms: Option<u64>,
    /// The task's statuses over time, from its creation, in order: each phase but the last
    /// lasts its `ms` (an `input_required` phase lasts until its input requests are
    /// answered, then its `settles_ms`); the last lasts for ever. A terminal status
    /// (`completed`, `failed`, `cancelled`) may only be the last. At 2025-11-25 the first
    /// phase is `working` (the text: tasks begin there).
    pub phases: Vec<TaskPhase>,
    /// The underlying `tools/call`'s result (a CallToolResult), when it succeeds. Exactly one
    /// of `result` and `error`. At 2025-11-25 `tasks/result` answers it (with the
    /// `related-task` `_meta` added); at 2026-07-28 `tasks/get` of the `completed` task
    /// carries it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// The underlying `tools/call`'s JSON-RPC error, when it fails (the task ends `failed`).
    /// Exactly one of `result` and `error`. At 2025-11-25 `tasks/result` answers it; at
    /// 2026-07-28 `tasks/get` of the `failed` task carries it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<RpcError>,
    /// 2025-11-25 only: send `notifications/tasks/status` with the whole task on each status
    /// change (stdio: on stdout; HTTP: on the standalone GET stream, queued until one is
    /// open). Not with a modern fake.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub notify: bool,
    /// What `tasks/cancel` does to a task not yet terminal.
    #[serde(default, skip_serializing_if = "is_default")]
    pub cancel: CancelMode,
}

/// One status of a task, for a while.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskPhase {
    /// The task's status during the phase.
    pub status: TaskStatus,
    /// How long the phase lasts, in milliseconds (scaled with the trial): required for
    /// every phase before the last but an `input_required` one, which lasts until answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ms: Option<u64>,
    /// The task's `statusMessage` during the phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// `input_required` only (and required there): the requests the fake needs answered, by
    /// a key unique over the task's phases, e.g. `{"confirm": {"method":
    /// "elicitation/create", "params": {…}}}`. At 2025-11-25 they are sent as requests on
    /// the stream of a waiting `tasks/result`, each once, with the `related-task` `_meta`; at
    /// 2026-07-28 `tasks/get` shows them as `inputRequests` and `tasks/update` answers them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<BTreeMap<String, InputRequest>>,
    /// `input_required` only: once every input request is answered, the phase still shows
    /// for this many milliseconds (scaled with the trial; an eventually consistent server).
    #[serde(default, skip_serializing_if = "is_default")]
    pub settles_ms: u64,
}

/// A request the fake needs the client to answer during a task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InputRequest {
    /// Its method, e.g. `elicitation/create`.
    pub method: String,
    /// Its params (the fake adds the `related-task` `_meta` at 2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
}

/// A task's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// The request is being processed.
    Working,
    /// The fake needs input from the client (the phase's `input_requests`).
    InputRequired,
    /// Terminal: the request completed (`result`).
    Completed,
    /// Terminal: the request failed (`error`; at 2025-11-25 also a `result` with
    /// `isError: true`).
    Failed,
    /// Terminal: the request was cancelled.
    Cancelled,
}

impl TaskStatus {
    /// Its name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Working => "working",
            TaskStatus::InputRequired => "input_required",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }

    /// Whether no status may follow it.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }
}

/// What `tasks/cancel` does to a task that is not terminal.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CancelMode {
    /// The task becomes `cancelled` before the answer.
    #[default]
    Honour,
    /// 2026-07-28 only (the 2025-11-25 text requires the cancel): acknowledged, and the task
    /// carries on as scripted.
    Ignore,
}

impl TaskScript {
    /// Multiplies the task's waits (phases' `ms` and `settles_ms`, the poll interval); not
    /// its ttl.
    pub fn scale(&mut self, scale: super::TimeScale) {
        self.poll_interval_ms = self.poll_interval_ms.map(|ms| scale.ms(ms));
        for phase in &mut self.phases {
            phase.ms = phase.ms.map(|ms| scale.ms(ms));
            phase.settles_ms = scale.ms(phase.settles_ms);
        }
    }
}

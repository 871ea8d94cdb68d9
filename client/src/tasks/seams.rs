//! The seam of tasks (see `seams/`): the decisions of augmenting a call, polling, answering a
//! task's input requests, cancelling, and reading what a task ended with. Each default is the
//! correct decision.

use std::time::Duration;

use serde_json::Value;

use crate::error::Error;

/// The decisions of tasks.
pub(crate) trait TaskSeams {
    /// Legacy eras: whether a `tools/call` is task-augmented; correct: `decide`'s (see
    /// [`super::augment`]).
    fn augments(
        &self,
        declared: bool,
        support: Option<&str>,
        asked: bool,
        decide: impl FnOnce(bool, Option<&str>, bool) -> bool,
    ) -> bool {
        decide(declared, support, asked)
    }

    /// Modern era: whether a `CreateTaskResult` is a valid answer to `method`; correct:
    /// `valid` (see [`super::may_create_task`]).
    fn may_create_task(&self, _method: &str, valid: bool) -> bool {
        valid
    }

    /// How long to wait before the next `tasks/get`; correct: the `interval` the server
    /// suggested last (or the client's default).
    fn poll_delay(&self, interval: Duration) -> Duration {
        interval
    }

    /// Whether the task's next state is awaited from a status notification instead of a
    /// poll; correct: never (a requestor MUST NOT rely on them).
    fn waits_for_status(&self) -> bool {
        false
    }

    /// Legacy eras: whether `tasks/result` is called once the task is `input_required` (its
    /// input requests come on it); correct: yes.
    fn result_on_input_required(&self) -> bool {
        true
    }

    /// Modern era: whether an `inputRequests` key already answered is answered again (on a
    /// poll that still lists it, and in every later `tasks/update`); correct: never (each
    /// key once).
    fn answers_again(&self) -> bool {
        false
    }

    /// The params of `tasks/get`, `tasks/result` and `tasks/cancel` about task `task_id`;
    /// correct: as built (`taskId` alone, no related-task `_meta`).
    fn task_params(&self, params: Value, _task_id: &str) -> Value {
        params
    }

    /// Whether a task is cancelled by `notifications/cancelled` naming its `tools/call`
    /// instead of `tasks/cancel`; correct: never.
    fn cancels_by_notification(&self) -> bool {
        false
    }

    /// The related-task `_meta` an answer to a server request carries; correct: the
    /// request's own (`related`).
    fn answer_related<'a>(&self, related: Option<&'a Value>) -> Option<&'a Value> {
        related
    }

    /// Modern era: what a `failed` task is reported as; correct: its `error`.
    fn failed_outcome(&self, error: Error) -> Result<Value, Error> {
        Err(error)
    }

    // The client as a task receiver (2025-11-25, `tasks/received.rs`).

    /// Whether a task-augmented request the handlers answer is served as a task; correct:
    /// when its method is `declared` in `tasks.requests` (then a CreateTaskResult MUST
    /// answer it; otherwise it MUST be processed normally).
    fn serves_as_task(&self, declared: bool) -> bool {
        declared
    }

    /// The status a received task is created with; correct: `working` (MUST).
    fn created_status(&self, working: &'static str) -> &'static str {
        working
    }

    /// Whether `tasks/result` of a task not yet ended waits for its end; correct: yes
    /// (MUST block).
    fn result_waits(&self) -> bool {
        true
    }

    /// Whether the result of `tasks/result` carries the related-task `_meta`; correct:
    /// `with` (always: MUST).
    fn result_related(&self, with: bool) -> bool {
        with
    }

    /// Whether cancelling a task already ended is refused with -32602; correct: yes (MUST).
    fn refuses_terminal_cancel(&self) -> bool {
        true
    }

    /// Whether a request about an unknown task id is refused with -32602; correct: yes
    /// (MUST).
    fn refuses_unknown_task(&self) -> bool {
        true
    }

    /// Whether `tasks/list` lists the client's tasks; correct: yes (a task `tasks/get` finds
    /// MUST be listed).
    fn lists_received(&self) -> bool {
        true
    }

    /// Whether a task object carries `createdAt`, `lastUpdatedAt` and `ttl`; correct: yes
    /// (MUST, in every task response).
    fn task_times(&self) -> bool {
        true
    }

    /// Whether the `tasks` capability the handlers imply is declared; correct: yes (a
    /// receiver of task-augmented requests MUST declare it).
    fn declares_tasks(&self) -> bool {
        true
    }

    /// Whether `tasks/cancel` of a working task moves it to `cancelled` (for good) before
    /// answering; correct: yes (MUST).
    fn cancels_received(&self) -> bool {
        true
    }
}

#[cfg(not(feature = "defects"))]
impl TaskSeams for crate::seams::Seams {}

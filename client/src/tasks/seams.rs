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
}

#[cfg(not(feature = "defects"))]
impl TaskSeams for crate::seams::Seams {}

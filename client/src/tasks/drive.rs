//! Runs a created task to its end, as its requestor: poll `tasks/get` (waiting the interval
//! the server suggested last between polls, [`super::DEFAULT_POLL_INTERVAL`] when it gave
//! none), answer what the task needs, and take its outcome.
//!
//! - Legacy eras: a terminal or `input_required` status calls `tasks/result`, which blocks
//!   until the task ends; the task's input requests arrive meanwhile as server requests that
//!   the connection's handlers answer (carrying the related-task `_meta`, see the listener).
//!   Its answer is the underlying `tools/call`'s: a result, or its JSON-RPC error.
//! - Modern era: each `inputRequests` key is answered once by `tasks/update` (the caller's
//!   input handler, else the handlers, as for a multi round-trip request); `completed` gives
//!   the task's `result`, `failed` its `error`.
//!
//! A task that ends `cancelled` without the caller asking is reported `cancelled`. The
//! caller's cancel and the task's maximum time stop the whole loop at once (a poll in flight
//! is dropped, not announced) and cancel the task with `tasks/cancel`.

use std::collections::HashMap;
use std::future::{Future, pending};
use std::pin::pin;

use serde_json::{Value, json};
use tokio::time::Instant;

use super::seams::TaskSeams;
use super::{DEFAULT_POLL_INTERVAL, Status, cancelled_by_server, failed, poll_interval, task_id};
use crate::era::InputHandler;
use crate::era::mrtr::input_responses;
use crate::era::ops::Modern;
use crate::error::{Error, ErrorKind};
use crate::seams::wire::Wire;
use crate::session::Session;

/// What a call that may become a task ended with.
pub(crate) enum Called {
    /// A plain result (or a task's outcome), as received.
    Done(Value),
    /// The server created a task.
    Task(Created),
}

/// A task the server created in answer to a call.
pub(crate) struct Created {
    /// The task as received (modern: without `resultType`).
    pub(crate) task: Value,
    /// The id of the request the task answered.
    pub(crate) call_id: i64,
}

/// Which tasks a task is driven by.
pub(crate) enum TaskEra<'a> {
    /// 2025-11-25: `may_cancel` says whether the server declared `tasks.cancel`.
    Legacy { may_cancel: bool },
    /// The 2026-07-28 extension, over this modern connection.
    Modern(&'a Modern),
}

/// One task being driven.
pub(crate) struct Drive<'a> {
    pub(crate) session: &'a Session,
    pub(crate) era: TaskEra<'a>,
    /// The id of the request the task answered.
    pub(crate) call_id: i64,
    /// Modern era: the caller's answers to input requests.
    pub(crate) input: &'a InputHandler,
    /// When the whole task is given up (`timeout`).
    pub(crate) deadline: Option<Instant>,
}

/// Why the loop stopped before the task ended.
enum Stop {
    Cancelled,
    TimedOut,
}

impl Drive<'_> {
    /// Drives `created` (the task as received) until it ends, or until `cancel` completes
    /// or the deadline passes; returns the underlying request's result, as received.
    pub(crate) async fn run(
        &self,
        created: &Value,
        cancel: impl Future<Output = ()>,
    ) -> Result<Value, Error> {
        let id = task_id(created)?;
        let seams = self.session.seams();
        let cancel = seams.cancel(cancel);
        let deadline = self.deadline;
        let limit = seams.timer(async move {
            match deadline {
                Some(at) => tokio::time::sleep_until(at).await,
                None => pending().await,
            }
        });
        let stop = pin!(async {
            tokio::select! {
                () = cancel => Stop::Cancelled,
                () = limit => Stop::TimedOut,
            }
        });
        tokio::select! {
            biased;
            why = stop => Err(self.give_up(&id, why).await),
            outcome = self.steps(&id, created) => outcome,
        }
    }

    fn modern(&self) -> bool {
        matches!(self.era, TaskEra::Modern(_))
    }

    /// The loop: look at the task, act on its status, wait, poll again.
    async fn steps(&self, id: &str, created: &Value) -> Result<Value, Error> {
        let seams = self.session.seams();
        let modern = self.modern();
        let mut statuses = self.session.router().listener().task_statuses();
        let mut interval = poll_interval(created, modern, DEFAULT_POLL_INTERVAL);
        let mut answered = HashMap::new();
        let mut task = created.clone();
        // A modern CreateTaskResult carries no result and no input requests: poll first.
        let mut seen = !modern;
        loop {
            if seen {
                match Status::of(&task)? {
                    Status::Cancelled => return Err(cancelled_by_server(id)),
                    Status::Completed | Status::Failed if !modern => {
                        return self.send("tasks/result", id, None).await;
                    }
                    Status::Completed => {
                        return match task.get("result") {
                            Some(result) if result.is_object() => Ok(result.clone()),
                            other => Err(Error::invalid(format!(
                                "the completed task {id} carries no result object: {}",
                                other.unwrap_or(&Value::Null)
                            ))),
                        };
                    }
                    Status::Failed => return seams.failed_outcome(failed(&task)),
                    Status::InputRequired if modern => {
                        self.answer(id, &task, &mut answered).await?;
                    }
                    Status::InputRequired if seams.result_on_input_required() => {
                        return self.send("tasks/result", id, None).await;
                    }
                    Status::InputRequired | Status::Working => {}
                }
            }
            seen = true;
            task = match seams.waits_for_status() {
                true => next_status(&mut statuses, id).await,
                false => {
                    tokio::time::sleep(seams.poll_delay(interval)).await;
                    self.send("tasks/get", id, None).await?
                }
            };
            interval = poll_interval(&task, modern, interval);
        }
    }

    /// Modern era: answers the `inputRequests` of `task` not answered yet with one
    /// `tasks/update` (each key once: the answers given are remembered in `answered`).
    async fn answer(
        &self,
        id: &str,
        task: &Value,
        answered: &mut HashMap<String, Value>,
    ) -> Result<(), Error> {
        // A task shown input_required without requests (an eventually consistent server)
        // has nothing to answer yet.
        let Some(Value::Object(requests)) = task.get("inputRequests") else {
            return Ok(());
        };
        let again = self.session.seams().answers_again();
        let fresh: Vec<_> = requests
            .iter()
            .filter(|(key, _)| again || !answered.contains_key(*key))
            .collect();
        if fresh.is_empty() {
            return Ok(());
        }
        let listener = self.session.router().listener();
        let mut responses = input_responses(fresh, self.input, listener)?;
        if again {
            // A client that keeps no track sends every answer it ever gave.
            for (key, response) in answered.iter() {
                responses
                    .entry(key.clone())
                    .or_insert_with(|| response.clone());
            }
        }
        answered.extend(responses.iter().map(|(k, v)| (k.clone(), v.clone())));
        let responses = Value::Object(responses);
        self.send("tasks/update", id, Some(responses)).await?;
        Ok(())
    }

    /// One request about task `id` (`tasks/get`, `tasks/result`, `tasks/update` with
    /// `inputResponses`, `tasks/cancel`), waited for with the request timeout.
    async fn send(&self, method: &str, id: &str, responses: Option<Value>) -> Result<Value, Error> {
        let mut params = json!({"taskId": id});
        match responses {
            Some(responses) => params["inputResponses"] = responses,
            None => params = self.session.seams().task_params(params, id),
        }
        match self.era {
            TaskEra::Legacy { .. } => {
                let in_flight = self.session.start(method, params)?;
                in_flight.wait(pending()).await
            }
            TaskEra::Modern(modern) => modern.task_request(self.session, method, params).await,
        }
    }

    /// Cancels the task after `why`, as the server expects (`tasks/cancel`; in the legacy
    /// eras only when the server declared `tasks.cancel`), and builds the error to report.
    async fn give_up(&self, id: &str, why: Stop) -> Error {
        let (kind, reason) = match why {
            Stop::Cancelled => (ErrorKind::Cancelled, "cancelled by the caller"),
            Stop::TimedOut => (ErrorKind::Timeout, "its maximum time passed"),
        };
        let may_cancel = match self.era {
            TaskEra::Legacy { may_cancel } => may_cancel,
            TaskEra::Modern(_) => true,
        };
        let told = if self.session.seams().cancels_by_notification() {
            let params = json!({"requestId": self.call_id, "reason": reason});
            match self.session.notify("notifications/cancelled", Some(params)) {
                Ok(()) => "notifications/cancelled was sent for its tools/call".to_owned(),
                Err(e) => format!("notifications/cancelled could not be sent: {}", e.message),
            }
        } else if may_cancel {
            match self.send("tasks/cancel", id, None).await {
                Ok(_) => "tasks/cancel was acknowledged".to_owned(),
                Err(e) => format!("tasks/cancel failed: {}", e.message),
            }
        } else {
            "the server did not declare tasks.cancel, so it was not told".to_owned()
        };
        Error::new(
            kind,
            format!("the task {id} was given up ({reason}); {told}"),
        )
    }
}

/// The next status notification about task `id` (only a deliberate defect waits for one):
/// its params, the full task. Never returns when none comes.
async fn next_status(statuses: &mut tokio::sync::watch::Receiver<Value>, id: &str) -> Value {
    loop {
        if statuses.changed().await.is_err() {
            return pending().await;
        }
        let latest = statuses.borrow_and_update().clone();
        if latest.get("taskId").and_then(Value::as_str) == Some(id) {
            return latest;
        }
    }
}

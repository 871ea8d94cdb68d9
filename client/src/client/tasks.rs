//! Tasks in the public API: a `tools/call` that may run as a task (driven to its end, or
//! returned at once in the background), and the requests about a task: `get_task`,
//! `cancel_task`, and in the legacy eras `task_result` and `list_tasks` (see
//! [`crate::tasks`]).
//!
//! Legacy eras: a call is task-augmented only when the server declared
//! `tasks.requests.tools.call` and the tool's `execution.taskSupport` (from the last
//! [`Client::list_tools`]) allows it: `optional` when the caller accepts a task, `required`
//! always. Modern era: a call whose caller accepts a task declares the tasks extension in its
//! `_meta`; the server decides whether it becomes one.

use std::future::{Future, pending};
use std::pin::Pin;

use serde_json::{Value, json};
use tokio::time::Instant;

use super::seams::ClientSeams;
use super::{Client, Connection};
use crate::era::InputHandler;
use crate::error::{Error, ErrorKind};
use crate::listing::ListKind;
use crate::tasks::drive::{Called, Created, Drive, TaskEra};
use crate::tasks::seams::TaskSeams;
use crate::tasks::{self as task, TaskCall, TaskOptions};
use crate::tools::ToolResult;

/// The first legacy revision with tasks.
const TASKS_SINCE: &str = "2025-11-25";

/// The outcome of a call that did not ask to run in the background.
pub(super) fn done(called: Result<TaskCall, Error>) -> Result<ToolResult, Error> {
    match called? {
        TaskCall::Done(result) => Ok(result),
        TaskCall::Task(_) => Err(Error::invalid(
            "a task was returned to a call that did not ask for the background",
        )),
    }
}

impl Client {
    /// Calls the tool `name`, accepting that the server runs the call as a task (see
    /// [`crate::tasks`]). A task is polled with `tasks/get`, waiting the interval the server
    /// suggested last between polls ([`crate::tasks::DEFAULT_POLL_INTERVAL`], one second,
    /// when it gave none), its input requests answered (legacy: the connection's handlers,
    /// during `tasks/result`; modern: `input`, else the handlers, by `tasks/update`), until it
    /// ends; its outcome is then returned as [`Client::call_tool_with_input`] returns a
    /// call's: `tool_error` for an `isError` result, `protocol_error` with the code of a
    /// failed task's error, `cancelled` for a task the server cancelled.
    ///
    /// `cancel` completing, or `options.max_time` passing, cancels the task with
    /// `tasks/cancel` (never `notifications/cancelled`) and fails with `cancelled` or
    /// `timeout`. With `options.background` a created task is returned at once, undriven
    /// ([`TaskCall::Task`]); a server that answers plainly gives [`TaskCall::Done`].
    /// Status notifications are surfaced as events (`task_status`) and never waited for.
    pub async fn call_tool_as_task(
        &self,
        name: &str,
        arguments: Value,
        options: &TaskOptions,
        input: &InputHandler,
        cancel: impl Future<Output = ()>,
    ) -> Result<TaskCall, Error> {
        self.call_tool_inner(name, arguments, None, input, Some(options), cancel)
            .await
    }

    /// One `tasks/get` of the task `task_id`: the task as received (modern: without
    /// `resultType`).
    pub async fn get_task(&self, task_id: &str) -> Result<Value, Error> {
        let task = self.about_task("tasks/get", task_id).await?;
        Ok(task::modern_task(&task))
    }

    /// Cancels the task `task_id` with `tasks/cancel`. Legacy eras: only when the server
    /// declared `tasks.cancel` (else `capability_missing`, nothing sent). The server may
    /// still finish the work.
    pub async fn cancel_task(&self, task_id: &str) -> Result<(), Error> {
        self.require("tasks/cancel")?;
        self.require_tasks("cancel")?;
        self.about_task("tasks/cancel", task_id).await.map(drop)
    }

    /// Legacy eras: the outcome of the task `task_id` by `tasks/result` (it blocks until the
    /// task ends), as [`Client::call_tool`] returns a call's. The 2026-07-28 extension has
    /// no such request (`capability_missing`, nothing sent).
    pub async fn task_result(&self, task_id: &str) -> Result<ToolResult, Error> {
        self.require("tasks/result")?;
        let result = self.about_task("tasks/result", task_id).await;
        self.tool_result(None, result).await
    }

    /// Legacy eras: every task (`tasks/list`), page by page under the listing rules, as
    /// received; only when the server declared `tasks.list` (else `capability_missing`).
    /// The 2026-07-28 extension has no such request.
    pub async fn list_tasks(&self) -> Result<Vec<Value>, Error> {
        self.require("tasks/list")?;
        self.require_tasks("list")?;
        self.list_all(ListKind::TASKS).await
    }

    /// A request about the task `task_id`, with `taskId` as its only param.
    async fn about_task(&self, method: &str, task_id: &str) -> Result<Value, Error> {
        let seams = self.session.seams();
        let params = seams.task_params(json!({"taskId": task_id}), task_id);
        match &self.connection {
            Connection::Legacy(_) => self.request(method, params, pending()).await,
            Connection::Modern(modern) => modern.task_request(&self.session, method, params).await,
        }
    }

    /// Whether the legacy server declared the task capability at `pointer` (under
    /// `capabilities.tasks`, e.g. `/cancel`) in a revision that has tasks (2025-11-25 on);
    /// never in the modern era.
    fn declares(&self, pointer: &str) -> bool {
        let Connection::Legacy(handshake) = &self.connection else {
            return false;
        };
        let has_tasks = handshake
            .protocol_version()
            .is_some_and(|v| v >= TASKS_SINCE);
        has_tasks
            && handshake
                .result()
                .pointer(&format!("/capabilities/tasks{pointer}"))
                .is_some_and(|c| !c.is_null())
    }

    /// Legacy eras: refuses a task request whose capability (`tasks.list`, `tasks.cancel`)
    /// the server did not declare.
    fn require_tasks(&self, operation: &str) -> Result<(), Error> {
        if !matches!(self.connection, Connection::Legacy(_)) {
            return Ok(());
        }
        let declared = self.declares(&format!("/{operation}"));
        if self.session.seams().may_send_undeclared(declared) {
            return Ok(());
        }
        Err(Error::new(
            ErrorKind::CapabilityMissing,
            format!(
                "tasks/{operation} needs the server capability tasks.{operation}, which the \
                 server did not declare; nothing was sent"
            ),
        ))
    }

    /// A legacy `tools/call` of `name`, task-augmented (`params.task`, with the caller's
    /// ttl) when [`task::augment`] says so; a `CreateTaskResult` answering it is a task.
    pub(super) async fn call_legacy<C: Future<Output = ()>>(
        &self,
        name: &str,
        mut params: Value,
        task: Option<&TaskOptions>,
        cancel: Pin<&mut C>,
    ) -> Result<Called, Error> {
        let declared = self.declares("/requests/tools/call");
        let support = self.task_support.of(name);
        let seams = self.session.seams();
        let augmented = seams.augments(declared, support.as_deref(), task.is_some(), task::augment);
        if augmented {
            params["task"] = match task.and_then(|t| t.ttl_ms) {
                Some(ttl) => json!({"ttl": ttl}),
                None => json!({}),
            };
        }
        let in_flight = self.start_request("tools/call", params).await?;
        let call_id = in_flight.id();
        let result = in_flight.wait(cancel).await?;
        match task::legacy_created(&result) {
            Some(created) if augmented => Ok(Called::Task(Created {
                task: created.clone(),
                call_id,
            })),
            _ => Ok(Called::Done(result)),
        }
    }

    /// Drives a created task to its end (see [`crate::tasks::drive`]), giving it up at
    /// `deadline`.
    pub(super) async fn drive(
        &self,
        created: Created,
        input: &InputHandler,
        deadline: Option<Instant>,
        cancel: impl Future<Output = ()>,
    ) -> Result<Value, Error> {
        let era = match &self.connection {
            Connection::Legacy(_) => TaskEra::Legacy {
                may_cancel: self.require_tasks("cancel").is_ok(),
            },
            Connection::Modern(modern) => TaskEra::Modern(modern),
        };
        let drive = Drive {
            session: &self.session,
            era,
            call_id: created.call_id,
            input,
            deadline,
        };
        drive.run(&created.task, cancel).await
    }
}

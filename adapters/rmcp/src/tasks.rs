//! Tasks (CLIENTS.md § Tasks) through rmcp's calls for the 2026-07-28 tasks extension
//! (`io.modelcontextprotocol/tasks`): `call_tool_once` answers `CallToolResponse::Task`, and
//! the caller polls with `get_task`, answers input with `update_task` and cancels with
//! `cancel_task`. rmcp leaves the polling to its user (its `call_tool` helper refuses a task
//! with `UnexpectedResponse`), so [`Session::follow`] is the loop a user of rmcp writes: sleep
//! the task's `pollIntervalMs` ([`DEFAULT_POLL`] without one), poll, answer each new input
//! request once through the client handler, stop at a terminal status.
//!
//! rmcp stamps the connection's client capabilities into every request's `_meta`, so the
//! extension is declared there ([`declare`]) when the plan has a task step. Over HTTP rmcp sets
//! `Mcp-Name: <taskId>` on tasks/get, tasks/update and tasks/cancel itself.
//!
//! rmcp 3.11 has no 2025-11-25 tasks (no `params.task`, `tasks/result` or `tasks/list`: rmcp
//! 3.0 replaced them with the extension), so every task step on a legacy connection, and
//! `task_result` and `list_tasks` anywhere, are `unsupported_op`.

use std::collections::HashSet;
use std::time::Duration;

use mcp_harness_kit::{CallTool, Kind, Step, StepError};
use rmcp::Service;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ClientCapabilities,
    DEFAULT_MRTR_MAX_ROUNDS, ErrorData, GetTaskParams, InputRequest, InputRequests, InputResponses,
    JsonObject, NumberOrString, ServerRequest, TASKS_EXTENSION_ID, Task, TaskPayload,
    UpdateTaskParams,
};
use rmcp::service::{RequestContext, ServiceError};
use serde_json::{Value, json};
use tokio::time::Instant;

use crate::failure;
use crate::requests::{to_value, within};
use crate::session::{Session, call_output};

/// The wait between two polls of a task that gives no `pollIntervalMs`.
const DEFAULT_POLL: Duration = Duration::from_secs(1);

/// Why a task step on a legacy connection is not carried out.
const NO_LEGACY_TASKS: &str = "rmcp 3.11 has no 2025-11-25 tasks (rmcp 3.0 replaced them with the \
    2026-07-28 tasks extension); this connection speaks the legacy era";

/// Whether the plan has a step of CLIENTS.md § Tasks (one that needs the extension declared).
pub(crate) fn planned(plan: &[Value]) -> bool {
    plan.iter().any(|raw| match Step::parse(raw) {
        Ok(Step::CallTool(call)) => call.is_task(),
        Ok(Step::GetTask { .. } | Step::CancelTask { .. }) => true,
        _ => false,
    })
}

/// Declares the tasks extension (what rmcp's `enable_tasks` does, which this feature set of
/// rmcp does not build).
pub(crate) fn declare(capabilities: &mut ClientCapabilities) {
    capabilities
        .extensions
        .get_or_insert_with(Default::default)
        .insert(TASKS_EXTENSION_ID.to_owned(), JsonObject::new());
}

/// `task_result` and `list_tasks`: requests of 2025-11-25 only.
pub(crate) fn no_such_request(op: &str) -> StepError {
    StepError::unsupported(format!(
        "{op}: tasks/result and tasks/list exist only in the 2025-11-25 tasks, which rmcp 3.11 \
         does not implement (the 2026-07-28 extension has neither)"
    ))
}

/// The caller's cancel or the whole-task bound, whichever comes first: when, and what it ends in.
#[derive(Clone, Copy)]
struct Limit {
    at: Instant,
    after: Duration,
    kind: Kind,
}

impl Limit {
    fn of(call: &CallTool) -> Option<Limit> {
        let now = Instant::now();
        [
            (call.cancel_after, Kind::Cancelled),
            (call.max_timeout, Kind::Timeout),
        ]
        .into_iter()
        .filter_map(|(after, kind)| {
            after.map(|after| Limit {
                at: now + after,
                after,
                kind,
            })
        })
        .min_by_key(|limit| limit.at)
    }

    fn error(self) -> StepError {
        let what = match self.kind {
            Kind::Cancelled => "cancelled by the caller",
            _ => "the call's bound passed",
        };
        StepError::new(
            self.kind,
            format!("{what} after {} ms", self.after.as_millis()),
        )
    }
}

impl Session {
    fn modern_tasks(&self) -> Result<(), StepError> {
        if self.modern {
            Ok(())
        } else {
            Err(StepError::unsupported(NO_LEGACY_TASKS))
        }
    }

    /// A `call_tool` with `task` (or `background`): a plain result is reported as a plain call
    /// reports it; a task is reported as created (`background`) or followed to its end.
    pub async fn call_task(
        &self,
        call: &CallTool,
        timeout: Option<Duration>,
    ) -> Result<Value, StepError> {
        self.modern_tasks()?;
        let limit = Limit::of(call);
        self.set_answers(&call.input);
        let start = self.start_call(call, timeout);
        let created = match limit {
            None => start.await?,
            Some(limit) => match tokio::time::timeout_at(limit.at, start).await {
                Ok(created) => created?,
                // Before the task exists: dropping rmcp's call sends notifications/cancelled.
                Err(_) => return Err(limit.error()),
            },
        };
        let task = match created {
            CallToolResponse::Task(created) => created.task,
            CallToolResponse::Complete(result) => return call_output(result),
            other => {
                return Err(StepError::new(
                    Kind::InvalidResponse,
                    format!("tools/call was answered with an unexpected result: {other:?}"),
                ));
            }
        };
        if call.background {
            return Ok(json!({ "task": to_value(&task)? }));
        }
        self.follow(task, limit, timeout).await
    }

    /// `tools/call` through `call_tool_once`, with the `input_required` rounds a server may
    /// ask before it makes a task (rmcp's own round helper refuses a task, and its way of
    /// answering a round is private).
    async fn start_call(
        &self,
        call: &CallTool,
        timeout: Option<Duration>,
    ) -> Result<CallToolResponse, StepError> {
        let mut params = CallToolRequestParams::new(call.name.clone());
        if let Some(arguments) = &call.arguments {
            params = params.with_arguments(arguments.clone());
        }
        for _ in 0..DEFAULT_MRTR_MAX_ROUNDS {
            let response = within(timeout, self.service.call_tool_once(params.clone()))
                .await?
                .map_err(|e| failure::from_service(&e))?;
            let CallToolResponse::InputRequired(asked) = response else {
                return Ok(response);
            };
            let requests = asked.input_requests.unwrap_or_default();
            let answers = self.answer(requests, &mut HashSet::new()).await?;
            params.input_responses = (!answers.is_empty()).then_some(answers);
            params.request_state = asked.request_state;
        }
        Err(failure::from_service(
            &ServiceError::InputRequiredRoundsExceeded {
                max_rounds: DEFAULT_MRTR_MAX_ROUNDS,
            },
        ))
    }

    /// Polls the task with `get_task` until it ends; on `limit`, cancels it with `cancel_task`.
    async fn follow(
        &self,
        mut task: Task,
        limit: Option<Limit>,
        timeout: Option<Duration>,
    ) -> Result<Value, StepError> {
        let id = task.task_id.clone();
        let mut answered = HashSet::new();
        loop {
            let wait = task
                .poll_interval_ms
                .map_or(DEFAULT_POLL, Duration::from_millis);
            let next = Instant::now() + wait;
            if let Some(limit) = limit.filter(|limit| limit.at <= next) {
                tokio::time::sleep_until(limit.at).await;
                let cancel = self.service.cancel_task(CancelTaskParams::new(&id));
                match within(timeout, cancel).await? {
                    Ok(()) => {}
                    Err(e) => eprintln!("rmcp-adapter: tasks/cancel of {id} failed: {e}"),
                }
                return Err(limit.error());
            }
            tokio::time::sleep_until(next).await;
            let polled = within(timeout, self.service.get_task(GetTaskParams::new(&id)))
                .await?
                .map_err(|e| failure::from_service(&e))?
                .task;
            task = polled.task;
            match polled.payload {
                TaskPayload::Completed { result } => {
                    return serde_json::from_value::<CallToolResult>(Value::Object(result))
                        .map_err(|e| {
                            StepError::new(
                                Kind::InvalidResponse,
                                format!("the completed task's result is no tool result: {e}"),
                            )
                        })
                        .and_then(call_output);
                }
                TaskPayload::Failed { error } => return Err(failed(error)),
                TaskPayload::Cancelled => {
                    return Err(StepError::new(
                        Kind::Cancelled,
                        format!("the server cancelled task {id}"),
                    ));
                }
                TaskPayload::InputRequired { input_requests } => {
                    let answers = self.answer(input_requests, &mut answered).await?;
                    if !answers.is_empty() {
                        let update = UpdateTaskParams::new(&id, answers);
                        within(timeout, self.service.update_task(update))
                            .await?
                            .map_err(|e| failure::from_service(&e))?;
                    }
                }
                _ => {} // working
            }
        }
    }

    /// Answers the input requests whose keys are not in `answered` yet (then adds them), each
    /// through the client handler as rmcp answers a plain call's `input_required` round: the
    /// step's `input`, else connect's handlers.
    async fn answer(
        &self,
        requests: InputRequests,
        answered: &mut HashSet<String>,
    ) -> Result<InputResponses, StepError> {
        let mut responses = InputResponses::new();
        for (key, request) in requests {
            if !answered.insert(key.clone()) {
                continue;
            }
            let request: ServerRequest = match request {
                InputRequest::CreateMessage(request) => request.into(),
                InputRequest::Elicitation(request) => request.into(),
                InputRequest::ListRoots(request) => request.into(),
                other => {
                    return Err(StepError::new(
                        Kind::InputUnsupported,
                        format!("rmcp cannot serve the input request {key}: {other:?}"),
                    ));
                }
            };
            let id = NumberOrString::String(key.as_str().into());
            let context = RequestContext::new(id, self.service.peer().clone());
            let result = self
                .service
                .service()
                .handle_request(request, context)
                .await
                .map_err(|e| self.input_failure(&ServiceError::McpError(e)))?;
            responses.insert(key, to_value(&result)?);
        }
        Ok(responses)
    }

    /// `get_task`: one `tasks/get`, the task as rmcp read it.
    pub async fn get_task(&self, id: &str, timeout: Option<Duration>) -> Result<Value, StepError> {
        self.modern_tasks()?;
        let result = within(timeout, self.service.get_task(GetTaskParams::new(id)))
            .await?
            .map_err(|e| failure::from_service(&e))?;
        Ok(json!({ "task": to_value(&result.task)? }))
    }

    /// `cancel_task`: one `tasks/cancel`.
    pub async fn cancel_task(
        &self,
        id: &str,
        timeout: Option<Duration>,
    ) -> Result<Value, StepError> {
        self.modern_tasks()?;
        within(timeout, self.service.cancel_task(CancelTaskParams::new(id)))
            .await?
            .map_err(|e| failure::from_service(&e))?;
        Ok(json!({}))
    }
}

/// A failed task's error, read as rmcp reads a JSON-RPC error.
fn failed(error: JsonObject) -> StepError {
    match serde_json::from_value::<ErrorData>(Value::Object(error.clone())) {
        Ok(data) => failure::from_service(&ServiceError::McpError(data)),
        Err(e) => StepError::new(
            Kind::InvalidResponse,
            format!("the failed task's error is no JSON-RPC error ({e}): {error:?}"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_task_steps_declare_the_extension() {
        let plain = [json!("connect"), json!({"op":"call_tool","name":"slow"})];
        assert!(!planned(&plain));
        for step in [
            json!({"op":"call_tool","name":"slow","task":{}}),
            json!({"op":"call_tool","name":"slow","background":true}),
            json!({"op":"get_task","task_id":"t"}),
            json!({"op":"cancel_task","task_id":"t"}),
        ] {
            assert!(planned(&[json!("connect"), step.clone()]), "{step}");
        }
        let mut capabilities = ClientCapabilities::default();
        declare(&mut capabilities);
        assert!(capabilities.supports_tasks());
    }

    #[test]
    fn a_failed_task_reports_its_error_code() {
        let error = json!({"code": -32602, "message": "refused"});
        let Value::Object(error) = error else {
            unreachable!()
        };
        let reported = failed(error);
        assert_eq!(reported.kind, Kind::ProtocolError);
        assert_eq!(reported.code, Some(-32602));
        let reported = failed(JsonObject::new());
        assert_eq!(reported.kind, Kind::InvalidResponse);
    }

    #[test]
    fn the_earlier_of_cancel_and_bound_names_the_outcome() {
        let call = CallTool {
            cancel_after: Some(Duration::from_millis(500)),
            max_timeout: Some(Duration::from_millis(300)),
            ..CallTool::default()
        };
        assert_eq!(Limit::of(&call).map(|l| l.kind), Some(Kind::Timeout));
        let call = CallTool {
            max_timeout: Some(Duration::from_secs(3)),
            ..call
        };
        assert_eq!(Limit::of(&call).map(|l| l.kind), Some(Kind::Cancelled));
        assert!(Limit::of(&CallTool::default()).is_none());
    }
}

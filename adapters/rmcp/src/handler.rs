//! The adapter's rmcp client handler (`ClientHandler`): what the application tells rmcp.
//!
//! - `get_info`: the client capabilities `connect`'s `handlers` (and the plan's `input`
//!   answers) imply, and no others.
//! - `create_message`, `list_roots`, `create_elicitation`: answered with the step's own `input`
//!   answer (2026-07-28 `input_required` rounds) or else `connect`'s handler for the method.
//!   Without either, rmcp's default answer is left as it is (sampling refused with -32601, no
//!   roots, an elicitation declined), so a plan without handlers sees rmcp unchanged.
//! - Notifications rmcp hands over (`on_progress`, `on_logging_message`, `on_*_list_changed`,
//!   `on_resource_updated`, `on_task_status`) become events for the next `events` step. Progress is surfaced
//!   only for a token of a call in flight that asked for it: the registry rmcp's own
//!   `ProgressDispatcher` keeps, kept here so that events stay in arrival order.
//!
//! rmcp marks sampling, roots and logging deprecated (SEP-2577); they are still part of the
//! revisions the cases speak, so this handler serves them.
#![allow(deprecated)]

use std::collections::HashSet;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::ClientHandler;
use rmcp::model::{
    ClientConfig, CreateMessageRequestParams, CreateMessageResult, CustomRequest, CustomResult,
    ElicitRequestParams, ElicitResult, ElicitationAction, ErrorData, ListRootsResult,
    LoggingMessageNotificationParam, ProgressNotificationParam, ProgressToken,
    ResourceUpdatedNotificationParam, TaskStatusNotificationParams,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use mcp_harness_kit::{Answer, Events};

use crate::events;

/// Answers by input-request method, set by the adapter before each call.
pub(crate) type Answers = Arc<Mutex<Map<String, Value>>>;

/// Set when the handler refused an input request for lack of an answer (as rmcp's default
/// refuses sampling), so the adapter can tell the call's failure from a server's JSON-RPC error.
pub(crate) type Refused = Arc<AtomicBool>;

/// The progress tokens of the calls in flight that asked for progress.
pub(crate) type ProgressTokens = Arc<Mutex<HashSet<ProgressToken>>>;

#[derive(Clone)]
pub(crate) struct Handler {
    pub info: ClientConfig,
    /// The step's own `input` answers (modern era), which win over `handlers`.
    pub answers: Answers,
    /// `connect`'s `handlers`; `roots/list` is replaced by `set_roots`.
    pub handlers: Answers,
    pub refused: Refused,
    pub events: Events,
    pub progress: ProgressTokens,
}

impl Handler {
    /// The plan's answer for `method`: the step's `input`, else `connect`'s handler.
    fn planned(&self, method: &str) -> Option<Value> {
        self.input(method).or_else(|| self.handler(method))
    }

    fn input(&self, method: &str) -> Option<Value> {
        let answers = self.answers.lock().unwrap_or_else(|p| p.into_inner());
        answers.get(method).cloned()
    }

    fn handler(&self, method: &str) -> Option<Value> {
        let handlers = self.handlers.lock().unwrap_or_else(|p| p.into_inner());
        handlers.get(method).cloned()
    }

    /// Records a server request as it arrives, as the caller saw it.
    fn surfaced(&self, method: &str, params: Option<Value>) {
        self.events.push(events::request(method, params));
    }
}

/// Answers `result` after `delay` (a user taking time); a request the server cancels
/// meanwhile (rmcp cancels the context's token on `notifications/cancelled`) is not answered:
/// rmcp drops whatever the handler returns for it.
async fn answer_after<T>(
    delay: Option<Duration>,
    context: &RequestContext<RoleClient>,
    result: Result<T, ErrorData>,
) -> Result<T, ErrorData> {
    if let Some(delay) = delay {
        tokio::select! {
            () = tokio::time::sleep(delay) => {}
            () = context.ct.cancelled() => {
                return Err(ErrorData::internal_error("cancelled by the server", None));
            }
        }
    }
    result
}

fn typed<T: DeserializeOwned>(method: &str, value: Value) -> Result<T, ErrorData> {
    serde_json::from_value(value).map_err(|e| {
        ErrorData::internal_error(
            format!("the plan's answer for {method} does not parse: {e}"),
            None,
        )
    })
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        self.info.clone()
    }

    fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> impl Future<Output = Result<ElicitResult, ErrorData>> + Send + '_ {
        const METHOD: &str = "elicitation/create";
        self.surfaced(METHOD, serde_json::to_value(&request).ok());
        let (mode, schema) = match &request {
            ElicitRequestParams::FormElicitationParams {
                requested_schema, ..
            } => ("form", serde_json::to_value(requested_schema).ok()),
            ElicitRequestParams::UrlElicitationParams { .. } => ("url", None),
            _ => ("", None),
        };
        // The step's own `input` answer is given as it is, whatever the mode.
        let answer = match self.input(METHOD) {
            Some(answer) => Some(Some(Answer::from_plan(answer))),
            None => self
                .handler(METHOD)
                .map(|handler| Answer::elicitation(&handler, mode, schema.as_ref())),
        };
        let (delay, result) = match answer {
            // rmcp's default: decline.
            None => (None, Ok(ElicitResult::new(ElicitationAction::Decline))),
            Some(None) => (
                None,
                Err(ErrorData::invalid_params(
                    format!("this client does not accept elicitation in {mode:?} mode"),
                    None,
                )),
            ),
            Some(Some(answer)) => (answer.delay, typed(METHOD, answer.result)),
        };
        async move { answer_after(delay, &context, result).await }
    }

    fn create_message(
        &self,
        params: CreateMessageRequestParams,
        context: RequestContext<RoleClient>,
    ) -> impl Future<Output = Result<CreateMessageResult, ErrorData>> + Send + '_ {
        const METHOD: &str = "sampling/createMessage";
        self.surfaced(METHOD, serde_json::to_value(&params).ok());
        let (delay, result) = match self.planned(METHOD) {
            Some(answer) => {
                let answer = Answer::from_plan(answer);
                (answer.delay, typed(METHOD, answer.result))
            }
            None => {
                // rmcp's default: refuse.
                self.refused.store(true, Ordering::SeqCst);
                (
                    None,
                    Err(ErrorData::method_not_found::<
                        rmcp::model::CreateMessageRequestMethod,
                    >()),
                )
            }
        };
        async move { answer_after(delay, &context, result).await }
    }

    fn list_roots(
        &self,
        context: RequestContext<RoleClient>,
    ) -> impl Future<Output = Result<ListRootsResult, ErrorData>> + Send + '_ {
        const METHOD: &str = "roots/list";
        self.surfaced(METHOD, None);
        let (delay, result) = match self.planned(METHOD) {
            Some(answer) => {
                let answer = Answer::from_plan(answer);
                (answer.delay, typed(METHOD, answer.result))
            }
            // rmcp's default: no roots.
            None => (None, Ok(ListRootsResult::default())),
        };
        async move { answer_after(delay, &context, result).await }
    }

    fn ping(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> impl Future<Output = Result<(), ErrorData>> + Send + '_ {
        // rmcp's default answer, surfaced like every request.
        self.surfaced("ping", None);
        std::future::ready(Ok(()))
    }

    fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleClient>,
    ) -> impl Future<Output = Result<CustomResult, ErrorData>> + Send + '_ {
        // A request rmcp could not type (an unknown method, or a known one whose params its
        // types cannot hold, e.g. an elicitation schema with a nested object): rmcp's default
        // answer, -32601 naming the method, surfaced like every request.
        self.surfaced(&request.method, request.params.clone());
        std::future::ready(Err(ErrorData::new(
            rmcp::model::ErrorCode::METHOD_NOT_FOUND,
            request.method,
            None,
        )))
    }

    fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        let wanted = self
            .progress
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains(&params.progress_token);
        if wanted {
            self.events.push(events::progress(&params));
        }
        std::future::ready(())
    }

    fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        self.events.push(events::log(&params));
        std::future::ready(())
    }

    fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        self.events.push(events::resource_updated(&params.uri));
        std::future::ready(())
    }

    fn on_task_status(
        &self,
        params: TaskStatusNotificationParams,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        self.events.push(events::task_status(&params));
        std::future::ready(())
    }

    fn on_tool_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        self.events.push(events::list_changed("tools"));
        std::future::ready(())
    }

    fn on_prompt_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        self.events.push(events::list_changed("prompts"));
        std::future::ready(())
    }

    fn on_resource_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        self.events.push(events::list_changed("resources"));
        std::future::ready(())
    }
}

//! The requests a step makes on an open session beyond connect, tools and close (CLIENTS.md,
//! "The rest of what a client asks" and "What the server starts").

use std::future::Future;
use std::sync::atomic::Ordering;
use std::time::Duration;

use mcp_harness_kit::{Kind, StepError, content_as_seen, resource_contents_as_seen};
#[allow(deprecated)]
// LoggingLevel, SetLevelRequestParams: logging is deprecated in rmcp (SEP-2577).
use rmcp::model::{
    ArgumentInfo, ClientRequest, CompleteRequestParams, CompletionContext, GetPromptRequestParams,
    LoggingLevel, PingRequest, ReadResourceRequestParams, Reference, SetLevelRequestParams,
};
use rmcp::service::{PeerRequestOptions, ServiceError};
use serde_json::{Map, Value, json};

use crate::events;
use crate::failure;
use crate::session::Session;

/// The rest of what a client asks (CLIENTS.md): resources, prompts, completion, ping, log level.
///
/// Listings go through rmcp's own list-all helpers, as `list_tools` does (see [`listed`]).
/// Single requests go through rmcp's typed helpers
/// (`RunningService::read_resource`/`get_prompt`, which drive 2026-07-28's `input_required`
/// rounds, `Peer::complete`, `Peer::set_level`), under the contract's per-request timeout the way
/// rmcp documents it: dropping a helper's future (`tokio::time::timeout`) makes rmcp send
/// `notifications/cancelled` for the request. rmcp has no ping helper, so `ping` is its generic
/// `send_cancellable_request` with `PeerRequestOptions::timeout`. rmcp checks no server
/// capability before sending, and its README's client examples do not read
/// `peer_info().capabilities` first (CLIENTS.md, "It leaves capability checks to its user"), so
/// no step here reports `capability_missing`.
impl Session {
    pub async fn list_resources(&self) -> Result<Value, StepError> {
        listed("resources", self.service.list_all_resources()).await
    }

    pub async fn list_resource_templates(&self) -> Result<Value, StepError> {
        listed(
            "resourceTemplates",
            self.service.list_all_resource_templates(),
        )
        .await
    }

    pub async fn list_prompts(&self) -> Result<Value, StepError> {
        listed("prompts", self.service.list_all_prompts()).await
    }

    pub async fn read_resource(
        &self,
        uri: &str,
        input: &Map<String, Value>,
        timeout: Option<Duration>,
    ) -> Result<Value, StepError> {
        self.set_answers(input);
        let params = ReadResourceRequestParams::new(uri);
        let result = within(timeout, self.service.read_resource(params))
            .await?
            .map_err(|e| self.input_failure(&e))?;
        let contents = result
            .contents
            .iter()
            .map(|contents| resource_contents_as_seen(&to_value(contents)?))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(json!({ "contents": contents }))
    }

    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: &Option<Map<String, Value>>,
        input: &Map<String, Value>,
        timeout: Option<Duration>,
    ) -> Result<Value, StepError> {
        let mut params = GetPromptRequestParams::new(name);
        // rmcp takes the arguments as a JSON object and sends them as given.
        if let Some(arguments) = arguments {
            params = params.with_arguments(arguments.clone());
        }
        self.set_answers(input);
        let result = within(timeout, self.service.get_prompt(params))
            .await?
            .map_err(|e| self.input_failure(&e))?;
        let mut messages = Vec::with_capacity(result.messages.len());
        for message in &result.messages {
            messages.push(json!({
                "role": to_value(&message.role)?,
                "content": content_as_seen(&to_value(&message.content)?)?,
            }));
        }
        let mut ok = json!({ "messages": messages });
        if let Some(description) = &result.description {
            ok["description"] = json!(description);
        }
        Ok(ok)
    }

    pub async fn complete(
        &self,
        reference: &Value,
        argument: &Value,
        context: Option<&Value>,
        timeout: Option<Duration>,
    ) -> Result<Value, StepError> {
        // rmcp types every member: a `ref` of another type, an argument or context it cannot
        // hold, cannot be sent through it at all.
        let reference: Reference = typed(reference, "ref")?;
        let argument: ArgumentInfo = typed(argument, "argument")?;
        let mut params = CompleteRequestParams::new(reference, argument);
        if let Some(context) = context {
            params = params.with_context(typed::<CompletionContext>(context, "context")?);
        }
        let result = within(timeout, self.service.complete(params))
            .await?
            .map_err(|e| failure::from_service(&e))?;
        to_value(&result.completion)
    }

    pub async fn ping(&self, timeout: Option<Duration>) -> Result<Value, StepError> {
        let request = ClientRequest::PingRequest(PingRequest::default());
        let options = match timeout {
            Some(timeout) => PeerRequestOptions::with_timeout(timeout),
            None => PeerRequestOptions::no_options(),
        };
        let handle = self
            .service
            .send_cancellable_request(request, options)
            .await
            .map_err(|e| failure::from_service(&e))?;
        // Any result answers the ping; rmcp decodes `{}` as its `EmptyResult`.
        handle
            .await_response()
            .await
            .map_err(|e| failure::from_service(&e))?;
        Ok(json!({}))
    }

    #[allow(deprecated)] // rmcp marks logging deprecated (SEP-2577); it still sends it.
    pub async fn set_logging_level(
        &self,
        level: &str,
        timeout: Option<Duration>,
    ) -> Result<Value, StepError> {
        let level: LoggingLevel = typed(&json!(level), "level")?;
        within(
            timeout,
            self.service.set_level(SetLevelRequestParams::new(level)),
        )
        .await?
        .map_err(|e| failure::from_service(&e))?;
        Ok(json!({}))
    }

    /// The step's input answers (2026-07-28 `input_required` rounds), as `call_tool` sets them.
    pub(crate) fn set_answers(&self, input: &Map<String, Value>) {
        *self.answers.lock().unwrap_or_else(|p| p.into_inner()) = input.clone();
        self.refused.store(false, Ordering::SeqCst);
    }

    /// A failure of a helper that may have driven input rounds. rmcp hands the handler's refusal
    /// back as an McpError of its own making (the server sent a result, not an error): that is
    /// `input_unsupported`; everything else maps as usual.
    pub(crate) fn input_failure(&self, error: &ServiceError) -> StepError {
        match (error, self.refused.load(Ordering::SeqCst)) {
            (ServiceError::McpError(data), true) => StepError::new(
                Kind::InputUnsupported,
                format!(
                    "the server asked for an input this request has no answer for: {}",
                    data.message
                ),
            ),
            _ => failure::from_service(error),
        }
    }
}

/// One of rmcp's own list-all helpers (`Peer::list_all_*`), which follow `nextCursor` until it
/// is absent and nothing more: no timeout, no cursor or duplicate check. The entries go under
/// `key`, as rmcp serialises them.
pub(crate) async fn listed<T: serde::Serialize>(
    key: &str,
    all: impl Future<Output = Result<Vec<T>, ServiceError>>,
) -> Result<Value, StepError> {
    let entries = all.await.map_err(|e| failure::from_service(&e))?;
    Ok(json!({ key: to_value(&entries)? }))
}

/// Runs one rmcp helper under the contract's per-request timeout. On expiry the helper's future
/// is dropped, and rmcp sends `notifications/cancelled` for its request.
pub(crate) async fn within<T>(
    timeout: Option<Duration>,
    request: impl Future<Output = T>,
) -> Result<T, StepError> {
    match timeout {
        None => Ok(request.await),
        Some(limit) => tokio::time::timeout(limit, request).await.map_err(|_| {
            StepError::new(
                Kind::Timeout,
                format!("no answer within {} ms", limit.as_millis()),
            )
        }),
    }
}

/// A step member as rmcp's type for it; what the type cannot hold cannot be sent through rmcp.
fn typed<T: serde::de::DeserializeOwned>(value: &Value, member: &str) -> Result<T, StepError> {
    serde_json::from_value(value.clone()).map_err(|e| {
        StepError::unsupported(format!(
            "rmcp's {} cannot hold the step's {member} {value}: {e}",
            std::any::type_name::<T>()
                .rsplit("::")
                .next()
                .unwrap_or("type")
        ))
    })
}

/// A typed rmcp value as the JSON rmcp would write for it. Through text, not
/// `serde_json::to_value`: rmcp keeps an annotation's `priority` as `f32`, which it writes as
/// `0.3` but which `to_value` would widen to `0.30000001192092896`.
pub(crate) fn to_value<T: serde::Serialize>(typed: &T) -> Result<Value, StepError> {
    serde_json::to_string(typed)
        .and_then(|text| serde_json::from_str(&text))
        .map_err(|e| {
            StepError::new(
                Kind::InvalidResponse,
                format!("rmcp's typed result does not serialise: {e}"),
            )
        })
}

/// What the server starts (CLIENTS.md, "What the server starts"): events, roots, resource
/// subscriptions and `subscriptions/listen`, each through rmcp's own API.
impl Session {
    /// Everything surfaced since the last `events` step; with `min`, first waits (at most the
    /// request timeout, 5 s without one) until that many have arrived.
    pub async fn events(&self, min: usize, timeout: Option<Duration>) -> Result<Value, StepError> {
        let limit = timeout.unwrap_or(Duration::from_secs(5));
        let taken = self.events.take(min, limit).await;
        Ok(json!({ "events": taken }))
    }

    /// Replaces the roots `roots/list` is answered with and, when the client declared `roots`,
    /// tells the server through rmcp's `notify_roots_list_changed`.
    pub async fn set_roots(&self, roots: &[Value]) -> Result<Value, StepError> {
        let declared = {
            let mut handlers = self.handlers.lock().unwrap_or_else(|p| p.into_inner());
            let declared = handlers.contains_key("roots/list");
            if declared {
                handlers.insert("roots/list".into(), json!({ "roots": roots }));
            }
            declared
        };
        if declared {
            self.service
                .notify_roots_list_changed()
                .await
                .map_err(|e| failure::from_service(&e))?;
        }
        Ok(json!({}))
    }

    /// `resources/subscribe` through rmcp's `Peer::subscribe` (rmcp checks no capability).
    #[allow(deprecated)] // legacy-only in rmcp; the legacy eras still have it.
    pub async fn subscribe_resource(
        &self,
        uri: &str,
        timeout: Option<Duration>,
    ) -> Result<Value, StepError> {
        within(
            timeout,
            self.service
                .subscribe(rmcp::model::SubscribeRequestParams::new(uri.to_owned())),
        )
        .await?
        .map_err(|e| failure::from_service(&e))?;
        Ok(json!({}))
    }

    /// `resources/unsubscribe` through rmcp's `Peer::unsubscribe`.
    #[allow(deprecated)] // legacy-only in rmcp; the legacy eras still have it.
    pub async fn unsubscribe_resource(
        &self,
        uri: &str,
        timeout: Option<Duration>,
    ) -> Result<Value, StepError> {
        within(
            timeout,
            self.service
                .unsubscribe(rmcp::model::UnsubscribeRequestParams::new(uri.to_owned())),
        )
        .await?
        .map_err(|e| failure::from_service(&e))?;
        Ok(json!({}))
    }

    /// `subscriptions/listen` through rmcp's `Peer::listen`, which waits for the server's
    /// acknowledgment; the subscription then stays open until `close`, drained into `events` by
    /// a task of its own (rmcp routes its notifications past the handler).
    pub async fn listen(
        &mut self,
        notifications: &Value,
        timeout: Option<Duration>,
    ) -> Result<Value, StepError> {
        if !self.modern {
            return Err(StepError::new(
                Kind::UnsupportedOp,
                "subscriptions/listen is a 2026-07-28 request; this connection speaks the legacy era",
            ));
        }
        let filter: rmcp::model::SubscriptionFilter = typed(notifications, "notifications")?;
        let mut subscription = within(timeout, self.service.peer().listen(filter))
            .await?
            .map_err(|e| failure::from_service(&e))?;
        let acknowledged = to_value(subscription.acknowledged())?;
        let events = self.events.clone();
        self.listens.push(tokio::spawn(async move {
            loop {
                match subscription.next().await {
                    Ok(Some(notification)) => {
                        if let Some(event) = events::from_notification(&notification) {
                            events.push(event);
                        }
                    }
                    Ok(None) => {
                        eprintln!(
                            "rmcp-adapter: the listen stream ended ({:?})",
                            subscription.end()
                        );
                        break;
                    }
                    Err(e) => {
                        eprintln!("rmcp-adapter: the listen stream failed: {e}");
                        break;
                    }
                }
            }
        }));
        Ok(json!({ "notifications": acknowledged }))
    }
}

//! Messages the fake server starts itself: requests to the client (`roots/list`,
//! `sampling/createMessage`, `elicitation/create`, `ping`) and notifications (progress, log
//! messages, list changes, resource updates, cancellations), sent around a handler's reply.
//! They are what lets a case judge a client that answers and listens, not only one that asks.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One message the server sends on its own initiative, triggered by the request (or
/// notification) its handler matched.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Send {
    /// The JSON-RPC message: a request to the client (with an `id`) or a notification. Any
    /// member whose value is `{"$request": "/json/pointer"}` is replaced by the value at that
    /// pointer in the triggering request (e.g. `/params/_meta/progressToken` for the token
    /// the client chose, `/id` for its id); an absent value becomes `null`. Any member whose
    /// value is `{"$response": {"id": I, "pointer": "/json/pointer"}}` is replaced by the
    /// value at that pointer in the client's response to the request with id `I` that an
    /// earlier message of the same `sends` list sent with `await_response` (e.g.
    /// `/result/task/taskId` for the task the client created); `null` when no response came.
    /// Transcripts record the message as sent.
    pub message: Value,
    /// Sent before the handler's reply (the default) or after it.
    #[serde(default, skip_serializing_if = "is_default")]
    pub at: SendAt,
    /// Wait this long first, in milliseconds: after the previous message of the same `at`
    /// (or the end of its wait for a response), or after the request (`before`) or the reply
    /// (`after`) for the first one. The reply comes once the messages before it are out and
    /// the handler's `delay_ms` has passed since the request.
    #[serde(default, skip_serializing_if = "is_default")]
    pub delay_ms: u64,
    /// For a request: wait for the client's response to it (a message with its `id`) before
    /// going on, at most the case's `timeout_ms`; then go on anyway. Every response the
    /// client sends is recorded either way (over HTTP, POSTed responses are answered 202).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub await_response: bool,
    /// HTTP: the stream that carries it. `post` is the triggering request's response stream
    /// (which makes the answer an SSE stream; after the reply, the stream then ends after
    /// the last such message instead of right after the reply); `get` is the standalone GET
    /// stream (`http.get` must be `stream`): the one the client opened most recently that is
    /// still open, or, when none is, the next one it opens (messages wait for it, in order,
    /// and are recorded as sent only when written). Default: `post` before the reply, `get`
    /// after it and always for a rule on a notification. A case run over HTTP whose messages
    /// travel on the GET stream must have `http.get` `stream` (checked at load). Ignored over
    /// stdio, where everything shares one channel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<Via>,
}

/// When a [`Send`] goes out, relative to its handler's reply.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SendAt {
    /// Before the reply (over HTTP on the request's own SSE stream by default).
    #[default]
    Before,
    /// After the reply (over HTTP on the standalone GET stream by default).
    After,
}

/// The HTTP stream a [`Send`] travels on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Via {
    /// The triggering POST's response stream.
    Post,
    /// The standalone GET stream.
    Get,
}

fn is_default<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

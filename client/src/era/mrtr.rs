//! `resultType` and multi round-trip requests: a modern result is `complete` (also when the
//! field is absent) or `input_required`; anything else is invalid. An `input_required` result
//! of `tools/call`, `resources/read` or `prompts/get` is answered by retrying the same request with `inputResponses` built by the
//! caller's [`InputHandler`] and the server's `requestState` echoed exactly.
//!
//! These are pure functions over JSON; the retry loop itself (new id and fresh `_meta` per
//! round, never caching a round) is in [`super::ops`].

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use crate::error::{Error, ErrorKind};
use crate::listener::Listener;

/// The most rounds one call may take (the first request included) before it is abandoned as
/// `invalid_response`.
pub(crate) const MAX_ROUNDS: usize = 8;

/// Whether a result of `method` may be `input_required` (and the request so be retried with
/// `inputResponses`): `tools/call`, `resources/read` and `prompts/get`.
pub(crate) fn may_require_input(method: &str) -> bool {
    matches!(method, "tools/call" | "resources/read" | "prompts/get")
}

/// The caller's answers to a server's input requests, by the input request's `method`
/// (`elicitation/create`, `sampling/createMessage`, `roots/list`): the value is sent back
/// as-is in `inputResponses`. An `elicitation/create` without an answer is declined
/// (`{"action":"decline"}`); any other method without one fails the call with
/// `input_unsupported`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InputHandler {
    answers: BTreeMap<String, Value>,
}

impl InputHandler {
    /// A handler with no answers: elicitations are declined, everything else unsupported.
    pub fn new() -> Self {
        InputHandler::default()
    }

    /// Answers every input request of `method` with `response`.
    pub fn answer(mut self, method: impl Into<String>, response: Value) -> Self {
        self.answers.insert(method.into(), response);
        self
    }

    /// The client capabilities this handler can serve: one entry per answered method.
    pub(crate) fn capabilities(&self) -> Value {
        let mut caps = Map::new();
        for method in self.answers.keys() {
            let name = match method.as_str() {
                "elicitation/create" => "elicitation",
                "sampling/createMessage" => "sampling",
                "roots/list" => "roots",
                _ => continue,
            };
            caps.insert(name.into(), json!({}));
        }
        Value::Object(caps)
    }

    /// The answer to one input request: the caller's for its method, else the connection's
    /// handlers' (see [`crate::handlers`]), else a decline for an elicitation.
    fn respond(&self, method: &str, params: &Value, listener: &Listener) -> Result<Value, Error> {
        listener.input_requested(method, params);
        let handled = || listener.input_answer(method, params);
        match (self.answers.get(method).cloned().or_else(handled), method) {
            (Some(answer), _) if !listener.retries_after(params, &answer) => Err(Error::new(
                ErrorKind::InputUnsupported,
                "the URL elicitation was accepted; the request is not retried",
            )),
            (Some(answer), _) => Ok(answer),
            (None, "elicitation/create") => Ok(json!({"action": "decline"})),
            (None, _) => Err(Error::new(
                ErrorKind::InputUnsupported,
                format!(
                    "the server asked for input by {method}, which the caller's input handler \
                     does not answer; the request is not retried"
                ),
            )),
        }
    }
}

/// What a modern result is.
#[derive(Debug, PartialEq)]
pub(crate) enum Shape {
    /// The final result (`resultType` "complete", or absent).
    Complete(Value),
    /// More input is needed: an `InputRequiredResult`.
    InputRequired(Value),
    /// The server made the request a task: a `CreateTaskResult` (the tasks extension).
    Task(Value),
}

/// Reads `resultType`. `input_required` is only valid where the method may return it
/// (`may_require_input`), `task` only where a task may answer it (`may_create_task`, see
/// [`crate::tasks::may_create_task`]); an unknown value is invalid.
pub(crate) fn shape(
    result: Value,
    method: &str,
    may_require_input: bool,
    may_create_task: bool,
) -> Result<Shape, Error> {
    if !result.is_object() {
        return Err(Error::invalid(format!(
            "the {method} result is not an object"
        )));
    }
    match result.get("resultType") {
        None => Ok(Shape::Complete(result)),
        Some(Value::String(t)) if t == "complete" => Ok(Shape::Complete(result)),
        Some(Value::String(t)) if t == "input_required" && may_require_input => {
            Ok(Shape::InputRequired(result))
        }
        Some(Value::String(t)) if t == "input_required" => Err(Error::invalid(format!(
            "the server answered {method} with resultType \"input_required\", which that \
             method may not return"
        ))),
        Some(Value::String(t)) if t == "task" && may_create_task => Ok(Shape::Task(result)),
        Some(Value::String(t)) if t == "task" => Err(Error::invalid(format!(
            "the server answered {method} with a CreateTaskResult (resultType \"task\"), \
             which is invalid here: only a tools/call that declared the tasks extension may \
             become a task"
        ))),
        Some(other) => Err(Error::invalid(format!(
            "the {method} result has resultType {other}, which this client does not recognise"
        ))),
    }
}

/// The params of the retry after `result` (an `InputRequiredResult`): the original params,
/// plus `inputResponses` (one per key of `inputRequests`, when there were any, answered by
/// `input` or else the `listener`'s handlers) and `requestState` copied verbatim (only when
/// the result carried one). `_meta` is added by the caller, fresh; only a progress token is
/// kept, so progress of the retry still reaches the caller.
pub(crate) fn retry_params(
    original: &Value,
    result: &Value,
    input: &InputHandler,
    listener: &Listener,
) -> Result<Value, Error> {
    let requests = result.get("inputRequests").filter(|v| !v.is_null());
    let state = result.get("requestState").filter(|v| !v.is_null());
    if requests.is_none() && state.is_none() {
        return Err(Error::invalid(
            "an input_required result carries neither inputRequests nor requestState",
        ));
    }
    let mut params = match original {
        Value::Object(map) => map.clone(),
        _ => Map::new(),
    };
    let token = params
        .remove("_meta")
        .and_then(|meta| meta.get("progressToken").cloned());
    if let Some(token) = token {
        params.insert("_meta".into(), json!({"progressToken": token}));
    }
    if let Some(requests) = requests {
        let Value::Object(requests) = requests else {
            return Err(Error::invalid(format!(
                "inputRequests is not an object: {requests}"
            )));
        };
        let responses = input_responses(requests, input, listener)?;
        params.insert("inputResponses".into(), Value::Object(responses));
    }
    if let Some(state) = state {
        let Value::String(state) = state else {
            return Err(Error::invalid(format!(
                "requestState is not a string: {state}"
            )));
        };
        params.insert("requestState".into(), Value::String(state.clone()));
    }
    Ok(Value::Object(params))
}

/// The answers to `requests` (input requests by key), one per key, by `input` or else the
/// `listener`'s handlers; a request without a string `method` is `invalid_response`.
pub(crate) fn input_responses<'a>(
    requests: impl IntoIterator<Item = (&'a String, &'a Value)>,
    input: &InputHandler,
    listener: &Listener,
) -> Result<Map<String, Value>, Error> {
    let mut responses = Map::new();
    for (key, request) in requests {
        let Some(method) = request.get("method").and_then(Value::as_str) else {
            return Err(Error::invalid(format!(
                "the input request {key:?} has no string \"method\": {request}"
            )));
        };
        let params = request.get("params").unwrap_or(&Value::Null);
        responses.insert(key.clone(), input.respond(method, params, listener)?);
    }
    Ok(responses)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handlers::Handlers;
    use crate::seams::Seams;

    fn retry_params(o: &Value, r: &Value, i: &InputHandler) -> Result<Value, Error> {
        super::retry_params(o, r, i, &Listener::new(Handlers::new(), Seams::default()))
    }

    #[test]
    fn result_types() {
        assert!(matches!(
            shape(json!({}), "m", false, false),
            Ok(Shape::Complete(_))
        ));
        let done = json!({"resultType":"complete"});
        assert!(matches!(
            shape(done, "m", false, false),
            Ok(Shape::Complete(_))
        ));
        let more = json!({"resultType":"input_required"});
        assert!(matches!(
            shape(more.clone(), "m", true, false),
            Ok(Shape::InputRequired(_))
        ));
        let e = shape(more, "tools/list", false, false).unwrap_err();
        assert_eq!(e.kind, ErrorKind::InvalidResponse);
        let task = json!({"resultType":"task","taskId":"t","status":"working"});
        assert!(matches!(
            shape(task.clone(), "tools/call", true, true),
            Ok(Shape::Task(_))
        ));
        for method in ["tools/call", "resources/read", "tasks/get"] {
            let e = shape(task.clone(), method, true, false).unwrap_err();
            assert_eq!(e.kind, ErrorKind::InvalidResponse, "{method}");
        }
        for bad in [
            json!({"resultType":"banana"}),
            json!({"resultType":1}),
            json!([]),
        ] {
            let e = shape(bad.clone(), "m", true, true).unwrap_err();
            assert_eq!(e.kind, ErrorKind::InvalidResponse, "{bad}");
        }
    }

    #[test]
    fn retry_echoes_state_and_answers_every_key() {
        let original = json!({"name":"t","arguments":{"a":1}});
        let result = json!({"resultType":"input_required","requestState":"s+/=é\u{0}",
            "inputRequests":{
                "a":{"method":"elicitation/create","params":{}},
                "b":{"method":"sampling/createMessage","params":{"maxTokens":5}},
                "c":{"method":"elicitation/create","params":{}}}});
        let input = InputHandler::new()
            .answer("sampling/createMessage", json!({"role":"assistant"}))
            .answer(
                "elicitation/create",
                json!({"action":"accept","content":{"x":1}}),
            );
        let p = retry_params(&original, &result, &input).unwrap();
        assert_eq!(p["name"], "t");
        assert_eq!(p["arguments"], json!({"a":1}));
        assert_eq!(p["requestState"], "s+/=é\u{0}");
        assert_eq!(p["inputResponses"]["b"], json!({"role":"assistant"}));
        assert_eq!(p["inputResponses"]["c"]["action"], "accept");
        assert_eq!(
            input.capabilities(),
            json!({"elicitation":{}, "sampling":{}})
        );

        let declined = retry_params(&original, &result, &InputHandler::new());
        assert_eq!(declined.unwrap_err().kind, ErrorKind::InputUnsupported);
        let only_elicit = json!({"resultType":"input_required",
            "inputRequests":{"a":{"method":"elicitation/create"}}});
        let p = retry_params(&original, &only_elicit, &InputHandler::new()).unwrap();
        assert_eq!(p["inputResponses"]["a"], json!({"action":"decline"}));
        assert!(p.get("requestState").is_none());
    }

    #[test]
    fn malformed_input_required_results_are_invalid() {
        let original = json!({"name":"t"});
        for bad in [
            json!({"resultType":"input_required"}),
            json!({"inputRequests":[]}),
            json!({"inputRequests":{"a":{"params":{}}}}),
            json!({"requestState":5}),
        ] {
            let e = retry_params(&original, &bad, &InputHandler::new()).unwrap_err();
            assert_eq!(e.kind, ErrorKind::InvalidResponse, "{bad}");
        }
    }
}

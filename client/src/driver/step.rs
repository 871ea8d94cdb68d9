//! What the plan's steps share: a step's answers to input requests, connect's trace context,
//! and the error of a step that needs a connection when there is none. Kept apart from
//! `plan.rs` so the step modules (`features.rs`, `listening.rs`) depend on it and the plan on
//! them, never back.

use serde_json::Value;

use crate::era::InputHandler;
use crate::error::{Error, ErrorKind};
use crate::trace::TraceContext;

/// A step's optional `input`: the caller's answers to input requests, by method.
pub(super) fn input_handler(step: &Value) -> Result<InputHandler, Error> {
    match step.get("input") {
        None | Some(Value::Null) => Ok(InputHandler::new()),
        Some(Value::Object(answers)) => Ok(answers
            .iter()
            .fold(InputHandler::new(), |h, (method, answer)| {
                h.answer(method.clone(), answer.clone())
            })),
        Some(_) => Err(Error::new(
            ErrorKind::UnsupportedOp,
            format!("input must be an object of answers by method: {step}"),
        )),
    }
}

/// The error of a step that needs a connection when there is none.
pub(super) fn not_connected() -> Error {
    Error::closed(
        "there is no connection (not connected yet, the connect failed, or it was closed)",
    )
}

/// `connect`'s optional `trace_context`: `{traceparent, tracestate?, baggage?}`, strings.
pub(super) fn trace_context(step: &Value) -> Result<Option<TraceContext>, Error> {
    let malformed = |why: &str| {
        Error::new(
            ErrorKind::UnsupportedOp,
            format!("connect: trace_context {why}: {step}"),
        )
    };
    let context = match step.get("trace_context") {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Object(context)) => context,
        Some(_) => return Err(malformed("must be an object")),
    };
    let text = |key: &str| match context.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(malformed(&format!("member {key} must be a string"))),
    };
    Ok(Some(TraceContext {
        traceparent: text("traceparent")?.ok_or_else(|| malformed("needs a traceparent"))?,
        tracestate: text("tracestate")?,
        baggage: text("baggage")?,
    }))
}

//! What the plan's steps share: a step's answers to input requests, and the error of a step
//! that needs a connection when there is none. Kept apart from `plan.rs` so the step modules
//! (`features.rs`, `listening.rs`) depend on it and the plan on them, never back.

use serde_json::Value;

use crate::era::InputHandler;
use crate::error::{Error, ErrorKind};

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

//! The `together` step: starts its steps at once on the open connection and reports each
//! one's outcome, in the order given, once all have ended. It exists for what only
//! concurrent requests show (two calls whose token expires together must share one refresh).

use futures_util::future::join_all;
use serde_json::{Value, json};

use super::plan::{outcome_members, request, unknown};
use crate::client::Client;
use crate::error::{Error, ErrorKind};

/// Runs `{"op":"together","steps":[…]}`: `{"steps": [{"ok": …} | {"error": {…}}, …]}`.
pub(super) async fn run(step: &Value, connection: Option<&Client>) -> Result<Value, Error> {
    let Some(steps) = step.get("steps").and_then(Value::as_array) else {
        return Err(Error::new(
            ErrorKind::UnsupportedOp,
            format!("a together step needs an array \"steps\": {step}"),
        ));
    };
    let runs = steps.iter().map(|inner| async move {
        let op = inner.get("op").and_then(Value::as_str).unwrap_or_default();
        let outcome = match op {
            // Only requests of the open connection run at once.
            "connect" | "close" | "sleep" | "together" => Err(unknown(inner)),
            _ => match request(op, inner, connection).await {
                Some(outcome) => outcome,
                None => Err(unknown(inner)),
            },
        };
        Value::Object(outcome_members(outcome))
    });
    Ok(json!({"steps": join_all(runs).await}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn each_step_reports_its_own_outcome_in_order() {
        let step = json!({"op":"together","steps":[
            {"op":"list_tools"},
            {"op":"connect"},
            {"op":"no_such_op"}
        ]});
        let got = run(&step, None).await.unwrap();
        let kinds: Vec<&str> = got["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["error"]["kind"].as_str().unwrap())
            .collect();
        assert_eq!(
            kinds,
            ["transport_closed", "unsupported_op", "unsupported_op"]
        );
        let bad = run(&json!({"op":"together"}), None).await.unwrap_err();
        assert_eq!(bad.kind, ErrorKind::UnsupportedOp);
    }
}

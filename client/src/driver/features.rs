//! The steps for the rest of what a client asks: `list_resources`, `list_resource_templates`,
//! `list_prompts`, `read_resource`, `get_prompt`, `complete`, `ping`, `set_logging_level`.
//!
//! Kept apart from [`super::plan`] so the plan loop stays a dispatcher: each function here
//! reads its step's members, calls the [`Client`], and shapes the `ok` object of the outcome
//! line. A step whose members are not of the contract's shape is `unsupported_op`.

use serde_json::{Map, Value, json};

use super::step::{input_handler, not_connected};
use crate::client::Client;
use crate::error::{Error, ErrorKind};

/// A listing step: `{"resources":[…]}`, `{"resourceTemplates":[…]}` or `{"prompts":[…]}`.
pub(super) async fn list(op: &str, client: &Client) -> Result<Value, Error> {
    let (member, entries) = match op {
        "list_resources" => ("resources", client.list_resources().await?),
        "list_resource_templates" => ("resourceTemplates", client.list_resource_templates().await?),
        _ => ("prompts", client.list_prompts().await?),
    };
    let mut ok = Map::new();
    ok.insert(member.into(), Value::Array(entries));
    Ok(Value::Object(ok))
}

/// A step of one request: `read_resource`, `get_prompt`, `complete`, `ping`,
/// `set_logging_level`. The step is read before the connection is looked at, so a malformed
/// step is `unsupported_op` whether connected or not.
pub(super) async fn run(op: &str, step: &Value, client: Option<&Client>) -> Result<Value, Error> {
    match op {
        "read_resource" => {
            let uri = string(step, "uri")?;
            let input = input_handler(step)?;
            connected(client)?.read_resource(uri, &input).await
        }
        "get_prompt" => {
            let name = string(step, "name")?;
            let arguments = match step.get("arguments") {
                None | Some(Value::Null) => None,
                Some(Value::Object(arguments)) => Some(arguments.clone()),
                Some(_) => return Err(malformed(step, "\"arguments\" must be an object")),
            };
            let input = input_handler(step)?;
            connected(client)?.get_prompt(name, arguments, &input).await
        }
        "complete" => {
            let (Some(reference), Some(argument)) = (step.get("ref"), step.get("argument")) else {
                return Err(malformed(step, "it needs \"ref\" and \"argument\""));
            };
            let context = step.get("context").filter(|c| !c.is_null()).cloned();
            connected(client)?
                .complete(reference.clone(), argument.clone(), context)
                .await
        }
        "ping" => connected(client)?.ping().await.map(|()| json!({})),
        _ => {
            let level = string(step, "level")?;
            connected(client)?
                .set_logging_level(level)
                .await
                .map(|()| json!({}))
        }
    }
}

fn connected(client: Option<&Client>) -> Result<&Client, Error> {
    client.ok_or_else(not_connected)
}

fn string<'a>(step: &'a Value, member: &str) -> Result<&'a str, Error> {
    step.get(member)
        .and_then(Value::as_str)
        .ok_or_else(|| malformed(step, &format!("it needs a string {member:?}")))
}

fn malformed(step: &Value, why: &str) -> Error {
    Error::new(
        ErrorKind::UnsupportedOp,
        format!("this step is not of the contract's shape ({why}): {step}"),
    )
}

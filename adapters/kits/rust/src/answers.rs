//! What the plan says the client answers to server requests (CLIENTS.md, "What the server
//! starts"): the client capabilities `connect`'s `handlers` and the steps' `input` answers
//! imply, and the answer to give one request, with the client's own members (`delay_ms`,
//! `defaults`) taken out and applied.

use std::time::Duration;

use serde_json::{Map, Value, json};

/// The client capabilities to declare, and no others: `roots` (`listChanged: true`),
/// `sampling`, `elicitation` (`{"form":{}}` from 2025-11-25, or the modes a handler keyed by
/// mode names) for the handlers given, plus `{}` for each input method a step's `input`
/// answers. Handlers for methods no capability answers are returned in the second list.
pub fn declared_capabilities(
    handlers: &Map<String, Value>,
    plan: &[Value],
    protocol_version: &str,
) -> (Map<String, Value>, Vec<String>) {
    // Elicitation modes exist from 2025-11-25 on (dates compare as text).
    let modes = protocol_version >= "2025-11-25";
    let mut declared = Map::new();
    let mut ignored = Vec::new();
    let inputs = plan
        .iter()
        .filter_map(|step| step.get("input").and_then(Value::as_object))
        .flat_map(|answers| answers.keys());
    for method in inputs {
        if let Some(name) = capability(method) {
            declared.insert(name.into(), json!({}));
        }
    }
    for (method, handler) in handlers {
        let value = match method.as_str() {
            "roots/list" => json!({ "listChanged": true }),
            "elicitation/create" if modes => elicitation_modes(handler),
            "sampling/createMessage" if modes && answers_tool_use(handler) => {
                json!({ "tools": {} })
            }
            other if capability(other).is_some() => json!({}),
            other => {
                ignored.push(other.to_owned());
                continue;
            }
        };
        declared.insert(capability(method).unwrap_or_default().into(), value);
    }
    (declared, ignored)
}

/// Whether a sampling answer is a model using tools (`tool_use` content) or a rejection
/// (`rejected: true`, answered with the error -1): the `sampling_tools` feature.
pub fn uses_sampling_tools(answer: &Value) -> bool {
    answer.get("rejected") == Some(&Value::Bool(true)) || answers_tool_use(answer)
}

/// Whether a sampling answer holds `tool_use` content: only then does the client declare
/// `sampling.tools` (a handler that only rejects answers no tool use).
fn answers_tool_use(answer: &Value) -> bool {
    let blocks = match answer.get("content") {
        Some(Value::Array(items)) => items.iter().collect(),
        Some(block) => vec![block],
        None => Vec::new(),
    };
    blocks
        .iter()
        .any(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
}

/// Whether an elicitation handler's `url` answer says `browser: true`: the caller plays the
/// user's browser (the `url_consent` feature).
pub fn plays_browser(handler: &Value) -> bool {
    handler.pointer("/url/browser") == Some(&Value::Bool(true))
}

/// The URL to report as opened (`{"type":"url_opened","url":U}`) for the url-mode request
/// `params`: its full `url` when the handler plays the browser and the user accepted.
pub fn url_to_open(handler: &Value, params: &Value) -> Option<String> {
    let answer = handler.get("url").filter(|_| plays_browser(handler))?;
    let accepted = answer.get("action").and_then(Value::as_str) == Some("accept");
    let url_mode = params.get("mode").and_then(Value::as_str) == Some("url");
    let url = params.get("url").and_then(Value::as_str)?;
    (accepted && url_mode).then(|| url.to_owned())
}

fn capability(method: &str) -> Option<&'static str> {
    match method {
        "roots/list" => Some("roots"),
        "sampling/createMessage" => Some("sampling"),
        "elicitation/create" => Some("elicitation"),
        _ => None,
    }
}

/// `{"form":{}}` for a single answer; the modes named by a handler keyed by mode.
fn elicitation_modes(handler: &Value) -> Value {
    match handler.as_object() {
        Some(by_mode) if !by_mode.contains_key("action") => Value::Object(
            by_mode
                .keys()
                .filter(|mode| matches!(mode.as_str(), "form" | "url"))
                .map(|mode| (mode.clone(), json!({})))
                .collect(),
        ),
        _ => json!({ "form": {} }),
    }
}

/// One answer to a server request: the `result` to send, after `delay`.
#[derive(Clone, Debug, PartialEq)]
pub struct Answer {
    pub result: Value,
    /// `delay_ms` (taken out of the result: it is the client's own, never sent).
    pub delay: Option<Duration>,
}

impl Answer {
    /// An answer as the plan wrote it, with `delay_ms` taken out.
    pub fn from_plan(mut result: Value) -> Answer {
        let delay = result
            .as_object_mut()
            .and_then(|answer| answer.remove("delay_ms"))
            .and_then(|ms| ms.as_u64())
            .map(Duration::from_millis);
        Answer { result, delay }
    }

    /// An elicitation handler's answer in `mode` (`form` or `url`), for a request whose
    /// `requestedSchema` is `schema`. A handler keyed by mode answers the modes it names; a
    /// single answer serves form mode. `None`: the client did not declare that mode. With
    /// `"defaults": true`, an accepted form gets every member the schema gives a `default` and
    /// the content leaves out (a user accepting a pre-filled form).
    pub fn elicitation(handler: &Value, mode: &str, schema: Option<&Value>) -> Option<Answer> {
        let mut answer = match handler.as_object() {
            Some(by_mode) if !by_mode.contains_key("action") => by_mode.get(mode)?.clone(),
            _ if mode == "form" => handler.clone(),
            _ => return None,
        };
        if let Some(object) = answer.as_object_mut() {
            let fill = object.remove("defaults") == Some(Value::Bool(true));
            object.remove("browser");
            let accepted = object.get("action").and_then(Value::as_str) == Some("accept");
            let properties = schema
                .and_then(|s| s.get("properties"))
                .and_then(Value::as_object);
            if let (true, true, Some(properties)) = (fill, accepted, properties) {
                let content = object.entry("content").or_insert_with(|| json!({}));
                if let Some(content) = content.as_object_mut() {
                    for (name, property) in properties {
                        if let Some(default) = property.get("default") {
                            content
                                .entry(name.clone())
                                .or_insert_with(|| default.clone());
                        }
                    }
                }
            }
        }
        Some(Answer::from_plan(answer))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sampling_tools_and_url_consent() {
        let tools = json!({"role":"assistant","content":[{"type":"tool_use","id":"c","name":"w","input":{}}]});
        let handlers = json!({"sampling/createMessage": tools});
        let (declared, _) = declared_capabilities(handlers.as_object().unwrap(), &[], "2025-11-25");
        assert_eq!(Value::Object(declared), json!({"sampling":{"tools":{}}}));
        let (old, _) = declared_capabilities(handlers.as_object().unwrap(), &[], "2025-06-18");
        assert_eq!(Value::Object(old), json!({"sampling":{}}));
        assert!(uses_sampling_tools(&json!({"rejected": true})));
        // A handler that only rejects answers no tool use: no `sampling.tools`.
        let rejects = json!({"sampling/createMessage": {"rejected": true}});
        let (declared, _) = declared_capabilities(rejects.as_object().unwrap(), &[], "2025-11-25");
        assert_eq!(Value::Object(declared), json!({"sampling":{}}));
        assert!(!uses_sampling_tools(
            &json!({"content": {"type": "text", "text": "t"}})
        ));
        let handler = json!({"url": {"action": "accept", "browser": true}});
        let params = json!({"mode": "url", "url": "https://x.example/a?b#c", "message": "m"});
        assert_eq!(
            url_to_open(&handler, &params).as_deref(),
            Some("https://x.example/a?b#c")
        );
        let declined = json!({"url": {"action": "decline", "browser": true}});
        assert_eq!(url_to_open(&declined, &params), None);
        assert_eq!(
            url_to_open(&json!({"url": {"action": "accept"}}), &params),
            None
        );
        let answer = Answer::elicitation(&handler, "url", None).unwrap();
        assert_eq!(answer.result, json!({"action": "accept"}));
    }

    #[test]
    fn capabilities_follow_the_handlers_and_inputs() {
        let handlers = json!({"roots/list":{"roots":[]},"elicitation/create":{"form":{"action":"decline"},
            "url":{"action":"accept"}},"tasks/get":{}});
        let plan = [json!({"op":"call_tool","name":"x","input":{"sampling/createMessage":{}}})];
        let (declared, ignored) =
            declared_capabilities(handlers.as_object().unwrap(), &plan, "2025-11-25");
        assert_eq!(
            Value::Object(declared),
            json!({"sampling":{},"roots":{"listChanged":true},"elicitation":{"form":{},"url":{}}})
        );
        assert_eq!(ignored, ["tasks/get"]);
        let single = json!({"elicitation/create":{"action":"accept"}});
        let (old, _) = declared_capabilities(single.as_object().unwrap(), &[], "2025-06-18");
        assert_eq!(Value::Object(old), json!({"elicitation":{}}));
    }

    #[test]
    fn answers_take_out_the_clients_own_members() {
        let answer = Answer::from_plan(json!({"roots":[],"delay_ms":250}));
        assert_eq!(
            answer,
            Answer {
                result: json!({"roots":[]}),
                delay: Some(Duration::from_millis(250))
            }
        );
        let handler = json!({"action":"accept","content":{"name":"Ada"},"defaults":true});
        let schema = json!({"properties":{"name":{"default":"Bob"},"age":{"default":36},"x":{}}});
        let form = Answer::elicitation(&handler, "form", Some(&schema)).unwrap();
        assert_eq!(
            form.result,
            json!({"action":"accept","content":{"name":"Ada","age":36}})
        );
        assert_eq!(Answer::elicitation(&handler, "url", None), None);
        let by_mode = json!({"url":{"action":"accept"}});
        assert_eq!(
            Answer::elicitation(&by_mode, "url", None).unwrap().result,
            json!({"action":"accept"})
        );
        assert_eq!(Answer::elicitation(&by_mode, "form", None), None);
    }
}

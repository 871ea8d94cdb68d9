//! Sampling with tools (2025-11-25 on): whether an answer uses tools, and the message rules
//! a client enforces on the `sampling/createMessage` requests it receives.
//!
//! The caller's answer says what the client's model can do: an answer whose `content` holds a
//! `tool_use` block is a model that answers tool use, so the client declares `sampling.tools`.
//! A request is refused with -32602 (the spec's Error Handling) when a user message mixes
//! `tool_result` blocks with other content, or when an assistant message's `tool_use` blocks
//! are not answered, each by its id, by the user message right after it.

use std::collections::BTreeSet;

use serde_json::Value;

/// What breaks the tool rules in a request's `messages`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ToolProblem {
    /// A user message mixes `tool_result` with other content.
    Mixed,
    /// A `tool_use` has no `tool_result` in the user message right after it.
    Unanswered,
}

/// A message's content blocks: `content` is one block or an array of them.
fn blocks(message: &Value) -> Vec<&Value> {
    match message.get("content") {
        Some(Value::Array(items)) => items.iter().collect(),
        Some(block @ Value::Object(_)) => vec![block],
        _ => Vec::new(),
    }
}

fn kind(block: &Value) -> Option<&str> {
    block.get("type").and_then(Value::as_str)
}

/// Whether an answer (a `CreateMessageResult`) uses tools: a `tool_use` block in its content.
pub(crate) fn uses_tools(answer: &Value) -> bool {
    blocks(answer).iter().any(|b| kind(b) == Some("tool_use"))
}

/// The first rule `params.messages` breaks, with a message for the error; `None` when it
/// keeps them all (or has no tool content at all).
pub(crate) fn problem(params: &Value) -> Option<(ToolProblem, String)> {
    let messages: Vec<&Value> = match params.get("messages") {
        Some(Value::Array(m)) => m.iter().collect(),
        _ => return None,
    };
    let role = |m: &Value| m.get("role").and_then(Value::as_str).map(str::to_owned);
    for (i, message) in messages.iter().enumerate() {
        let content = blocks(message);
        let results = content.iter().filter(|b| kind(b) == Some("tool_result"));
        if role(message).as_deref() == Some("user")
            && results.count() > 0
            && content.iter().any(|b| kind(b) != Some("tool_result"))
        {
            return Some((
                ToolProblem::Mixed,
                format!("Tool results mixed with other content in messages[{i}]"),
            ));
        }
    }
    for (i, message) in messages.iter().enumerate() {
        let uses: BTreeSet<&str> = blocks(message)
            .into_iter()
            .filter(|b| kind(b) == Some("tool_use"))
            .filter_map(|b| b.get("id").and_then(Value::as_str))
            .collect();
        if uses.is_empty() {
            continue;
        }
        let answered: BTreeSet<&str> = match messages.get(i + 1) {
            Some(next) if role(next).as_deref() == Some("user") => blocks(next)
                .into_iter()
                .filter(|b| kind(b) == Some("tool_result"))
                .filter_map(|b| b.get("toolUseId").and_then(Value::as_str))
                .collect(),
            _ => BTreeSet::new(),
        };
        if let Some(missing) = uses.iter().find(|id| !answered.contains(*id)) {
            return Some((
                ToolProblem::Unanswered,
                format!(
                    "Tool result missing in request: no tool_result for {missing:?} of messages[{i}]"
                ),
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn use_of(ids: &[&str]) -> Value {
        let content: Vec<Value> = ids
            .iter()
            .map(|id| json!({"type": "tool_use", "id": id, "name": "w", "input": {}}))
            .collect();
        json!({"role": "assistant", "content": content})
    }

    fn results(ids: &[&str]) -> Value {
        let content: Vec<Value> = ids
            .iter()
            .map(|id| json!({"type": "tool_result", "toolUseId": id, "content": []}))
            .collect();
        json!({"role": "user", "content": content})
    }

    #[test]
    fn paired_and_plain_messages_pass() {
        let q = json!({"role": "user", "content": {"type": "text", "text": "q"}});
        let ok = json!({"messages": [q, use_of(&["a", "b"]), results(&["b", "a"])]});
        assert_eq!(problem(&ok), None);
        assert_eq!(problem(&json!({"messages": [q]})), None);
        let single = json!({"role": "user", "content": {"type": "tool_result", "toolUseId": "a", "content": []}});
        assert_eq!(
            problem(&json!({"messages": [q, use_of(&["a"]), single]})),
            None
        );
    }

    #[test]
    fn a_missing_or_late_result_and_mixed_content_are_problems() {
        let q = json!({"role": "user", "content": {"type": "text", "text": "q"}});
        let missing = json!({"messages": [q, use_of(&["a", "b"]), results(&["a"])]});
        assert_eq!(problem(&missing).unwrap().0, ToolProblem::Unanswered);
        let last = json!({"messages": [q, use_of(&["a"])]});
        assert_eq!(problem(&last).unwrap().0, ToolProblem::Unanswered);
        let late = json!({"messages": [q, use_of(&["a"]), q, results(&["a"])]});
        assert_eq!(problem(&late).unwrap().0, ToolProblem::Unanswered);
        let mixed_msg = json!({"role": "user", "content": [
            {"type": "text", "text": "here"},
            {"type": "tool_result", "toolUseId": "a", "content": []}]});
        let mixed = json!({"messages": [q, use_of(&["a"]), mixed_msg]});
        assert_eq!(problem(&mixed).unwrap().0, ToolProblem::Mixed);
    }

    #[test]
    fn tool_use_content_means_tools() {
        assert!(uses_tools(
            &json!({"content": [{"type": "tool_use", "id": "a"}]})
        ));
        assert!(uses_tools(
            &json!({"content": {"type": "tool_use", "id": "a"}})
        ));
        assert!(!uses_tools(
            &json!({"content": {"type": "text", "text": "a"}})
        ));
    }
}

//! The rules for `tools/call` results, as pure functions (listings are in
//! [`crate::listing`], content blocks in [`crate::content`]).
//!
//! The client loop only sends requests; what it must check or reshape on the way back
//! (`isError` versus `structuredContent`, the text blocks) lives here where it can be
//! unit-tested with plain JSON.

use serde_json::Value;

use crate::error::{Error, ErrorKind};

/// What a successful `tools/call` returned.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolOutput {
    /// The result's `structuredContent`, as received.
    Structured(Value),
    /// The `text` of the result's text blocks, in order (other blocks left out).
    Text(Vec<String>),
}

/// A successful `tools/call`: the caller's answer and every content block as seen.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    /// `structuredContent`, else the text blocks' text.
    pub output: ToolOutput,
    /// Every block of the result's `content`, as seen (binary data as its length and
    /// SHA-256, annotations kept), in order.
    pub content: Vec<Value>,
}

/// Maps a `tools/call` result to the caller's answer: `isError` wins, then `structuredContent`,
/// then the text blocks.
pub(crate) fn call_output(result: Value) -> Result<ToolOutput, Error> {
    if !result.is_object() {
        return Err(Error::invalid("the tools/call result is not an object"));
    }
    let is_error = result.get("isError").and_then(Value::as_bool) == Some(true);
    if is_error {
        let text = text_blocks(&result).unwrap_or_default();
        let message = if text.is_empty() {
            "the tool reported an error without a text message".to_owned()
        } else {
            text.join("\n")
        };
        return Err(Error::new(ErrorKind::ToolError, message));
    }
    match result.get("structuredContent") {
        Some(structured) if !structured.is_null() => Ok(ToolOutput::Structured(structured.clone())),
        _ => text_blocks(&result).map(ToolOutput::Text),
    }
}

/// The `text` of every text block of `content`, in order.
fn text_blocks(result: &Value) -> Result<Vec<String>, Error> {
    let Some(blocks) = result.get("content").and_then(Value::as_array) else {
        return Err(Error::invalid(
            "the tools/call result has neither structuredContent nor a \"content\" array",
        ));
    };
    let mut texts = Vec::new();
    for block in blocks {
        if block.get("type").and_then(Value::as_str) != Some("text") {
            continue;
        }
        match block.get("text").and_then(Value::as_str) {
            Some(text) => texts.push(text.to_owned()),
            None => {
                return Err(Error::invalid(format!(
                    "a text block has no string \"text\": {block}"
                )));
            }
        }
    }
    Ok(texts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn is_error_wins_over_structured_content() {
        let r = json!({"isError":true,"structuredContent":{"a":1},
                       "content":[{"type":"text","text":"boom"},{"type":"text","text":"again"}]});
        let e = call_output(r).unwrap_err();
        assert_eq!(e.kind, ErrorKind::ToolError);
        assert_eq!(e.message, "boom\nagain");
        let bare = call_output(json!({"isError":true})).unwrap_err();
        assert_eq!(bare.kind, ErrorKind::ToolError);
    }

    #[test]
    fn structured_content_then_text_blocks_in_order() {
        let r = json!({"structuredContent":{"n":2},"content":[{"type":"text","text":"2"}]});
        assert_eq!(
            call_output(r).unwrap(),
            ToolOutput::Structured(json!({"n":2}))
        );
        let r = json!({"structuredContent":null,"isError":false,"content":[
            {"type":"text","text":"one"},{"type":"image","data":"AA==","mimeType":"image/png"},
            {"type":"text","text":"two"}]});
        assert_eq!(
            call_output(r).unwrap(),
            ToolOutput::Text(vec!["one".into(), "two".into()])
        );
        assert_eq!(
            call_output(json!({"content":[]})).unwrap(),
            ToolOutput::Text(vec![])
        );
    }

    #[test]
    fn shapeless_results_are_invalid() {
        for r in [json!("x"), json!({}), json!({"content":[{"type":"text"}]})] {
            let e = call_output(r.clone()).unwrap_err();
            assert_eq!(e.kind, ErrorKind::InvalidResponse, "{r}");
        }
    }
}

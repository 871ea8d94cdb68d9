//! The rules for `tools/list` pages and `tools/call` results, as pure functions.
//!
//! The client loop only sends requests; everything it must check or reshape on the way back
//! (repeated cursors, duplicate names, `isError` versus `structuredContent`) lives here where
//! it can be unit-tested with plain JSON.

use std::collections::HashSet;

use serde_json::Value;

use crate::defects::Defects;
use crate::error::{Error, ErrorKind};

/// The pages a listing fetches at most under the `no-cursor-check` defect.
pub(crate) const NAIVE_PAGE_LIMIT: usize = 50;

/// What a successful `tools/call` returned.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolOutput {
    /// The result's `structuredContent`, as received.
    Structured(Value),
    /// The `text` of the result's text blocks, in order (other blocks left out).
    Text(Vec<String>),
}

/// The state of one `tools/list` listing across its pages.
pub(crate) struct Listing {
    sent_cursors: HashSet<String>,
    names: HashSet<String>,
    tools: Vec<Value>,
    check_cursors: bool,
    check_names: bool,
}

impl Listing {
    pub(crate) fn new(defects: &Defects) -> Self {
        Listing {
            sent_cursors: HashSet::new(),
            names: HashSet::new(),
            tools: Vec::new(),
            check_cursors: !defects.no_cursor_check,
            check_names: !defects.allow_duplicate_names,
        }
    }

    /// Takes in one page; returns its `nextCursor` (`None` when absent or null).
    pub(crate) fn add_page(&mut self, result: Value) -> Result<Option<String>, Error> {
        let Value::Object(mut page) = result else {
            return Err(Error::invalid("the tools/list result is not an object"));
        };
        let next = match page.remove("nextCursor") {
            None | Some(Value::Null) => None,
            Some(Value::String(cursor)) => Some(cursor),
            Some(other) => {
                return Err(Error::invalid(format!(
                    "nextCursor is not a string: {other}"
                )));
            }
        };
        let Some(Value::Array(tools)) = page.remove("tools") else {
            return Err(Error::invalid(
                "the tools/list result has no \"tools\" array",
            ));
        };
        for tool in tools {
            let Some(name) = tool.get("name").and_then(Value::as_str) else {
                return Err(Error::invalid(format!(
                    "a tool has no string \"name\": {tool}"
                )));
            };
            if !self.names.insert(name.to_owned()) && self.check_names {
                return Err(Error::new(
                    ErrorKind::DuplicateToolName,
                    format!("the server listed the tool name {name:?} twice"),
                ));
            }
            self.tools.push(tool);
        }
        Ok(next)
    }

    /// Records that `cursor` is about to be sent; a cursor sent before is `repeated_cursor`.
    pub(crate) fn use_cursor(&mut self, cursor: &str) -> Result<(), Error> {
        if !self.sent_cursors.insert(cursor.to_owned()) && self.check_cursors {
            return Err(Error::new(
                ErrorKind::RepeatedCursor,
                format!("the server returned the cursor {cursor:?} again in the same listing"),
            ));
        }
        Ok(())
    }

    /// The tools gathered so far, as received.
    pub(crate) fn into_tools(self) -> Vec<Value> {
        self.tools
    }
}

/// Maps a `tools/call` result to the caller's answer: `isError` wins, then `structuredContent`,
/// then the text blocks.
pub(crate) fn call_output(result: Value, defects: &Defects) -> Result<ToolOutput, Error> {
    if !result.is_object() {
        return Err(Error::invalid("the tools/call result is not an object"));
    }
    let is_error = result.get("isError").and_then(Value::as_bool) == Some(true);
    if is_error && !defects.ignore_is_error {
        let text = text_blocks(&result).unwrap_or_default();
        let message = if text.is_empty() {
            "the tool reported an error without a text message".to_owned()
        } else {
            text.join("\n")
        };
        return Err(Error::new(ErrorKind::ToolError, message));
    }
    match result.get("structuredContent") {
        Some(structured) if !structured.is_null() && !defects.text_only => {
            Ok(ToolOutput::Structured(structured.clone()))
        }
        _ if defects.join_text => {
            text_blocks(&result).map(|t| ToolOutput::Text(vec![t.join("\n")]))
        }
        _ => text_blocks(&result).map(ToolOutput::Text),
    }
}

/// A tool reduced to `name`, `description` and `inputSchema` (the `normalize-tools` defect).
pub(crate) fn normalized(tool: Value) -> Value {
    let keep = ["name", "description", "inputSchema"];
    match tool {
        Value::Object(map) => map
            .into_iter()
            .filter(|(k, _)| keep.contains(&k.as_str()))
            .collect(),
        other => other,
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

    fn defects(f: impl FnOnce(&mut Defects)) -> Defects {
        let mut d = Defects::default();
        f(&mut d);
        d
    }

    #[test]
    fn pages_pass_tools_through_and_return_the_cursor() {
        let mut l = Listing::new(&Defects::default());
        let tool = json!({"name":"a","inputSchema":{"type":"object"},"x-extra":[1]});
        let next = l
            .add_page(json!({"tools":[tool.clone()],"nextCursor":""}))
            .unwrap();
        assert_eq!(next.as_deref(), Some(""), "an empty string is a cursor");
        let next = l.add_page(json!({"tools":[],"nextCursor":null})).unwrap();
        assert_eq!(next, None);
        assert_eq!(l.into_tools(), [tool]);
    }

    #[test]
    fn malformed_pages_are_invalid() {
        for page in [
            json!([]),
            json!({}),
            json!({"tools":{}}),
            json!({"tools":[{"title":"no name"}]}),
            json!({"tools":[{"name":3}]}),
            json!({"tools":[], "nextCursor": 5}),
        ] {
            let e = Listing::new(&Defects::default())
                .add_page(page.clone())
                .unwrap_err();
            assert_eq!(e.kind, ErrorKind::InvalidResponse, "{page}");
        }
    }

    #[test]
    fn duplicate_names_are_caught_within_and_across_pages() {
        let mut l = Listing::new(&Defects::default());
        let e = l
            .add_page(json!({"tools":[{"name":"a"},{"name":"a"}]}))
            .unwrap_err();
        assert_eq!(e.kind, ErrorKind::DuplicateToolName);

        let mut l = Listing::new(&Defects::default());
        l.add_page(json!({"tools":[{"name":"a"}]})).unwrap();
        let e = l.add_page(json!({"tools":[{"name":"a"}]})).unwrap_err();
        assert_eq!(e.kind, ErrorKind::DuplicateToolName);

        let mut l = Listing::new(&defects(|d| d.allow_duplicate_names = true));
        l.add_page(json!({"tools":[{"name":"a"},{"name":"a"}]}))
            .unwrap();
        assert_eq!(l.into_tools().len(), 2);
    }

    #[test]
    fn any_cursor_sent_before_is_repeated() {
        let mut l = Listing::new(&Defects::default());
        l.use_cursor("p2").unwrap();
        l.use_cursor("p3").unwrap();
        assert_eq!(
            l.use_cursor("p2").unwrap_err().kind,
            ErrorKind::RepeatedCursor
        );
        let mut l = Listing::new(&defects(|d| d.no_cursor_check = true));
        l.use_cursor("p2").unwrap();
        l.use_cursor("p2").unwrap();
    }

    #[test]
    fn is_error_wins_over_structured_content() {
        let r = json!({"isError":true,"structuredContent":{"a":1},
                       "content":[{"type":"text","text":"boom"},{"type":"text","text":"again"}]});
        let e = call_output(r.clone(), &Defects::default()).unwrap_err();
        assert_eq!(e.kind, ErrorKind::ToolError);
        assert_eq!(e.message, "boom\nagain");
        let ok = call_output(r, &defects(|d| d.ignore_is_error = true)).unwrap();
        assert_eq!(ok, ToolOutput::Structured(json!({"a":1})));
        let bare = call_output(json!({"isError":true}), &Defects::default()).unwrap_err();
        assert_eq!(bare.kind, ErrorKind::ToolError);
    }

    #[test]
    fn structured_content_then_text_blocks_in_order() {
        let r = json!({"structuredContent":{"n":2},"content":[{"type":"text","text":"2"}]});
        assert_eq!(
            call_output(r.clone(), &Defects::default()).unwrap(),
            ToolOutput::Structured(json!({"n":2}))
        );
        assert_eq!(
            call_output(r, &defects(|d| d.text_only = true)).unwrap(),
            ToolOutput::Text(vec!["2".into()])
        );
        let r = json!({"structuredContent":null,"isError":false,"content":[
            {"type":"text","text":"one"},{"type":"image","data":"AA==","mimeType":"image/png"},
            {"type":"text","text":"two"}]});
        assert_eq!(
            call_output(r, &Defects::default()).unwrap(),
            ToolOutput::Text(vec!["one".into(), "two".into()])
        );
        assert_eq!(
            call_output(json!({"content":[]}), &Defects::default()).unwrap(),
            ToolOutput::Text(vec![])
        );
    }

    #[test]
    fn shapeless_results_are_invalid() {
        for r in [json!("x"), json!({}), json!({"content":[{"type":"text"}]})] {
            let e = call_output(r.clone(), &Defects::default()).unwrap_err();
            assert_eq!(e.kind, ErrorKind::InvalidResponse, "{r}");
        }
    }
}

//! The rules for `tools/list` pages and `tools/call` results, as pure functions.
//!
//! The client loop only sends requests; everything it must check or reshape on the way back
//! (repeated cursors, duplicate names, `isError` versus `structuredContent`) lives here where
//! it can be unit-tested with plain JSON.

use std::collections::HashSet;

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

/// The rules a listing enforces; [`ListingRules::SPEC`] are the boundary's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ListingRules {
    /// A cursor already sent in the same listing is `repeated_cursor`.
    pub(crate) reject_repeated_cursors: bool,
    /// A tool name already listed in the same listing is `duplicate_tool_name`.
    pub(crate) reject_duplicate_names: bool,
    /// The most pages one listing fetches.
    pub(crate) max_pages: usize,
    /// An empty-string `nextCursor` ends the listing (wrong: only an absent or null one does).
    pub(crate) empty_cursor_ends: bool,
}

impl ListingRules {
    /// Every rule on; pages are followed until `nextCursor` is absent (a server that never
    /// stops repeats a cursor sooner or later).
    pub(crate) const SPEC: ListingRules = ListingRules {
        reject_repeated_cursors: true,
        reject_duplicate_names: true,
        max_pages: usize::MAX,
        empty_cursor_ends: false,
    };
}

/// The state of one `tools/list` listing across its pages.
pub(crate) struct Listing {
    rules: ListingRules,
    pages: usize,
    sent_cursors: HashSet<String>,
    names: HashSet<String>,
    tools: Vec<Value>,
}

impl Listing {
    pub(crate) fn new(rules: ListingRules) -> Self {
        Listing {
            rules,
            pages: 0,
            sent_cursors: HashSet::new(),
            names: HashSet::new(),
            tools: Vec::new(),
        }
    }

    /// Takes in one page; returns the cursor to send for the next page, or `None` when the
    /// listing is complete.
    pub(crate) fn take_page(&mut self, result: Value) -> Result<Option<String>, Error> {
        self.pages += 1;
        match self.add_page(result)? {
            Some(next) if next.is_empty() && self.rules.empty_cursor_ends => Ok(None),
            Some(next) if self.pages < self.rules.max_pages => {
                self.use_cursor(&next)?;
                Ok(Some(next))
            }
            _ => Ok(None),
        }
    }

    /// Takes in one page; returns its `nextCursor` (`None` when absent or null).
    fn add_page(&mut self, result: Value) -> Result<Option<String>, Error> {
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
            if !self.names.insert(name.to_owned()) && self.rules.reject_duplicate_names {
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
    fn use_cursor(&mut self, cursor: &str) -> Result<(), Error> {
        if !self.sent_cursors.insert(cursor.to_owned()) && self.rules.reject_repeated_cursors {
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
    fn pages_pass_tools_through_and_return_the_cursor() {
        let mut l = Listing::new(ListingRules::SPEC);
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
            let e = Listing::new(ListingRules::SPEC)
                .add_page(page.clone())
                .unwrap_err();
            assert_eq!(e.kind, ErrorKind::InvalidResponse, "{page}");
        }
    }

    #[test]
    fn duplicate_names_are_caught_within_and_across_pages() {
        let mut l = Listing::new(ListingRules::SPEC);
        let e = l
            .add_page(json!({"tools":[{"name":"a"},{"name":"a"}]}))
            .unwrap_err();
        assert_eq!(e.kind, ErrorKind::DuplicateToolName);

        let mut l = Listing::new(ListingRules::SPEC);
        l.add_page(json!({"tools":[{"name":"a"}]})).unwrap();
        let e = l.add_page(json!({"tools":[{"name":"a"}]})).unwrap_err();
        assert_eq!(e.kind, ErrorKind::DuplicateToolName);

        let lax = ListingRules {
            reject_duplicate_names: false,
            ..ListingRules::SPEC
        };
        let mut l = Listing::new(lax);
        l.add_page(json!({"tools":[{"name":"a"},{"name":"a"}]}))
            .unwrap();
        assert_eq!(l.into_tools().len(), 2);
    }

    #[test]
    fn any_cursor_sent_before_is_repeated() {
        let mut l = Listing::new(ListingRules::SPEC);
        l.use_cursor("p2").unwrap();
        l.use_cursor("p3").unwrap();
        assert_eq!(
            l.use_cursor("p2").unwrap_err().kind,
            ErrorKind::RepeatedCursor
        );
        let lax = ListingRules {
            reject_repeated_cursors: false,
            ..ListingRules::SPEC
        };
        let mut l = Listing::new(lax);
        l.use_cursor("p2").unwrap();
        l.use_cursor("p2").unwrap();
    }

    #[test]
    fn take_page_follows_cursors_up_to_the_page_limit() {
        let page = |next: &str| json!({"tools":[], "nextCursor": next});
        let mut l = Listing::new(ListingRules::SPEC);
        assert_eq!(l.take_page(page("a")).unwrap().as_deref(), Some("a"));
        assert_eq!(l.take_page(json!({"tools":[]})).unwrap(), None);
        let mut l = Listing::new(ListingRules::SPEC);
        l.take_page(page("a")).unwrap();
        let e = l.take_page(page("a")).unwrap_err();
        assert_eq!(e.kind, ErrorKind::RepeatedCursor);
        let one = ListingRules {
            max_pages: 1,
            ..ListingRules::SPEC
        };
        assert_eq!(Listing::new(one).take_page(page("a")).unwrap(), None);
    }

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

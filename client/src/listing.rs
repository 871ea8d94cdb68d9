//! The rules every paginated listing follows (`tools/list`, `resources/list`,
//! `resources/templates/list`, `prompts/list`), as pure functions over the pages.
//!
//! The client loop only sends requests; everything it must check on the way back (repeated
//! cursors, entries listed twice, pages that never end) lives here where it can be unit-tested
//! with plain JSON. One [`Listing`] serves every kind; a [`ListKind`] names what differs.

use std::collections::HashSet;

use serde_json::Value;

use crate::error::{Error, ErrorKind};

/// What one kind of listing is: its method, the array its pages carry, the member that keys
/// an entry, and the error kind of an entry listed twice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ListKind {
    /// The JSON-RPC method of every page request.
    pub(crate) method: &'static str,
    /// The member of a page that holds its entries.
    pub(crate) entries: &'static str,
    /// The member that identifies an entry (a second entry with the same value is a duplicate).
    pub(crate) key: &'static str,
    /// The error kind of a duplicate.
    pub(crate) duplicate: ErrorKind,
}

impl ListKind {
    /// `tools/list`: tools by `name`.
    pub(crate) const TOOLS: ListKind = ListKind {
        method: "tools/list",
        entries: "tools",
        key: "name",
        duplicate: ErrorKind::DuplicateToolName,
    };
    /// `resources/list`: resources by `uri`.
    pub(crate) const RESOURCES: ListKind = ListKind {
        method: "resources/list",
        entries: "resources",
        key: "uri",
        duplicate: ErrorKind::DuplicateName,
    };
    /// `resources/templates/list`: resource templates by `uriTemplate`.
    pub(crate) const RESOURCE_TEMPLATES: ListKind = ListKind {
        method: "resources/templates/list",
        entries: "resourceTemplates",
        key: "uriTemplate",
        duplicate: ErrorKind::DuplicateName,
    };
    /// `prompts/list`: prompts by `name`.
    pub(crate) const PROMPTS: ListKind = ListKind {
        method: "prompts/list",
        entries: "prompts",
        key: "name",
        duplicate: ErrorKind::DuplicateName,
    };

    /// `tasks/list` (2025-11-25): tasks by `taskId`. The modern cache never sees it: the
    /// 2026-07-28 tasks extension has no `tasks/list`.
    pub(crate) const TASKS: ListKind = ListKind {
        method: "tasks/list",
        entries: "tasks",
        key: "taskId",
        duplicate: ErrorKind::DuplicateName,
    };

    /// Whether `method` is one of the listings.
    pub(crate) fn is_listing(method: &str) -> bool {
        [
            Self::TOOLS,
            Self::RESOURCES,
            Self::RESOURCE_TEMPLATES,
            Self::PROMPTS,
            Self::TASKS,
        ]
        .iter()
        .any(|kind| kind.method == method)
    }
}

/// The most pages one listing fetches before it fails: a server whose pages never end (fresh
/// cursors forever) must not hold the caller until its deadline.
pub(crate) const PAGE_CAP: usize = 1000;

/// The rules a listing enforces; [`ListingRules::SPEC`] are the boundary's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ListingRules {
    /// A cursor already sent in the same listing is `repeated_cursor`.
    pub(crate) reject_repeated_cursors: bool,
    /// An entry key already listed in the same listing is a duplicate.
    pub(crate) reject_duplicate_names: bool,
    /// The most pages one listing fetches.
    pub(crate) max_pages: usize,
    /// At `max_pages` with a cursor still to follow, return what was gathered as a success
    /// (wrong for the spec's cap: a shorter list must never pass for the whole one).
    pub(crate) truncate_at_max: bool,
    /// An empty-string `nextCursor` ends the listing (wrong: only an absent or null one does).
    pub(crate) empty_cursor_ends: bool,
    /// A `null` `nextCursor` is sent back as the string `"null"` (wrong: it ends the listing).
    pub(crate) null_cursor_followed: bool,
    /// A page shorter than the first ends the listing, as if pages had a fixed size (wrong:
    /// only the cursor tells whether more follow).
    pub(crate) short_page_ends: bool,
}

impl ListingRules {
    /// Every rule on; pages are followed until `nextCursor` is absent or null, and at most
    /// [`PAGE_CAP`] of them before the listing fails.
    pub(crate) const SPEC: ListingRules = ListingRules {
        reject_repeated_cursors: true,
        reject_duplicate_names: true,
        max_pages: PAGE_CAP,
        truncate_at_max: false,
        empty_cursor_ends: false,
        null_cursor_followed: false,
        short_page_ends: false,
    };
}

/// The state of one listing across its pages.
pub(crate) struct Listing {
    kind: ListKind,
    rules: ListingRules,
    pages: usize,
    /// How many entries the first page held.
    first_page_len: usize,
    sent_cursors: HashSet<String>,
    keys: HashSet<String>,
    entries: Vec<Value>,
}

impl Listing {
    pub(crate) fn new(kind: ListKind, rules: ListingRules) -> Self {
        Listing {
            kind,
            rules,
            pages: 0,
            first_page_len: 0,
            sent_cursors: HashSet::new(),
            keys: HashSet::new(),
            entries: Vec::new(),
        }
    }

    /// Takes in one page; returns the cursor to send for the next page, or `None` when the
    /// listing is complete.
    pub(crate) fn take_page(&mut self, result: Value) -> Result<Option<String>, Error> {
        self.pages += 1;
        let before = self.entries.len();
        let Some(next) = self.add_page(result)? else {
            return Ok(None);
        };
        let len = self.entries.len() - before;
        if self.pages == 1 {
            self.first_page_len = len;
        } else if self.rules.short_page_ends && len < self.first_page_len {
            return Ok(None);
        }
        if next.is_empty() && self.rules.empty_cursor_ends {
            return Ok(None);
        }
        if self.pages >= self.rules.max_pages {
            if self.rules.truncate_at_max {
                return Ok(None);
            }
            return Err(Error::invalid(format!(
                "{} gave a next cursor after {} pages, the most this client follows in one \
                 listing (page cap {}); the pages do not end",
                self.kind.method, self.pages, self.rules.max_pages
            )));
        }
        self.use_cursor(&next)?;
        Ok(Some(next))
    }

    /// Takes in one page; returns its `nextCursor` (`None` when absent or null).
    fn add_page(&mut self, result: Value) -> Result<Option<String>, Error> {
        let ListKind {
            method,
            entries: member,
            key,
            duplicate,
        } = self.kind;
        let Value::Object(mut page) = result else {
            return Err(Error::invalid(format!(
                "the {method} result is not an object"
            )));
        };
        let next = match page.remove("nextCursor") {
            Some(Value::Null) if self.rules.null_cursor_followed => Some("null".to_string()),
            None | Some(Value::Null) => None,
            Some(Value::String(cursor)) => Some(cursor),
            Some(other) => {
                return Err(Error::invalid(format!(
                    "nextCursor is not a string: {other}"
                )));
            }
        };
        let Some(Value::Array(entries)) = page.remove(member) else {
            return Err(Error::invalid(format!(
                "the {method} result has no {member:?} array"
            )));
        };
        for entry in entries {
            let Some(id) = entry.get(key).and_then(Value::as_str) else {
                return Err(Error::invalid(format!(
                    "an entry of {member:?} has no string {key:?}: {entry}"
                )));
            };
            if !self.keys.insert(id.to_owned()) && self.rules.reject_duplicate_names {
                return Err(Error::new(
                    duplicate,
                    format!("the server listed the {key} {id:?} twice in {method}"),
                ));
            }
            self.entries.push(entry);
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

    /// The entries gathered so far, as received.
    pub(crate) fn into_entries(self) -> Vec<Value> {
        self.entries
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tools() -> Listing {
        Listing::new(ListKind::TOOLS, ListingRules::SPEC)
    }

    #[test]
    fn pages_pass_entries_through_and_return_the_cursor() {
        let mut l = tools();
        let tool = json!({"name":"a","inputSchema":{"type":"object"},"x-extra":[1]});
        let next = l
            .add_page(json!({"tools":[tool.clone()],"nextCursor":""}))
            .unwrap();
        assert_eq!(next.as_deref(), Some(""), "an empty string is a cursor");
        let next = l.add_page(json!({"tools":[],"nextCursor":null})).unwrap();
        assert_eq!(next, None);
        assert_eq!(l.into_entries(), [tool]);
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
            let e = tools().add_page(page.clone()).unwrap_err();
            assert_eq!(e.kind, ErrorKind::InvalidResponse, "{page}");
        }
        let e = Listing::new(ListKind::RESOURCES, ListingRules::SPEC)
            .add_page(json!({"resources":[{"name":"no uri"}]}))
            .unwrap_err();
        assert_eq!(e.kind, ErrorKind::InvalidResponse);
        assert!(e.message.contains("\"uri\""), "{}", e.message);
    }

    #[test]
    fn duplicate_names_are_caught_within_and_across_pages() {
        let mut l = tools();
        let e = l
            .add_page(json!({"tools":[{"name":"a"},{"name":"a"}]}))
            .unwrap_err();
        assert_eq!(e.kind, ErrorKind::DuplicateToolName);

        let mut l = tools();
        l.add_page(json!({"tools":[{"name":"a"}]})).unwrap();
        let e = l.add_page(json!({"tools":[{"name":"a"}]})).unwrap_err();
        assert_eq!(e.kind, ErrorKind::DuplicateToolName);

        let lax = ListingRules {
            reject_duplicate_names: false,
            ..ListingRules::SPEC
        };
        let mut l = Listing::new(ListKind::TOOLS, lax);
        l.add_page(json!({"tools":[{"name":"a"},{"name":"a"}]}))
            .unwrap();
        assert_eq!(l.into_entries().len(), 2);
    }

    #[test]
    fn every_kind_keys_its_entries_by_its_own_member() {
        let cases = [
            (
                ListKind::RESOURCES,
                json!({"resources":[{"uri":"u","name":"a"},{"uri":"v","name":"a"}]}),
                json!({"resources":[{"uri":"u"}]}),
            ),
            (
                ListKind::RESOURCE_TEMPLATES,
                json!({"resourceTemplates":[{"uriTemplate":"a/{x}","name":"a"},{"uriTemplate":"b/{x}","name":"a"}]}),
                json!({"resourceTemplates":[{"uriTemplate":"a/{x}"}]}),
            ),
            (
                ListKind::PROMPTS,
                json!({"prompts":[{"name":"a","title":"t"},{"name":"b","title":"t"}]}),
                json!({"prompts":[{"name":"b"}]}),
            ),
        ];
        for (kind, first, again) in cases {
            let mut l = Listing::new(kind, ListingRules::SPEC);
            assert_eq!(l.take_page(first).unwrap(), None, "{}", kind.method);
            let e = l.add_page(again).unwrap_err();
            assert_eq!(e.kind, ErrorKind::DuplicateName, "{}", kind.method);
            assert!(ListKind::is_listing(kind.method));
        }
        assert!(!ListKind::is_listing("resources/read"));
    }

    #[test]
    fn any_cursor_sent_before_is_repeated() {
        let mut l = tools();
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
        let mut l = Listing::new(ListKind::TOOLS, lax);
        l.use_cursor("p2").unwrap();
        l.use_cursor("p2").unwrap();
    }

    #[test]
    fn take_page_follows_cursors_up_to_the_page_cap() {
        let page = |next: String| json!({"tools":[], "nextCursor": next});
        let mut l = tools();
        assert_eq!(l.take_page(page("a".into())).unwrap().as_deref(), Some("a"));
        assert_eq!(l.take_page(json!({"tools":[]})).unwrap(), None);
        let mut l = tools();
        l.take_page(page("a".into())).unwrap();
        let e = l.take_page(page("a".into())).unwrap_err();
        assert_eq!(e.kind, ErrorKind::RepeatedCursor);

        let mut l = tools();
        for i in 1..PAGE_CAP {
            assert!(l.take_page(page(format!("c{i}"))).unwrap().is_some());
        }
        let e = l.take_page(page("last".into())).unwrap_err();
        assert_eq!(e.kind, ErrorKind::InvalidResponse);
        assert!(e.message.contains("page cap 1000"), "{}", e.message);

        let one = ListingRules {
            max_pages: 1,
            truncate_at_max: true,
            ..ListingRules::SPEC
        };
        let mut l = Listing::new(ListKind::TOOLS, one);
        assert_eq!(l.take_page(page("a".into())).unwrap(), None);
    }

    #[test]
    fn a_null_cursor_ends_the_listing_unless_followed() {
        let null = json!({"tools":[], "nextCursor": null});
        let mut l = Listing::new(ListKind::TOOLS, ListingRules::SPEC);
        assert_eq!(l.take_page(null.clone()).unwrap(), None);
        let followed = ListingRules {
            null_cursor_followed: true,
            ..ListingRules::SPEC
        };
        let mut l = Listing::new(ListKind::TOOLS, followed);
        assert_eq!(l.take_page(null).unwrap(), Some("null".to_string()));
    }

    #[test]
    fn a_shorter_page_does_not_end_the_listing() {
        let two = json!({"tools":[{"name":"a"},{"name":"b"}], "nextCursor": "c1"});
        let one = json!({"tools":[{"name":"c"}], "nextCursor": "c2"});
        let mut l = Listing::new(ListKind::TOOLS, ListingRules::SPEC);
        assert_eq!(l.take_page(two.clone()).unwrap(), Some("c1".to_string()));
        assert_eq!(l.take_page(one.clone()).unwrap(), Some("c2".to_string()));
        let fixed = ListingRules {
            short_page_ends: true,
            ..ListingRules::SPEC
        };
        let mut l = Listing::new(ListKind::TOOLS, fixed);
        assert_eq!(l.take_page(two).unwrap(), Some("c1".to_string()));
        assert_eq!(l.take_page(one).unwrap(), None);
    }
}

//! A paginated listing (CLIENTS.md, `list_tools` and the other listings), for libraries that
//! hand out single pages: follow `nextCursor` until it is absent or null, sending each cursor
//! back exactly (an empty string is a cursor).
//!
//! The contract's guards (a cursor repeated within the listing is `repeated_cursor`, an entry
//! listed twice is `duplicate_tool_name` / `duplicate_name`, a page cap) are opt-in through
//! [`Guards`]: an adapter adds no guard its library lacks, so one whose users write the bare
//! loop passes [`Guards::NONE`] and lets a hostile server show what that loop does.

use std::collections::HashSet;
use std::future::Future;

use serde_json::{Value, json};

use crate::error::{Kind, StepError};

/// Which of the contract's guards the listing applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Guards {
    /// Refuse a cursor already sent in this listing (`repeated_cursor`).
    pub repeated_cursor: bool,
    /// Refuse an entry listed twice (`duplicate_tool_name` for tools, else `duplicate_name`).
    pub duplicates: bool,
    /// Fail (`invalid_response`), never return a shorter list, past this many pages.
    pub max_pages: Option<usize>,
}

impl Guards {
    /// The bare loop: follow cursors until they end, nothing more.
    pub const NONE: Guards = Guards {
        repeated_cursor: false,
        duplicates: false,
        max_pages: None,
    };
    /// Everything the contract describes, as the reference client does it.
    pub const CONTRACT: Guards = Guards {
        repeated_cursor: true,
        duplicates: true,
        max_pages: Some(1000),
    };
}

/// The member that names an entry of a listing, by the listing's result key.
fn identity(key: &str) -> &'static str {
    match key {
        "resources" => "uri",
        "resourceTemplates" => "uriTemplate",
        "tasks" => "taskId",
        _ => "name",
    }
}

/// Lists everything under `key` (`tools`, `resources`, `resourceTemplates`, `prompts`, `tasks`):
/// `fetch(cursor)` returns one page's result object as received. Reports `{key: [entries]}`.
pub async fn paginate<F, Fut>(key: &str, guards: Guards, mut fetch: F) -> Result<Value, StepError>
where
    F: FnMut(Option<String>) -> Fut,
    Fut: Future<Output = Result<Value, StepError>>,
{
    let name = identity(key);
    let duplicate = if key == "tools" {
        Kind::DuplicateToolName
    } else {
        Kind::DuplicateName
    };
    let mut entries = Vec::new();
    let mut names = HashSet::new();
    let mut sent = HashSet::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0usize;
    loop {
        if let Some(max) = guards.max_pages
            && pages >= max
        {
            return Err(StepError::new(
                Kind::InvalidResponse,
                format!("the {key} listing did not end within {max} pages"),
            ));
        }
        pages += 1;
        let page = fetch(cursor.clone()).await?;
        match page.get(key) {
            Some(Value::Array(listed)) => {
                for entry in listed {
                    if guards.duplicates
                        && let Some(id) = entry.get(name).and_then(Value::as_str)
                        && !names.insert(id.to_owned())
                    {
                        return Err(StepError::new(
                            duplicate,
                            format!("{key}: {name} {id:?} listed twice"),
                        ));
                    }
                    entries.push(entry.clone());
                }
            }
            other => {
                return Err(StepError::new(
                    Kind::InvalidResponse,
                    format!(
                        "a {key} page without a {key} array: {}",
                        other.unwrap_or(&Value::Null)
                    ),
                ));
            }
        }
        cursor = match page.get("nextCursor") {
            None | Some(Value::Null) => return Ok(json!({ key: entries })),
            Some(Value::String(next)) => Some(next.clone()),
            Some(other) => {
                return Err(StepError::new(
                    Kind::InvalidResponse,
                    format!("nextCursor is not a string: {other}"),
                ));
            }
        };
        if guards.repeated_cursor && !sent.insert(cursor.clone()) {
            return Err(StepError::new(
                Kind::RepeatedCursor,
                format!(
                    "the server repeated the cursor {:?} in one {key} listing",
                    cursor.unwrap_or_default()
                ),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rt::block_on;

    /// A server whose pages are `pages[i]`, reached by the cursor `pages[i-1]` named.
    fn list(
        key: &str,
        guards: Guards,
        pages: Vec<Value>,
    ) -> (Result<Value, StepError>, Vec<Option<String>>) {
        let mut asked = Vec::new();
        let result = block_on(paginate(key, guards, |cursor| {
            asked.push(cursor.clone());
            let index = match &cursor {
                None => 0,
                Some(c) => pages
                    .iter()
                    .position(|p| p.get("id").and_then(Value::as_str) == Some(c))
                    .unwrap_or(99),
            };
            let page = pages.get(index).cloned();
            async move { page.ok_or_else(|| StepError::new(Kind::ProtocolError, "unknown cursor")) }
        }));
        (result, asked)
    }

    #[test]
    fn cursors_are_followed_and_sent_back_exactly() {
        let pages = vec![
            json!({"tools":[{"name":"a"}],"nextCursor":""}),
            json!({"id":"","tools":[{"name":"b"}],"nextCursor":"x y"}),
            json!({"id":"x y","tools":[{"name":"c"}],"nextCursor":null}),
        ];
        let (result, asked) = list("tools", Guards::CONTRACT, pages);
        assert_eq!(
            result.unwrap(),
            json!({"tools":[{"name":"a"},{"name":"b"},{"name":"c"}]})
        );
        assert_eq!(asked, [None, Some(String::new()), Some("x y".into())]);
    }

    #[test]
    fn the_guards_name_their_kinds() {
        let looping = vec![
            json!({"tools":[{"name":"a"}],"nextCursor":"p"}),
            json!({"id":"p","tools":[{"name":"b"}],"nextCursor":"p"}),
        ];
        let (result, _) = list("tools", Guards::CONTRACT, looping.clone());
        assert_eq!(result.unwrap_err().kind, Kind::RepeatedCursor);
        let capped = Guards {
            max_pages: Some(5),
            ..Guards::NONE
        };
        let (result, asked) = list("tools", capped, looping);
        assert_eq!(result.unwrap_err().kind, Kind::InvalidResponse);
        assert_eq!(asked.len(), 5);
        let twice = vec![json!({"resources":[{"uri":"u"},{"uri":"u"}]})];
        let (result, _) = list("resources", Guards::CONTRACT, twice.clone());
        assert_eq!(result.unwrap_err().kind, Kind::DuplicateName);
        let (result, _) = list("resources", Guards::NONE, twice);
        assert_eq!(result.unwrap()["resources"].as_array().unwrap().len(), 2);
    }
}

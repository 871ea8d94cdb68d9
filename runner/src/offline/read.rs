//! Reading a recording: the harness's own transcript records (what the fakes and
//! `mcp-harness record` write), or the import format, one `{"from": "client" | "server",
//! "message": …, "at_ms"?: N}` per line (what another tool's capture is easily turned into).
//! A file is one or the other, decided by its first line. Import lines become the records
//! the fakes would have written: a client's message `Received`, a server's `Sent`, a batch
//! (an array) the fakes' note and then its messages one by one, all under one pid.
//!
//! Every error names the file, the line and what was expected; nothing panics on input.

use std::path::Path;

use serde_json::Value;

use mcp_harness_fakes::batch;
use mcp_harness_scenarios::transcript::{Event, Record};

/// The pid every record of an imported recording carries (one session, one server).
pub const IMPORT_PID: u32 = 1;

/// Which of the two formats a recording is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// The harness transcript (`{"pid": …, "event": …}` per line).
    Harness,
    /// The import format (`{"from": …, "message": …}` per line).
    Import,
}

impl Format {
    fn describe(self) -> &'static str {
        match self {
            Format::Harness => "a harness transcript record ({\"pid\": …, \"event\": …})",
            Format::Import => {
                "an import line ({\"from\": \"client\" | \"server\", \"message\": …})"
            }
        }
    }
}

/// What either format's line must look like, for errors.
const EITHER: &str = "a harness transcript record ({\"pid\": …, \"event\": …}) or an import line ({\"from\": \"client\" | \"server\", \"message\": …, \"at_ms\"?: N})";

/// Reads the recording at `path`.
pub fn read(path: &Path) -> Result<(Vec<Record>, Format), String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{}: cannot read the recording: {e}", path.display()))?;
    parse(&path.display().to_string(), &text)
}

/// Parses a recording's text; `name` is how errors name the file.
pub fn parse(name: &str, text: &str) -> Result<(Vec<Record>, Format), String> {
    let mut records = Vec::new();
    let mut format: Option<(Format, usize)> = None;
    let lines: Vec<&str> = text.lines().collect();
    for (index, line) in lines.iter().enumerate() {
        let at = format!("{name}:{}", index + 1);
        if line.trim().is_empty() {
            continue;
        }
        let value: Value = serde_json::from_str(line).map_err(|e| {
            let torn = index + 1 == lines.len() && !text.ends_with('\n');
            let hint = if torn {
                " (the last line is cut short, as by a recorder killed mid-write: remove it to grade the rest)"
            } else {
                ""
            };
            format!("{at}: not JSON ({e}); expected {EITHER}{hint}")
        })?;
        let Some(object) = value.as_object() else {
            return Err(format!(
                "{at}: a JSON {} where {EITHER} was expected",
                kind(&value)
            ));
        };
        let this = if object.contains_key("event") {
            Format::Harness
        } else if object.contains_key("from") {
            Format::Import
        } else {
            return Err(format!(
                "{at}: an object with neither `event` nor `from`; expected {EITHER}"
            ));
        };
        match format {
            None => format = Some((this, index + 1)),
            Some((first, first_line)) if first != this => {
                return Err(format!(
                    "{at}: {} in a recording whose line {first_line} is {}; a recording is all one format or all the other",
                    this.describe(),
                    first.describe()
                ));
            }
            Some(_) => {}
        }
        match this {
            Format::Harness => records.push(
                serde_json::from_value::<Record>(value)
                    .map_err(|e| format!("{at}: not a harness transcript record: {e}"))?,
            ),
            Format::Import => import(&at, object, &mut records)?,
        }
    }
    Ok((records, format.map_or(Format::Harness, |(f, _)| f)))
}

/// The records one import line stands for.
fn import(
    at: &str,
    line: &serde_json::Map<String, Value>,
    out: &mut Vec<Record>,
) -> Result<(), String> {
    if let Some(other) = line
        .keys()
        .find(|k| !["from", "message", "at_ms"].contains(&k.as_str()))
    {
        return Err(format!(
            "{at}: unknown member `{other}`; an import line has `from`, `message` and optionally `at_ms`"
        ));
    }
    let client = match line.get("from").and_then(Value::as_str) {
        Some("client") => true,
        Some("server" | "fake") => false,
        _ => {
            return Err(format!(
                "{at}: `from` is {}; expected \"client\" or \"server\"",
                line.get("from").map_or("missing".into(), Value::to_string)
            ));
        }
    };
    let Some(message) = line.get("message") else {
        return Err(format!(
            "{at}: no `message`; expected the JSON-RPC message (or batch) that was sent"
        ));
    };
    let at_ms = match line.get("at_ms") {
        None => None,
        Some(v) => Some(v.as_u64().ok_or_else(|| {
            format!("{at}: `at_ms` is {v}; expected a whole number of milliseconds")
        })?),
    };
    let record = |event: Event| Record {
        pid: IMPORT_PID,
        at_ms: at_ms.filter(|_| matches!(event, Event::Received { .. })),
        event,
    };
    let one = |message: Value| match client {
        true => Event::Received { message },
        false => Event::Sent { message },
    };
    match message {
        Value::Array(items) => {
            out.push(record(match client {
                true => batch::received_note(items.len()),
                false => batch::sent_note(items.len()),
            }));
            out.extend(items.iter().cloned().map(one).map(record));
        }
        message => out.push(record(one(message.clone()))),
    }
    Ok(())
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn import_lines_become_the_records_a_fake_writes() {
        let text = concat!(
            r#"{"from":"client","message":{"jsonrpc":"2.0","id":1,"method":"ping"},"at_ms":5}"#,
            "\n",
            r#"{"from":"server","message":[{"jsonrpc":"2.0","id":1,"result":{}}]}"#,
            "\n\n",
            r#"{"from":"client","message":[{"jsonrpc":"2.0","method":"notifications/initialized"}]}"#,
            "\n"
        );
        let (records, format) = parse("r.jsonl", text).unwrap();
        assert_eq!(format, Format::Import);
        assert_eq!(records.len(), 5);
        assert_eq!(records[0].at_ms, Some(5));
        assert!(matches!(records[2].event, Event::Sent { .. }));
        assert_eq!(batch::received_size(&records[3].event), Some(1));
    }

    #[test]
    fn errors_name_the_file_the_line_and_what_was_expected() {
        let harness = r#"{"pid":1,"event":"started"}"#;
        let import = r#"{"from":"client","message":{}}"#;
        let cases = [
            (format!("{harness}\n{{oops\n"), "r:2: not JSON"),
            (
                format!("{harness}\n{import}\n"),
                "whose line 1 is a harness transcript record",
            ),
            (
                format!("{import}\n{harness}\n"),
                "r:2: a harness transcript record ({",
            ),
            ("[1]\n".to_owned(), "r:1: a JSON array where"),
            ("{\"x\":1}\n".to_owned(), "r:1: an object with neither"),
            (
                "{\"from\":\"me\",\"message\":{}}\n".to_owned(),
                "r:1: `from` is \"me\"",
            ),
            ("{\"from\":\"client\"}\n".to_owned(), "r:1: no `message`"),
            (
                "{\"from\":\"client\",\"message\":{},\"at_ms\":-1}\n".to_owned(),
                "r:1: `at_ms` is -1",
            ),
            (
                "{\"from\":\"client\",\"message\":{},\"to\":1}\n".to_owned(),
                "r:1: unknown member `to`",
            ),
            (
                "{\"pid\":1,\"event\":\"nope\"}\n".to_owned(),
                "r:1: not a harness transcript record",
            ),
            (format!("{harness}\n{{\"pid\""), "cut short"),
        ];
        for (text, want) in cases {
            let err = parse("r", &text).unwrap_err();
            assert!(err.contains(want), "{err:?} lacks {want:?}");
        }
        assert_eq!(parse("r", "\n").unwrap().0, Vec::new());
    }
}

//! The one shape every case file is written in (`cargo xtask fmt-cases`): members in the
//! model's order, defaults left out, argument-less steps as bare strings, and each value on
//! one line when it fits in [`WIDTH`] columns, else one member per line.

use serde_json::Value;

use crate::load::variants;
use crate::model::era::default_protocol_version;
use crate::model::file::CaseFile;
use crate::model::{ClientEra, Fixture, Requirement};

/// The widest line the formatter aims for.
pub const WIDTH: usize = 100;

/// A case file's text in canonical shape. The file must parse (for a family, its first
/// variant); `{"$var": …}` placeholders stay where they were written.
pub fn format_case(text: &str) -> Result<String, String> {
    let value: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let holders = variants::placeholders(&value);
    let typed = variants::expand(&value)
        .map_err(|(at, m)| format!("{at}: {m}"))?
        .into_iter()
        .next()
        .map(|(_, v)| v)
        .unwrap_or(value);
    let file: CaseFile = serde_path_to_error::deserialize(typed)
        .map_err(|e| format!("at {}: {}", e.path(), e.inner()))?;
    let era = file.client_era;
    let mut out = serde_json::to_value(&file).map_err(|e| e.to_string())?;
    drop_default_version(&mut out, era);
    for (path, holder) in holders {
        let slot = variants::at_mut(&mut out, &path).ok_or_else(|| {
            format!(
                "{}: the canonical shape has no place for this `$var` (a default or a shorthand took it); write the value in another form",
                variants::show(&path)
            )
        })?;
        *slot = holder;
    }
    Ok(print(&out))
}

/// A fixture file's text in canonical shape.
pub fn format_fixture(text: &str) -> Result<String, String> {
    let fixture: Fixture = serde_json::from_str(text).map_err(|e| e.to_string())?;
    Ok(print(
        &serde_json::to_value(&fixture).map_err(|e| e.to_string())?,
    ))
}

/// The catalogue's text in canonical shape: one entry per line where it fits.
pub fn format_catalogue(text: &str) -> Result<String, String> {
    let entries: Vec<Requirement> = serde_json::from_str(text).map_err(|e| e.to_string())?;
    Ok(print(
        &serde_json::to_value(&entries).map_err(|e| e.to_string())?,
    ))
}

fn drop_default_version(out: &mut Value, era: Option<ClientEra>) {
    if let Some(map) = out.as_object_mut()
        && map.get("protocol_version").and_then(Value::as_str)
            == Some(default_protocol_version(era))
    {
        // `shift_remove`: a plain `remove` swaps the last member into its place.
        map.shift_remove("protocol_version");
    }
}

/// Pretty-prints `value`: the outer object one member per line, everything inside on one
/// line when it fits, else one member per line; an object of one member (or an array of
/// one element) that does not fit opens on its parent's line, so `{"reply": {"result": {`
/// takes one line and closes with `}}}`.
pub fn print(value: &Value) -> String {
    let mut out = String::new();
    block(value, 0, &mut out);
    out.push('\n');
    out
}

fn block(value: &Value, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent + 2);
    match value {
        // A wrapper of one member opens on its parent's line: `{"result": {` … `}}`.
        Value::Object(map) if map.len() == 1 && indent > 0 => {
            let (k, v) = map.iter().next().unwrap_or_else(|| unreachable!());
            out.push_str(&format!("{{{}: ", string(k)));
            block(v, indent, out);
            out.push('}');
        }
        Value::Array(items) if items.len() == 1 && indent > 0 => {
            out.push('[');
            block(&items[0], indent, out);
            out.push(']');
        }
        Value::Object(map) if !map.is_empty() => {
            out.push_str("{\n");
            for (i, (k, v)) in map.iter().enumerate() {
                let key = format!("{pad}{}: ", string(k));
                out.push_str(&key);
                member(v, indent + 2, key.chars().count(), out);
                out.push_str(if i + 1 < map.len() { ",\n" } else { "\n" });
            }
            out.push_str(&" ".repeat(indent));
            out.push('}');
        }
        Value::Array(items) if !items.is_empty() => {
            out.push_str("[\n");
            for (i, v) in items.iter().enumerate() {
                out.push_str(&pad);
                member(v, indent + 2, pad.len(), out);
                out.push_str(if i + 1 < items.len() { ",\n" } else { "\n" });
            }
            out.push_str(&" ".repeat(indent));
            out.push(']');
        }
        other => out.push_str(&inline(other)),
    }
}

/// A value at column `column` of a line indented by `indent`: on one line when it fits
/// (with the comma after it), else as a block.
fn member(value: &Value, indent: usize, column: usize, out: &mut String) {
    let one = inline(value);
    if column + one.chars().count() < WIDTH {
        out.push_str(&one);
    } else {
        block(value, indent, out);
    }
}

fn inline(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let parts: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", string(k), inline(v)))
                .collect();
            format!("{{{}}}", parts.join(", "))
        }
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(inline).collect();
            format!("[{}]", parts.join(", "))
        }
        Value::String(s) => string(s),
        other => other.to_string(),
    }
}

/// A JSON string; characters that do not show (the replacement character, byte-order mark,
/// line and paragraph separators, other format characters) are written as `\uXXXX`.
fn string(s: &str) -> String {
    let text = Value::from(s).to_string();
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let hidden = matches!(c, '\u{fffd}' | '\u{feff}' | '\u{2028}' | '\u{2029}' | '\u{200b}'..='\u{200f}' | '\u{7f}'..='\u{9f}');
        if hidden {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_default_version_written_out_is_dropped_in_place() {
        let text = r#"{"description": "d", "requirement": "LIFE-01", "protocol_version": "2025-03-26", "plan": ["connect"], "wire": [{"check": "c", "sent": {"method": "initialize"}, "broken_by": []}]}"#;
        let once = format_case(text).unwrap();
        assert!(!once.contains("protocol_version"), "{once}");
        assert!(once.find("\"plan\"") < once.find("\"wire\""), "{once}");
        assert_eq!(format_case(&once).unwrap(), once);
    }

    #[test]
    fn short_values_stay_on_one_line_and_long_ones_break() {
        let v: Value = serde_json::from_str(
            r#"{"a": [1, 2], "b": {"long": "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "c": 1}, "d": "\ufffd"}"#,
        )
        .unwrap();
        let text = print(&v);
        assert_eq!(
            text,
            "{\n  \"a\": [1, 2],\n  \"b\": {\n    \"long\": \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\",\n    \"c\": 1\n  },\n  \"d\": \"\\ufffd\"\n}\n"
        );
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), v);
    }
}

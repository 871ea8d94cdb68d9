//! The contract's shapes for results (CLIENTS.md, "Output" and "Content as seen"), computed from
//! the JSON the library received or serialises back: a tool result's outcome, content blocks
//! and resource contents with binary data reported as its decoded length and SHA-256.
//!
//! A typed library's results go through `serde_json` first; the kit then judges them the same
//! way for every adapter (unknown block types, contents with neither `text` nor `blob`, and
//! data that is not strict base64 fail the step with `invalid_response`).

use serde_json::{Map, Value, json};

use crate::bytes::{decode_base64, sha256_hex};
use crate::error::{Kind, StepError};

fn invalid(message: String) -> StepError {
    StepError::new(Kind::InvalidResponse, message)
}

/// One content block as seen: text as received, image/audio as `bytes` + `sha256`, an
/// embedded resource with its contents as seen, a resource link as received. A block's
/// `annotations` are kept; its `_meta` is dropped.
pub fn content_as_seen(block: &Value) -> Result<Value, StepError> {
    let Some(fields) = block.as_object() else {
        return Err(invalid(format!(
            "a content block is not an object: {block}"
        )));
    };
    let kind = fields
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let mut seen = Map::new();
    seen.insert("type".into(), json!(kind));
    match kind {
        "text" => {
            let text = fields
                .get("text")
                .filter(|t| t.is_string())
                .ok_or_else(|| invalid(format!("a text block without a string text: {block}")))?;
            seen.insert("text".into(), text.clone());
        }
        "image" | "audio" => {
            if let Some(mime_type) = fields.get("mimeType") {
                seen.insert("mimeType".into(), mime_type.clone());
            }
            let data = fields.get("data").and_then(Value::as_str).ok_or_else(|| {
                invalid(format!("an {kind} block without a string data: {block}"))
            })?;
            binary(&mut seen, data)?;
        }
        "resource" => {
            let resource = fields
                .get("resource")
                .ok_or_else(|| invalid(format!("a resource block without a resource: {block}")))?;
            seen.insert("resource".into(), resource_contents_as_seen(resource)?);
        }
        "resource_link" => return Ok(block.clone()),
        other => {
            return Err(invalid(format!(
                "a content block of unknown type {other:?}"
            )));
        }
    }
    if let Some(annotations) = fields.get("annotations").filter(|a| !a.is_null()) {
        seen.insert("annotations".into(), annotations.clone());
    }
    Ok(Value::Object(seen))
}

/// Every block of a `content` array, in order; the first that cannot be shown fails them all.
pub fn contents_as_seen(content: &Value) -> Result<Vec<Value>, StepError> {
    match content {
        Value::Array(blocks) => blocks.iter().map(content_as_seen).collect(),
        Value::Null => Ok(Vec::new()),
        other => Err(invalid(format!("content is not an array: {other}"))),
    }
}

/// One resource contents as seen: `uri`, `mimeType` when received, then `text` (which wins
/// when both are present) or the `blob`'s `bytes` and `sha256`.
pub fn resource_contents_as_seen(contents: &Value) -> Result<Value, StepError> {
    let Some(fields) = contents.as_object() else {
        return Err(invalid(format!(
            "resource contents are not an object: {contents}"
        )));
    };
    let mut seen = Map::new();
    for member in ["uri", "mimeType"] {
        if let Some(value) = fields.get(member) {
            seen.insert(member.into(), value.clone());
        }
    }
    match (fields.get("text"), fields.get("blob")) {
        (Some(text), _) => {
            seen.insert("text".into(), text.clone());
        }
        (None, Some(Value::String(blob))) => binary(&mut seen, blob)?,
        (None, Some(other)) => {
            return Err(invalid(format!("a blob that is not a string: {other}")));
        }
        (None, None) => {
            return Err(invalid(format!(
                "resource contents with neither text nor blob: {contents}"
            )));
        }
    }
    Ok(Value::Object(seen))
}

fn binary(seen: &mut Map<String, Value>, data: &str) -> Result<(), StepError> {
    let bytes = decode_base64(data).map_err(|why| {
        invalid(format!(
            "binary data is not valid base64 (RFC 4648, standard, padded): {why}"
        ))
    })?;
    seen.insert("bytes".into(), json!(bytes.len()));
    seen.insert("sha256".into(), json!(sha256_hex(&bytes)));
    Ok(())
}

/// The text blocks' text, in order (other blocks left out).
pub fn texts(content: &Value) -> Vec<String> {
    content
        .as_array()
        .into_iter()
        .flatten()
        .filter(|block| block.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|block| block.get("text").and_then(Value::as_str).map(str::to_owned))
        .collect()
}

/// A `tools/call` result's outcome: `isError: true` is `tool_error` (its texts as the
/// message); otherwise `structured` (a non-null `structuredContent`) or `text`, plus every
/// block as seen under `content`.
pub fn tool_result(result: &Value) -> Result<Value, StepError> {
    let content = result.get("content").unwrap_or(&Value::Null);
    if result.get("isError").and_then(Value::as_bool) == Some(true) {
        return Err(StepError::new(Kind::ToolError, texts(content).join("\n")));
    }
    let blocks = contents_as_seen(content)?;
    let mut ok = match result.get("structuredContent") {
        Some(structured) if !structured.is_null() => json!({ "structured": structured }),
        _ => json!({ "text": texts(content) }),
    };
    ok["content"] = Value::Array(blocks);
    Ok(ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_blocks_are_reported_by_what_they_decode_to() {
        let seen = content_as_seen(&json!({"type":"image","data":"YWJj","mimeType":"image/png",
            "annotations":{"priority":0.5},"_meta":{"x":1}}))
        .unwrap();
        assert_eq!(
            seen,
            json!({"type":"image","mimeType":"image/png","bytes":3,
                "sha256":"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
                "annotations":{"priority":0.5}})
        );
        let blob = resource_contents_as_seen(&json!({"uri":"file:///a","blob":""})).unwrap();
        assert_eq!(blob["bytes"], 0);
        let both = resource_contents_as_seen(&json!({"uri":"u","text":"t","blob":"!"})).unwrap();
        assert_eq!(both, json!({"uri":"u","text":"t"}));
    }

    #[test]
    fn what_cannot_be_shown_is_invalid_response() {
        for bad in [
            json!({"type":"image","data":"Y W J j","mimeType":"image/png"}),
            json!({"type":"hologram"}),
            json!({"type":"resource","resource":{"uri":"u"}}),
        ] {
            assert_eq!(
                content_as_seen(&bad).unwrap_err().kind,
                Kind::InvalidResponse,
                "{bad}"
            );
        }
        let link = json!({"type":"resource_link","uri":"u","name":"n","extra":1});
        assert_eq!(content_as_seen(&link).unwrap(), link);
    }

    #[test]
    fn tool_results_follow_the_contract() {
        let error = tool_result(&json!({"isError":true,"structuredContent":{"a":1},
            "content":[{"type":"text","text":"bad"},{"type":"text","text":"worse"}]}))
        .unwrap_err();
        assert_eq!(
            (error.kind, error.message.as_str()),
            (Kind::ToolError, "bad\nworse")
        );
        let structured = tool_result(&json!({"structuredContent":{"t":21},"content":[]})).unwrap();
        assert_eq!(structured, json!({"structured":{"t":21},"content":[]}));
        let text = tool_result(&json!({"structuredContent":null,
            "content":[{"type":"text","text":"a"},{"type":"audio","data":"","mimeType":"m"}]}))
        .unwrap();
        assert_eq!(text["text"], json!(["a"]));
        assert_eq!(text["content"][1]["bytes"], 0);
    }
}

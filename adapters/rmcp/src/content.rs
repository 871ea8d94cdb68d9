//! Content as seen (CLIENTS.md "Content as seen"): rmcp's typed content blocks and resource
//! contents, serialised back as faithfully as rmcp's types allow, with binary data reported as
//! its decoded length and SHA-256 instead of the base64 text.
//!
//! rmcp keeps image/audio `data` and resource `blob` as the base64 text it received, unchecked;
//! decoding them is the application's job, as here: strictly (RFC 4648 standard alphabet,
//! canonical padding, no whitespace), so data that does not decode fails the step with
//! `invalid_response`. Blocks of an unknown `type` and contents with neither `text` nor `blob`
//! never reach this module: rmcp refuses the whole result when it decodes it.

use base64::Engine as _;
use rmcp::model::{ContentBlock, ResourceContents};
use serde::Serialize;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::failure::{Failure, Kind};

/// One content block as seen.
pub(crate) fn block(block: &ContentBlock) -> Result<Value, Failure> {
    let seen = match block {
        ContentBlock::Text(text) => {
            let mut seen = object(json!({ "type": "text", "text": text.text }));
            annotations(&mut seen, text.annotations.as_ref())?;
            seen
        }
        ContentBlock::Image(image) => {
            let mut seen = binary("image", &image.mime_type, &image.data)?;
            annotations(&mut seen, image.annotations.as_ref())?;
            seen
        }
        ContentBlock::Audio(audio) => {
            let mut seen = binary("audio", &audio.mime_type, &audio.data)?;
            annotations(&mut seen, audio.annotations.as_ref())?;
            seen
        }
        ContentBlock::Resource(embedded) => {
            let mut seen = object(json!({
                "type": "resource",
                "resource": resource_contents(&embedded.resource)?,
            }));
            annotations(&mut seen, embedded.annotations.as_ref())?;
            seen
        }
        // rmcp types a resource link as its `Resource`: members it does not model are gone.
        ContentBlock::ResourceLink(_) => return to_value(block),
        // `ContentBlock` is non-exhaustive; a block type added in a later rmcp is shown as rmcp
        // serialises it.
        _ => return to_value(block),
    };
    Ok(Value::Object(seen))
}

/// Every block, in order; the first that cannot be shown fails them all.
pub(crate) fn blocks(content: &[ContentBlock]) -> Result<Vec<Value>, Failure> {
    content.iter().map(block).collect()
}

/// One resource contents as seen.
pub(crate) fn resource_contents(contents: &ResourceContents) -> Result<Value, Failure> {
    let (uri, mime_type, body) = match contents {
        ResourceContents::TextResourceContents {
            uri,
            mime_type,
            text,
            ..
        } => (uri, mime_type, json!({ "text": text })),
        ResourceContents::BlobResourceContents {
            uri,
            mime_type,
            blob,
            ..
        } => {
            let (bytes, sha256) = decode(blob)?;
            (uri, mime_type, json!({ "bytes": bytes, "sha256": sha256 }))
        }
        // Non-exhaustive: a later rmcp's variant is shown as rmcp serialises it.
        _ => return to_value(contents),
    };
    let mut seen = Map::new();
    seen.insert("uri".into(), json!(uri));
    if let Some(mime_type) = mime_type {
        seen.insert("mimeType".into(), json!(mime_type));
    }
    seen.extend(object(body));
    Ok(Value::Object(seen))
}

fn binary(kind: &str, mime_type: &str, data: &str) -> Result<Map<String, Value>, Failure> {
    let (bytes, sha256) = decode(data)?;
    Ok(object(json!({
        "type": kind,
        "mimeType": mime_type,
        "bytes": bytes,
        "sha256": sha256,
    })))
}

/// The decoded length and lower-case hex SHA-256 of strict standard base64.
fn decode(data: &str) -> Result<(usize, String), Failure> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data)
        .map_err(|e| {
            Failure::new(
                Kind::InvalidResponse,
                format!("binary data is not valid base64 (RFC 4648, standard, padded): {e}"),
            )
        })?;
    let digest = Sha256::digest(&bytes);
    let hex = digest.iter().map(|byte| format!("{byte:02x}")).collect();
    Ok((bytes.len(), hex))
}

/// A block's `annotations`, as rmcp typed them (audience, priority, lastModified; others dropped).
fn annotations<T: Serialize>(
    seen: &mut Map<String, Value>,
    annotations: Option<&T>,
) -> Result<(), Failure> {
    if let Some(annotations) = annotations {
        seen.insert("annotations".into(), to_value(annotations)?);
    }
    Ok(())
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// A typed rmcp value as the JSON rmcp would write for it. Through text, not
/// `serde_json::to_value`: rmcp keeps an annotation's `priority` as `f32`, which it writes as
/// `0.3` but which `to_value` would widen to `0.30000001192092896`.
pub(crate) fn to_value<T: Serialize>(typed: &T) -> Result<Value, Failure> {
    serde_json::to_string(typed)
        .and_then(|text| serde_json::from_str(&text))
        .map_err(|e| {
            Failure::new(
                Kind::InvalidResponse,
                format!("rmcp's typed result does not serialise: {e}"),
            )
        })
}

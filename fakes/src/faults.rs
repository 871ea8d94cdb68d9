//! The transport-independent half of a hostile server's faults (`faults` in a handler): the
//! padding that makes a message huge, what the transcript records of it, and the bytes of the
//! items written ahead of a reply. The stdio fake and the HTTP fake each carry the faults out
//! in their own medium.

use mcp_harness_scenarios::model::Emit;
use mcp_harness_scenarios::transcript::Event;
use serde_json::{Value, json};

/// How a storm is noted in the transcript after its first copy.
pub fn repeat_note(more: u32) -> Event {
    Event::SentRaw {
        line: format!("[note, not sent: the message above was sent {more} more times]"),
    }
}

/// Stands for the filler while a padded response is serialized; the filler is spliced in
/// as bytes afterwards, since escaping megabytes character by character is slow.
const FILLER_MARK: &str = "mcp-harness-filler-3c9e71";

/// A response with `padding` bytes of base64 filler added to its result, as an `image`
/// content block appended to `content`: its text, and the response as the transcript records
/// it, with the filler replaced by a short note. Without padding, or for a response that has
/// no object `result`, both are the response unchanged.
pub fn pad(response: Value, padding: u64) -> (Vec<u8>, Value) {
    let has_object_result = response.get("result").is_some_and(Value::is_object);
    if padding == 0 || !has_object_result {
        return (response.to_string().into_bytes(), response);
    }
    let length = usize::try_from(padding.div_ceil(4) * 4).unwrap_or(usize::MAX / 2);
    let mut marked = response.clone();
    let mut recorded = response;
    append_block(&mut marked, FILLER_MARK.to_owned());
    append_block(&mut recorded, format!("<{length} bytes of filler>"));
    let text = marked.to_string();
    let Some(at) = text.find(FILLER_MARK) else {
        return (text.into_bytes(), recorded);
    };
    let mut bytes = Vec::with_capacity(text.len() + length);
    bytes.extend_from_slice(&text.as_bytes()[..at]);
    bytes.resize(at + length, b'A');
    bytes.extend_from_slice(&text.as_bytes()[at + FILLER_MARK.len()..]);
    (bytes, recorded)
}

fn append_block(response: &mut Value, data: String) {
    let block = json!({"type": "image", "mimeType": "image/png", "data": data});
    let Some(result) = response.get_mut("result").and_then(Value::as_object_mut) else {
        return;
    };
    let content = result.entry("content").or_insert_with(|| json!([]));
    match content.as_array_mut() {
        Some(blocks) => blocks.push(block),
        None => *content = json!([block]),
    }
}

/// One item to write ahead of a reply: its bytes (no line end), and the record the
/// transcript keeps of one copy.
pub fn emitted(emit: &Emit) -> Option<(Vec<u8>, Event)> {
    let (bytes, is_message) = emit.payload()?;
    let event = match (&emit.message, is_message) {
        (Some(message), true) => Event::Sent {
            message: message.clone(),
        },
        _ => Event::SentRaw {
            line: String::from_utf8_lossy(&bytes).into_owned(),
        },
    };
    Some((bytes, event))
}

/// `bytes` with each U+FFFD (bytes EF BF BD) turned into a lone 0xFF byte when
/// `invalid_utf8` (a response that is not UTF-8); the recorded message keeps the U+FFFD.
pub fn encode(bytes: Vec<u8>, invalid_utf8: bool) -> Vec<u8> {
    const REPLACEMENT: &[u8] = "\u{fffd}".as_bytes();
    if !invalid_utf8 {
        return bytes;
    }
    let mut out = Vec::with_capacity(bytes.len());
    let mut rest = &bytes[..];
    while let Some(at) = rest
        .windows(REPLACEMENT.len())
        .position(|w| w == REPLACEMENT)
    {
        out.extend_from_slice(&rest[..at]);
        out.push(0xff);
        rest = &rest[at + REPLACEMENT.len()..];
    }
    out.extend_from_slice(rest);
    out
}

/// The first half of `bytes` (at least one byte when there is any): what a reply cut off in
/// the middle gets out.
pub fn first_half(bytes: &[u8]) -> &[u8] {
    &bytes[..bytes.len().div_ceil(2)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padding_goes_into_an_image_block_and_is_noted_in_the_record() {
        let response = json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "hi"}]}});
        let (sent, recorded) = pad(response.clone(), 10);
        let sent: Value = serde_json::from_slice(&sent).unwrap();
        let blocks = sent["result"]["content"].as_array().unwrap();
        assert_eq!(blocks.len(), 2);
        assert_eq!(blocks[1]["data"].as_str().unwrap().len(), 12);
        assert_eq!(
            recorded["result"]["content"][1]["data"],
            "<12 bytes of filler>"
        );
        let (plain, _) = pad(response.clone(), 0);
        assert_eq!(plain, response.to_string().into_bytes());
        let (created, _) = pad(json!({"id": 1, "result": {}}), 4);
        let created: Value = serde_json::from_slice(&created).unwrap();
        assert_eq!(created["result"]["content"][0]["type"], "image");
        assert_eq!(created["result"]["content"][0]["data"], "AAAA");
        let (error, _) = pad(json!({"id": 1, "error": {"code": 1}}), 4);
        let error: Value = serde_json::from_slice(&error).unwrap();
        assert!(error.get("result").is_none());
    }

    #[test]
    fn emitted_items_keep_their_bytes_and_record_messages_as_sent() {
        let message = Emit {
            message: Some(json!({"jsonrpc": "2.0", "method": "x"})),
            raw: None,
            bytes: None,
            repeat: 1,
        };
        let (bytes, event) = emitted(&message).unwrap();
        assert_eq!(bytes, br#"{"jsonrpc":"2.0","method":"x"}"#);
        assert!(matches!(event, Event::Sent { .. }));
        let raw = Emit {
            message: None,
            raw: None,
            bytes: Some(vec![b'{', 0xff]),
            repeat: 2,
        };
        let (bytes, event) = emitted(&raw).unwrap();
        assert_eq!(bytes, vec![b'{', 0xff]);
        assert_eq!(
            event,
            Event::SentRaw {
                line: "{\u{fffd}".into()
            }
        );
        assert_eq!(first_half(b"abc"), b"ab");
        assert_eq!(first_half(b"0123456789"), b"01234");
        assert_eq!(first_half(b""), b"");
        assert_eq!(encode("a\u{fffd}b\u{fffd}".into(), true), b"a\xffb\xff");
        assert_eq!(encode("a\u{fffd}".into(), false), "a\u{fffd}".as_bytes());
    }
}

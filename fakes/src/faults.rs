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

/// A response with `padding` bytes of base64 filler added to its result, as an `image`
/// content block appended to `content`; and the same response as the transcript records it,
/// with the filler replaced by a short note. Without padding, or for a response that has no
/// object `result`, both are the response unchanged.
pub fn pad(response: Value, padding: u64) -> (Value, Value) {
    let has_object_result = response.get("result").is_some_and(Value::is_object);
    if padding == 0 || !has_object_result {
        return (response.clone(), response);
    }
    let mut sent = response.clone();
    let mut recorded = response;
    let length = usize::try_from(padding.div_ceil(4) * 4).unwrap_or(usize::MAX / 2);
    append_block(&mut sent, "A".repeat(length));
    append_block(&mut recorded, format!("<{length} bytes of filler>"));
    (sent, recorded)
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

/// `text` as bytes, with each U+FFFD turned into a lone 0xFF byte when `invalid_utf8` (a
/// response that is not UTF-8); the recorded message keeps the U+FFFD.
pub fn encode(text: String, invalid_utf8: bool) -> Vec<u8> {
    if !invalid_utf8 {
        return text.into_bytes();
    }
    let mut out = Vec::with_capacity(text.len());
    let mut buf = [0u8; 4];
    for c in text.chars() {
        match c {
            '\u{fffd}' => out.push(0xff),
            c => out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes()),
        }
    }
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
        let blocks = sent["result"]["content"].as_array().unwrap();
        assert_eq!(blocks.len(), 2);
        assert_eq!(blocks[1]["data"].as_str().unwrap().len(), 12);
        assert_eq!(
            recorded["result"]["content"][1]["data"],
            "<12 bytes of filler>"
        );
        let (plain, _) = pad(response.clone(), 0);
        assert_eq!(plain, response);
        let (created, _) = pad(json!({"id": 1, "result": {}}), 4);
        assert_eq!(created["result"]["content"][0]["type"], "image");
        let (error, _) = pad(json!({"id": 1, "error": {"code": 1}}), 4);
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
        assert_eq!(encode("a\u{fffd}b".into(), true), b"a\xffb");
        assert_eq!(encode("a\u{fffd}".into(), false), "a\u{fffd}".as_bytes());
    }
}

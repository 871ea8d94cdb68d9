//! Faults of a hostile server around one handler's reply: junk and storms before it, a reply
//! cut off halfway, dripped a byte at a time, padded to many megabytes, sent twice, drowned in
//! stderr, or followed by the server going away. They let the `robust/` cases check that a
//! client survives the worst a server can do: a clear error of the right kind in time, no
//! panic, no hang, nothing left running, and a connection still usable where the protocol
//! allows it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Faults applied to one handler's reply. All default to off; see each field for the
/// transports it applies to.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Faults {
    /// Written before the reply, in order. Over stdio each item is a line; over HTTP each is
    /// an SSE event before the response (which makes the answer an SSE stream).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub before: Vec<Emit>,
    /// Add this many bytes of filler to the result (an `image` content block whose `data` is
    /// base64 filler; appended to `content`, which is created if missing), to make a very large
    /// message. Transcripts record the block's data as `<N bytes of filler>`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub padding_bytes: u64,
    /// Write the reply with each U+FFFD (the replacement character, `\ufffd` in the case
    /// file) turned into a lone 0xFF byte: a response that is not valid UTF-8.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub invalid_utf8: bool,
    /// Write the reply one byte at a time with this many milliseconds between bytes (the
    /// stdio line, or the HTTP body).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drip_ms: Option<u64>,
    /// Write only the first half of the reply, then stop as this says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncate: Option<Truncate>,
    /// stdio only: send the same response again this many milliseconds after the reply (a
    /// duplicate response, which the client must ignore).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duplicate_after_ms: Option<u64>,
    /// stdio only: write this many bytes of log lines to stderr before replying, from the
    /// reply's own task, so a client that does not drain stderr never gets the reply.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub stderr_bytes: u64,
    /// stdio only: what the server process does right after the reply. From the moment the
    /// reply is written it reads no more messages (what the client sends next is neither
    /// recorded nor answered), so the transcript does not depend on how fast the client notices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub then: Option<Then>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn one() -> u32 {
    1
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

/// One thing written ahead of a reply. Exactly one of `message`, `raw` and `bytes` is given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Emit {
    /// A JSON value written as one message: a notification, a response with an unknown id,
    /// or JSON that is not JSON-RPC at all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Value>,
    /// Text written verbatim as one line (malformed JSON, for example).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<String>,
    /// Bytes written verbatim as one line, for what JSON text cannot hold (invalid UTF-8):
    /// a string whose characters stand for their UTF-8 bytes and where `\xNN` (two hex
    /// digits) is one byte; in the JSON file `"\\xff\\xfe{}"` is the bytes FF FE `{}`.
    /// A backslash itself is `\x5c`.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "byte_string")]
    #[schemars(with = "Option<String>")]
    pub bytes: Option<Vec<u8>>,
    /// How many times it is written, one after the other (a storm). The transcript records
    /// it once, followed by a note with the count.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub repeat: u32,
}

/// How a reply cut in half ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Truncate {
    /// The server dies mid-response: the stdio fake exits with status 1; the HTTP fake drops
    /// the connection.
    Exit,
    /// Part of a line, then nothing: the server stays alive and silent (over HTTP the body is
    /// held open).
    Stall,
}

/// What the stdio server process does right after a reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Then {
    /// Exit with status 0 (answer, then crash).
    Exit,
    /// Close stdout and keep running until stdin ends or a signal comes (the client sees end
    /// of file on a server that is still alive, and must still shut it down).
    CloseStdout,
}

impl Emit {
    /// The bytes of one copy of this item (without a line end), and whether it was a JSON
    /// message; `None` when the item does not give exactly one of its three forms.
    pub fn payload(&self) -> Option<(Vec<u8>, bool)> {
        match (&self.message, &self.raw, &self.bytes) {
            (Some(m), None, None) => Some((m.to_string().into_bytes(), true)),
            (None, Some(r), None) => Some((r.clone().into_bytes(), false)),
            (None, None, Some(b)) => Some((b.clone(), false)),
            _ => None,
        }
    }
}

/// Byte strings: text with `\xNN` escapes for bytes that are not UTF-8.
pub mod byte_string {
    use serde::de::Error as _;
    use serde::{Deserialize, Deserializer, Serializer};

    /// Decodes `\xNN` escapes; every other character stands for its UTF-8 bytes.
    pub fn decode(text: &str) -> Result<Vec<u8>, String> {
        let mut out = Vec::with_capacity(text.len());
        let mut rest = text;
        while let Some(at) = rest.find('\\') {
            out.extend_from_slice(&rest.as_bytes()[..at]);
            let hex = rest.get(at + 1..at + 4).filter(|h| h.starts_with('x'));
            let byte = hex.and_then(|h| u8::from_str_radix(&h[1..], 16).ok());
            match byte {
                Some(b) if hex.is_some_and(|h| h[1..].chars().all(|c| c.is_ascii_hexdigit())) => {
                    out.push(b)
                }
                _ => {
                    return Err(format!(
                        "a backslash must start a \\xNN byte escape (two hex digits), found {:?}",
                        rest.get(at..(at + 4).min(rest.len()))
                            .unwrap_or(&rest[at..])
                    ));
                }
            }
            rest = &rest[at + 4..];
        }
        out.extend_from_slice(rest.as_bytes());
        Ok(out)
    }

    /// Encodes bytes: valid UTF-8 runs as text (printable ASCII and non-ASCII characters),
    /// everything else (and the backslash) as `\xNN`.
    pub fn encode(bytes: &[u8]) -> String {
        let mut out = String::new();
        for chunk in bytes.utf8_chunks() {
            for c in chunk.valid().chars() {
                if c == '\\' || c.is_control() {
                    let mut buf = [0u8; 4];
                    for b in c.encode_utf8(&mut buf).bytes() {
                        out.push_str(&format!("\\x{b:02x}"));
                    }
                } else {
                    out.push(c);
                }
            }
            for b in chunk.invalid() {
                out.push_str(&format!("\\x{b:02x}"));
            }
        }
        out
    }

    pub(crate) fn serialize<S: Serializer>(v: &Option<Vec<u8>>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(bytes) => s.serialize_str(&encode(bytes)),
            None => s.serialize_none(),
        }
    }

    /// The text form, or (as older files wrote it) a list of byte values.
    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Vec<u8>>, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Form {
            Text(String),
            Values(Vec<u8>),
        }
        match Form::deserialize(d) {
            Ok(Form::Text(text)) => decode(&text).map(Some).map_err(D::Error::custom),
            Ok(Form::Values(bytes)) => Ok(Some(bytes)),
            Err(_) => Err(D::Error::custom(
                r#"expected a byte string: text with \xNN escapes, e.g. "\\xff\\xfe{}""#,
            )),
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn bytes_round_trip_through_text() {
            let raw = b"\xff\xfe{}\\ \xc3(\n\xe2\x9c\x93".to_vec();
            let text = encode(&raw);
            assert_eq!(text, "\\xff\\xfe{}\\x5c \\xc3(\\x0a\u{2713}");
            assert_eq!(decode(&text).unwrap(), raw);
            assert!(decode("\\x4").is_err());
            assert!(decode("a\\n").is_err());
        }
    }
}

//! JSON-RPC 2.0 framing: building the messages we send and sorting the ones we receive.
//!
//! Pure functions with no I/O, so every transport shares one reading of the wire format and
//! the rules (what counts as a response, a request, a notification) are unit-tested here.
//! [`response_id`] reads just enough of a message that cannot be used (not JSON, not UTF-8, or
//! cut at the size cap) to tell which of our requests it answers, so that request fails at once
//! with `invalid_response` instead of waiting for its timeout.

use serde_json::{Map, Value, json};

use crate::error::{Error, ErrorKind};

/// JSON-RPC "method not found", our answer to server requests we do not implement.
pub(crate) const METHOD_NOT_FOUND: i64 = -32601;

/// JSON-RPC "invalid params", which a server answers to a cursor it does not know.
pub(crate) const INVALID_PARAMS: i64 = -32602;

/// JSON-RPC "internal error": a received task that cannot give its result (2025-11-25).
pub(crate) const INTERNAL_ERROR: i64 = -32603;

/// A request object with an integer id. Built member by member rather than with `json!`,
/// which would copy `params` through the serializer on every request.
/// The id a request is re-issued under when the 2026-07-28 revision says to send it again as
/// a new request (its HTTP response stream broke): the negative of its own id, which the
/// session, counting up from 0, never hands out. One place knows this, so the transport
/// (which sends it) and the listener (which takes a subscription re-issued so as its own)
/// agree.
pub(crate) fn reissued_id(id: i64) -> i64 {
    -id
}

/// The ids a message tagged `id` may belong to: a request sent under `id`, or one sent under
/// another id and re-issued as `id` (see [`reissued_id`]).
pub(crate) fn original_ids(id: i64) -> impl Iterator<Item = i64> {
    [Some(id), id.checked_neg()].into_iter().flatten()
}

pub(crate) fn request(id: i64, method: &str, params: Value) -> Value {
    let mut m = Map::new();
    m.insert("jsonrpc".into(), Value::from("2.0"));
    m.insert("id".into(), Value::from(id));
    m.insert("method".into(), Value::from(method));
    m.insert("params".into(), params);
    Value::Object(m)
}

/// A notification object (it has no id).
pub(crate) fn notification(method: &str, params: Option<Value>) -> Value {
    let mut m = Map::new();
    m.insert("jsonrpc".into(), json!("2.0"));
    m.insert("method".into(), json!(method));
    if let Some(params) = params {
        m.insert("params".into(), params);
    }
    Value::Object(m)
}

/// A success response echoing the server's request id.
pub(crate) fn result_response(id: Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// An error response echoing the server's request id.
pub(crate) fn error_response(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// One message received from the server, sorted by what it asks of us.
#[derive(Debug, PartialEq)]
pub enum Incoming {
    /// An answer to one of our requests: the result, or the JSON-RPC error mapped to an
    /// [`Error`] of kind `protocol_error` carrying the code.
    Response {
        /// The request id it answers (a string or a number).
        id: Value,
        /// The `result`, or why there is none.
        outcome: Result<Value, Error>,
    },
    /// A request from the server, which must be answered.
    Request {
        /// Its id (a string or a number).
        id: Value,
        /// Its method.
        method: String,
        /// Its `params` as received (`null` when absent).
        params: Value,
    },
    /// A notification from the server.
    Notification {
        /// Its method.
        method: String,
        /// Its `params` as received (`null` when absent).
        params: Value,
    },
}

/// Sorts one received message; `Err` says why it is not a JSON-RPC message (to be reported and
/// skipped by the caller).
pub fn classify(line: &[u8]) -> Result<Incoming, String> {
    let value: Value = serde_json::from_slice(line).map_err(|e| format!("not JSON ({e})"))?;
    classify_value(value)
}

/// Sorts one received frame (a stdio line, an SSE event, a JSON body), which may be a JSON-RPC
/// batch: a non-empty array of messages, which 2025-03-26 lets a peer send and obliges the
/// receiver to accept. Each element is sorted on its own, in order; a frame that is not JSON,
/// or an empty array, is one `Err`.
pub fn classify_frame(frame: &[u8]) -> Vec<Result<Incoming, String>> {
    match serde_json::from_slice(frame) {
        Err(e) => vec![Err(format!("not JSON ({e})"))],
        Ok(Value::Array(items)) if items.is_empty() => vec![Err("an empty batch".into())],
        Ok(Value::Array(items)) => items
            .into_iter()
            .map(|item| classify_value(item).map_err(|why| format!("in a batch, {why}")))
            .collect(),
        Ok(value) => vec![classify_value(value)],
    }
}

fn classify_value(value: Value) -> Result<Incoming, String> {
    let Value::Object(mut obj) = value else {
        return Err("not a JSON object".into());
    };
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err("no \"jsonrpc\": \"2.0\" member".into());
    }
    let id = obj.get("id").filter(|id| id.is_string() || id.is_number());
    if let Some(method) = obj.get("method") {
        let Some(method) = method.as_str() else {
            return Err("\"method\" is not a string".into());
        };
        let method = method.to_owned();
        let id = id.cloned();
        let params = obj.remove("params").unwrap_or(Value::Null);
        return Ok(match id {
            Some(id) => Incoming::Request { id, method, params },
            None => Incoming::Notification { method, params },
        });
    }
    let Some(id) = id.cloned() else {
        return Err("a response without a usable id".into());
    };
    // The result is moved out, not copied: it is the bulk of the message.
    let outcome = match (obj.get("result").is_some(), obj.get("error")) {
        (true, None) => Ok(obj.remove("result").unwrap_or_default()),
        (false, Some(error)) => Err(rpc_error(error)),
        (true, Some(_)) => Err(Error::invalid(
            "response carries both \"result\" and \"error\"",
        )),
        (false, None) => Err(Error::invalid(
            "response carries neither \"result\" nor \"error\"",
        )),
    };
    Ok(Incoming::Response { id, outcome })
}

/// Maps a JSON-RPC `error` object to a `protocol_error` with its code; a malformed object is
/// `invalid_response`.
fn rpc_error(error: &Value) -> Error {
    let code = error.get("code").and_then(Value::as_i64);
    let message = error.get("message").and_then(Value::as_str);
    match (code, message) {
        (Some(code), message) => Error {
            kind: ErrorKind::ProtocolError,
            message: format!(
                "server answered with JSON-RPC error {code}: {}",
                message.unwrap_or("(no message)")
            ),
            code: Some(code),
            status: None,
            data: error.get("data").cloned(),
        },
        (None, _) => Error::invalid(format!(
            "response carries a malformed JSON-RPC error object: {error}"
        )),
    }
}

/// The integer id of the response a message appears to be, read leniently from its first
/// bytes: the message may be cut short, not valid JSON or not UTF-8. Only a top-level object
/// with an integer `"id"` and a `"result"` or `"error"` member, and no `"method"`, counts (in
/// the part that is there). Never fails: `None` when in doubt.
pub fn response_id(bytes: &[u8]) -> Option<i64> {
    let mut s = Scan { bytes, at: 0 };
    s.ws();
    s.eat(b'{')?;
    let (mut id, mut answer) = (None, false);
    loop {
        s.ws();
        let key = s.string()?;
        s.ws();
        s.eat(b':')?;
        s.ws();
        match key {
            b"id" => id = s.integer(),
            b"result" | b"error" => answer = true,
            b"method" => return None,
            _ => {}
        }
        if id.is_some() && answer {
            return id;
        }
        s.skip_value()?;
        s.ws();
        s.eat(b',')?;
    }
}

/// A cursor over the bytes [`response_id`] reads; every step returns `None` at the end.
struct Scan<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Scan<'a> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn eat(&mut self, b: u8) -> Option<()> {
        (self.peek()? == b).then(|| self.at += 1)
    }

    /// A string's raw bytes (escapes left as they are), the cursor after its closing quote.
    fn string(&mut self) -> Option<&'a [u8]> {
        self.eat(b'"')?;
        let start = self.at;
        loop {
            match self.peek()? {
                b'"' => break,
                b'\\' => self.at += 2,
                _ => self.at += 1,
            }
        }
        let raw = &self.bytes[start..self.at];
        self.at += 1;
        Some(raw)
    }

    /// A JSON integer (`-?(0|[1-9][0-9]*)`) followed by a delimiter; a fraction, an exponent
    /// or leading zeros (not JSON) make it no id of ours.
    fn integer(&mut self) -> Option<i64> {
        let start = self.at;
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        match self.peek()? {
            b'0' => self.at += 1,
            b'1'..=b'9' => {
                while self.peek().is_some_and(|b| b.is_ascii_digit()) {
                    self.at += 1;
                }
            }
            _ => return None,
        }
        let text = std::str::from_utf8(&self.bytes[start..self.at]).ok()?;
        let rest = self.at;
        self.ws();
        let delimited = matches!(self.peek(), Some(b',' | b'}'));
        self.at = rest;
        if delimited { text.parse().ok() } else { None }
    }

    /// Skips one value of any kind (nested values by counting brackets outside strings).
    fn skip_value(&mut self) -> Option<()> {
        let mut depth = 0usize;
        loop {
            match self.peek()? {
                b'"' => {
                    self.string()?;
                }
                b'{' | b'[' => {
                    depth += 1;
                    self.at += 1;
                }
                b'}' | b']' if depth > 0 => {
                    depth -= 1;
                    self.at += 1;
                }
                b',' if depth > 0 => self.at += 1,
                b',' | b'}' | b']' => return Some(()),
                _ => self.at += 1,
            }
            if depth == 0 && matches!(self.peek(), Some(b',' | b'}')) {
                return Some(());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_is_sorted_element_by_element() {
        let frame = br#"[{"jsonrpc":"2.0","method":"notifications/message"},{"jsonrpc":"2.0","id":7,"method":"ping"},3]"#;
        let items = classify_frame(frame);
        assert_eq!(items.len(), 3);
        assert!(matches!(&items[0], Ok(Incoming::Notification { .. })));
        assert!(matches!(&items[1], Ok(Incoming::Request { id, .. }) if *id == json!(7)));
        assert!(items[2].as_ref().is_err_and(|why| why.contains("batch")));
        assert!(classify_frame(b"[]")[0].is_err());
        assert!(classify_frame(b"[").len() == 1 && classify_frame(b"[")[0].is_err());
        let single = classify_frame(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
        assert!(matches!(&single[..], [Ok(Incoming::Response { .. })]));
    }

    #[test]
    fn sorts_responses_requests_and_notifications() {
        let r = classify(br#"{"jsonrpc":"2.0","id":3,"result":{"a":1}}"#).unwrap();
        assert_eq!(
            r,
            Incoming::Response {
                id: json!(3),
                outcome: Ok(json!({"a":1}))
            }
        );
        let q = classify(br#"{"jsonrpc":"2.0","id":"s1","method":"ping"}"#).unwrap();
        assert_eq!(
            q,
            Incoming::Request {
                id: json!("s1"),
                method: "ping".into(),
                params: Value::Null,
            }
        );
        let n = br#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info"}}"#;
        assert_eq!(
            classify(n).unwrap(),
            Incoming::Notification {
                method: "notifications/message".into(),
                params: json!({"level": "info"}),
            }
        );
    }

    #[test]
    fn json_rpc_error_becomes_protocol_error_with_code() {
        let r = classify(br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad"}}"#)
            .unwrap();
        let Incoming::Response { outcome, .. } = r else {
            panic!("not a response")
        };
        let e = outcome.unwrap_err();
        assert_eq!(e.kind, ErrorKind::ProtocolError);
        assert_eq!(e.code, Some(-32602));
        assert!(e.message.contains("bad"));
    }

    #[test]
    fn malformed_lines_are_refused() {
        for line in [
            &b"not json"[..],
            b"[1,2]",
            br#"{"id":1,"result":{}}"#,
            br#"{"jsonrpc":"1.0","id":1,"result":{}}"#,
            br#"{"jsonrpc":"2.0","result":{}}"#,
            br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}"#,
            br#"{"jsonrpc":"2.0","method":7}"#,
            b"\xff\xfe",
        ] {
            assert!(
                classify(line).is_err(),
                "{:?}",
                String::from_utf8_lossy(line)
            );
        }
    }

    #[test]
    fn odd_responses_are_invalid_not_dropped() {
        for line in [
            &br#"{"jsonrpc":"2.0","id":1}"#[..],
            br#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}"#,
            br#"{"jsonrpc":"2.0","id":1,"error":{"message":"no code"}}"#,
        ] {
            let Ok(Incoming::Response { outcome, .. }) = classify(line) else {
                panic!("not a response")
            };
            assert_eq!(outcome.unwrap_err().kind, ErrorKind::InvalidResponse);
        }
    }

    #[test]
    fn the_id_of_an_unusable_response_is_found_leniently() {
        for (text, id) in [
            (
                &b"{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"t\":\"\xff\"}}"[..],
                Some(7),
            ),
            (
                br#" { "result" : {"a":[1,{"b":"}"}]}, "id" : -3 , "x""#,
                Some(-3),
            ),
            (br#"{"jsonrpc":"2.0","error":{"code":1},"id":12}"#, Some(12)),
            (br#"{"jsonrpc":"2.0","id":4,"result":{"content":"#, Some(4)),
            (br#"{"id":"4","result":{}}"#, None),
            (br#"{"id":4.5,"result":{}}"#, None),
            (br#"{"id":4,"method":"ping","result":{}}"#, None),
            (br#"{"method":"ping","id":4,"result":{}}"#, None),
            (br#"{"id":4}"#, None),
            (br#"{"x":""id":1","result":1}"#, None),
            (b"[1]", None),
            (b"", None),
            (br#"{"id":99999999999999999999,"result":1}"#, None),
            (br#"{"id":-0,"result":1}"#, Some(0)),
            (br#"{"id":0,"result":1}"#, Some(0)),
            // Regression (fuzz/regressions/jsonrpc_classify/id-with-leading-zeros): leading
            // zeros are not JSON, so such an id names no request.
            (br#"{"id":007,"result":1}"#, None),
            (br#"{"id":-0001428581654,"error":{}}"#, None),
        ] {
            assert_eq!(response_id(text), id, "{}", String::from_utf8_lossy(text));
        }
    }

    #[test]
    fn notifications_have_no_id() {
        let n = notification("notifications/initialized", None);
        assert_eq!(
            n,
            json!({"jsonrpc":"2.0","method":"notifications/initialized"})
        );
        let n = notification("x", Some(json!({})));
        assert_eq!(n, json!({"jsonrpc":"2.0","method":"x","params":{}}));
        assert!(!request(1, "ping", json!({})).to_string().contains('\n'));
    }
}

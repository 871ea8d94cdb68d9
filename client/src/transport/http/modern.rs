//! What Streamable HTTP does differently in the 2026-07-28 era: the request-metadata headers
//! mirrored from the body (`Mcp-Method`, `Mcp-Name`, and `Mcp-Param-{Name}` for the arguments a
//! listed tool annotates with `x-mcp-header`), and reading the JSON-RPC error that a
//! modern server puts in the body of a `4xx` answer (an `UnsupportedProtocolVersionError`
//! comes as `400`, an unknown method as `404` with `-32601`), which is what tells a dual-era
//! client whether to stay modern or fall back.
//!
//! Sessions, the GET stream and `notifications/cancelled` are simply not used in this era;
//! see `mod.rs` and the session.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use reqwest::Response;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;

use crate::era::param_headers::ParamHeaders;
use crate::error::{Error, ErrorKind};
use crate::seams::Seams;
use crate::seams::wire::Wire;

const MCP_METHOD: HeaderName = HeaderName::from_static("mcp-method");
const MCP_NAME: HeaderName = HeaderName::from_static("mcp-name");

/// How much of an error body is read, at most.
const ERROR_BODY_LIMIT: usize = 64 * 1024;

/// The `Mcp-Method` header of every request, `Mcp-Name` for `tools/call` and `prompts/get`
/// (`params.name`), `resources/read` (`params.uri`) and the tasks extension's `tasks/get`,
/// `tasks/update` and `tasks/cancel` (`params.taskId`), and for `tools/call` of a listed tool
/// one `Mcp-Param-{Name}` per `x-mcp-header` argument present (see
/// [`crate::era::param_headers`]). Unsafe values are sent as `=?base64?…?=`.
pub(super) fn mirrored_headers(message: &Value, known: &ParamHeaders, seams: &Seams) -> HeaderMap {
    let mut headers = HeaderMap::new();
    let Some(method) = message.get("method").and_then(Value::as_str) else {
        return headers;
    };
    let raw = seams.raw_header_values();
    headers.insert(MCP_METHOD, header_value(method, raw));
    let source = match method {
        "tools/call" | "prompts/get" => "name",
        "resources/read" => "uri",
        "tasks/get" | "tasks/update" | "tasks/cancel" => "taskId",
        _ => return headers,
    };
    let params = message.get("params");
    let name = params.and_then(|p| p.get(source)).and_then(Value::as_str);
    let Some(name) = name else {
        return headers;
    };
    headers.insert(MCP_NAME, header_value(name, raw));
    if method == "tools/call" {
        let found = known.values(name, params.and_then(|p| p.get("arguments")));
        let (mut present, mut absent) = (Vec::new(), Vec::new());
        for (header, value) in found {
            match value {
                Some(value) => present.push((header, value)),
                None => absent.push(header),
            }
        }
        for (header, value) in seams.param_headers(present, absent) {
            // A valid annotation is a token, so the name always makes a header name.
            if let Ok(header) = HeaderName::try_from(header) {
                headers.append(header, header_value(&value, raw));
            }
        }
    }
    headers
}

/// A header value: as is when it is plain, visible ASCII (spaces inside allowed), otherwise
/// (or when it looks like the sentinel itself) `=?base64?…?=` of its UTF-8 bytes. `raw` (a
/// deliberate defect) sends every value as it is, as far as a header can hold it.
fn header_value(text: &str, raw: bool) -> HeaderValue {
    let plain = text
        .bytes()
        .all(|b| b == b' ' || b == b'\t' || b.is_ascii_graphic())
        && text.trim_matches([' ', '\t']) == text
        && !(text.starts_with("=?base64?") && text.ends_with("?="));
    if raw && let Ok(value) = HeaderValue::from_bytes(text.as_bytes()) {
        return value;
    }
    let encoded;
    let value = match plain {
        true => text,
        false => {
            encoded = format!("=?base64?{}?=", STANDARD.encode(text));
            &encoded
        }
    };
    // Both forms are visible ASCII by construction.
    HeaderValue::from_str(value).unwrap_or_else(|_| HeaderValue::from_static(""))
}

/// The error for a non-success answer in the modern era: a JSON-RPC error in the body becomes
/// `protocol_error` with its code, data and the HTTP status; anything else is `http_status`.
pub(super) async fn error_answer(reply: Response, what: &str) -> Error {
    let status = reply.status();
    error_from_body(status, &read_error_body(reply).await, what)
}

/// The body of an error answer, as far as [`ERROR_BODY_LIMIT`].
pub(super) async fn read_error_body(mut reply: Response) -> Vec<u8> {
    let mut body = Vec::new();
    while body.len() < ERROR_BODY_LIMIT {
        match reply.chunk().await {
            Ok(Some(chunk)) => body.extend_from_slice(&chunk),
            Ok(None) | Err(_) => break,
        }
    }
    body
}

/// The JSON-RPC error of an error answer's body: its code and the error object.
fn rpc_error(body: &[u8]) -> Option<(i64, Value)> {
    let Ok(Value::Object(mut message)) = serde_json::from_slice::<Value>(body) else {
        return None;
    };
    let error = message.remove("error")?;
    let code = error.get("code").and_then(Value::as_i64)?;
    Some((code, error))
}

/// Whether an error answer's body is a recognised modern JSON-RPC error: what a 2026-07-28
/// server answers for an unknown method (-32601) or a refused version, capability or header,
/// and a legacy HTTP+SSE server never does.
pub(super) fn is_modern_refusal(body: &[u8]) -> bool {
    rpc_error(body).is_some_and(|(code, _)| code == -32601 || crate::era::is_modern_error(code))
}

/// [`error_answer`] from a body already read.
pub(super) fn error_from_body(status: reqwest::StatusCode, body: &[u8], what: &str) -> Error {
    let Some((code, error)) = rpc_error(body) else {
        return Error::http_status(
            status.as_u16(),
            format!("the server answered HTTP {status} to {what}"),
        );
    };
    let text = error
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("(no message)");
    Error {
        kind: ErrorKind::ProtocolError,
        message: format!(
            "the server answered HTTP {status} to {what} with JSON-RPC error {code}: {text}"
        ),
        code: Some(code),
        status: Some(status.as_u16()),
        data: error.get("data").cloned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn modern_refusals_are_told_from_other_bodies() {
        let body = |v: Value| v.to_string().into_bytes();
        let unknown = json!({"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"x"}});
        assert!(is_modern_refusal(&body(unknown)));
        let version = json!({"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"x"}});
        assert!(is_modern_refusal(&body(version)));
        let other = json!({"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"x"}});
        assert!(!is_modern_refusal(&body(other)));
        assert!(!is_modern_refusal(b"Method Not Allowed"));
        assert!(!is_modern_refusal(b""));
    }

    #[test]
    fn names_are_mirrored_plain_or_encoded() {
        let (known, seams) = (ParamHeaders::default(), Seams::default());
        let call = json!({"method":"tools/call","params":{"name":"get_weather"}});
        let h = mirrored_headers(&call, &known, &seams);
        assert_eq!(h["mcp-method"], "tools/call");
        assert_eq!(h["mcp-name"], "get_weather");
        let read = json!({"method":"resources/read","params":{"uri":"file:///a b"}});
        assert_eq!(
            mirrored_headers(&read, &known, &seams)["mcp-name"],
            "file:///a b"
        );
        for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
            let task = json!({"method": method, "params": {"taskId": "task-1"}});
            assert_eq!(
                mirrored_headers(&task, &known, &seams)["mcp-name"],
                "task-1"
            );
        }
        let list = json!({"method":"tools/list","params":{"name":"x"}});
        let h = mirrored_headers(&list, &known, &seams);
        assert_eq!(h["mcp-method"], "tools/list");
        assert!(h.get("mcp-name").is_none());
        for (text, encoded) in [
            ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
            (" padded ", "=?base64?IHBhZGRlZCA=?="),
            ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
            ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
        ] {
            assert_eq!(header_value(text, false), encoded, "{text:?}");
        }
    }

    #[test]
    fn annotated_arguments_become_param_headers() {
        let known = ParamHeaders::default();
        let schema = json!({"properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "greeting": {"type": "string", "x-mcp-header": "Greeting"},
            "n": {"type": "integer", "x-mcp-header": "N"},
            "gone": {"type": "string", "x-mcp-header": "Gone"}
        }});
        let annotations = crate::era::param_headers::annotations(Some(&schema)).unwrap();
        known.replace([("t".to_owned(), annotations)].into());
        let call = json!({"method": "tools/call", "params": {"name": "t", "arguments": {
            "region": "us-west1", "greeting": "Hello, 世界", "n": 42, "gone": null
        }}});
        let h = mirrored_headers(&call, &known, &Seams::default());
        assert_eq!(h["mcp-param-region"], "us-west1");
        assert_eq!(h["mcp-param-greeting"], "=?base64?SGVsbG8sIOS4lueVjA==?=");
        assert_eq!(h["mcp-param-n"], "42");
        assert!(h.get("mcp-param-gone").is_none());
        #[cfg(feature = "defects")]
        {
            let raw = Seams::only("raw-header-values");
            let h = mirrored_headers(&call, &known, &raw);
            assert_eq!(h["mcp-param-greeting"].as_bytes(), "Hello, 世界".as_bytes());
        }
        let other =
            json!({"method": "tools/call", "params": {"name": "u", "arguments": {"region": "x"}}});
        let h = mirrored_headers(&other, &known, &Seams::default());
        assert!(h.get("mcp-param-region").is_none());
    }
}

//! The values a modern HTTP request mirrors into headers, as a server validates them: the
//! `=?base64?…?=` sentinel decoded before any comparison, and the `Mcp-Param-{Name}` headers
//! of a `tools/call` checked against the arguments for every `x-mcp-header` annotation of the
//! tool's listed `inputSchema` (the first definition of that name in a scripted `tools/list`
//! result).
//!
//! Only annotations a server can use are enforced: on a property reached from the root through
//! `properties` alone, with a token for a name and `string`, `integer` or `boolean` for a type.
//! A value present (not null) needs its header, equal after decoding (integers compared as
//! numbers); a value absent or null needs the header absent, since any header would then say
//! something the body does not.

use base64::Engine as _;
use base64::alphabet;
use base64::engine::{GeneralPurpose, GeneralPurposeConfig};
use mcp_harness_scenarios::model::{Reply, ServerScript};
use serde_json::Value;

/// The prefix of the headers a tool's `x-mcp-header` arguments are mirrored into (lower-case).
pub const PARAM_PREFIX: &str = "mcp-param-";

/// One enforced annotation: the lower-case header name and the property path.
#[derive(Debug, Clone, PartialEq)]
pub struct Enforced {
    /// `mcp-param-{name}`, lower-case (header names compare case-insensitively).
    pub header: String,
    /// The chain of `properties` keys to the value.
    pub path: Vec<String>,
}

/// RFC 4648 §4 decoding: standard alphabet, padding required, non-zero trailing bits accepted
/// (§3.5 lets a decoder accept them; a server has no reason to refuse them).
const SENTINEL: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_allow_trailing_bits(true),
);

/// The text a mirrored header stands for: the decoded sentinel, or the value itself. `None`
/// when the sentinel does not hold standard, padded base64 of UTF-8.
pub fn decoded(value: &str) -> Option<String> {
    match value
        .strip_prefix("=?base64?")
        .and_then(|rest| rest.strip_suffix("?="))
    {
        Some(encoded) => String::from_utf8(SENTINEL.decode(encoded).ok()?).ok(),
        None => Some(value.to_owned()),
    }
}

/// The enforced annotations of the tool `name` as the script lists it.
pub fn enforced(script: &ServerScript, name: &str) -> Vec<Enforced> {
    let listed = script
        .handlers
        .iter()
        .filter(|h| h.method == "tools/list")
        .filter_map(|h| match &h.reply {
            Reply::Result(result) => result.get("tools").and_then(Value::as_array),
            _ => None,
        })
        .flatten()
        .find(|tool| tool.get("name").and_then(Value::as_str) == Some(name));
    let mut found = Vec::new();
    if let Some(schema) = listed.and_then(|t| t.get("inputSchema")) {
        collect(schema, &mut Vec::new(), &mut found);
    }
    found
}

fn collect(schema: &Value, path: &mut Vec<String>, found: &mut Vec<Enforced>) {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (key, property) in properties {
        path.push(key.clone());
        let header = property.get("x-mcp-header").and_then(Value::as_str);
        let usable_type = |t: &Value| matches!(t.as_str(), Some("string" | "integer" | "boolean"));
        let typed = match property.get("type") {
            Some(Value::Array(types)) => types.iter().any(usable_type),
            Some(t) => usable_type(t),
            None => false,
        };
        if let Some(header) = header
            && typed
            && !header.is_empty()
            && header
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c))
        {
            found.push(Enforced {
                header: format!("{PARAM_PREFIX}{}", header.to_ascii_lowercase()),
                path: path.clone(),
            });
        }
        collect(property, path, found);
        path.pop();
    }
}

/// A mismatch: the header, what the body asks for (`None`: no header), what came.
pub type Mismatch = (String, Option<String>, Option<String>);

/// Checks every enforced annotation of a `tools/call` against its arguments; `header` reads a
/// header by lower-case name (`None` when absent, repeated or not visible ASCII).
pub fn check(
    enforced: &[Enforced],
    arguments: Option<&Value>,
    header: &dyn Fn(&str) -> Option<String>,
) -> Result<(), Mismatch> {
    for e in enforced {
        let value = e
            .path
            .iter()
            .try_fold(arguments, |at, key| at.map(|v| v.get(key)))
            .flatten()
            .filter(|v| !v.is_null());
        let got = header(&e.header);
        let matches = match (value, got.as_deref().map(decoded)) {
            (None, None) => true,
            (Some(Value::Number(n)), Some(Some(text))) => {
                // Compared as numbers: `42` and `42.0` are the same value.
                text.trim().parse::<f64>().ok() == n.as_f64() && !text.trim().is_empty()
            }
            (Some(Value::Bool(b)), Some(Some(text))) => text == b.to_string(),
            (Some(Value::String(s)), Some(Some(text))) => text == *s,
            _ => false,
        };
        if !matches {
            let expected = value.map(|v| match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            });
            return Err((e.header.clone(), expected, got));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_harness_scenarios::model::Handler;
    use serde_json::json;

    #[test]
    fn sentinels_decode_strictly() {
        assert_eq!(decoded("us-west1").as_deref(), Some("us-west1"));
        assert_eq!(
            decoded("=?base64?SGVsbG8sIOS4lueVjA==?=").as_deref(),
            Some("Hello, 世界")
        );
        assert_eq!(
            decoded("=?base64?IHBhZGRlZCA=?=").as_deref(),
            Some(" padded ")
        );
        assert_eq!(decoded("=?base64?Zm9v?=").as_deref(), Some("foo"));
        assert_eq!(decoded("=?base64?Zg==?=").as_deref(), Some("f"));
        assert_eq!(
            decoded("=?base64?Zh==?=").as_deref(),
            Some("f"),
            "trailing bits"
        );
        assert_eq!(decoded("=?base64?Zg?="), None, "padding is required");
        assert_eq!(decoded("=?base64?Z*==?="), None);
        assert_eq!(decoded("=?base64?Zg==Zm9v?="), None);
        assert_eq!(decoded("=?base64?/w==?="), None, "not UTF-8");
    }

    #[test]
    fn listed_annotations_are_enforced() {
        let script = ServerScript {
            handlers: vec![Handler {
                method: "tools/list".into(),
                params: None,
                delay_ms: 0,
                reply: Reply::Result(json!({"tools": [{"name": "t", "inputSchema": {
                    "type": "object",
                    "properties": {
                        "region": {"type": "string", "x-mcp-header": "Region"},
                        "n": {"type": "integer", "x-mcp-header": "N"},
                        "on": {"type": "boolean", "x-mcp-header": "On"},
                        "f": {"type": "number", "x-mcp-header": "F"},
                        "deep": {"type": "object", "properties": {
                            "zone": {"type": ["string", "null"], "x-mcp-header": "Zone"}
                        }},
                        "list": {"type": "array", "items": {"type": "string", "x-mcp-header": "I"}}
                    }
                }}]})),
                times: None,
                http: None,
                faults: None,
                sends: Vec::new(),
            }],
            ..ServerScript::default()
        };
        let found = enforced(&script, "t");
        let mut headers: Vec<&str> = found.iter().map(|e| e.header.as_str()).collect();
        headers.sort();
        let want = [
            "mcp-param-n",
            "mcp-param-on",
            "mcp-param-region",
            "mcp-param-zone",
        ];
        assert_eq!(headers, want);
        assert_eq!(found.len(), 4);
        let args = json!({"region": "Hello, 世界", "n": 42, "on": true, "deep": {"zone": null}});
        let good = |name: &str| match name {
            "mcp-param-region" => Some("=?base64?SGVsbG8sIOS4lueVjA==?=".to_owned()),
            "mcp-param-n" => Some("42.0".to_owned()),
            "mcp-param-on" => Some("true".to_owned()),
            _ => None,
        };
        assert_eq!(check(&found, Some(&args), &good), Ok(()));
        let extra = |name: &str| match name {
            "mcp-param-zone" => Some(String::new()),
            other => good(other),
        };
        assert!(check(&found, Some(&args), &extra).is_err());
        let missing = |name: &str| good(name).filter(|_| name != "mcp-param-on");
        let (header, expected, got) = check(&found, Some(&args), &missing).unwrap_err();
        assert_eq!(
            (header.as_str(), expected.as_deref(), got),
            ("mcp-param-on", Some("true"), None)
        );
        assert!(enforced(&script, "other").is_empty());
    }
}

//! The canary: proof that a client fetched nothing it was not asked to.
//!
//! A server script may name a network URL that no correct client ever connects to (a
//! `$ref` in a tool's schema) by writing [`PLACEHOLDER`] where the URL's origin goes, e.g.
//! `"$ref": "{{canary}}/schemas/temperature.json"`. For each trial of such a case the runner
//! binds a listener on `127.0.0.1:0`, writes its origin (`http://127.0.0.1:PORT`) in place of
//! every occurrence of the placeholder in the script before a fake plays it (the stdio fake
//! gets it as `--canary URL`), and records every connection the listener accepts. A wire
//! check `on: "canary"` sees them, one item per connection, `{"connected": true,
//! "request": <the first line the client sent, or "">}`; `{"not_sent": {}}` asserts there
//! was none. Snapshots show the placeholder, never the port. [`HOST_PLACEHOLDER`] stands for
//! the bare `127.0.0.1:PORT`, for a URL of another scheme on the canary (`ws://`, `ftp://`,
//! `https://`).

use serde_json::Value;

use super::ServerScript;

/// The text a script writes where the canary's origin goes.
pub const PLACEHOLDER: &str = "{{canary}}";
/// The text a script writes where the canary's `host:port` goes.
pub const HOST_PLACEHOLDER: &str = "{{canary_host}}";
/// The text a script writes where the HTTP fake's own origin goes (`https://localhost:PORT`),
/// filled by the fake once it is bound; a stdio fake, which has no origin, leaves it.
pub const SERVER_PLACEHOLDER: &str = "{{server}}";

impl ServerScript {
    /// Whether any string of the script names the canary.
    pub fn uses_canary(&self) -> bool {
        serde_json::to_string(self)
            .is_ok_and(|text| text.contains(PLACEHOLDER) || text.contains(HOST_PLACEHOLDER))
    }

    /// The script with every occurrence of the placeholder, in any string or member name,
    /// replaced by `origin`.
    pub fn with_canary(&self, origin: &str) -> Result<ServerScript, String> {
        let mut value =
            serde_json::to_value(self).map_err(|e| format!("cannot copy the script: {e}"))?;
        replace(&mut value, origin);
        serde_json::from_value(value).map_err(|e| format!("cannot copy the script: {e}"))
    }
}

/// `text` with both placeholders filled from `origin` (`http://host:port`).
fn filled(text: &str, origin: &str) -> String {
    let host = origin.split_once("://").map_or(origin, |(_, host)| host);
    text.replace(HOST_PLACEHOLDER, host)
        .replace(PLACEHOLDER, origin)
}

impl ServerScript {
    /// The script with the fake's own `origin` where it names [`SERVER_PLACEHOLDER`].
    pub fn with_server_origin(&self, origin: &str) -> Result<ServerScript, String> {
        let text =
            serde_json::to_string(self).map_err(|e| format!("cannot copy the script: {e}"))?;
        if !text.contains(SERVER_PLACEHOLDER) {
            return Ok(self.clone());
        }
        let mut value: Value =
            serde_json::from_str(&text).map_err(|e| format!("cannot copy the script: {e}"))?;
        fill(&mut value, &|t: &str| t.replace(SERVER_PLACEHOLDER, origin));
        serde_json::from_value(value).map_err(|e| format!("cannot copy the script: {e}"))
    }
}

/// Every string of `value` through `f` (members' values only).
fn fill(value: &mut Value, f: &dyn Fn(&str) -> String) {
    match value {
        Value::String(text) => *text = f(text),
        Value::Array(items) => items.iter_mut().for_each(|v| fill(v, f)),
        Value::Object(map) => map.values_mut().for_each(|v| fill(v, f)),
        _ => {}
    }
}

fn replace(value: &mut Value, origin: &str) {
    match value {
        Value::String(text) if text.contains("{{canary") => {
            *text = filled(text, origin);
        }
        Value::Array(items) => items.iter_mut().for_each(|v| replace(v, origin)),
        Value::Object(map) => {
            let renamed: Vec<String> = map
                .keys()
                .filter(|k| k.contains("{{canary"))
                .cloned()
                .collect();
            for key in renamed {
                if let Some(v) = map.remove(&key) {
                    map.insert(filled(&key, origin), v);
                }
            }
            map.values_mut().for_each(|v| replace(v, origin));
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Handler, Reply};
    use serde_json::json;

    #[test]
    fn the_placeholder_is_found_and_replaced_everywhere() {
        let mut script = ServerScript::default();
        assert!(!script.uses_canary());
        script.handlers.push(Handler {
            reply: Reply::Result(json!({"tools": [{"name": "t", "outputSchema": {
                "$ref": "{{canary}}/s.json",
                "$defs": {"{{canary}}": {"enum": ["{{canary}}#x"]}}
            }}]})),
            ..Handler::builtin_echo()
        });
        assert!(script.uses_canary());
        let played = script.with_canary("http://127.0.0.1:9").unwrap();
        assert!(!played.uses_canary());
        let Reply::Result(result) = &played.handlers[0].reply else {
            panic!("not a result")
        };
        let schema = &result["tools"][0]["outputSchema"];
        assert_eq!(schema["$ref"], "http://127.0.0.1:9/s.json");
        assert_eq!(
            schema["$defs"]["http://127.0.0.1:9"]["enum"][0],
            "http://127.0.0.1:9#x"
        );
    }

    #[test]
    fn the_host_placeholder_is_the_bare_host_and_port() {
        let mut script = ServerScript::default();
        script.handlers.push(Handler {
            reply: Reply::Result(json!({"icons": ["ws://{{canary_host}}/i", "{{canary}}/j"]})),
            ..Handler::builtin_echo()
        });
        assert!(script.uses_canary());
        let played = script.with_canary("http://127.0.0.1:9").unwrap();
        let Reply::Result(result) = &played.handlers[0].reply else {
            panic!("not a result")
        };
        assert_eq!(
            result["icons"],
            json!(["ws://127.0.0.1:9/i", "http://127.0.0.1:9/j"])
        );
    }
}

//! Seam: messages the revision's published schema refuses, one schema rule family per
//! defect, so the harness's schema check (SCHEMA-01, SCHEMA-02) is seen to fail on each. The
//! requests are bent as they leave (a step of `sent.rs`), the `roots/list` answer where the
//! roots are chosen (`listening.rs`). The correct client's messages pass unchanged.
//!
//! Defects here: `arguments-as-string` (`type`: `tools/call` arguments as a JSON string),
//! `initialize-no-client-info` (`required`: `initialize` without `clientInfo`),
//! `log-level-unknown` (`enum`: `logging/setLevel` with the level `verbose`),
//! `completion-ref-type` (`const` in an `anyOf`: a `ref` of type `ref/tool`),
//! `roots-not-array` (`type`, in a response: `roots` as an object keyed by URI).

use serde_json::{Map, Value, json};

use super::Defects;

/// Bends `message`, a request about to be written, as the switched-on defects say.
pub(crate) fn bend(d: &Defects, method: &str, message: &mut Value) {
    let Some(Value::Object(params)) = message.get_mut("params") else {
        return;
    };
    match method {
        "tools/call" if d.arguments_as_string => {
            let arguments = params.get("arguments").cloned().unwrap_or(json!({}));
            params.insert("arguments".into(), Value::String(arguments.to_string()));
        }
        "initialize" if d.initialize_no_client_info => {
            params.remove("clientInfo");
        }
        "logging/setLevel" if d.log_level_unknown => {
            params.insert("level".into(), json!("verbose"));
        }
        "completion/complete" if d.completion_ref_type => {
            if let Some(Value::Object(reference)) = params.get_mut("ref") {
                reference.insert("type".into(), json!("ref/tool"));
            }
        }
        _ => {}
    }
}

impl Defects {
    /// The `roots` member of a `roots/list` answer; correct: `roots`, the array.
    pub(crate) fn roots_shape(&self, roots: Value) -> Value {
        if !self.roots_not_array {
            return roots;
        }
        let keyed: Map<String, Value> = roots
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|root| Some((root.get("uri")?.as_str()?.to_owned(), root.clone())))
            .collect();
        Value::Object(keyed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bent(name: &str, method: &str, params: Value) -> Value {
        let mut message = json!({"jsonrpc":"2.0","id":1,"method":method,"params":params});
        bend(&Defects::only(name), method, &mut message);
        message["params"].clone()
    }

    #[test]
    fn a_correct_client_sends_what_it_built() {
        let params = json!({"name":"echo","arguments":{"a":1}});
        assert_eq!(bent("reuse-ids", "tools/call", params.clone()), params);
        let roots = json!([{"uri":"file:///a"}]);
        assert_eq!(Defects::default().roots_shape(roots.clone()), roots);
    }

    #[test]
    fn each_defect_breaks_one_rule_family() {
        let call = bent(
            "arguments-as-string",
            "tools/call",
            json!({"name":"e","arguments":{"a":1}}),
        );
        assert_eq!(call["arguments"], json!("{\"a\":1}"));
        let init = bent(
            "initialize-no-client-info",
            "initialize",
            json!({"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}),
        );
        assert!(init.get("clientInfo").is_none());
        let level = bent(
            "log-level-unknown",
            "logging/setLevel",
            json!({"level":"warning"}),
        );
        assert_eq!(level["level"], "verbose");
        let complete = bent(
            "completion-ref-type",
            "completion/complete",
            json!({"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":""}}),
        );
        assert_eq!(complete["ref"]["type"], "ref/tool");
        let roots = Defects::only("roots-not-array").roots_shape(json!([{"uri":"file:///a"}]));
        assert_eq!(roots, json!({"file:///a":{"uri":"file:///a"}}));
    }
}

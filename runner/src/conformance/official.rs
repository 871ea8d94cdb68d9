//! Clients written for the official conformance suite (modelcontextprotocol/conformance) run
//! the cases that share an official scenario (`official_scenario`) unmodified. Such a client
//! reads `MCP_CONFORMANCE_SCENARIO`, `MCP_CONFORMANCE_CONTEXT` and the URL given last, speaks
//! no driver contract, and logs on stdout as it likes. Here: how the runner tells it from a
//! contract client, and the context the official suite would hand it.

use serde_json::{Map, Value};

use mcp_harness_scenarios::Case;

/// Whether a trial of `case` whose client printed `stdout_lines` is judged on the wire alone:
/// the case shares an official scenario and no line is an attempt at an outcome line (a JSON
/// object with a `step` or an `op`). Such a client's stdout is its log. A contract client
/// that tries and gets its lines wrong is judged on the contract, as on every case.
pub fn wire_only(case: &Case, stdout_lines: &[String]) -> bool {
    case.scenario.official_scenario.is_some() && !stdout_lines.iter().any(|l| outcome_like(l))
}

fn outcome_like(line: &str) -> bool {
    match serde_json::from_str::<Value>(line) {
        Ok(Value::Object(fields)) => fields.contains_key("step") || fields.contains_key("op"),
        _ => false,
    }
}

/// `MCP_CONFORMANCE_CONTEXT` as the official suite builds it: the scenario's `name` beside
/// the scenario's data, set only where a scenario has data. The data the harness has for it
/// is a pre-registered client's `client_id` and `client_secret` (the official
/// `auth/pre-registration` and `auth/client-credentials-basic` pass these), taken from the
/// trial's `MCP_HARNESS_AUTH_CLIENT_*` variables.
pub fn context(official: &str, vars: &[(&str, String)]) -> Option<String> {
    let var = |name: &str| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| v);
    let mut fields = Map::new();
    fields.insert("name".into(), official.into());
    if let Some(id) = var("MCP_HARNESS_AUTH_CLIENT_ID") {
        fields.insert("client_id".into(), id.as_str().into());
        if let Some(secret) = var("MCP_HARNESS_AUTH_CLIENT_SECRET") {
            fields.insert("client_secret".into(), secret.as_str().into());
        }
    }
    (fields.len() > 1).then(|| Value::Object(fields).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_pre_registered_client_makes_a_context() {
        assert_eq!(
            context("initialize", &[("MCP_HARNESS_SERVER_URL", "u".into())]),
            None
        );
        let vars = [
            ("MCP_HARNESS_AUTH_CLIENT_ID", "id-1".to_owned()),
            ("MCP_HARNESS_AUTH_CLIENT_SECRET", "cs-2".to_owned()),
        ];
        let got: Value =
            serde_json::from_str(&context("auth/pre-registration", &vars).unwrap()).unwrap();
        assert_eq!(
            got,
            serde_json::json!({"name": "auth/pre-registration", "client_id": "id-1", "client_secret": "cs-2"})
        );
    }

    #[test]
    fn a_json_object_with_step_or_op_is_a_try_at_an_outcome_line() {
        for line in [
            r#"{"step":0,"op":"connect","ok":{}}"#,
            r#"{"op":"connect"}"#,
            r#"{"step":7}"#,
        ] {
            assert!(outcome_like(line), "{line}");
        }
        for line in [
            "Connecting to MCP server at: http://127.0.0.1:1/mcp",
            "✅ Received response: {",
            r#"{"tools":[]}"#,
            "{ tools: [] }",
            "[1,2]",
        ] {
            assert!(!outcome_like(line), "{line}");
        }
    }
}

//! Many servers at once: a case may give the client extra servers beside the main one
//! (`servers`), each played by a fake of its own. The client is told about all of them and a
//! step names the one it is about; what is shared here is the main server's name, the rule
//! for the others' names, and the plan as the client receives it (each step with its server).

use serde_json::Value;

use super::Scenario;

/// The name the main server (`server`) goes by in `MCP_HARNESS_SERVERS`; no extra server may
/// take it.
pub const MAIN: &str = "main";

/// Why `name` cannot name an extra server, if it cannot: empty, `main`, or a character other
/// than a lower-case ASCII letter, a digit, `-` or `_` (it becomes part of file names).
pub fn invalid_name(name: &str) -> Option<String> {
    let usable = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
    match (name == MAIN, usable) {
        (true, _) => Some(format!(
            "{name:?} is the main server's name (`server`); expected another name"
        )),
        (false, false) => Some(format!(
            "{name:?} is not a server name; expected lower-case letters, digits, `-` and `_`"
        )),
        (false, true) => None,
    }
}

impl Scenario {
    /// The plan as the client receives it (`MCP_HARNESS_PLAN`): each step, with `server`
    /// on the steps that name an extra server.
    pub fn plan_json(&self) -> Value {
        let steps = self.plan.iter().enumerate().map(|(i, step)| {
            let mut value = serde_json::to_value(step).unwrap_or(Value::Null);
            if let (Some(Some(server)), Some(map)) =
                (self.plan_servers.get(i), value.as_object_mut())
            {
                map.insert("server".into(), Value::from(server.as_str()));
            }
            value
        });
        Value::Array(steps.collect())
    }

    /// Whether the case gives the client more than one server.
    pub fn has_extra_servers(&self) -> bool {
        !self.servers.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extra_server_names_are_checked() {
        assert_eq!(invalid_name("b"), None);
        assert_eq!(invalid_name("weather-2_x"), None);
        for bad in ["", "main", "B", "a b", "a/b", "ü"] {
            assert!(invalid_name(bad).is_some(), "{bad:?}");
        }
    }
}

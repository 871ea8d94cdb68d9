//! Many servers at once (CLIENTS.md, "Many servers"; the feature `many_servers`):
//! `MCP_HARNESS_SERVERS` read into [`Env::servers`], the server a step is about (its
//! `server`, default [`MAIN_SERVER`]), and the [`Env`] each server's steps are carried out
//! with: the trial's, with that server as its transport. So an adapter's `connect`, `step`
//! and `close` serve every server unchanged; only `exposed_tools` is new.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde_json::Value;

use crate::env::{Env, EnvError, Transport};
use crate::error::StepError;

/// The server a step without `server` is about.
pub const MAIN_SERVER: &str = "main";

/// Reads `MCP_HARNESS_SERVERS` (unset: no servers beyond the main one): a JSON object from
/// server name to `{"argv": [strings]}` or `{"url": string}`; URLs trust `ca_file`.
pub(crate) fn read_servers(
    raw: Option<String>,
    ca_file: Option<String>,
) -> Result<BTreeMap<String, Transport>, EnvError> {
    let Some(raw) = raw else {
        return Ok(BTreeMap::new());
    };
    let fail = |problem: String| EnvError {
        variable: "MCP_HARNESS_SERVERS",
        problem,
    };
    let expected = "a JSON object from server name to {\"argv\": [strings]} or {\"url\": string}";
    let Ok(Value::Object(all)) = serde_json::from_str::<Value>(&raw) else {
        return Err(fail(format!("expected {expected}")));
    };
    let mut servers = BTreeMap::new();
    for (name, entry) in all {
        let argv = entry.get("argv").and_then(Value::as_array).map(|argv| {
            argv.iter()
                .map(|a| a.as_str().map(str::to_owned))
                .collect::<Option<Vec<String>>>()
        });
        let transport = match (argv, entry.get("url")) {
            (Some(Some(command)), None) if !command.is_empty() => Transport::Stdio { command },
            (None, Some(Value::String(url))) => Transport::Http {
                url: url.clone(),
                ca_file: ca_file.clone(),
            },
            _ => {
                return Err(fail(format!(
                    "server {name:?} is {entry}; expected {expected}"
                )));
            }
        };
        servers.insert(name, transport);
    }
    Ok(servers)
}

/// The server `step` names (its `server`), else the main one.
pub fn server_of(step: &Value) -> Result<&str, StepError> {
    match step.get("server") {
        None | Some(Value::Null) => Ok(MAIN_SERVER),
        Some(Value::String(name)) => Ok(name),
        Some(other) => Err(StepError::unsupported(format!(
            "a step's \"server\" must be a server's name, not {other}"
        ))),
    }
}

impl Env {
    /// The environment the steps of `server` run with: this one for the main server, else
    /// this one with that server's transport; `None` for a server the harness did not give.
    pub fn for_server(&self, server: &str) -> Option<Cow<'_, Env>> {
        if server == MAIN_SERVER {
            return Some(Cow::Borrowed(self));
        }
        let transport = self.servers.get(server)?.clone();
        Some(Cow::Owned(Env {
            transport,
            ..self.clone()
        }))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Map, Value, json};

    use super::*;
    use crate::{Adapter, Step, block_on, read_env_from, run_plan};

    /// A library whose connection is the transport it was given; records every call.
    #[derive(Default)]
    struct Many<const DECLARED: bool> {
        calls: Vec<String>,
    }

    fn shown(t: &Transport) -> String {
        match t {
            Transport::Stdio { command } => command.join(" "),
            Transport::Http { url, .. } => url.clone(),
        }
    }

    impl<const DECLARED: bool> Adapter for Many<DECLARED> {
        type Connection = String;
        const OPS: &'static [&'static str] = &["call_tool"];
        const FEATURES: &'static [&'static str] = if DECLARED { &["many_servers"] } else { &[] };

        async fn connect(
            &mut self,
            env: &Env,
            _: &Map<String, Value>,
        ) -> Result<(String, Value), StepError> {
            self.calls
                .push(format!("connect {}", shown(&env.transport)));
            Ok((shown(&env.transport), json!({})))
        }

        async fn step(&mut self, c: &mut String, _: &Env, _: &Step) -> Result<Value, StepError> {
            Ok(json!({"text": [c.clone()]}))
        }

        async fn close(&mut self, c: String, _: &Env) -> Result<(), StepError> {
            self.calls.push(format!("close {c}"));
            Ok(())
        }

        async fn exposed_tools(
            &mut self,
            connections: &mut BTreeMap<String, String>,
            _: &Env,
        ) -> Result<Value, StepError> {
            Ok(json!({"servers": connections.keys().collect::<Vec<_>>()}))
        }
    }

    fn env(plan: Value, servers: &str) -> Env {
        let plan = plan.to_string();
        let servers = servers.to_owned();
        read_env_from(move |name| match name {
            "MCP_HARNESS_TRANSPORT" => Some("stdio".into()),
            "MCP_HARNESS_SERVER_COMMAND" => Some(r#"["main-argv"]"#.into()),
            "MCP_HARNESS_SERVERS" => Some(servers.clone()),
            "MCP_HARNESS_PLAN" => Some(plan.clone()),
            _ => None,
        })
        .unwrap()
    }

    fn run<A: Adapter + Default>(plan: Value) -> (Vec<Value>, A) {
        let servers = r#"{"main": {"argv": ["main-argv"]}, "b": {"argv": ["b-argv"]}}"#;
        let env = env(plan, servers);
        let mut adapter = A::default();
        let mut lines = Vec::new();
        block_on(run_plan(&mut adapter, &env, |line| lines.push(line)));
        (lines, adapter)
    }

    fn kinds(lines: &[Value]) -> Vec<&str> {
        lines
            .iter()
            .map(|l| l["error"]["kind"].as_str().unwrap_or("ok"))
            .collect()
    }

    #[test]
    fn each_server_is_its_own_connection_with_the_feature_and_refused_without() {
        let plan = json!([
            {"op": "connect"},
            {"op": "connect", "server": "b"},
            {"op": "exposed_tools"},
            {"op": "call_tool", "name": "x", "server": "b"},
            {"op": "close", "server": "b"},
            {"op": "call_tool", "name": "x", "server": "b"},
            {"op": "call_tool", "name": "x"},
            {"op": "connect", "server": "nowhere"}
        ]);
        let (lines, adapter) = run::<Many<true>>(plan.clone());
        let want = [
            "ok",
            "ok",
            "ok",
            "ok",
            "ok",
            "transport_closed",
            "ok",
            "transport_closed",
        ];
        assert_eq!(kinds(&lines), want);
        assert_eq!(lines[2]["ok"], json!({"servers": ["b", "main"]}));
        assert_eq!(lines[3]["ok"]["text"], json!(["b-argv"]));
        assert_eq!(lines[6]["ok"]["text"], json!(["main-argv"]));
        let calls = [
            "connect main-argv",
            "connect b-argv",
            "close b-argv",
            "close main-argv",
        ];
        assert_eq!(adapter.calls, calls);

        let (lines, _) = run::<Many<false>>(plan);
        let refused = lines[1]["error"]["message"].as_str().unwrap_or_default();
        assert!(
            refused.contains("does not declare the feature many_servers"),
            "{refused}"
        );
        assert_eq!(
            kinds(&lines)[..4],
            ["ok", "unsupported_op", "unsupported_op", "transport_closed"]
        );
    }

    #[test]
    fn the_servers_variable_is_checked() {
        let ok = read_servers(
            Some(r#"{"b": {"url": "https://h/mcp"}}"#.into()),
            Some("ca".into()),
        );
        let b = ok.unwrap().remove("b").unwrap();
        assert_eq!(
            b,
            Transport::Http {
                url: "https://h/mcp".into(),
                ca_file: Some("ca".into())
            }
        );
        for bad in [
            "[]",
            r#"{"b": {}}"#,
            r#"{"b": {"argv": []}}"#,
            r#"{"b": {"url": 1}}"#,
        ] {
            let e = read_servers(Some(bad.into()), None).unwrap_err();
            assert_eq!(e.variable, "MCP_HARNESS_SERVERS", "{bad}");
        }
        assert!(read_servers(None, None).unwrap().is_empty());
    }
}

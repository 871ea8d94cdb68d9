//! Many servers at once: `MCP_HARNESS_SERVERS` (name → `{"argv": […]}` or `{"url": …}`,
//! the main server as `main`), the optional `server` of every step (default `main`), and
//! `exposed_tools`, the tool names this client would give a model across every server it is
//! connected to (`aggregate.rs` decides them).

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::aggregate::{ServerTools, expose_with};
use crate::client::Client;
use crate::era::Connected;
use crate::error::{Error, ErrorKind};
use crate::options::StdioCommand;

/// The variable naming every server.
pub(crate) const VAR: &str = "MCP_HARNESS_SERVERS";

/// The name the main server goes by (its argv or URL is also in the single-server variables).
pub(crate) const MAIN: &str = "main";

/// How to reach one server of `MCP_HARNESS_SERVERS`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Address {
    /// Launch this argv (stdio).
    Stdio(StdioCommand),
    /// Connect to this MCP endpoint (http).
    Http(String),
}

/// Reads `MCP_HARNESS_SERVERS`: a JSON object from server name to `{"argv": [strings]}` or
/// `{"url": string}`.
pub(crate) fn parse(text: &str) -> Result<BTreeMap<String, Address>, String> {
    let expected = "a JSON object from server name to {\"argv\": [strings]} or {\"url\": string}";
    let Ok(Value::Object(all)) = serde_json::from_str::<Value>(text) else {
        return Err(format!("MCP_HARNESS_SERVERS is not {expected}: {text}"));
    };
    let mut servers = BTreeMap::new();
    for (name, entry) in all {
        let address = match (entry.get("argv"), entry.get("url")) {
            (Some(Value::Array(argv)), None) => argv
                .iter()
                .map(|a| a.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
                .and_then(StdioCommand::from_argv)
                .map(Address::Stdio),
            (None, Some(Value::String(url))) => Some(Address::Http(url.clone())),
            _ => None,
        };
        let address = address.ok_or_else(|| {
            format!("MCP_HARNESS_SERVERS: server {name:?} is {entry}; expected {expected}")
        })?;
        servers.insert(name, address);
    }
    Ok(servers)
}

/// The server a step is about: its `server`, else the main one.
pub(crate) fn named(step: &Value) -> Result<String, Error> {
    match step.get("server") {
        None | Some(Value::Null) => Ok(MAIN.to_owned()),
        Some(Value::String(name)) => Ok(name.clone()),
        Some(other) => Err(Error::new(
            ErrorKind::UnsupportedOp,
            format!("a step's server must be a server's name, not {other}"),
        )),
    }
}

/// `exposed_tools`: lists the tools of every connected server afresh, then reports the name
/// each is exposed under with where it maps back: `{"tools": [{"name", "server", "tool"}]}`.
pub(crate) async fn exposed_tools(
    connections: &BTreeMap<String, Client>,
    seams: &crate::seams::Seams,
) -> Result<Value, Error> {
    if connections.is_empty() {
        return Err(super::step::not_connected());
    }
    let mut servers = Vec::new();
    for (name, client) in connections {
        let tools = client.list_tools().await?;
        servers.push(ServerTools {
            server: name.clone(),
            server_info_name: server_info_name(client),
            tools: tools
                .iter()
                .filter_map(|t| t.get("name").and_then(Value::as_str))
                .map(str::to_owned)
                .collect(),
        });
    }
    let exposed: Vec<Value> = expose_with(&servers, seams)
        .into_iter()
        .map(|e| json!({"name": e.name, "server": e.server, "tool": e.tool}))
        .collect();
    Ok(json!({ "tools": exposed }))
}

fn server_info_name(client: &Client) -> Option<String> {
    let info = match client.connected() {
        Connected::Legacy(handshake) => handshake.result().get("serverInfo").cloned(),
        Connected::Modern(found) => found.server_info.clone(),
    };
    info?.get("name")?.as_str().map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_servers_variable_is_read_or_refused_with_its_name() {
        let got =
            parse(r#"{"main": {"argv": ["a", "b"]}, "x": {"url": "https://h/mcp"}}"#).unwrap();
        assert_eq!(got["x"], Address::Http("https://h/mcp".into()));
        assert!(matches!(got["main"], Address::Stdio(_)));
        for bad in [
            "[]",
            "{\"a\": {}}",
            "{\"a\": {\"argv\": []}}",
            "{\"a\": {\"url\": 1}}",
        ] {
            let e = parse(bad).unwrap_err();
            assert!(e.starts_with("MCP_HARNESS_SERVERS"), "{e}");
        }
    }

    #[test]
    fn a_step_names_its_server_or_means_the_main_one() {
        assert_eq!(named(&json!({"op": "connect"})).unwrap(), "main");
        assert_eq!(
            named(&json!({"op": "connect", "server": "b"})).unwrap(),
            "b"
        );
        assert_eq!(
            named(&json!({"server": 1})).unwrap_err().kind,
            ErrorKind::UnsupportedOp
        );
    }
}

//! The contract's environment (CLIENTS.md, "Environment"), read and validated once at start-up.
//!
//! A missing or malformed variable is a harness or set-up mistake, not something a step can
//! report: [`read_env`] names the variable and what it expected, and [`crate::run`] exits 2 with
//! that message on stderr before carrying out anything.

use std::fmt;
use std::time::Duration;

use serde_json::Value;

/// The protocol era a case asks for (`MCP_HARNESS_ERA`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Era {
    /// Unset or `legacy`: the `initialize` handshake.
    Legacy,
    /// `modern`: `server/discover`, never `initialize`.
    Modern,
    /// `dual`: probe with `server/discover`, fall back to `initialize`.
    Dual,
}

/// Where the fake server is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Transport {
    /// Launch this argv as the client's own child (`MCP_HARNESS_SERVER_COMMAND`).
    Stdio { command: Vec<String> },
    /// Reach this URL (`MCP_HARNESS_SERVER_URL`); `ca_file` is `MCP_HARNESS_CA_FILE`.
    Http {
        url: String,
        ca_file: Option<String>,
    },
}

/// Everything the harness says through the environment.
#[derive(Clone, Debug)]
pub struct Env {
    pub transport: Transport,
    /// The plan's steps, each a JSON object (validated one by one as they run).
    pub plan: Vec<Value>,
    /// `MCP_HARNESS_TIMEOUT_MS`: the per-request timeout to apply (`None` when unset).
    pub timeout: Option<Duration>,
    /// `MCP_HARNESS_PROTOCOL_VERSION`: the version to offer.
    pub protocol_version: Option<String>,
    pub era: Era,
    /// `MCP_HARNESS_LEGACY_PROTOCOL_VERSION`: the dual era's fallback `initialize` version.
    pub legacy_protocol_version: Option<String>,
    /// `MCP_HARNESS_SHUTDOWN_GRACE_MS`: a hint for each step of a stdio shutdown.
    pub shutdown_grace: Option<Duration>,
    /// `MCP_HARNESS_BEARER_TOKEN`: send as `Authorization: Bearer …`; never print it.
    pub bearer_token: Option<String>,
    /// `MCP_HARNESS_SCENARIO`: the case id, for logs only.
    pub scenario: Option<String>,
    /// Set on authorization trials (`MCP_HARNESS_AUTH_REDIRECT_URI`): configure the library as
    /// an OAuth client then, and only then.
    pub auth: Option<crate::AuthConfig>,
    /// `MCP_HARNESS_LOCAL_ORIGINS`: loopback origins the user's local policy allows.
    pub local_origins: Vec<String>,
    /// `MCP_HARNESS_SERVERS`: every server by name (`main` too), when the case has several
    /// (CLIENTS.md, "Many servers"); empty otherwise.
    pub servers: std::collections::BTreeMap<String, Transport>,
    /// `MCP_HARNESS_CLIENT_CREDENTIALS`, checked: a machine client's `client_id`, `method`,
    /// and `client_secret` or `private_key_pem` (its secret registered for redaction).
    pub client_credentials: Option<Value>,
    /// `MCP_HARNESS_TRACES=1`: a traces trial (CLIENTS.md, "Traces"); export the library's
    /// spans over OTLP/HTTP to the standard `OTEL_EXPORTER_OTLP_*` variables.
    pub traces: bool,
}

/// A variable the kit cannot work with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnvError {
    pub variable: &'static str,
    pub problem: String,
}

impl fmt::Display for EnvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.variable, self.problem)
    }
}

impl std::error::Error for EnvError {}

impl Env {
    /// `text` with the bearer token blanked out.
    pub fn redact(&self, text: &str) -> String {
        crate::error::redact(text, self.bearer_token.as_deref())
    }

    /// The stdio server's argv, if the transport is stdio.
    pub fn server_command(&self) -> Option<&[String]> {
        match &self.transport {
            Transport::Stdio { command } => Some(command),
            Transport::Http { .. } => None,
        }
    }
}

/// Reads the contract's environment from the process.
pub fn read_env() -> Result<Env, EnvError> {
    read_env_from(|name| std::env::var(name).ok())
}

/// Reads the contract's environment through `get` (a test's map, or the process).
pub fn read_env_from(get: impl Fn(&str) -> Option<String>) -> Result<Env, EnvError> {
    // An empty value counts as unset, as a shell's `VAR= cmd` means.
    let var = |name: &str| get(name).filter(|value| !value.is_empty());
    let fail = |variable: &'static str, problem: String| EnvError { variable, problem };

    match var("MCP_HARNESS_CONTRACT").as_deref() {
        None | Some("1") => {}
        Some(other) => {
            return Err(fail(
                "MCP_HARNESS_CONTRACT",
                format!("this kit speaks contract version 1, not {other:?}"),
            ));
        }
    }
    let transport = match var("MCP_HARNESS_TRANSPORT").as_deref() {
        Some("stdio") => {
            let raw = var("MCP_HARNESS_SERVER_COMMAND").ok_or_else(|| {
                fail(
                    "MCP_HARNESS_SERVER_COMMAND",
                    "is not set (stdio needs the server's argv)".into(),
                )
            })?;
            let command = serde_json::from_str::<Vec<String>>(&raw).map_err(|e| {
                fail(
                    "MCP_HARNESS_SERVER_COMMAND",
                    format!("expected a JSON array of strings: {e}"),
                )
            })?;
            if command.is_empty() {
                return Err(fail(
                    "MCP_HARNESS_SERVER_COMMAND",
                    "is an empty array".into(),
                ));
            }
            Transport::Stdio { command }
        }
        Some("http") => Transport::Http {
            url: var("MCP_HARNESS_SERVER_URL").ok_or_else(|| {
                fail(
                    "MCP_HARNESS_SERVER_URL",
                    "is not set (http needs the endpoint)".into(),
                )
            })?,
            ca_file: var("MCP_HARNESS_CA_FILE"),
        },
        Some(other) => {
            return Err(fail(
                "MCP_HARNESS_TRANSPORT",
                format!("expected \"stdio\" or \"http\", got {other:?}"),
            ));
        }
        None => return Err(fail("MCP_HARNESS_TRANSPORT", "is not set".into())),
    };
    let raw_plan =
        var("MCP_HARNESS_PLAN").ok_or_else(|| fail("MCP_HARNESS_PLAN", "is not set".into()))?;
    let plan = match serde_json::from_str::<Value>(&raw_plan) {
        Ok(Value::Array(steps)) => steps,
        Ok(other) => {
            return Err(fail(
                "MCP_HARNESS_PLAN",
                format!("expected a JSON array of steps, got {}", type_name(&other)),
            ));
        }
        Err(e) => return Err(fail("MCP_HARNESS_PLAN", format!("is not JSON: {e}"))),
    };
    let era = match var("MCP_HARNESS_ERA").as_deref() {
        None | Some("legacy") => Era::Legacy,
        Some("modern") => Era::Modern,
        Some("dual") => Era::Dual,
        Some(other) => {
            return Err(fail(
                "MCP_HARNESS_ERA",
                format!("expected \"legacy\", \"modern\" or \"dual\", got {other:?}"),
            ));
        }
    };
    let millis = |name: &'static str| -> Result<Option<Duration>, EnvError> {
        var(name)
            .map(|raw| {
                raw.parse::<u64>().map(Duration::from_millis).map_err(|_| {
                    fail(
                        name,
                        format!("expected a whole number of milliseconds, got {raw:?}"),
                    )
                })
            })
            .transpose()
    };
    Ok(Env {
        transport,
        plan,
        timeout: millis("MCP_HARNESS_TIMEOUT_MS")?,
        protocol_version: var("MCP_HARNESS_PROTOCOL_VERSION"),
        era,
        legacy_protocol_version: var("MCP_HARNESS_LEGACY_PROTOCOL_VERSION"),
        shutdown_grace: millis("MCP_HARNESS_SHUTDOWN_GRACE_MS")?,
        bearer_token: var("MCP_HARNESS_BEARER_TOKEN"),
        scenario: var("MCP_HARNESS_SCENARIO"),
        auth: crate::auth::read_auth(&var)?,
        local_origins: crate::auth::read_local_origins(&var)?,
        servers: crate::servers::read_servers(
            var("MCP_HARNESS_SERVERS"),
            var("MCP_HARNESS_CA_FILE"),
        )?,
        client_credentials: crate::auth::read_client_credentials(&var)?,
        traces: var("MCP_HARNESS_TRACES").as_deref() == Some("1"),
    })
}

pub(crate) fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> Result<Env, EnvError> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        read_env_from(|name| map.get(name).cloned())
    }

    #[test]
    fn a_stdio_environment_reads_whole() {
        let env = env(&[
            ("MCP_HARNESS_CONTRACT", "1"),
            ("MCP_HARNESS_TRANSPORT", "stdio"),
            ("MCP_HARNESS_SERVER_COMMAND", r#"["fake","--case","x"]"#),
            ("MCP_HARNESS_PLAN", r#"[{"op":"connect"}]"#),
            ("MCP_HARNESS_TIMEOUT_MS", "5000"),
            ("MCP_HARNESS_ERA", "dual"),
            ("MCP_HARNESS_BEARER_TOKEN", ""),
        ])
        .unwrap();
        assert_eq!(env.server_command().unwrap(), ["fake", "--case", "x"]);
        assert_eq!(env.timeout, Some(Duration::from_millis(5000)));
        assert_eq!(env.era, Era::Dual);
        assert_eq!(env.bearer_token, None);
        assert_eq!(env.plan.len(), 1);
    }

    #[test]
    fn each_mistake_names_its_variable() {
        let base = [
            ("MCP_HARNESS_TRANSPORT", "http"),
            ("MCP_HARNESS_PLAN", "[]"),
        ];
        assert_eq!(env(&base).unwrap_err().variable, "MCP_HARNESS_SERVER_URL");
        let cases: &[(&[(&str, &str)], &str)] = &[
            (&[("MCP_HARNESS_TRANSPORT", "ws")], "MCP_HARNESS_TRANSPORT"),
            (&[("MCP_HARNESS_PLAN", "[]")], "MCP_HARNESS_TRANSPORT"),
            (
                &[
                    ("MCP_HARNESS_TRANSPORT", "stdio"),
                    ("MCP_HARNESS_SERVER_COMMAND", "fake"),
                ],
                "MCP_HARNESS_SERVER_COMMAND",
            ),
            (
                &[
                    ("MCP_HARNESS_TRANSPORT", "stdio"),
                    ("MCP_HARNESS_SERVER_COMMAND", "[]"),
                ],
                "MCP_HARNESS_SERVER_COMMAND",
            ),
        ];
        for (pairs, variable) in cases {
            assert_eq!(env(pairs).unwrap_err().variable, *variable, "{pairs:?}");
        }
        let http = |extra: (&'static str, &'static str)| {
            let mut pairs = vec![
                ("MCP_HARNESS_TRANSPORT", "http"),
                ("MCP_HARNESS_SERVER_URL", "http://127.0.0.1:1/mcp"),
                ("MCP_HARNESS_PLAN", "[]"),
            ];
            pairs.push(extra);
            env(&pairs)
        };
        assert!(http(("MCP_HARNESS_ERA", "x")).is_err());
        assert_eq!(
            http(("MCP_HARNESS_PLAN", "{}")).unwrap_err().variable,
            "MCP_HARNESS_PLAN"
        );
        assert!(
            http(("MCP_HARNESS_TIMEOUT_MS", "5s"))
                .unwrap_err()
                .problem
                .contains("\"5s\"")
        );
        assert!(http(("MCP_HARNESS_CONTRACT", "2")).is_err());
    }
}

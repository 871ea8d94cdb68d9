//! Reads the driver contract's environment variables and the `--defect` flags.
//!
//! Parsing takes the environment as a function, so every malformed-input message is tested
//! without touching the process environment.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::headless::Headless;
use crate::auth::{AuthOptions, PreRegistered, Secret, TokenEndpointAuthMethod};
use crate::era::{DEFAULT_LEGACY_FALLBACK_VERSION, Era};
use crate::options::{
    BearerToken, ClientOptions, DEFAULT_MAX_MESSAGE_BYTES, HttpOptions, StdioCommand,
};
#[cfg(feature = "defects")]
use crate::seams::Defects;

/// The contract version this driver implements.
pub(crate) const CONTRACT_VERSION: &str = "1";

/// Which transport the harness asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TransportKind {
    Stdio,
    Http,
}

/// Everything one driver run needs.
#[derive(Debug)]
pub(crate) struct Config {
    pub(crate) transport: TransportKind,
    /// The server argv; present for stdio.
    pub(crate) server: Option<StdioCommand>,
    /// The MCP endpoint; present for http (judged by the client's URL policy at connect).
    pub(crate) url: Option<String>,
    /// CA files and bearer token for http (its `Debug` redacts the token).
    pub(crate) http: HttpOptions,
    /// The plan's steps, each still raw JSON (steps are judged one by one when run).
    pub(crate) plan: Vec<Value>,
    /// Every server by name (`MCP_HARNESS_SERVERS`), when the harness gave several.
    pub(crate) servers: std::collections::BTreeMap<String, super::servers::Address>,
    pub(crate) options: ClientOptions,
}

/// Builds the configuration from the command-line `args` (program name excluded) and `env`.
pub(crate) fn parse(
    args: &[String],
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Config, String> {
    let (names, positional) = parse_args(args)?;
    #[cfg(feature = "defects")]
    let defects = switch_on(&names)?;
    #[cfg(not(feature = "defects"))]
    if let Some(name) = names.first() {
        return Err(format!(
            "unknown defect {name:?}; this build has none (built without the `defects` feature)"
        ));
    }
    let required = |name: &str, expected: &str| {
        env(name).ok_or_else(|| format!("{name} is not set (or not UTF-8); expected {expected}"))
    };
    let contract = required("MCP_HARNESS_CONTRACT", "\"1\"")?;
    if contract != CONTRACT_VERSION {
        return Err(format!(
            "MCP_HARNESS_CONTRACT is {contract:?}; this driver implements contract \"1\" only"
        ));
    }
    let transport = match required("MCP_HARNESS_TRANSPORT", "\"stdio\" or \"http\"")?.as_str() {
        "stdio" => TransportKind::Stdio,
        "http" => TransportKind::Http,
        other => {
            return Err(format!(
                "MCP_HARNESS_TRANSPORT is {other:?}; expected \"stdio\" or \"http\""
            ));
        }
    };
    let (server, url) = match transport {
        TransportKind::Stdio => {
            let argv = required(
                "MCP_HARNESS_SERVER_COMMAND",
                "a JSON array of strings (the server's argv)",
            )?;
            (Some(server_command(&argv)?), None)
        }
        // The variable wins; the harness also passes the URL as the last argument.
        TransportKind::Http => match env("MCP_HARNESS_SERVER_URL").or(positional) {
            Some(url) => (None, Some(url)),
            None => {
                return Err(
                    "MCP_HARNESS_SERVER_URL is not set and no URL argument was given; \
                            expected the MCP endpoint, e.g. https://localhost:8443/mcp"
                        .into(),
                );
            }
        },
    };
    let ca_files: Vec<std::path::PathBuf> = env("MCP_HARNESS_CA_FILE")
        .filter(|path| !path.is_empty())
        .map(Into::into)
        .into_iter()
        .collect();
    let mut http = HttpOptions {
        bearer_token: env("MCP_HARNESS_BEARER_TOKEN")
            .filter(|token| !token.is_empty())
            .map(BearerToken::new),
        auth: auth_options(env, &ca_files)?,
        local_origins: env("MCP_HARNESS_LOCAL_ORIGINS")
            .map(|list| list.split_ascii_whitespace().map(str::to_owned).collect())
            .unwrap_or_default(),
        ca_files,
        ..HttpOptions::default()
    };
    let plan_text = required("MCP_HARNESS_PLAN", "a JSON array of steps")?;
    let plan = match serde_json::from_str(&plan_text) {
        Ok(Value::Array(steps)) => steps,
        _ => {
            return Err(format!(
                "MCP_HARNESS_PLAN is not a JSON array of steps: {plan_text}"
            ));
        }
    };
    let timeout_ms = millis(
        "MCP_HARNESS_TIMEOUT_MS",
        &required(
            "MCP_HARNESS_TIMEOUT_MS",
            "a positive integer of milliseconds",
        )?,
    )?;
    if timeout_ms == 0 {
        return Err(
            "MCP_HARNESS_TIMEOUT_MS is 0; expected a positive integer of milliseconds".into(),
        );
    }
    if let Some(auth) = &mut http.auth {
        // The headless step is bounded by the request timeout, like any request.
        auth.user_agent = Arc::new(Headless {
            ca_files: http.ca_files.clone(),
            timeout: Duration::from_millis(timeout_ms),
        });
    }
    let protocol_version = required(
        "MCP_HARNESS_PROTOCOL_VERSION",
        "a protocol version such as 2025-11-25",
    )?;
    if protocol_version.is_empty() {
        return Err("MCP_HARNESS_PROTOCOL_VERSION is empty; expected a protocol version".into());
    }
    let era = match env("MCP_HARNESS_ERA").as_deref() {
        None | Some("legacy") => Era::Legacy,
        Some("modern") => Era::Modern,
        Some("dual") => Era::Dual,
        Some(other) => {
            return Err(format!(
                "MCP_HARNESS_ERA is {other:?}; expected \"legacy\", \"modern\" or \"dual\""
            ));
        }
    };
    let legacy_protocol_version = match env("MCP_HARNESS_LEGACY_PROTOCOL_VERSION") {
        None => DEFAULT_LEGACY_FALLBACK_VERSION.to_owned(),
        Some(v) if v.is_empty() => {
            return Err(
                "MCP_HARNESS_LEGACY_PROTOCOL_VERSION is empty; expected a protocol version".into(),
            );
        }
        Some(v) => v,
    };
    let grace_ms = match env("MCP_HARNESS_SHUTDOWN_GRACE_MS") {
        Some(text) => millis("MCP_HARNESS_SHUTDOWN_GRACE_MS", &text)?,
        None => 2000,
    };
    // A reference-driver extension (not part of the contract): the message size cap.
    let max_message_bytes = match env("MCP_HARNESS_MAX_MESSAGE_BYTES") {
        Some(text) => match text.trim().parse::<usize>() {
            Ok(n) if n > 0 => n,
            _ => {
                return Err(format!(
                    "MCP_HARNESS_MAX_MESSAGE_BYTES is {text:?}; expected a positive integer of bytes"
                ));
            }
        },
        None => DEFAULT_MAX_MESSAGE_BYTES,
    };
    let servers = match env(super::servers::VAR) {
        Some(text) => super::servers::parse(&text)?,
        None => Default::default(),
    };
    Ok(Config {
        transport,
        server,
        url,
        http,
        plan,
        servers,
        options: ClientOptions {
            protocol_version,
            era,
            legacy_protocol_version,
            request_timeout: Duration::from_millis(timeout_ms),
            shutdown_grace: Duration::from_millis(grace_ms),
            max_message_bytes,
            #[cfg(feature = "defects")]
            defects,
            ..ClientOptions::default()
        },
    })
}

/// The OAuth client's settings: present when `MCP_HARNESS_AUTH_REDIRECT_URI` is set (its
/// presence means "act as an OAuth client"), with the optional pre-registered client and
/// client metadata document URL. The user's part is the headless step ([`Headless`]).
fn auth_options(
    env: &dyn Fn(&str) -> Option<String>,
    ca_files: &[std::path::PathBuf],
) -> Result<Option<AuthOptions>, String> {
    let set = |name: &str| env(name).filter(|v| !v.is_empty());
    // A machine-to-machine client: the client_credentials grant, no redirect needed.
    let machine = match set("MCP_HARNESS_CLIENT_CREDENTIALS") {
        Some(value) => Some(super::machine::parse(&value)?),
        None => None,
    };
    let redirect = set("MCP_HARNESS_AUTH_REDIRECT_URI");
    let Some(redirect_uri) = redirect.or_else(|| machine.as_ref().map(|_| String::new())) else {
        return Ok(None);
    };
    if machine.is_none() && reqwest::Url::parse(&redirect_uri).is_err() {
        return Err(format!(
            "MCP_HARNESS_AUTH_REDIRECT_URI is {redirect_uri:?}; expected a URL such as \
             http://127.0.0.1:8000/callback"
        ));
    }
    let auth_method = match set("MCP_HARNESS_AUTH_CLIENT_AUTH_METHOD") {
        None => None,
        Some(name) => Some(TokenEndpointAuthMethod::from_name(&name).ok_or_else(|| {
            format!(
                "MCP_HARNESS_AUTH_CLIENT_AUTH_METHOD is {name:?}; expected client_secret_basic, \
                 client_secret_post or none"
            )
        })?),
    };
    let client = match (
        set("MCP_HARNESS_AUTH_CLIENT_ID"),
        set("MCP_HARNESS_AUTH_CLIENT_SECRET"),
    ) {
        (Some(client_id), secret) => Some(PreRegistered {
            client_id,
            client_secret: secret.map(Secret::new),
            auth_method,
        }),
        (None, Some(_)) => {
            return Err("MCP_HARNESS_AUTH_CLIENT_SECRET is set without \
                        MCP_HARNESS_AUTH_CLIENT_ID; expected both or neither"
                .into());
        }
        (None, None) if auth_method.is_some() => {
            return Err("MCP_HARNESS_AUTH_CLIENT_AUTH_METHOD is set without \
                        MCP_HARNESS_AUTH_CLIENT_ID; it says how that client authenticates"
                .into());
        }
        (None, None) => None,
    };
    let agent = Headless {
        ca_files: ca_files.to_vec(),
        // Bounded like any request; the harness hands a timeout, this is the fallback.
        timeout: Duration::from_secs(30),
    };
    let mut options = AuthOptions::new(redirect_uri, Arc::new(agent));
    options.client = client;
    options.client_metadata_url = set("MCP_HARNESS_AUTH_CLIENT_METADATA_URL");
    options.client_credentials = machine;
    Ok(Some(options))
}

/// `--defect NAME` / `--defect=NAME`, repeatable: the names in order, and the last positional
/// argument (the harness passes the server URL last); other positional arguments are ignored.
fn parse_args(args: &[String]) -> Result<(Vec<String>, Option<String>), String> {
    let mut names = Vec::new();
    let mut positional = None;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        let name = if arg == "--defect" {
            rest.next().ok_or("--defect needs a name")?
        } else if let Some(name) = arg.strip_prefix("--defect=") {
            name
        } else if arg.starts_with('-') {
            return Err(format!(
                "unknown option {arg:?}; the only option is --defect NAME"
            ));
        } else {
            positional = Some(arg.clone());
            continue;
        };
        names.push(name.to_owned());
    }
    Ok((names, positional))
}

/// Switches on each named defect; a name that is none is refused with the valid names.
#[cfg(feature = "defects")]
fn switch_on(names: &[String]) -> Result<Defects, String> {
    let mut defects = Defects::default();
    for name in names {
        if !defects.enable(name) {
            let valid = Defects::all_names().collect::<Vec<_>>();
            return Err(format!(
                "unknown defect {name:?}; valid names: {}",
                valid.join(", ")
            ));
        }
    }
    Ok(defects)
}

fn server_command(text: &str) -> Result<StdioCommand, String> {
    let argv: Option<Vec<String>> = match serde_json::from_str(text) {
        Ok(Value::Array(items)) => items
            .into_iter()
            .map(|item| item.as_str().map(str::to_owned))
            .collect(),
        _ => None,
    };
    argv.and_then(StdioCommand::from_argv).ok_or_else(|| {
        format!("MCP_HARNESS_SERVER_COMMAND is not a non-empty JSON array of strings: {text}")
    })
}

fn millis(name: &str, text: &str) -> Result<u64, String> {
    text.trim()
        .parse()
        .map_err(|_| format!("{name} is {text:?}; expected a non-negative integer of milliseconds"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env_with(overrides: &[(&str, Option<&str>)]) -> HashMap<String, String> {
        let mut env: HashMap<String, String> = [
            ("MCP_HARNESS_CONTRACT", "1"),
            ("MCP_HARNESS_TRANSPORT", "stdio"),
            ("MCP_HARNESS_SERVER_COMMAND", r#"["fake","--case","x"]"#),
            ("MCP_HARNESS_PLAN", r#"[{"op":"connect"},{"op":"close"}]"#),
            ("MCP_HARNESS_TIMEOUT_MS", "1500"),
            ("MCP_HARNESS_PROTOCOL_VERSION", "2025-03-26"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        for (k, v) in overrides {
            match v {
                Some(v) => env.insert((*k).to_owned(), (*v).to_owned()),
                None => env.remove(*k),
            };
        }
        env
    }

    fn parse_with(args: &[&str], env: &HashMap<String, String>) -> Result<Config, String> {
        let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
        parse(&args, &|k| env.get(k).cloned())
    }

    #[test]
    fn a_complete_environment_parses() {
        let defects: &[&str] = match cfg!(feature = "defects") {
            true => &["--defect", "reuse-ids", "--defect=text-only"],
            false => &[],
        };
        let c = parse_with(defects, &env_with(&[])).unwrap();
        assert_eq!(c.transport, TransportKind::Stdio);
        assert_eq!(c.server.unwrap().args, ["--case", "x"]);
        assert_eq!(c.plan.len(), 2);
        assert_eq!(c.options.request_timeout, Duration::from_millis(1500));
        assert_eq!(c.options.shutdown_grace, Duration::from_secs(2));
        assert_eq!(c.options.protocol_version, "2025-03-26");
        #[cfg(feature = "defects")]
        {
            let mut both = Defects::default();
            assert!(both.enable("reuse-ids") && both.enable("text-only"));
            assert_eq!(c.options.defects, both);
        }
        assert_eq!(c.options.era, Era::Legacy);
        assert_eq!(c.options.legacy_protocol_version, "2025-11-25");
        let env = env_with(&[
            ("MCP_HARNESS_ERA", Some("dual")),
            ("MCP_HARNESS_LEGACY_PROTOCOL_VERSION", Some("2025-06-18")),
        ]);
        let c = parse_with(&[], &env).unwrap();
        assert_eq!(c.options.era, Era::Dual);
        assert_eq!(c.options.legacy_protocol_version, "2025-06-18");
        let env = env_with(&[("MCP_HARNESS_ERA", Some("modern"))]);
        assert_eq!(parse_with(&[], &env).unwrap().options.era, Era::Modern);
        let env = env_with(&[("MCP_HARNESS_SHUTDOWN_GRACE_MS", Some("100"))]);
        let c = parse_with(&["https://127.0.0.1:1/mcp"], &env).unwrap();
        assert_eq!(c.options.shutdown_grace, Duration::from_millis(100));
    }

    #[test]
    fn http_needs_a_url_but_no_server_command() {
        let env = env_with(&[
            ("MCP_HARNESS_TRANSPORT", Some("http")),
            ("MCP_HARNESS_SERVER_COMMAND", None),
        ]);
        let err = parse_with(&[], &env).unwrap_err();
        assert!(err.contains("MCP_HARNESS_SERVER_URL"), "{err}");
        let args: &[&str] = match cfg!(feature = "defects") {
            true => &["--defect", "no-delete", "http://127.0.0.1:1/a"],
            false => &["http://127.0.0.1:1/a"],
        };
        let c = parse_with(args, &env).unwrap();
        assert_eq!(c.transport, TransportKind::Http);
        assert!(c.server.is_none());
        assert_eq!(c.url.as_deref(), Some("http://127.0.0.1:1/a"));
        #[cfg(feature = "defects")]
        {
            let mut no_delete = Defects::default();
            no_delete.enable("no-delete");
            assert_eq!(c.options.defects, no_delete);
        }
        assert_eq!(c.http, HttpOptions::default());

        let env = env_with(&[
            ("MCP_HARNESS_TRANSPORT", Some("http")),
            ("MCP_HARNESS_SERVER_URL", Some("https://localhost:2/mcp")),
            ("MCP_HARNESS_CA_FILE", Some("/tmp/ca.pem")),
            ("MCP_HARNESS_BEARER_TOKEN", Some("tok-123")),
        ]);
        let c = parse_with(&["https://ignored.invalid/"], &env).unwrap();
        assert_eq!(c.url.as_deref(), Some("https://localhost:2/mcp"));
        assert_eq!(c.http.ca_files, [std::path::PathBuf::from("/tmp/ca.pem")]);
        assert_eq!(c.http.bearer_token, Some(BearerToken::new("tok-123")));
        assert!(!format!("{c:?}").contains("tok-123"));
    }

    #[test]
    fn the_auth_variables_make_an_oauth_client() {
        let http = [
            ("MCP_HARNESS_TRANSPORT", Some("http")),
            ("MCP_HARNESS_SERVER_URL", Some("https://localhost:2/mcp")),
        ];
        let c = parse_with(&[], &env_with(&http)).unwrap();
        assert!(c.http.auth.is_none() && c.http.local_origins.is_empty());
        let mut vars = http.to_vec();
        vars.extend([
            (
                "MCP_HARNESS_AUTH_REDIRECT_URI",
                Some("http://127.0.0.1:9/callback"),
            ),
            ("MCP_HARNESS_AUTH_CLIENT_ID", Some("cid")),
            ("MCP_HARNESS_AUTH_CLIENT_SECRET", Some("cl-s3cret")),
            (
                "MCP_HARNESS_AUTH_CLIENT_AUTH_METHOD",
                Some("client_secret_post"),
            ),
            (
                "MCP_HARNESS_AUTH_CLIENT_METADATA_URL",
                Some("https://localhost:2/cimd.json"),
            ),
            (
                "MCP_HARNESS_LOCAL_ORIGINS",
                Some("https://localhost:2  https://localhost:3"),
            ),
        ]);
        let c = parse_with(&[], &env_with(&vars)).unwrap();
        let auth = c.http.auth.as_ref().unwrap();
        assert_eq!(auth.redirect_uri, "http://127.0.0.1:9/callback");
        let client = auth.client.as_ref().unwrap();
        assert_eq!(client.client_id, "cid");
        assert_eq!(client.client_secret, Some(Secret::new("cl-s3cret")));
        assert_eq!(client.auth_method, Some(TokenEndpointAuthMethod::Post));
        assert_eq!(
            auth.client_metadata_url.as_deref(),
            Some("https://localhost:2/cimd.json")
        );
        assert_eq!(
            c.http.local_origins,
            ["https://localhost:2", "https://localhost:3"]
        );
        assert!(!format!("{c:?}").contains("s3cret"));
        // A secret without an id, a redirect URI that is no URL and an unknown method are
        // refused by name.
        for (name, value) in [
            ("MCP_HARNESS_AUTH_CLIENT_ID", None),
            ("MCP_HARNESS_AUTH_REDIRECT_URI", Some("not a url")),
            (
                "MCP_HARNESS_AUTH_CLIENT_AUTH_METHOD",
                Some("private_key_jwt"),
            ),
        ] {
            let mut bad = vars.clone();
            bad.push((name, value));
            let err = parse_with(&[], &env_with(&bad)).unwrap_err();
            let named = match name {
                "MCP_HARNESS_AUTH_CLIENT_ID" => "MCP_HARNESS_AUTH_CLIENT_SECRET",
                other => other,
            };
            assert!(err.contains(named), "{err}");
        }
    }

    #[test]
    fn bad_input_names_the_variable() {
        let cases: [(&str, Option<&str>); 15] = [
            ("MCP_HARNESS_CONTRACT", None),
            ("MCP_HARNESS_CONTRACT", Some("2")),
            ("MCP_HARNESS_TRANSPORT", Some("carrier-pigeon")),
            ("MCP_HARNESS_SERVER_COMMAND", Some("[]")),
            ("MCP_HARNESS_SERVER_COMMAND", Some(r#"["a", 1]"#)),
            ("MCP_HARNESS_PLAN", Some(r#"{"op":"connect"}"#)),
            ("MCP_HARNESS_PLAN", None),
            ("MCP_HARNESS_TIMEOUT_MS", Some("soon")),
            ("MCP_HARNESS_TIMEOUT_MS", Some("0")),
            ("MCP_HARNESS_PROTOCOL_VERSION", None),
            ("MCP_HARNESS_SHUTDOWN_GRACE_MS", Some("-1")),
            ("MCP_HARNESS_MAX_MESSAGE_BYTES", Some("0")),
            ("MCP_HARNESS_MAX_MESSAGE_BYTES", Some("64MiB")),
            ("MCP_HARNESS_ERA", Some("future")),
            ("MCP_HARNESS_LEGACY_PROTOCOL_VERSION", Some("")),
        ];
        for (name, value) in cases {
            let err = parse_with(&[], &env_with(&[(name, value)])).unwrap_err();
            assert!(err.contains(name), "{name}={value:?}: {err}");
        }
    }

    #[test]
    fn the_message_size_cap_is_an_optional_extension() {
        let c = parse_with(&[], &env_with(&[])).unwrap();
        assert_eq!(c.options.max_message_bytes, DEFAULT_MAX_MESSAGE_BYTES);
        let env = env_with(&[("MCP_HARNESS_MAX_MESSAGE_BYTES", Some(" 1048576 "))]);
        let c = parse_with(&[], &env).unwrap();
        assert_eq!(c.options.max_message_bytes, 1 << 20);
    }

    #[test]
    fn unknown_defects_and_options_are_refused() {
        let err = parse_with(&["--defect", "nope"], &env_with(&[])).unwrap_err();
        match cfg!(feature = "defects") {
            true => assert!(
                err.contains("reuse-ids") && err.contains("kill-first"),
                "{err}"
            ),
            // The library as built has no defect to switch on, not even a real one.
            false => assert!(err.contains("without the `defects` feature"), "{err}"),
        }
        #[cfg(not(feature = "defects"))]
        {
            let err = parse_with(&["--defect", "allow-insecure-http"], &env_with(&[]));
            assert!(err.is_err(), "a defect was switched on without the feature");
        }
        assert!(parse_with(&["--defect"], &env_with(&[])).is_err());
        assert!(parse_with(&["--verbose"], &env_with(&[])).is_err());
    }
}

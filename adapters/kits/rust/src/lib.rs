//! `mcp-harness-kit`: the plumbing of an mcp-harness driver-contract adapter (CLIENTS.md) in
//! Rust, so an adapter is mostly calls into its client library.
//!
//! The adapter implements [`Adapter`] (connect, the ops it provides, close) and calls [`run`],
//! which does the rest the contract asks of every adapter:
//! - reads and validates the environment ([`read_env`]); a bad variable is named on stderr and
//!   the process exits 2 before anything runs;
//! - guards stdout ([`Output`]): library prints go to stderr, outcome lines to the real stdout;
//! - runs the plan: parses and checks each step's fields ([`Step`]), carries out `sleep`
//!   itself, answers `transport_closed` for a step before a successful `connect` or after
//!   `close`, `unsupported_op` for an op the adapter does not provide or a step that needs a
//!   feature it does not declare ([`Adapter::FEATURES`]), closes an open
//!   connection before a second `connect`, and closes at the end without printing a line;
//! - on a traces trial, sets up the adapter's tracing before the first step and flushes it
//!   after the last ([`Adapter::setup_traces`], [`Adapter::shutdown_traces`]);
//! - prints one outcome line per step, with the bearer token and every secret registered with
//!   [`secret`] (the client secret, tokens the adapter hands over) blanked out;
//! - exits 0 once the plan is carried out.
//!
//! Helpers for the contract's shapes: [`classify`] (transport errors to kinds, with a hook for
//! the library's own types), [`paginate`], [`tool_result`], [`content_as_seen`],
//! [`resource_contents_as_seen`], [`Events`] for the `events` step, and the plan's answers to
//! server requests ([`declared_capabilities`], [`Answer`]), and for authorization trials
//! ([`AuthConfig`], [`secret`], [`authorization_redirect`], [`callback_params`] and, with the
//! `auth` feature, `headless_authorize`). The kit needs no async
//! runtime of its own: [`run`] is a future for the adapter's runtime, or for [`block_on`].

mod answers;
mod auth;
mod bytes;
mod content;
mod env;
mod error;
mod output;
mod paginate;
mod rt;
mod servers;
mod step;

use std::collections::BTreeMap;
use std::process::ExitCode;

use serde_json::{Map, Value, json};

pub use answers::{Answer, declared_capabilities, plays_browser, url_to_open, uses_sampling_tools};
#[cfg(feature = "auth")]
pub use auth::headless_authorize;
pub use auth::{
    AuthConfig, CLIENT_AUTH_METHODS, MACHINE_METHODS, authorization_redirect, callback_params,
    secret,
};
pub use bytes::{decode_base64, sha256_hex};
pub use content::{
    content_as_seen, contents_as_seen, resource_contents_as_seen, texts, tool_result,
};
pub use env::{Env, EnvError, Era, Transport, read_env, read_env_from};
pub use error::{Hook, Kind, StepError, chain_text, classify, redact, redact_json};
pub use output::Output;
pub use paginate::{Guards, paginate};
pub use rt::{Events, Sleep, block_on, sleep};
pub use servers::{MAIN_SERVER, server_of};
pub use step::{CallTool, Step, TraceContext};

/// An adapter: how its library connects, carries out steps and closes.
#[allow(async_fn_in_trait)] // adapters run on one task; no `Send` bound is needed
pub trait Adapter {
    /// One open connection (a client session).
    type Connection;

    /// The ops [`Adapter::step`] carries out (`list_tools`, `call_tool`, …). Any other op is
    /// `unsupported_op`; one of these before `connect` or after `close` is `transport_closed`.
    const OPS: &'static [&'static str];

    /// Starts the transport and performs the handshake; returns the connection and the `ok`
    /// object (`protocolVersion`, `serverInfo`, and `era` where it applies).
    async fn connect(
        &mut self,
        env: &Env,
        handlers: &Map<String, Value>,
    ) -> Result<(Self::Connection, Value), StepError>;

    /// With the `trace_context` feature: the trace context the next [`Adapter::connect`]
    /// puts in every request's `_meta` (CLIENTS.md, "Trace context"), handed just before it
    /// (`None`: that connect has none).
    fn trace_context(&mut self, _context: Option<&TraceContext>) {}

    /// With the `traces` feature, on a traces trial ([`Env::traces`]): installs the library's
    /// OpenTelemetry tracing (OTLP/HTTP to the standard `OTEL_EXPORTER_OTLP_*` variables),
    /// once, before the first step. On an error every `connect` fails `handshake_failed`
    /// with it: a declared feature that does not work is a failure, not a limit.
    fn setup_traces(&mut self, _env: &Env) -> Result<(), String> {
        Ok(())
    }

    /// Flushes and shuts down what [`Adapter::setup_traces`] installed; the kit calls it once
    /// the plan is carried out, before the process exits (spans still buffered are lost).
    async fn shutdown_traces(&mut self) {}

    /// Carries out one step of [`Adapter::OPS`] on the connection; returns its `ok` object.
    async fn step(
        &mut self,
        connection: &mut Self::Connection,
        env: &Env,
        step: &Step,
    ) -> Result<Value, StepError>;

    /// Closes the connection (the way that ends the session for good).
    async fn close(&mut self, connection: Self::Connection, env: &Env) -> Result<(), StepError>;

    /// The features of [`FEATURES`] the library has (`roots`, `sampling`, `elicitation`,
    /// `oauth`, `tasks`): a `connect` whose `handlers` (or a `call_tool` whose `input`) answer
    /// a server request of another, an authorization trial's `connect` without `oauth`, or a
    /// task step without `tasks` (a `call_tool` with `task` or `background`, and the ops
    /// `get_task`, `cancel_task`, `task_result`, `list_tasks`) is answered
    /// `unsupported_op` by the kit, so its trial grades `unimplemented` rather than `fail`.
    /// Declaring none (the default) leaves every such trial unimplemented, which fails a run
    /// as a failure does.
    const FEATURES: &'static [&'static str] = &[];

    /// `exposed_tools` (feature `many_servers`): the name the library would give a model for
    /// each tool of every connected server (by name), as `{"tools": [{"name", "server",
    /// "tool"}]}`. Each server's `connect`, `step` and `close` get [`Env::for_server`].
    async fn exposed_tools(
        &mut self,
        _connections: &mut BTreeMap<String, Self::Connection>,
        _env: &Env,
    ) -> Result<Value, StepError> {
        Err(StepError::unsupported(
            "this adapter does not implement the op \"exposed_tools\"",
        ))
    }

    /// Limits declared on every `connect` line (CLIENTS.md, "Adapting a real library"), e.g.
    /// `choose_version`.
    fn limits(&self) -> &[&'static str] {
        &[]
    }
}

/// The features an adapter may declare ([`Adapter::FEATURES`]), and the server request each
/// one answers (`oauth` answers none: it is the authorization trials' `connect`; nor does
/// `tasks`: it is the task steps of CLIENTS.md § Tasks; nor `many_servers`: a step naming
/// another `server`, and `exposed_tools`; nor `client_credentials`: a machine-to-machine
/// trial's `connect`; nor `dpop`: such a `connect` whose credentials say `"dpop": true`; nor
/// `traces`: every `connect` of a traces trial, [`Env::traces`]).
pub const FEATURES: [(&str, &str); 14] = [
    ("roots", "roots/list"),
    ("sampling", "sampling/createMessage"),
    ("elicitation", "elicitation/create"),
    ("oauth", ""),
    ("tasks", ""),
    ("task_receiver", ""),
    ("sampling_tools", ""),
    ("url_consent", ""),
    ("many_servers", ""),
    ("trace_context", ""),
    ("icons", ""),
    ("client_credentials", ""),
    ("dpop", ""),
    ("traces", ""),
];

/// The features `step` needs that `declared` leaves out, in [`FEATURES`] order.
pub fn undeclared(step: &Step, env: &Env, declared: &[&str]) -> Vec<&'static str> {
    let given = match step {
        Step::Connect { handlers, .. } => Some(handlers),
        Step::CallTool(call) => Some(&call.input),
        _ => None,
    };
    let answers: Vec<&String> = given.iter().flat_map(|m| m.keys()).collect();
    let answer = |method: &str| given.and_then(|m| m.get(method));
    let sampling_tools = answer("sampling/createMessage").is_some_and(answers::uses_sampling_tools);
    let url_consent = answer("elicitation/create").is_some_and(answers::plays_browser);
    let connect = matches!(step, Step::Connect { .. });
    // A machine-to-machine trial's connect needs client_credentials instead of oauth.
    let machine = connect && env.client_credentials.is_some();
    let oauth = connect && env.auth.is_some() && !machine;
    let dpop = machine
        && env
            .client_credentials
            .as_ref()
            .and_then(|c| c.get("dpop"))
            .and_then(serde_json::Value::as_bool)
            == Some(true);
    let receives = matches!(step, Step::Connect { tasks, .. } if !tasks.is_empty());
    let traced = matches!(
        step,
        Step::Connect {
            trace_context: Some(_),
            ..
        }
    );
    let tasks = match step {
        Step::CallTool(call) => call.is_task(),
        Step::GetTask { .. }
        | Step::CancelTask { .. }
        | Step::TaskResult { .. }
        | Step::ListTasks => true,
        _ => false,
    };
    FEATURES
        .iter()
        .filter(|(name, method)| {
            let needed = match *name {
                "oauth" => oauth,
                "tasks" => tasks,
                "task_receiver" => receives,
                "sampling_tools" => sampling_tools,
                "url_consent" => url_consent,
                "trace_context" => traced,
                "icons" => step.op() == "fetch_icons",
                "client_credentials" => machine,
                "dpop" => dpop,
                "traces" => connect && env.traces,
                _ => answers.iter().any(|m| m == method),
            };
            needed && !declared.contains(name)
        })
        .map(|(name, _)| *name)
        .collect()
}

/// Runs the adapter the environment describes: see the crate docs. Returns the exit code
/// (0 once the plan is carried out, 2 for an unusable environment).
pub async fn run<A: Adapter>(make: impl FnOnce(&Env) -> A) -> ExitCode {
    let mut output = Output::guard();
    let env = match read_env() {
        Ok(env) => env,
        Err(e) => {
            eprintln!("mcp-harness-kit: {e}");
            return ExitCode::from(2);
        }
    };
    if let Some(unknown) = A::FEATURES
        .iter()
        .find(|f| !FEATURES.iter().any(|(name, _)| name == *f))
    {
        let known: Vec<&str> = FEATURES.iter().map(|(name, _)| *name).collect();
        eprintln!(
            "mcp-harness-kit: the adapter declares an unknown feature {unknown:?}; expected some of {}",
            known.join(", ")
        );
        return ExitCode::from(2);
    }
    let mut adapter = make(&env);
    run_plan(&mut adapter, &env, |line| output.line(&line)).await;
    ExitCode::SUCCESS
}

/// Carries out `env.plan` with `adapter`, handing each outcome line to `emit`, then closes a
/// connection left open (printing no line). [`run`] without the process around it.
pub async fn run_plan<A: Adapter>(adapter: &mut A, env: &Env, mut emit: impl FnMut(Value)) {
    // One connection per server (CLIENTS.md, "Many servers"), by name; the main one alone
    // unless the adapter declares `many_servers`.
    let mut connections: BTreeMap<String, A::Connection> = BTreeMap::new();
    let many = A::FEATURES.contains(&"many_servers");
    let traced = env.traces && A::FEATURES.contains(&"traces");
    let untraced = traced
        .then(|| adapter.setup_traces(env).err())
        .flatten()
        .map(|e| {
            let e = format!("setting up traces failed: {}", env.redact(&e));
            eprintln!("mcp-harness-kit: {e}");
            StepError::new(Kind::HandshakeFailed, e)
        });
    let refused = || {
        Err(StepError::unsupported(
            "this adapter does not declare the feature many_servers (the kit's features)",
        ))
    };
    for (index, raw) in env.plan.iter().enumerate() {
        let step = Step::parse(raw);
        let exposed = raw.get("op").and_then(Value::as_str) == Some("exposed_tools");
        let outcome = match (&step, &server_of(raw)) {
            _ if exposed && !many => refused(),
            _ if exposed && connections.is_empty() => Err(StepError::not_connected()),
            _ if exposed => adapter.exposed_tools(&mut connections, env).await,
            (Err(e), _) | (_, Err(e)) => Err(e.clone()),
            (Ok(Step::Connect { .. }), Ok(server)) if *server != MAIN_SERVER && !many => refused(),
            (Ok(Step::Connect { .. }), _) if untraced.is_some() => Err(untraced.clone().unwrap()),
            (Ok(step), Ok(server)) => match env.for_server(server) {
                None if matches!(step, Step::Sleep(_)) => {
                    perform(adapter, &mut None, env, step).await
                }
                None => Err(StepError::new(
                    Kind::TransportClosed,
                    format!("no server {server:?} was given (MCP_HARNESS_SERVERS)"),
                )),
                Some(server_env) => {
                    let mut connection = connections.remove(*server);
                    let done = perform(adapter, &mut connection, &server_env, step).await;
                    if let Some(open) = connection {
                        connections.insert((*server).to_owned(), open);
                    }
                    done
                }
            },
        };
        let mut line = Map::new();
        line.insert("step".into(), json!(index));
        line.insert("op".into(), raw.get("op").cloned().unwrap_or(Value::Null));
        match outcome {
            Ok(ok) => line.insert("ok".into(), ok),
            Err(error) => line.insert("error".into(), error.to_json(env.bearer_token.as_deref())),
        };
        if matches!(step, Ok(Step::Connect { .. })) {
            let mut limits = adapter.limits().to_vec();
            // A library without tasks cannot call a `required` tool as one (the `tasks` need).
            if !A::FEATURES.contains(&"tasks") && !limits.contains(&"tasks") {
                limits.push("tasks");
            }
            if !limits.is_empty() {
                line.insert("limits".into(), json!(limits));
            }
        }
        let mut line = Value::Object(line);
        redact_json(&mut line, env.bearer_token.as_deref());
        emit(line);
    }
    // The implicit close at the end prints no line.
    for (server, open) in connections {
        let server_env = env
            .for_server(&server)
            .unwrap_or(std::borrow::Cow::Borrowed(env));
        if let Err(e) = adapter.close(open, &server_env).await {
            eprintln!(
                "mcp-harness-kit: the closing close failed: {}",
                env.redact(&e.to_string())
            );
        }
    }
    if traced {
        adapter.shutdown_traces().await;
    }
}

async fn perform<A: Adapter>(
    adapter: &mut A,
    connection: &mut Option<A::Connection>,
    env: &Env,
    step: &Step,
) -> Result<Value, StepError> {
    let lacking = undeclared(step, env, A::FEATURES);
    let refused = || {
        Err(StepError::unsupported(format!(
            "this adapter does not declare the feature {} (the kit's features)",
            lacking.join(", ")
        )))
    };
    match step {
        Step::Connect {
            handlers,
            trace_context,
            ..
        } => {
            if let Some(previous) = connection.take()
                && let Err(e) = adapter.close(previous, env).await
            {
                eprintln!(
                    "mcp-harness-kit: closing before a new connect failed: {}",
                    env.redact(&e.to_string())
                );
            }
            if !lacking.is_empty() {
                return refused();
            }
            adapter.trace_context(trace_context.as_ref());
            let (open, ok) = adapter.connect(env, handlers).await?;
            *connection = Some(open);
            Ok(ok)
        }
        Step::Sleep(duration) => {
            sleep(*duration).await;
            Ok(json!({}))
        }
        Step::Close => match connection.take() {
            Some(open) => adapter.close(open, env).await.map(|()| json!({})),
            None => Err(StepError::not_connected()),
        },
        other if !A::OPS.contains(&other.op()) => Err(StepError::unsupported(format!(
            "this adapter does not implement the op {:?}",
            other.op()
        ))),
        other => match connection {
            Some(_) if !lacking.is_empty() => refused(),
            Some(open) => adapter.step(open, env, other).await,
            None => Err(StepError::not_connected()),
        },
    }
}

#[cfg(test)]
mod tests;

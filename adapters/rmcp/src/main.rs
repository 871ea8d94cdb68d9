//! mcp-harness driver-contract adapter (version 1) for the Rust MCP SDK `rmcp`, on the Rust
//! adapter kit (`adapters/kits/rust`): the kit reads the environment, runs the plan, guards
//! stdout and prints the outcome lines; this crate is the calls into rmcp.
//!
//! The adapter reports what rmcp does and adds no guard of its own: no repeated-cursor or
//! duplicate-name checks, no URL policy, no version check, and no timeout beyond rmcp's own
//! per-request option (`PeerRequestOptions::timeout`). On authorization trials it is rmcp's
//! OAuth client, with the application's part (authorize on a challenge, then run the step
//! again) in `oauth.rs`. Tasks are rmcp's 2026-07-28 task calls, polled as rmcp leaves it to
//! its user (`tasks.rs`).

mod events;
mod failure;
mod handler;
mod oauth;
mod requests;
mod session;
mod tasks;

use std::process::ExitCode;
use std::time::Duration;

use mcp_harness_kit::{Adapter, Env, Kind, Step, StepError};
use serde_json::{Map, Value};

use session::Session;

#[derive(Default)]
struct Rmcp {
    /// The trial's OAuth client (authorization trials over HTTP), made at the first connect.
    oauth: Option<oauth::OAuth>,
}

impl Rmcp {
    /// What the application does when a step met a 401/403 challenge: authorize and let the
    /// step run again, at most [`oauth::AUTHORIZATIONS_PER_STEP`] times. `Ok(false)`: the error
    /// was no challenge (or the trial has no OAuth client), so it stands.
    async fn authorized_after(
        &self,
        error: &StepError,
        rounds: &mut usize,
    ) -> Result<bool, StepError> {
        let (Some(oauth), Some(challenge)) = (&self.oauth, oauth::take_challenge()) else {
            return Ok(false);
        };
        if *rounds >= oauth::AUTHORIZATIONS_PER_STEP {
            return Err(StepError::new(
                Kind::AuthFailed,
                format!(
                    "still unauthorized after {rounds} authorizations in one step: {}",
                    error.message
                ),
            ));
        }
        *rounds += 1;
        oauth.authorize(&challenge).await?;
        Ok(true)
    }
}

impl Adapter for Rmcp {
    type Connection = Session;
    // No `traces`: rmcp's `tracing` spans are its service loop's and transport worker's, none per
    // request, and it has no OpenTelemetry of its own; the kit answers a traces trial
    // unsupported_op.
    const FEATURES: &'static [&'static str] =
        &["roots", "sampling", "elicitation", "oauth", "tasks"];

    const OPS: &'static [&'static str] = &[
        "list_tools",
        "call_tool",
        "discover",
        "list_resources",
        "list_resource_templates",
        "list_prompts",
        "read_resource",
        "get_prompt",
        "complete",
        "ping",
        "set_logging_level",
        "events",
        "set_roots",
        "subscribe_resource",
        "unsubscribe_resource",
        "listen",
        "get_task",
        "cancel_task",
        "task_result",
        "list_tasks",
    ];

    async fn connect(
        &mut self,
        env: &Env,
        handlers: &Map<String, Value>,
    ) -> Result<(Session, Value), StepError> {
        if self.oauth.is_none() {
            self.oauth = oauth::OAuth::for_trial(env).await?;
        }
        let mut rounds = 0;
        loop {
            oauth::take_challenge();
            match Session::connect(env, handlers, self.oauth.as_ref()).await {
                Err(error) if self.authorized_after(&error, &mut rounds).await? => continue,
                outcome => return outcome,
            }
        }
    }

    async fn step(
        &mut self,
        session: &mut Session,
        env: &Env,
        step: &Step,
    ) -> Result<Value, StepError> {
        let mut rounds = 0;
        loop {
            oauth::take_challenge();
            match perform(session, env, step).await {
                Err(error) if self.authorized_after(&error, &mut rounds).await? => continue,
                outcome => return outcome,
            }
        }
    }

    async fn close(&mut self, session: Session, _env: &Env) -> Result<(), StepError> {
        session.close().await
    }
}

/// One step on rmcp's session.
async fn perform(session: &mut Session, env: &Env, step: &Step) -> Result<Value, StepError> {
    let timeout = env.timeout;
    match step {
        Step::ListTools => session.list_tools().await,
        Step::CallTool(call) if call.is_task() => session.call_task(call, timeout).await,
        Step::CallTool(call) => session.call_tool(call, timeout).await,
        Step::Discover => session.discover().await,
        Step::ListResources => session.list_resources().await,
        Step::ListResourceTemplates => session.list_resource_templates().await,
        Step::ListPrompts => session.list_prompts().await,
        Step::ReadResource { uri, input } => session.read_resource(uri, input, timeout).await,
        Step::GetPrompt {
            name,
            arguments,
            input,
        } => session.get_prompt(name, arguments, input, timeout).await,
        Step::Complete {
            reference,
            argument,
            context,
        } => {
            session
                .complete(reference, argument, context.as_ref(), timeout)
                .await
        }
        Step::Ping => session.ping(timeout).await,
        Step::SetLoggingLevel { level } => session.set_logging_level(level, timeout).await,
        Step::Events { min } => session.events(*min, timeout).await,
        Step::SetRoots { roots } => session.set_roots(roots).await,
        Step::SubscribeResource { uri } => session.subscribe_resource(uri, timeout).await,
        Step::UnsubscribeResource { uri } => session.unsubscribe_resource(uri, timeout).await,
        Step::Listen { notifications } => session.listen(notifications, timeout).await,
        Step::GetTask { task_id } => session.get_task(task_id, timeout).await,
        Step::CancelTask { task_id } => session.cancel_task(task_id, timeout).await,
        Step::TaskResult { .. } | Step::ListTasks => Err(tasks::no_such_request(step.op())),
        other => Err(StepError::unsupported(format!(
            "this adapter does not implement {}",
            other.op()
        ))),
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    // rmcp's reqwest is built without a crypto provider; ring is ours, installed before any
    // client is built (rmcp's OAuth manager builds its own at the first authorization trial's
    // connect).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let code = mcp_harness_kit::run(|_| Rmcp::default()).await;
    // rmcp cleans up some things from detached tasks (a child process whose handshake failed
    // is killed by a task spawned from the transport's Drop). An application's runtime would
    // keep running; give those tasks a moment before this one stops.
    tokio::time::sleep(Duration::from_millis(100)).await;
    code
}

//! Host mode (`mcp-harness serve`): whether a case can be played for a host that connects on
//! its own, with no plan handed to it. Such a host is told only a command line or a URL (and
//! the CA): nothing else a driver gives its client (a token, an era, handlers, a timeout), and
//! it does whatever requests it makes of its own accord. The rule is data-driven so that a
//! user's case gets the same answer as a built-in one; `host` in the case file overrides it.

use super::check::{Rule, StepOutcome};
use super::file::Network;
use super::{ErrorKind, Scenario, Step, WireStream};

impl Scenario {
    /// Whether `mcp-harness serve` may play this case: `Ok` when it may, else why not. The
    /// case's `host` decides when set; otherwise the case must have a wire check (not on the
    /// client's output) or a lifecycle check citing no `CONTRACT-*` requirement, need nothing
    /// only a driver can be told, make
    /// every step a request a host makes of its own accord, and expect no step to end only in
    /// a `timeout` (see [`super::file::CaseFile::host`]).
    pub fn servable(&self) -> Result<(), String> {
        // Not even with `host: true`: serve runs no OTLP receiver, and a host is not told to
        // trace, so a traces case's span checks would judge nothing.
        if self.traces.is_some() {
            return Err("it asks for traces (`traces`), which a host is not told to export".into());
        }
        match self.host {
            Some(true) => return Ok(()),
            Some(false) => return Err("the case says `host: false`".into()),
            None => {}
        }
        // A check citing the driver contract binds no host, so it cannot make a case servable.
        let judged = self.checks.iter().any(|c| match &c.rule {
            _ if c.requirement.id.starts_with("CONTRACT-") => false,
            Rule::Wire(w) => w.on != WireStream::ClientOutput,
            Rule::Lifecycle(_) => true,
            Rule::Step { .. } => false,
        });
        if !judged {
            return Err("it has no wire or lifecycle check a host's traffic can show".into());
        }
        let told = [
            (
                self.server.auth.is_some(),
                "an authorization server (`server.auth`)",
            ),
            (self.bearer_token, "a bearer token"),
            (self.network == Network::Isolated, "an isolated network"),
            (!self.needs.is_empty(), "`needs`"),
            (self.client_era.is_some(), "an era (`client_era`)"),
        ];
        if let Some((_, what)) = told.iter().find(|(has, _)| *has) {
            return Err(format!("it needs {what}, which a host cannot be told"));
        }
        if let Some(step) = self.plan.iter().find(|s| !plain_request(s)) {
            return Err(format!(
                "its step `{}` needs options a host cannot be told",
                step.op()
            ));
        }
        let timer = self.checks.iter().any(|c| match &c.rule {
            Rule::Step {
                outcome: StepOutcome::Error(e),
                ..
            } => e.kinds == [ErrorKind::Timeout],
            _ => false,
        });
        if timer {
            return Err("a step expects a timeout, whose length is the host's own".into());
        }
        Ok(())
    }
}

/// A step a host makes on its own, with nothing more than what a person asks it.
fn plain_request(step: &Step) -> bool {
    match step {
        Step::Connect {
            handlers,
            tasks,
            trace_context,
        } => handlers.is_none() && tasks.is_none() && trace_context.is_none(),
        Step::CallTool {
            cancel_after_ms,
            input,
            progress,
            max_timeout_ms,
            task,
            background,
            ..
        } => {
            cancel_after_ms.is_none()
                && input.is_none()
                && !progress
                && max_timeout_ms.is_none()
                && task.is_none()
                && !background
        }
        Step::ListTools
        | Step::ListResources
        | Step::ListResourceTemplates
        | Step::ReadResource { .. }
        | Step::ListPrompts
        | Step::GetPrompt { .. }
        | Step::Complete { .. }
        | Step::Ping
        | Step::Close => true,
        _ => false,
    }
}

//! Whether a resolved case can mean anything, checked in small named steps before any client
//! runs. Each step returns the place in the file (a JSON path) and what was expected there.

use crate::matcher;
use crate::model::era::REVISIONS;
use crate::model::file::CaseFile;
use crate::model::{
    ClientEra, Endpoint, GetMode, Handler, Reply, Rule, Scenario, Send, SendAt, ServerEra,
    ServerScript, Step, Transport, Via, WireRule, WireStream,
};
use serde_json::Value;

type Problem = (String, String);

/// Every check of a case, in order.
pub(super) fn check(file: &CaseFile, s: &Scenario) -> Result<(), Problem> {
    shape(s)?;
    revisions(file, s)?;
    modern_ops(s)?;
    together(s)?;
    check_handlers(&file.server.handlers, "server.handlers")?;
    check_sends(
        &s.server,
        file.server.handlers.len(),
        s.transports.contains(&Transport::Https),
    )?;
    super::tasks::check(&s.server)?;
    received_tasks(s)?;
    matchers(s)?;
    redirect_urls(s)?;
    auth(s)?;
    transports_of_checks(s)?;
    observes_traffic(s)?;
    super::deadline::check(file, s)
}

/// A redirect to a URL of the case's choosing, or a discovered URL replaced by one, only where
/// the client's network is the trial's own namespace: on the host it could reach a real
/// private or metadata address.
fn redirect_urls(s: &Scenario) -> Result<(), Problem> {
    let isolated = s.network == crate::model::file::Network::Isolated;
    let discovered = s
        .server
        .auth
        .as_ref()
        .and_then(|a| a.discovered_url.as_ref());
    if discovered.is_some() && !isolated {
        return Err((
            "server.auth.discovered_url".into(),
            "a discovered URL of the case's choosing needs `\"network\": \"isolated\"`".into(),
        ));
    }
    for (i, h) in s.server.handlers.iter().enumerate() {
        let to_url = h
            .http
            .as_ref()
            .and_then(|http| http.redirect.as_ref())
            .is_some_and(|r| matches!(r.to, crate::model::RedirectTarget::Url(_)));
        if to_url && s.network != crate::model::file::Network::Isolated {
            return Err((
                format!("server.handlers[{i}].http.redirect.to"),
                "a redirect to a URL needs `\"network\": \"isolated\"`; elsewhere use \"plain_http\" or \"other_host\"".into(),
            ));
        }
    }
    Ok(())
}

/// A `connect`'s `tasks`: each method has an answer in its `handlers`, and the case runs
/// only at revisions with tasks (2025-11-25; the 2026-07-28 era has no server requests).
fn received_tasks(s: &Scenario) -> Result<(), Problem> {
    for (i, step) in s.plan.iter().enumerate() {
        let Step::Connect {
            handlers,
            tasks: Some(tasks),
            ..
        } = step
        else {
            continue;
        };
        for (j, method) in tasks.iter().enumerate() {
            let answered = handlers
                .as_ref()
                .is_some_and(|h| h.contains_key(method.method()));
            if !answered {
                return Err((
                    format!("plan[{i}].tasks[{j}]"),
                    format!(
                        "{:?} has no answer in this connect's handlers: a task completes with it",
                        method.method()
                    ),
                ));
            }
        }
        let other = s.revisions.iter().find(|r| r.as_str() != "2025-11-25");
        if s.revisions.is_empty() || other.is_some() {
            return Err((
                format!("plan[{i}].tasks"),
                format!(
                    "a client serves requests as tasks at 2025-11-25 only; the case runs at {} \
                     (set \"revisions\": [\"2025-11-25\"])",
                    other.map_or("every revision", String::as_str)
                ),
            ));
        }
    }
    Ok(())
}

/// A transport, a plan that starts by connecting, positive times.
fn shape(s: &Scenario) -> Result<(), Problem> {
    if s.transports.is_empty() {
        return Err((
            "transports".into(),
            "expected at least one transport".into(),
        ));
    }
    if s.plan.is_empty() {
        return Err(("plan".into(), "expected at least one step".into()));
    }
    if !matches!(s.plan.first(), Some(Step::Connect { .. })) {
        return Err((
            "plan[0]".into(),
            "expected the plan to start with `connect`".into(),
        ));
    }
    if s.network == crate::model::file::Network::Isolated
        && s.transports.iter().any(|t| *t != Transport::Https)
    {
        return Err((
            "network".into(),
            "an isolated network runs the HTTPS fake inside it: expected `transports: [\"https\"]`"
                .into(),
        ));
    }
    if s.deadline_ms == 0 || s.timeout_ms == 0 {
        return Err((
            "deadline_ms / timeout_ms".into(),
            "expected a positive number of milliseconds".into(),
        ));
    }
    Ok(())
}

/// Known revisions, each once; wire checks restricted to revisions the case runs at; a
/// fallback version only for a dual-era client.
fn revisions(file: &CaseFile, s: &Scenario) -> Result<(), Problem> {
    for (i, rev) in s.revisions.iter().enumerate() {
        if !REVISIONS.contains(&rev.as_str()) {
            return Err((
                format!("revisions[{i}]"),
                format!("expected one of {REVISIONS:?}, found {rev:?}"),
            ));
        }
        if s.revisions[..i].contains(rev) {
            return Err((
                format!("revisions[{i}]"),
                format!("{rev:?} is listed twice"),
            ));
        }
    }
    if s.legacy_protocol_version.is_some() && s.client_era != Some(ClientEra::Dual) {
        return Err((
            "legacy_protocol_version".into(),
            "only a dual-era client has a fallback version: expected `client_era: \"dual\"`".into(),
        ));
    }
    for (i, w) in file.wire.iter().enumerate() {
        let revs = &w.expectation.revisions;
        if let Some(rev) = revs.iter().find(|r| !s.revisions.contains(r)) {
            return Err((
                format!("wire[{i}].revisions"),
                format!(
                    "{rev:?} is not among the case's `revisions` {:?}",
                    s.revisions
                ),
            ));
        }
    }
    Ok(())
}

/// A `together` step runs at least two requests of the open connection.
fn together(s: &Scenario) -> Result<(), Problem> {
    for (i, step) in s.plan.iter().enumerate() {
        let Step::Together { steps } = step else {
            continue;
        };
        if steps.len() < 2 {
            return Err((
                format!("plan[{i}].steps"),
                "expected at least two steps to run at once".into(),
            ));
        }
        for (j, inner) in steps.iter().enumerate() {
            if matches!(
                inner,
                Step::Connect { .. }
                    | Step::Close
                    | Step::Sleep { .. }
                    | Step::Events { .. }
                    | Step::Together { .. }
            ) {
                return Err((
                    format!("plan[{i}].steps[{j}]"),
                    format!(
                        "`{}` cannot run inside `together`: expected a request of the open connection (call_tool, list_tools, …)",
                        inner.op()
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// `discover` and `input` need a modern or dual-era client.
fn modern_ops(s: &Scenario) -> Result<(), Problem> {
    let modern_client = matches!(s.client_era, Some(ClientEra::Modern | ClientEra::Dual));
    for (i, step) in s.plan.iter().enumerate() {
        let modern_only = match step {
            Step::Discover => true,
            Step::CallTool { input, .. } => input.is_some(),
            _ => false,
        };
        if modern_only && !modern_client {
            return Err((
                format!("plan[{i}]"),
                "`discover` and `input` are modern-era features: expected `client_era` \"modern\" or \"dual\""
                    .into(),
            ));
        }
    }
    Ok(())
}

/// Handlers' `params` matchers, their faults' emits, their redirects (`at` is where the list is).
pub(super) fn check_handlers(handlers: &[Handler], at: &str) -> Result<(), Problem> {
    for (i, h) in handlers.iter().enumerate() {
        if let Some(params) = &h.params {
            matcher::validate(params).map_err(|m| (format!("{at}[{i}].params"), m))?;
        }
        match h.times {
            Some(0) => {
                return Err((
                    format!("{at}[{i}].times"),
                    "a rule that answers no request: expected `times` of at least 1, or no rule"
                        .into(),
                ));
            }
            Some(_) if h.method.starts_with("notifications/") => {
                return Err((
                    format!("{at}[{i}].times"),
                    format!(
                        "`{}` is a notification, whose rule plays every time it arrives: expected no `times`",
                        h.method
                    ),
                ));
            }
            _ => {}
        }
        if let Some(faults) = &h.faults {
            for (j, emit) in faults.before.iter().enumerate() {
                if emit.payload().is_none() {
                    return Err((
                        format!("{at}[{i}].faults.before[{j}]"),
                        "expected exactly one of `message`, `raw` and `bytes`".into(),
                    ));
                }
            }
        }
        for (j, send) in h.sends.iter().enumerate() {
            let at = format!("{at}[{i}].sends[{j}].message");
            // What goes out before it: earlier messages of the same `at`, or any earlier one
            // before the reply when it goes after.
            let earlier: Vec<&Send> = h.sends[..j]
                .iter()
                .filter(|s| s.at == SendAt::Before || send.at == SendAt::After)
                .collect();
            check_request_pointers(&send.message, &earlier, &at)?;
        }
        let redirect = h.http.as_ref().and_then(|r| r.redirect.as_ref());
        if let Some(r) = redirect.filter(|r| !(300..400).contains(&r.status)) {
            return Err((
                format!("{at}[{i}].http.redirect.status"),
                format!("expected a 3xx status, got {}", r.status),
            ));
        }
    }
    Ok(())
}

/// Every `{"$request": P}` in a sent message names a JSON pointer (`/…`) into the request;
/// every `{"$response": {"id": I, "pointer": P}}` names the id of a request one of `earlier`
/// (the messages before it in the same list) sends with `await_response`, and a pointer.
fn check_request_pointers(message: &Value, earlier: &[&Send], at: &str) -> Result<(), Problem> {
    match message {
        Value::Object(map) if map.len() == 1 && map.contains_key("$request") => {
            match map.get("$request").and_then(Value::as_str) {
                Some(p) if p.starts_with('/') => Ok(()),
                _ => Err((
                    at.to_owned(),
                    format!(
                        "{message}: expected {{\"$request\": \"/json/pointer\"}}, a pointer into \
                         the triggering request starting with `/` (e.g. \"/params/_meta/progressToken\")"
                    ),
                )),
            }
        }
        Value::Object(map) if map.len() == 1 && map.contains_key("$response") => {
            check_response_reference(&map["$response"], earlier, at)
        }
        Value::Object(map) => map
            .iter()
            .try_for_each(|(k, v)| check_request_pointers(v, earlier, &format!("{at}.{k}"))),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .try_for_each(|(i, v)| check_request_pointers(v, earlier, &format!("{at}[{i}]"))),
        _ => Ok(()),
    }
}

/// `{"$response": {"id": I, "pointer": P}}`: exactly `id` (of an awaited earlier request)
/// and `pointer` (starting with `/`).
fn check_response_reference(reference: &Value, earlier: &[&Send], at: &str) -> Result<(), Problem> {
    let at = format!("{at}.$response");
    let expected = "expected {\"id\": <the id of an earlier request in this sends list, sent \
                    with await_response>, \"pointer\": \"/json/pointer\"}";
    let Some(map) = reference.as_object() else {
        return Err((at, format!("{expected}, got {reference}")));
    };
    if let Some(extra) = map.keys().find(|k| !matches!(k.as_str(), "id" | "pointer")) {
        return Err((at, format!("unknown member {extra:?}: {expected}")));
    }
    match map.get("pointer").and_then(Value::as_str) {
        Some(p) if p.starts_with('/') => {}
        other => {
            return Err((
                format!("{at}.pointer"),
                format!(
                    "expected a JSON pointer into the response starting with `/` (e.g. \
                     \"/result/task/taskId\"), got {}",
                    other.map_or_else(|| "nothing".to_owned(), |p| format!("{p:?}"))
                ),
            ));
        }
    }
    let Some(id) = map.get("id") else {
        return Err((format!("{at}.id"), format!("missing: {expected}")));
    };
    let awaited = earlier.iter().any(|s| {
        s.await_response && s.message.get("method").is_some() && s.message.get("id") == Some(id)
    });
    if !awaited {
        return Err((
            format!("{at}.id"),
            format!(
                "{id} is not the id of a request sent earlier in this sends list with \
                 \"await_response\": true, so no response to it is known when this message goes out"
            ),
        ));
    }
    Ok(())
}

/// A message sent on the standalone GET stream needs one (`http.get` `stream`, in a legacy
/// or dual-era script): always when a message says `via: get`, and, when `https` (the case
/// runs over HTTP), also when it travels there by default (after the reply, or on a
/// notification). `own` is how many of the script's handlers are the case's own (the rest
/// come from fixtures). The `subscriptions/listen` rule of a modern script sends on its
/// own stream.
pub(super) fn check_sends(server: &ServerScript, own: usize, https: bool) -> Result<(), Problem> {
    let place = |i: usize, h: &Handler| match i < own {
        true => format!("server.handlers[{i}]"),
        false => format!("fixture handler {} ({})", i - own, h.method),
    };
    for (i, h) in server.handlers.iter().enumerate() {
        let http = h.http.clone().unwrap_or_default();
        if http.cut_resumes > 0 && (http.cut_after_events.is_none() || !server.http.event_ids) {
            return Err((
                place(i, h),
                "`http.cut_resumes` needs `http.cut_after_events` and the script's \
                 `http.event_ids`: only a stream with event ids is resumed"
                    .to_owned(),
            ));
        }
        let live = !h.sends.is_empty() || http.cut_after_events.is_some();
        let plain = h.faults.is_none()
            && !http.split
            && !http.cut
            && http.status.is_none()
            && http.redirect.is_none()
            && matches!(h.reply, Reply::Result(_) | Reply::Error(_) | Reply::Hang);
        if live && !plain && (https || http.cut_after_events.is_some()) {
            let what = match http.cut_after_events {
                Some(_) => "http.cut_after_events",
                None => "sends",
            };
            return Err((
                place(i, h),
                format!(
                    "over HTTP `{what}` needs a plain answer: expected a `result`, an `error` or \
                     \"hang\", with no `faults` and no `http.split`, `http.cut`, `http.status` or \
                     `http.redirect`"
                ),
            ));
        }
    }
    let streams = server.http.get == GetMode::Stream && server.era != ServerEra::Modern;
    if streams {
        return Ok(());
    }
    for (i, h) in server.handlers.iter().enumerate() {
        if h.method == "subscriptions/listen" {
            continue;
        }
        let on_notification = h.method.starts_with("notifications/");
        for (j, send) in h.sends.iter().enumerate() {
            let explicit = send.via == Some(Via::Get);
            let by_default =
                https && send.via.is_none() && (on_notification || send.at == SendAt::After);
            if !explicit && !by_default {
                continue;
            }
            let at = format!("{}.sends[{j}]", place(i, h));
            let expected = match server.era {
                ServerEra::Modern => {
                    "expected `via: post`: the 2026-07-28 era has no standalone GET stream"
                }
                _ if explicit => "expected `server.http.get` \"stream\" for `via: get`",
                _ => {
                    "over HTTP this message travels on the standalone GET stream (the default \
                     after a reply and on a notification): expected `server.http.get` \"stream\", \
                     or `via: post`"
                }
            };
            let at = match explicit {
                true => format!("{at}.via"),
                false => at,
            };
            return Err((at, expected.into()));
        }
    }
    Ok(())
}

/// Where each check is written in the file.
fn locations(s: &Scenario) -> Vec<String> {
    let (mut wire, mut lifecycle) = (0, 0);
    s.checks
        .iter()
        .map(|c| match &c.rule {
            Rule::Step { index, .. } => format!("plan[{index}]"),
            Rule::Wire(_) => {
                wire += 1;
                format!("wire[{}]", wire - 1)
            }
            Rule::Lifecycle(_) => {
                lifecycle += 1;
                format!("lifecycle[{}]", lifecycle - 1)
            }
        })
        .collect()
}

/// No misspelt matcher operator in any expectation.
fn matchers(s: &Scenario) -> Result<(), Problem> {
    for (c, at) in s.checks.iter().zip(locations(s)) {
        if let Rule::Step { when: Some(w), .. } = &c.rule {
            matcher::validate(w).map_err(|msg| (format!("{at}.when"), msg))?;
        }
        match &c.rule {
            Rule::Step {
                outcome:
                    crate::model::StepOutcome::Ok(m) | crate::model::StepOutcome::Either { ok: m, .. },
                ..
            } => matcher::validate(m).map_err(|msg| (format!("{at}.ok"), msg))?,
            Rule::Wire(w) => {
                for m in w
                    .rule
                    .matchers()
                    .into_iter()
                    .chain(&w.filter)
                    .chain(&w.when)
                {
                    matcher::validate(m).map_err(|msg| (at.clone(), msg))?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// `server.auth` is HTTPS only, on the trusted endpoint, and must make sense as a whole.
fn auth(s: &Scenario) -> Result<(), Problem> {
    let Some(auth) = &s.server.auth else {
        return Ok(());
    };
    if !s.transports.iter().all(|t| *t == Transport::Https) {
        return Err((
            "transports".into(),
            "`server.auth` cases are HTTPS only: expected `transports: [\"https\"]`".into(),
        ));
    }
    if s.server.http.endpoint != Endpoint::Trusted {
        return Err((
            "server.http.endpoint".into(),
            "`server.auth` needs the trusted endpoint (leave `http.endpoint` out)".into(),
        ));
    }
    if s.bearer_token {
        return Err((
            "bearer_token".into(),
            "`server.auth` issues its own tokens: leave `bearer_token` out".into(),
        ));
    }
    if let Some(problem) = auth.problem() {
        return Err(("server.auth".into(), problem));
    }
    Ok(())
}

/// HTTP request checks need an https-only case, lifecycle checks a stdio-only one.
fn transports_of_checks(s: &Scenario) -> Result<(), Problem> {
    for (c, at) in s.checks.iter().zip(locations(s)) {
        match &c.rule {
            Rule::Wire(w)
                if w.on == WireStream::HttpRequests
                    && !s.transports.iter().all(|t| *t == Transport::Https) =>
            {
                return Err((
                    format!("{at}.on"),
                    "`http_requests` checks need `transports: [\"https\"]` only".into(),
                ));
            }
            Rule::Wire(w) if w.on == WireStream::Spans && s.traces.is_none() => {
                return Err((
                    format!("{at}.on"),
                    "a `spans` check needs the case to ask for traces: expected `\"traces\": {}`"
                        .into(),
                ));
            }
            Rule::Wire(w)
                if w.on == WireStream::Canary
                    && !s.server.uses_canary()
                    && s.network != crate::model::file::Network::Isolated =>
            {
                return Err((
                    format!("{at}.on"),
                    format!(
                        "a `canary` check needs a server script that names the canary: \
                         expected {:?} in some string of `server` (or its fixtures), or \
                         `\"network\": \"isolated\"` (whose canaries are the namespace's)",
                        crate::model::canary::PLACEHOLDER
                    ),
                ));
            }
            Rule::Lifecycle(_) if s.transports.iter().any(|t| *t != Transport::Stdio) => {
                return Err((
                    at,
                    "lifecycle checks are about a stdio server process: expected `transports: [\"stdio\"]`"
                        .into(),
                ));
            }
            _ => {}
        }
    }
    Ok(())
}

/// A check a do-nothing client fails: outcome lines alone can be printed by anyone. Where
/// the right behaviour is to send nothing at all (a refused URL or certificate), the outcome
/// kind is what tells a careful client from an idle one.
fn observes_traffic(s: &Scenario) -> Result<(), Problem> {
    let refuses_before_sending = matches!(
        s.server.http.endpoint,
        Endpoint::InsecureRemote | Endpoint::UntrustedCa | Endpoint::WrongName
    );
    let observes = s.checks.iter().any(|c| match &c.rule {
        Rule::Wire(w) => {
            !matches!(w.rule, WireRule::NotSent(_) | WireRule::Spaced { .. })
                && w.revisions.is_empty()
        }
        Rule::Lifecycle(_) => true,
        Rule::Step { .. } => refuses_before_sending,
    });
    if !observes {
        return Err((
            "wire".into(),
            "expected at least one `wire` check other than `not_sent`, or a `lifecycle` check: \
             outcome lines alone can be printed by a client that does nothing"
                .into(),
        ));
    }
    Ok(())
}

//! The deadline lint: the trial deadline never raises a level. A client still running at the
//! deadline is killed and fails the always-on deadline check at `must` (CONTRACT-3), whatever
//! the case's level, so a case must not let the deadline be reached by
//! - a correct but slow client: the deadline covers the plan's budget ([`budget`]);
//! - a client that misses only a `should`, `profile` or `advisory` check and loops because of
//!   it (pages that never end, a repeated cursor, a step-up challenge that never ends): the
//!   case ends the loop in its script, so the check fails at its own level, or names the gap
//!   in `unbounded_loop` ([`loops`]);
//! - a client that misses only such a check by never giving up: a step that accepts
//!   `timeout` under a lenient check gets its answer late (`delay_ms` past `timeout_ms`)
//!   instead of never, so a client without a timeout finishes and fails that check at its own
//!   level ([`never_answered`]); the deadline covers the late answer too ([`budget`]).

use serde_json::Value;

use crate::matcher::{self, Captures};
use crate::model::auth::{AuthScript, AuthorizeAttempt};
use crate::model::check::{CaseCheck, Rule, StepOutcome};
use crate::model::file::CaseFile;
use crate::model::{ErrorKind, Handler, Level, Reply, Scenario, Step, Truncate};

type Problem = (String, String);

/// Both rules of the lint.
pub(super) fn check(file: &CaseFile, s: &Scenario) -> Result<(), Problem> {
    covers_budget(s)?;
    let found = loops(s);
    match (&file.unbounded_loop, found.first()) {
        (None, Some((at, why))) => Err((at.clone(), why.clone())),
        (Some(reason), _) if reason.trim().is_empty() => Err((
            "unbounded_loop".into(),
            "expected the reason the case cannot end the loop itself".into(),
        )),
        (Some(_), None) => Err((
            "unbounded_loop".into(),
            "no loop that only a should, profile or advisory check stops was found; expected no `unbounded_loop`".into(),
        )),
        _ => Ok(()),
    }
}

/// What a correct but slow client may spend, in milliseconds (unscaled, as the file states
/// it; the time scale multiplies the deadline and every part alike): one request timeout for
/// starting, the answered steps and closing, plus the bound of every step that may end by its
/// timeout or its cancel, plus every sleep, plus the run of every task a call drives. Also returns the parts, for the message.
pub fn budget(s: &Scenario) -> (u64, Vec<String>) {
    let t = s.timeout_ms;
    let mut total = t;
    let mut parts = vec![format!(
        "{t} ms (one timeout_ms: starting, the answered steps, closing)"
    )];
    for (i, step) in s.plan.iter().enumerate() {
        let bound = match step {
            Step::Sleep { ms } => Some(*ms),
            Step::CallTool {
                cancel_after_ms,
                max_timeout_ms,
                ..
            } => {
                let timeout = max_timeout_ms.map_or(t, |m| m.max(t));
                match cancel_after_ms {
                    Some(c) => Some((*c).min(timeout)),
                    None if accepts_timeout(s, i) => Some(timeout.max(late_answer(s, i))),
                    None => None,
                }
            }
            _ if accepts_timeout(s, i) => Some(t.max(late_answer(s, i))),
            _ => None,
        };
        if let Some(b) = bound {
            total = total.saturating_add(b);
            parts.push(format!("{b} ms (plan[{i}], {})", step.op()));
        }
        if let Step::CallTool {
            name,
            cancel_after_ms: None,
            ..
        } = step
            && let Some(run) = task_run_ms(s, name)
        {
            total = total.saturating_add(run);
            parts.push(format!(
                "{run} ms (plan[{i}], the task's phases and one poll)"
            ));
        }
    }
    (total, parts)
}

/// How long a task of the tool `name` runs as scripted (its phases' `ms` and `settles_ms`),
/// plus one poll interval: what a client driving it to its end waits at least.
fn task_run_ms(s: &Scenario, name: &str) -> Option<u64> {
    let task = s.server.tasks.iter().find(|t| t.tool == name)?;
    let phases = task
        .phases
        .iter()
        .map(|p| p.ms.unwrap_or(0).saturating_add(p.settles_ms));
    Some(phases.fold(task.poll_interval_ms.unwrap_or(0), u64::saturating_add))
}

/// The rules that may answer step `i`'s request, where the step's op names one request (a
/// listing's every page): `initialize` for `connect`, the tool's `tools/call`, and so on.
fn answering(s: &Scenario, i: usize) -> impl Iterator<Item = (usize, &Handler)> {
    let step = &s.plan[i];
    let (method, tool) = match step {
        Step::Connect { .. } => (Some("initialize"), None),
        Step::CallTool { name, .. } => (Some("tools/call"), Some(name.as_str())),
        Step::Ping => (Some("ping"), None),
        Step::ReadResource { .. } => (Some("resources/read"), None),
        Step::GetPrompt { .. } => (Some("prompts/get"), None),
        Step::Complete { .. } => (Some("completion/complete"), None),
        _ => (listing_method(step), None),
    };
    s.server.handlers.iter().enumerate().filter(move |(_, h)| {
        Some(h.method.as_str()) == method
            && tool.is_none_or(|name| {
                h.params
                    .as_ref()
                    .and_then(|p| p.get("name"))
                    .and_then(Value::as_str)
                    .is_none_or(|n| n == name)
            })
    })
}

/// Whether a rule never completes its answer: it hangs, or stalls halfway.
fn never_answers(h: &Handler) -> bool {
    matches!(h.reply, Reply::Hang)
        || h.faults
            .as_ref()
            .is_some_and(|f| f.truncate == Some(Truncate::Stall))
}

/// The latest delay of a rule that may answer step `i`: when a client without a timeout gets
/// its answer.
fn late_answer(s: &Scenario, i: usize) -> u64 {
    answering(s, i).map(|(_, h)| h.delay_ms).max().unwrap_or(0)
}

/// Whether step `i`'s check accepts the error kind `timeout`: a correct client may then end
/// the step at its timeout.
fn accepts_timeout(s: &Scenario, i: usize) -> bool {
    step_checks(s, i).any(|(outcome, _)| match outcome {
        StepOutcome::Error(e) | StepOutcome::Either { error: e, .. } => {
            e.kinds.contains(&ErrorKind::Timeout)
        }
        StepOutcome::Ok(_) => false,
    })
}

/// The outcome checks of step `i`, with their levels.
fn step_checks(s: &Scenario, i: usize) -> impl Iterator<Item = (&StepOutcome, Level)> {
    s.checks
        .iter()
        .filter_map(move |c: &CaseCheck| match &c.rule {
            Rule::Step { index, outcome, .. } if *index == i => {
                Some((outcome, c.requirement.level))
            }
            _ => None,
        })
}

/// The deadline covers the plan's budget.
fn covers_budget(s: &Scenario) -> Result<(), Problem> {
    let (needed, parts) = budget(s);
    if s.deadline_ms >= needed {
        return Ok(());
    }
    Err((
        "deadline_ms".into(),
        format!(
            "a correct but slow client can reach the deadline of {} ms, where it fails CONTRACT-3 at must; expected at least {needed} ms: {}",
            s.deadline_ms,
            parts.join(" + ")
        ),
    ))
}

/// The listing method of a listing op.
fn listing_method(step: &Step) -> Option<&'static str> {
    match step {
        Step::ListTools => Some("tools/list"),
        Step::ListResources => Some("resources/list"),
        Step::ListResourceTemplates => Some("resources/templates/list"),
        Step::ListPrompts => Some("prompts/list"),
        _ => None,
    }
}

/// The `$next_cursor` prefix of a handler whose pages never end.
fn endless_prefix(h: &Handler) -> Option<&str> {
    match &h.reply {
        Reply::Result(r) => r.get("nextCursor")?.get("$next_cursor")?.as_str(),
        _ => None,
    }
}

/// Every loop that only a `should`, `profile` or `advisory` check stops and the script does
/// not end: where it is, and what is expected.
fn loops(s: &Scenario) -> Vec<Problem> {
    let mut found = Vec::new();
    let lenient = |i: usize| -> Option<(Level, String)> {
        s.checks.iter().find_map(|c| match &c.rule {
            Rule::Step { index, .. } if *index == i && c.requirement.level != Level::Must => {
                Some((c.requirement.level, c.requirement.id.clone()))
            }
            _ => None,
        })
    };
    let gap = "or, where the case cannot, `unbounded_loop` naming why";
    for (i, step) in s.plan.iter().enumerate() {
        let Some((level, id)) = lenient(i) else {
            continue;
        };
        let cited = format!(
            "plan[{i}] ({}) cites {id}, a {} check",
            step.op(),
            level.as_str()
        );
        // A listing that can loop (pages that count up without end, or a repeated cursor
        // its check is about) must end for a client that follows every cursor: the rules
        // are played as the fakes play them.
        let endless = listing_method(step).is_some_and(|m| {
            s.server
                .handlers
                .iter()
                .any(|h| h.method == m && endless_prefix(h).is_some())
        });
        let repeated = step_checks(s, i).any(|(outcome, _)| match outcome {
            StepOutcome::Error(e) | StepOutcome::Either { error: e, .. } => {
                e.kinds.first() == Some(&ErrorKind::RepeatedCursor)
            }
            StepOutcome::Ok(_) => false,
        });
        if (endless || repeated) && !listing_method(step).is_some_and(|m| followed_to_an_end(s, m))
        {
            let what = if repeated {
                "follows the repeated cursor"
            } else {
                "follows pages that never end"
            };
            found.push((
                format!("plan[{i}]"),
                format!(
                    "{cited}: a client that misses only that check {what} until the trial deadline and fails CONTRACT-3 at must instead; expected the script to end the listing for a client that follows every cursor (a rule that ends the pages at a cursor past where a correct client stops, or a rule for the repeated cursor with `times` and then a page without `nextCursor`; their `delay_ms` within the deadline's spare), {gap}"
                ),
            ));
        }
        if let Some(problem) = never_answered(s, i, &cited) {
            found.push(problem);
        }
        let stepped_up = s.server.auth.as_ref().and_then(|a| a.step_up.as_ref());
        if let (Step::CallTool { name, .. }, Some(up)) = (step, stepped_up)
            && up.always
            && *name == up.tool
            && !s.server.auth.as_ref().is_some_and(authorizations_end)
        {
            found.push((
                "server.auth.step_up.always".into(),
                format!(
                    "{cited} against a step-up challenge that never ends: a client that misses only that check steps up until the trial deadline and fails CONTRACT-3 at must instead; expected the authorizations to end (`auth.authorize` ending with `wrong_code`, `deny` or `error`, which repeats, the step accepting the failure and `timeout`, the deadline well past it), {gap}"
                ),
            ));
        }
    }
    found
}

/// The most requests [`followed_to_an_end`] plays before it calls a listing endless.
const FOLLOWED_REQUESTS: u32 = 10_000;

/// Whether the script ends a `method` listing for a client that follows every cursor it is
/// given, repeated or not, and checks nothing: the rules are played as the fakes play them
/// (first match, `times` counted, `$next_cursor` counted up) from a request without a cursor,
/// until a page without `nextCursor` or an error ends the listing, within
/// [`FOLLOWED_REQUESTS`] requests whose `delay_ms` fit in the deadline's spare (what the
/// deadline leaves past the plan's [`budget`]). A hang, an exit or a `null` cursor does not
/// count as an end.
fn followed_to_an_end(s: &Scenario, method: &str) -> bool {
    let handlers = &s.server.handlers;
    let spare = s.deadline_ms.saturating_sub(budget(s).0);
    let mut used = vec![0u32; handlers.len()];
    let mut waited = 0u64;
    let mut cursor: Option<String> = None;
    for _ in 0..FOLLOWED_REQUESTS {
        let params = match &cursor {
            Some(c) => serde_json::json!({ "cursor": c }),
            None => serde_json::json!({}),
        };
        let found = handlers.iter().enumerate().find(|(j, h)| {
            h.method == method
                && h.times.is_none_or(|n| used[*j] < n)
                && h.params
                    .as_ref()
                    .is_none_or(|m| matcher::matches(m, &params, &mut Captures::new()).is_ok())
        });
        // No rule: the built-in default, a listing of the called tools or an error, ends it.
        let Some((j, h)) = found else {
            return true;
        };
        used[j] += 1;
        waited = waited.saturating_add(h.delay_ms);
        if waited > spare {
            return false;
        }
        let next = match &h.reply {
            Reply::Result(r) => r.get("nextCursor"),
            Reply::Error(_) => return true,
            _ => return false,
        };
        cursor = match next {
            None => return true,
            Some(Value::String(c)) => Some(c.clone()),
            Some(c) => match c.get("$next_cursor").and_then(Value::as_str) {
                Some(prefix) => {
                    let n = cursor
                        .as_deref()
                        .and_then(|c| c.strip_prefix(prefix))
                        .and_then(|n| n.parse::<u64>().ok())
                        .unwrap_or(0);
                    Some(format!("{prefix}{}", n.saturating_add(1)))
                }
                None => return false,
            },
        };
    }
    false
}

/// Whether every step-up ends: from the last of `auth.authorize` on (it repeats), no
/// authorization yields a token (the code is refused, the user denies, the server errs), so
/// a client that steps up without a limit is stopped by the authorization server, not by
/// the deadline.
fn authorizations_end(auth: &AuthScript) -> bool {
    matches!(
        auth.authorize.last(),
        Some(AuthorizeAttempt::WrongCode | AuthorizeAttempt::Deny | AuthorizeAttempt::Error)
    )
}

/// A step that accepts `timeout` under a lenient check (`cited`), with no cancel of its own,
/// whose request a rule never answers: a client that misses only the timeout waits for it
/// until the trial deadline. The rule is found by the step's method (and, for a call, the tool
/// name); ops whose request is not one method (`close`, `sleep`, `events`) are not judged.
fn never_answered(s: &Scenario, i: usize, cited: &str) -> Option<Problem> {
    if let Step::CallTool {
        cancel_after_ms: Some(_),
        ..
    } = &s.plan[i]
    {
        return None;
    }
    if !accepts_timeout(s, i) {
        return None;
    }
    let (j, _) = answering(s, i).find(|(_, h)| never_answers(h))?;
    Some((
        format!("server.handlers[{j}]"),
        format!(
            "{cited}; it accepts `timeout`, but this rule never answers its request: a client that misses only its timeout waits until the trial deadline and fails CONTRACT-3 at must instead; expected the answer late (`delay_ms` well past `timeout_ms`, the deadline past that), or `unbounded_loop` naming why the case cannot"
        ),
    ))
}

//! From the file a person wrote to the scenario a trial runs: defaults filled in, the
//! requirements looked up in the catalogue, the fixtures' handlers and the built-in `echo`
//! tool appended to the server script, `{"$fake": …}` matchers expanded, and each check
//! named, with its requirement and the broken clients that must fail it.

use serde_json::{Value, json};

use super::{FIXTURES_DIR, Library};
use crate::model::check::{BrokenBy, CaseCheck, Rule, StepOutcome};
use crate::model::era::default_protocol_version;
use crate::model::file::{CaseFile, StepExpect};
use crate::model::timing::TimeScale;
use crate::model::{
    Catalogue, FAKE_SERVER_NAME, Fixture, Handler, Requirement, Scenario, ServerScript, Step,
};

type Problem = (String, String);

/// Resolves one (variant-substituted) case file.
pub(super) fn resolve(file: &CaseFile, library: &Library) -> Result<Scenario, Problem> {
    let catalogue = &library.catalogue;
    let requirement = lookup(catalogue, &file.requirement, "requirement")?;
    let mut fixtures = Vec::new();
    for (i, name) in file.fixtures.iter().enumerate() {
        let fixture = library.fixture(name).ok_or_else(|| {
            (
                format!("fixtures[{i}]"),
                format!(
                    "no fixture {name:?}: expected the name of a file in {} (known: {})",
                    library.root.join(FIXTURES_DIR).display(),
                    library.fixture_names().join(", ")
                ),
            )
        })?;
        fixtures.push(fixture);
    }
    let calls_echo_on = |name: Option<&str>| {
        file.plan
            .iter()
            .any(|p| p.server.as_deref() == name && calls_echo(&p.step))
    };
    let server = complete_server(file.server.clone(), &fixtures, calls_echo_on(None));
    let mut servers = std::collections::BTreeMap::new();
    if !file.servers.is_empty()
        && (file.server.auth.is_some() || file.network == crate::model::file::Network::Isolated)
    {
        return Err((
            "servers".into(),
            "extra servers run beside a plain main server: expected no `server.auth` and no isolated `network` with them".into(),
        ));
    }
    for (name, script) in &file.servers {
        if let Some(why) = crate::model::servers::invalid_name(name) {
            return Err((format!("servers.{name}"), why));
        }
        let script = complete_server(script.clone(), &[], calls_echo_on(Some(name)));
        servers.insert(name.clone(), script);
    }
    let known = |name: &Option<String>, at: String| -> Result<(), Problem> {
        match name {
            Some(name) if !servers.contains_key(name) => Err((
                at,
                format!(
                    "no server {name:?}: expected a name of the case's `servers` ({}), or no `server` for the main one",
                    servers.keys().cloned().collect::<Vec<_>>().join(", ")
                ),
            )),
            _ => Ok(()),
        }
    };
    for (i, p) in file.plan.iter().enumerate() {
        known(&p.server, format!("plan[{i}].server"))?;
    }
    for (i, w) in file.wire.iter().enumerate() {
        known(&w.expectation.server, format!("wire[{i}].server"))?;
    }
    let variants: Vec<String> = file.variants.keys().cloned().collect();
    let own = |id: &Option<String>, at: String| -> Result<Requirement, Problem> {
        match id {
            Some(id) => lookup(catalogue, id, &at),
            None => Ok(requirement.clone()),
        }
    };
    let broken = |entries: &[String], at: &str| -> Result<Vec<BrokenBy>, Problem> {
        entries
            .iter()
            .enumerate()
            .map(|(j, e)| {
                BrokenBy::parse(e, &file.revisions, &variants)
                    .map_err(|m| (format!("{at}.broken_by[{j}]"), m))
            })
            .collect()
    };
    let mut checks = Vec::new();
    for (i, p) in file.plan.iter().enumerate() {
        let Some(e) = &p.expect else { continue };
        let at = format!("plan[{i}]");
        let outcome = match &e.outcome {
            StepOutcome::Ok(m) => StepOutcome::Ok(expand_fake(m, &format!("{at}.ok"))?),
            StepOutcome::Either { ok, error } => StepOutcome::Either {
                ok: expand_fake(ok, &format!("{at}.ok"))?,
                error: error.clone(),
            },
            other => other.clone(),
        };
        checks.push(CaseCheck {
            name: outcome.check_name(i, p.step.op()),
            requirement: step_requirement(catalogue, e, &p.step, &requirement, &at)?,
            broken_by: broken(&e.broken_by, &at)?,
            rule: Rule::Step {
                index: i,
                outcome,
                when: e.when.clone(),
            },
        });
    }
    for (i, w) in file.wire.iter().enumerate() {
        let at = format!("wire[{i}]");
        let mut expectation = w.expectation.clone();
        expectation.filter = match &expectation.filter {
            Some(f) => Some(expand_fake(f, &at)?),
            None => None,
        };
        expectation.when = match &expectation.when {
            Some(m) => Some(expand_fake(m, &at)?),
            None => None,
        };
        expectation.rule = match expectation.rule {
            crate::model::WireRule::First(ms) => {
                crate::model::WireRule::First(expand_all(&ms, &at)?)
            }
            crate::model::WireRule::Sequence(ms) => {
                crate::model::WireRule::Sequence(expand_all(&ms, &at)?)
            }
            crate::model::WireRule::Sent { matcher, count } => crate::model::WireRule::Sent {
                matcher: expand_fake(&matcher, &at)?,
                count,
            },
            crate::model::WireRule::NotSent(m) => {
                crate::model::WireRule::NotSent(expand_fake(&m, &at)?)
            }
            crate::model::WireRule::Every(m) => {
                crate::model::WireRule::Every(expand_fake(&m, &at)?)
            }
            crate::model::WireRule::Spaced { matcher, min_ms } => crate::model::WireRule::Spaced {
                matcher: expand_fake(&matcher, &at)?,
                min_ms,
            },
        };
        checks.push(CaseCheck {
            name: w.check.clone(),
            requirement: own(&w.requirement, format!("{at}.requirement"))?,
            broken_by: broken(&w.broken_by, &at)?,
            rule: Rule::Wire(expectation),
        });
    }
    for (i, l) in file.lifecycle.iter().enumerate() {
        let at = format!("lifecycle[{i}]");
        checks.push(CaseCheck {
            name: l.check.clone(),
            requirement: own(&l.requirement, format!("{at}.requirement"))?,
            broken_by: broken(&l.broken_by, &at)?,
            rule: Rule::Lifecycle(l.events.clone()),
        });
    }
    Ok(Scenario {
        description: file.description.clone(),
        requirement,
        transports: file.transports.clone(),
        protocol_version: file
            .protocol_version
            .clone()
            .unwrap_or_else(|| default_protocol_version(file.client_era).to_owned()),
        client_era: file.client_era,
        revisions: file.revisions.clone(),
        legacy_protocol_version: file.legacy_protocol_version.clone(),
        timeout_ms: file.timeout_ms,
        shutdown_grace_ms: file.shutdown_grace_ms,
        deadline_ms: file.deadline_ms,
        bearer_token: file.bearer_token,
        network: file.network,
        official_scenario: file.official_scenario.clone(),
        host: file.host,
        traces: file.traces.clone(),
        needs: file.needs.clone(),
        server,
        servers,
        plan: file.plan.iter().map(|p| p.step.clone()).collect(),
        plan_servers: file.plan.iter().map(|p| p.server.clone()).collect(),
        checks,
        time_scale: TimeScale::ONE,
    })
}

/// The requirement a step's check cites: the one it names, else "the step worked" for a step
/// that expects `ok` alone (a setup step), else the case's (see `StepExpect::cited`).
fn step_requirement(
    catalogue: &Catalogue,
    e: &StepExpect,
    step: &Step,
    case: &Requirement,
    at: &str,
) -> Result<Requirement, Problem> {
    match (&e.requirement, e.cited(step)) {
        (Some(id), _) => lookup(catalogue, id, &format!("{at}.requirement")),
        (None, Some(id)) => catalogue.get(id).cloned().filter(Requirement::is_observable).ok_or_else(|| {
            (
                format!("{at}.requirement"),
                format!(
                    "the step expects `ok` and names no requirement, so it cites {id} (the {} step worked), which the catalogue lacks; expected `requirement` naming what the step judges, or {id} in requirements.json",
                    step.op()
                ),
            )
        }),
        (None, None) => Ok(case.clone()),
    }
}

fn lookup(catalogue: &Catalogue, id: &str, at: &str) -> Result<Requirement, Problem> {
    let r = catalogue.get(id).cloned().ok_or_else(|| {
        (
            at.to_owned(),
            format!("unknown requirement {id:?}: expected the id of an entry of the catalogue (requirements.json)"),
        )
    })?;
    match &r.not_observable {
        None => Ok(r),
        Some(why) => Err((
            at.to_owned(),
            format!(
                "the catalogue marks {id} not observable ({why}); expected a requirement a check can judge, or the catalogue entry without `not_observable`"
            ),
        )),
    }
}

fn calls_echo(step: &Step) -> bool {
    match step {
        Step::CallTool { name, .. } => name == "echo",
        Step::Together { steps } => steps.iter().any(calls_echo),
        _ => false,
    }
}

/// The case's handlers, then its fixtures', then the built-in `echo` tool when the plan
/// calls `echo` and no handler names it (or answers every call).
fn complete_server(
    mut server: ServerScript,
    fixtures: &[&Fixture],
    calls_echo: bool,
) -> ServerScript {
    for fixture in fixtures {
        server.handlers.extend(fixture.handlers.iter().cloned());
    }
    let answered = server.handlers.iter().any(|h| {
        h.method == "tools/call"
            && h.params
                .as_ref()
                .is_none_or(|p| p.get("name") == Some(&Value::from("echo")))
    });
    if calls_echo && !answered {
        server.handlers.push(Handler::builtin_echo());
    }
    server
}

fn expand_all(matchers: &[Value], at: &str) -> Result<Vec<Value>, Problem> {
    matchers.iter().map(|m| expand_fake(m, at)).collect()
}

/// Replaces `{"$fake": "serverInfo"}` with the matcher of the fakes' `serverInfo`.
fn expand_fake(matcher: &Value, at: &str) -> Result<Value, Problem> {
    Ok(match matcher {
        Value::Object(map) if map.len() == 1 && map.contains_key("$fake") => {
            match map.get("$fake").and_then(Value::as_str) {
                Some("serverInfo") => json!({"name": FAKE_SERVER_NAME}),
                _ => {
                    return Err((
                        at.to_owned(),
                        format!(
                            "{matcher}: expected {{\"$fake\": \"serverInfo\"}} (the fakes' serverInfo)"
                        ),
                    ));
                }
            }
        }
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| Ok((k.clone(), expand_fake(v, at)?)))
                .collect::<Result<_, Problem>>()?,
        ),
        Value::Array(items) => Value::Array(expand_all(items, at)?),
        other => other.clone(),
    })
}

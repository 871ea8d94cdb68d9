//! A script's tasks (`server.tasks`) checked against what the tasks texts require of a
//! server, so the fake can never break a server MUST by accident: a terminal status only
//! last, one outcome that fits the final status, input requests where input is required and
//! only there, and the settings each era allows.

use std::collections::BTreeSet;

use crate::model::{CancelMode, ServerEra, ServerScript, TaskScript, TaskStatus};

type Problem = (String, String);

/// Every task of `server`, in order.
pub(super) fn check(server: &ServerScript) -> Result<(), Problem> {
    let mut ids: BTreeSet<&str> = BTreeSet::new();
    for (i, task) in server.tasks.iter().enumerate() {
        let at = format!("server.tasks[{i}]");
        if task.tool.is_empty() {
            return Err((format!("{at}.tool"), "expected a tool name".into()));
        }
        if task.task_id.is_empty() {
            return Err((format!("{at}.task_id"), "expected a non-empty id".into()));
        }
        // Later tasks of a script get `-2`, `-3`… after their first id: the first ids must
        // differ for every task id to be unique (both texts require it).
        if !ids.insert(&task.task_id) {
            return Err((
                format!("{at}.task_id"),
                format!("{:?} is another task's id already", task.task_id),
            ));
        }
        if server.tasks[..i].iter().any(|t| t.tool == task.tool) {
            return Err((
                format!("{at}.tool"),
                format!(
                    "{:?} has a task already: one task script per tool",
                    task.tool
                ),
            ));
        }
        check_era(task, server.era, &at)?;
        check_phases(task, server.era, &at)?;
        check_outcome(task, server.era, &at)?;
    }
    Ok(())
}

/// `notify` and `cancel: ignore` only where the fake's era can play them.
fn check_era(task: &TaskScript, era: ServerEra, at: &str) -> Result<(), Problem> {
    if task.notify && era == ServerEra::Modern {
        return Err((
            format!("{at}.notify"),
            "status notifications are played at 2025-11-25 only (a 2026-07-28 client asks \
             for them with `subscriptions/listen`, which the fake does not offer for tasks): \
             expected a legacy or dual fake, or no `notify`"
                .into(),
        ));
    }
    if task.cancel == CancelMode::Ignore && era != ServerEra::Modern {
        return Err((
            format!("{at}.cancel"),
            "at 2025-11-25 a server MUST move a task it is asked to cancel to `cancelled` \
             before answering: `ignore` needs `\"era\": \"modern\"`"
                .into(),
        ));
    }
    Ok(())
}

/// At least one phase; a terminal status only last; a length for every phase before the
/// last that is not waiting for input, and none for the last; input requests (with keys
/// unique over the task) exactly on `input_required` phases.
fn check_phases(task: &TaskScript, era: ServerEra, at: &str) -> Result<(), Problem> {
    let Some(first) = task.phases.first() else {
        return Err((format!("{at}.phases"), "expected at least one phase".into()));
    };
    if era != ServerEra::Modern && first.status != TaskStatus::Working {
        return Err((
            format!("{at}.phases[0].status"),
            format!(
                "at 2025-11-25 a task MUST begin `working`, found {:?}",
                first.status.as_str()
            ),
        ));
    }
    let last = task.phases.len() - 1;
    let mut keys: BTreeSet<&str> = BTreeSet::new();
    for (i, phase) in task.phases.iter().enumerate() {
        let here = format!("{at}.phases[{i}]");
        let input = phase.status == TaskStatus::InputRequired;
        if phase.status.is_terminal() && i != last {
            return Err((
                format!("{here}.status"),
                format!(
                    "{:?} is terminal: no status may follow it, so it must be the last phase",
                    phase.status.as_str()
                ),
            ));
        }
        match (phase.ms, input, i == last) {
            (Some(_), true, _) => {
                return Err((
                    format!("{here}.ms"),
                    "an `input_required` phase lasts until its input requests are answered \
                     (then `settles_ms`): expected no `ms`"
                        .into(),
                ));
            }
            (Some(_), false, true) => {
                return Err((
                    format!("{here}.ms"),
                    "the last phase lasts for ever: expected no `ms`".into(),
                ));
            }
            (None, false, false) => {
                return Err((
                    format!("{here}.ms"),
                    "expected how long the phase lasts, in milliseconds (every phase before \
                     the last but an `input_required` one)"
                        .into(),
                ));
            }
            _ => {}
        }
        if !input && phase.settles_ms != 0 {
            return Err((
                format!("{here}.settles_ms"),
                "`settles_ms` goes with an `input_required` phase".into(),
            ));
        }
        match (&phase.input_requests, input) {
            (Some(requests), true) if !requests.is_empty() => {
                for (key, request) in requests {
                    if !keys.insert(key) {
                        return Err((
                            format!("{here}.input_requests.{key}"),
                            "an input request's key must be unique over the task's lifetime \
                             (a 2026-07-28 server MUST NOT reuse one)"
                                .into(),
                        ));
                    }
                    if request.method.is_empty() {
                        return Err((
                            format!("{here}.input_requests.{key}.method"),
                            "expected a method, e.g. \"elicitation/create\"".into(),
                        ));
                    }
                }
            }
            (_, true) => {
                return Err((
                    format!("{here}.input_requests"),
                    "expected the requests the fake needs answered, by key, e.g. \
                     {\"confirm\": {\"method\": \"elicitation/create\", \"params\": {…}}}"
                        .into(),
                ));
            }
            (Some(_), false) => {
                return Err((
                    format!("{here}.input_requests"),
                    "input requests go with an `input_required` phase".into(),
                ));
            }
            (None, false) => {}
        }
    }
    Ok(())
}

/// Exactly one of `result` and `error`, and one that fits a terminal status: `completed`
/// carries a result, `failed` an error (at 2025-11-25 also a result with `isError: true`;
/// at 2026-07-28 `failed` is for JSON-RPC errors only).
fn check_outcome(task: &TaskScript, era: ServerEra, at: &str) -> Result<(), Problem> {
    let tool_error = match (&task.result, &task.error) {
        (Some(result), None) => {
            if !result.is_object() {
                return Err((
                    format!("{at}.result"),
                    "expected a CallToolResult object".into(),
                ));
            }
            Some(result.get("isError") == Some(&serde_json::Value::Bool(true)))
        }
        (None, Some(_)) => None,
        _ => {
            return Err((
                format!("{at}.result / {at}.error"),
                "expected exactly one of `result` (a CallToolResult) and `error` (a JSON-RPC \
                 error)"
                    .into(),
            ));
        }
    };
    let Some(last) = task.phases.last() else {
        return Ok(());
    };
    let wrong = match (last.status, tool_error) {
        (TaskStatus::Completed, None) => Some("a `completed` task carries a `result`"),
        (TaskStatus::Failed, Some(false)) => Some(
            "a `failed` task carries an `error` (at 2025-11-25, or a `result` with \
             `isError: true`)",
        ),
        (TaskStatus::Failed, Some(true)) if era == ServerEra::Modern => Some(
            "at 2026-07-28 a tool result with `isError: true` MUST end `completed`; `failed` \
             is for a JSON-RPC `error`",
        ),
        _ => None,
    };
    match wrong {
        Some(why) => Err((
            format!("{at}.phases[{}].status", task.phases.len() - 1),
            why.into(),
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn script(era: &str, task: serde_json::Value) -> ServerScript {
        serde_json::from_value(json!({"era": era, "tasks": [task]})).unwrap()
    }

    fn problem(era: &str, task: serde_json::Value) -> Problem {
        check(&script(era, task)).unwrap_err()
    }

    fn ok_task() -> serde_json::Value {
        json!({"tool": "slow", "phases": [
            {"status": "working", "ms": 100},
            {"status": "input_required", "input_requests": {"a": {"method": "elicitation/create"}}},
            {"status": "completed"}],
            "result": {"content": []}})
    }

    #[test]
    fn a_well_formed_task_passes_in_every_era() {
        for era in ["legacy", "modern", "dual"] {
            assert_eq!(check(&script(era, ok_task())), Ok(()), "{era}");
        }
    }

    #[test]
    fn a_terminal_phase_must_be_last() {
        let mut task = ok_task();
        task["phases"][1] = json!({"status": "failed", "ms": 5});
        let (at, why) = problem("legacy", task);
        assert_eq!(at, "server.tasks[0].phases[1].status");
        assert!(why.contains("terminal"), "{why}");
    }

    #[test]
    fn exactly_one_outcome_that_fits_the_status() {
        let mut both = ok_task();
        both["error"] = json!({"code": -32603, "message": "x"});
        assert!(problem("legacy", both).1.contains("exactly one"));
        let mut neither = ok_task();
        neither.as_object_mut().unwrap().remove("result");
        assert!(problem("legacy", neither).1.contains("exactly one"));
        let mut failed_ok = ok_task();
        failed_ok["phases"][2]["status"] = json!("failed");
        assert!(
            problem("legacy", failed_ok.clone())
                .0
                .ends_with("phases[2].status")
        );
        failed_ok["result"]["isError"] = json!(true);
        assert_eq!(check(&script("legacy", failed_ok.clone())), Ok(()));
        assert!(problem("modern", failed_ok).1.contains("completed"));
    }

    #[test]
    fn era_settings_are_refused_where_the_text_forbids_them() {
        let mut notify = ok_task();
        notify["notify"] = json!(true);
        assert_eq!(
            problem("modern", notify.clone()).0,
            "server.tasks[0].notify"
        );
        assert_eq!(check(&script("dual", notify)), Ok(()));
        let mut ignore = ok_task();
        ignore["cancel"] = json!("ignore");
        assert_eq!(
            problem("legacy", ignore.clone()).0,
            "server.tasks[0].cancel"
        );
        assert_eq!(problem("dual", ignore.clone()).0, "server.tasks[0].cancel");
        assert_eq!(check(&script("modern", ignore)), Ok(()));
    }

    #[test]
    fn phases_need_lengths_and_inputs_where_they_apply() {
        let mut no_ms = ok_task();
        no_ms["phases"][0] = json!({"status": "working"});
        assert_eq!(problem("legacy", no_ms).0, "server.tasks[0].phases[0].ms");
        let mut no_requests = ok_task();
        no_requests["phases"][1] = json!({"status": "input_required"});
        assert_eq!(
            problem("legacy", no_requests).0,
            "server.tasks[0].phases[1].input_requests"
        );
        let mut reused = ok_task();
        reused["phases"] = json!([
            {"status": "working", "ms": 1},
            {"status": "input_required", "input_requests": {"a": {"method": "ping"}}},
            {"status": "input_required", "input_requests": {"a": {"method": "ping"}}},
            {"status": "completed"}]);
        assert_eq!(
            problem("modern", reused).0,
            "server.tasks[0].phases[2].input_requests.a"
        );
        let mut starts = ok_task();
        starts["phases"][0]["status"] = json!("input_required");
        starts["phases"][0].as_object_mut().unwrap().remove("ms");
        starts["phases"][0]["input_requests"] = json!({"z": {"method": "ping"}});
        assert_eq!(
            problem("legacy", starts.clone()).0,
            "server.tasks[0].phases[0].status"
        );
        assert_eq!(check(&script("modern", starts)), Ok(()));
        let mut empty_tool = ok_task();
        empty_tool["tool"] = json!("");
        assert_eq!(problem("legacy", empty_tool).0, "server.tasks[0].tool");
    }
}

#[cfg(test)]
mod budget_tests {
    use serde_json::json;

    use crate::model::Scenario;

    /// The deadline lint's budget counts the run of a task the plan's call drives.
    #[test]
    fn a_task_run_counts_in_the_deadline_budget() {
        let server = serde_json::from_value(json!({"tasks": [{"tool": "slow",
            "poll_interval_ms": 50, "phases": [{"status": "working", "ms": 300},
            {"status": "completed"}], "result": {"content": []}}]}))
        .unwrap();
        let mut s = Scenario::serving(server);
        s.plan = serde_json::from_value(json!([{"op": "connect"},
            {"op": "call_tool", "name": "slow"}]))
        .unwrap();
        let with = crate::load::deadline::budget(&s).0;
        s.server.tasks.clear();
        let without = crate::load::deadline::budget(&s).0;
        assert_eq!(with - without, 350);
    }
}

//! A scenario that passes for a client that does nothing is a defect in the harness. These
//! doubles do nothing, or only print what a working client would print, and must fail every
//! trial; a client that hangs must be cut off at the deadline with nothing left behind.

mod support;

use std::time::Duration;

use mcp_harness_scenarios::model::Transport;
use xtask::conformance::verdict::Grade;

fn assert_every_case_fails(client: &str) {
    let passing = support::graded_where(client, |grade| grade.is_acceptable());
    assert!(
        passing.is_empty(),
        "a do-nothing client `{client}` passed:\n{}",
        passing.join("\n")
    );
}

#[test]
fn a_client_that_does_nothing_fails_every_case() {
    assert_every_case_fails("true");
}

/// Prints a plausible success line for every step of the plan, without ever launching
/// the server.
#[test]
fn a_client_that_only_prints_success_fails_every_case() {
    let script = r#"python3 -c '
import json, os
for i, step in enumerate(json.loads(os.environ["MCP_HARNESS_PLAN"])):
    print(json.dumps({"step": i, "op": step.get("op"), "ok": {"protocolVersion": "2025-03-26", "tools": [], "text": []}}))
'"#;
    assert_every_case_fails(script);
}

#[test]
fn a_hanging_client_is_killed_at_the_deadline_with_its_children() {
    let case = support::case("handshake/initialize-timeout");
    let marker = format!("mcp-harness-hang-{}", std::process::id());
    // A child of the client that would outlive it if the group were not killed.
    let client = format!("(exec -a {marker} sleep 3600) & exec -a {marker} sleep 3600");
    let eval = support::evaluate(&case, &format!("bash -c '{client}'"));
    assert_eq!(eval.grade, Grade::Fail);
    let deadline = Duration::from_millis(case.scenario.deadline_ms);
    assert!(
        eval.run.elapsed < deadline + Duration::from_secs(2),
        "{:?}",
        eval.run.elapsed
    );
    let failed: Vec<&str> = eval
        .checks
        .iter()
        .filter(|c| !c.passed)
        .map(|c| c.name.as_str())
        .collect();
    assert!(
        failed.iter().any(|n| n.contains("trial deadline")),
        "{failed:?}"
    );
    std::thread::sleep(Duration::from_millis(100));
    let survivors = std::process::Command::new("pgrep")
        .args(["-f", &marker])
        .output()
        .unwrap();
    assert!(
        survivors.stdout.is_empty(),
        "left running: {}",
        String::from_utf8_lossy(&survivors.stdout)
    );
}

/// The official suite's conformance clients print no outcome lines: they read
/// `MCP_CONFORMANCE_SCENARIO` and the URL given last, and act. Played here by the reference
/// driver with its stdout thrown away, run only when the official name arrives.
#[test]
fn an_official_suite_client_runs_the_matching_cases_unmodified() {
    let silent = format!("{} >/dev/null", support::driver_cmd(""));
    for (id, official) in [
        ("official/initialize", "initialize"),
        ("official/tools-call", "tools_call"),
    ] {
        let client = format!("test \"$MCP_CONFORMANCE_SCENARIO\" = {official} && {silent}");
        let eval = support::evaluate_on(&support::case(id), Transport::Https, &client);
        assert_eq!(
            eval.grade,
            Grade::Pass,
            "{id}: {:?}",
            eval.checks.iter().filter(|c| !c.passed).collect::<Vec<_>>()
        );
    }
    // Judged on the wire alone does not mean judged on nothing.
    let eval = support::evaluate_on(
        &support::case("official/tools-call"),
        Transport::Https,
        "true",
    );
    assert_eq!(eval.grade, Grade::Fail);
    // Other cases still require outcome lines.
    let eval = support::evaluate_on(
        &support::case("calls/text-blocks"),
        Transport::Https,
        &silent,
    );
    assert_eq!(eval.grade, Grade::Fail);
}

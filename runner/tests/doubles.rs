//! A scenario that passes for a client that does nothing is a defect in the harness. These
//! doubles do nothing, or only print what a working client would print, and must fail every
//! trial; a client that hangs must be cut off at the deadline with nothing left behind.

mod support;

use std::time::Duration;

use mcp_harness::conformance::verdict::Grade;
use mcp_harness_scenarios::model::Transport;

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

/// Prints a plausible success line for every step of the plan, without ever launching the
/// server. Written in awk rather than Python: it plays every trial, and a Python start per
/// trial was most of this file's time. It walks the plan's JSON (strings with escapes, any
/// nesting) and takes each top-level step's `op`; that it reads every plan of the suite
/// right is shown by the test after the next.
const PRINTS_SUCCESS: &str = r#"awk 'BEGIN {
  p = ENVIRON["MCP_HARNESS_PLAN"]; n = length(p); depth = 0; instr = 0; esc = 0
  step = 0; op = "null"; last = ""; want = 0
  for (i = 1; i <= n; i++) {
    c = substr(p, i, 1)
    if (instr) {
      if (esc) { esc = 0; tok = tok c }
      else if (c == "\\") { esc = 1; tok = tok c }
      else if (c == "\"") {
        instr = 0; last = tok
        if (depth == 2 && want) { op = "\"" tok "\""; want = 0 }
      }
      else tok = tok c
      continue
    }
    if (c == "\"") { instr = 1; tok = ""; continue }
    if (c == ":" && depth == 2 && last == "op") want = 1
    else if (c == "," && depth == 2) want = 0
    if (c == "{" || c == "[") depth++
    if (c == "}" || c == "]") {
      if (depth == 2 && c == "}") {
        printf "{\"step\": %d, \"op\": %s, \"ok\": {\"protocolVersion\": \"2025-03-26\", \"tools\": [], \"text\": []}}\n", step, op
        step++; op = "null"
      }
      depth--
    }
  }
}'"#;

#[test]
fn a_client_that_only_prints_success_fails_every_case() {
    assert_every_case_fails(PRINTS_SUCCESS);
}

/// The same double, printing a plausible error for every step instead: cases whose own checks
/// are all `should` or `advisory` must still fail it (the contract's "reached the server").
#[test]
fn a_client_that_only_prints_errors_fails_every_case() {
    let success = r#"\"ok\": {\"protocolVersion\": \"2025-03-26\", \"tools\": [], \"text\": []}"#;
    assert!(PRINTS_SUCCESS.contains(success));
    let error = r#"\"error\": {\"kind\": \"transport_closed\"}"#;
    assert_every_case_fails(&PRINTS_SUCCESS.replace(success, error));
}

/// The awk double reads every plan of the suite right: one line per step, numbered from 0,
/// each with its step's `op`, each a success. Run here on the plans themselves rather than
/// through the harness, so what it prints is compared with the plan exactly.
#[test]
fn the_print_only_double_prints_one_success_line_per_step_of_every_plan() {
    let plans: std::collections::BTreeSet<String> = support::cases()
        .iter()
        .map(|case| serde_json::to_string(&case.scenario.plan).unwrap())
        .collect();
    let problems: Vec<String> = support::in_parallel(plans.into_iter().collect(), |plan| {
        let out = std::process::Command::new("/bin/sh")
            .args(["-c", PRINTS_SUCCESS])
            .env("MCP_HARNESS_PLAN", &plan)
            .output()
            .unwrap();
        let steps: Vec<serde_json::Value> = serde_json::from_str(&plan).unwrap();
        let lines: Vec<Result<serde_json::Value, _>> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(serde_json::from_str)
            .collect();
        let right = out.status.success()
            && lines.len() == steps.len()
            && lines
                .iter()
                .zip(&steps)
                .enumerate()
                .all(|(i, (line, step))| {
                    line.as_ref().is_ok_and(|l| {
                        l["step"] == i && l["op"] == step["op"] && l["ok"].is_object()
                    })
                });
        (!right).then(|| {
            format!(
                "plan {plan}: printed {:?}",
                String::from_utf8_lossy(&out.stdout)
            )
        })
    })
    .into_iter()
    .flatten()
    .collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn a_hanging_client_is_killed_at_the_deadline_with_its_children() {
    let mut case = support::case("handshake/initialize-timeout");
    // Shorter than the case's own: what is shown is the cut-off, not how long it waits.
    case.scenario.deadline_ms = 3_000;
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

/// The reference driver with its stdout edited by `sed EXPR` (`sh -c` hands the URL the
/// runner appends to the driver, not to sed).
fn driver_through_sed(expr: &str) -> String {
    format!(
        r#"sh -c '"$0" "$@" | sed {expr}' {}"#,
        support::driver_cmd("")
    )
}

/// Every official example logs on stdout (`console.log`): its stdout is its log, not a
/// broken contract. Played by the reference driver whose lines are turned into prose.
#[test]
fn an_official_suite_client_may_log_on_stdout() {
    let logging = driver_through_sed(r#""s/^/log: /""#);
    for id in ["official/initialize", "official/tools-call"] {
        let eval = support::evaluate_on(&support::case(id), Transport::Https, &logging);
        assert_eq!(
            eval.grade,
            Grade::Pass,
            "{id}: {:?}",
            support::failed_checks(&eval)
        );
    }
}

/// A client that tries to speak the contract (a JSON object with a step or an op on stdout)
/// is judged on it, official case or not: a wrong outcome line still fails CONTRACT-2.
#[test]
fn a_contract_client_with_wrong_outcome_lines_still_fails_on_official_cases() {
    let wrong_step = driver_through_sed(r#""s/\"step\":0/\"step\":9/""#);
    for id in ["official/initialize", "official/tools-call"] {
        let eval = support::evaluate_on(&support::case(id), Transport::Https, &wrong_step);
        let contract_2 = eval
            .checks
            .iter()
            .find(|c| c.requirement_id == "CONTRACT-2");
        assert!(
            contract_2.is_some_and(|c| !c.passed),
            "{id}: CONTRACT-2 was not failed: {:?}",
            support::failed_checks(&eval)
        );
        assert_eq!(eval.grade, Grade::Fail, "{id}");
    }
}

/// The official tools_call scenario takes any numbers for `a` and `b` (its examples send
/// 2 + 3 and 5 + 10); numbers they must be.
#[test]
fn official_tools_call_takes_any_numbers_and_only_numbers() {
    let case = support::case("official/tools-call");
    let with_args = |args: &str| {
        format!(
            "MCP_HARNESS_PLAN=$(printf %s \"$MCP_HARNESS_PLAN\" | sed 's/\"a\":5,\"b\":3/{args}/') {} >/dev/null",
            support::driver_cmd("")
        )
    };
    let eval = support::evaluate_on(&case, Transport::Https, &with_args(r#"\"a\":2,\"b\":10.5"#));
    assert_eq!(
        eval.grade,
        Grade::Pass,
        "{:?}",
        support::failed_checks(&eval)
    );
    let eval = support::evaluate_on(
        &case,
        Transport::Https,
        &with_args(r#"\"a\":\"2\",\"b\":3"#),
    );
    let call = eval
        .checks
        .iter()
        .find(|c| c.requirement_id == "PROF-RES-1");
    assert!(
        call.is_some_and(|c| !c.passed),
        "a string for a passed: {:?}",
        support::failed_checks(&eval)
    );
}

/// `MCP_CONFORMANCE_CONTEXT` is set as the official suite sets it: on a case that shares an
/// official scenario and hands a pre-registered client, `{name, client_id, client_secret}`;
/// nowhere else.
#[test]
fn the_official_context_carries_a_pre_registered_client() {
    let mut case = support::case("auth/registration-not-needed-pre-registered");
    let exits_0 = |case: &mcp_harness_scenarios::Case, client: &str| {
        let eval = support::evaluate_on(case, Transport::Https, client);
        let exit = eval
            .checks
            .iter()
            .find(|c| c.requirement_id == "CONTRACT-1");
        exit.is_some_and(|c| c.passed)
    };
    let unset = r#"sh -c 'test -z "${MCP_CONFORMANCE_CONTEXT+x}"'"#;
    assert!(
        exits_0(&case, unset),
        "a context without an official scenario"
    );
    assert!(
        exits_0(&support::case("official/initialize"), unset),
        "a context on initialize"
    );
    case.scenario.official_scenario = Some("auth/pre-registration".into());
    let matches = r#"python3 -c 'import json, os; e = os.environ; assert json.loads(e["MCP_CONFORMANCE_CONTEXT"]) == {"name": "auth/pre-registration", "client_id": e["MCP_HARNESS_AUTH_CLIENT_ID"], "client_secret": e["MCP_HARNESS_AUTH_CLIENT_SECRET"]}'"#;
    assert!(
        exits_0(&case, matches),
        "the context differs from the official suite's"
    );
    assert!(
        !exits_0(&case, unset),
        "no context with an official scenario"
    );
}

#[test]
fn a_stubborn_stdio_server_is_gone_after_the_trial() {
    let case = support::case("cleanup/ignores-sigterm");
    let eval = support::evaluate_on(&case, Transport::Stdio, &support::driver_cmd(""));
    assert_eq!(eval.run.servers.len(), 1);
    assert!(!eval.run.servers[0].outlived_client);
}

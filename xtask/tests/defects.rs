//! Every check must be able to fail. Each row runs a deliberately broken client against one
//! case and requires the named check to fail with the named grade. The broken clients are
//! the reference driver with one `--defect`, or a small shell double around it. The same
//! cases pass against the unbroken driver, so each failure is the defect's; and the last
//! test requires every check of every case to appear among the failures.

mod support;

use std::collections::{BTreeSet, HashSet};

use xtask::conformance::verdict::Grade;

/// (client: a `--defect` name, or `sh:` and a command line where `{driver}` is the reference
/// driver; case id; a substring of the check that must fail; the grade it must give)
#[rustfmt::skip]
const MATRIX: &[(&str, &str, &str, Grade)] = &[
    ("sh:{driver}; exit 3", "handshake/happy-path", "exited with status 0", Grade::Fail),
    ("sh:echo 'starting up'; {driver}", "handshake/happy-path", "one outcome line per step", Grade::Fail),
    ("sh:{driver} | head -n 1", "tools/pagination-three-pages", "one outcome line per step", Grade::Fail),
    ("skip-initialized", "handshake/happy-path", "notifications/initialized follows", Grade::Fail),
    ("late-initialized", "handshake/initialized-before-other-requests", "the first two messages", Grade::Fail),
    ("late-initialized", "handshake/initialized-before-other-requests", "tools/list comes after", Grade::Fail),
    ("offer-latest-version", "handshake/happy-path", "initialize carries the offered version", Grade::Fail),
    ("offer-latest-version", "handshake/happy-path", "step 0 (connect) succeeds", Grade::Fail),
    ("accept-any-version", "handshake/empty-negotiated-version", "step 0 (connect) fails", Grade::Fail),
    ("accept-any-version", "handshake/empty-negotiated-version", "no notifications/initialized", Grade::Fail),
    ("accept-any-version", "handshake/empty-negotiated-version", "no request after", Grade::Fail),
    ("accept-any-version", "handshake/empty-negotiated-version", "step 1 (list_tools) fails", Grade::Fail),
    ("accept-any-version", "handshake/unsupported-version", "step 0 (connect) fails", Grade::NonStrict),
    ("accept-any-version", "handshake/unsupported-version", "no notifications/initialized", Grade::NonStrict),
    ("accept-any-version", "handshake/unsupported-version", "no request after", Grade::NonStrict),
    ("ignore-initialize-error", "handshake/initialize-error", "step 0 (connect) fails", Grade::Fail),
    ("ignore-initialize-error", "handshake/initialize-error", "no notifications/initialized", Grade::Fail),
    ("no-timeout", "handshake/initialize-timeout", "within the trial deadline", Grade::Fail),
    ("cancel-initialize", "handshake/initialize-timeout", "initialize is never cancelled", Grade::Fail),
    ("first-page-only", "tools/pagination-three-pages", "step 1 (list_tools) succeeds", Grade::Fail),
    ("first-page-only", "tools/pagination-three-pages", "then each nextCursor", Grade::Fail),
    ("first-page-only", "tools/pagination-three-pages", "three pages are asked", Grade::Fail),
    ("first-page-only", "tools/pagination-empty-middle-page", "the page after the empty one", Grade::Fail),
    ("first-page-only", "tools/pagination-empty-string-cursor", "the empty cursor is sent back", Grade::Fail),
    ("mangle-cursor", "tools/pagination-cursor-echoed-exactly", "each cursor is echoed exactly", Grade::Fail),
    ("normalize-tools", "tools/input-schema-preserved", "step 1 (list_tools) succeeds", Grade::Fail),
    ("no-cursor-check", "tools/repeated-cursor-at-once", "fails with error kind repeated_cursor", Grade::Fail),
    ("no-cursor-check", "tools/repeated-cursor-after-two-pages", "fails with error kind repeated_cursor", Grade::Fail),
    ("first-page-only", "tools/repeated-cursor-at-once", "the client followed the first cursor", Grade::Fail),
    ("first-page-only", "tools/repeated-cursor-after-two-pages", "the client followed both cursors", Grade::Fail),
    ("allow-duplicate-names", "tools/duplicate-name-same-page", "duplicate_tool_name", Grade::Fail),
    ("allow-duplicate-names", "tools/duplicate-name-across-pages", "duplicate_tool_name", Grade::Fail),
    ("first-page-only", "tools/duplicate-name-across-pages", "the second page was asked", Grade::Fail),
    ("join-text", "calls/text-blocks", "step 1 (call_tool) succeeds", Grade::Fail),
    ("text-only", "calls/structured-content", "step 1 (call_tool) succeeds", Grade::Fail),
    ("ignore-is-error", "calls/is-error-result", "fails with error kind tool_error", Grade::Fail),
    ("close-on-error", "calls/is-error-result", "step 2 (call_tool) succeeds", Grade::Fail),
    ("close-on-error", "calls/is-error-result", "both calls reached the server", Grade::Fail),
    ("rpc-error-as-empty", "calls/jsonrpc-error", "fails with error kind protocol_error", Grade::Fail),
    ("close-on-error", "calls/jsonrpc-error", "both calls reached the server", Grade::Fail),
    ("rpc-error-as-empty", "calls/unknown-tool", "fails with error kind protocol_error", Grade::Fail),
    ("close-on-error", "calls/unknown-tool", "step 2 (call_tool) succeeds", Grade::Fail),
    ("no-timeout", "timeouts/call-timeout", "within the trial deadline", Grade::Fail),
    ("no-cancel-notification", "timeouts/call-timeout", "names the timed-out request", Grade::NonStrict),
    ("close-on-error", "timeouts/call-timeout", "the next call goes out", Grade::Fail),
    ("no-cancel-notification", "timeouts/caller-cancellation", "names the cancelled request", Grade::Fail),
    ("ignore-cancel", "timeouts/caller-cancellation", "fails with error kind cancelled", Grade::Fail),
    ("kill-first", "cleanup/exits-on-eof", "shutdown went", Grade::NonStrict),
    ("no-sigterm", "cleanup/ignores-eof", "not left running", Grade::Fail),
    ("kill-first", "cleanup/ignores-eof", "shutdown went", Grade::NonStrict),
    ("no-sigkill", "cleanup/ignores-sigterm", "not left running", Grade::Fail),
    ("kill-first", "cleanup/ignores-sigterm", "shutdown went", Grade::NonStrict),
    ("leak-on-handshake-failure", "cleanup/after-handshake-error", "not left running", Grade::Fail),
    ("ignore-initialize-error", "cleanup/after-handshake-error", "step 0 (connect) fails", Grade::Fail),
    ("kill-first", "cleanup/after-handshake-error", "shutdown went", Grade::NonStrict),
    ("ignore-is-error", "cleanup/after-tool-error", "fails with error kind tool_error", Grade::Fail),
    ("no-sigterm", "cleanup/after-tool-error", "not left running", Grade::Fail),
    ("kill-first", "cleanup/after-tool-error", "shutdown went", Grade::NonStrict),
    ("ignore-cancel", "cleanup/after-cancellation", "fails with error kind cancelled", Grade::Fail),
    ("no-sigterm", "cleanup/after-cancellation", "not left running", Grade::Fail),
    ("kill-first", "cleanup/after-cancellation", "shutdown went", Grade::NonStrict),
    ("ignore-server-exit", "cleanup/after-server-crash", "fails with error kind transport_closed", Grade::Fail),
    ("reuse-ids", "tools/pagination-three-pages", "never reused", Grade::Fail),
    ("id-on-notifications", "handshake/happy-path", "notifications carry no id", Grade::Fail),
    ("garbage-to-server", "handshake/happy-path", "one JSON-RPC 2.0 message", Grade::Fail),
    // A client that does nothing at all breaks every "was sent" check.
    ("sh:true", "handshake/empty-negotiated-version", "the client sent initialize", Grade::Fail),
    ("sh:true", "handshake/unsupported-version", "the client sent initialize", Grade::Fail),
    ("sh:true", "handshake/initialize-error", "the client sent initialize", Grade::Fail),
    ("sh:true", "handshake/initialize-timeout", "the client sent initialize", Grade::Fail),
    ("sh:true", "handshake/initialized-before-other-requests", "step 1 (list_tools) succeeds", Grade::Fail),
    ("sh:true", "tools/duplicate-name-same-page", "tools/list was asked", Grade::Fail),
    ("sh:true", "tools/input-schema-preserved", "tools/list was asked", Grade::Fail),
    ("sh:true", "calls/structured-content", "tools/call was sent", Grade::Fail),
    ("sh:true", "calls/unknown-tool", "the unknown name was sent as given", Grade::Fail),
    ("drop-arguments", "calls/text-blocks", "carries the name and the arguments exactly", Grade::Fail),
    ("sh:true", "cleanup/exits-on-eof", "the client sent initialize", Grade::Fail),
    ("sh:true", "cleanup/exits-on-eof", "step 1 (close) succeeds", Grade::Fail),
    ("sh:true", "cleanup/ignores-eof", "the client sent initialize", Grade::Fail),
    ("sh:true", "cleanup/ignores-eof", "step 1 (close) succeeds", Grade::Fail),
    ("sh:true", "cleanup/ignores-sigterm", "the client sent initialize", Grade::Fail),
    ("sh:true", "cleanup/ignores-sigterm", "step 1 (close) succeeds", Grade::Fail),
    ("sh:true", "cleanup/after-handshake-error", "the client sent initialize", Grade::Fail),
    ("sh:true", "cleanup/after-tool-error", "the call was sent", Grade::Fail),
    ("sh:true", "cleanup/after-tool-error", "step 2 (close) succeeds", Grade::Fail),
    ("sh:true", "cleanup/after-cancellation", "the call was sent", Grade::Fail),
    ("sh:true", "cleanup/after-cancellation", "step 2 (close) succeeds", Grade::Fail),
    ("sh:true", "cleanup/after-server-crash", "the call was sent", Grade::Fail),
];

fn client_for(spec: &str) -> String {
    match spec.strip_prefix("sh:") {
        Some(script) => script.replace("{driver}", &support::driver_cmd("")),
        None => support::driver_cmd(&format!("--defect {spec}")),
    }
}

/// Runs the matrix, requires each row's failure, and requires every check the reference
/// run makes (per case for the case's own checks, anywhere for the always-on ones) to be
/// among the checks some row made fail.
#[test]
fn every_check_is_seen_to_fail_against_a_broken_client() {
    let rows: Vec<_> = MATRIX.to_vec();
    let results = support::in_parallel(rows, |(client, id, check, grade)| {
        let case = support::case(id);
        let eval = support::evaluate(&case, &client_for(client));
        let failed: Vec<(bool, String)> = eval
            .checks
            .iter()
            .filter(|c| !c.passed)
            .map(|c| (c.always_on, c.name.clone()))
            .collect();
        let hit = failed.iter().any(|(_, name)| name.contains(check));
        let problem = (!hit || eval.grade != grade).then(|| {
            format!(
                "{client} on {id}: wanted check ~{check:?} failed and grade {}, got grade {} with failed checks {:?}",
                grade.as_str(),
                eval.grade.as_str(),
                failed.iter().map(|f| &f.1).collect::<Vec<_>>()
            )
        });
        (id, failed, problem)
    });
    let problems: Vec<String> = results.iter().filter_map(|r| r.2.clone()).collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));

    let mut seen_failing: HashSet<(String, String)> = HashSet::new();
    for (id, failed, _) in &results {
        for (always_on, name) in failed {
            let scope = if *always_on {
                String::new()
            } else {
                id.to_string()
            };
            seen_failing.insert((scope, name.clone()));
        }
    }
    let cases = support::cases();
    let references = support::in_parallel(cases.iter().collect(), |case| {
        (
            case.id.clone(),
            support::evaluate(case, &support::driver_cmd("")),
        )
    });
    let mut never_failed = BTreeSet::new();
    for (id, eval) in references {
        for check in &eval.checks {
            let scope = if check.always_on {
                String::new()
            } else {
                id.clone()
            };
            if !seen_failing.contains(&(scope.clone(), check.name.clone())) {
                never_failed.insert(format!(
                    "{} :: {}",
                    if scope.is_empty() {
                        "(every case)"
                    } else {
                        &scope
                    },
                    check.name
                ));
            }
        }
    }
    assert!(
        never_failed.is_empty(),
        "checks no broken client has been seen to fail (add a row with a defect that breaks each):\n{}",
        never_failed.into_iter().collect::<Vec<_>>().join("\n")
    );
}

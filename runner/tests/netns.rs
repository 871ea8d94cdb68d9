//! Isolated trials (`"network": "isolated"`) where the runner cannot make a network namespace:
//! the runner runs without `CAP_SYS_ADMIN` (`setpriv --bounding-set -sys_admin`, the real
//! refusal of `unshare(CLONE_NEWNET)`, not a simulation), and each such trial must be graded
//! `unimplemented` with the reason on the console and in results.json, while its client is
//! never started (a client that would leave a mark shows none). Where the tests themselves run
//! without the privilege, the same holds without `setpriv`.

mod support;

use std::path::Path;
use std::process::Command;

use mcp_harness::report::RunResults;

#[test]
fn an_isolated_trial_without_a_namespace_is_reported_unimplemented_and_never_run() {
    support::bins();
    let dir = tempfile::tempdir().unwrap();
    let mark = dir.path().join("client-ran");
    let reports = dir.path().join("reports");
    let client = format!(
        "touch {} && {}",
        mcp_harness::conformance::shell_quote(&mark),
        support::driver_cmd("")
    );
    let harness = env!("CARGO_BIN_EXE_mcp-harness");
    let args = [
        "conformance",
        "--no-build",
        "--exact",
        "ssrf/redirect-metadata@https",
        "--client",
        &client,
        "--report-dir",
        &reports.to_string_lossy(),
    ];
    let setpriv = Path::new("/usr/bin/setpriv");
    let output = match setpriv.exists() {
        true => Command::new(setpriv)
            .args(["--bounding-set", "-sys_admin", "--", harness])
            .args(args)
            .output(),
        false => Command::new(harness).args(args).output(),
    }
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    if stdout.contains("ssrf/redirect-metadata@https ... ok") {
        panic!("the runner could make a namespace without CAP_SYS_ADMIN?\n{stdout}\n{stderr}");
    }
    assert_eq!(output.status.code(), Some(101), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("ssrf/redirect-metadata@https ... FAILED (unimplemented)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("cannot make a network namespace"),
        "the reason is on the console: {stdout}"
    );
    assert!(!mark.exists(), "the client ran outside a namespace");
    let results = RunResults::load(&reports.join("results.json")).unwrap();
    let trial = &results.trials[0];
    assert_eq!(trial.grade.as_str(), "unimplemented");
    assert!(
        trial
            .checks
            .iter()
            .any(|c| !c.passed && c.actual.contains("unshare(CLONE_NEWNET)")),
        "the reason is in results.json: {:?}",
        trial.checks
    );
}

//! A failing run says what to fix first: its failing trials grouped by cause, the cause most
//! trials share first, in the console summary before the tally and at the top of
//! report.html. Here the reference client is broken two ways at once: it ignores
//! `MCP_HARNESS_ERA` (so it never offers the modern era) and follows repeated cursors.

mod support;

use assert_cmd::Command;

#[test]
fn a_failing_run_groups_its_failures_by_cause_before_the_tally_and_in_the_report() {
    let client = format!(
        "env -u MCP_HARNESS_ERA {}",
        support::driver_cmd("--defect no-cursor-check")
    );
    let reports = tempfile::tempdir().unwrap();
    let assert = Command::new(env!("CARGO_BIN_EXE_mcp-harness"))
        .args(["conformance", "--no-build", "--client", &client])
        .args(["--exact", "--report-dir"])
        .arg(reports.path())
        .args([
            "era/modern/discover-first@stdio",
            "era/modern/discover-first@https",
            "era/modern/client-info@stdio",
            "tools/repeated-cursor-at-once@stdio",
            "calls/text-blocks@stdio",
        ])
        .assert()
        .code(101);
    let out = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    let causes = out
        .find("what to fix first: 4 trials fail the run, 2 causes")
        .unwrap_or_else(|| panic!("no causes block: {out}"));
    let era = out
        .find("  1. 3 trials: era `modern` never offered")
        .unwrap_or_else(|| panic!("the era first: {out}"));
    let cursor = out
        .find("  2. 1 trial: PROF-PAGE-3 [profile]")
        .unwrap_or_else(|| panic!("the repeated cursor second: {out}"));
    let tally = out.find("grades: ").unwrap();
    assert!(causes < era && era < cursor && cursor < tally, "{out}");
    // Folded over the trials that ran (client-info ran on stdio only).
    assert!(
        out.contains("trials: era/modern/client-info@* era/modern/discover-first@*"),
        "the trials folded: {out}"
    );
    assert!(out.contains("fix: read MCP_HARNESS_ERA"), "{out}");

    let html = std::fs::read_to_string(reports.path().join("report.html")).unwrap();
    let section = html
        .find("<h2>What to fix first</h2>")
        .expect("the section");
    let list = html.find("<h2>Trials, failures first</h2>").unwrap();
    assert!(section < list);
    assert!(html.contains("<b class=\"count\">3 trials</b> era `modern` never offered"));
    // The tiles count what the grade table counts: nothing baselined here, so four trials
    // fail the run (three of the era, one of the cursor) and the fifth passes.
    let chip = |status: &str, n: usize| {
        html.contains(&format!("data-pick=\"status={status}\"")) && {
            let at = html
                .find(&format!("data-pick=\"status={status}\""))
                .unwrap();
            html[at..]
                .split("<b>")
                .nth(1)
                .and_then(|s| s.split("</b>").next())
                == Some(n.to_string().as_str())
        }
    };
    assert!(chip("fail", 4) && chip("pass", 1), "the tiles' counts");
}

#[test]
fn a_passing_run_has_no_causes() {
    let assert = Command::new(env!("CARGO_BIN_EXE_mcp-harness"))
        .args([
            "conformance",
            "--no-build",
            "--exact",
            "calls/text-blocks@stdio",
        ])
        .assert()
        .success();
    let out = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    assert!(!out.contains("what to fix first"), "{out}");
}

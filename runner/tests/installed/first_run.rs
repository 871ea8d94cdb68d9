//! A new user's first runs of the installed binary, from a directory outside the checkout:
//! a built-in case is shown by `case show` and named so in failures and reports (not by a
//! path into a directory deleted after the run), a run that selects no trial says so, `run
//! --help` speaks only of what applies and gives the exit status, and every kit comes with an
//! example adapter. (The bless hint for one's own cases is followed in `installed.rs`.)

use super::{checkout, harness, tempdir, text};

#[test]
fn case_show_prints_a_built_in_case_as_shipped() {
    let here = tempdir();
    let out = harness(here.path(), &["case", "show", "calls/text-blocks@stdio"]);
    assert!(out.status.success(), "{}", text(&out));
    let shipped = std::fs::read(checkout().join("scenarios/calls/text-blocks.json")).unwrap();
    assert!(out.stdout == shipped, "{}", text(&out));
    // One variant of a family of cases in one file: the file, and which file it is.
    let out = harness(
        here.path(),
        &["case", "show", "auth/error-redirect-access-denied"],
    );
    assert!(out.status.success(), "{}", text(&out));
    let family = std::fs::read(checkout().join("scenarios/auth/error-redirect.json")).unwrap();
    assert!(out.stdout == family, "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("auth/error-redirect.json"),
        "{}",
        text(&out)
    );
    let out = harness(here.path(), &["case", "show", "calls/nope"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("no built-in case `calls/nope`; cases of `calls/` include: calls/"),
        "{}",
        text(&out)
    );
}

#[test]
fn a_failing_built_in_case_is_named_by_case_show_in_the_console_and_the_report() {
    let here = tempdir();
    let reports = here.path().join("out");
    let out = harness(
        here.path(),
        &[
            "run",
            "--client",
            "true",
            "--exact",
            "calls/text-blocks@stdio",
            "--report-dir",
            &reports.to_string_lossy(),
        ],
    );
    assert_eq!(out.status.code(), Some(101), "{}", text(&out));
    let shown = text(&out);
    assert!(
        shown.contains("case:   mcp-harness case show calls/text-blocks\n"),
        "{shown}"
    );
    assert!(
        !shown.contains("mcp-harness-cases-"),
        "a temporary path: {shown}"
    );
    let html = std::fs::read_to_string(reports.join("report.html")).unwrap();
    assert!(
        html.contains("case: <code>mcp-harness case show calls/text-blocks</code>"),
        "the report names the case by the command"
    );
    assert!(
        !html.contains("mcp-harness-cases-"),
        "a temporary path in the report"
    );
    // The re-run command is labelled by the program it starts.
    assert!(html.contains("re-run (mcp-harness)"));
    assert!(!html.contains("re-run (cargo xtask)"));
}

#[test]
fn a_run_that_selects_no_trial_says_so_and_fails() {
    let here = tempdir();
    let dir = super::user_dir(here.path(), false);
    let out = harness(
        here.path(),
        &[
            "run",
            "--only-cases",
            &dir.to_string_lossy(),
            "--skip",
            "mine/",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let shown = text(&out);
    assert!(shown.contains("error: no trial to run"), "{shown}");
    assert!(!shown.contains("result: ok"), "{shown}");
}

#[test]
fn run_help_names_only_what_applies_and_the_exit_status() {
    let here = tempdir();
    let out = harness(here.path(), &["run", "--help"]);
    assert!(out.status.success(), "{}", text(&out));
    let help = String::from_utf8_lossy(&out.stdout);
    for gone in [
        "seed 000",
        "--include-ignored",
        "--nocapture",
        "--show-output",
        "--bench",
        "benchmarks",
        "--test-threads",
        "--color",
    ] {
        assert!(!help.contains(gone), "`{gone}` in run --help:\n{help}");
    }
    for kept in [
        "--list",
        "--exact",
        "--skip",
        "--quiet",
        "--jobs",
        "[FILTER]...",
        "Exit status:",
        "  0 ",
        "  101 ",
        "  2 ",
    ] {
        assert!(help.contains(kept), "`{kept}` not in run --help:\n{help}");
    }
    assert!(help.lines().count() < 60, "{help}");
    // The old test-runner spellings still work where they mean something here.
    let out = harness(
        here.path(),
        &[
            "list",
            "--test-threads",
            "2",
            "--format",
            "terse",
            "--exact",
            "calls/text-blocks@stdio",
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    let out = harness(here.path(), &["run", "--format", "json"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("unsupported option --format"),
        "{}",
        text(&out)
    );
}

#[test]
fn every_kit_comes_with_an_example_adapter() {
    let here = tempdir();
    for (language, example, marker) in [
        ("python", "example_adapter.py", "kit.run(Minimal)"),
        ("js", "example-adapter.mjs", "await run({"),
        (
            "rust",
            "example-adapter/src/main.rs",
            "mcp_harness_kit::run(",
        ),
    ] {
        let out = harness(here.path(), &["kit", language]);
        assert!(out.status.success(), "{language}: {}", text(&out));
        let written = std::fs::read_to_string(here.path().join(example))
            .unwrap_or_else(|e| panic!("{language}: no {example}: {e}"));
        assert!(written.contains(marker), "{language}: {written}");
    }
    let manifest = std::fs::read_to_string(here.path().join("example-adapter/Cargo.toml")).unwrap();
    assert!(
        manifest.contains(r#"mcp-harness-kit = { path = "../mcp-harness-kit" }"#),
        "{manifest}"
    );
}

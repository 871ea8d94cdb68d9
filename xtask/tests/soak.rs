//! `cargo xtask soak`: comparing runs finds every trial whose grade or checks changed, and the
//! command runs the suite in both modes and writes soak.json.

use assert_cmd::Command;
use mcp_harness::conformance::verdict::{Grade, Verdict};
use mcp_harness::report::{CheckRecord, RunResults, TrialResult};
use mcp_harness_scenarios::model::Level;
use xtask::soak::{across_modes, compare, render_mode, shorten};

fn check(name: &str, level: Level, passed: bool, actual: &str) -> CheckRecord {
    CheckRecord {
        actual: actual.into(),
        ..CheckRecord::bare(name, level, passed)
    }
}

fn trial(name: &str, grade: Grade, checks: Vec<CheckRecord>) -> TrialResult {
    TrialResult {
        elapsed_ms: 1,
        checks,
        ..TrialResult::bare(name, grade, Verdict::Passed)
    }
}

fn run(trials: Vec<TrialResult>) -> RunResults {
    RunResults {
        netns: None,
        client: "c".into(),
        profile: true,
        seconds: 1.0,
        time_scale: 1.0,
        trials,
    }
}

#[test]
fn compare_reports_changed_grades_and_flipped_checks_only() {
    let stable = || {
        trial(
            "a@stdio",
            Grade::Pass,
            vec![check("x", Level::Must, true, "")],
        )
    };
    // b@stdio changes grade on a flipped check (y holds in both runs); c@http keeps its grade
    // while one of its checks flips.
    let b = |grade, deadline_held, actual| {
        trial(
            "b@stdio",
            grade,
            vec![
                check("deadline", Level::Must, deadline_held, actual),
                check("y", Level::Must, true, ""),
            ],
        )
    };
    let c = |held, actual| {
        trial(
            "c@http",
            Grade::NonStrict,
            vec![check("s", Level::Should, held, actual)],
        )
    };
    let runs = vec![
        run(vec![stable(), b(Grade::Pass, true, ""), c(false, "late")]),
        run(vec![
            stable(),
            b(Grade::Fail, false, "no answer\nwithin 5s"),
            c(true, ""),
        ]),
    ];
    let changed = compare(&runs);
    assert_eq!(changed.len(), 2, "{changed:?}");
    assert_eq!(changed[0].trial, "b@stdio");
    assert!(changed[0].grade_changed);
    assert_eq!(changed[0].grades, ["pass", "fail"]);
    assert_eq!(changed[0].checks.len(), 1);
    assert_eq!(changed[0].checks[0].name, "deadline");
    assert_eq!(changed[0].checks[0].level, "must");
    assert_eq!(changed[0].checks[0].passed, [Some(true), Some(false)]);
    assert_eq!(changed[0].checks[0].actual, "no answer within 5s");
    assert_eq!(changed[1].trial, "c@http");
    assert!(!changed[1].grade_changed);
    let text = render_mode("stress", &changed);
    assert!(
        text.starts_with("stress: 1 trial(s) changed grade, 1 more changed checks only\n"),
        "{text}"
    );
    assert!(text.contains("  b@stdio: pass fail\n"), "{text}");
    assert!(
        text.contains("    [must] deadline: ok FAIL (no answer within 5s)\n"),
        "{text}"
    );
}

#[test]
fn a_trial_missing_from_a_run_counts_as_changed() {
    let t = || trial("a@stdio", Grade::Pass, Vec::new());
    let changed = compare(&[run(vec![t()]), run(Vec::new())]);
    assert_eq!(changed.len(), 1);
    assert_eq!(changed[0].grades, ["pass", "missing"]);
    assert!(compare(&[run(vec![t()]), run(vec![t()])]).is_empty());
}

/// A trial steady in each mode but graded differently under stress is a verdict that follows
/// the load; one that already changed within a mode is reported there, not again.
#[test]
fn across_modes_finds_verdicts_that_follow_the_load() {
    let t = |name: &str, grade| trial(name, grade, Vec::new());
    let default = vec![
        run(vec![
            t("storm@stdio", Grade::Pass),
            t("flaky@stdio", Grade::Pass),
        ]),
        run(vec![
            t("storm@stdio", Grade::Pass),
            t("flaky@stdio", Grade::Fail),
        ]),
    ];
    let stress = vec![
        run(vec![
            t("storm@stdio", Grade::Fail),
            t("flaky@stdio", Grade::Fail),
        ]),
        run(vec![
            t("storm@stdio", Grade::Fail),
            t("flaky@stdio", Grade::Pass),
        ]),
    ];
    let changed = across_modes(&[default.clone(), stress]);
    assert_eq!(changed.len(), 1, "{changed:?}");
    assert_eq!(changed[0].trial, "storm@stdio");
    assert_eq!(changed[0].grades, ["pass", "pass", "fail", "fail"]);
    assert!(across_modes(&[default.clone(), default]).is_empty());
}

#[test]
fn shorten_keeps_one_line_within_the_limit() {
    assert_eq!(shorten("a\n  b", 10), "a b");
    assert_eq!(shorten("abcdefghij", 5), "abcd…");
}

#[test]
fn soak_runs_both_modes_and_writes_soak_json() {
    let beside = std::path::Path::new(env!("CARGO_BIN_EXE_xtask"))
        .parent()
        .unwrap();
    let bins = xtask::paths::bins_beside(beside);
    for bin in [&bins.fake_stdio, &bins.driver] {
        assert!(
            bin.exists(),
            "{} is missing: run `cargo test` of the whole workspace",
            bin.display()
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let assert = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["soak", "--no-build", "--runs", "2", "--oversubscribe", "1"])
        .arg("--hog")
        .arg("--report-dir")
        .arg(dir.path())
        .arg("handshake/happy-path@stdio")
        .assert()
        .success();
    let out = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    assert!(out.contains("default: 0 trial(s) changed grade"), "{out}");
    assert!(out.contains("stress: 0 trial(s) changed grade"), "{out}");
    assert!(
        out.contains("across modes: 0 trial(s) changed grade"),
        "{out}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("soak.json")).unwrap())
            .unwrap();
    let modes = json["modes"].as_array().unwrap();
    assert_eq!(modes.len(), 2);
    // Stress at `--oversubscribe 1` is the suite's default jobs; only it has the hog.
    assert_eq!(modes[0]["jobs"], serde_json::Value::Null);
    assert_eq!(modes[0]["hog_threads"], 0);
    assert_eq!(
        modes[1]["jobs"],
        mcp_harness::conformance::default_threads()
    );
    assert!(modes[1]["hog_threads"].as_u64().unwrap() > 0);
    for mode in modes {
        assert_eq!(mode["runs"].as_array().unwrap().len(), 2);
        assert_eq!(mode["grade_changes"], 0);
    }
    assert!(dir.path().join("stress-2").join("results.json").exists());
}

#[test]
fn a_bad_time_scale_is_refused_before_any_run() {
    let dir = tempfile::tempdir().unwrap();
    let assert = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["soak", "--no-build", "--time-scale", "fast", "--report-dir"])
        .arg(dir.path())
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(
        err.contains("--time-scale") && err.contains("the time scale must be a number"),
        "{err}"
    );
    assert!(!dir.path().join("default-1").exists());
}

#[test]
fn a_suite_that_cannot_run_stops_the_soak_and_names_its_log() {
    let dir = tempfile::tempdir().unwrap();
    let assert = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["soak", "--no-build", "--baseline"])
        .arg(dir.path().join("no-such-baseline.txt"))
        .arg("--report-dir")
        .arg(dir.path())
        .arg("handshake/happy-path@stdio")
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    let log = dir.path().join("default-1").join("conformance.log");
    assert!(
        err.contains("default run 1: the suite could not run")
            && err.contains(&format!("see {}", log.display())),
        "{err}"
    );
    let log = std::fs::read_to_string(log).unwrap();
    assert!(log.contains("no-such-baseline.txt"), "{log}");
}

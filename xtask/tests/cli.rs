//! The command line as a user meets it: listing and filtering trials, the strict baseline,
//! clear errors for a bad baseline or a malformed case, and the full reference run with
//! its snapshots.

mod support;

use assert_cmd::Command;

fn xtask() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_xtask"));
    cmd.args(["conformance", "--no-build"]);
    cmd
}

fn stdout_of(assert: assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&assert.get_output().stdout).into_owned()
}

fn temp_file(name: &str, text: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(name), text).unwrap();
    dir
}

#[test]
fn the_reference_run_passes_with_its_snapshots() {
    support::bins();
    let out = stdout_of(xtask().assert().success());
    assert!(out.contains(" 0 fail"), "{out}");
    assert!(!out.contains(" 0 pass"), "{out}");
}

#[test]
fn list_names_every_trial_and_filters_select() {
    support::bins();
    let listed = stdout_of(xtask().arg("--list").assert().success());
    assert!(
        listed.contains("handshake/happy-path@stdio: test"),
        "{listed}"
    );
    assert_eq!(
        listed.lines().filter(|l| l.ends_with(": test")).count(),
        support::trials().len()
    );
    let one = stdout_of(
        xtask()
            .args(["--exact", "calls/text-blocks@stdio"])
            .assert()
            .success(),
    );
    assert!(one.contains("grades: 1 pass"), "{one}");
}

#[test]
fn a_baseline_is_strict_both_ways() {
    let broken = support::driver_cmd("--defect text-only");
    let filter = ["--exact", "calls/structured-content@stdio"];
    xtask()
        .args(["--client", &broken])
        .args(filter)
        .assert()
        .code(101);

    let listed = temp_file(
        "baseline.txt",
        "# known\ncalls/structured-content@stdio: returns text, not structuredContent\n",
    );
    let path = listed.path().join("baseline.txt");
    let out = stdout_of(
        xtask()
            .args(["--client", &broken, "--baseline"])
            .arg(&path)
            .args(filter)
            .assert()
            .success(),
    );
    assert!(out.contains("[xfail]") || out.contains("xfail"), "{out}");

    let stale = temp_file("baseline.txt", "calls/text-blocks@stdio: was broken once\n");
    let path = stale.path().join("baseline.txt");
    let out = stdout_of(
        xtask()
            .args(["--client", &broken, "--baseline"])
            .arg(&path)
            .args(["--exact", "calls/text-blocks@stdio"])
            .assert()
            .code(101),
    );
    assert!(out.contains("stale baseline entry (line 1"), "{out}");
}

#[test]
fn a_bad_baseline_entry_is_named_with_its_line() {
    let bad = temp_file("baseline.txt", "\ncalls/no-such-case@stdio: reason\n");
    let path = bad.path().join("baseline.txt");
    let out = xtask()
        .arg("--baseline")
        .arg(&path)
        .assert()
        .code(2)
        .get_output()
        .clone();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("baseline.txt: line 2") && err.contains("names no trial"),
        "{err}"
    );
}

#[test]
fn a_malformed_case_is_named_with_its_place() {
    let dir = temp_file(
        "broken-case.json",
        "{\n  \"description\": \"d\",\n  \"requirement\": \"R-1\", \"transports\": [\"carrier-pigeon\"],\n  \"plan\": []\n}\n",
    );
    let out = xtask()
        .arg("--scenarios")
        .arg(dir.path())
        .assert()
        .code(2)
        .get_output()
        .clone();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("broken-case.json: line 3 column"), "{err}");
    assert!(
        err.contains("transports[0]") && err.contains("carrier-pigeon"),
        "{err}"
    );
}

#[test]
fn shards_split_the_trials_without_overlap() {
    support::bins();
    let names = |shard: &str| -> Vec<String> {
        let out = stdout_of(
            xtask()
                .args(["--list", "--shard", shard])
                .assert()
                .success(),
        );
        out.lines()
            .filter(|l| l.ends_with(": test"))
            .map(str::to_owned)
            .collect()
    };
    let (one, two) = (names("1/2"), names("2/2"));
    assert!(!one.is_empty() && !two.is_empty());
    assert!(one.iter().all(|n| !two.contains(n)));
    assert_eq!(one.len() + two.len(), support::trials().len());
    let err = xtask()
        .args(["--shard", "3/2"])
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    assert!(String::from_utf8_lossy(&err).contains("expected I/N"));
}

#[test]
fn a_report_dir_gets_json_junit_and_html() {
    let dir = tempfile::tempdir().unwrap();
    let broken = support::driver_cmd("--defect text-only");
    xtask()
        .args([
            "--client",
            &broken,
            "--client-name",
            "broken",
            "--report-dir",
        ])
        .arg(dir.path())
        .args(["calls/"])
        .assert()
        .code(101);
    let results = xtask::report::RunResults::load(&dir.path().join("results.json")).unwrap();
    assert_eq!(results.client, "broken");
    let failed = results
        .trials
        .iter()
        .find(|t| t.name == "calls/structured-content@stdio")
        .unwrap();
    assert_eq!(failed.verdict, "failed");
    assert!(failed.details.contains("Expected:"), "{}", failed.details);
    let junit = std::fs::read_to_string(dir.path().join("junit.xml")).unwrap();
    assert!(
        junit.contains("calls/structured-content@stdio") && junit.contains("<failure"),
        "{junit}"
    );
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert!(
        html.contains("calls/structured-content@stdio") && html.contains("class=\"grade fail"),
        "html"
    );
}

/// The runner is a subreaper: a client killed at its deadline leaves its children to the
/// runner, which must reap them rather than report them as strays (or leave zombies).
#[test]
fn a_client_killed_at_the_deadline_leaves_nothing_to_sweep() {
    support::bins();
    let out = xtask()
        .args([
            "--client",
            "sleep 30 & sleep 30",
            "--exact",
            "handshake/initialize-timeout@stdio",
        ])
        .assert()
        .code(101)
        .get_output()
        .clone();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(stdout.contains("trial deadline"), "{stdout}");
    assert!(!stderr.contains("outlived their trials"), "{stderr}");
}

//! The command line as a user meets it: listing and filtering trials, the strict baseline
//! (read and written), clear errors for a bad baseline or a malformed case, failure reports
//! that can be acted on. The full reference run with its snapshots, through this same
//! command line, is in `reference.rs`.

mod support;

use assert_cmd::Command;

fn harness() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mcp-harness"));
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
fn list_names_every_trial_and_filters_select() {
    support::bins();
    let listed = stdout_of(harness().arg("--list").assert().success());
    assert!(
        listed.contains("handshake/happy-path@stdio: test"),
        "{listed}"
    );
    assert_eq!(
        listed.lines().filter(|l| l.ends_with(": test")).count(),
        support::trials().len()
    );
    let one = stdout_of(
        harness()
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
    harness()
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
        harness()
            .args(["--client", &broken, "--baseline"])
            .arg(&path)
            .args(filter)
            .assert()
            .success(),
    );
    assert!(
        out.contains("xfail (") && out.contains("1 baselined"),
        "{out}"
    );

    let stale = temp_file("baseline.txt", "calls/text-blocks@stdio: was broken once\n");
    let path = stale.path().join("baseline.txt");
    let reports = tempfile::tempdir().unwrap();
    let out = stdout_of(
        harness()
            .args(["--client", &broken, "--baseline"])
            .arg(&path)
            .args(["--exact", "calls/text-blocks@stdio", "--report-dir"])
            .arg(reports.path())
            .assert()
            .code(101),
    );
    assert!(out.contains("stale baseline entry (line 1, "), "{out}");
    // The re-run command the reports give runs the trial against the same baseline.
    let results =
        mcp_harness::report::RunResults::load(&reports.path().join("results.json")).unwrap();
    let rerun = &results.trials[0].rerun;
    assert!(
        rerun.contains(&format!(" --baseline {}", path.display())),
        "{rerun}"
    );
}

#[test]
fn a_bad_baseline_entry_is_named_with_its_line() {
    let bad = temp_file("baseline.txt", "\ncalls/no-such-case@stdio: reason\n");
    let path = bad.path().join("baseline.txt");
    let out = harness()
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
    let out = harness()
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
            harness()
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
    let err = harness()
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
    harness()
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
    let results = mcp_harness::report::RunResults::load(&dir.path().join("results.json")).unwrap();
    assert_eq!(results.client, "broken");
    let failed = results
        .trials
        .iter()
        .find(|t| t.name == "calls/structured-content@stdio")
        .unwrap();
    assert_eq!(
        failed.verdict,
        mcp_harness::conformance::verdict::Verdict::Failed
    );
    assert!(failed.details.contains("Expected:"), "{}", failed.details);
    let junit = std::fs::read_to_string(dir.path().join("junit.xml")).unwrap();
    assert!(
        junit.contains("calls/structured-content@stdio") && junit.contains("<failure"),
        "{junit}"
    );
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert!(
        html.contains("calls/structured-content@stdio")
            && html.contains("data-status=\"fail\" data-grade=\"fail\""),
        "html"
    );
}

/// The runner is a subreaper: a client killed at its deadline leaves its children to the
/// runner, which must reap them rather than report them as strays (or leave zombies). The
/// case is run from a scratch copy of the case directory with a shorter deadline (4 s, the
/// least the loader's deadline lint allows it, not the case's 10 s): what matters is the kill
/// at the deadline, not its length.
#[test]
fn a_client_killed_at_the_deadline_leaves_nothing_to_sweep() {
    support::bins();
    let scenarios = support::scenarios_dir();
    let copy = tempfile::tempdir().unwrap();
    std::fs::copy(
        scenarios.join("requirements.json"),
        copy.path().join("requirements.json"),
    )
    .unwrap();
    let case_file = "handshake/initialize-timeout.json";
    let mut case: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(scenarios.join(case_file)).unwrap()).unwrap();
    case["deadline_ms"] = 4_000.into();
    std::fs::create_dir_all(copy.path().join("handshake")).unwrap();
    std::fs::write(copy.path().join(case_file), case.to_string()).unwrap();
    // At scale 1, so that the deadline is the one the case states.
    let out = harness()
        .arg("--scenarios")
        .arg(copy.path())
        .args([
            "--time-scale",
            "1",
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
    assert!(stdout.contains("exit within 4000 ms"), "{stdout}");
    assert!(!stderr.contains("outlived their trials"), "{stderr}");
}

fn stderr_of(assert: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&assert.get_output().stderr).into_owned()
}

#[test]
fn several_name_filters_select_every_trial_they_name() {
    support::bins();
    let listed = stdout_of(
        harness()
            .args(["--list", "--exact"])
            .args([
                "calls/text-blocks@stdio",
                "tools/pagination-three-pages@https",
            ])
            .assert()
            .success(),
    );
    let names: Vec<&str> = listed.lines().filter(|l| l.ends_with(": test")).collect();
    assert_eq!(
        names,
        [
            "calls/text-blocks@stdio: test",
            "tools/pagination-three-pages@https: test"
        ],
        "{listed}"
    );
    // With a client too, and without --exact: any filter selects, --skip still drops.
    let client = support::driver_cmd("");
    let out = stdout_of(
        harness()
            .args([
                "--client",
                &client,
                "calls/text",
                "calls/unknown",
                "--skip",
                "@https",
            ])
            .assert()
            .success(),
    );
    assert!(out.contains("grades: 2 pass"), "{out}");
    assert!(
        out.contains("test calls/text-blocks@stdio ... pass"),
        "{out}"
    );
    assert!(
        out.contains("test calls/unknown-tool@stdio ... pass"),
        "{out}"
    );
}

#[test]
fn the_console_tallies_once_by_grade() {
    support::bins();
    let out = stdout_of(
        harness()
            .args(["calls/", "--skip", "@https"])
            .assert()
            .success(),
    );
    assert_eq!(out.matches("grades:").count(), 1, "{out}");
    assert!(
        !out.contains("test result:") && !out.contains(" passed;"),
        "{out}"
    );
    assert!(out.contains("result: ok"), "{out}");
    let broken = support::driver_cmd("--defect text-only");
    let out = stdout_of(
        harness()
            .args(["--client", &broken, "calls/", "--skip", "@https"])
            .assert()
            .code(101),
    );
    assert_eq!(out.matches("grades:").count(), 1, "{out}");
    assert!(
        out.contains(", 1 fail (")
            && out
                .contains("result: FAILED, 1 trial fails the run: calls/structured-content@stdio"),
        "{out}"
    );
}

#[test]
fn unsupported_libtest_options_are_refused() {
    let assert = harness().args(["--logfile", "x.log"]).assert().code(2);
    assert!(stderr_of(&assert).contains("unsupported option --logfile"));
}

/// A wire failure shows the closest message and where it differs, the case file, and a
/// command that re-runs just that trial (and does).
#[test]
fn a_failure_names_its_case_the_closest_message_and_how_to_rerun_it() {
    let broken = support::driver_cmd("--defect mangle-cursor");
    let trial = "tools/pagination-three-pages@stdio";
    let dir = tempfile::tempdir().unwrap();
    let out = stdout_of(
        harness()
            .args(["--client", &broken, "--exact", trial, "--report-dir"])
            .arg(dir.path())
            .assert()
            .code(101),
    );
    // The binary's built-in cases are written out for the run only: the failure names the
    // command that prints the case instead of a path that will not exist.
    assert!(
        out.contains("case:   mcp-harness case show tools/pagination-three-pages"),
        "{out}"
    );
    assert!(
        out.contains(r#"closest (message 4): {"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"c1x"}} (at $.params.cursor: expected "c1", found "c1x")"#),
        "{out}"
    );
    // Expected shows the whole matcher, however long.
    assert!(
        out.contains(r#"Expected:    ok {"tools":{"$unordered":[{"name":"alpha"},{"name":"beta"},{"name":"gamma"},{"name":"delta"},{"name":"epsilon"}]}}"#),
        "{out}"
    );
    let rerun = out
        .lines()
        .find_map(|l| l.strip_prefix("re-run: "))
        .unwrap_or_else(|| panic!("no re-run line: {out}"));
    assert!(
        rerun.starts_with(&format!("mcp-harness run --exact {trial} --client '")),
        "{rerun}"
    );
    let args = rerun.strip_prefix("mcp-harness run").unwrap();
    let again = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "'{}' run --no-build {args}",
            env!("CARGO_BIN_EXE_mcp-harness")
        ))
        .output()
        .unwrap();
    let again_out = String::from_utf8_lossy(&again.stdout);
    assert_eq!(again.status.code(), Some(101), "{again_out}");
    assert!(
        again_out.contains("running 1 trial\n") && again_out.contains(trial),
        "{again_out}"
    );

    // results.json: the checks with their requirement, and what each step reported,
    // the client's error message included.
    let results = mcp_harness::report::RunResults::load(&dir.path().join("results.json")).unwrap();
    let t = &results.trials[0];
    assert_eq!(t.rerun, rerun);
    assert_eq!(
        t.case_path,
        "mcp-harness case show tools/pagination-three-pages"
    );
    let failed: Vec<_> = t.checks.iter().filter(|c| !c.passed).collect();
    assert!(!failed.is_empty());
    assert!(
        failed
            .iter()
            .all(|c| !c.requirement.is_empty() && !c.expected.is_empty())
    );
    let error = t.outcomes[1]
        .error
        .as_ref()
        .expect("step 1 reported an error");
    assert!(
        error
            .message
            .as_deref()
            .unwrap_or_default()
            .contains("Method not found"),
        "{:?}",
        t.outcomes
    );
    assert_eq!(t.outcomes[1].op, "list_tools");
    let json = std::fs::read_to_string(dir.path().join("results.json")).unwrap();
    assert!(
        json.contains("\"requirement\"") && json.contains("\"message\""),
        "{json}"
    );
}

#[test]
fn a_written_baseline_lists_the_failures_and_makes_the_next_run_pass() {
    let broken = support::driver_cmd("--defect text-only");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("baseline.txt");
    let out = stdout_of(
        harness()
            .args(["--client", &broken, "calls/", "--write-baseline"])
            .arg(&path)
            .assert()
            .code(101),
    );
    assert!(out.contains("baseline.txt (1 entries)"), "{out}");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.contains("# Written from a partial run (filters calls/)"),
        "{text}"
    );
    // Both transports fail the same check for the same reason: one line.
    assert!(
        text.contains("\ncalls/structured-content@* [\"step 1\"]: misses "),
        "{text}"
    );
    assert!(text.contains("[profile]"), "{text}");
    let out = stdout_of(
        harness()
            .args(["--client", &broken, "calls/", "--baseline"])
            .arg(&path)
            .assert()
            .success(),
    );
    assert!(
        out.contains("2 baselined") && out.contains("result: ok"),
        "{out}"
    );
}

/// Per-check baselines: a trial meets its baseline only when exactly the checks it names
/// fail. One more broken check inside a baselined trial fails the run; a named check that
/// holds again is stale.
#[test]
fn a_new_failure_inside_a_baselined_trial_fails_the_run_and_a_fixed_check_is_stale() {
    let trial = ["--exact", "calls/structured-content@stdio"];
    let one = temp_file(
        "baseline.txt",
        "calls/structured-content@* [\"step 1\"]: returns text, not structuredContent\n",
    );
    let one = one.path().join("baseline.txt");
    let text_only = support::driver_cmd("--defect text-only");
    let out = stdout_of(
        harness()
            .args(["--client", &text_only, "--baseline"])
            .arg(&one)
            .args(trial)
            .assert()
            .success(),
    );
    assert!(out.contains("1 baselined"), "{out}");
    // A second defect breaks JSON-02 in the same trial: a new failure, named.
    let both = support::driver_cmd("--defect text-only --defect reuse-ids");
    let out = stdout_of(
        harness()
            .args(["--client", &both, "--baseline"])
            .arg(&one)
            .args(trial)
            .assert()
            .code(101),
    );
    assert!(out.contains("new failure in a baselined trial"), "{out}");
    assert!(out.contains("(JSON-02)"), "{out}");
    // The baseline names both; the client fixed JSON-02: stale, naming the check.
    let two = temp_file(
        "baseline.txt",
        "calls/structured-content@* [\"step 1\", JSON-02]: text, and reused ids\n",
    );
    let two = two.path().join("baseline.txt");
    let out = stdout_of(
        harness()
            .args(["--client", &both, "--baseline"])
            .arg(&two)
            .args(trial)
            .assert()
            .success(),
    );
    assert!(out.contains("1 baselined"), "{out}");
    let out = stdout_of(
        harness()
            .args(["--client", &text_only, "--baseline"])
            .arg(&two)
            .args(trial)
            .assert()
            .code(101),
    );
    assert!(
        out.contains("stale baseline entry (line 1, ") && out.contains("[JSON-02] held"),
        "{out}"
    );
}

/// A filter that selects nothing is an error, not a green run of no trials.
#[test]
fn a_filter_that_matches_no_trial_is_refused() {
    for args in [
        vec!["calls/no-such-thing"],
        vec!["calls/", "tools/typo-here"],
        vec!["--exact", "calls/structured-content"],
    ] {
        let out = harness().args(&args).assert().code(2).get_output().clone();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("matches no trial"), "{args:?}: {err}");
    }
}

/// `$absent` means missing, not null: the reference client's own run of
/// `era/mrtr/no-request-state` passes, and the same transcript with `"requestState": null`
/// on the retry fails the check, naming the member and the null found there.
#[test]
fn a_null_request_state_on_the_retry_fails_no_request_state() {
    use mcp_harness_scenarios::model::Transport;
    use mcp_harness_scenarios::transcript::Event;
    let case = support::case("era/mrtr/no-request-state");
    let eval = support::evaluate(&case, &support::driver_cmd(""));
    assert!(
        eval.checks.iter().all(|c| c.passed),
        "{:?}",
        support::failed_checks(&eval)
    );
    let mut run = eval.run.clone();
    let mut edited = 0;
    for record in run.records.iter_mut().flatten() {
        if let Event::Received { message } = &mut record.event
            && message["method"] == "tools/call"
            && message["params"].get("inputResponses").is_some()
        {
            message["params"]["requestState"] = serde_json::Value::Null;
            edited += 1;
        }
    }
    assert_eq!(edited, 1, "the retry was not found in {:?}", run.records);
    let (checks, _) = mcp_harness::conformance::checks::evaluate(&case, Transport::Stdio, &run);
    // The schema check refuses the null too (a string, if present).
    let schema = checks
        .iter()
        .find(|c| c.requirement_id == "SCHEMA-01")
        .unwrap();
    assert!(
        !schema.passed && schema.actual.contains("/params/requestState: type: "),
        "{schema:?}"
    );
    let failed: Vec<_> = checks
        .iter()
        .filter(|c| !c.passed && !c.always_on)
        .collect();
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(
        failed[0].name,
        "the retry answers roots/list and has no requestState"
    );
    assert!(
        failed[0]
            .actual
            .contains("(at $.params.requestState: expected no member at all, found null)"),
        "{}",
        failed[0].actual
    );
}

/// The bench's timings: each trial's phases, named, the client's run among them, and the
/// run's one-off costs; an HTTPS trial shows its fake's start and the run's certificates.
#[test]
fn timings_are_written_when_the_bench_asks_for_them() {
    support::bins();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("timings.json");
    harness()
        .args([
            "--exact",
            "handshake/happy-path@stdio",
            "handshake/happy-path@https",
        ])
        .env(mcp_harness::conformance::timings::VAR, &file)
        .assert()
        .success();
    let t = mcp_harness::conformance::timings::RunTimings::load(&file).unwrap();
    assert_eq!(t.trials.len(), 2);
    assert!(t.http_setup_ms > 0.0 && t.trials_ms > 0.0);
    for trial in &t.trials {
        let phase = |name: &str| {
            trial
                .phases_us
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, us)| *us)
                .unwrap_or_else(|| panic!("{} has no phase {name}", trial.name))
        };
        assert!(phase("client") > 0 && phase("spawn") > 0 && phase("checks") > 0);
        assert!(phase("spawn") <= phase("client"));
        assert_eq!(phase("fake_start") > 0, trial.name.ends_with("@https"));
    }
}

/// A client that does nothing on its first start and is the reference driver from then on:
/// the count of starts is kept in the file `$FLAKY_STATE` names, so its first attempt at a
/// trial fails and every later one passes.
fn fails_first_start() -> String {
    format!(
        "n=$(cat \"$FLAKY_STATE\" 2>/dev/null || echo 0); echo $((n + 1)) > \"$FLAKY_STATE\"; \
         [ \"$n\" -ge 1 ] && exec {}",
        support::driver_cmd("")
    )
}

const ONE_TRIAL: [&str; 2] = ["--exact", "calls/text-blocks@stdio"];

#[test]
fn a_trial_whose_grade_changes_between_attempts_is_reported_flaky_and_fails_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = stdout_of(
        harness()
            .env("FLAKY_STATE", dir.path().join("starts"))
            .args(["--client", &fails_first_start(), "--retries", "2"])
            .arg("--report-dir")
            .arg(dir.path().join("report"))
            .args(ONE_TRIAL)
            .assert()
            .code(101),
    );
    assert!(
        out.contains("test calls/text-blocks@stdio ... FAILED (fail)")
            && out.contains("retrying 1 trial one at a time, up to 2 more times")
            && out.contains("test calls/text-blocks@stdio ... FAILED (flaky: fail, pass)")
            && out.contains("1 fail (1 trial, 0 baselined, 1 flaky)")
            && out.contains("flaky: its attempts graded fail, pass")
            && out.contains("`calls/text-blocks@stdio [<check>]: flaky: <reason>`")
            && out.contains("fails the run: calls/text-blocks@stdio"),
        "{out}"
    );
    // It stopped at the first attempt that graded otherwise.
    let starts = std::fs::read_to_string(dir.path().join("starts")).unwrap();
    assert_eq!(starts.trim(), "2");
    let report = dir.path().join("report");
    let results = mcp_harness::report::RunResults::load(&report.join("results.json")).unwrap();
    let t = &results.trials[0];
    use mcp_harness::conformance::verdict::{Grade, Verdict};
    assert!(t.flaky && t.verdict == Verdict::Flaky, "{t:?}");
    assert_eq!(t.attempts, [Grade::Fail, Grade::Pass]);
    let json = std::fs::read_to_string(report.join("results.json")).unwrap();
    assert!(json.contains("\"flaky\": true") && json.contains("\"verdict\": \"flaky\""));
    let junit = std::fs::read_to_string(report.join("junit.xml")).unwrap();
    assert!(
        junit.contains("<failure")
            && junit.contains(r#"<property name="flaky" value="true"/>"#)
            && junit.contains(r#"<property name="attempts" value="fail, pass"/>"#)
            && junit.contains("<system-out>flaky; attempts: fail, pass</system-out>"),
        "{junit}"
    );
    let html = std::fs::read_to_string(report.join("report.html")).unwrap();
    assert!(
        html.contains(r#"data-status="flaky""#)
            && html.contains(r#"<p class="note">attempts: fail, pass</p>"#),
        "html"
    );
}

#[test]
fn a_trial_that_fails_the_same_way_on_every_attempt_is_failing_not_flaky() {
    let dir = tempfile::tempdir().unwrap();
    let out = stdout_of(
        harness()
            .args(["--client", "true", "--retries", "2", "--report-dir"])
            .arg(dir.path())
            .args(ONE_TRIAL)
            .assert()
            .code(101),
    );
    assert!(
        out.contains("test calls/text-blocks@stdio ... FAILED (fail on all 3 attempts)")
            && out.contains("graded fail on all 3 attempts: the same every time, not flaky")
            && out.contains("(1 trial, 0 baselined) in"),
        "{out}"
    );
    let results = mcp_harness::report::RunResults::load(&dir.path().join("results.json")).unwrap();
    let t = &results.trials[0];
    assert!(!t.flaky && t.attempts.len() == 3, "{t:?}");
    assert_eq!(
        t.verdict,
        mcp_harness::conformance::verdict::Verdict::Failed
    );
    // Without --retries nothing is re-run.
    let out = stdout_of(
        harness()
            .args(["--client", "true"])
            .args(ONE_TRIAL)
            .assert()
            .code(101),
    );
    assert!(
        !out.contains("retrying") && out.contains("FAILED (fail)\n"),
        "{out}"
    );
}

#[test]
fn a_known_flaky_baseline_entry_lets_a_flake_pass_but_not_a_failure() {
    let dir = tempfile::tempdir().unwrap();
    let baseline = dir.path().join("baseline.txt");
    std::fs::write(
        &baseline,
        "# known\ncalls/text-blocks@stdio: flaky: its first start of a run does nothing\n",
    )
    .unwrap();
    let state = dir.path().join("starts");
    let run = |client: &str, retries: &str| {
        let mut cmd = harness();
        cmd.env("FLAKY_STATE", &state)
            .args(["--client", client, "--retries", retries, "--baseline"])
            .arg(&baseline)
            .args(ONE_TRIAL);
        cmd
    };
    let out = stdout_of(run(&fails_first_start(), "2").assert().success());
    assert!(
        out.contains("... flaky (fail, pass; baselined known-flaky)")
            && out.contains("1 flaky)")
            && out.contains("result: ok"),
        "{out}"
    );
    // Without retries the flake is not told apart: it fails, with a hint.
    std::fs::remove_file(&state).unwrap();
    let out = stdout_of(run(&fails_first_start(), "0").assert().code(101));
    assert!(
        out.contains(
            "marks this trial known-flaky (line 2, `calls/text-blocks@stdio`); run with --retries N"
        ),
        "{out}"
    );
    // A known-flaky trial that fails on every attempt still fails the run.
    let out = stdout_of(run("true", "2").assert().code(101));
    assert!(out.contains("FAILED (fail on all 3 attempts)"), "{out}");
    // A malformed mark is named with its file and line.
    std::fs::write(&baseline, "\ncalls/text-blocks@stdio: flaky:\n").unwrap();
    let assert = run("true", "2").assert().code(2);
    let err = stderr_of(&assert);
    assert!(
        err.contains("baseline.txt: line 2: `calls/text-blocks@stdio` is marked flaky without a reason; expected `calls/text-blocks@stdio: flaky: <why"),
        "{err}"
    );
}

/// A known-flaky mark may name checks: a flake whose changed checks it all names passes; one
/// that changed a check it does not name still fails the run.
#[test]
fn a_per_check_flaky_mark_covers_only_the_checks_it_names() {
    let dir = tempfile::tempdir().unwrap();
    let baseline = dir.path().join("baseline.txt");
    let state = dir.path().join("starts");
    let run = |marks: &str| {
        std::fs::write(
            &baseline,
            format!("calls/text-blocks@stdio [{marks}]: flaky: the first start does nothing\n"),
        )
        .unwrap();
        let _ = std::fs::remove_file(&state);
        let mut cmd = harness();
        cmd.env("FLAKY_STATE", &state)
            .args([
                "--client",
                &fails_first_start(),
                "--retries",
                "1",
                "--baseline",
            ])
            .arg(&baseline)
            .args(ONE_TRIAL);
        cmd
    };
    // What a client doing nothing fails in this trial.
    let all = "CONTRACT-1, CONTRACT-12, CONTRACT-2, CONTRACT-4, PROF-RES-1, PROF-RES-2";
    let out = stdout_of(run(all).assert().success());
    assert!(
        out.contains("baselined known-flaky") && out.contains("result: ok"),
        "{out}"
    );
    let out = stdout_of(run("CONTRACT-12").assert().code(101));
    assert!(
        out.contains("FAILED (flaky: fail, pass)")
            && out.contains("no mark names: ")
            && out.contains("CONTRACT-1,"),
        "{out}"
    );
}

/// A retry is the trial again, scaled as its first attempt was: a `--retries` attempt at
/// `--time-scale 3` hands the client three times the case's timeout too.
#[test]
fn a_retry_runs_at_the_trials_time_scale() {
    let dir = tempfile::tempdir().unwrap();
    let seen = mcp_harness::conformance::shell_quote(&dir.path().join("seen"));
    // Notes the timeout it is handed on every start; does nothing on the first.
    let client = format!(
        "echo \"$MCP_HARNESS_TIMEOUT_MS\" >> {seen}; {}",
        fails_first_start()
    );
    stdout_of(
        harness()
            .env("FLAKY_STATE", dir.path().join("starts"))
            .args(["--client", &client, "--time-scale", "3", "--retries", "1"])
            .args(["--exact", "timeouts/call-timeout@stdio"])
            .assert()
            .code(101),
    );
    let handed = std::fs::read_to_string(dir.path().join("seen")).unwrap();
    assert_eq!(
        handed.lines().collect::<Vec<_>>(),
        ["3000", "3000"],
        "{handed}"
    );
}

#[test]
fn a_time_scale_multiplies_what_the_client_is_handed_and_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let seen = dir.path().join("seen");
    std::fs::create_dir(&seen).unwrap();
    let quoted = mcp_harness::conformance::shell_quote(&seen);
    // The reference driver, after noting the timeouts it is handed and keeping the play
    // file the fake is handed (the trial's directory goes with the trial).
    let client = format!(
        "echo \"$MCP_HARNESS_TIMEOUT_MS $MCP_HARNESS_SHUTDOWN_GRACE_MS\" > {quoted}/timeouts; \
         cp \"$(echo \"$MCP_HARNESS_SERVER_COMMAND\" | sed 's/.*\"--play\",\"\\([^\"]*\\)\".*/\\1/')\" {quoted}/play.json; \
         exec {}",
        support::driver_cmd("")
    );
    let out = stdout_of(
        harness()
            .args(["--client", &client, "--time-scale", "2", "--report-dir"])
            .arg(dir.path())
            .args(["--exact", "timeouts/call-timeout@stdio"])
            .assert()
            .success(),
    );
    assert!(out.contains("time scale 2 (--time-scale)"), "{out}");
    // The case states a 1000 ms timeout and the default 300 ms grace.
    let handed = std::fs::read_to_string(seen.join("timeouts")).unwrap();
    assert_eq!(handed.trim(), "2000 600");
    // The stdio fake plays the script as the runner scaled it: its 3000 ms answer delay
    // and its wait for the client's responses, doubled.
    let play: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(seen.join("play.json")).unwrap()).unwrap();
    assert_eq!(play["request_timeout_ms"], 2000, "{play}");
    assert_eq!(play["server"]["handlers"][0]["delay_ms"], 6000, "{play}");
    let results = mcp_harness::report::RunResults::load(&dir.path().join("results.json")).unwrap();
    assert_eq!(results.time_scale, 2.0);
    assert!(results.trials.iter().all(|t| t.time_scale == 2.0));

    // Out of range, or not a number: a clear usage error.
    let err = harness()
        .args(["--time-scale", "0", "--list"])
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&err.get_output().stderr).into_owned();
    assert!(
        err.contains("time scale must be a number from 0.5 to 20"),
        "{err}"
    );
}

/// `mcp-harness matrix`: two shards of the reference client merge into one column beside a
/// second client, failures first; a trial in two shards of one client, a file that is not
/// JSON and a JSON file that is not a run's results are refused, each naming the file.
#[test]
fn matrix_merges_shards_and_puts_clients_side_by_side() {
    let trials = [
        "calls/text-blocks@stdio",
        "calls/text-blocks@https",
        "calls/structured-content@stdio",
        "handshake/happy-path@stdio",
    ];
    let dir = tempfile::tempdir().unwrap();
    let run = |name: &str, args: &[&str], code: i32| {
        let reports = dir.path().join(name);
        harness()
            .args(args)
            .args(["--time-scale", "1", "--exact"])
            .args(trials)
            .arg("--report-dir")
            .arg(&reports)
            .assert()
            .code(code);
        reports.join("results.json")
    };
    let first = run("shard-1", &["--shard", "1/2"], 0);
    let second = run("shard-2", &["--shard", "2/2"], 0);
    let broken = support::driver_cmd("--defect text-only");
    let named = ["--client", &broken, "--client-name", "text-only"];
    let other = run("text-only", &named, 101);
    let matrix = |files: &[&std::path::Path]| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_mcp-harness"));
        cmd.arg("matrix").args(files);
        cmd.arg("--out").arg(dir.path().join("matrix.html"));
        cmd.assert()
    };

    let out = stdout_of(matrix(&[&first, &second, &other]).success());
    assert!(out.contains("reference: 4 trials"), "{out}");
    assert!(out.contains("text-only: 4 trials"), "{out}");
    let page = std::fs::read_to_string(dir.path().join("matrix.html")).unwrap();
    assert!(page.contains("4 trials × 2 clients"), "{page}");
    assert!(page.contains("<th>reference<br>") && page.contains("<th>text-only<br>"));
    assert!(
        !page.contains("not run</td>"),
        "a shard's trial is missing: {page}"
    );
    let row = |trial: &str| {
        page.find(&format!("<code>{trial}</code>"))
            .unwrap_or_else(|| panic!("no row for {trial}"))
    };
    // The one trial the broken client fails comes first, with a fail badge.
    let failing = row("calls/structured-content@stdio");
    for trial in ["calls/text-blocks@stdio", "calls/text-blocks@https"] {
        assert!(failing < row(trial), "{trial} before the failing row");
    }
    assert!(page[failing..].contains("<span class=\"badge fail\""));

    let copy = dir.path().join("copy-of-shard-1.json");
    std::fs::copy(&first, &copy).unwrap();
    let err = stderr_of(&matrix(&[&first, &copy]).code(2));
    assert!(
        err.contains(&first.display().to_string())
            && err.contains(&copy.display().to_string())
            && err.contains("is in both"),
        "{err}"
    );
    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "not a report").unwrap();
    let err = stderr_of(&matrix(&[&text]).code(2));
    assert!(
        err.contains(&text.display().to_string()) && err.contains("not JSON"),
        "{err}"
    );
    let json = dir.path().join("other.json");
    std::fs::write(&json, r#"{"client": "x", "trials": []}"#).unwrap();
    let err = stderr_of(&matrix(&[&json]).code(2));
    assert!(
        err.contains(&json.display().to_string())
            && err.contains("not a results file")
            && err.contains("missing field `profile`")
            && err.contains("expected the results.json"),
        "{err}"
    );
}

/// A failing run says what to fix first: its failing trials grouped by cause, the cause most
/// trials share first, in the console summary before the tally and at the top of
/// report.html. Here the reference client is broken two ways at once: it ignores
/// `MCP_HARNESS_ERA` (so it never offers the modern era) and follows repeated cursors.
#[test]
fn a_failing_run_groups_its_failures_by_cause_before_the_tally_and_in_the_report() {
    let client = format!(
        "env -u MCP_HARNESS_ERA {}",
        support::driver_cmd("--defect no-cursor-check")
    );
    let reports = tempfile::tempdir().unwrap();
    let assert = harness()
        .args(["--client", &client])
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
    let assert = harness()
        .args(["--exact", "calls/text-blocks@stdio"])
        .assert()
        .success();
    let out = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    assert!(!out.contains("what to fix first"), "{out}");
}

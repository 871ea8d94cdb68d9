//! Isolated trials (`"network": "isolated"`) as an ordinary user, as CI runners run them.
//!
//! Run as root, the test drops to `nobody` (`setpriv --reuid=65534`: the real refusal of
//! `unshare(CLONE_NEWNET)`, not a simulation) and runs one isolated trial twice:
//! - with the default ways: where this kernel allows an unprivileged user namespace, the
//!   trial runs in one and passes; where it does not, it is "not run here";
//! - with only the root way allowed (`MCP_HARNESS_NETNS_WAYS=root`), which an ordinary user
//!   is really refused: "not run here" with the reason on the console, in results.json and
//!   JUnit (skipped), the client never started, and the run exits 0; with `--require-ssrf`
//!   the same trial fails the run (101).
//!
//! Run as another user, the same holds without `setpriv` (even one with passwordless sudo:
//! the sudo way is not allowed). Root without `setpriv` fails the test rather than skip it.

mod support;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};

use mcp_harness::report::RunResults;

const TRIAL: &str = "ssrf/redirect-metadata@https";

/// Runs the harness on [`TRIAL`] as an unprivileged user, with `env` and `extra` flags.
fn run_unprivileged(dir: &Path, env: &[(&str, &str)], extra: &[&str]) -> Output {
    let mark = dir.join("client-ran");
    let client = format!(
        "touch {} && {}",
        mcp_harness::conformance::shell_quote(&mark),
        support::driver_cmd("")
    );
    let reports = dir.join("reports");
    std::fs::create_dir_all(&reports).unwrap();
    std::fs::set_permissions(&reports, std::fs::Permissions::from_mode(0o777)).unwrap();
    let mut cmd = unprivileged(&[env!("CARGO_BIN_EXE_mcp-harness")]);
    cmd.args([
        "conformance",
        "--no-build",
        "--exact",
        TRIAL,
        "--client",
        &client,
    ])
    .arg("--report-dir")
    .arg(&reports)
    .args(extra)
    .env("HOME", dir)
    .env_remove(netns_var())
    .envs(env.iter().copied());
    cmd.output().unwrap()
}

const SETPRIV: &str = "/usr/bin/setpriv";

/// `argv` as `nobody` when this test runs as root, else as is.
fn unprivileged(argv: &[&str]) -> Command {
    match is_root() {
        false => {
            let mut cmd = Command::new(argv[0]);
            cmd.args(&argv[1..]);
            cmd
        }
        true => {
            assert!(
                Path::new(SETPRIV).exists(),
                "run as root, this test needs {SETPRIV} (util-linux) to drop to nobody"
            );
            let mut cmd = Command::new(SETPRIV);
            cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
                .args(argv);
            cmd
        }
    }
}

/// Whether this test runs as root (the owner of `/proc/self`).
fn is_root() -> bool {
    std::os::unix::fs::MetadataExt::uid(&std::fs::metadata("/proc/self").unwrap()) == 0
}

fn netns_var() -> &'static str {
    mcp_harness::conformance::netns::ways::WAYS_VAR
}

/// A directory every user may write in.
fn open_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    dir
}

fn text(out: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn without_a_namespace_an_isolated_trial_is_not_run_here_and_does_not_fail_the_run() {
    support::bins();
    let dir = open_dir();
    let out = run_unprivileged(dir.path(), &[(netns_var(), "root")], &[]);
    let shown = text(&out);
    assert_eq!(out.status.code(), Some(0), "{shown}");
    assert!(
        shown.contains(&format!("test {TRIAL} ... not run here")),
        "{shown}"
    );
    assert!(
        shown.contains("not run here: 1 isolated trial (ssrf/): no network namespace can be made here (root: unshare(CLONE_NEWNET)"),
        "the summary says why: {shown}"
    );
    assert!(shown.contains("result: ok"), "{shown}");
    assert!(
        !dir.path().join("client-ran").exists(),
        "the client ran outside a namespace"
    );
    let reports = dir.path().join("reports");
    let results = RunResults::load(&reports.join("results.json")).unwrap();
    let trial = &results.trials[0];
    assert_eq!(trial.grade.as_str(), "not-run");
    assert_eq!(trial.verdict.as_str(), "passed");
    let why = trial.not_run.as_deref().unwrap_or_default();
    assert!(why.contains("root: "), "the way's reason: {why}");
    assert!(
        results
            .netns
            .as_deref()
            .unwrap_or_default()
            .starts_with("none: "),
        "{:?}",
        results.netns
    );
    let junit = std::fs::read_to_string(reports.join("junit.xml")).unwrap();
    assert!(
        junit.contains("<skipped message=\"not run here: no network namespace"),
        "{junit}"
    );
    let html = std::fs::read_to_string(reports.join("report.html")).unwrap();
    assert!(html.contains("data-status=\"not-run\""), "report.html");

    // Asked for, the same trial fails the run.
    let dir = open_dir();
    let out = run_unprivileged(dir.path(), &[(netns_var(), "root")], &["--require-ssrf"]);
    let shown = text(&out);
    assert_eq!(out.status.code(), Some(101), "{shown}");
    assert!(
        shown.contains(&format!(
            "test {TRIAL} ... FAILED (not run here; --require-ssrf)"
        )),
        "{shown}"
    );
    let results = RunResults::load(&dir.path().join("reports/results.json")).unwrap();
    assert_eq!(results.trials[0].verdict.as_str(), "failed");
}

#[test]
fn an_unprivileged_user_namespace_runs_an_isolated_trial_where_the_kernel_allows_one() {
    support::bins();
    let dir = open_dir();
    let out = run_unprivileged(dir.path(), &[(netns_var(), "userns")], &[]);
    let shown = text(&out);
    let results = RunResults::load(&dir.path().join("reports/results.json")).unwrap();
    let trial = &results.trials[0];
    // Whether this kernel allows one is the kernel's word, asked as the same user (util-linux's
    // `unshare` must be there to ask: a missing one fails the test, never reads as "no").
    let allowed = unprivileged(&[
        "unshare",
        "--user",
        "--map-root-user",
        "--net",
        "ip",
        "link",
        "set",
        "lo",
        "up",
    ])
    .output()
    .expect("util-linux's unshare, to ask the kernel")
    .status
    .success();
    match trial.grade.as_str() {
        "pass" => {
            assert_eq!(results.netns.as_deref(), Some("userns"));
            assert!(
                shown.contains(
                    "isolated trials: network namespaces made in an unprivileged user namespace"
                ),
                "{shown}"
            );
            assert!(dir.path().join("client-ran").exists());
        }
        "not-run" => {
            assert!(
                !allowed,
                "this kernel allows unprivileged user namespaces, yet: {shown}"
            );
            assert!(
                trial
                    .not_run
                    .as_deref()
                    .unwrap_or_default()
                    .contains("userns: "),
                "{shown}"
            );
        }
        other => panic!("graded {other}: {shown}"),
    }
    assert_eq!(out.status.code(), Some(0), "{shown}");
}

/// The `sudo -n` way, where a user with passwordless sudo is named by
/// `MCP_HARNESS_TEST_SUDO_USER` (this test never edits the sudoers files itself): the
/// trial runs in a namespace the root helper made for that user.
#[test]
fn passwordless_sudo_makes_the_namespace_for_an_ordinary_user() {
    support::bins();
    let Ok(user) = std::env::var("MCP_HARNESS_TEST_SUDO_USER") else {
        eprintln!("skipped: set MCP_HARNESS_TEST_SUDO_USER to a user with passwordless sudo");
        return;
    };
    if !is_root() {
        eprintln!("skipped: only root can run the harness as {user}");
        return;
    }
    let dir = open_dir();
    let reports = dir.path().join("reports");
    std::fs::create_dir_all(&reports).unwrap();
    std::fs::set_permissions(&reports, std::fs::Permissions::from_mode(0o777)).unwrap();
    let out = Command::new("runuser")
        .args(["-u", &user, "--", "env"])
        .arg(format!("{}=sudo", netns_var()))
        .arg(format!("HOME={}", dir.path().display()))
        .args([
            env!("CARGO_BIN_EXE_mcp-harness"),
            "conformance",
            "--no-build",
            "--exact",
            TRIAL,
        ])
        .arg("--report-dir")
        .arg(&reports)
        .output()
        .unwrap();
    let shown = text(&out);
    assert_eq!(out.status.code(), Some(0), "{shown}");
    assert!(
        shown.contains("network namespaces made through passwordless `sudo -n`"),
        "{shown}"
    );
    let results = RunResults::load(&reports.join("results.json")).unwrap();
    assert_eq!(results.trials[0].grade.as_str(), "pass", "{shown}");
    assert_eq!(results.netns.as_deref(), Some("sudo"));
}

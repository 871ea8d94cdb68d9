//! The harness against hostile clients: one that never exits, one that leaves grandchildren
//! holding its stdout open, one that floods stdout, one that prints garbage, one that exits
//! before connecting, one that crashes mid-plan, one that never launches the stdio fake.
//! Each runs over a few representative trials on both transports. Every trial must end
//! within its deadline plus a small margin, be reported as the right failure, and leave no
//! process behind: neither among this test's descendants (the test is a subreaper, so an
//! orphan stays one) nor among the processes carrying the double's marker.
//!
//! The doubles are small Python scripts written at test time. The tests hold one lock, so
//! counting this process's descendants is not disturbed by another test of this file.

mod support;

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use mcp_harness::conformance::verdict::{self, Grade};
use mcp_harness::conformance::{Evaluation, procs, trial::ClientEnd};
use mcp_harness_scenarios::Case;
use mcp_harness_scenarios::model::{TimeScale, Transport};
use mcp_harness_scenarios::transcript::Event;
use support::census;

/// What the harness promises beyond a trial's deadline: killing, reaping, reading back.
const MARGIN: Duration = Duration::from_secs(2);
/// The deadline these tests give each trial, shorter than the cases' own to keep them quick.
const DEADLINE_MS: u64 = 5_000;

static SERIAL: Mutex<()> = Mutex::new(());

/// Shared by every double: the plan, launching the stdio server, reaching the HTTPS one.
const PRELUDE: &str = r#"
import json, os, signal, socket, subprocess, sys, time, urllib.parse
TRANSPORT = os.environ["MCP_HARNESS_TRANSPORT"]
PLAN = json.loads(os.environ["MCP_HARNESS_PLAN"])

def plausible_lines():
    for i, step in enumerate(PLAN):
        print(json.dumps({"step": i, "op": step["op"], "ok": {}}), flush=True)

def launch_or_connect():
    if TRANSPORT == "stdio":
        argv = json.loads(os.environ["MCP_HARNESS_SERVER_COMMAND"])
        return subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    url = urllib.parse.urlparse(os.environ["MCP_HARNESS_SERVER_URL"])
    try:
        conn = socket.create_connection((url.hostname, url.port))
        conn.sendall(b"\x16\x03\x01")  # the start of a TLS hello, never finished
        return conn
    except OSError:  # the unresolvable host of the insecure-URL case
        return None
"#;

/// (name, body after the prelude)
const DOUBLES: &[(&str, &str)] = &[
    (
        "never-exits",
        "keep = launch_or_connect()\ntime.sleep(3600)\n",
    ),
    (
        "grandchild-holds-stdout",
        // One grandchild keeps the environment (and so the trial's marker), one clears it;
        // both leave the process group and hold stdout open.
        "plausible_lines()\nlaunch_or_connect()\n\
         subprocess.Popen(['sleep', '3600'], start_new_session=True)\n\
         subprocess.Popen(['sleep', '3601'], start_new_session=True, env={})\n\
         time.sleep(0.2)\nsys.exit(0)\n",
    ),
    (
        "floods-bytes",
        "chunk = b'\\xff\\x00' * 32768\nwhile True:\n    sys.stdout.buffer.write(chunk)\n",
    ),
    (
        "floods-lines",
        "line = json.dumps({'step': 0, 'op': 'connect', 'ok': {}}) + '\\n'\n\
         while True:\n    sys.stdout.write(line * 1000)\n",
    ),
    (
        "prints-garbage",
        "sys.stdout.buffer.write(b'\\x1b[2J\\x1b]0;owned\\x07\\xff\\xfe\\x00 not an outcome\\n')\n\
         sys.stdout.buffer.write(b'z' * 5000 + b'\\n')\nsys.exit(0)\n",
    ),
    ("exits-before-connecting", "sys.exit(3)\n"),
    (
        "crashes-mid-plan",
        // The reference driver does the work; the double forwards its first line and dies.
        "driver = subprocess.Popen([DRIVER] + sys.argv[1:], stdout=subprocess.PIPE)\n\
         sys.stdout.buffer.write(driver.stdout.readline())\nsys.stdout.flush()\n\
         os.kill(os.getpid(), signal.SIGSEGV)\n",
    ),
    ("never-launches", "plausible_lines()\nsys.exit(0)\n"),
];

/// The representative trials: a plain call over each transport, a fake that ignores EOF
/// (stdio), and SSE replies (https).
const TRIALS: &[(&str, Transport)] = &[
    ("calls/text-blocks", Transport::Stdio),
    ("cleanup/ignores-eof", Transport::Stdio),
    ("calls/text-blocks", Transport::Https),
    ("http/sse-replies", Transport::Https),
];

/// Writes the doubles into `dir`; each command line carries `marker` into its environment.
fn client_command(dir: &Path, name: &str, body: &str, marker: &str) -> String {
    let path = dir.join(format!("{name}.py"));
    let driver = support::bins().driver;
    let source = format!("{PRELUDE}\nDRIVER = {:?}\n{body}", driver.to_string_lossy());
    std::fs::write(&path, source).unwrap();
    format!(
        "exec env HOSTILE_MARK={marker} python3 {}",
        mcp_harness::conformance::shell_quote(&path)
    )
}

fn with_deadline(id: &str, deadline_ms: u64) -> Case {
    let mut case = support::case(id);
    case.scenario.deadline_ms = deadline_ms;
    case
}

fn failed<'a>(eval: &'a Evaluation, name: &str) -> Option<&'a str> {
    eval.checks
        .iter()
        .find(|c| !c.passed && c.name.contains(name))
        .map(|c| c.actual.as_str())
}

/// Checks that `eval` was reported as this double should be; returns a problem, if any.
fn reported_right(
    double: &str,
    transport: Transport,
    eval: &Evaluation,
    plan_len: usize,
) -> Result<(), String> {
    let end = &eval.run.end;
    let ended_early = eval.run.elapsed < Duration::from_millis(DEADLINE_MS);
    let has = |check: &str, actual: &str| {
        failed(eval, check)
            .is_some_and(|a| a.contains(actual))
            .then_some(())
            .ok_or(format!("wanted {check:?} failed with {actual:?}"))
    };
    match double {
        "never-exits" => {
            has("trial deadline", "still running at the deadline")?;
            (*end == ClientEnd::Deadline)
                .then_some(())
                .ok_or("not ended at the deadline".into())
        }
        "grandchild-holds-stdout" => {
            has("no process running outside its process group", "(sleep)")?;
            let actual = failed(eval, "outside its process group").unwrap_or_default();
            (actual.matches("(sleep)").count() == 2)
                .then_some(())
                .ok_or(format!("both grandchildren should be named: {actual}"))?;
            // The lines printed before the client exited are kept, and nobody waited.
            (ended_early && eval.run.stdout_lines.len() == plan_len)
                .then_some(())
                .ok_or(format!(
                    "ended early: {ended_early}, lines {:?}",
                    eval.run.stdout_lines
                ))
        }
        "floods-bytes" | "floods-lines" => {
            has(
                "exited with status 0",
                "stopped by the runner after more than 1 MiB",
            )?;
            has("one outcome line per step", "a flood")?;
            (*end == ClientEnd::OutputCapped && ended_early)
                .then_some(())
                .ok_or(format!("end {end:?}, early {ended_early}"))
        }
        "prints-garbage" => {
            has(
                "one outcome line per step",
                r"garbage on line 1 (not JSON): \u{1b}[2J\u{1b}]0;owned\u{7}",
            )?;
            let report = verdict::render_failure(eval.grade, &eval.checks, &eval.run, true);
            (!report.contains(['\u{1b}', '\0', '\u{7}']))
                .then_some(())
                .ok_or(format!("control characters reached the report: {report:?}"))
        }
        "exits-before-connecting" => {
            has("exited with status 0", "exit status 3")?;
            has("one outcome line per step", "0 lines")?;
            match transport {
                Transport::Stdio => has("launched the stdio server", "never launched"),
                Transport::Https => Ok(()),
            }
        }
        "crashes-mid-plan" => {
            has("exited with status 0", "killed by signal 11")?;
            (eval.run.stdout_lines.len() == 1)
                .then_some(())
                .ok_or(format!("lines {:?}", eval.run.stdout_lines))
        }
        "never-launches" => match transport {
            Transport::Stdio => has("launched the stdio server", "the server was never launched"),
            Transport::Https => {
                let requests = eval.run.records.as_ref().map_or(0, |records| {
                    records
                        .iter()
                        .filter(|r| matches!(r.event, Event::HttpRequest { .. }))
                        .count()
                });
                (requests == 0)
                    .then_some(())
                    .ok_or(format!("{requests} HTTP requests reached the fake"))
            }
        },
        other => Err(format!("no expectation for {other}")),
    }
}

#[test]
fn hostile_clients_end_in_time_are_reported_and_leave_nothing() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    procs::become_subreaper();
    let dir = tempfile::tempdir().unwrap();
    let marker = census::fresh_marker("hostile");
    let entry = format!("HOSTILE_MARK={marker}");
    // Warm up the run's HTTPS environment (certificates), so it is not timed below.
    support::evaluate_on(
        &support::case("calls/text-blocks"),
        Transport::Https,
        "true",
    );
    let (machine_before, descendants_before) = (census::machine_total(), census::descendants());
    assert!(census::marked(&entry).is_empty());

    let jobs: Vec<(&str, String, &str, Transport)> = DOUBLES
        .iter()
        .flat_map(|(name, body)| {
            let cmd = client_command(dir.path(), name, body, &marker);
            TRIALS
                .iter()
                .map(move |(id, transport)| (*name, cmd.clone(), *id, *transport))
        })
        .collect();
    let peak = census::Peak::start(entry.clone());
    // Eight at once: four of the jobs wait out their deadline, the rest are quick.
    let results = support::in_parallel_on(8, jobs, |(name, cmd, id, transport)| {
        let case = with_deadline(id, DEADLINE_MS);
        let started = Instant::now();
        let eval = support::evaluate_on(&case, transport, &cmd);
        let wall = started.elapsed();
        let mut problems = Vec::new();
        if wall > Duration::from_millis(DEADLINE_MS) + MARGIN {
            problems.push(format!("took {wall:?}, deadline {DEADLINE_MS} ms"));
        }
        if eval.grade != Grade::Fail {
            problems.push(format!("graded {}", eval.grade.as_str()));
        }
        if let Err(e) = reported_right(name, transport, &eval, case.scenario.plan.len()) {
            let failed = support::failed_checks(&eval);
            problems.push(format!("{e}; end {:?}; failed {failed:#?}", eval.run.end));
        }
        let line = format!(
            "{name:<24} {id}@{:<6} {:>5} ms (deadline {DEADLINE_MS}) end {:?}",
            transport.as_str(),
            wall.as_millis(),
            eval.run.end
        );
        (line, problems)
    });
    for (line, _) in &results {
        eprintln!("{line}");
    }
    let problems: Vec<String> = results
        .iter()
        .flat_map(|(line, problems)| problems.iter().map(move |p| format!("{line}: {p}")))
        .collect();

    let (descendants_peak, marked_peak) = peak.finish();
    std::thread::sleep(Duration::from_millis(100));
    let (marked_after, descendants_after) = (census::marked(&entry), census::descendants());
    let machine_after = census::machine_total();
    eprintln!(
        "{} trials; processes on the machine: {machine_before} before, {machine_after} after; \
         this test's descendants: {} before, at most {descendants_peak} during, {} after; \
         marked: 0 before, at most {marked_peak} during, {} after",
        results.len(),
        descendants_before.len(),
        descendants_after.len(),
        marked_after.len()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(
        marked_after.is_empty(),
        "left running with the marker: {}",
        census::describe(&marked_after)
    );
    let new: BTreeSet<u32> = descendants_after
        .difference(&descendants_before)
        .copied()
        .collect();
    assert!(new.is_empty(), "left behind: {}", census::describe(&new));
}

/// A double that leaves a daemon no trial can find (new session, environment cleared, every
/// descriptor closed, parent gone): the runner, a subreaper, sweeps it at the end of the run.
const DAEMON: &str = "if os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n        \
    os.closerange(0, 1024)\n        os.execve('/bin/sleep', ['sleep', '3602'], {})\n    os._exit(0)\n\
    os.wait()\nplausible_lines()\nsys.exit(0)\n";

/// Which double plays a trial in the whole-suite run: a stable pick from its name.
fn chaos_pick(case_id: &str, transport: &str) -> usize {
    let sum: usize = format!("{case_id}{transport}")
        .bytes()
        .map(usize::from)
        .sum();
    sum % (DOUBLES.len() + 1)
}

/// The dispatcher: picks the double for the trial the same way as [`chaos_pick`].
const CHAOS: &str = r#"
import os, sys
name = os.environ["MCP_HARNESS_SCENARIO"] + os.environ["MCP_HARNESS_TRANSPORT"].replace("http", "https")
pick = sum(name.encode()) % (len(DOUBLES))
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), DOUBLES[pick] + ".py")
os.execvp("python3", ["python3", path] + sys.argv[1:])
"#;

/// The expected failure of a trial of the whole-suite run: (check, actual) substrings.
fn chaos_expectation(double: &str, transport: &str) -> Option<(&'static str, &'static str)> {
    Some(match double {
        "never-exits" => ("trial deadline", "still running at the deadline"),
        "grandchild-holds-stdout" => ("outside its process group", "(sleep)"),
        "floods-bytes" | "floods-lines" => ("exited with status 0", "more than 1 MiB"),
        "prints-garbage" => ("one outcome line per step", "garbage on line 1 (not JSON)"),
        "exits-before-connecting" => ("exited with status 0", "exit status 3"),
        "crashes-mid-plan" => ("exited with status 0", "killed by signal 11"),
        "never-launches" | "daemon" if transport == "stdio" => {
            ("launched the stdio server", "never launched")
        }
        _ => return None,
    })
}

/// Copies the case directory's JSON files (cases, catalogue, fixtures, schemas) under `to`,
/// giving the cases of `trials` the deadline [`DEADLINE_MS`] where theirs is longer: the
/// suite-wide run's doubles that hang then hold the run for 5 s, not 10 or 20, and the
/// deadline they must be cut off at is still their case's (read back from the copy).
fn scenarios_with_short_deadlines(to: &Path, trials: &[(String, &str)]) {
    fn copy_json(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                copy_json(&path, &to.join(entry.file_name()));
            } else if path.extension().is_some_and(|e| e == "json") {
                std::fs::copy(&path, to.join(entry.file_name())).unwrap();
            }
        }
    }
    let from = support::scenarios_dir();
    copy_json(&from, to);
    let ids: BTreeSet<&str> = trials
        .iter()
        .filter_map(|(name, _)| name.split('@').next())
        .collect();
    for case in support::cases() {
        if !ids.contains(case.id.as_str()) || case.scenario.deadline_ms <= DEADLINE_MS {
            continue;
        }
        let copy = to.join(case.path.strip_prefix(&from).unwrap());
        let mut json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&copy).unwrap()).unwrap();
        // Never below what the loader's deadline lint asks of the case (its plan's budget).
        let budget = mcp_harness_scenarios::load::deadline::budget(&case.scenario).0;
        json["deadline_ms"] = DEADLINE_MS.max(budget).into();
        std::fs::write(&copy, json.to_string()).unwrap();
    }
}

/// How many trials of each transport every double plays in the suite-wide run.
const PER_DOUBLE_AND_TRANSPORT: usize = 2;

/// The trials of the suite-wide run, with the double [`chaos_pick`] gives each: of the
/// trials a double would play on a transport, ones spread evenly from the first to the last
/// (in the suite's order, which groups cases by family), so each double meets different
/// kinds of case (and so different fakes) on both transports.
fn chaos_trials(names: &[&'static str]) -> Vec<(String, &'static str)> {
    let mut by_double: std::collections::BTreeMap<(usize, &str), Vec<String>> = Default::default();
    for (case, transport) in support::trials() {
        by_double
            .entry((chaos_pick(&case.id, transport.as_str()), transport.as_str()))
            .or_default()
            .push(case.trial_name(transport));
    }
    let mut chosen = Vec::new();
    for ((pick, _), trials) in by_double {
        let n = trials.len();
        let at: BTreeSet<usize> = (0..PER_DOUBLE_AND_TRANSPORT.min(n))
            .map(|k| match PER_DOUBLE_AND_TRANSPORT {
                1 => 0,
                per => k * (n - 1) / (per - 1),
            })
            .collect();
        chosen.extend(at.into_iter().map(|i| (trials[i].clone(), names[pick])));
    }
    chosen
}

/// A subset of the suite, run through `cargo xtask conformance` (from a copy of the case
/// directory whose deadlines are at most 5 s) against a client that is hostile in a different
/// way on each trial: every trial fails for its double's reason within its deadline, the
/// daemon is swept at the end (and fails the run), and the processes carrying the run's
/// marker, and this test's descendants, are the same before and after.
///
/// Why a subset suffices: what a hostile client does to the harness (hang, flood, crash,
/// leave processes or a daemon behind, never launch or reach the server) does not depend
/// on the case's checks, only on the transport, the fake it meets and the deadline, and the
/// test above already runs every double on the cases whose fakes resist ending (a stdio
/// fake that ignores EOF) and stream (SSE). Here every double plays
/// [`PER_DOUBLE_AND_TRANSPORT`] trials on each transport, spread over the case families,
/// through the runner's own parallel schedule and end-of-run sweep, which the test above
/// does not reach; running the other trials would repeat the same pairs of behaviour.
#[test]
fn a_suite_run_against_hostile_clients_leaves_no_process() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    procs::become_subreaper();
    let dir = tempfile::tempdir().unwrap();
    let marker = census::fresh_marker("hostile-suite");
    let entry = format!("HOSTILE_MARK={marker}");
    let mut names: Vec<&str> = DOUBLES.iter().map(|(name, _)| *name).collect();
    for (name, body) in DOUBLES.iter().chain([("daemon", DAEMON)].iter()) {
        client_command(dir.path(), name, body, &marker);
    }
    names.push("daemon");
    let chaos = dir.path().join("chaos.py");
    std::fs::write(&chaos, format!("DOUBLES = {names:?}\n{CHAOS}")).unwrap();
    let reports = dir.path().join("reports");
    let chosen = chaos_trials(&names);
    let chosen_names: Vec<&str> = chosen.iter().map(|(t, _)| t.as_str()).collect();
    let scenarios = dir.path().join("scenarios");
    scenarios_with_short_deadlines(&scenarios, &chosen);

    let (machine_before, descendants_before) = (census::machine_total(), census::descendants());
    let marked_before = census::marked(&entry);
    let started = Instant::now();
    let peak = census::Peak::start(entry.clone());
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mcp-harness"))
        .args(["conformance", "--no-build", "--jobs", "8", "--client"])
        .arg(format!(
            "exec python3 {}",
            mcp_harness::conformance::shell_quote(&chaos)
        ))
        .arg("--report-dir")
        .arg(&reports)
        .arg("--scenarios")
        .arg(&scenarios)
        .arg("--exact")
        .args(&chosen_names)
        .env("HOSTILE_MARK", &marker)
        .output()
        .unwrap();
    let wall = started.elapsed();
    let (descendants_peak, marked_peak) = peak.finish();
    std::thread::sleep(Duration::from_millis(100));
    let (marked_after, descendants_after) = (census::marked(&entry), census::descendants());
    let machine_after = census::machine_total();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(101), "{stdout}\n{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");

    let results = mcp_harness::report::RunResults::load(&reports.join("results.json")).unwrap();
    let cases = mcp_harness_scenarios::load_dir(&scenarios).unwrap();
    let deadlines: std::collections::HashMap<String, u64> = cases
        .into_iter()
        .map(|c| (c.id.clone(), c.scenario.deadline_ms))
        .collect();
    let mut problems = Vec::new();
    let mut used = BTreeSet::new();
    for t in &results.trials {
        // `<case-id>@<transport>`, or `<case-id>@<transport>@<revision>`.
        let mut parts = t.name.split('@');
        let (id, transport) = (parts.next().unwrap(), parts.next().unwrap());
        let double = names[chaos_pick(id, transport)];
        used.insert(double);
        // The run scales each trial's deadline by the trial's time scale (the machine's when
        // it started, unless `--time-scale`), rounded as the run rounds it.
        let deadline = TimeScale::new(t.time_scale).unwrap().ms(deadlines[id]);
        eprintln!(
            "{double:<24} {:<60} {:>5} ms (deadline {deadline})",
            t.name, t.elapsed_ms
        );
        if t.grade != Grade::Fail {
            problems.push(format!("{} ({double}) graded {}", t.name, t.grade.as_str()));
        }
        if Duration::from_millis(t.elapsed_ms) > Duration::from_millis(deadline) + MARGIN {
            problems.push(format!("{} ({double}) ran {} ms", t.name, t.elapsed_ms));
        }
        if let Some((check, actual)) = chaos_expectation(double, transport) {
            let hit = t
                .checks
                .iter()
                .any(|c| !c.passed && c.name.contains(check) && c.actual.contains(actual));
            if !hit {
                problems.push(format!(
                    "{} ({double}): wanted {check:?} with {actual:?}",
                    t.name
                ));
            }
        }
    }
    eprintln!(
        "{} trials in {:.1}s, doubles used: {used:?}; processes on the machine: {machine_before} \
         before, {machine_after} after; this test's descendants: {} before, at most \
         {descendants_peak} during, {} after; marked: {} before, at most {marked_peak} during, {} after",
        results.trials.len(),
        wall.as_secs_f64(),
        descendants_before.len(),
        descendants_after.len(),
        marked_before.len(),
        marked_after.len()
    );
    let ran: BTreeSet<&str> = results.trials.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        ran,
        chosen_names.iter().copied().collect(),
        "the chosen trials ran"
    );
    // Every double, on both transports, plays at least two trials.
    for (pick, double) in names.iter().enumerate() {
        for transport in ["stdio", "https"] {
            let played = chosen
                .iter()
                .filter(|(t, d)| d == double && t.split('@').nth(1) == Some(transport))
                .count();
            assert!(
                played >= 2,
                "{double} (pick {pick}) plays {played} trials over {transport}"
            );
        }
    }
    assert_eq!(used.len(), names.len(), "every double plays some trial");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(
        stderr.contains("outlived their trials and were killed"),
        "the daemons are swept at the end: {stderr}"
    );
    assert!(marked_before.is_empty() && marked_after.is_empty());
    assert_eq!(
        descendants_after,
        descendants_before,
        "left behind: {}",
        census::describe(&descendants_after)
    );
}

/// A run stopped from outside (a cancelled CI job's SIGTERM, Ctrl-C) takes its trials with it:
/// clients run in process groups of their own, which the terminal's signal never reaches, so
/// without the runner's own clean-up they and whatever they started would keep running.
#[test]
fn an_interrupted_run_leaves_no_process() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let marker = census::fresh_marker("interrupted");
    let entry = format!("HOSTILE_MARK={marker}");
    // Each client starts a process in a session of its own (out of the trial's group), then waits.
    let client =
        format!("exec env HOSTILE_MARK={marker} sh -c 'setsid sleep 120 & exec sleep 120'");
    for (signal, number) in [("TERM", 15), ("INT", 2)] {
        let mut run = std::process::Command::new(env!("CARGO_BIN_EXE_mcp-harness"))
            .args([
                "conformance",
                "--no-build",
                "--jobs",
                "4",
                "--time-scale",
                "1",
            ])
            .args(["--client", &client, "--exact"])
            .args(["calls/text-blocks@stdio", "calls/text-blocks@https"])
            .args([
                "handshake/happy-path@stdio",
                "tools/pagination-three-pages@stdio",
            ])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let until = Instant::now() + Duration::from_secs(20);
        while census::marked(&entry).len() < 4 && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(50));
        }
        assert!(
            census::marked(&entry).len() >= 4,
            "the clients never started"
        );
        let sent = std::process::Command::new("kill")
            .args([format!("-{signal}"), run.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success(), "kill -{signal} failed");
        let status = run.wait().unwrap();
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut run.stderr.take().unwrap(), &mut stderr).unwrap();
        assert_eq!(status.code(), Some(128 + number), "{stderr}");
        assert!(stderr.contains("interrupted by"), "{stderr}");
        std::thread::sleep(Duration::from_millis(200));
        let left = census::marked(&entry);
        assert!(
            left.is_empty(),
            "after SIG{signal}, processes of the interrupted run still run: {left:?}"
        );
    }
}

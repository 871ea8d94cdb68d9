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

use mcp_harness_scenarios::Case;
use mcp_harness_scenarios::model::Transport;
use mcp_harness_scenarios::transcript::Event;
use support::census;
use xtask::conformance::verdict::{self, Grade};
use xtask::conformance::{Evaluation, procs, trial::ClientEnd};

/// What the harness promises beyond a trial's deadline: killing, reaping, reading back.
const MARGIN: Duration = Duration::from_secs(2);
/// The deadline these tests give each trial, shorter than the cases' own to keep them quick.
const DEADLINE_MS: u64 = 3_000;

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
    conn = socket.create_connection((url.hostname, url.port))
    conn.sendall(b"\x16\x03\x01")  # the start of a TLS hello, never finished
    return conn
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
        xtask::conformance::shell_quote(&path)
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
            has("exited with status 0", "stopped by the runner after more than 1 MiB")?;
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
    let results = support::in_parallel(jobs, |(name, cmd, id, transport)| {
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
            let failed: Vec<String> = eval
                .checks
                .iter()
                .filter(|c| !c.passed)
                .map(|c| format!("{}: {}", c.name, c.actual))
                .collect();
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

    std::thread::sleep(Duration::from_millis(100));
    let (marked_after, descendants_after) = (census::marked(&entry), census::descendants());
    let machine_after = census::machine_total();
    eprintln!(
        "{} trials; processes on the machine: {machine_before} before, {machine_after} after; \
         this test's descendants: {} before, {} after; marked: 0 before, {} after",
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

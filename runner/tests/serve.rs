//! `mcp-harness serve` (host mode) as a user runs it: the installed binary, from a directory
//! outside the checkout, serving built-in cases to hosts that connect on their own. The hosts
//! are the reference client's driver (handed the printed command line or URL, and a plan), a
//! real SDK client with no adapter (Python `mcp`, in a venv this test makes under the target
//! directory), and broken hosts: the driver with a defect, and a raw script that reuses a
//! request id and skips `notifications/initialized`.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-harness");
/// The Python SDK the real host uses, pinned as `adapters/python/requirements.txt` pins it.
const SDK: &str = "mcp==2.3.0";

/// A command of the binary, in `cwd`, without cargo's variables (as an installed program
/// sees none).
fn harness(cwd: &Path) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.current_dir(cwd);
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("CARGO") {
            cmd.env_remove(key);
        }
    }
    cmd
}

fn tempdir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("mcp-harness-serve-test-")
        .tempdir()
        .expect("a temporary directory")
}

/// A running `serve`, its stdout collected as it comes.
struct Session {
    child: Child,
    lines: Arc<Mutex<Vec<String>>>,
    _cwd: tempfile::TempDir,
}

impl Session {
    fn start(args: &[&str]) -> Session {
        let cwd = tempdir();
        let mut child = harness(cwd.path())
            .arg("serve")
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("serve starts");
        let lines = Arc::new(Mutex::new(Vec::new()));
        let stdout = child.stdout.take().expect("piped");
        let sink = Arc::clone(&lines);
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                sink.lock().unwrap().push(line);
            }
        });
        Session {
            child,
            lines,
            _cwd: cwd,
        }
    }

    /// The first printed line that `pick` accepts, waited for up to a minute.
    fn wait_for(&self, pick: impl Fn(&str) -> bool) -> String {
        let until = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(line) = self.lines.lock().unwrap().iter().find(|l| pick(l)) {
                return line.clone();
            }
            assert!(
                Instant::now() < until,
                "serve printed no such line: {:?}",
                self.lines.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The host configuration snippet's servers.
    fn servers(&self) -> serde_json::Map<String, Value> {
        let line = self.wait_for(|l| l.starts_with("{\"mcpServers\""));
        let value: Value = serde_json::from_str(&line).expect("the snippet is JSON");
        value["mcpServers"].as_object().expect("servers").clone()
    }

    /// The argv of the stdio server named `name` in the snippet.
    fn argv(&self, name: &str) -> Vec<String> {
        let entry = &self.servers()[name];
        let mut argv = vec![entry["command"].as_str().expect("command").to_owned()];
        argv.extend(
            entry["args"]
                .as_array()
                .expect("args")
                .iter()
                .map(|a| a.as_str().expect("an argument").to_owned()),
        );
        argv
    }

    /// The URL of the HTTPS server named `name`, and the CA file printed.
    fn url(&self, name: &str) -> (String, String) {
        let url = self.servers()[name]["url"]
            .as_str()
            .expect("url")
            .to_owned();
        let ca = self.wait_for(|l| l.starts_with("CA file"));
        let ca = ca.rsplit(": ").next().expect("a path").to_owned();
        assert!(Path::new(&ca).is_file(), "the CA file {ca} exists");
        (url, ca)
    }

    /// Waits for serve to end (two minutes at most) and returns its exit status and stdout.
    fn finish(mut self) -> (i32, String) {
        let until = Instant::now() + Duration::from_secs(120);
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                break status;
            }
            if Instant::now() > until {
                let _ = self.child.kill();
                panic!("serve did not end: {:?}", self.lines.lock().unwrap());
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        std::thread::sleep(Duration::from_millis(100));
        let text = self.lines.lock().unwrap().join("\n");
        (status.code().unwrap_or(-1), text)
    }
}

/// The reference client's driver as the host: handed the printed command line (stdio) or
/// URL and CA (https), and a plan, as a person would point a host at the server.
fn driver_host(reach: Reach<'_>, plan: Value, defects: &[&str]) -> Output {
    let cwd = tempdir();
    let mut cmd = harness(cwd.path());
    cmd.arg("driver")
        .env("MCP_HARNESS_CONTRACT", "1")
        .env("MCP_HARNESS_SCENARIO", "serve-test")
        .env("MCP_HARNESS_PLAN", plan.to_string())
        .env("MCP_HARNESS_TIMEOUT_MS", "5000")
        .env("MCP_HARNESS_PROTOCOL_VERSION", "2025-11-25");
    for defect in defects {
        cmd.args(["--defect", defect]);
    }
    match reach {
        Reach::Stdio(argv) => cmd
            .env("MCP_HARNESS_TRANSPORT", "stdio")
            .env("MCP_HARNESS_SERVER_COMMAND", json!(argv).to_string()),
        Reach::Https(url, ca) => cmd
            .env("MCP_HARNESS_TRANSPORT", "http")
            .env("MCP_HARNESS_SERVER_URL", url)
            .env("MCP_HARNESS_CA_FILE", ca)
            .arg(url),
    };
    cmd.output().expect("the driver runs")
}

enum Reach<'a> {
    Stdio(&'a [String]),
    Https(&'a str, &'a str),
}

fn plan(ops: &[Value]) -> Value {
    Value::Array(ops.to_vec())
}

fn op(name: &str) -> Value {
    json!({ "op": name })
}

/// The summary line of a check with this verdict word (`pass`, `FAIL`, `not exercised`),
/// level and requirement id whose name starts with `name`.
fn verdict_line<'a>(out: &'a str, verdict: &str, level: &str, id: &str, name: &str) -> &'a str {
    let head = format!("  {verdict}  [{level}] {id} {name}");
    out.lines()
        .find(|l| l.starts_with(&head))
        .unwrap_or_else(|| panic!("no line {head:?} in:\n{out}"))
}

#[test]
fn the_reference_client_as_host_is_graded_on_pagination_and_the_report_is_written() {
    let report = tempdir();
    let report_dir = report.path().to_string_lossy().into_owned();
    let session = Session::start(&[
        "tools/pagination-three-pages",
        "--transport",
        "stdio",
        "--timeout",
        "90",
        "--report-dir",
        &report_dir,
    ]);
    let argv = session.argv("tools-pagination-three-pages");
    assert!(Path::new(&argv[0]).is_absolute(), "{argv:?}");
    let host = driver_host(
        Reach::Stdio(&argv),
        plan(&[op("connect"), op("list_tools"), op("close")]),
        &[],
    );
    assert!(host.status.success(), "{host:?}");
    let (code, out) = session.finish();
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("serving ended: the host was done"), "{out}");
    verdict_line(&out, "pass", "should", "PAGE-03", "three pages are asked");
    verdict_line(
        &out,
        "pass",
        "profile",
        "PROF-PAGE-1",
        "the first page is asked",
    );
    verdict_line(
        &out,
        "pass",
        "must",
        "JSON-02",
        "request ids are never reused",
    );
    verdict_line(
        &out,
        "pass",
        "profile",
        "PROF-STDIO-1",
        "the server process",
    );
    verdict_line(&out, "not exercised", "must", "CONTRACT-2", "");
    // Live: the case's checks are printed as they become judged, before the summary.
    let live = out.split("serving ended").next().unwrap_or_default();
    assert!(live.contains("PAGE-03 three pages are asked"), "{out}");

    let results: Value = serde_json::from_str(
        &std::fs::read_to_string(report.path().join("results.json")).expect("results.json"),
    )
    .expect("JSON");
    let trial = &results["trials"][0];
    assert_eq!(trial["name"], "tools/pagination-three-pages@stdio");
    assert_eq!(trial["grade"], "pass");
    let not_exercised = trial["not_judged"].as_array().expect("not_judged");
    assert!(
        not_exercised
            .iter()
            .all(|c| c["verdict"] == "not exercised"),
        "{not_exercised:?}"
    );
    assert!(
        not_exercised
            .iter()
            .any(|c| c["requirement_id"] == "CONTRACT-2"),
        "{not_exercised:?}"
    );
    let judged = trial["checks"].as_array().expect("checks");
    assert!(
        judged.iter().all(|c| c["requirement_id"] != "CONTRACT-2"),
        "not exercised is never among the judged checks: {judged:?}"
    );
    let page = std::fs::read_to_string(report.path().join("report.html")).expect("report.html");
    assert!(page.contains("tools/pagination-three-pages@stdio"));
}

#[test]
fn steps_the_host_never_performed_are_not_exercised() {
    let session = Session::start(&["tools/pagination-three-pages@stdio", "--timeout", "90"]);
    let argv = session.argv("tools-pagination-three-pages");
    // Connects and leaves: the listing the case's checks are about never happens.
    let host = driver_host(
        Reach::Stdio(&argv),
        plan(&[op("connect"), op("close")]),
        &[],
    );
    assert!(host.status.success(), "{host:?}");
    let (code, out) = session.finish();
    assert_eq!(code, 0, "nothing judged failed: {out}");
    let line = verdict_line(&out, "not exercised", "should", "PAGE-03", "three pages");
    assert!(line.contains("step 2 list_tools (a tools/list)"), "{line}");
    assert!(
        !line.contains("step 1 connect"),
        "connect was performed: {line}"
    );
    verdict_line(
        &out,
        "pass",
        "must",
        "JSON-01",
        "request ids are strings or integers",
    );
    // One request only: nothing could be reused, so JSON-02 is not exercised either.
    verdict_line(
        &out,
        "not exercised",
        "must",
        "JSON-02",
        "request ids are never reused",
    );
}

#[test]
fn a_broken_host_fails_the_named_checks() {
    // (driver defect, level, id, check): reusing request ids fails the always-on JSON-02
    // whatever the case; following only the first page fails the case's wire check once its
    // steps are done.
    for (defect, level, id, check) in [
        (
            "reuse-ids",
            "must",
            "JSON-02",
            "request ids are never reused",
        ),
        (
            "first-page-only",
            "profile",
            "PROF-PAGE-1",
            "the first page is asked",
        ),
    ] {
        let session = Session::start(&["tools/pagination-three-pages@stdio", "--timeout", "90"]);
        let argv = session.argv("tools-pagination-three-pages");
        driver_host(
            Reach::Stdio(&argv),
            plan(&[op("connect"), op("list_tools"), op("close")]),
            &[defect],
        );
        let (code, out) = session.finish();
        assert_eq!(code, 1, "{defect}: {out}");
        verdict_line(&out, "FAIL", level, id, check);
    }
}

#[test]
fn cleanup_crash_and_two_cases_at_once_over_stdio() {
    let session = Session::start(&[
        "cleanup/exits-on-eof",
        "cleanup/after-server-crash",
        "--timeout",
        "90",
    ]);
    let eof = session.argv("cleanup-exits-on-eof");
    let crash = session.argv("cleanup-after-server-crash");
    driver_host(Reach::Stdio(&eof), plan(&[op("connect"), op("close")]), &[]);
    let call = json!({"op": "call_tool", "name": "crash"});
    driver_host(
        Reach::Stdio(&crash),
        plan(&[op("connect"), call.clone(), call, op("close")]),
        &[],
    );
    let (code, out) = session.finish();
    assert_eq!(code, 0, "{out}");
    verdict_line(
        &out,
        "pass",
        "should",
        "STDIO-05",
        "shutdown went stdin_eof",
    );
    verdict_line(&out, "pass", "profile", "PROF-RES-5", "the call was sent");

    // A host that kills its server first fails the lifecycle check.
    let session = Session::start(&["cleanup/exits-on-eof", "--timeout", "90"]);
    let eof = session.argv("cleanup-exits-on-eof");
    driver_host(
        Reach::Stdio(&eof),
        plan(&[op("connect"), op("close")]),
        &["kill-first"],
    );
    let (code, out) = session.finish();
    assert_eq!(code, 1, "{out}");
    verdict_line(
        &out,
        "FAIL",
        "should",
        "STDIO-05",
        "shutdown went stdin_eof",
    );
}

#[test]
fn handshake_repeated_cursor_and_duplicate_names_served_at_once() {
    let session = Session::start(&[
        "handshake/happy-path",
        "tools/repeated-cursor-at-once",
        "tools/duplicate-name-same-page",
        "--transport",
        "stdio",
        "--timeout",
        "90",
    ]);
    for name in [
        "handshake-happy-path",
        "tools-repeated-cursor-at-once",
        "tools-duplicate-name-same-page",
    ] {
        let argv = session.argv(name);
        driver_host(
            Reach::Stdio(&argv),
            plan(&[op("connect"), op("list_tools"), op("close")]),
            &[],
        );
    }
    let (code, out) = session.finish();
    assert_eq!(code, 0, "{out}");
    verdict_line(
        &out,
        "pass",
        "must",
        "LIFE-02",
        "initialize carries a protocol version",
    );
    verdict_line(
        &out,
        "pass",
        "must",
        "LIFE-04",
        "notifications/initialized follows",
    );
    verdict_line(
        &out,
        "pass",
        "profile",
        "PROF-PAGE-3",
        "the client followed the first cursor",
    );
    verdict_line(
        &out,
        "pass",
        "profile",
        "PROF-PAGE-4",
        "tools/list was asked",
    );
}

#[test]
fn a_users_own_case_file_is_served() {
    let mine = tempdir();
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../scenarios/tools/pagination-three-pages.json"),
    )
    .expect("the built-in case");
    let mut case: Value = serde_json::from_str(&text).expect("JSON");
    case.as_object_mut().map(|o| o.remove("$schema"));
    let file = mine.path().join("paging.json");
    std::fs::write(&file, case.to_string()).expect("written");
    let session = Session::start(&["--cases", &file.to_string_lossy(), "--timeout", "90"]);
    let argv = session.argv("paging");
    driver_host(
        Reach::Stdio(&argv),
        plan(&[op("connect"), op("list_tools"), op("close")]),
        &[],
    );
    let (code, out) = session.finish();
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("\npaging@stdio\n"), "{out}");
    verdict_line(&out, "pass", "should", "PAGE-03", "three pages are asked");
}

#[test]
fn session_expiry_and_a_bad_certificate_over_https() {
    let session = Session::start(&[
        "http/session-expired",
        "http/untrusted-certificate-refused",
        "--timeout",
        "90",
        "--idle",
        "2",
    ]);
    let (url, ca) = session.url("http-session-expired");
    let echo = json!({"op": "call_tool", "name": "echo"});
    let host = driver_host(
        Reach::Https(&url, &ca),
        plan(&[
            op("connect"),
            op("list_tools"),
            echo.clone(),
            echo,
            op("close"),
        ]),
        &[],
    );
    assert!(host.status.success(), "{host:?}");
    let (bad, _) = session.url("http-untrusted-certificate-refused");
    driver_host(
        Reach::Https(&bad, &ca),
        plan(&[op("connect"), op("list_tools")]),
        &[],
    );
    let (code, out) = session.finish();
    assert_eq!(code, 0, "{out}");
    verdict_line(
        &out,
        "pass",
        "must",
        "HTTP-07",
        "a second initialize follows the 404",
    );
    verdict_line(
        &out,
        "pass",
        "must",
        "HTTP-06",
        "every HTTP request other than",
    );
    verdict_line(
        &out,
        "pass",
        "profile",
        "PROF-TLS-2",
        "no request got through",
    );
    verdict_line(
        &out,
        "pass",
        "profile",
        "PROF-TLS-2",
        "the client opened a connection",
    );

    // A host that does not start a new session after the 404.
    let session = Session::start(&["http/session-expired", "--timeout", "90", "--idle", "2"]);
    let (url, ca) = session.url("http-session-expired");
    let echo = json!({"op": "call_tool", "name": "echo"});
    driver_host(
        Reach::Https(&url, &ca),
        plan(&[
            op("connect"),
            op("list_tools"),
            echo.clone(),
            echo,
            op("close"),
        ]),
        &["no-reinitialize"],
    );
    let (code, out) = session.finish();
    assert_eq!(code, 1, "{out}");
    verdict_line(
        &out,
        "FAIL",
        "must",
        "HTTP-07",
        "a second initialize follows the 404",
    );
}

#[test]
fn ctrl_c_or_the_timeout_ends_a_session_with_nothing_passed() {
    let session = Session::start(&["tools/pagination-three-pages", "--timeout", "90"]);
    session.wait_for(|l| l.starts_with("waiting for the host"));
    let killed = Command::new("kill")
        .args(["-INT", &session.child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(killed.success());
    let (code, out) = session.finish();
    // A host that did nothing proves nothing: exit 1, not 0.
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("nothing was judged"), "{out}");
    assert!(out.contains("serving ended: interrupted"), "{out}");
    assert!(
        out.contains(" 0 failed, 15 not exercised, 0 passed"),
        "{out}"
    );

    let session = Session::start(&["http/session-expired", "--timeout", "1"]);
    let (code, out) = session.finish();
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("serving ended: the timeout passed"), "{out}");
    verdict_line(
        &out,
        "not exercised",
        "must",
        "JSON-02",
        "request ids are never reused",
    );
}

#[test]
fn the_servable_cases_are_listed_and_others_refused() {
    let cwd = tempdir();
    let list = harness(cwd.path())
        .args(["serve", "--list"])
        .output()
        .expect("runs");
    assert!(list.status.success());
    let text = String::from_utf8_lossy(&list.stdout);
    assert!(text.lines().count() >= 15, "{text}");
    assert!(
        text.lines()
            .any(|l| l == "tools/pagination-three-pages (stdio, https)"),
        "{text}"
    );
    assert!(!text.contains("timeouts/call-timeout"), "{text}");
    let refused = harness(cwd.path())
        .args(["serve", "http/bearer-token-sent"])
        .output()
        .expect("runs");
    assert_eq!(refused.status.code(), Some(2));
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        err.contains("http/bearer-token-sent cannot be served to a host")
            && err.contains("bearer token"),
        "{err}"
    );
    let bad = cwd.path().join("bad.json");
    std::fs::write(&bad, r#"{"description": 3}"#).expect("written");
    let refused = harness(cwd.path())
        .args(["serve", "--cases"])
        .arg(&bad)
        .output()
        .expect("runs");
    assert_eq!(refused.status.code(), Some(2));
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        err.contains("bad.json")
            && err.contains("description")
            && err.contains("expected a string"),
        "{err}"
    );
}

// ---------------------------------------------------------------------------------------------
// A real SDK client as the host, with no adapter.

/// A host written against the Python SDK alone: it connects to the server it is given (a
/// command line, or a URL trusted through SSL_CERT_FILE as the printed hint says), lists
/// every tool following cursors, calls the first, and exits.
const SDK_HOST: &str = r#"
import asyncio, json, sys
from mcp import Client, StdioServerParameters

async def main():
    mode, target = sys.argv[1], sys.argv[2]
    if mode == "stdio":
        argv = json.loads(target)
        server = StdioServerParameters(command=argv[0], args=argv[1:])
    else:
        server = target
    async with Client(server, read_timeout_seconds=30) as client:
        names, cursor = [], None
        while True:
            page = await client.list_tools(cursor=cursor)
            names += [t.name for t in page.tools]
            cursor = page.next_cursor
            if not cursor:
                break
        print(json.dumps({"tools": names}), flush=True)
        try:
            await client.call_tool(names[0], {})
        except Exception as e:
            print(json.dumps({"call_error": str(e)}), flush=True)

asyncio.run(main())
"#;

/// A broken host with no SDK: over stdio it sends `initialize`, never
/// `notifications/initialized`, then `tools/list` under the same id as `initialize`.
const BROKEN_HOST: &str = r#"
import json, subprocess, sys
argv = json.loads(sys.argv[1])
server = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def send(message):
    server.stdin.write((json.dumps(message) + "\n").encode())
    server.stdin.flush()
    return json.loads(server.stdout.readline())
send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {},
    "clientInfo": {"name": "broken-host", "version": "0"}}})
send({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}})
server.stdin.close()
server.wait(timeout=10)
"#;

/// A venv with the SDK, made once under the target directory and reused.
fn sdk_python() -> PathBuf {
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join("serve-sdk-venv");
    let python = venv.join("bin/python");
    let ready = venv.join(".ready");
    if ready.is_file() {
        return python;
    }
    let made = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .status()
        .expect("python3 runs");
    assert!(made.success(), "python3 -m venv {} failed", venv.display());
    let pip = Command::new(&python)
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            SDK,
        ])
        .output()
        .expect("pip runs");
    assert!(
        pip.status.success(),
        "cannot install {SDK} from the Python package registry (is PyPI reachable?):\n{}",
        String::from_utf8_lossy(&pip.stderr)
    );
    std::fs::write(&ready, SDK).expect("mark the venv ready");
    python
}

fn python_host(python: &Path, script: &str, args: &[&str], ca: Option<&str>) -> Output {
    let dir = tempdir();
    let file = dir.path().join("host.py");
    std::fs::write(&file, script).expect("the script is written");
    let mut cmd = Command::new(python);
    cmd.current_dir(dir.path()).arg(&file).args(args);
    if let Some(ca) = ca {
        cmd.env("SSL_CERT_FILE", ca).env("NODE_EXTRA_CA_CERTS", ca);
    }
    cmd.output().expect("the host runs")
}

#[test]
fn a_real_sdk_client_as_host_is_graded_on_both_transports() {
    let python = sdk_python();
    let session = Session::start(&[
        "tools/pagination-three-pages@stdio",
        "tools/pagination-three-pages@https",
        "--timeout",
        "90",
        "--idle",
        "3",
    ]);
    let argv = session.argv("tools-pagination-three-pages-stdio");
    let (url, ca) = session.url("tools-pagination-three-pages-https");
    let stdio = python_host(
        &python,
        SDK_HOST,
        &["stdio", &json!(argv).to_string()],
        None,
    );
    // Longer than --idle: a served case no host has touched yet keeps the session open.
    std::thread::sleep(Duration::from_secs(4));
    let https = python_host(&python, SDK_HOST, &["https", &url], Some(&ca));
    for host in [&stdio, &https] {
        let said = String::from_utf8_lossy(&host.stdout);
        assert!(
            host.status.success()
                && said.contains(r#"["alpha", "beta", "gamma", "delta", "epsilon"]"#),
            "the SDK host failed: {}\n{}\nserve so far: {:?}",
            said,
            String::from_utf8_lossy(&host.stderr),
            session.lines.lock().unwrap()
        );
    }
    let (code, out) = session.finish();
    assert_eq!(code, 0, "{out}");
    for transport in ["stdio", "https"] {
        let part = out
            .split(&format!("\ntools/pagination-three-pages@{transport}\n"))
            .nth(1)
            .expect("a summary per transport");
        let part = part.split("\ntools/").next().unwrap_or(part);
        verdict_line(part, "pass", "should", "PAGE-03", "three pages are asked");
        verdict_line(
            part,
            "pass",
            "profile",
            "PROF-PAGE-1",
            "the first page is asked",
        );
        verdict_line(part, "pass", "must", "SCHEMA-01", "every request");
    }
    verdict_line(
        &out,
        "pass",
        "must",
        "HTTP-06",
        "every HTTP request other than",
    );
}

#[test]
fn a_broken_host_without_an_sdk_fails_the_handshake_and_id_rules() {
    let python = sdk_python();
    let session = Session::start(&["handshake/happy-path@stdio", "--timeout", "90"]);
    let argv = session.argv("handshake-happy-path");
    let host = python_host(&python, BROKEN_HOST, &[&json!(argv).to_string()], None);
    assert!(host.status.success(), "{host:?}");
    let (code, out) = session.finish();
    assert_eq!(code, 1, "{out}");
    verdict_line(
        &out,
        "FAIL",
        "must",
        "JSON-02",
        "request ids are never reused",
    );
    verdict_line(
        &out,
        "FAIL",
        "must",
        "LIFE-04",
        "notifications/initialized follows",
    );
}

/// Cases servable on both transports that a host is graded on, one `serve` per transport:
/// the issue's bar is fifteen (the handshake, listings with pages, a repeated cursor,
/// duplicate names, calls, content, the JSON-RPC base rules, a hostile server).
const GRADED_ON_BOTH: [&str; 17] = [
    "handshake/happy-path",
    "handshake/unsupported-version",
    "tools/pagination-three-pages",
    "tools/repeated-cursor-at-once",
    "tools/duplicate-name-same-page",
    "tools/invalid-cursor",
    "tools/input-schema-preserved",
    "calls/is-error-result",
    "calls/text-blocks",
    "calls/unknown-tool",
    "calls/structured-content",
    "capability/undeclared-get-prompt",
    "jsonrpc/notifications-not-answered",
    "calls/content-types",
    "jsonrpc/server-ping-during-handshake",
    "utilities/server-ping",
    "robust/malformed-json-instead-of-response",
];

/// A built-in case as the runner loads it (its plan for the driver playing a host that does
/// the same, its checks to find in the grades).
fn built_in(id: &str) -> mcp_harness_scenarios::Case {
    static CASES: std::sync::OnceLock<Vec<mcp_harness_scenarios::Case>> =
        std::sync::OnceLock::new();
    let cases = CASES.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
        mcp_harness_scenarios::load::load_dir(&root).expect("the built-in cases load")
    });
    cases
        .iter()
        .find(|c| c.id == id)
        .unwrap_or_else(|| panic!("no built-in case {id}"))
        .clone()
}

/// The names of a case's checks a host is judged on once it has performed every step: its
/// wire checks (not those on the client's printed output) and lifecycle checks, except those
/// citing the driver contract or written for another revision.
fn host_checks(case: &mcp_harness_scenarios::Case, revision: Option<&str>) -> Vec<String> {
    use mcp_harness_scenarios::model::{Rule, WireStream};
    case.scenario
        .checks
        .iter()
        .filter(|c| !c.requirement.id.starts_with("CONTRACT-"))
        // A revision's text judges that revision's trials only.
        .filter(|c| revision.is_none_or(|r| c.requirement.applies_to(r)))
        .filter(|c| match &c.rule {
            Rule::Wire(w) => {
                w.on != WireStream::ClientOutput
                    && (w.revisions.is_empty()
                        || revision.is_some_and(|r| w.revisions.iter().any(|w| w == r)))
            }
            Rule::Lifecycle(_) => true,
            Rule::Step { .. } => false,
        })
        .map(|c| c.name.clone())
        .collect()
}

#[test]
fn a_host_is_graded_on_seventeen_servable_cases_on_both_transports() {
    for transport in ["stdio", "https"] {
        let report = tempdir();
        let report_dir = report.path().to_string_lossy().into_owned();
        let mut args: Vec<&str> = GRADED_ON_BOTH.to_vec();
        args.extend([
            "--transport",
            transport,
            "--timeout",
            "180",
            "--idle",
            "3",
            "--report-dir",
            &report_dir,
        ]);
        let session = Session::start(&args);
        for id in GRADED_ON_BOTH {
            let name = id.replace('/', "-");
            let plan = built_in(id).scenario.plan_json();
            match transport {
                "stdio" => driver_host(Reach::Stdio(&session.argv(&name)), plan, &[]),
                _ => {
                    let (url, ca) = session.url(&name);
                    driver_host(Reach::Https(&url, &ca), plan, &[])
                }
            };
        }
        let (code, out) = session.finish();
        assert_eq!(code, 0, "{transport}: {out}");
        let results: Value = serde_json::from_str(
            &std::fs::read_to_string(report.path().join("results.json")).expect("results.json"),
        )
        .expect("JSON");
        let trials = results["trials"].as_array().expect("trials");
        assert_eq!(trials.len(), GRADED_ON_BOTH.len(), "{transport}: {out}");
        for trial in trials {
            let name = &trial["name"];
            assert_eq!(trial["grade"], "pass", "{name}: {out}");
            // Every step was performed, so no check waits on a step the host skipped …
            let skipped: Vec<&Value> = trial["not_judged"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|c| {
                    c["why"]
                        .as_str()
                        .is_some_and(|w| w.contains("did not perform"))
                })
                .collect();
            assert!(skipped.is_empty(), "{name}: {skipped:?}");
            // … and the case's own wire and lifecycle checks were all judged.
            let mut parts = name.as_str().expect("a name").split('@');
            let id = parts.next().expect("an id");
            let revision = parts.nth(1);
            let wanted = host_checks(&built_in(id), revision);
            assert!(!wanted.is_empty(), "{id} has checks a host is judged on");
            let judged: Vec<&str> = trial["checks"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|c| c["name"].as_str())
                .collect();
            for check in &wanted {
                assert!(
                    judged.contains(&check.as_str()),
                    "{name}: {check:?} not judged: {out}"
                );
            }
        }
    }
}

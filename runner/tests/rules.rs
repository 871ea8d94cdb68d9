//! The always-on rules of `checks/rules.rs`, each seen failing against a small client double
//! that breaks it and holding for the reference client (issue 11):
//! - a JSON-RPC batch is fine before 2025-06-18 (the fakes answer it) and fails from then on;
//!   `initialize` never goes in a batch;
//! - over HTTP, the session id and (from 2025-06-18) `MCP-Protocol-Version` go on every request
//!   after `initialize`, GET and DELETE too; the header names the negotiated version (a should);
//! - under a run's bearer token, every HTTP request carries it, DELETE too.
//!
//! The double is a short Python client speaking the driver contract (below), told by its first
//! argument which rule to break; in its `plain` mode it breaks none, so each failure is the
//! break's and not the double's.

mod support;

use std::path::PathBuf;
use std::sync::OnceLock;

use mcp_harness::conformance::trial::Harness;
use mcp_harness::conformance::verdict::Grade;
use mcp_harness::conformance::{self, Evaluation};
use mcp_harness_scenarios::Case;
use mcp_harness_scenarios::model::Transport;

const SINGLE: &str = "one JSON-RPC 2.0 message";
const NO_BATCHED_INIT: &str = "initialize is never part of a JSON-RPC batch";
const SESSION: &str = "carries the session id the server issued";
const VERSION: &str = "carries MCP-Protocol-Version";
const VERSION_VALUE: &str = "MCP-Protocol-Version names the version negotiated";
const TOKEN: &str = "carries the bearer token the client was given";

/// The double: written once per test binary into a scratch directory.
fn double(mode: &str) -> String {
    static SCRIPT: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let (_, path) = SCRIPT.get_or_init(|| {
        let dir = tempfile::tempdir().expect("a scratch directory");
        let path = dir.path().join("rules_double.py");
        std::fs::write(&path, DOUBLE).expect("write the double");
        (dir, path)
    });
    format!("python3 {} {mode}", conformance::shell_quote(path))
}

fn reference() -> String {
    support::driver_cmd("")
}

/// `id` at `revision` (none: the case's own).
fn case_at(id: &str, revision: Option<&str>) -> Case {
    let mut case = support::case(id);
    case.revision = revision.map(str::to_owned);
    case
}

/// The one check whose name contains `name`; fails the test when there is none or several.
fn check<'a>(
    eval: &'a Evaluation,
    name: &str,
) -> &'a mcp_harness::conformance::checks::CheckResult {
    let found: Vec<_> = eval
        .checks
        .iter()
        .filter(|c| c.name.contains(name))
        .collect();
    match found.as_slice() {
        [one] => one,
        _ => panic!(
            "{} checks named like {name:?} in {:?}",
            found.len(),
            eval.checks.iter().map(|c| &c.name).collect::<Vec<_>>()
        ),
    }
}

fn made(eval: &Evaluation, name: &str) -> bool {
    eval.checks.iter().any(|c| c.name.contains(name))
}

fn passed(eval: &Evaluation, name: &str) -> bool {
    check(eval, name).passed
}

fn run(case: &Case, transport: Transport, client: &str, harness: &Harness) -> Evaluation {
    conformance::evaluate(case, transport, client, harness, Default::default())
}

/// Runs `client` and asserts the check named like `name` failed, showing the trial otherwise.
fn assert_fails(eval: &Evaluation, name: &str, what: &str) {
    let c = check(eval, name);
    assert!(
        !c.passed,
        "{what}: `{}` should have failed; checks failed: {:?}\nstderr: {}",
        c.name,
        support::failed_checks(eval),
        eval.run.stderr_tail
    );
}

/// Asserts the whole trial passed, showing its failed checks otherwise.
fn assert_pass(eval: &Evaluation, what: &str) {
    assert_eq!(
        eval.grade,
        Grade::Pass,
        "{what}: {:?}\nstderr: {}",
        support::failed_checks(eval),
        eval.run.stderr_tail
    );
}

#[test]
fn a_batch_passes_before_2025_06_18_and_fails_from_then_on() {
    let harness = support::harness();
    for transport in [Transport::Stdio, Transport::Https] {
        // 2025-03-26: the fake answers the batch, and the whole trial passes.
        let case = case_at("era/legacy/handshake-per-revision", Some("2025-03-26"));
        let eval = run(&case, transport, &double("batch"), harness);
        assert_pass(&eval, &format!("{transport:?}"));
        let batch_seen = eval
            .run
            .records
            .iter()
            .flatten()
            .any(|r| mcp_harness_fakes::batch::received_size(&r.event) == Some(2));
        assert!(batch_seen, "{transport:?}: the double did send a batch");

        // From 2025-06-18 the same batch breaks the rule.
        for revision in ["2025-06-18", "2025-11-25"] {
            let case = case_at("era/legacy/handshake-per-revision", Some(revision));
            let eval = run(&case, transport, &double("batch"), harness);
            assert_fails(&eval, SINGLE, &format!("{transport:?} at {revision}"));
            assert!(passed(&eval, NO_BATCHED_INIT));
            let actual = &check(&eval, SINGLE).actual;
            assert!(actual.contains(revision), "{actual}");
            let control = run(&case, transport, &double("plain"), harness);
            assert_pass(&control, "the plain double");
            let reference = run(&case, transport, &reference(), harness);
            assert!(
                passed(&reference, SINGLE),
                "{:?}",
                support::failed_checks(&reference)
            );
            assert!(
                !made(&reference, NO_BATCHED_INIT),
                "made only where a batch was sent"
            );
        }
    }
}

#[test]
fn initialize_in_a_batch_fails_at_every_revision() {
    let harness = support::harness();
    for transport in [Transport::Stdio, Transport::Https] {
        let case = case_at("era/legacy/handshake-per-revision", Some("2025-03-26"));
        let eval = run(&case, transport, &double("init-batch"), harness);
        assert_fails(&eval, NO_BATCHED_INIT, &format!("{transport:?}"));
        // A batch of one well-formed request is a valid message at 2025-03-26.
        assert!(passed(&eval, SINGLE), "{:?}", support::failed_checks(&eval));
        let reference = run(&case, transport, &reference(), harness);
        assert!(
            !made(&reference, NO_BATCHED_INIT),
            "made only where a batch was sent"
        );
        // A batch without initialize passes this rule: the previous test's batch trials pass.
    }
}

#[test]
fn the_session_id_goes_on_every_request_get_and_delete_too() {
    let harness = support::harness();
    // No revision: 2025-03-26, which has sessions but no version header.
    let case = case_at("http/session-id-echoed", None);
    for mode in ["delete-without-session", "get-without-session"] {
        let eval = run(&case, Transport::Https, &double(mode), harness);
        assert_fails(&eval, SESSION, mode);
        let actual = &check(&eval, SESSION).actual;
        let method = if mode.starts_with("get") {
            "GET"
        } else {
            "DELETE"
        };
        assert!(actual.starts_with(method), "{actual}");
        // The case's own checks look at POSTs only: they miss it.
        let own_failures: Vec<_> = eval
            .checks
            .iter()
            .filter(|c| !c.always_on && !c.passed)
            .collect();
        assert!(own_failures.is_empty(), "{own_failures:?}");
    }
    // A request without the id is a fault whether it reached the server before initialize
    // (the initialization phase must come first) or after the answer: the verdict cannot
    // follow the order in which two connections' requests arrive.
    let early = run(
        &case,
        Transport::Https,
        &double("get-before-initialize"),
        harness,
    );
    assert_fails(&early, SESSION, "get-before-initialize");
    assert!(check(&early, SESSION).actual.starts_with("GET"));
    let control = run(&case, Transport::Https, &double("plain"), harness);
    assert_pass(&control, "control");
    let reference = run(&case, Transport::Https, &reference(), harness);
    assert!(passed(&reference, SESSION));
    // A script without sessions issues none, and asks for none.
    let mut sessionless = case.clone();
    sessionless.scenario.server.http.sessions = false;
    let eval = run(
        &sessionless,
        Transport::Https,
        &double("delete-without-session"),
        harness,
    );
    assert!(
        passed(&eval, SESSION),
        "{:?}",
        support::failed_checks(&eval)
    );
}

#[test]
fn the_protocol_version_header_goes_on_every_request_from_2025_06_18() {
    let harness = support::harness();
    for revision in ["2025-06-18", "2025-11-25"] {
        let case = case_at("era/legacy/handshake-per-revision", Some(revision));
        let eval = run(
            &case,
            Transport::Https,
            &double("delete-without-version"),
            harness,
        );
        assert_fails(&eval, VERSION, revision);
        assert!(check(&eval, VERSION).actual.starts_with("DELETE"));
        let reference = run(&case, Transport::Https, &reference(), harness);
        assert!(passed(&reference, VERSION) && passed(&reference, VERSION_VALUE));
    }
    // 2025-03-26 has no such header: nothing to send.
    let case = case_at("era/legacy/handshake-per-revision", Some("2025-03-26"));
    let eval = run(
        &case,
        Transport::Https,
        &double("delete-without-version"),
        harness,
    );
    assert!(
        passed(&eval, VERSION),
        "{:?}",
        support::failed_checks(&eval)
    );

    // The value: the negotiated version, not the offered one (a should).
    let case = case_at("http/protocol-version-negotiated-down", None);
    let eval = run(
        &case,
        Transport::Https,
        &double("offered-version-header"),
        harness,
    );
    assert_fails(&eval, VERSION_VALUE, "offered instead of negotiated");
    assert!(passed(&eval, VERSION));
    let c = check(&eval, VERSION_VALUE);
    assert_eq!(c.level, mcp_harness_scenarios::model::Level::Should);
    assert_eq!(c.expected, "MCP-Protocol-Version: 2025-06-18");
    let control = run(&case, Transport::Https, &double("plain"), harness);
    assert_pass(&control, "control");
    let reference = run(&case, Transport::Https, &reference(), harness);
    assert!(passed(&reference, VERSION_VALUE));
}

#[test]
fn under_a_bearer_token_every_request_carries_it() {
    let token = format!("rules-test-token-{}", std::process::id());
    let harness = Harness::new(support::bins()).with_bearer_token(Some(token.clone()));
    let case = case_at("http/session-id-echoed", None);
    let eval = run(
        &case,
        Transport::Https,
        &double("delete-without-token"),
        &harness,
    );
    assert_fails(&eval, TOKEN, "DELETE without the token");
    let c = check(&eval, TOKEN);
    assert!(
        c.actual
            .starts_with("DELETE /mcp with no Authorization header (answered 401)"),
        "{}",
        c.actual
    );
    assert!(!c.actual.contains(&token) && !c.expected.contains(&token));
    let control = run(&case, Transport::Https, &double("plain"), &harness);
    assert_pass(&control, "control");
    let reference = run(&case, Transport::Https, &reference(), &harness);
    assert_pass(&reference, "reference");
    assert!(passed(&reference, TOKEN));
    // Without a token there is nothing to carry, and no such check.
    let plain = run(
        &case,
        Transport::Https,
        &double("delete-without-token"),
        support::harness(),
    );
    assert!(plain.checks.iter().all(|c| !c.name.contains(TOKEN)));
}

/// A small MCP client speaking the driver contract (see the module docs).
const DOUBLE: &str = r#"# A small MCP client speaking the driver contract (CLIENTS.md), for runner/tests/rules.rs: it
# carries out connect, list_tools, call_tool and close over stdio or Streamable HTTP, and
# breaks exactly one always-on rule, named by its first argument:
#
#   plain                    breaks nothing (the control)
#   batch                    sends notifications/initialized and a ping as one JSON-RPC batch
#   init-batch               sends initialize inside a batch
#   delete-without-session   its closing DELETE has no Mcp-Session-Id
#   delete-without-version   its closing DELETE has no MCP-Protocol-Version
#   delete-without-token     its closing DELETE has no Authorization
#   get-without-session      sends a GET without Mcp-Session-Id before closing
#   get-before-initialize    sends a GET (without a session id, which it cannot have yet)
#                            before initialize, so it reaches the server first
#   offered-version-header   says the version it offered in MCP-Protocol-Version, not the
#                            negotiated one
#
# Logs go to stderr; stdout holds the outcome lines only.
import json
import os
import queue
import ssl
import subprocess
import sys
import threading
import urllib.error
import urllib.request

MODE = sys.argv[1]
PLAN = json.loads(os.environ["MCP_HARNESS_PLAN"])
OFFER = os.environ["MCP_HARNESS_PROTOCOL_VERSION"]
TOKEN = os.environ.get("MCP_HARNESS_BEARER_TOKEN")
TIMEOUT = int(os.environ.get("MCP_HARNESS_TIMEOUT_MS", "5000")) / 1000


def log(text):
    print(f"[rules-double] {text}", file=sys.stderr, flush=True)


def request_ids(body):
    items = body if isinstance(body, list) else [body]
    return {json.dumps(m["id"]) for m in items if "id" in m and "method" in m}


class Stdio:
    def __init__(self):
        argv = json.loads(os.environ["MCP_HARNESS_SERVER_COMMAND"])
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.lines = queue.Queue()
        threading.Thread(target=self.read, daemon=True).start()

    def read(self):
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def send(self, body):
        self.proc.stdin.write((json.dumps(body) + "\n").encode())
        self.proc.stdin.flush()
        waiting = request_ids(body)
        answers = []
        while waiting:
            line = self.lines.get(timeout=TIMEOUT)
            if line is None:
                raise EOFError("the server went away")
            message = json.loads(line)
            for m in message if isinstance(message, list) else [message]:
                answers.append(m)
                if m.get("id") is None and "error" in m:
                    return answers
                waiting.discard(json.dumps(m.get("id")))
        return answers

    def close(self):
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class Http:
    def __init__(self):
        self.url = os.environ["MCP_HARNESS_SERVER_URL"]
        self.tls = ssl.create_default_context(cafile=os.environ["MCP_HARNESS_CA_FILE"])
        self.session = None
        self.negotiated = None

    def headers(self, method, omit):
        h = {}
        if method == "POST":
            h["Content-Type"] = "application/json"
            h["Accept"] = "application/json, text/event-stream"
        if method == "GET":
            h["Accept"] = "text/event-stream"
        if TOKEN and "token" not in omit:
            h["Authorization"] = "Bearer " + TOKEN
        if self.session and "session" not in omit:
            h["Mcp-Session-Id"] = self.session
        if self.negotiated and self.negotiated >= "2025-06-18" and "version" not in omit:
            said = OFFER if MODE == "offered-version-header" else self.negotiated
            h["MCP-Protocol-Version"] = said
        return h

    def exchange(self, method, body=None, omit=()):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(
            self.url, data=data, method=method, headers=self.headers(method, omit)
        )
        try:
            with urllib.request.urlopen(req, context=self.tls, timeout=TIMEOUT) as reply:
                text = b"" if method == "GET" else reply.read()
                return reply.status, reply.headers, text
        except urllib.error.HTTPError as e:
            return e.code, e.headers, e.read()

    def send(self, body):
        status, headers, data = self.exchange("POST", body)
        log(f"POST answered {status}")
        if headers.get("Mcp-Session-Id"):
            self.session = headers["Mcp-Session-Id"]
        if not data:
            return []
        if "text/event-stream" in headers.get("Content-Type", ""):
            events = [l[5:] for l in data.decode().splitlines() if l.startswith("data:")]
            messages = [json.loads(e) for e in events]
        else:
            messages = [json.loads(data)]
        flat = []
        for m in messages:
            flat.extend(m if isinstance(m, list) else [m])
        return flat

    def close(self):
        if MODE == "get-without-session":
            self.exchange("GET", omit=("session",))
        omit = {
            "delete-without-session": ("session",),
            "delete-without-version": ("version",),
            "delete-without-token": ("token",),
        }.get(MODE, ())
        if self.session:
            status, _, _ = self.exchange("DELETE", omit=omit)
            log(f"DELETE answered {status}")


def answer_to(answers, id):
    for m in answers:
        if m.get("id") == id:
            return m
    raise ValueError(f"no answer to request {id}: {answers}")


def result_or_raise(answer):
    if "error" in answer:
        raise RuntimeError(json.dumps(answer["error"]))
    return answer["result"]


def main():
    conn = None
    next_id = 1

    def rpc(method, params=None, batch_with=None):
        nonlocal next_id
        message = {"jsonrpc": "2.0", "id": next_id, "method": method}
        if params is not None:
            message["params"] = params
        next_id += 1
        body = [message] if MODE == "init-batch" and method == "initialize" else message
        if batch_with is not None:
            body = [batch_with, message]
        return result_or_raise(answer_to(conn.send(body), message["id"]))

    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    for i, step in enumerate(PLAN):
        op = step.get("op")
        try:
            if op == "connect":
                conn = Stdio() if os.environ["MCP_HARNESS_TRANSPORT"] == "stdio" else Http()
                params = {
                    "protocolVersion": OFFER,
                    "capabilities": {},
                    "clientInfo": {"name": "rules-double", "version": "0"},
                }
                if MODE == "get-before-initialize" and isinstance(conn, Http):
                    conn.exchange("GET")
                result = rpc("initialize", params)
                if isinstance(conn, Http):
                    conn.negotiated = result["protocolVersion"]
                if MODE == "batch":
                    rpc("ping", batch_with=initialized)
                else:
                    conn.send(initialized)
                ok = {"protocolVersion": result["protocolVersion"], "serverInfo": result["serverInfo"]}
            elif op == "list_tools":
                tools, cursor = [], None
                while True:
                    page = rpc("tools/list", {"cursor": cursor} if cursor else {})
                    tools += page.get("tools", [])
                    cursor = page.get("nextCursor")
                    if not cursor:
                        break
                ok = {"tools": tools}
            elif op == "call_tool":
                called = rpc("tools/call", {"name": step["name"], "arguments": step.get("arguments", {})})
                ok = {"text": [c["text"] for c in called.get("content", []) if c.get("type") == "text"]}
            elif op == "close":
                conn.close()
                ok = {}
            else:
                raise NotImplementedError(op)
            print(json.dumps({"step": i, "op": op, "ok": ok}), flush=True)
        except NotImplementedError:
            error = {"kind": "unsupported_op", "message": op}
            print(json.dumps({"step": i, "op": op, "error": error}), flush=True)
        except Exception as e:  # every other failure is reported as the step's error
            log(f"step {i} failed: {e!r}")
            error = {"kind": "invalid_response", "message": str(e)[:200]}
            print(json.dumps({"step": i, "op": op, "error": error}), flush=True)


main()
"#;

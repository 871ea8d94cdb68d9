//! A tiny scriptable stdio MCP server in Python, shared by the integration tests.
//!
//! It is written independently of the harness's fakes on purpose: the client's tests must not
//! lean on the code they will later be checked by.

#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use mcp_harness_client::StdioCommand;

/// argv: MODE [PIDFILE]. Modes change one behaviour each; see the branches. With a PIDFILE the
/// server writes its pid there at start and appends " eof" when its stdin reaches EOF.
pub const SERVER: &str = r#"
import json, os, signal, sys, time
mode = sys.argv[1]
if len(sys.argv) > 2:
    with open(sys.argv[2], "w") as f:
        f.write(str(os.getpid()))
if mode in ("stubborn", "refuse-stubborn"):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
seen = []
held = []
def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()
def answer(mid, result):
    send({"jsonrpc": "2.0", "id": mid, "result": result})
def text(*parts):
    return [{"type": "text", "text": p} for p in parts]
while True:
    line = sys.stdin.readline()
    if not line:
        break
    msg = json.loads(line)
    seen.append(msg)
    method, mid = msg.get("method"), msg.get("id")
    params = msg.get("params") or {}
    if method == "initialize":
        if mode == "mute":
            continue
        if mode in ("refuse", "refuse-stubborn"):
            send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32602, "message": "go away"}})
            continue
        version = "1999-01-01" if mode == "badversion" else params["protocolVersion"]
        answer(mid, {"protocolVersion": version, "capabilities": {"tools": {}},
                     "serverInfo": {"name": "py-" + mode, "pid": os.getpid()}})
        if mode == "chatty":
            sys.stdout.write("this is not json\n")
            sys.stdout.write('{"no": "jsonrpc"}\n')
            send({"jsonrpc": "2.0", "id": "srv-1", "method": "ping"})
            send({"jsonrpc": "2.0", "id": "srv-2", "method": "sampling/createMessage", "params": {}})
            send({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info"}})
            send({"jsonrpc": "2.0", "id": 999, "result": {}})
            sys.stderr.write(("x" * 1000 + "\n") * 300)
            sys.stderr.flush()
    elif method == "tools/list":
        cursor = params.get("cursor")
        if mode == "loop":
            answer(mid, {"tools": [{"name": "t%d" % len(seen)}], "nextCursor": "again"})
        elif mode == "dupe":
            answer(mid, {"tools": [{"name": "same"}, {"name": "same"}]})
        elif cursor is None:
            answer(mid, {"tools": [{"name": "echo", "inputSchema": {"type": "object"}, "x-extra": 1}],
                         "nextCursor": ""})
        elif cursor == "":
            answer(mid, {"tools": [{"name": "fail", "inputSchema": {"type": "object"}}],
                         "nextCursor": None})
        else:
            send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32602, "message": "bad cursor"}})
    elif method == "tools/call":
        name, args = params.get("name"), params.get("arguments")
        if name == "echo":
            answer(mid, {"content": text(json.dumps(args)), "structuredContent": args})
        elif name == "text":
            answer(mid, {"content": text("one") + [{"type": "image", "data": "AA==",
                         "mimeType": "image/png"}] + text("two"), "structuredContent": None})
        elif name == "fail":
            answer(mid, {"content": text("boom"), "structuredContent": {"x": 1}, "isError": True})
        elif name == "rpcerr":
            send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32602, "message": "unknown tool"}})
        elif name == "hold":
            held.append(mid)
        elif name == "release":
            for h in held:
                answer(h, {"content": text("held %s" % h)})
            held = []
            answer(mid, {"content": text("released")})
        elif name == "seen":
            answer(mid, {"content": [], "structuredContent": {"messages": seen}})
        elif name == "exit":
            sys.exit(0)
        # "slow" and anything else: never answered
if len(sys.argv) > 2:
    with open(sys.argv[2], "a") as f:
        f.write(" eof")
if mode in ("stubborn", "refuse-stubborn"):
    while True:
        time.sleep(1)
"#;

/// The server started in `mode`.
pub fn server(mode: &str) -> StdioCommand {
    server_args(&[mode])
}

/// The server with explicit arguments (mode first, optional pid file second).
pub fn server_args(args: &[&str]) -> StdioCommand {
    let mut argv = vec!["python3".to_owned(), "-c".to_owned(), SERVER.to_owned()];
    argv.extend(args.iter().map(|a| (*a).to_owned()));
    StdioCommand::from_argv(argv).expect("argv is not empty")
}

/// A fresh path in the temp dir for this test process.
pub fn temp_path(tag: &str) -> PathBuf {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    std::env::temp_dir().join(format!(
        "mcp-harness-client-{}-{tag}-{n}",
        std::process::id()
    ))
}

/// The pid in a pid file, and whether the server saw EOF on its stdin.
pub fn read_pidfile(path: &std::path::Path) -> (i32, bool) {
    let text = std::fs::read_to_string(path).expect("pid file written");
    let _ = std::fs::remove_file(path);
    let pid = text.split_whitespace().next().and_then(|p| p.parse().ok());
    (pid.expect("pid file holds a pid"), text.contains("eof"))
}

/// Whether a process with this pid still exists (a zombie counts as existing).
pub fn process_exists(pid: i32) -> bool {
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_ok()
}

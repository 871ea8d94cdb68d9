//! A stdio server in Python whose tools misbehave, for the hostile-server tests (written for
//! them, independently of the harness's fakes).

#![allow(dead_code)]

use mcp_harness_client::StdioCommand;

/// A stdio server whose tools misbehave, one way each (the tool name says how). Every answer
/// goes out through `out`, raw bytes, so the script controls the framing exactly.
pub const SERVER: &str = r#"
import json, sys, time
out = sys.stdout.buffer
def raw(data):
    out.write(data)
    out.flush()
def line(obj):
    return json.dumps(obj).encode() + b"\n"
def answer(mid, result):
    return line({"jsonrpc": "2.0", "id": mid, "result": result})
def text(t):
    return {"content": [{"type": "text", "text": t}]}
for msg in sys.stdin.buffer:
    msg = json.loads(msg)
    method, mid = msg.get("method"), msg.get("id")
    params = msg.get("params") or {}
    if method == "initialize":
        raw(answer(mid, {"protocolVersion": params["protocolVersion"], "capabilities": {"tools": {}},
                         "serverInfo": {"name": "hostile"}}))
        continue
    if method != "tools/call":
        continue
    name, args = params["name"], params.get("arguments") or {}
    if name == "echo":
        raw(answer(mid, text("echo")))
    elif name == "big":
        raw(answer(mid, text("x" * args["bytes"])))
    elif name == "endless":
        # One line far past the cap, written in 1 MiB pieces, then the newline.
        raw(b'{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"' % mid)
        piece = b"y" * (1 << 20)
        for _ in range(args["mib"]):
            raw(piece)
        raw(b'"}]}}\n')
    elif name == "bad-utf8":
        raw(b'{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"\xff\xfe"}]}}\n' % mid)
    elif name == "noise-then-answer":
        raw(b"\xff\xfe\x00 not even text\n" + b"{not json}\n" + b'{"id":"x","result":{}}\n'
            + answer(mid, text("after the noise")))
    elif name == "malformed":
        raw(b'{"jsonrpc":"2.0","id":%d,"result":{"content":\n' % mid)
    elif name == "not-jsonrpc":
        raw(b'{"id":%d,"result":{}}\n' % mid)
    elif name == "split":
        data = answer(mid, text("split"))
        raw(data[:10])
        time.sleep(0.2)
        raw(data[10:])
    elif name == "three-in-one":
        raw(line({"jsonrpc": "2.0", "method": "notifications/message", "params": {}})
            + line({"jsonrpc": "2.0", "id": "srv-1", "method": "ping"})
            + answer(mid, text("three")))
    elif name == "partial":
        raw(answer(mid, text("never finished"))[:20])
    elif name == "partial-then-exit":
        raw(answer(mid, text("never finished"))[:20])
        sys.exit(0)
"#;

pub fn server() -> StdioCommand {
    StdioCommand::from_argv(vec!["python3".into(), "-c".into(), SERVER.into()])
        .expect("argv is not empty")
}

# A stdio client written by hand with one flaw, named by its first argument:
#   latin1-text      writes its messages in Latin-1, not UTF-8 (JSON-08);
#   raw-newline      leaves a newline inside a string unescaped, so a message spans two
#                    lines (STDIO-01);
#   stderr-is-error  takes anything its server writes on stderr for a failure and drops the
#                    connection (STDIO-04).
# It carries out connect, call_tool and close; a call with no usable answer in time is
# reported as a timeout, and every step after a dropped connection as transport_closed.
import json, os, select, subprocess, sys
flaw = sys.argv[1]
argv = json.loads(os.environ["MCP_HARNESS_SERVER_COMMAND"])
wait = int(os.environ["MCP_HARNESS_TIMEOUT_MS"]) / 1000
server = None
ids = [0]
def send(message):
    text = json.dumps(message, ensure_ascii=False)
    if flaw == "raw-newline":
        text = text.replace("\\n", "\n")
    data = text.encode("latin-1", "replace") if flaw == "latin1-text" else text.encode()
    server.stdin.write(data + b"\n")
    server.stdin.flush()
def ask(method, params):
    ids[0] += 1
    send({"jsonrpc": "2.0", "id": ids[0], "method": method, "params": params})
    while True:
        ready = select.select([server.stdout, server.stderr], [], [], wait)[0]
        if not ready:
            return "timeout"
        if server.stderr in ready:
            if server.stderr.read1(65536) and flaw == "stderr-is-error":
                return "stderr"
            continue
        line = server.stdout.readline()
        if not line:
            return "closed"
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if message.get("id") == ids[0]:
            return message
def stop():
    global server
    if server is not None:
        server.stdin.close()
        server.kill()
        server.wait()
        server = None
def failed(answer):
    if answer == "timeout":
        return {"kind": "timeout", "message": "no answer in time"}
    if answer == "stderr":
        stop()
    return {"kind": "transport_closed", "message": f"connection dropped ({answer})"}
for i, step in enumerate(json.loads(os.environ["MCP_HARNESS_PLAN"])):
    out = {"step": i, "op": step["op"]}
    if step["op"] == "close":
        stop()
        out["ok"] = {}
    elif step["op"] == "connect":
        server = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        answer = ask("initialize", {"protocolVersion": os.environ["MCP_HARNESS_PROTOCOL_VERSION"], "capabilities": {}, "clientInfo": {"name": flaw, "version": "0"}})
        if isinstance(answer, dict) and "result" in answer:
            send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            out["ok"] = {"protocolVersion": answer["result"]["protocolVersion"]}
        else:
            out["error"] = failed(answer)
    elif server is None:
        out["error"] = {"kind": "transport_closed", "message": "not connected"}
    elif step["op"] == "call_tool":
        answer = ask("tools/call", {"name": step["name"], "arguments": step.get("arguments", {})})
        if not isinstance(answer, dict):
            out["error"] = failed(answer)
        elif "error" in answer:
            out["error"] = {"kind": "protocol_error", "code": answer["error"]["code"], "message": answer["error"]["message"]}
        elif answer["result"].get("isError"):
            out["error"] = {"kind": "tool_error", "message": "tool error"}
        else:
            out["ok"] = {"text": [b["text"] for b in answer["result"]["content"] if b["type"] == "text"]}
    else:
        out["error"] = {"kind": "unsupported_op", "message": step["op"]}
    print(json.dumps(out, ensure_ascii=False), flush=True)
stop()

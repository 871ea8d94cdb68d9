# A client that never reads its server's stderr: it launches the server with stderr piped
# and left full, performs the plan by hand over stdio, and reports a call as a timeout when
# no answer comes in time.
import json, os, select, subprocess
argv = json.loads(os.environ["MCP_HARNESS_SERVER_COMMAND"])
wait = int(os.environ["MCP_HARNESS_TIMEOUT_MS"]) / 1000
server = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
ids = [0]
def send(message):
    server.stdin.write((json.dumps(message) + "\n").encode())
    server.stdin.flush()
def ask(method, params):
    ids[0] += 1
    send({"jsonrpc": "2.0", "id": ids[0], "method": method, "params": params})
    while select.select([server.stdout], [], [], wait)[0]:
        line = server.stdout.readline()
        if not line:
            return None
        message = json.loads(line)
        if message.get("id") == ids[0]:
            return message
    return None
for i, step in enumerate(json.loads(os.environ["MCP_HARNESS_PLAN"])):
    out = {"step": i, "op": step["op"]}
    if step["op"] == "connect":
        answer = ask("initialize", {"protocolVersion": os.environ["MCP_HARNESS_PROTOCOL_VERSION"], "capabilities": {}, "clientInfo": {"name": "no-stderr-drain", "version": "0"}})
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        out["ok"] = {"protocolVersion": answer["result"]["protocolVersion"]}
    elif step["op"] == "call_tool":
        answer = ask("tools/call", {"name": step["name"], "arguments": step.get("arguments", {})})
        if answer is None:
            out["error"] = {"kind": "timeout", "message": "no answer"}
        else:
            out["ok"] = {"text": [b["text"] for b in answer["result"]["content"] if b["type"] == "text"]}
    elif step["op"] == "close":
        server.stdin.close()
        server.kill()
        server.wait()
        out["ok"] = {}
    print(json.dumps(out), flush=True)

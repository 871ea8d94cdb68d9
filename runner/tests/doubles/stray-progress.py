# A stdio client written by hand that declares sampling and answers a server's
# sampling/createMessage, but first sends notifications/progress under a token of its own
# instead of the one the request carried (PROG-05). It carries out connect, call_tool and
# close.
import json, os, select, subprocess
argv = json.loads(os.environ["MCP_HARNESS_SERVER_COMMAND"])
wait = int(os.environ["MCP_HARNESS_TIMEOUT_MS"]) / 1000
server = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
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
        if "method" in message and "id" in message:
            send({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "stray-token", "progress": 1}})
            send({"jsonrpc": "2.0", "id": message["id"], "result": {"role": "assistant", "content": {"type": "text", "text": "ok"}, "model": "by-hand", "stopReason": "endTurn"}})
        elif message.get("id") == ids[0]:
            return message
    return None
for i, step in enumerate(json.loads(os.environ["MCP_HARNESS_PLAN"])):
    out = {"step": i, "op": step["op"]}
    if step["op"] == "connect":
        answer = ask("initialize", {"protocolVersion": os.environ["MCP_HARNESS_PROTOCOL_VERSION"], "capabilities": {"sampling": {}}, "clientInfo": {"name": "stray-progress", "version": "0"}})
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
    else:
        out["error"] = {"kind": "unsupported_op", "message": step["op"]}
    print(json.dumps(out), flush=True)

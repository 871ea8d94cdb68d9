# A 2026-07-28 stdio client written by hand that takes a result's ttlMs for a polling
# interval: once a listing says how long it stays fresh, a background thread asks for it
# again each time that passes, whether or not anyone needs it (CACHE-03). It carries out
# connect (the server/discover probe), list_tools, sleep and close.
import json, os, select, subprocess, threading, time
argv = json.loads(os.environ["MCP_HARNESS_SERVER_COMMAND"])
wait = int(os.environ["MCP_HARNESS_TIMEOUT_MS"]) / 1000
version = os.environ["MCP_HARNESS_PROTOCOL_VERSION"]
meta = {"io.modelcontextprotocol/protocolVersion": version, "io.modelcontextprotocol/clientCapabilities": {}, "io.modelcontextprotocol/clientInfo": {"name": "ttl-poller", "version": "0"}}
server = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
lock = threading.Lock()
ids = [0]
def send(method):
    with lock:
        ids[0] += 1
        line = json.dumps({"jsonrpc": "2.0", "id": ids[0], "method": method, "params": {"_meta": meta}})
        server.stdin.write(line.encode() + b"\n")
        server.stdin.flush()
        return ids[0]
def ask(method):
    id = send(method)
    while select.select([server.stdout], [], [], wait)[0]:
        line = server.stdout.readline()
        if not line:
            return None
        message = json.loads(line)
        if message.get("id") == id:
            return message.get("result")
    return None
def poll(method, every):
    while server.poll() is None:
        time.sleep(every)
        try:
            send(method)
        except (BrokenPipeError, ValueError):
            return
for i, step in enumerate(json.loads(os.environ["MCP_HARNESS_PLAN"])):
    out = {"step": i, "op": step["op"]}
    if step["op"] == "connect":
        result = ask("server/discover")
        out["ok"] = {"protocolVersion": version, "era": "modern"}
    elif step["op"] == "list_tools":
        result = ask("tools/list")
        out["ok"] = {"tools": result["tools"]}
        if result.get("ttlMs", 0) > 0:
            threading.Thread(target=poll, args=("tools/list", result["ttlMs"] / 1000), daemon=True).start()
    elif step["op"] == "sleep":
        time.sleep(step["ms"] / 1000)
        out["ok"] = {}
    elif step["op"] == "close":
        with lock:
            server.stdin.close()
            server.kill()
            server.wait()
        out["ok"] = {}
    else:
        out["error"] = {"kind": "unsupported_op", "message": step["op"]}
    print(json.dumps(out), flush=True)

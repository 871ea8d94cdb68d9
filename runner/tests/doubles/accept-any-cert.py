# A broken TLS client: it accepts any certificate and name, then performs the handshake by
# hand and reports success. No part of the harness or the reference client may do this.
import json, os, ssl, http.client, urllib.parse
url = urllib.parse.urlparse(os.environ["MCP_HARNESS_SERVER_URL"])
conn = http.client.HTTPSConnection(url.hostname, url.port, context=ssl._create_unverified_context())
body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "careless", "version": "0"}}}
conn.request("POST", url.path, json.dumps(body), {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
result = json.loads(conn.getresponse().read())["result"]
for i, step in enumerate(json.loads(os.environ["MCP_HARNESS_PLAN"])):
    print(json.dumps({"step": i, "op": step["op"], "ok": {"protocolVersion": result["protocolVersion"]}}))

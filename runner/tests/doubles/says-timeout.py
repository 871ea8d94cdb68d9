# Prints a timeout error for every step of the plan and does nothing else.
import json, os
for i, step in enumerate(json.loads(os.environ["MCP_HARNESS_PLAN"])):
    print(json.dumps({"step": i, "op": step["op"], "error": {"kind": "timeout"}}))

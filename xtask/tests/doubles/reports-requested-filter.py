# Reads the reference driver's outcome lines on stdin and reports, for every listen step that
# succeeded, the filter the plan asked for instead of the one the server acknowledged: a client
# that never looks at notifications/subscriptions/acknowledged.
import json, os, sys
plan = json.loads(os.environ["MCP_HARNESS_PLAN"])
for line in sys.stdin:
    try:
        out = json.loads(line)
        step = plan[out["step"]]
        if step.get("op") == "listen" and isinstance(out.get("ok"), dict):
            out["ok"]["notifications"] = step.get("notifications")
            line = json.dumps(out) + "\n"
    except (ValueError, KeyError, IndexError, TypeError):
        pass
    sys.stdout.write(line)
    sys.stdout.flush()

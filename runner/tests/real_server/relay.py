"""A stand-in for `mcp-harness record` over stdio, until it is merged: runs the server
command given after `--`, relays lines both ways unchanged, and appends each to a harness
transcript (started, received with at_ms, sent or sent_raw, stdin_eof, exited)."""
import json, os, subprocess, sys, threading, time

out = sys.argv[1]
cmd = sys.argv[sys.argv.index("--") + 1:]
start = time.monotonic()
lock = threading.Lock()
log = open(out, "a", buffering=1)


def record(event, **fields):
    with lock:
        log.write(json.dumps(dict(pid=os.getpid(), event=event, **fields)) + "\n")


record("started")
child = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)


def client_to_server():
    for line in sys.stdin.buffer:
        text = line.decode("utf-8", "replace").rstrip("\n")
        if not text.strip():
            continue
        at_ms = int((time.monotonic() - start) * 1000)
        try:
            record("received", at_ms=at_ms, message=json.loads(text))
        except ValueError as e:
            record("received_invalid", line=text[:1000], error=str(e))
        child.stdin.write(line)
        child.stdin.flush()
    record("stdin_eof")
    child.stdin.close()


threading.Thread(target=client_to_server, daemon=True).start()
for line in child.stdout:
    text = line.decode("utf-8", "replace").rstrip("\n")
    try:
        record("sent", message=json.loads(text))
    except ValueError:
        record("sent_raw", line=text[:1000])
    sys.stdout.buffer.write(line)
    sys.stdout.buffer.flush()
record("exited", code=child.wait())

# Opens a GET on the MCP endpoint (its first argument) before anything else, as a client that
# starts its event stream before the handshake does, then leaves the rest to the reference
# driver. The GET carries no session id: there is none yet.
import os, ssl, sys, urllib.error, urllib.request

url = sys.argv[1] if len(sys.argv) > 1 else ""
if url.startswith("https://"):
    tls = ssl.create_default_context(cafile=os.environ["MCP_HARNESS_CA_FILE"])
    request = urllib.request.Request(url, method="GET", headers={"Accept": "text/event-stream"})
    try:
        urllib.request.urlopen(request, context=tls, timeout=2).close()
    except (urllib.error.URLError, OSError):
        pass

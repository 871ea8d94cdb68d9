"""mcp-harness driver-contract adapter (contract 1) for the official Python MCP SDK.

The harness describes a trial in environment variables (see CLIENTS.md); this script performs
the plan with the SDK's own `mcp.Client` and prints one JSON outcome line per step on stdout.
Everything else (SDK logs, the server's stderr, diagnostics) goes to stderr.

The adapter reports what the SDK does. It adds no policy of its own: no repeated-cursor or
duplicate-name detection, no URL policy, no timeout other than the SDK's per-request
`read_timeout_seconds`. What it does add is bookkeeping: following `nextCursor` (the SDK has no
list-all helper), cancelling a call after `cancel_after_ms`, and translating SDK exceptions into
the contract's closed vocabulary of error kinds. MCP_HARNESS_SHUTDOWN_GRACE_MS is only a hint
and is not applied: the SDK's stdio shutdown has fixed waits of its own (2 s after closing
stdin, 2 s after SIGTERM). MCP_HARNESS_PROTOCOL_VERSION and MCP_HARNESS_ERA choose the SDK's
connect mode only (see connect_mode): the SDK offers the versions it knows, not a caller's choice.

The rest of what a client asks maps one to one onto `mcp.Client`: list_resources,
list_resource_templates, list_prompts (the same nextCursor loop as list_tools: the SDK has no
list-all helper and detects neither repeated cursors nor duplicate entries), read_resource,
get_prompt, complete, ping (`send_ping`) and set_logging_level. The SDK never checks the
server's declared capabilities before sending (it has no option to), and although it exposes
them (`Client.server_capabilities`), its client guide's examples call every verb without reading
them first (CLIENTS.md, "It leaves capability checks to its user"), so no step reports
`capability_missing`; and it sends `ping` and `logging/setLevel` on a 2026-07-28 connection too
(it only marks them deprecated there). Content as seen (CLIENTS.md) is built from the SDK's
typed blocks; the SDK keeps base64 data as the string received, so the adapter decodes it the
way its users would, with `base64.b64decode(..., validate=True)`.

What the server starts (CLIENTS.md) maps onto the SDK's callbacks: connect's `handlers` become
the `list_roots_callback`, `sampling_callback` and `elicitation_callback` (the SDK declares the
capability of each callback it is given, and cannot declare less: roots always with
`listChanged`, elicitation always with both the form and the url mode); `events` reports what the
callbacks, the `logging_callback`, the `message_handler` (list changes, resource updates) and the
per-call `progress_callback` saw, and on a 2026-07-28 connection what each `Client.listen()`
subscription yields; `call_tool`'s `progress` is the progress callback (the SDK uses its request
id as the token); `set_roots` is `send_roots_list_changed`; `subscribe_resource` and
`unsubscribe_resource` the SDK's verbs, sent without a capability check like every other verb.
The SDK never restarts a request's timeout on progress, so `max_timeout_ms` is unsupported_op;
it answers a server's ping itself, out of the callbacks' sight, so pings are not reported; and it
never restarts a stdio server that exited. An elicitation handler's `defaults` are filled in by
the adapter, playing the user's pre-filled form (the SDK has no such helper); a `delay_ms` is
waited inside the callback, where a cancellation from the server ends it (the SDK's doing).

Structure: the SDK's transports and session run inside anyio task groups, and a transport
failure over HTTP (a refused certificate, a refused connection) fails the transport's task group,
which cancels the task that entered it. So one "owner" task per connection enters the `Client`
and runs every SDK call for it; the plan loop hands it one step at a time and waits for the
answer. When the transport fails, the owner gets the failure out of its `async with` and answers
the step it was running with it; later steps are answered `transport_closed`.

Authorization trials (MCP_HARNESS_AUTH_REDIRECT_URI set) give the streamable HTTP transport's
httpx2 client the SDK's own OAuth provider; oauth.py says how it is configured and what the
adapter does in the user's place (the headless step), and nothing more.

The contract's plumbing (the environment, the step loop and each step's fields, outcome lines,
stdout, the token, content as seen, the listing loop) is the Python adapter kit's,
adapters/kits/python/mcp_harness_kit.py; this file is the SDK's side of each step.
"""

from __future__ import annotations

import json
import logging
import os
import re
import ssl
import sys
import warnings
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any, get_args

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "kits", "python"))
import mcp_harness_kit as kit  # noqa: E402  (first: its clock starts before the SDK's slow imports)
from mcp_harness_kit import Config, StepError, note  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oauth  # noqa: E402  (this folder's oauth.py: the SDK's OAuth client for authorization trials)

import anyio  # noqa: E402
import httpx2  # noqa: E402
import mcp_types  # noqa: E402
import pydantic  # noqa: E402
from mcp import Client, MCPError, StdioServerParameters  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.shared.subscriptions import PromptsListChanged, ResourcesListChanged, ResourceUpdated, ToolsListChanged  # noqa: E402
from mcp.shared.exceptions import MCPDeprecationWarning  # noqa: E402
from mcp.shared._httpx_utils import MCP_DEFAULT_SSE_READ_TIMEOUT, MCP_DEFAULT_TIMEOUT  # noqa: E402
from mcp_types import (  # noqa: E402
    CONNECTION_CLOSED,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    REQUEST_TIMEOUT,
)
from mcp_types.version import LATEST_HANDSHAKE_VERSION, LATEST_MODERN_VERSION, MODERN_PROTOCOL_VERSIONS  # noqa: E402

# Text the SDK itself puts on the MCPErrors it makes up locally (jsonrpc_dispatcher.py and
# client/streamable_http.py). The SDK reuses the JSON-RPC error type, with the codes -32001 and
# -32000, for "the read timeout elapsed" and "the connection is gone"; a server may send those
# codes too, so the SDK's wording is what tells the local cases apart.
_SDK_TIMEOUT_TEXT = re.compile(r"^Request '.*' timed out$", re.DOTALL)
_SDK_CLOSED_TEXT = re.compile(r"^(Connection closed|SSE stream (ended|failed))")
# The RuntimeErrors ClientSession.validate_tool_result and _output_schema_validator raise.
_SDK_SCHEMA_TEXT = re.compile(
    r"^(Invalid structured content returned by tool |Invalid schema for tool "
    r"|Tool .* has an output schema but did not return structured content$)",
    re.DOTALL,
)


# The era asked for (MCP_HARNESS_ERA), for error classification; set once in main().
ERA = ["legacy"]
# HeaderMismatch, MissingRequiredClientCapability, UnsupportedProtocolVersion (2026-07-28).
MODERN_ERROR_CODES = (-32020, -32021, -32022)



class CallerCancelled(Exception):
    """The plan's cancel_after_ms elapsed before the SDK answered the call."""



# ---------------------------------------------------------------------------------------------
# Building the SDK client


def connect_mode(config: Config) -> str:
    """The SDK's `mode=` for the era and version the harness asks for.

    MCP_HARNESS_ERA=dual is the SDK's default 'auto': it probes `server/discover` (always at its
    newest modern version, retrying once on -32022 at a mutual one) and falls back to
    `initialize` (always offering 2025-11-25; the SDK has no setting for
    MCP_HARNESS_LEGACY_PROTOCOL_VERSION). MCP_HARNESS_ERA=modern is 'auto' too: it is the SDK's
    only mode that probes `server/discover` (a modern version pin adopts that version without
    sending anything), so against a legacy server this SDK falls back where a modern-only
    client would fail. Unset or 'legacy': as before.
    """
    if config.era in ("dual", "modern"):
        return "auto"
    return legacy_mode(config.protocol_version)


def legacy_mode(protocol_version: str) -> str:
    """The SDK's `mode=` for the version the harness asks us to offer (no era asked for).

    The SDK does not let the caller pick the version its `initialize` offers: it always offers
    its newest handshake-era version (2025-11-25). What the caller does choose is the era: a
    modern version string adopts that version directly, 'legacy' forces the initialize
    handshake, and the default 'auto' first probes `server/discover`. A handshake-era version
    asked for by the harness therefore means 'legacy'.
    """
    if protocol_version in MODERN_PROTOCOL_VERSIONS:
        return protocol_version
    return "legacy"


def version_limits(config: Config) -> list[str]:
    """The contract's `limits` for the connect line: `choose_version` when the SDK will not offer
    a version the harness asks for, and always `choose_elicitation_modes`.

    What the SDK offers is fixed by its mode (see connect_mode): 'legacy' offers
    LATEST_HANDSHAKE_VERSION in initialize; a modern version pin uses that version; 'auto'
    probes server/discover at LATEST_MODERN_VERSION and falls back to an initialize offering
    LATEST_HANDSHAKE_VERSION. Asked: MCP_HARNESS_PROTOCOL_VERSION (initialize in the legacy
    era, server/discover otherwise) and, in the dual era, the fallback's
    MCP_HARNESS_LEGACY_PROTOCOL_VERSION.
    """
    if config.era == "legacy":
        mode = legacy_mode(config.protocol_version)
        offered = config.protocol_version if mode != "legacy" else LATEST_HANDSHAKE_VERSION
        mismatched = config.protocol_version != offered
    else:
        mismatched = config.protocol_version != LATEST_MODERN_VERSION
        if config.era == "dual":
            mismatched = mismatched or config.legacy_protocol_version != LATEST_HANDSHAKE_VERSION
    # The SDK declares {"form":{},"url":{}} whenever an elicitation callback is given
    # (ClientSession._build_capabilities), so it cannot declare form alone.
    return (["choose_version"] if mismatched else []) + ["choose_elicitation_modes"]


def make_http_client(config: Config) -> httpx2.AsyncClient:
    """The httpx2 client the SDK's streamable HTTP transport will use.

    The SDK's way of adding headers or TLS settings is to hand its transport a pre-configured
    client; this one keeps the SDK's own default timeouts (create_mcp_http_client), adds the
    bearer token as a default header, and trusts exactly the run's CA when one is given
    (verification stays on). Without MCP_HARNESS_CA_FILE, httpx2's default honours SSL_CERT_FILE.
    """
    headers = {}
    if config.bearer_token:
        headers["Authorization"] = f"Bearer {config.bearer_token}"
    verify: ssl.SSLContext | bool = True
    if config.ca_file:
        verify = ssl.create_default_context(cafile=config.ca_file)
    hooks: dict[str, list[Any]] = {}
    if config.auth is not None:
        # Authorization trials: the SDK hides the status of a final 401/403 (its transport
        # reports "Server returned an error response"); watching responses (nothing changed)
        # lets the step report the status that really came (see _sdk_http_error).
        async def note_status(response: httpx2.Response) -> None:
            if str(response.request.url) == config.url:
                oauth.LAST_MCP_STATUS[:] = [response.status_code]

        hooks["response"] = [note_status]
    return httpx2.AsyncClient(
        headers=headers,
        timeout=httpx2.Timeout(MCP_DEFAULT_TIMEOUT, read=MCP_DEFAULT_SSE_READ_TIMEOUT),
        verify=verify,
        # Authorization trials only: the SDK's OAuth provider (oauth.py); None otherwise.
        auth=oauth.make_provider(config),
        event_hooks=hooks,
    )


# The input answers of the call in progress, by input-request method (the plan's "input").
# The SDK takes its input callbacks when the client is built; calls run one at a time on the
# connection's owner task, so the callbacks read the current call's answers from here.
CURRENT_INPUT: dict[str, Any] = {}
# The connection's answers to server requests, by method (the connect step's "handlers";
# `set_roots` replaces the roots). A step's own "input" wins over them (CLIENTS.md).
HANDLERS: dict[str, Any] = {}


def planned_input_methods(plan: list[Any]) -> set[str]:
    methods: set[str] = set()
    for step in plan:
        if isinstance(step, dict) and isinstance(step.get("input"), dict):
            methods.update(step["input"].keys())
    return methods


def request_params_seen(params: Any) -> dict[str, Any]:
    """A server request's params as the SDK parsed them, `_meta` left out (CLIENTS.md allows it)."""
    seen = dump(params) if isinstance(params, pydantic.BaseModel) else {}
    seen.pop("_meta", None)
    return seen


async def take_time(answer: dict[str, Any]) -> dict[str, Any]:
    """The answer without the caller's own `delay_ms`, after waiting that long (a user taking time).

    The wait runs inside the SDK's handler for the request: when the server cancels the request
    meanwhile, what happens to the answer is the SDK's doing (its dispatcher cancels the
    handler's scope on notifications/cancelled and then sends nothing).
    """
    answer = dict(answer)
    delay = answer.pop("delay_ms", None)
    if isinstance(delay, int | float) and not isinstance(delay, bool) and delay > 0:
        await anyio.sleep(delay / 1000)
    return answer


def with_defaults(content: Any, schema: Any) -> Any:
    """`content` with every top-level property the requested schema gives a `default`, and the
    content leaves out, filled with that default: what a user accepting a pre-filled form sends.

    The SDK has no such helper (it hands the schema to the elicitation callback and sends what
    the callback returns), so this is the caller's form, as its users would write it.
    """
    filled = dict(content) if isinstance(content, dict) else {}
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if isinstance(properties, dict):
        for key, prop in properties.items():
            if key not in filled and isinstance(prop, dict) and "default" in prop:
                filled[key] = prop["default"]
    return filled


async def answer_elicitation(context: Any, params: Any) -> Any:
    mode = getattr(params, "mode", None) or "form"
    answer = CURRENT_INPUT.get("elicitation/create")
    if answer is None:
        handler = HANDLERS.get("elicitation/create")
        if not isinstance(handler, dict):  # the user declines what the caller supplied no answer for
            return mcp_types.ElicitResult(action="decline")
        # A handler keyed by mode answers those modes; a plain answer is the form mode's.
        per_mode = handler if "action" not in handler else {"form": handler}
        answer = per_mode.get(mode)
        if not isinstance(answer, dict):
            # The SDK declares both modes whenever there is a callback; the caller answers only
            # the modes the plan gives (CLIENTS.md: an undeclared mode is -32602).
            return mcp_types.ErrorData(code=INVALID_PARAMS, message=f"this client does not answer {mode}-mode elicitations")
    EVENTS.add({"type": "request", "method": "elicitation/create", "params": request_params_seen(params)})
    answer = await take_time(answer)
    if answer.pop("defaults", False) is True and mode == "form" and answer.get("action") == "accept":
        schema = getattr(params, "requested_schema", None)
        schema_seen = dump(schema) if isinstance(schema, pydantic.BaseModel) else schema
        answer["content"] = with_defaults(answer.get("content"), schema_seen)
    return mcp_types.ElicitResult.model_validate(answer)


async def answer_sampling(context: Any, params: Any) -> Any:
    answer = CURRENT_INPUT.get("sampling/createMessage", HANDLERS.get("sampling/createMessage"))
    if answer is None:
        return mcp_types.ErrorData(code=INVALID_REQUEST, message="no sampling answer for this call")
    EVENTS.add({"type": "request", "method": "sampling/createMessage", "params": request_params_seen(params)})
    return mcp_types.CreateMessageResult.model_validate(await take_time(answer))


async def answer_roots(context: Any) -> Any:
    answer = CURRENT_INPUT.get("roots/list", HANDLERS.get("roots/list"))
    if answer is None:
        return mcp_types.ErrorData(code=INVALID_REQUEST, message="no roots answer for this call")
    # The SDK hands the roots callback only the request's _meta, not its params.
    EVENTS.add({"type": "request", "method": "roots/list"})
    return mcp_types.ListRootsResult.model_validate(await take_time(answer))


# ---------------------------------------------------------------------------------------------
# Events: what the SDK surfaced to its caller (CLIENTS.md, "What the server starts")


class Events:
    """Everything the SDK's callbacks surfaced since the last `events` step, in arrival order."""

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []
        self.arrived = anyio.Event()
        # Progress events whose token is not known yet (see on_progress), oldest first.
        self.untokened: list[dict[str, Any]] = []

    def add(self, event: dict[str, Any]) -> None:
        self.items.append(event)
        self.arrived.set()
        self.arrived = anyio.Event()

    async def take(self, at_least: int, timeout_s: float) -> list[dict[str, Any]]:
        with anyio.move_on_after(timeout_s):
            while len(self.items) < at_least:
                await self.arrived.wait()
        # Let a progress notification's tee (which names its token) catch up with its callback.
        for _ in range(3):
            if not self.untokened:
                break
            await anyio.sleep(0.01)
        taken, self.items = self.items, []
        return taken


EVENTS = Events()


def progress_callback() -> Callable[[float, float | None, str | None], Awaitable[None]]:
    """The SDK's per-call progress callback, reporting each progress as an event.

    The SDK routes `notifications/progress` to a call's callback only while the call is in
    flight and only for the token it sent (its request id), but hands the callback
    (progress, total, message), not the token. It also tees every notification, this one
    included, to the session's message_handler right after the callback is scheduled: that copy
    names the token, and fills it in here (on_message).
    """

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        event: dict[str, Any] = {"type": "progress", "progressToken": None, "progress": progress}
        if total is not None:
            event["total"] = total
        if message is not None:
            event["message"] = message
        EVENTS.untokened.append(event)
        EVENTS.add(event)

    return on_progress


async def on_log(params: Any) -> None:
    event: dict[str, Any] = {"type": "log", "level": params.level}
    if params.logger is not None:
        event["logger"] = params.logger
    event["data"] = params.data
    EVENTS.add(event)


LIST_CHANGED = {
    mcp_types.ToolListChangedNotification: "tools",
    mcp_types.ResourceListChangedNotification: "resources",
    mcp_types.PromptListChangedNotification: "prompts",
}


# Whether the connection speaks 2026-07-28, where list changes and resource updates arrive only
# on subscriptions/listen streams: those are reported from the SDK's Subscription (listen_work),
# which delivers only its own stream's events, not from the message_handler's tee of every frame.
MODERN_CONNECTION = [False]


def listen_event(event: Any) -> dict[str, Any] | None:
    """A Subscription's typed event as the contract's event."""
    if isinstance(event, ToolsListChanged):
        return {"type": "list_changed", "list": "tools"}
    if isinstance(event, PromptsListChanged):
        return {"type": "list_changed", "list": "prompts"}
    if isinstance(event, ResourcesListChanged):
        return {"type": "list_changed", "list": "resources"}
    if isinstance(event, ResourceUpdated):
        return {"type": "resource_updated", "uri": event.uri}
    return None


async def on_message(message: Any) -> None:
    """The SDK's message_handler: every server notification it surfaces (and transport faults)."""
    if isinstance(message, Exception):
        note(f"the SDK surfaced a transport error: {type(message).__name__}: {message}")
        return
    root = getattr(message, "root", message)
    if MODERN_CONNECTION[0] and isinstance(root, (*LIST_CHANGED, mcp_types.ResourceUpdatedNotification)):
        return  # reported by the listen stream's Subscription
    for kind, name in LIST_CHANGED.items():
        if isinstance(root, kind):
            EVENTS.add({"type": "list_changed", "list": name})
            return
    if isinstance(root, mcp_types.ResourceUpdatedNotification):
        EVENTS.add({"type": "resource_updated", "uri": str(root.params.uri)})
    elif isinstance(root, mcp_types.ProgressNotification) and EVENTS.untokened:
        # The tee of a notification the SDK routed to a call's callback (callbacks are
        # scheduled first, in arrival order); a tee with no callback before it is one the SDK
        # did not route (an unknown token, a finished call) and is not surfaced.
        head = EVENTS.untokened[0]
        if head["progress"] == root.params.progress:
            head["progressToken"] = root.params.progress_token
            EVENTS.untokened.pop(0)


def make_client(config: Config, handlers: dict[str, Any], stack_extras: list[Any]) -> Client:
    common: dict[str, Any] = {
        "read_timeout_seconds": config.timeout_s,
        "mode": connect_mode(config),
        "logging_callback": on_log,
        "message_handler": on_message,
    }
    HANDLERS.clear()
    HANDLERS.update(handlers)
    # Input callbacks (which the SDK declares as capabilities) only for the methods the connect
    # step answers or the plan's inputs answer somewhere, so the capabilities say what this
    # client can really do. The SDK has no way to declare fewer than it does for a callback:
    # roots always with listChanged, elicitation always with both form and url modes.
    methods = planned_input_methods(config.plan) | set(handlers)
    if "elicitation/create" in methods:
        common["elicitation_callback"] = answer_elicitation
    if "sampling/createMessage" in methods:
        common["sampling_callback"] = answer_sampling
    if "roots/list" in methods:
        common["list_roots_callback"] = answer_roots
    if config.transport == "stdio":
        assert config.server_command is not None
        params = StdioServerParameters(command=config.server_command[0], args=config.server_command[1:])
        return Client(params, **common)
    assert config.url is not None
    http_client = make_http_client(config)
    stack_extras.append(http_client)  # a supplied client is not closed by the transport
    return Client(streamable_http_client(config.url, http_client=http_client), **common)


# ---------------------------------------------------------------------------------------------
# Error classification


_members = kit.exception_leaves


def _chain(exc: BaseException) -> list[BaseException]:
    """`exc` and what it was raised from or while handling, nearest first."""
    found: list[BaseException] = []
    todo: list[BaseException] = [exc]
    while todo:
        e = todo.pop(0)
        if any(e is seen for seen in found):
            continue
        found.append(e)
        todo.extend(linked for linked in (e.__cause__, e.__context__) if linked is not None)
    return found



def _refused_input(e: MCPError) -> bool:
    """Whether the SDK raised `e` itself for a refused input request (2026-07-28 input_required).

    The SDK's driver (mcp/client/_input_required.py, `_dispatch_all`) turns the ErrorData an
    input callback returns into an MCPError, the same type as a server's JSON-RPC error; where
    it was raised is what tells the two apart.
    """
    tb = e.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_name == "_dispatch_all" and code.co_filename.endswith("_input_required.py"):
            return True
        tb = tb.tb_next
    return False


def _sdk_http_error(e: MCPError) -> dict[str, Any] | None:
    """The contract's error for an MCPError the SDK's streamable HTTP transport made up itself.

    That transport answers the waiting request with a JSON-RPC error of its own when the HTTP
    exchange fails (client/streamable_http.py). Its fixed wording is the only way to tell these
    from errors the server sent. The HTTP status itself is not kept: only a 404 can be named
    (the SDK words it "Session terminated" or "Not Found"); any other 4xx/5xx without a JSON-RPC
    body becomes -32603 "Server returned an error response", and an unfollowed redirect -32600
    "Redirect to ... not followed". Neither code came from the server and the status is hidden,
    so both are reported as transport_closed (CLIENTS.md, "Adapting a real library").
    """
    text = e.message
    if (e.code, text) in ((INVALID_REQUEST, "Session terminated"), (METHOD_NOT_FOUND, "Not Found")):
        return {"kind": "http_status", "status": 404, "message": f"{text} (the SDK's wording for HTTP 404)"}
    if e.code == INTERNAL_ERROR and text == "Server returned an error response" and oauth.LAST_MCP_STATUS[-1:] in ([401], [403]):
        # An authorization trial's final 401/403, seen by the response hook (make_http_client).
        status = oauth.LAST_MCP_STATUS[-1]
        return {"kind": "http_status", "status": status, "message": f"{text} (HTTP {status}, seen on the wire)"}
    if e.code == INTERNAL_ERROR and text == "Server returned an error response":
        # Any other 4xx/5xx: the SDK keeps no status, so the contract's kind is transport_closed
        # (http_status needs the status; -32603 is the SDK's, not the server's).
        return {"kind": "transport_closed", "message": f"{text} (the SDK does not say which HTTP status)"}
    if e.code == INVALID_REQUEST and text.startswith("Redirect to ") and " not followed" in text:
        # A 3xx the SDK refused to follow (stream_within_origin): the SDK keeps neither the
        # status nor a JSON-RPC error from the server, so -32600 would be invented.
        return {"kind": "transport_closed", "message": f"{text} (the SDK does not say which HTTP status)"}
    if (e.code == INVALID_REQUEST and text.startswith("Unexpected content type:")) or (
        e.code == PARSE_ERROR and text.startswith(("Failed to parse JSON response", "Failed to parse SSE message"))
    ):
        return {"kind": "invalid_response", "message": text}
    if e.code == INVALID_REQUEST and text == "server answered a request with 202 Accepted":
        return {"kind": "invalid_response", "message": text}
    return None


def _classify_one(e: BaseException, *, during_connect: bool, http: bool) -> dict[str, Any] | None:
    """The error object for one exception, judged by its own type first; None if unknown."""
    text = str(e) or type(e).__name__
    if isinstance(e, CallerCancelled):
        return {"kind": "cancelled", "message": text}
    if isinstance(e, StepError):
        return e.to_json()
    if isinstance(e, oauth.OAuthFlowError):
        # The SDK gave up an authorization (its OAuth errors: metadata, registration, state or
        # iss mismatch, a refused token request).
        return {"kind": "auth_failed", "message": f"{type(e).__name__}: {text}"}
    # httpx2 wraps a refused certificate (ssl.SSLCertVerificationError) in ConnectError.
    for linked in _chain(e):
        if isinstance(linked, ssl.SSLError):
            return {"kind": "tls", "message": str(linked) or text}
    if isinstance(e, MCPError) and _refused_input(e):
        # The SDK's input_required driver raised the ErrorData its own input callback (or the
        # adapter's, for a method this step has no answer for) returned: the call failed on an
        # input request the caller could not answer. Its code is the SDK's, not the server's.
        return {"kind": "input_unsupported", "message": e.message}
    if isinstance(e, MCPError):
        if e.code == REQUEST_TIMEOUT and _SDK_TIMEOUT_TEXT.match(e.message):
            return {"kind": "timeout", "message": e.message}
        if e.code == CONNECTION_CLOSED and _SDK_CLOSED_TEXT.match(e.message):
            return {"kind": "transport_closed", "message": e.message}
        if http and (made_up := _sdk_http_error(e)) is not None:
            return made_up
        # Any other MCPError is a JSON-RPC error the server sent.
        kind = "handshake_failed" if during_connect else "protocol_error"
        if during_connect and ERA[0] != "legacy" and e.code in MODERN_ERROR_CODES:
            # It answered server/discover, not initialize: a modern error (-32022 with no
            # version in common is the contract's unsupported_version).
            kind = "unsupported_version" if e.code == -32022 else "protocol_error"
        return {"kind": kind, "code": e.code, "message": e.message}
    if isinstance(e, httpx2.HTTPStatusError):
        return {"kind": "http_status", "status": e.response.status_code, "message": text}
    if isinstance(e, RuntimeError) and text.startswith(
        ("Unsupported protocol version", "No mutually supported modern protocol version")
    ):
        # ClientSession.initialize refuses a negotiated version outside its handshake list.
        return {"kind": "unsupported_version", "message": text}
    if isinstance(e, httpx2.UnsupportedProtocol | httpx2.InvalidURL):
        # The SDK has no URL policy, but its HTTP library refuses a URL it cannot parse or
        # whose scheme is not http/https before connecting: the contract's insecure_url.
        return {"kind": "insecure_url", "message": f"{type(e).__name__}: {text}"}
    if isinstance(e, httpx2.TimeoutException | TimeoutError):
        # The HTTP library's own connect/read timeouts (the SDK configures 30 s / 300 s), or a
        # transport's bounded write giving up: not the per-request timeout, but the closest kind.
        return {"kind": "timeout", "message": f"{type(e).__name__}: {text}"}
    if isinstance(
        e,
        httpx2.TransportError | OSError | anyio.BrokenResourceError | anyio.ClosedResourceError | anyio.EndOfStream,
    ):
        # Refused or dropped connections, unresolvable hosts, a server that could not be
        # spawned: there is no usable connection.
        return {"kind": "transport_closed", "message": f"{type(e).__name__}: {text}"}
    if isinstance(e, pydantic.ValidationError):
        return {"kind": "invalid_response", "message": text}
    if isinstance(e, RuntimeError) and _SDK_SCHEMA_TEXT.match(text):
        # ClientSession.validate_tool_result: the structuredContent does not validate against
        # the tool's outputSchema (or is missing), or the schema itself cannot be evaluated.
        # The SDK raises a bare RuntimeError for these; its fixed wording names the condition.
        return {"kind": "schema_mismatch", "message": text}
    if isinstance(e, RuntimeError):
        # The SDK's other RuntimeErrors on these paths are about the answer's shape: structured
        # content not matching the tool's outputSchema, an unexpected input_required result.
        return {"kind": "invalid_response", "message": text}
    return None


def classify(exc: BaseException, *, during_connect: bool, http: bool) -> dict[str, Any]:
    """Map what the SDK raised to the contract's error object."""
    if (failed := oauth.auth_failure()) is not None:
        # The SDK's OAuth flow failed during this step; the transport dropped that error and
        # reported the request as failed (see oauth.py), so the OAuth error is the cause.
        return failed.to_json()
    members = _members(exc)
    for member in members:
        found = _classify_one(member, during_connect=during_connect, http=http)
        if found is not None:
            return found
    # Not classifiable from the SDK's exception types. The closest kind for "the SDK could not
    # make sense of the exchange" is invalid_response.
    first = members[0] if members else exc
    return {"kind": "invalid_response", "message": f"{type(first).__name__}: {first}"}


# ---------------------------------------------------------------------------------------------
# Results


def dump(model: pydantic.BaseModel) -> Any:
    return model.model_dump(by_alias=True, mode="json", exclude_unset=True)


async def list_all(fetch: Callable[[str | None], Awaitable[Any]], entries: str, key: str) -> dict[str, Any]:
    """Every entry of a listing: `fetch(cursor)` gets one page, its `entries` attribute goes under `key`.

    The SDK lists one page per call and has no list-all helper: this is the loop its users
    write (the kit's paginate with no guards), following nextCursor until it is absent and no
    more (CLIENTS.md: no page cap or cursor or duplicate check the SDK lacks; a server that
    repeats a cursor keeps it going until the trial's deadline).
    """

    async def page(cursor: str | None) -> tuple[list[Any], str | None]:
        result = await fetch(cursor)
        return [dump(entry) for entry in getattr(result, entries)], result.next_cursor

    return {key: await kit.paginate(page)}


async def list_all_tools(client: Client) -> dict[str, Any]:
    return await list_all(lambda c: client.list_tools(cursor=c), "tools", "tools")


async def list_resources(client: Client) -> dict[str, Any]:
    return await list_all(lambda c: client.list_resources(cursor=c), "resources", "resources")


async def list_resource_templates(client: Client) -> dict[str, Any]:
    return await list_all(
        lambda c: client.list_resource_templates(cursor=c), "resource_templates", "resourceTemplates"
    )


async def list_prompts(client: Client) -> dict[str, Any]:
    return await list_all(lambda c: client.list_prompts(cursor=c), "prompts", "prompts")


async def read_resource(client: Client, uri: str) -> dict[str, Any]:
    result = await client.read_resource(uri)
    return {"contents": [kit.resource_as_seen(dump(contents)) for contents in result.contents]}


async def get_prompt(client: Client, name: str, arguments: dict[str, str] | None) -> dict[str, Any]:
    result = await client.get_prompt(name, arguments)
    seen: dict[str, Any] = {}
    if result.description is not None:
        seen["description"] = result.description
    seen["messages"] = [{"role": m.role, "content": kit.content_as_seen(dump(m.content))} for m in result.messages]
    return seen


COMPLETION_REF: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(
    mcp_types.PromptReference | mcp_types.ResourceTemplateReference
)


async def complete(client: Client, step: dict[str, Any]) -> dict[str, Any]:
    # The SDK's complete() takes a typed reference, the argument as a mapping, and of the
    # context only its `arguments` (CompletionContext has nothing else).
    try:
        ref = COMPLETION_REF.validate_python(step.get("ref"))
    except pydantic.ValidationError as e:
        raise StepError("unsupported_op", f"the SDK's complete() takes a ref/prompt or ref/resource reference: {e}") from None
    argument = step.get("argument")
    if not isinstance(argument, dict):
        raise StepError("unsupported_op", f'a complete step needs an "argument" object: {json.dumps(step)}')
    context = step.get("context")
    context_arguments = context.get("arguments") if isinstance(context, dict) else None
    result = await client.complete(ref, argument, context_arguments)
    return dump(result.completion)


async def ping(client: Client) -> dict[str, Any]:
    # Deprecated by the SDK for 2026-07-28 connections ("only works under mode='legacy'"), but
    # not refused: it is sent whatever the era.
    await client.send_ping()
    return {}


LOGGING_LEVEL: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(mcp_types.LoggingLevel)


async def set_logging_level(client: Client, level: Any) -> dict[str, Any]:
    # The SDK's set_logging_level takes only the eight levels of its LoggingLevel literal: the
    # request model refuses any other before anything is sent. That is the SDK's own check (the
    # same type), run here first so the refusal is not mistaken for a bad answer.
    try:
        LOGGING_LEVEL.validate_python(level)
    except pydantic.ValidationError:
        raise StepError(
            "unsupported_op", f"the SDK's set_logging_level cannot send the level {json.dumps(level)}: "
            f"it takes only {', '.join(get_args(mcp_types.LoggingLevel))}"
        ) from None
    await client.set_logging_level(level)
    return {}


async def call_tool(
    client: Client,
    name: str,
    arguments: Any,
    cancel_after_s: float | None,
    answers: dict[str, Any] | None = None,
    progress: bool = False,
) -> dict[str, Any]:
    CURRENT_INPUT.clear()
    CURRENT_INPUT.update(answers or {})
    # The SDK's progress callback: with one, the request carries a progressToken (its own
    # request id) and each notifications/progress for it reaches the callback while in flight.
    on_progress = progress_callback() if progress else None
    try:
        if cancel_after_s is None:
            return kit.tool_result(dump(await client.call_tool(name, arguments, progress_callback=on_progress)))
        result = None
        with anyio.move_on_after(cancel_after_s) as scope:
            result = await client.call_tool(name, arguments, progress_callback=on_progress)
        if scope.cancelled_caught:
            # Cancelling the awaiting task is how an SDK caller cancels; the SDK then sends
            # notifications/cancelled for the request itself.
            raise CallerCancelled(f"cancelled by the caller after {cancel_after_s * 1000:.0f} ms")
        return kit.tool_result(dump(result))
    finally:
        # A step's answers serve its own call only; later server requests get the handlers.
        CURRENT_INPUT.clear()


async def set_roots(client: Client, roots: list[Any]) -> dict[str, Any]:
    HANDLERS["roots/list"] = {"roots": roots}
    # Deprecated by the SDK for 2026-07-28 (the roots capability is gone there), not refused.
    await client.send_roots_list_changed()
    return {}


async def subscribe_resource(client: Client, uri: str, subscribe: bool) -> dict[str, Any]:
    # Like every other verb of the SDK, sent whatever the server declared (see the module
    # docstring): the SDK neither checks resources.subscribe nor do its examples.
    if subscribe:
        await client.subscribe_resource(uri)
    else:
        await client.unsubscribe_resource(uri)
    return {}


LISTEN_FILTER: dict[str, str] = {
    "toolsListChanged": "tools_list_changed",
    "promptsListChanged": "prompts_list_changed",
    "resourcesListChanged": "resources_list_changed",
    "resourceSubscriptions": "resource_subscriptions",
}


def listen_work(connection: "Connection", step: dict[str, Any]) -> Work:
    """`subscriptions/listen` through the SDK's Client.listen(), held open until close.

    Entering Client.listen() sends the request and waits for the server's acknowledgment; the
    subscription is held by a task of the connection's own until the connection ends. What the
    stream delivers is teed to the message_handler like any notification, but `events` reports
    it from the subscription's own iterator: the SDK hands it only the events of this stream
    (by subscriptionId) within the acknowledged filter, coalescing repeats not yet consumed.
    """
    wanted = step.get("notifications")
    if not isinstance(wanted, dict):
        raise StepError("unsupported_op", f'a listen step needs a "notifications" object: {json.dumps(step)}')
    unknown = sorted(set(wanted) - set(LISTEN_FILTER))
    if unknown:
        raise StepError("unsupported_op", f"the SDK's listen() takes no filter member {', '.join(unknown)}")
    kwargs = {LISTEN_FILTER[key]: value for key, value in wanted.items() if value is not None}

    async def work(client: Client) -> dict[str, Any]:
        if client.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            raise StepError("unsupported_op", f"the SDK's listen() needs a 2026-07-28 connection, not {client.protocol_version}")
        background = connection.background
        assert background is not None
        acknowledged: dict[str, Any] = {}
        ready = anyio.Event()
        failure: list[BaseException] = []

        async def hold() -> None:
            try:
                async with client.listen(**kwargs) as subscription:
                    honored = getattr(subscription, "honored", None)
                    if isinstance(honored, pydantic.BaseModel):
                        acknowledged.update(dump(honored))
                    ready.set()
                    async for event in subscription:
                        if (seen := listen_event(event)) is not None:
                            EVENTS.add(seen)
            except Exception as e:  # the listen failed, or the stream was lost later
                if not ready.is_set():
                    failure.append(e)
                else:
                    note(f"the listen stream ended: {type(e).__name__}: {e}")
            finally:
                ready.set()

        background.start_soon(hold)
        await ready.wait()
        if failure:
            raise failure[0]
        return {"notifications": acknowledged}

    return work


# ---------------------------------------------------------------------------------------------
# The connection owner


Work = Callable[[Client], Awaitable[dict[str, Any]]]


@dataclass
class Job:
    work: Work | None  # None: close
    done: anyio.Event = field(default_factory=anyio.Event)
    ok: dict[str, Any] | None = None
    error: dict[str, Any] | None = None

    def finish(self, ok: dict[str, Any] | None = None, error: dict[str, Any] | None = None) -> None:
        if self.done.is_set():
            return
        self.ok, self.error = ok, error
        self.done.set()


class Connection:
    """One SDK client, entered and driven by its own task."""

    def __init__(self, config: Config, handlers: dict[str, Any] | None = None) -> None:
        self.config = config
        self.handlers = handlers or {}
        self.http = config.transport == "http"
        self.send, self.receive = anyio.create_memory_object_stream[Job](1)
        self.current: Job | None = None
        self.finished = anyio.Event()  # the owner task has left the SDK client
        self.background: anyio.abc.TaskGroup | None = None

    async def run(self, connect_job: Job) -> None:
        self.current = connect_job
        during_connect = True
        close_job: Job | None = None
        try:
            async with AsyncExitStack() as stack:
                extras: list[Any] = []
                client = make_client(self.config, self.handlers, extras)
                for extra in extras:
                    await stack.enter_async_context(extra)
                await stack.enter_async_context(client)
                # Tasks that hold a stream open for the connection's life (`listen`); left
                # (cancelled) before the client is.
                self.background = await stack.enter_async_context(anyio.create_task_group())
                stack.callback(self.background.cancel_scope.cancel)
                during_connect = False
                MODERN_CONNECTION[0] = client.protocol_version in MODERN_PROTOCOL_VERSIONS
                info = client.server_info
                ok = {
                    "protocolVersion": client.protocol_version,
                    "serverInfo": dump(info) if info is not None else None,
                }
                if self.config.era != "legacy":
                    # Which era the SDK settled on: a DiscoverResult adopted, or initialize.
                    ok["era"] = "modern" if client.session.discover_result is not None else "legacy"
                connect_job.finish(ok=ok)
                self.current = None
                async with self.receive:
                    async for job in self.receive:
                        self.current = job
                        if job.work is None:
                            close_job = job
                            break
                        try:
                            job.finish(ok=await job.work(client))
                        except Exception as e:  # an SDK error for this step only
                            job.finish(error=classify(e, during_connect=False, http=self.http))
                        self.current = None
            # Leaving the stack closed the SDK client (stdio shutdown, or DELETE over HTTP).
            if close_job is not None:
                close_job.finish(ok={})
        except Exception as e:  # the SDK client failed as a whole (its transport died)
            if self.current is not None:
                self.current.finish(error=classify(e, during_connect=during_connect, http=self.http))
        except BaseException as e:
            if self.current is not None:
                self.current.finish(error=classify(e, during_connect=during_connect, http=self.http))
            raise
        finally:
            if self.current is not None:
                self.current.finish(error={"kind": "transport_closed", "message": "the connection ended"})
            self.finished.set()
            self.send.close()
            # Anything queued after the owner stopped gets an answer too.
            while True:
                try:
                    job = self.receive.receive_nowait()
                except (anyio.WouldBlock, anyio.EndOfStream, anyio.ClosedResourceError):
                    break
                job.finish(error={"kind": "transport_closed", "message": "the connection ended"})

    async def submit(self, job: Job) -> Job:
        if self.finished.is_set():
            job.finish(error={"kind": "transport_closed", "message": "the connection has ended"})
            return job
        try:
            await self.send.send(job)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            job.finish(error={"kind": "transport_closed", "message": "the connection has ended"})
            return job
        # Wait for the answer, or for the owner to stop without picking the job up.
        async with anyio.create_task_group() as tg:

            async def watch_owner() -> None:
                await self.finished.wait()
                job.finish(error={"kind": "transport_closed", "message": "the connection ended"})

            tg.start_soon(watch_owner)
            await job.done.wait()
            tg.cancel_scope.cancel()
        return job

    async def close(self) -> dict[str, Any]:
        if self.finished.is_set():
            # The transport already died; there is nothing left to shut down.
            return {}
        job = await self.submit(Job(work=None))
        await self.finished.wait()
        if job.error is not None:
            raise step_error(job.error)
        return job.ok or {}


# ---------------------------------------------------------------------------------------------
# The plan: each op is handed to the connection's owner task


def step_error(error: dict[str, Any]) -> StepError:
    """The kit's StepError for an error object the owner task classified."""
    return StepError(error["kind"], str(error.get("message", "")), code=error.get("code"), status=error.get("status"))


async def discover(client: Client) -> dict[str, Any]:
    # server/discover as a request of its own (the SDK's public send_discover), at the version
    # the connection uses; a legacy-era connection cannot send it.
    if client.session.discover_result is None:
        raise StepError("unsupported_op", "server/discover is a 2026-07-28 request; this connection is legacy")
    return await client.session.send_discover(client.protocol_version)


class SdkAdapter(kit.Adapter):
    """The plan's ops as jobs for the connection's owner task (see the module docstring)."""
    # `traces`: the SDK makes a CLIENT span per request it sends (mcp.shared._otel, on the
    # OpenTelemetry API) and injects its traceparent into `_meta`; the kit's default
    # setup_traces installs the SDK and the OTLP/HTTP exporter those spans need.
    features = ("roots", "sampling", "elicitation", "oauth", "traces")  # what the kit may ask of the SDK

    def __init__(self, config: Config) -> None:
        super().__init__(config)
        ERA[0] = config.era
        self.connection: Connection | None = None
        self.tasks: anyio.abc.TaskGroup | None = None

    async def lifespan(self, body: Callable[[], Awaitable[None]]) -> None:
        # The owner tasks live in this group, entered by the plan's own task.
        async with anyio.create_task_group() as tasks:
            self.tasks = tasks
            await body()

    def before_step(self, index: int, step: Any) -> None:
        oauth.AUTH_ERRORS.clear()  # an OAuth failure is reported on the step it happened in
        oauth.LAST_MCP_STATUS.clear()

    def limits(self) -> list[str]:
        # The connect line says what the SDK cannot do for this trial (CLIENTS.md, limits).
        return version_limits(self.config)

    def classify(self, exc: BaseException, op: str) -> StepError:
        # Raised in the plan's task, not by an SDK call: an adapter fault, reported and logged.
        logging.getLogger("adapter").error("step %s failed inside the adapter", op, exc_info=exc)
        return step_error(classify(exc, during_connect=op == "connect", http=self.config.transport == "http"))

    async def submit(self, work: Work) -> dict[str, Any]:
        if self.connection is None:
            raise StepError("transport_closed", "there is no connection")
        job = await self.connection.submit(Job(work=work))
        if job.error is not None:
            raise step_error(job.error)
        return job.ok or {}

    async def op_connect(self, step: dict[str, Any]) -> dict[str, Any]:
        assert self.tasks is not None
        candidate = Connection(self.config, step.get("handlers"))
        job = Job(work=None)
        self.tasks.start_soon(candidate.run, job)
        await job.done.wait()
        if job.error is not None:
            await candidate.finished.wait()
            raise step_error(job.error)
        self.connection = candidate
        return job.ok or {}

    async def op_close(self, step: dict[str, Any]) -> dict[str, Any]:
        current, self.connection = self.connection, None
        return await current.close() if current is not None else {}

    async def op_list_tools(self, step: dict[str, Any]) -> dict[str, Any]:
        return await self.submit(list_all_tools)

    async def op_call_tool(self, step: dict[str, Any]) -> dict[str, Any]:
        if step.get("max_timeout_ms") is not None:
            # The SDK's request clock (shared/_request_clock.py) runs from the write to the answer
            # and is never restarted by progress: there is no timeout to reset nor a maximum to cap.
            raise StepError(
                "unsupported_op", "the SDK never restarts a request's timeout on progress, so max_timeout_ms has no meaning"
            )
        cancel = step.get("cancel_after_ms")
        name, arguments, progress = step["name"], step.get("arguments"), step.get("progress", False)
        cancel_after = cancel / 1000 if cancel is not None else None
        answers = step.get("input")
        return await self.submit(lambda client: call_tool(client, name, arguments, cancel_after, answers, progress))

    async def op_list_resources(self, step: dict[str, Any]) -> dict[str, Any]:
        return await self.submit(list_resources)

    async def op_list_resource_templates(self, step: dict[str, Any]) -> dict[str, Any]:
        return await self.submit(list_resource_templates)

    async def op_list_prompts(self, step: dict[str, Any]) -> dict[str, Any]:
        return await self.submit(list_prompts)

    async def op_read_resource(self, step: dict[str, Any]) -> dict[str, Any]:
        return await self.submit(lambda client: read_resource(client, step["uri"]))

    async def op_get_prompt(self, step: dict[str, Any]) -> dict[str, Any]:
        return await self.submit(lambda client: get_prompt(client, step["name"], step.get("arguments")))

    async def op_complete(self, step: dict[str, Any]) -> dict[str, Any]:
        return await self.submit(lambda client: complete(client, step))

    async def op_ping(self, step: dict[str, Any]) -> dict[str, Any]:
        return await self.submit(ping)

    async def op_set_logging_level(self, step: dict[str, Any]) -> dict[str, Any]:
        return await self.submit(lambda client: set_logging_level(client, step["level"]))

    async def op_discover(self, step: dict[str, Any]) -> dict[str, Any]:
        return await self.submit(discover)

    async def op_events(self, step: dict[str, Any]) -> dict[str, Any]:
        return {"events": await EVENTS.take(step.get("min") or 0, self.config.timeout_s)}

    async def op_set_roots(self, step: dict[str, Any]) -> dict[str, Any]:
        return await self.submit(lambda client: set_roots(client, step["roots"]))

    async def op_subscribe_resource(self, step: dict[str, Any]) -> dict[str, Any]:
        return await self.submit(lambda client: subscribe_resource(client, step["uri"], True))

    async def op_unsubscribe_resource(self, step: dict[str, Any]) -> dict[str, Any]:
        return await self.submit(lambda client: subscribe_resource(client, step["uri"], False))

    async def op_listen(self, step: dict[str, Any]) -> dict[str, Any]:
        if self.connection is None:
            raise StepError("transport_closed", "there is no connection")
        return await self.submit(listen_work(self.connection, step))


if __name__ == "__main__":
    # The SDK marks ping and logging/setLevel deprecated for 2026-07-28; the plan asks for them
    # anyway, and the warning would only add noise to the trial's stderr.
    warnings.filterwarnings("ignore", category=MCPDeprecationWarning)
    note("SDK imported")
    kit.run(SdkAdapter)

"""mcp-harness adapter (driver contract 1) for fastmcp's `fastmcp.Client` (PyPI fastmcp 4.1.6).

fastmcp's client sits on the official `mcp` SDK (2.3.0), so its transports, session and typed
results are the SDK's; what fastmcp adds, and what this adapter therefore exercises, is its
`Client`: list-all helpers, `call_tool_mcp` and friends, handler-style callbacks, its own
timeouts, and its connect modes. The contract's plumbing is the Python kit's
(adapters/kits/python/mcp_harness_kit.py); this file is fastmcp's side of each step.

What fastmcp does, as the adapter meets it (the baseline's reasons give the consequences):
- `initialize` always offers the SDK's newest handshake version; a modern version pin sends
  nothing at connect. So the adapter declares `choose_version` when asked for another, and in
  the modern era it sends `server/discover` itself through the public `client.session` (with
  one retry on -32022) and adopts the result: fastmcp's modern-only mode, probing as asked.
- Its list-all helpers (`list_tools()` and the rest) are used as they are: they stop on a
  cursor they saw before and return the shorter list, and never check names.
- No request is gated on the server's capabilities (fastmcp exposes them, its docs do not
  check them first), so no step reports `capability_missing`.
- An elicitation handler always declares both the form and the url mode: the connect line
  declares `choose_elicitation_modes` when the plan does not answer both.
- `resources/subscribe` and `subscriptions/listen` are not on `fastmcp.Client`: they go
  through its public `session` and the SDK's `mcp.client.subscriptions.listen`, as a fastmcp
  user has to.
- A call's `progress_handler` is handed (progress, total, message) only for its own token while
  in flight, without the token; the token is read from the message handler's tee of the same
  notification. The request timeout is never restarted by progress: `max_timeout_ms` is
  unsupported_op.
- Over HTTP fastmcp turns HTTP failures into JSON-RPC errors of its own making; the status is
  read from a response hook on the httpx client that fastmcp's public `httpx_client_factory`
  builds, so `http_status` names the real status, never an invented code.
- Authorization trials (MCP_HARNESS_AUTH_REDIRECT_URI set) use fastmcp's own OAuth helper with
  its browser and callback page replaced by the kit's headless step (oauth.py).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import ssl
import sys
from contextlib import AsyncExitStack
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "kits", "python"))
import mcp_harness_kit as kit  # noqa: E402  (first: its clock starts before fastmcp's slow imports)
from mcp_harness_kit import Config, StepError, note  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oauth  # noqa: E402  (this folder's oauth.py: fastmcp's OAuth helper, headless)

os.environ.setdefault("FASTMCP_LOG_LEVEL", "WARNING")

import httpx2  # noqa: E402
import mcp_types  # noqa: E402
import pydantic  # noqa: E402
from fastmcp import Client  # noqa: E402
from fastmcp.client.elicitation import ElicitResult  # noqa: E402
from fastmcp.client.transports import StdioTransport, StreamableHttpTransport  # noqa: E402
from mcp import MCPError  # noqa: E402
from mcp.client.subscriptions import listen  # noqa: E402
from mcp.shared._httpx_utils import create_mcp_http_client  # noqa: E402
from mcp.shared.subscriptions import PromptsListChanged, ResourcesListChanged, ResourceUpdated, ToolsListChanged  # noqa: E402
from mcp_types.version import LATEST_HANDSHAKE_VERSION, MODERN_PROTOCOL_VERSIONS  # noqa: E402

# Refusals the SDK's default callbacks make up locally when no handler was given (-32600).
LOCAL_REFUSALS = {"Elicitation not supported", "Sampling not supported", "List roots not supported"}
# Messages fastmcp's HTTP transport puts on the JSON-RPC errors it makes up for HTTP failures.
HTTP_MADE_UP = {"Server returned an error response", "Not Found", "Session terminated"}
LEVELS: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(mcp_types.LoggingLevel)
REFERENCE: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(mcp_types.PromptReference | mcp_types.ResourceTemplateReference)


def dump(model: Any) -> Any:
    """A parsed model back to JSON, keeping only what was received (fields set from the wire)."""
    if isinstance(model, pydantic.BaseModel):
        return model.model_dump(by_alias=True, mode="json", exclude_unset=True)
    return pydantic.TypeAdapter(object).dump_python(model, mode="json")


def without_meta(value: Any) -> Any:
    return {k: v for k, v in value.items() if k != "_meta"} if isinstance(value, dict) else value


async def take_time(answer: Any) -> dict[str, Any]:
    """The answer without the caller's own `delay_ms` and `defaults`, after waiting that long."""
    answer = dict(answer) if isinstance(answer, dict) else {}
    delay = answer.pop("delay_ms", None)
    answer.pop("defaults", None)
    if isinstance(delay, int | float) and not isinstance(delay, bool) and delay > 0:
        await asyncio.sleep(delay / 1000)
    return answer


class FastmcpAdapter(kit.Adapter):
    # `traces`: fastmcp's native telemetry (a CLIENT span per Client call, fastmcp.client.telemetry)
    # and, inside it, the mcp SDK's span per request it sends; both on the OpenTelemetry API, so
    # the kit's default setup_traces installs the SDK and the OTLP/HTTP exporter they need.
    features = ("roots", "sampling", "elicitation", "oauth", "traces")  # what the kit may ask of the SDK
    def __init__(self, config: Config) -> None:
        super().__init__(config)
        self.client: Client | None = None
        self.handlers: dict[str, Any] = {}
        self.roots: list[Any] | None = None  # set_roots replaces the handler's roots
        self.step_input: dict[str, Any] | None = None
        self.missing_input: str | None = None
        self.last_status: int | None = None
        self.listen_stack: AsyncExitStack | None = None
        self.discovered: dict[Any, Any] = {}  # dual era over HTTP: origin -> DiscoverResult or None
        self.progress_tee: list[dict[str, Any]] = []  # progress notifications seen, with their token
        self.connect_limits: list[str] = []

    def limits(self) -> list[str]:
        return self.connect_limits

    # ---- what the server starts ----------------------------------------------------------

    async def on_message(self, message: Any) -> None:
        """fastmcp's message_handler: every notification (and transport fault) it sees."""
        if isinstance(message, Exception):
            note(f"fastmcp surfaced a transport error: {type(message).__name__}: {message}")
            return
        params = getattr(message, "params", None)
        if isinstance(message, mcp_types.ProgressNotification):
            self.progress_tee.append(dump(params))
        elif isinstance(message, mcp_types.LoggingMessageNotification):
            event: dict[str, Any] = {"type": "log", "level": params.level, "data": dump(params.data)}
            if "logger" in params.model_fields_set and params.logger is not None:
                event["logger"] = params.logger
            self.events.add(event)
        elif self.modern():
            return  # list changes and updates arrive on listen streams: see op_listen
        elif isinstance(message, mcp_types.ToolListChangedNotification):
            self.events.add({"type": "list_changed", "list": "tools"})
        elif isinstance(message, mcp_types.ResourceListChangedNotification):
            self.events.add({"type": "list_changed", "list": "resources"})
        elif isinstance(message, mcp_types.PromptListChangedNotification):
            self.events.add({"type": "list_changed", "list": "prompts"})
        elif isinstance(message, mcp_types.ResourceUpdatedNotification):
            self.events.add({"type": "resource_updated", "uri": str(params.uri)})

    def modern(self) -> bool:
        try:
            return self.client is not None and self.client.protocol_version in MODERN_PROTOCOL_VERSIONS
        except Exception:  # noqa: BLE001 - not connected yet
            return False

    def answer_for(self, method: str) -> Any:
        if self.step_input and method in self.step_input:
            return self.step_input[method]
        if method == "roots/list" and self.roots is not None:
            return {"roots": self.roots}
        return self.handlers.get(method)

    async def on_roots(self, context: Any) -> list[Any]:
        self.events.add({"type": "request", "method": "roots/list", "params": {}})
        answer = self.answer_for("roots/list")
        if answer is None:
            self.missing_input = "roots/list"
            raise RuntimeError("no answer for roots/list")
        answer = await take_time(answer)
        return [mcp_types.Root.model_validate(root) for root in answer.get("roots", [])]

    async def on_sampling(self, messages: Any, params: Any, context: Any) -> Any:
        self.events.add({"type": "request", "method": "sampling/createMessage", "params": without_meta(dump(params))})
        answer = self.answer_for("sampling/createMessage")
        if answer is None:
            self.missing_input = "sampling/createMessage"
            raise RuntimeError("no answer for sampling/createMessage")
        answer = await take_time(answer)
        try:
            return mcp_types.CreateMessageResult.model_validate(answer)
        except pydantic.ValidationError:
            return mcp_types.CreateMessageResultWithTools.model_validate(answer)

    async def on_elicitation(self, message: str, response_type: Any, params: Any, context: Any) -> Any:
        self.events.add({"type": "request", "method": "elicitation/create", "params": without_meta(dump(params))})
        answer = self.answer_for("elicitation/create")
        mode = getattr(params, "mode", None) or "form"
        if isinstance(answer, dict) and "action" not in answer and ("form" in answer or "url" in answer):
            answer = answer.get(mode)
            if answer is None:  # fastmcp declared this mode; the plan gives no answer for it
                raise ValueError(f"no answer for elicitation mode {mode!r}")
        elif answer is not None and mode != "form" and "elicitation/create" not in (self.step_input or {}):
            raise ValueError(f"a plain elicitation answer is for the form mode, not {mode!r}")
        if answer is None:  # 2026-07-28: an elicitation without an answer is declined
            answer = {"action": "decline"}
        defaults = isinstance(answer, dict) and answer.get("defaults") is True
        answer = await take_time(answer)
        content = answer.get("content")
        if defaults and mode == "form" and answer.get("action") == "accept":
            schema = getattr(params, "requested_schema", None) or {}
            content = dict(content or {})
            for key, prop in (schema.get("properties") or {}).items():
                if isinstance(prop, dict) and "default" in prop and key not in content:
                    content[key] = prop["default"]
        return ElicitResult(action=answer.get("action", "accept"), content=content)

    def on_progress(self) -> Any:
        async def handler(progress: float, total: float | None, message: str | None) -> None:
            # The token is filled in from the tee when events are taken (resolve_progress).
            self.events.add({"type": "progress", "progressToken": None, "progress": progress, "_pending": (total, message, len(self.progress_tee))})

        return handler

    def resolve_progress(self, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Each progress event the handler saw, completed from the tee record it came from."""
        used: set[int] = set()
        out = []
        for event in events:
            pending = event.pop("_pending", None)
            if pending is None:
                out.append(event)
                continue
            total, message, start = pending
            tee = self.progress_tee
            for i in [*range(start, len(tee)), *range(0, min(start, len(tee)))]:
                record = tee[i]
                if i in used or record.get("progress") != event["progress"]:
                    continue
                if record.get("total") != total or record.get("message") != message:
                    continue
                used.add(i)
                event = {"type": "progress", "progressToken": record.get("progressToken"), "progress": record["progress"]}
                event.update({k: record[k] for k in ("total", "message") if k in record})
                break
            else:
                event.update({k: v for k, v in (("total", total), ("message", message)) if v is not None})
            out.append(event)
        self.progress_tee = [r for i, r in enumerate(self.progress_tee) if i not in used]
        return out

    # ---- building the client -------------------------------------------------------------

    def http_factory(self) -> Any:
        async def hook(response: Any) -> None:
            self.last_status = response.status_code

        def factory(headers: Any = None, timeout: Any = None, auth: Any = None, **kwargs: Any) -> Any:
            client = create_mcp_http_client(headers=headers, timeout=timeout, auth=auth)
            client.event_hooks.setdefault("response", []).append(hook)
            return client

        return factory

    def origin(self) -> Any:
        url = httpx2.URL(self.config.url or "")
        return (url.scheme, url.host, url.port)

    def build_client(self, step: dict[str, Any]) -> Client:
        config = self.config
        self.handlers = dict(step.get("handlers") or {})
        self.roots = None
        # Methods some step's input answers need a handler too: fastmcp answers input_required
        # requests through the same callbacks.
        needed = set(self.handlers)
        for other in config.plan:
            if isinstance(other, dict) and isinstance(other.get("input"), dict):
                needed |= set(other["input"])
        kwargs: dict[str, Any] = {}
        if "roots/list" in needed:
            kwargs["roots"] = self.on_roots
        if "sampling/createMessage" in needed:
            kwargs["sampling_handler"] = self.on_sampling
        if "elicitation/create" in needed:
            kwargs["elicitation_handler"] = self.on_elicitation
        if config.transport == "stdio":
            argv = config.server_command or []
            trial = os.environ.get("MCP_HARNESS_TRIAL")
            # fastmcp passes its servers no environment unless told; the argv carries all the fake needs.
            transport: Any = StdioTransport(command=argv[0], args=argv[1:], env={"MCP_HARNESS_TRIAL": trial} if trial else None, keep_alive=False)
        else:
            try:
                # Authorization trials: fastmcp's OAuth helper, headless (oauth.py); else the token.
                auth: Any = oauth.make_auth(config) or config.bearer_token
                transport = StreamableHttpTransport(config.url or "", auth=auth, httpx_client_factory=self.http_factory())
            except ValueError as e:
                raise StepError("insecure_url", str(e)) from None
        if config.era == "legacy":
            mode: Any = "legacy"
        elif config.era == "dual" and config.transport == "http" and self.origin() in self.discovered:
            found = self.discovered[self.origin()]
            mode = "legacy"
            if found is not None:  # the era is cached per origin: no second probe
                mode = [v for v in MODERN_PROTOCOL_VERSIONS if v in found.supported_versions][-1]
                kwargs["prior_discover"] = found
        elif config.era == "modern":
            # fastmcp's modern-only mode is a version pin; the discover is sent in op_connect.
            wanted = config.protocol_version
            mode = wanted if wanted in MODERN_PROTOCOL_VERSIONS else MODERN_PROTOCOL_VERSIONS[-1]
        else:
            mode = "auto"
        if config.era in ("modern", "dual"):
            kwargs["cache"] = True  # fastmcp's ttlMs cache (off by default)
        return Client(transport, timeout=config.timeout_s, init_timeout=config.timeout_s, message_handler=self.on_message, mode=mode, **kwargs)

    def plan_limits(self, step: dict[str, Any]) -> list[str]:
        config, limits = self.config, []
        if config.era == "legacy" and config.protocol_version != LATEST_HANDSHAKE_VERSION:
            limits.append("choose_version")
        if config.era == "dual" and config.legacy_protocol_version != LATEST_HANDSHAKE_VERSION:
            limits.append("choose_version")
        elicitation = (step.get("handlers") or {}).get("elicitation/create")
        wanted = elicitation is not None or any(
            isinstance(s, dict) and "elicitation/create" in (s.get("input") or {}) for s in config.plan
        )
        both = isinstance(elicitation, dict) and "action" not in elicitation and "form" in elicitation and "url" in elicitation
        if wanted and not both and config.protocol_version >= "2025-11-25":
            limits.append("choose_elicitation_modes")
        return limits

    # ---- errors --------------------------------------------------------------------------

    def classify(self, exc: BaseException, op: str) -> StepError | None:
        if (failed := oauth.auth_failure()) is not None:
            # fastmcp's OAuth flow failed during this step; the transport dropped that error
            # and reported the request as failed (oauth.py), so the OAuth error is the cause.
            return failed
        chain = kit.exception_chain(exc)
        text = f"{type(exc).__name__}: {exc}"
        modern = self.config.era != "legacy"
        if self.missing_input and op == "call_tool" and modern:
            method, self.missing_input = self.missing_input, None
            return StepError("input_unsupported", f"no input for {method}: {text}")
        for e in chain:
            if isinstance(e, ssl.SSLCertVerificationError) or (isinstance(e, ssl.SSLError) and "CERTIFICATE" in str(e).upper()):
                return StepError("tls", text)
            if isinstance(e, httpx2.HTTPStatusError):
                return StepError("http_status", text, status=e.response.status_code)
        for e in chain:
            if not isinstance(e, MCPError):
                continue
            code, message = e.error.code, e.error.message or ""
            if modern and code == mcp_types.INVALID_REQUEST and message in LOCAL_REFUSALS and op in ("call_tool", "read_resource", "get_prompt"):
                # The SDK's default callback refused an input request itself: nothing was retried.
                return StepError("input_unsupported", text)
            if (code == mcp_types.REQUEST_TIMEOUT and "timed out" in message) or (code == 408 and message.startswith("Timed out while waiting")):
                return StepError("timeout", text)
            if code == mcp_types.CONNECTION_CLOSED and message in ("Connection closed", "SSE stream ended without a response"):
                return StepError("transport_closed", text)
            if self.config.transport == "http":
                if message.startswith("Redirect to ") and "downgrade" in message:
                    return StepError("insecure_url", text)  # fastmcp names the refused downgrade
                if message.startswith("Redirect to ") or message in HTTP_MADE_UP:
                    if self.last_status and self.last_status >= 300:
                        return StepError("http_status", text, status=self.last_status)
                    return StepError("transport_closed", text)
                if message.startswith(("Failed to parse JSON response", "Unexpected content type")) or message == "server answered a request with 202 Accepted":
                    return StepError("invalid_response", text)
            if message.startswith("Failed to parse SSE message"):
                return StepError("invalid_response", text)
            if op == "connect":
                kind = "unsupported_version" if code == mcp_types.UNSUPPORTED_PROTOCOL_VERSION else "handshake_failed"
                return StepError(kind, text, code=code)
            return StepError("protocol_error", text, code=code)
        for e in chain:
            if isinstance(e, RuntimeError):
                message = str(e)
                if message.startswith(("Unsupported protocol version from the server", "No mutually supported modern protocol version")):
                    return StepError("unsupported_version", text)
                if message.startswith(("Invalid structured content returned by tool", "Invalid schema for tool")) or (
                    "has an output schema but did not return structured content" in message
                ):
                    return StepError("schema_mismatch", text)
                if message.startswith("Client is not connected"):
                    return StepError("transport_closed", text)
                if "logging/setLevel is not available on MCP 2026-07-28" in message:
                    return StepError("capability_missing", text)  # fastmcp refuses it itself
        for e in chain:
            if isinstance(e, httpx2.TimeoutException):
                return StepError("timeout", text)
            if isinstance(e, pydantic.ValidationError):
                return StepError("invalid_response", text)
        common = kit.classify_common(exc)
        if common.kind != "invalid_response" or any(isinstance(e, json.JSONDecodeError | UnicodeDecodeError) for e in chain):
            return common
        # What fastmcp raises beyond these is its transport giving up on the connection.
        return StepError("transport_closed", text)

    # ---- the steps -----------------------------------------------------------------------

    def connected(self) -> Client:
        if self.client is None:
            raise StepError("transport_closed", "there is no connection")
        return self.client

    async def op_connect(self, step: dict[str, Any]) -> dict[str, Any]:
        self.connect_limits = self.plan_limits(step)
        self.events.items.clear()
        self.progress_tee = []
        client = self.build_client(step)
        try:
            await client.__aenter__()
            if self.config.era == "modern":
                await self.discover_modern(client)
        except BaseException:
            try:
                await client.close()
            except Exception as e:  # noqa: BLE001 - the connect's own error is the outcome
                note(f"closing after a failed connect: {type(e).__name__}: {e}")
            raise
        self.client = client
        modern = client.protocol_version in MODERN_PROTOCOL_VERSIONS
        if self.config.era == "dual" and self.config.transport == "http":
            self.discovered[self.origin()] = client.session.discover_result if modern else None
        ok: dict[str, Any] = {"protocolVersion": client.protocol_version, "era": "modern" if modern else "legacy"}
        if client.server_info is not None:
            ok["serverInfo"] = dump(client.server_info)
        return ok

    async def discover_modern(self, client: Client) -> None:
        """server/discover at the version asked for; on -32022 once more at a mutual one; adopt."""
        session = client.session
        try:
            found = await session.send_discover(self.config.protocol_version)
        except MCPError as e:
            data = e.error.data if isinstance(e.error.data, dict) else {}
            mutual = [v for v in MODERN_PROTOCOL_VERSIONS if v in (data.get("supported") or [])]
            if e.error.code != mcp_types.UNSUPPORTED_PROTOCOL_VERSION or not mutual:
                raise
            found = await session.send_discover(mutual[-1])
        session.adopt(mcp_types.DiscoverResult.model_validate(found))

    async def op_close(self, step: dict[str, Any]) -> dict[str, Any]:
        client, self.client = self.client, None
        if self.listen_stack is not None:
            stack, self.listen_stack = self.listen_stack, None
            try:
                await asyncio.wait_for(stack.aclose(), 3)
            except BaseException as e:  # noqa: BLE001 - the stream may already be gone
                note(f"closing the listen stream: {type(e).__name__}: {e}")
        if client is not None:
            await client.close()
        return {}

    async def op_list_tools(self, step: dict[str, Any]) -> dict[str, Any]:
        return {"tools": [dump(t) for t in await self.connected().list_tools()]}

    async def op_list_resources(self, step: dict[str, Any]) -> dict[str, Any]:
        return {"resources": [dump(r) for r in await self.connected().list_resources()]}

    async def op_list_resource_templates(self, step: dict[str, Any]) -> dict[str, Any]:
        return {"resourceTemplates": [dump(r) for r in await self.connected().list_resource_templates()]}

    async def op_list_prompts(self, step: dict[str, Any]) -> dict[str, Any]:
        return {"prompts": [dump(p) for p in await self.connected().list_prompts()]}

    async def op_call_tool(self, step: dict[str, Any]) -> dict[str, Any]:
        client = self.connected()
        if step.get("max_timeout_ms") is not None:
            raise StepError("unsupported_op", "fastmcp never restarts a request's timeout on progress")
        self.step_input = step.get("input")
        extra = {"progress_handler": self.on_progress()} if step.get("progress") else {}
        try:
            call = client.call_tool_mcp(step["name"], step.get("arguments") or {}, **extra)
            cancel = step.get("cancel_after_ms")
            if cancel is None:
                result = await call
            else:
                task = asyncio.ensure_future(call)
                done, _ = await asyncio.wait({task}, timeout=cancel / 1000)
                if task not in done:
                    # Cancelling the awaiting task is how a fastmcp caller cancels; the SDK
                    # underneath sends notifications/cancelled for the request.
                    task.cancel()
                    try:
                        await task
                    except BaseException as e:  # noqa: BLE001 - the cancellation is the outcome
                        note(f"the cancelled call ended with {type(e).__name__}")
                    raise StepError("cancelled", f"cancelled by the caller after {cancel} ms")
                result = task.result()
        finally:
            self.step_input = None
        return kit.tool_result(dump(result))

    async def op_discover(self, step: dict[str, Any]) -> dict[str, Any]:
        client = self.connected()
        if client.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            raise StepError("unsupported_op", "server/discover is a 2026-07-28 request; this connection is legacy")
        return await client.session.send_discover(client.protocol_version)

    async def op_read_resource(self, step: dict[str, Any]) -> dict[str, Any]:
        self.step_input = step.get("input")
        try:
            result = await self.connected().read_resource_mcp(step["uri"])
        finally:
            self.step_input = None
        return {"contents": [kit.resource_as_seen(without_meta(dump(c))) for c in result.contents]}

    async def op_get_prompt(self, step: dict[str, Any]) -> dict[str, Any]:
        self.step_input = step.get("input")
        try:
            result = await self.connected().get_prompt_mcp(step["name"], step.get("arguments"))
        finally:
            self.step_input = None
        seen: dict[str, Any] = {}
        if "description" in result.model_fields_set and result.description is not None:
            seen["description"] = result.description
        seen["messages"] = [{"role": m.role, "content": kit.content_as_seen(dump(m.content))} for m in result.messages]
        return seen

    async def op_complete(self, step: dict[str, Any]) -> dict[str, Any]:
        client = self.connected()
        try:
            ref = REFERENCE.validate_python(step["ref"])
        except pydantic.ValidationError as e:
            raise StepError("unsupported_op", f"fastmcp's complete() takes a ref/prompt or ref/resource reference: {e}") from None
        context = step.get("context")
        arguments = context.get("arguments") if isinstance(context, dict) else None
        return dump(await client.complete(ref=ref, argument=step["argument"], context_arguments=arguments))

    async def op_ping(self, step: dict[str, Any]) -> dict[str, Any]:
        await self.connected().ping()
        return {}

    async def op_set_logging_level(self, step: dict[str, Any]) -> dict[str, Any]:
        client = self.connected()
        try:
            LEVELS.validate_python(step["level"])
        except pydantic.ValidationError:
            raise StepError("unsupported_op", f"fastmcp's set_logging_level takes only its LoggingLevel values, not {json.dumps(step['level'])}") from None
        await client.set_logging_level(step["level"])
        return {}

    async def op_set_roots(self, step: dict[str, Any]) -> dict[str, Any]:
        client = self.connected()
        self.roots = step["roots"]
        await client.send_roots_list_changed()
        return {}

    async def op_subscribe_resource(self, step: dict[str, Any]) -> dict[str, Any]:
        await self.connected().session.subscribe_resource(step["uri"])
        return {}

    async def op_unsubscribe_resource(self, step: dict[str, Any]) -> dict[str, Any]:
        await self.connected().session.unsubscribe_resource(step["uri"])
        return {}

    async def op_listen(self, step: dict[str, Any]) -> dict[str, Any]:
        client = self.connected()
        wanted = step["notifications"]
        stack = AsyncExitStack()
        subscription = await stack.enter_async_context(
            listen(
                client.session,
                tools_list_changed=bool(wanted.get("toolsListChanged")),
                prompts_list_changed=bool(wanted.get("promptsListChanged")),
                resources_list_changed=bool(wanted.get("resourcesListChanged")),
                resource_subscriptions=list(wanted.get("resourceSubscriptions") or ()),
            )
        )
        if self.listen_stack is not None:
            await self.listen_stack.aclose()
        # Events come from the SDK's Subscription, which hands over only this stream's.
        task = asyncio.ensure_future(self.consume(subscription))

        async def stop() -> None:
            task.cancel()
            try:
                await task
            except BaseException:  # noqa: BLE001 - cancelled on purpose
                pass

        stack.push_async_callback(stop)
        self.listen_stack = stack
        return {"notifications": subscription.honored.model_dump(by_alias=True, mode="json", exclude_none=True)}

    async def consume(self, subscription: Any) -> None:
        kinds = {ToolsListChanged: "tools", PromptsListChanged: "prompts", ResourcesListChanged: "resources"}
        try:
            async for event in subscription:
                if isinstance(event, ResourceUpdated):
                    self.events.add({"type": "resource_updated", "uri": event.uri})
                elif type(event) in kinds:
                    self.events.add({"type": "list_changed", "list": kinds[type(event)]})
        except Exception as e:  # noqa: BLE001 - the stream ended; later events cannot come
            note(f"the listen stream ended: {type(e).__name__}: {e}")

    async def op_events(self, step: dict[str, Any]) -> dict[str, Any]:
        taken = await self.events.take(step.get("min") or 0, self.config.timeout_s)
        await asyncio.sleep(0.05)  # let the tee of a progress already handled catch up
        taken, self.events.items = taken + self.events.items, []
        return {"events": self.resolve_progress(taken)}

    def before_step(self, index: int, step: Any) -> None:
        self.last_status = None
        self.missing_input = None
        oauth.AUTH_ERRORS.clear()  # an OAuth failure is reported on the step it happened in


if __name__ == "__main__":
    logging.getLogger("fastmcp").setLevel(logging.WARNING)
    note("fastmcp imported")
    kit.run(FastmcpAdapter)

"""mcp_harness_kit: the plumbing of an mcp-harness adapter (driver contract 1), for Python.

An adapter drives one MCP client library through a plan the harness hands it in environment
variables, and prints one JSON outcome line per step (CLIENTS.md). Most of that is the same
for every library: reading and checking the environment, the step loop and each step's
fields, `sleep`, `unsupported_op` for ops the adapter lacks, `transport_closed` before a
connect and after a close, the silent implicit close, keeping library prints off stdout,
redacting the bearer token and every other secret, naming common transport errors, the
contract's shapes of a listing, a tool result and binary content, and the headless
authorization step of an OAuth trial (`headless_authorize`). This file does that, so an adapter is a subclass
of `Adapter` whose `op_<name>` methods are calls into its library.

It is one file, standard library only, for Python 3.10+: copy it next to your adapter or put
its folder on `sys.path`. Everything is asyncio; libraries built on anyio run under it as is.

    class MyAdapter(kit.Adapter):
        async def op_connect(self, step): ...      # return the ok object, or raise
        async def op_list_tools(self, step): ...
    kit.run(MyAdapter)

An op with no `op_<name>` method is answered `unsupported_op`. Errors a method raises go
through `Adapter.classify` (the adapter's own mapping, first) and then `classify_common`.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
import http.client
import json
import logging
import os
import ssl
import sys
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, TextIO
from urllib.parse import parse_qsl, urljoin, urlsplit

CONTRACT = "1"

try:  # Python 3.11+; on 3.10 no exception is a group
    _GROUP: Any = BaseExceptionGroup
except NameError:  # pragma: no cover
    _GROUP = ()

#: The contract's closed vocabulary of error kinds.
ERROR_KINDS = frozenset(
    """unsupported_version handshake_failed protocol_error tool_error repeated_cursor
    duplicate_tool_name duplicate_name capability_missing schema_mismatch timeout cancelled
    transport_closed invalid_response insecure_url tls http_status unsupported_op
    input_unsupported auth_failed""".split()
)

#: Ops that need no connection: the kit answers them itself (unless the adapter overrides).
CONNECTIONLESS_OPS = frozenset({"connect", "sleep", "events"})


class EnvError(ValueError):
    """The environment does not describe a trial; the message names the variable."""


class StepError(Exception):
    """A step's outcome as one of the contract's error kinds.

    `code` is the JSON-RPC error code when one caused it, `status` the HTTP status for
    `http_status`, `limits` what the connect line declares the library cannot do.
    """

    def __init__(
        self,
        kind: str,
        message: str = "",
        *,
        code: int | None = None,
        status: int | None = None,
        limits: Iterable[str] | None = None,
    ) -> None:
        if kind not in ERROR_KINDS:
            raise ValueError(f"{kind!r} is not an error kind of the contract")
        super().__init__(message or kind)
        self.kind, self.message, self.code, self.status = kind, message or kind, code, status
        self.limits = list(limits or [])

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "message": self.message}
        if self.code is not None:
            out["code"] = self.code
        if self.status is not None:
            out["status"] = self.status
        return out


# ---------------------------------------------------------------------------------------------
# The environment


@dataclass(frozen=True)
class Config:
    """A trial as the harness describes it (CLIENTS.md, "Environment")."""

    transport: str  # "stdio" or "http"
    plan: list[Any]
    timeout_ms: int
    protocol_version: str
    era: str = "legacy"  # "legacy", "modern" or "dual"
    legacy_protocol_version: str = "2025-11-25"
    server_command: list[str] | None = None  # stdio
    url: str | None = None  # http
    ca_file: str | None = None
    bearer_token: str | None = field(default=None, repr=False)
    shutdown_grace_ms: int | None = None
    scenario: str = ""
    auth: AuthConfig | None = None  # set on authorization trials (MCP_HARNESS_AUTH_REDIRECT_URI)
    #: MCP_HARNESS_CLIENT_CREDENTIALS, parsed: a machine client's `client_id`, `method`, and
    #: `client_secret` or `private_key_pem` (with `alg`); its secrets are registered for redaction.
    client_credentials: dict[str, Any] | None = field(default=None, repr=False)
    #: MCP_HARNESS_LOCAL_ORIGINS: loopback origins the user's local policy allows.
    local_origins: tuple[str, ...] = ()
    #: MCP_HARNESS_SERVERS: every server by name ("main" too), each {"argv": [...]} or {"url": ...};
    #: empty unless the case has several servers (CLIENTS.md, "Many servers").
    servers: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: MCP_HARNESS_TRACES=1: a traces trial; export the library's spans over OTLP/HTTP to the
    #: standard OTEL_EXPORTER_OTLP_* variables (CLIENTS.md, "Traces").
    traces: bool = False

    @property
    def timeout_s(self) -> float:
        return self.timeout_ms / 1000


@dataclass(frozen=True)
class AuthConfig:
    """An authorization trial's OAuth client settings (CLIENTS.md, "Authorization").

    Present only when `MCP_HARNESS_AUTH_REDIRECT_URI` is set: configure the library as an
    OAuth client then, and only then. The secret is kept out of `repr` and registered with
    the kit's redaction.
    """

    redirect_uri: str
    client_id: str | None = None
    client_secret: str | None = field(default=None, repr=False)
    client_metadata_url: str | None = None
    #: How the pre-registered client authenticates at the token endpoint, as registered:
    #: `client_secret_basic`, `client_secret_post` or `none` (MCP_HARNESS_AUTH_CLIENT_AUTH_METHOD).
    client_auth_method: str | None = None
    #: The issuer of the authorization server the pre-registered client belongs to
    #: (MCP_HARNESS_AUTH_CLIENT_ISSUER), for a library that binds credentials to an issuer.
    client_issuer: str | None = None


def _required(env: dict[str, str], name: str, expected: str) -> str:
    value = env.get(name)
    if value is None or value == "":
        raise EnvError(f"{name} is not set; expected {expected}")
    return value


def _millis(env: dict[str, str], name: str, *, required: bool) -> int | None:
    text = env.get(name)
    if not text:
        if required:
            raise EnvError(f"{name} is not set; expected a positive integer of milliseconds")
        return None
    try:
        value = int(text.strip())
    except ValueError:
        raise EnvError(f"{name} is {text!r}; expected a positive integer of milliseconds") from None
    if value <= 0:
        raise EnvError(f"{name} is {value}; expected a positive integer of milliseconds")
    return value


def _absolute_url(env: dict[str, str], name: str, schemes: tuple[str, ...]) -> str | None:
    """`name`'s value if it is an absolute URL with one of `schemes` and a host; None when unset."""
    text = env.get(name)
    if not text:
        return None
    parts = urlsplit(text)
    if parts.scheme not in schemes or not parts.hostname:
        expected = " or ".join(f"{s}://" for s in schemes)
        raise EnvError(f"{name} is {text!r}; expected an absolute {expected} URL")
    return text


#: The token endpoint authentication methods a pre-registered client may be registered with.
CLIENT_AUTH_METHODS = ("client_secret_basic", "client_secret_post", "none")


#: How a machine client authenticates (MCP_HARNESS_CLIENT_CREDENTIALS's `method`).
MACHINE_METHODS = ("client_secret_basic", "client_secret_post", "private_key_jwt")


def read_client_credentials(env: dict[str, str]) -> dict[str, Any] | None:
    """MCP_HARNESS_CLIENT_CREDENTIALS, checked (its secrets registered); None when unset."""
    name = "MCP_HARNESS_CLIENT_CREDENTIALS"
    text = env.get(name)
    if not text:
        return None
    try:
        creds = json.loads(text)
    except ValueError:
        raise EnvError(f"{name} is not JSON; expected an object with client_id and method") from None
    if not isinstance(creds, dict) or not isinstance(creds.get("client_id"), str):
        raise EnvError(f"{name}: expected an object with a string client_id")
    if creds.get("method") not in MACHINE_METHODS:
        raise EnvError(f"{name}: method is {creds.get('method')!r}; expected one of {', '.join(MACHINE_METHODS)}")
    needs = "private_key_pem" if creds["method"] == "private_key_jwt" else "client_secret"
    if not isinstance(creds.get(needs), str) or not creds[needs]:
        raise EnvError(f"{name}: {creds['method']} needs a string {needs}")
    if "dpop" in creds and not isinstance(creds["dpop"], bool):
        raise EnvError(f"{name}: dpop must be true or false")
    secret(creds[needs])
    return creds


def read_auth(env: dict[str, str]) -> AuthConfig | None:
    """The authorization variables, checked; None on a trial without authorization."""
    redirect_uri = _absolute_url(env, "MCP_HARNESS_AUTH_REDIRECT_URI", ("http", "https"))
    client_id = env.get("MCP_HARNESS_AUTH_CLIENT_ID") or None
    client_secret = env.get("MCP_HARNESS_AUTH_CLIENT_SECRET") or None
    metadata_url = _absolute_url(env, "MCP_HARNESS_AUTH_CLIENT_METADATA_URL", ("https",))
    method = env.get("MCP_HARNESS_AUTH_CLIENT_AUTH_METHOD") or None
    issuer = _absolute_url(env, "MCP_HARNESS_AUTH_CLIENT_ISSUER", ("https",))
    if issuer is not None and client_id is None:
        raise EnvError("MCP_HARNESS_AUTH_CLIENT_ISSUER is set without MCP_HARNESS_AUTH_CLIENT_ID; expected the issuer of a pre-registered client")
    if method is not None and method not in CLIENT_AUTH_METHODS:
        raise EnvError(f"MCP_HARNESS_AUTH_CLIENT_AUTH_METHOD is {method!r}; expected one of {', '.join(CLIENT_AUTH_METHODS)}")
    if method is not None and client_id is None:
        raise EnvError("MCP_HARNESS_AUTH_CLIENT_AUTH_METHOD is set without MCP_HARNESS_AUTH_CLIENT_ID; expected the method of a pre-registered client")
    if redirect_uri is None:
        extra = [n for n in ("MCP_HARNESS_AUTH_CLIENT_ID", "MCP_HARNESS_AUTH_CLIENT_SECRET", "MCP_HARNESS_AUTH_CLIENT_METADATA_URL") if env.get(n)]
        if extra:
            raise EnvError(f"{extra[0]} is set but MCP_HARNESS_AUTH_REDIRECT_URI is not; expected both on an authorization trial")
        return None
    if client_secret is not None and client_id is None:
        raise EnvError("MCP_HARNESS_AUTH_CLIENT_SECRET is set without MCP_HARNESS_AUTH_CLIENT_ID; expected the id with its secret")
    if client_secret is not None:
        secret(client_secret)
    return AuthConfig(redirect_uri, client_id, client_secret, metadata_url, method, issuer)


def read_local_origins(env: dict[str, str]) -> tuple[str, ...]:
    """`MCP_HARNESS_LOCAL_ORIGINS`: space-separated origins (`https://localhost:PORT`), checked."""
    origins = []
    for origin in (env.get("MCP_HARNESS_LOCAL_ORIGINS") or "").split():
        parts = urlsplit(origin)
        if parts.scheme not in ("http", "https") or not parts.hostname or parts.path not in ("", "/") or parts.query or parts.fragment:
            raise EnvError(f"MCP_HARNESS_LOCAL_ORIGINS has {origin!r}; expected space-separated origins such as https://localhost:8443")
        origins.append(origin.rstrip("/"))
    return tuple(origins)


def read_servers(env: dict[str, str]) -> dict[str, dict[str, Any]]:
    """`MCP_HARNESS_SERVERS`: a JSON object from server name to {"argv": [strings]} or {"url": string}."""
    text = env.get("MCP_HARNESS_SERVERS")
    if not text:
        return {}
    expected = 'a JSON object from server name to {"argv": [strings]} or {"url": string}'
    try:
        servers = json.loads(text)
    except json.JSONDecodeError:
        servers = None
    if not isinstance(servers, dict):
        raise EnvError(f"MCP_HARNESS_SERVERS is {text!r}; expected {expected}")
    for name, entry in servers.items():
        argv, url = (entry.get("argv"), entry.get("url")) if isinstance(entry, dict) else (None, None)
        good_argv = isinstance(argv, list) and argv and all(isinstance(a, str) for a in argv)
        if not ((good_argv and url is None) or (isinstance(url, str) and argv is None)):
            raise EnvError(f"MCP_HARNESS_SERVERS: server {name!r} is {json.dumps(entry)}; expected {expected}")
    return servers


def read_env(env: dict[str, str] | None = None, argv: list[str] | None = None) -> Config:
    """The trial's Config from `env` (default os.environ); raises EnvError naming the variable."""
    env = dict(os.environ if env is None else env)
    argv = sys.argv[1:] if argv is None else argv
    contract = _required(env, "MCP_HARNESS_CONTRACT", '"1"')
    if contract != CONTRACT:
        raise EnvError(f"MCP_HARNESS_CONTRACT is {contract!r}; this kit implements contract {CONTRACT}")
    transport = _required(env, "MCP_HARNESS_TRANSPORT", '"stdio" or "http"')
    if transport not in ("stdio", "http"):
        raise EnvError(f'MCP_HARNESS_TRANSPORT is {transport!r}; expected "stdio" or "http"')
    plan_text = _required(env, "MCP_HARNESS_PLAN", "a JSON array of steps")
    try:
        plan = json.loads(plan_text)
    except json.JSONDecodeError as e:
        raise EnvError(f"MCP_HARNESS_PLAN is not JSON ({e}); expected a JSON array of steps") from None
    if not isinstance(plan, list):
        raise EnvError(f"MCP_HARNESS_PLAN is a JSON {type(plan).__name__}; expected a JSON array of steps")
    era = env.get("MCP_HARNESS_ERA") or "legacy"
    if era not in ("legacy", "modern", "dual"):
        raise EnvError(f'MCP_HARNESS_ERA is {era!r}; expected "legacy", "modern" or "dual"')
    server_command = url = None
    if transport == "stdio":
        text = _required(env, "MCP_HARNESS_SERVER_COMMAND", "a JSON array of strings (the server's argv)")
        try:
            server_command = json.loads(text)
        except json.JSONDecodeError:
            server_command = None
        if not (isinstance(server_command, list) and server_command and all(isinstance(a, str) for a in server_command)):
            raise EnvError(f"MCP_HARNESS_SERVER_COMMAND is {text!r}; expected a non-empty JSON array of strings")
    else:
        # The variable wins; the harness also passes the URL as the last argument.
        url = env.get("MCP_HARNESS_SERVER_URL") or (argv[-1] if argv else None)
        if not url:
            raise EnvError("MCP_HARNESS_SERVER_URL is not set and no URL argument was given; expected the MCP endpoint")
    timeout_ms = _millis(env, "MCP_HARNESS_TIMEOUT_MS", required=True)
    assert timeout_ms is not None
    return Config(
        transport=transport,
        plan=plan,
        timeout_ms=timeout_ms,
        protocol_version=_required(env, "MCP_HARNESS_PROTOCOL_VERSION", "a protocol version such as 2025-11-25"),
        era=era,
        legacy_protocol_version=env.get("MCP_HARNESS_LEGACY_PROTOCOL_VERSION") or "2025-11-25",
        server_command=server_command,
        url=url,
        ca_file=env.get("MCP_HARNESS_CA_FILE") or None,
        bearer_token=env.get("MCP_HARNESS_BEARER_TOKEN") or None,
        shutdown_grace_ms=_millis(env, "MCP_HARNESS_SHUTDOWN_GRACE_MS", required=False),
        scenario=env.get("MCP_HARNESS_SCENARIO", ""),
        auth=read_auth(env),
        client_credentials=read_client_credentials(env),
        local_origins=read_local_origins(env),
        servers=read_servers(env),
        traces=env.get("MCP_HARNESS_TRACES") == "1",
    )


# ---------------------------------------------------------------------------------------------
# Steps: the fields each op takes (CLIENTS.md, "Plan steps"); a malformed step is unsupported_op


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


_CHECKS: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "boolean": lambda v: isinstance(v, bool),
    "ms": _is_int,
    "any": lambda v: True,
    # connect's trace_context: {traceparent, tracestate?, baggage?}, strings (CLIENTS.md § Trace context)
    "trace": lambda v: isinstance(v, dict) and isinstance(v.get("traceparent"), str)
    and all(isinstance(v.get(k), (str, type(None))) for k in ("tracestate", "baggage")),
}

# op -> {field: (type, required)}
STEP_FIELDS: dict[str, dict[str, tuple[str, bool]]] = {
    "connect": {"handlers": ("object", False), "tasks": ("array", False), "trace_context": ("trace", False)},
    "call_tool": {
        "name": ("string", True),
        "arguments": ("object", False),
        "cancel_after_ms": ("ms", False),
        "progress": ("boolean", False),
        "max_timeout_ms": ("ms", False),
        "input": ("object", False),
        "task": ("object", False),
        "background": ("boolean", False),
    },
    "get_task": {"task_id": ("string", True)},
    "cancel_task": {"task_id": ("string", True)},
    "task_result": {"task_id": ("string", True)},
    "list_tasks": {},
    "read_resource": {"uri": ("string", True)},
    "subscribe_resource": {"uri": ("string", True)},
    "unsubscribe_resource": {"uri": ("string", True)},
    "get_prompt": {"name": ("string", True), "arguments": ("object", False)},
    "complete": {"ref": ("object", True), "argument": ("object", True), "context": ("object", False)},
    "set_logging_level": {"level": ("any", True)},
    "sleep": {"ms": ("ms", True)},
    "events": {"min": ("ms", False)},
    "set_roots": {"roots": ("array", True)},
    "listen": {"notifications": ("object", True)},
    "together": {"steps": ("array", True)},
}

# Ops that cannot run inside `together` (they are not requests of the open connection).
NOT_TOGETHER = frozenset({"connect", "close", "sleep", "events", "together"})


def check_step(step: Any) -> str:
    """The step's op, after checking its fields; raises StepError(unsupported_op) naming the field."""
    if not isinstance(step, dict) or not isinstance(step.get("op"), str):
        raise StepError("unsupported_op", f'a step must be an object with a string "op": {json.dumps(step)}')
    op = step["op"]
    for name, (kind, required) in STEP_FIELDS.get(op, {}).items():
        value = step.get(name)
        if value is None:
            if required:
                raise StepError("unsupported_op", f'a {op} step needs "{name}" ({kind}): {json.dumps(step)}')
        elif not _CHECKS[kind](value):
            expected = {"ms": "a non-negative integer", "trace": "an object of strings {traceparent, tracestate?, baggage?}"}.get(kind, f"a JSON {kind}")
            raise StepError("unsupported_op", f'the {op} step\'s "{name}" must be {expected}: {json.dumps(step)}')
    return op


# ---------------------------------------------------------------------------------------------
# Errors


def exception_leaves(exc: BaseException) -> list[BaseException]:
    """`exc`, or the members of an exception group, flattened."""
    if isinstance(exc, _GROUP):
        return [leaf for member in exc.exceptions for leaf in exception_leaves(member)]
    return [exc]


def exception_chain(exc: BaseException) -> list[BaseException]:
    """`exc`, what it was raised from or while handling, and group members, nearest first."""
    found: list[BaseException] = []
    todo: list[BaseException] = [exc]
    while todo:
        e = todo.pop(0)
        if any(e is seen for seen in found):
            continue
        found.append(e)
        if isinstance(e, _GROUP):
            todo.extend(e.exceptions)
        todo.extend(linked for linked in (e.__cause__, e.__context__) if linked is not None)
    return found


def http_status_of(exc: BaseException) -> int | None:
    """The non-success HTTP status an exception carries (httpx/requests style
    `response.status_code`); a 2xx answer the library refused is not an HTTP status error."""
    for candidate in (exc, getattr(exc, "response", None)):
        status = getattr(candidate, "status_code", None)
        if isinstance(status, int) and 300 <= status <= 599:
            return status
    return None


def classify_common(exc: BaseException) -> StepError:
    """The contract's kind for errors any library may raise; invalid_response when unknown.

    Refused certificates are `tls`, timeouts `timeout`, an error carrying an HTTP status
    `http_status`, refused or dropped connections and a dead child `transport_closed`,
    undecodable answers `invalid_response`.
    """
    chain = exception_chain(exc)
    for e in chain:
        if isinstance(e, StepError):
            return e
    for e in chain:
        if isinstance(e, ssl.SSLCertVerificationError | ssl.SSLError):
            return StepError("tls", f"{type(e).__name__}: {e}")
    for e in chain:
        if (status := http_status_of(e)) is not None:
            return StepError("http_status", f"{type(e).__name__}: {e}", status=status)
    for e in chain:
        if isinstance(e, TimeoutError | asyncio.TimeoutError):
            return StepError("timeout", f"{type(e).__name__}: {e}")
    for e in chain:
        if isinstance(e, json.JSONDecodeError | UnicodeDecodeError):
            return StepError("invalid_response", f"{type(e).__name__}: {e}")
    for e in chain:
        if isinstance(e, ConnectionError | EOFError | OSError):
            return StepError("transport_closed", f"{type(e).__name__}: {e}")
    return StepError("invalid_response", f"{type(exc).__name__}: {exc}")


#: Every secret the kit knows: the bearer token, the client secret, and whatever the adapter
#: registered with `secret` (tokens, codes, a registered client's secret as its library hands
#: them over). Each is replaced in outcome lines, notes and log records.
_SECRETS: set[str] = set()


def secret(value: str | None) -> str | None:
    """Registers `value` as a secret to redact from everything the kit prints; returns it.

    Call it with every token, code or client secret your library lets you see (a token
    storage's `set_tokens`, a registration callback): the harness fails a trial whose output
    shows one.
    """
    if value:
        _SECRETS.add(value)
    return value


def redact(text: str, extra: str | None = None) -> str:
    """`text` with every registered secret (and `extra`) replaced by `[redacted]`."""
    text = str(text)
    for value in sorted(_SECRETS | ({extra} if extra else set()), key=len, reverse=True):
        text = text.replace(value, "[redacted]")
    return text


def _redact_json(value: Any, extra: str | None = None) -> Any:
    """`value` with every string in it (keys too) redacted."""
    if isinstance(value, str):
        return redact(value, extra)
    if isinstance(value, dict):
        return {redact(k, extra): _redact_json(v, extra) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact_json(v, extra) for v in value]
    return value


# ---------------------------------------------------------------------------------------------
# Authorization: the user's part, headless (CLIENTS.md, "Authorization")


def _authorization_get(url: str, ca_file: str | None, timeout_s: float) -> tuple[int, str | None]:
    parts = urlsplit(url)
    target = parts.path or "/"
    if parts.query:
        target += "?" + parts.query
    if parts.scheme == "https":
        context = ssl.create_default_context(cafile=ca_file) if ca_file else ssl.create_default_context()
        conn: http.client.HTTPConnection = http.client.HTTPSConnection(parts.hostname or "", parts.port, timeout=timeout_s, context=context)
    elif parts.scheme == "http":
        conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=timeout_s)
    else:
        raise StepError("auth_failed", f"the authorization URL's scheme {parts.scheme!r} cannot be opened")
    try:
        conn.request("GET", target, headers={"Accept": "text/html"})
        response = conn.getresponse()
        response.read()
        return response.status, response.getheader("Location")
    finally:
        conn.close()


async def headless_authorize(url: str, ca_file: str | None = None, timeout_s: float = 10.0) -> str:
    """The user's part of an authorization, without a browser: GETs the authorization URL
    (trusting `ca_file`, the run's CA, when given), never follows a redirect, and returns the
    redirect's `Location` (made absolute), the URL a browser would have been sent to.

    Hand that URL to the library's callback handling as is: the library, not the adapter,
    checks `state` and `iss`. A non-redirect answer, a redirect without `Location`, or an
    endpoint that cannot be reached raises StepError("auth_failed").
    """
    try:
        status, location = await asyncio.to_thread(_authorization_get, url, ca_file, timeout_s)
    except StepError:
        raise
    except (OSError, http.client.HTTPException) as e:
        raise StepError("auth_failed", f"the authorization endpoint could not be reached: {type(e).__name__}: {e}") from e
    if not 300 <= status <= 399:
        raise StepError("auth_failed", f"the authorization endpoint answered {status}, not a redirect")
    if not location:
        raise StepError("auth_failed", f"the authorization endpoint answered {status} without a Location")
    return urljoin(url, location)


def callback_params(location: str) -> dict[str, str]:
    """The query parameters of a redirect (`code`, `state`, `iss`, or `error`,
    `error_description`, `state`), first value of each, as a callback handler reads them.
    Parsing only: no value is checked."""
    params: dict[str, str] = {}
    for name, value in parse_qsl(urlsplit(location).query, keep_blank_values=True):
        params.setdefault(name, value)
    return params


# ---------------------------------------------------------------------------------------------
# Shapes of the contract


def decoded(data: Any, where: str) -> dict[str, Any]:
    """`{"bytes": N, "sha256": H}` of base64 `data` (RFC 4648: standard alphabet, canonical
    padding, no whitespace); anything else is invalid_response naming `where`."""
    if not isinstance(data, str):
        raise StepError("invalid_response", f"{where} is not a base64 string")
    try:
        raw = binascii.a2b_base64(data.encode("ascii"), strict_mode=True)
    except (binascii.Error, UnicodeEncodeError, ValueError) as e:
        raise StepError("invalid_response", f"{where} is not valid base64: {e}") from None
    if base64.b64encode(raw).decode("ascii") != data:
        raise StepError("invalid_response", f"{where} is not canonical base64")
    return {"bytes": len(raw), "sha256": hashlib.sha256(raw).hexdigest()}


def resource_as_seen(contents: Any) -> dict[str, Any]:
    """Resource contents as seen: `text` kept, `blob` as bytes and sha256 (text wins)."""
    if not isinstance(contents, dict):
        raise StepError("invalid_response", f"resource contents are not an object: {contents!r}")
    seen: dict[str, Any] = {"uri": contents.get("uri")}
    if "mimeType" in contents:
        seen["mimeType"] = contents["mimeType"]
    if "text" in contents:
        seen["text"] = contents["text"]
    elif "blob" in contents:
        seen.update(decoded(contents["blob"], f"the blob of {contents.get('uri')}"))
    else:
        raise StepError("invalid_response", f"resource contents of {contents.get('uri')} have neither text nor blob")
    return seen


def content_as_seen(block: Any) -> dict[str, Any]:
    """One content block as seen (CLIENTS.md, "Content as seen"); `_meta` dropped."""
    if not isinstance(block, dict):
        raise StepError("invalid_response", f"a content block is not an object: {block!r}")
    kind = block.get("type")
    if kind == "resource_link":
        return {k: v for k, v in block.items() if k != "_meta"}
    if kind == "text":
        seen: dict[str, Any] = {"type": "text", "text": block.get("text")}
    elif kind in ("image", "audio"):
        seen = {"type": kind}
        if "mimeType" in block:
            seen["mimeType"] = block["mimeType"]
        seen.update(decoded(block.get("data"), f"the {kind} block's data"))
    elif kind == "resource":
        seen = {"type": "resource", "resource": resource_as_seen(block.get("resource"))}
    else:
        raise StepError("invalid_response", f"a content block of unknown type {kind!r}")
    if block.get("annotations") is not None:
        seen["annotations"] = block["annotations"]
    return seen


def tool_result(result: dict[str, Any]) -> dict[str, Any]:
    """A `tools/call` result (as JSON) as the call_tool ok object; isError is tool_error."""
    content = result.get("content") or []
    if not isinstance(content, list):
        raise StepError("invalid_response", "the tool result's content is not an array")
    texts = [b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text"]
    if result.get("isError") is True:
        raise StepError("tool_error", "\n".join(t for t in texts if isinstance(t, str)) or "the tool reported an error")
    seen = [content_as_seen(b) for b in content]
    if result.get("structuredContent") is not None:
        return {"structured": result["structuredContent"], "content": seen}
    return {"text": texts, "content": seen}


Page = tuple[list[Any], "str | None"]


async def paginate(
    fetch: Callable[[str | None], Awaitable[Page]],
    *,
    unique_by: str | None = None,
    duplicate_kind: str = "duplicate_name",
    reject_repeated_cursor: bool = False,
    max_pages: int | None = None,
) -> list[Any]:
    """Every entry of a listing: `fetch(cursor)` returns one page's (entries, nextCursor).

    Follows nextCursor until it is absent or null (an empty string is a cursor, sent back as
    is). The guards are off by default, because CLIENTS.md asks an adapter to add none its
    library lacks (a loop that meets a repeated cursor then runs until the trial's deadline):
    turn on the ones the library has, `reject_repeated_cursor`, `unique_by` (the member that
    names an entry: `name`, `uri`, `uriTemplate`; a repeat raises `duplicate_kind`) and
    `max_pages` (past it, invalid_response: an error, never a shorter list).
    """
    entries: list[Any] = []
    sent: set[str] = set()
    names: set[Any] = set()
    cursor: str | None = None
    pages = 0
    while True:
        if max_pages is not None and pages >= max_pages:
            raise StepError("invalid_response", f"the listing did not end within {max_pages} pages")
        page, cursor = await fetch(cursor)
        pages += 1
        for entry in page:
            if unique_by is not None and isinstance(entry, dict):
                key = entry.get(unique_by)
                if key in names:
                    raise StepError(duplicate_kind, f"the listing named {key!r} twice")
                names.add(key)
            entries.append(entry)
        if cursor is None:
            return entries
        if reject_repeated_cursor:
            if cursor in sent:
                raise StepError("repeated_cursor", f"the cursor {cursor!r} was already sent in this listing")
            sent.add(cursor)


class Events:
    """What the library surfaced to its caller since the last `events` step, in order."""

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []
        self._arrived: asyncio.Event | None = None

    def add(self, event: dict[str, Any]) -> None:
        self.items.append(event)
        if self._arrived is not None:
            self._arrived.set()

    async def take(self, at_least: int, timeout_s: float) -> list[dict[str, Any]]:
        """Waits (at most `timeout_s`) for `at_least` events, then hands over all of them."""
        deadline = time.monotonic() + timeout_s
        while len(self.items) < at_least and (left := deadline - time.monotonic()) > 0:
            self._arrived = asyncio.Event()
            try:
                await asyncio.wait_for(self._arrived.wait(), left)
            except asyncio.TimeoutError:
                break
            finally:
                self._arrived = None
        taken, self.items = self.items, []
        return taken


# ---------------------------------------------------------------------------------------------
# The plan


# The features an adapter declares its library has, and the server request each answers
# (`oauth` answers none: it is an authorization trial's connect; nor does `tasks`: it is the
# task steps of CLIENTS.md § Tasks; nor `many_servers`: a step naming another `server`, and
# `exposed_tools`). Sampling with tools (an answer with tool_use content, or a rejection) and URL
# consent (a url answer saying `browser`) are values of the answers: see `uses_sampling_tools`,
# `plays_browser`. Nor does `client_credentials`: it is a machine-to-machine trial's connect;
# nor `dpop`: such a connect whose credentials say `"dpop": true`; nor `traces`: every connect of
# a traces trial (MCP_HARNESS_TRACES=1).
FEATURES = {"roots": "roots/list", "sampling": "sampling/createMessage", "elicitation": "elicitation/create", "oauth": None, "tasks": None, "task_receiver": None,
            "sampling_tools": None, "url_consent": None,
            "many_servers": None, "trace_context": None, "icons": None,
            "client_credentials": None,
            "dpop": None, "traces": None}

#: The server a step without `server` is about (CLIENTS.md, "Many servers").
MAIN_SERVER = "main"


def server_of(step: Any) -> str:
    """The server `step` is about: its `server`, else the main one."""
    server = step.get("server") if isinstance(step, dict) else None
    return server if isinstance(server, str) else MAIN_SERVER


#: The ops about a task that exists already (CLIENTS.md § Tasks): each needs the `tasks` feature.
TASK_OPS = frozenset({"get_task", "cancel_task", "task_result", "list_tasks"})


def needs_tasks(step: dict[str, Any]) -> bool:
    """Whether `step` is a task step: a task op, or a call_tool with `task` or `background: true`."""
    op = step.get("op")
    return op in TASK_OPS or (op == "call_tool" and (step.get("task") is not None or step.get("background") is True))


def uses_sampling_tools(answers: dict[str, Any]) -> bool:
    """Whether the sampling answer is a model using tools (`tool_use` content) or a rejection."""
    answer = answers.get("sampling/createMessage")
    if not isinstance(answer, dict):
        return False
    content = answer.get("content")
    blocks = content if isinstance(content, list) else [content]
    return answer.get("rejected") is True or any(isinstance(b, dict) and b.get("type") == "tool_use" for b in blocks)


def plays_browser(answers: dict[str, Any]) -> bool:
    """Whether the elicitation's `url` answer says `browser: true` (the caller is the browser)."""
    answer = answers.get("elicitation/create")
    return isinstance(answer, dict) and isinstance(answer.get("url"), dict) and answer["url"].get("browser") is True


def undeclared(step: dict[str, Any], config: Config, declared: Iterable[str]) -> list[str]:
    """The features `step` needs that `declared` leaves out: a connect's `handlers` or a
    call_tool's `input` answering a server request, a connect on an authorization trial, or
    a task step."""
    op = step.get("op")
    answers = step.get("handlers") if op == "connect" else step.get("input") if op == "call_tool" else None
    answers = answers if isinstance(answers, dict) else {}
    needed = [name for name, method in FEATURES.items() if method is not None and method in answers]
    if op == "connect" and config.client_credentials is not None:
        needed.append("client_credentials")
    elif op == "connect" and config.auth is not None:
        needed.append("oauth")
    if op == "connect" and (config.client_credentials or {}).get("dpop") is True:
        needed.append("dpop")
    if needs_tasks(step):
        needed.append("tasks")
    if op == "connect" and step.get("tasks"):
        needed.append("task_receiver")
    if uses_sampling_tools(answers):
        needed.append("sampling_tools")
    if plays_browser(answers):
        needed.append("url_consent")
    if op == "exposed_tools" or server_of(step) != MAIN_SERVER:
        needed.append("many_servers")
    if op == "connect" and step.get("trace_context") is not None:
        needed.append("trace_context")
    if op == "fetch_icons":
        needed.append("icons")
    if op == "connect" and config.traces:
        needed.append("traces")
    return [name for name in needed if name not in set(declared)]


def install_otlp_tracing() -> Callable[[], None]:
    """Installs the OpenTelemetry SDK as the global tracer provider, its spans batched to an
    OTLP/HTTP exporter that reads the standard OTEL_* variables (endpoint, service name,
    sampler, batch delay); returns what flushes and shuts it down.

    Needs `opentelemetry-sdk` and `opentelemetry-exporter-otlp-proto-http` (imported here, so
    the kit itself keeps no dependency). Python's OpenTelemetry has no OTLP/HTTP JSON
    exporter: with OTEL_EXPORTER_OTLP_PROTOCOL=http/json it sends protobuf, and says so."""
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    protocol = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL")
    if protocol not in (None, "", "http/protobuf"):
        note(f"OTEL_EXPORTER_OTLP_PROTOCOL is {protocol!r}; Python's OTLP/HTTP exporter sends http/protobuf")
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    return provider.shutdown


class Adapter:
    """Base of an adapter: define `async def op_<op>(self, step) -> dict` for each op you do.

    `op_connect` returns the connect ok object; `op_close` ends the connection (the kit calls
    it for the implicit close too, and before a second connect). `features` names what of
    `FEATURES` the library has (roots, sampling, elicitation, oauth, tasks): a step that needs
    another is answered unsupported_op, so its trial grades unimplemented, not fail (none
    declared leaves all such trials unimplemented, which fails a run as a failure does).
    `limits()` names what the library cannot do (the connect line's `limits`);
    `classify(exc, op)` maps the library's own errors and returns None for those the kit's
    common mapping should name.
    """

    features: Iterable[str] = ()

    def __init__(self, config: Config) -> None:
        self.config = config
        self.events = Events()

    def limits(self) -> list[str]:
        return []

    def classify(self, exc: BaseException, op: str) -> StepError | None:
        return None

    def setup_traces(self) -> Callable[[], None] | None:
        """With the `traces` feature, on a traces trial: installs the library's tracing, once,
        before the first step, and returns what flushes and shuts it down (the kit calls it
        before the process exits). The default installs the OpenTelemetry SDK with an OTLP/HTTP
        exporter (`install_otlp_tracing`); override it when the library needs more."""
        return install_otlp_tracing()

    def before_step(self, index: int, step: Any) -> None:
        """Called before each step (reset per-step bookkeeping here)."""

    async def op_sleep(self, step: dict[str, Any]) -> dict[str, Any]:
        await asyncio.sleep(step["ms"] / 1000)
        return {}

    async def op_events(self, step: dict[str, Any]) -> dict[str, Any]:
        return {"events": await self.events.take(step.get("min") or 0, self.config.timeout_s)}

    async def op_close(self, step: dict[str, Any]) -> dict[str, Any]:
        return {}

    async def op_together(self, step: dict[str, Any]) -> dict[str, Any]:
        """Starts the steps at once (their `op_` methods, gathered) and reports each one's
        outcome in the order given: `{"steps": [{"ok": …} | {"error": {…}}, …]}`."""

        async def one(inner: Any) -> dict[str, Any]:
            op = inner.get("op") if isinstance(inner, dict) else None
            try:
                op = check_step(inner)
                method = None if op in NOT_TOGETHER else getattr(self, f"op_{op}", None)
                if method is None:
                    raise StepError("unsupported_op", f"this adapter does not do {op} inside together")
                lacking = undeclared(inner, self.config, self.features)
                if lacking:
                    raise StepError("unsupported_op", f"this adapter does not declare the feature {', '.join(lacking)} (the kit's features)")
                return {"ok": await method(inner)}
            except Exception as e:  # noqa: BLE001 - every failure is the inner step's outcome
                error = self.classify(e, op) if not isinstance(e, StepError) else None
                error = error or classify_common(e)
                out = error.to_json()
                out["message"] = str(out["message"])[:2000]
                return {"error": out}

        return {"steps": list(await asyncio.gather(*(one(inner) for inner in step["steps"])))}

    async def lifespan(self, body: Callable[[], Awaitable[None]]) -> None:
        """Runs the whole plan (`await body()`); override to hold a task group around it."""
        await body()


class Output:
    """Outcome lines on the real stdout, the token redacted from every message."""

    def __init__(self, stream: TextIO, secret: str | None) -> None:
        self.stream, self.secret = stream, secret

    def line(self, index: int, op: Any, ok: Any = None, error: StepError | None = None, limits: list[str] | None = None) -> dict[str, Any]:
        record: dict[str, Any] = {"step": index, "op": op}
        if error is not None:
            record["error"] = error.to_json()
            record["error"]["message"] = redact(str(record["error"]["message"]), self.secret)[:2000]
        else:
            record["ok"] = ok if ok is not None else {}
        if limits:
            record["limits"] = limits
        record = _redact_json(record, self.secret)
        self.stream.write(json.dumps(record, ensure_ascii=False) + "\n")
        self.stream.flush()
        return record


async def run_plan(adapter: Adapter, out: Output) -> None:
    """Performs the plan: one outcome line per step, then the implicit close (no line).

    The kit keeps which servers are connected (`server`, default main); the adapter's ops get
    each step with its `server` and keep one connection per server themselves."""
    connected: set[str] = set()
    shutdown: Callable[[], None] | None = None
    untraced: StepError | None = None
    if adapter.config.traces and "traces" in adapter.features:
        try:
            shutdown = adapter.setup_traces()
        except Exception as e:  # noqa: BLE001 - a declared feature that does not work fails its connect
            untraced = StepError("handshake_failed", f"setting up traces failed: {type(e).__name__}: {e}")
            note(untraced.message, adapter.config.bearer_token)

    async def close_quietly(server: str = MAIN_SERVER) -> None:
        try:
            await adapter.op_close({"op": "close"} if server == MAIN_SERVER else {"op": "close", "server": server})
        except Exception as e:  # noqa: BLE001 - nothing to report it on
            note(f"closing failed: {type(e).__name__}: {e}", adapter.config.bearer_token)

    async def body() -> None:
        nonlocal connected
        for index, step in enumerate(adapter.config.plan):
            op = step.get("op") if isinstance(step, dict) else None
            ok: Any = None
            error: StepError | None = None
            try:
                adapter.before_step(index, step)
                op = check_step(step)
                method = getattr(adapter, f"op_{op}", None)
                if method is None:
                    raise StepError("unsupported_op", f"this adapter does not do {op}")
                server = server_of(step)
                if "server" in step and not isinstance(step["server"], str):
                    raise StepError("unsupported_op", f'the {op} step\'s "server" must be a server\'s name: {json.dumps(step)}')
                if op == "connect" and server in connected:
                    connected.discard(server)
                    await close_quietly(server)
                lacking = undeclared(step, adapter.config, adapter.features)
                if op == "exposed_tools" and not lacking and not connected:
                    raise StepError("transport_closed", "there is no connection to any server")
                if op not in CONNECTIONLESS_OPS and op != "exposed_tools" and server not in connected:
                    raise StepError("transport_closed", "there is no connection (not connected yet, the connect failed, or it was closed)")
                if lacking:
                    raise StepError("unsupported_op", f"this adapter does not declare the feature {', '.join(lacking)} (the kit's features)")
                if op == "connect" and untraced is not None:
                    raise untraced
                if op == "close":
                    connected.discard(server)
                ok = await method(step)
                if op == "connect":
                    connected.add(server)
            except Exception as e:  # noqa: BLE001 - every failure is the step's outcome
                error = adapter.classify(e, op) if not isinstance(e, StepError) else None
                error = error or classify_common(e)
            limits = None
            if op == "connect":
                # A library without tasks cannot call a `required` tool as one (the `tasks` need).
                lacks_tasks = [] if "tasks" in adapter.features else ["tasks"]
                limits = list(dict.fromkeys(adapter.limits() + lacks_tasks + (error.limits if error else [])))
            out.line(index, op, ok, error, limits)
            note(f"step {index} ({op}) answered", None)
        for server in sorted(connected):
            await close_quietly(server)

    try:
        await adapter.lifespan(body)
    finally:
        if shutdown is not None:
            try:
                shutdown()
            except Exception as e:  # noqa: BLE001 - the lines are out; nothing to report it on
                note(f"shutting traces down failed: {type(e).__name__}: {e}", adapter.config.bearer_token)


_STARTED = time.monotonic()


def note(text: str, secret: str | None = None) -> None:
    """A timestamped progress line on stderr (the harness shows its tail when a trial fails)."""
    ms = (time.monotonic() - _STARTED) * 1000
    print(f"adapter: +{ms:.0f} ms: {redact(text, secret)}", file=sys.stderr, flush=True)


class _RedactingFilter(logging.Filter):
    """Replaces every registered secret (and the bearer token) in a log record's message."""

    def __init__(self, secret: str | None) -> None:
        super().__init__()
        self.secret = secret

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        redacted = redact(text, self.secret)
        if redacted != text:
            record.msg, record.args = redacted, None
        return True


def guard_stdout() -> TextIO:
    """The real stdout for outcome lines; fd 1 and sys.stdout then point at stderr, so nothing
    a library prints (or a child it starts with inherited stdout) can corrupt them."""
    real = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return real


def run(factory: Callable[[Config], Adapter], *, fast_exit: bool = True) -> None:
    """The adapter's main: exit 2 on a bad environment, else perform the plan and exit 0.

    With `fast_exit`, the process ends with os._exit once every line is flushed and the
    library has shut its transports down, skipping an interpreter teardown that can take a
    second under load.
    """
    out_stream = guard_stdout()
    try:
        config = read_env()
    except EnvError as e:
        print(f"adapter: {e}", file=sys.stderr, flush=True)
        sys.exit(2)
    handler = logging.StreamHandler(sys.stderr)
    secret(config.bearer_token)
    handler.addFilter(_RedactingFilter(config.bearer_token))
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=logging.WARNING, handlers=[handler], force=True)
    adapter = factory(config)
    unknown = [f for f in adapter.features if f not in FEATURES]
    if unknown:
        print(f"adapter: unknown feature {unknown[0]!r} in features; expected some of {', '.join(FEATURES)}", file=sys.stderr, flush=True)
        sys.exit(2)
    asyncio.run(run_plan(adapter, Output(out_stream, config.bearer_token)))
    note("plan carried out")
    out_stream.flush()
    sys.stderr.flush()
    if fast_exit:
        os._exit(0)

"""Tests of the Python adapter kit (stdlib only): `python3 -m unittest` in this folder.

They check what an adapter relies on: the environment's errors name the variable, the plan
loop's bookkeeping (transport_closed, unsupported_op, the silent implicit close, limits),
redaction, the contract's shapes, and, in a child process, that library prints stay off the
outcome stream and a bad environment exits 2.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import io
import json
import os
import subprocess
import sys
import textwrap
import unittest
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mcp_harness_kit as kit  # noqa: E402

SECRET = "s3cret-token"


def env(**extra: str) -> dict[str, str]:
    base = {
        "MCP_HARNESS_CONTRACT": "1",
        "MCP_HARNESS_TRANSPORT": "stdio",
        "MCP_HARNESS_SERVER_COMMAND": '["fake", "--x"]',
        "MCP_HARNESS_PLAN": '[{"op":"connect"}]',
        "MCP_HARNESS_TIMEOUT_MS": "5000",
        "MCP_HARNESS_PROTOCOL_VERSION": "2025-11-25",
    }
    base.update(extra)
    return {k: v for k, v in base.items() if v != "<unset>"}


class ReadEnv(unittest.TestCase):
    def test_good_stdio(self) -> None:
        config = kit.read_env(env(), [])
        self.assertEqual(config.server_command, ["fake", "--x"])
        self.assertEqual(config.timeout_s, 5.0)
        self.assertEqual(config.era, "legacy")

    def test_http_url_from_argument(self) -> None:
        config = kit.read_env(env(MCP_HARNESS_TRANSPORT="http"), ["https://localhost:1/mcp"])
        self.assertEqual(config.url, "https://localhost:1/mcp")

    def test_errors_name_the_variable(self) -> None:
        cases = {
            "MCP_HARNESS_CONTRACT": env(MCP_HARNESS_CONTRACT="2"),
            "MCP_HARNESS_TRANSPORT": env(MCP_HARNESS_TRANSPORT="ws"),
            "MCP_HARNESS_PLAN": env(MCP_HARNESS_PLAN='{"op":"connect"}'),
            "MCP_HARNESS_TIMEOUT_MS": env(MCP_HARNESS_TIMEOUT_MS="soon"),
            "MCP_HARNESS_SERVER_COMMAND": env(MCP_HARNESS_SERVER_COMMAND='"fake"'),
            "MCP_HARNESS_ERA": env(MCP_HARNESS_ERA="future"),
            "MCP_HARNESS_PROTOCOL_VERSION": env(MCP_HARNESS_PROTOCOL_VERSION="<unset>"),
            "MCP_HARNESS_SERVER_URL": env(MCP_HARNESS_TRANSPORT="http"),
        }
        for name, bad in cases.items():
            with self.subTest(name), self.assertRaises(kit.EnvError) as caught:
                kit.read_env(bad, [])
            self.assertIn(name, str(caught.exception))

    def test_token_not_in_repr(self) -> None:
        config = kit.read_env(env(MCP_HARNESS_BEARER_TOKEN=SECRET), [])
        self.assertNotIn(SECRET, repr(config))


class Shapes(unittest.TestCase):
    def test_decoded(self) -> None:
        data = base64.b64encode(b"hello").decode()
        self.assertEqual(kit.decoded(data, "x"), {"bytes": 5, "sha256": hashlib.sha256(b"hello").hexdigest()})
        for bad in ("aGVsbG8", "aGVs bG8=", "aGVsbG9=", "a!==", 3):
            with self.subTest(bad), self.assertRaises(kit.StepError) as caught:
                kit.decoded(bad, "x")
            self.assertEqual(caught.exception.kind, "invalid_response")

    def test_content_as_seen(self) -> None:
        png = base64.b64encode(b"\x89PNG").decode()
        blocks = [
            {"type": "text", "text": "a", "annotations": {"priority": 1}, "_meta": {"x": 1}},
            {"type": "image", "data": png, "mimeType": "image/png"},
            {"type": "resource", "resource": {"uri": "file:///a", "blob": png, "text": "t"}},
            {"type": "resource_link", "uri": "file:///b", "name": "b"},
        ]
        seen = [kit.content_as_seen(b) for b in blocks]
        self.assertEqual(seen[0], {"type": "text", "text": "a", "annotations": {"priority": 1}})
        self.assertEqual(seen[1]["bytes"], 4)
        self.assertEqual(seen[2]["resource"], {"uri": "file:///a", "text": "t"})
        self.assertEqual(seen[3], blocks[3])
        with self.assertRaises(kit.StepError):
            kit.content_as_seen({"type": "video"})
        with self.assertRaises(kit.StepError):
            kit.resource_as_seen({"uri": "file:///c"})

    def test_tool_result(self) -> None:
        text = [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}]
        self.assertEqual(kit.tool_result({"content": text})["text"], ["one", "two"])
        self.assertEqual(kit.tool_result({"content": [], "structuredContent": {"t": 1}})["structured"], {"t": 1})
        with self.assertRaises(kit.StepError) as caught:
            kit.tool_result({"content": text, "isError": True, "structuredContent": {"t": 1}})
        self.assertEqual((caught.exception.kind, caught.exception.message), ("tool_error", "one\ntwo"))

    def test_paginate(self) -> None:
        pages = {None: ([{"name": "a"}], ""), "": ([{"name": "b"}], "c2"), "c2": ([{"name": "c"}], None)}

        async def fetch(cursor: str | None) -> Any:
            return pages[cursor]

        names = [e["name"] for e in asyncio.run(kit.paginate(fetch, unique_by="name", reject_repeated_cursor=True))]
        self.assertEqual(names, ["a", "b", "c"])

        async def loop(cursor: str | None) -> Any:
            return [{"name": f"n{cursor}"}], "same"

        with self.assertRaises(kit.StepError) as caught:
            asyncio.run(kit.paginate(loop, reject_repeated_cursor=True))
        self.assertEqual(caught.exception.kind, "repeated_cursor")
        with self.assertRaises(kit.StepError) as caught:
            asyncio.run(kit.paginate(loop, max_pages=3))
        self.assertEqual(caught.exception.kind, "invalid_response")

        async def dup(cursor: str | None) -> Any:
            return [{"name": "x"}, {"name": "x"}], None

        with self.assertRaises(kit.StepError) as caught:
            asyncio.run(kit.paginate(dup, unique_by="name", duplicate_kind="duplicate_tool_name"))
        self.assertEqual(caught.exception.kind, "duplicate_tool_name")

    def test_classify_common(self) -> None:
        class Response:
            status_code = 503

        class HTTPError(Exception):
            response = Response()

        try:
            try:
                raise ssl_error()
            except Exception as inner:
                raise RuntimeError("wrapped") from inner
        except RuntimeError as outer:
            self.assertEqual(kit.classify_common(outer).kind, "tls")
        self.assertEqual(kit.classify_common(HTTPError("boom")).status, 503)
        self.assertEqual(kit.classify_common(ConnectionResetError()).kind, "transport_closed")
        self.assertEqual(kit.classify_common(asyncio.TimeoutError()).kind, "timeout")
        self.assertEqual(kit.classify_common(ValueError("odd")).kind, "invalid_response")


def ssl_error() -> Exception:
    import ssl

    return ssl.SSLCertVerificationError("certificate verify failed")


class Fake(kit.Adapter):
    """A library whose connection opens and closes, with one tool."""

    closes = 0

    async def op_connect(self, step: dict[str, Any]) -> dict[str, Any]:
        if (step.get("handlers") or {}).get("fail"):
            raise ConnectionRefusedError(f"refused, token {SECRET}")
        return {"protocolVersion": "2025-11-25"}

    def limits(self) -> list[str]:
        return ["choose_version"]

    async def op_call_tool(self, step: dict[str, Any]) -> dict[str, Any]:
        if step["name"] == "mine":
            raise KeyError("the library's own error")
        return kit.tool_result({"content": [{"type": "text", "text": step["name"]}]})

    def classify(self, exc: BaseException, op: str) -> kit.StepError | None:
        if isinstance(exc, KeyError):
            return kit.StepError("protocol_error", "mapped", code=-32602)
        return None

    async def op_close(self, step: dict[str, Any]) -> dict[str, Any]:
        Fake.closes += 1
        return {}


def run_fake(plan: list[Any]) -> list[dict[str, Any]]:
    config = kit.read_env(env(MCP_HARNESS_PLAN=json.dumps(plan), MCP_HARNESS_BEARER_TOKEN=SECRET), [])
    stream = io.StringIO()
    Fake.closes = 0
    asyncio.run(kit.run_plan(Fake(config), kit.Output(stream, config.bearer_token)))
    return [json.loads(line) for line in stream.getvalue().splitlines()]


class Plan(unittest.TestCase):
    def test_bookkeeping(self) -> None:
        lines = run_fake(
            [
                {"op": "call_tool", "name": "early"},
                {"op": "connect"},
                {"op": "call_tool", "name": "echo"},
                {"op": "call_tool", "name": "mine"},
                {"op": "call_tool"},
                {"op": "list_prompts"},
                {"op": "sleep", "ms": 1},
                {"op": "events"},
                {"op": "close"},
                {"op": "call_tool", "name": "late"},
                {"op": "connect"},
            ]
        )
        kinds = [line.get("error", {}).get("kind") for line in lines]
        self.assertEqual(
            kinds,
            ["transport_closed", None, None, "protocol_error", "unsupported_op", "unsupported_op", None, None, None, "transport_closed", None],
        )
        self.assertEqual([line["step"] for line in lines], list(range(11)))
        self.assertEqual(lines[1]["limits"], ["choose_version", "tasks"])  # no tasks feature: the tasks need
        self.assertEqual(lines[2]["ok"]["text"], ["echo"])
        self.assertEqual(lines[3]["error"]["code"], -32602)
        self.assertEqual(lines[7]["ok"], {"events": []})
        self.assertEqual(Fake.closes, 2)  # the close step, and the implicit close (no line)

    def test_together_runs_steps_at_once_and_reports_each(self) -> None:
        class Overlapping(Fake):
            running = 0
            most = 0

            async def op_call_tool(self, step: dict[str, Any]) -> dict[str, Any]:
                Overlapping.running += 1
                Overlapping.most = max(Overlapping.most, Overlapping.running)
                await asyncio.sleep(0.01)
                Overlapping.running -= 1
                return await super().op_call_tool(step)

        config = kit.read_env(env(MCP_HARNESS_PLAN=json.dumps([
            {"op": "connect"},
            {"op": "together", "steps": [
                {"op": "call_tool", "name": "a"},
                {"op": "call_tool", "name": "mine"},
                {"op": "call_tool", "name": "b"},
                {"op": "connect"},
                {"op": "list_prompts"},
            ]},
            {"op": "together"},
        ])), [])
        stream = io.StringIO()
        asyncio.run(kit.run_plan(Overlapping(config), kit.Output(stream, None)))
        lines = [json.loads(line) for line in stream.getvalue().splitlines()]
        steps = lines[1]["ok"]["steps"]
        self.assertEqual(steps[0]["ok"]["text"], ["a"])
        self.assertEqual(steps[1]["error"]["code"], -32602)
        self.assertEqual(steps[2]["ok"]["text"], ["b"])
        self.assertEqual([s["error"]["kind"] for s in steps[3:]], ["unsupported_op", "unsupported_op"])
        self.assertEqual(Overlapping.most, 3)  # all three calls were running at once
        self.assertEqual(lines[2]["error"]["kind"], "unsupported_op")  # no steps given

    def test_undeclared_features_are_unsupported(self) -> None:
        class Declares(Fake):
            features = ("roots",)

        def lines(adapter_class: type[Fake], plan: list[Any]) -> list[Any]:
            config = kit.read_env(env(MCP_HARNESS_PLAN=json.dumps(plan)), [])
            stream = io.StringIO()
            asyncio.run(kit.run_plan(adapter_class(config), kit.Output(stream, None)))
            return [json.loads(line).get("error", {}).get("kind") for line in stream.getvalue().splitlines()]

        plan = [
            {"op": "connect", "handlers": {"roots/list": {"roots": []}}},
            {"op": "call_tool", "name": "x", "input": {"elicitation/create": {"action": "decline"}}},
            {"op": "connect", "handlers": {"sampling/createMessage": {}}},
            {"op": "call_tool", "name": "x"},
        ]
        self.assertEqual(lines(Declares, plan), [None, "unsupported_op", "unsupported_op", "transport_closed"])
        # Declaring nothing leaves even the roots handler unsupported.
        self.assertEqual(lines(Fake, plan[:1]), ["unsupported_op"])

    def test_task_steps_need_the_tasks_feature(self) -> None:
        class Tasks(Fake):
            """A library with task ops; each records the step it was handed."""

            called: list[dict[str, Any]] = []

            async def op_call_tool(self, step: dict[str, Any]) -> dict[str, Any]:
                Tasks.called.append(step)
                return {"task": {"taskId": "task-1", "status": "working"}} if step.get("background") else await super().op_call_tool(step)

            async def op_get_task(self, step: dict[str, Any]) -> dict[str, Any]:
                Tasks.called.append(step)
                return {"task": {"taskId": step["task_id"], "status": "working"}}

            async def op_cancel_task(self, step: dict[str, Any]) -> dict[str, Any]:
                Tasks.called.append(step)
                return {}

            async def op_task_result(self, step: dict[str, Any]) -> dict[str, Any]:
                Tasks.called.append(step)
                return kit.tool_result({"content": [{"type": "text", "text": "done"}]})

            async def op_list_tasks(self, step: dict[str, Any]) -> dict[str, Any]:
                Tasks.called.append(step)
                return {"tasks": []}

        class Declares(Tasks):
            features = ("tasks",)

        def lines(adapter_class: type[Fake], plan: list[Any]) -> list[dict[str, Any]]:
            Tasks.called = []
            config = kit.read_env(env(MCP_HARNESS_PLAN=json.dumps(plan)), [])
            stream = io.StringIO()
            asyncio.run(kit.run_plan(adapter_class(config), kit.Output(stream, None)))
            return [json.loads(line) for line in stream.getvalue().splitlines()]

        task_steps = [
            {"op": "call_tool", "name": "slow", "task": {"ttl": 60000}},
            {"op": "call_tool", "name": "slow", "task": {}, "background": True},
            {"op": "call_tool", "name": "slow", "background": True},
            {"op": "get_task", "task_id": "task-1"},
            {"op": "cancel_task", "task_id": "task-1"},
            {"op": "task_result", "task_id": "task-1"},
            {"op": "list_tasks"},
        ]
        plain = {"op": "call_tool", "name": "plain", "background": False}
        plan = [{"op": "connect"}, *task_steps, plain]
        refused = lines(Tasks, plan)
        for line in refused[1:-1]:
            self.assertEqual(line["error"]["kind"], "unsupported_op", line)
            self.assertIn("does not declare the feature tasks (the kit's features)", line["error"]["message"])
        self.assertEqual(refused[-1]["ok"]["text"], ["plain"])  # background: false alone is a plain call
        self.assertEqual(Tasks.called, [plain])

        carried = lines(Declares, plan)
        self.assertEqual([line.get("error") for line in carried], [None] * len(plan))
        self.assertEqual(Tasks.called, [*task_steps, plain])
        self.assertEqual(carried[4]["ok"], {"task": {"taskId": "task-1", "status": "working"}})
        self.assertEqual(carried[6]["ok"]["text"], ["done"])

        malformed = [
            ({"op": "get_task", "task_id": 7}, '"task_id"'),
            ({"op": "cancel_task"}, '"task_id"'),
            ({"op": "task_result", "task_id": None}, '"task_id"'),
            ({"op": "call_tool", "name": "slow", "task": True}, '"task"'),
            ({"op": "call_tool", "name": "slow", "task": {}, "background": "yes"}, '"background"'),
        ]
        bad = lines(Declares, [{"op": "connect"}, *(step for step, _ in malformed)])
        self.assertEqual(len(bad), 1 + len(malformed))
        for line, (step, field) in zip(bad[1:], malformed):
            self.assertEqual(line["error"]["kind"], "unsupported_op", step)
            self.assertIn(field, line["error"]["message"], step)
        self.assertEqual(Tasks.called, [])

    def test_sampling_tools_and_url_consent_are_features(self) -> None:
        tool_use = {"role": "assistant", "content": [{"type": "tool_use", "id": "c", "name": "w", "input": {}}], "model": "m"}
        text = {"role": "assistant", "content": {"type": "text", "text": "t"}, "model": "m"}
        config = kit.read_env(env(), [])
        needs = lambda handlers, declared: kit.undeclared({"op": "connect", "handlers": handlers}, config, declared)
        self.assertEqual(needs({"sampling/createMessage": tool_use}, ["sampling"]), ["sampling_tools"])
        self.assertEqual(needs({"sampling/createMessage": {"rejected": True}}, ["sampling"]), ["sampling_tools"])
        self.assertEqual(needs({"sampling/createMessage": text}, ["sampling"]), [])
        self.assertEqual(needs({"sampling/createMessage": tool_use}, ["sampling", "sampling_tools"]), [])
        browser = {"elicitation/create": {"url": {"action": "accept", "browser": True}}}
        self.assertEqual(needs(browser, ["elicitation"]), ["url_consent"])
        self.assertEqual(needs({"elicitation/create": {"url": {"action": "accept"}}}, ["elicitation"]), [])
        self.assertEqual(needs(browser, ["elicitation", "url_consent"]), [])

    def test_a_connect_serving_tasks_needs_the_task_receiver_feature(self) -> None:
        class Requestor(Fake):
            features = ("tasks",)

        class Receiver(Fake):
            features = ("tasks", "task_receiver")

        def first(adapter_class: type[Fake], step: dict[str, Any]) -> dict[str, Any]:
            config = kit.read_env(env(MCP_HARNESS_PLAN=json.dumps([step])), [])
            stream = io.StringIO()
            asyncio.run(kit.run_plan(adapter_class(config), kit.Output(stream, None)))
            return json.loads(stream.getvalue().splitlines()[0])

        serving = {"op": "connect", "tasks": ["sampling/createMessage"]}
        refused = first(Requestor, serving)
        self.assertEqual(refused["error"]["kind"], "unsupported_op", refused)
        self.assertIn("does not declare the feature task_receiver", refused["error"]["message"])
        self.assertIn("ok", first(Receiver, serving))
        self.assertIn("ok", first(Requestor, {"op": "connect", "tasks": []}))
        malformed = first(Receiver, {"op": "connect", "tasks": "sampling/createMessage"})
        self.assertEqual(malformed["error"]["kind"], "unsupported_op")
        self.assertIn('"tasks"', malformed["error"]["message"])

    def test_many_servers_need_the_feature_and_keep_one_connection_each(self) -> None:
        class Servers(Fake):
            """A library with one connection per server; records what each op was handed."""

            seen: list[tuple[str, str | None]] = []

            async def op_connect(self, step: dict[str, Any]) -> dict[str, Any]:
                Servers.seen.append(("connect", step.get("server")))
                return await super().op_connect(step)

            async def op_exposed_tools(self, step: dict[str, Any]) -> dict[str, Any]:
                return {"tools": [{"name": "b__search", "server": "b", "tool": "search"}]}

            async def op_close(self, step: dict[str, Any]) -> dict[str, Any]:
                Servers.seen.append(("close", step.get("server")))
                return await super().op_close(step)

        class Declares(Servers):
            features = ("many_servers",)

        def lines(adapter_class: type[Fake], plan: list[Any]) -> list[dict[str, Any]]:
            Servers.seen = []
            servers = '{"main": {"argv": ["fake"]}, "b": {"argv": ["fake", "b"]}}'
            config = kit.read_env(env(MCP_HARNESS_PLAN=json.dumps(plan), MCP_HARNESS_SERVERS=servers), [])
            self.assertEqual(config.servers["b"], {"argv": ["fake", "b"]})
            stream = io.StringIO()
            asyncio.run(kit.run_plan(adapter_class(config), kit.Output(stream, None)))
            return [json.loads(line) for line in stream.getvalue().splitlines()]

        plan = [
            {"op": "connect"},
            {"op": "connect", "server": "b"},
            {"op": "exposed_tools"},
            {"op": "close", "server": "b"},
            {"op": "call_tool", "name": "x", "server": "b"},
            {"op": "call_tool", "name": "x"},
        ]
        kinds = [line.get("error", {}).get("kind") for line in lines(Declares, plan)]
        self.assertEqual(kinds, [None, None, None, None, "transport_closed", None])
        self.assertEqual(Servers.seen, [("connect", None), ("connect", "b"), ("close", "b"), ("close", None)])
        refused = lines(Servers, plan)
        self.assertIn("does not declare the feature many_servers", refused[1]["error"]["message"])
        self.assertIn("does not declare the feature many_servers", refused[2]["error"]["message"])
        self.assertEqual([line.get("error", {}).get("kind") for line in refused][3:], ["transport_closed", "transport_closed", None])
        with self.assertRaises(kit.EnvError) as raised:
            kit.read_env(env(MCP_HARNESS_SERVERS='{"b": {"argv": []}}'), [])
        self.assertIn("MCP_HARNESS_SERVERS", str(raised.exception))

    def test_a_connect_with_a_trace_context_needs_the_trace_context_feature(self) -> None:
        class Tracing(Fake):
            features = ("trace_context",)

        def first(adapter_class: type[Fake], step: dict[str, Any]) -> dict[str, Any]:
            config = kit.read_env(env(MCP_HARNESS_PLAN=json.dumps([step])), [])
            stream = io.StringIO()
            asyncio.run(kit.run_plan(adapter_class(config), kit.Output(stream, None)))
            return json.loads(stream.getvalue().splitlines()[0])

        context = {"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "baggage": "k=v"}
        refused = first(Fake, {"op": "connect", "trace_context": context})
        self.assertEqual(refused["error"]["kind"], "unsupported_op", refused)
        self.assertIn("does not declare the feature trace_context", refused["error"]["message"])
        self.assertIn("ok", first(Tracing, {"op": "connect", "trace_context": context}))
        self.assertIn("ok", first(Fake, {"op": "connect"}))
        for bad in ({"tracestate": "a=b"}, {"traceparent": 7}, "00-x", {"traceparent": "x", "baggage": 1}):
            malformed = first(Tracing, {"op": "connect", "trace_context": bad})
            self.assertEqual(malformed["error"]["kind"], "unsupported_op", bad)
            self.assertIn('"trace_context"', malformed["error"]["message"], bad)

    def test_a_traces_trial_needs_the_traces_feature(self) -> None:
        calls: list[str] = []

        class Traced(Fake):
            features = ("traces",)

            def setup_traces(self) -> Any:
                calls.append("setup")
                return lambda: calls.append("shutdown")

            async def op_connect(self, step: dict[str, Any]) -> dict[str, Any]:
                calls.append("connect")
                return await super().op_connect(step)

        class Broken(Traced):
            def setup_traces(self) -> Any:
                raise ImportError("no module named opentelemetry")

        def lines_of(adapter_class: type[Fake], traces: str) -> list[dict[str, Any]]:
            config = kit.read_env(env(MCP_HARNESS_PLAN='[{"op":"connect"},{"op":"close"}]', MCP_HARNESS_TRACES=traces), [])
            stream = io.StringIO()
            asyncio.run(kit.run_plan(adapter_class(config), kit.Output(stream, None)))
            return [json.loads(line) for line in stream.getvalue().splitlines()]

        refused = lines_of(Fake, "1")
        self.assertEqual(refused[0]["error"]["kind"], "unsupported_op", refused)
        self.assertIn("does not declare the feature traces", refused[0]["error"]["message"])
        self.assertEqual(refused[1]["error"]["kind"], "transport_closed", refused)
        self.assertTrue(all("ok" in line for line in lines_of(Traced, "1")))
        self.assertEqual(calls, ["setup", "connect", "shutdown"])
        calls.clear()
        for traces in ("<unset>", "0"):
            self.assertTrue(all("ok" in line for line in lines_of(Fake, traces)))
            self.assertTrue(all("ok" in line for line in lines_of(Traced, traces)))
        self.assertEqual(calls, ["connect", "connect"])
        broken = lines_of(Broken, "1")
        self.assertEqual(broken[0]["error"]["kind"], "handshake_failed", broken)
        self.assertIn("setting up traces failed: ImportError", broken[0]["error"]["message"])

    def test_fetch_icons_needs_the_icons_feature(self) -> None:
        class Icons(Fake):
            features = ("icons",)

            async def op_fetch_icons(self, step: dict[str, Any]) -> dict[str, Any]:
                return {"fetched": [], "refused": []}

        class Undeclared(Icons):
            features = ()

        def lines_of(adapter_class: type[Fake]) -> list[dict[str, Any]]:
            config = kit.read_env(env(MCP_HARNESS_PLAN=json.dumps([{"op": "connect"}, {"op": "fetch_icons"}])), [])
            stream = io.StringIO()
            asyncio.run(kit.run_plan(adapter_class(config), kit.Output(stream, None)))
            return [json.loads(line) for line in stream.getvalue().splitlines()]

        refused = lines_of(Undeclared)[1]
        self.assertEqual(refused["error"]["kind"], "unsupported_op", refused)
        self.assertIn("does not declare the feature icons", refused["error"]["message"])
        self.assertEqual(lines_of(Icons)[1]["ok"], {"fetched": [], "refused": []})

    def test_failed_connect_redacted(self) -> None:
        lines = run_fake([{"op": "connect", "handlers": {"fail": True}}, {"op": "call_tool", "name": "x"}])
        self.assertEqual(lines[0]["error"]["kind"], "transport_closed")
        self.assertNotIn(SECRET, json.dumps(lines))
        self.assertIn("[redacted]", lines[0]["error"]["message"])
        self.assertEqual(lines[1]["error"]["kind"], "transport_closed")
        self.assertEqual(Fake.closes, 0)

    def test_events(self) -> None:
        async def scenario() -> list[dict[str, Any]]:
            events = kit.Events()
            asyncio.get_running_loop().call_later(0.05, events.add, {"type": "log"})
            return await events.take(1, 2.0)

        self.assertEqual(asyncio.run(scenario()), [{"type": "log"}])


class Authorization(unittest.TestCase):
    """The authorization variables, secret redaction and the headless step."""

    REDIRECT = "http://127.0.0.1:9/callback"

    def test_client_credentials_read_redacted_and_needing_their_feature(self) -> None:
        creds = {"client_id": "m2m", "method": "client_secret_basic", "client_secret": "m2m-s3cret"}
        plan = json.dumps([{"op": "connect"}])
        config = kit.read_env(env(MCP_HARNESS_CLIENT_CREDENTIALS=json.dumps(creds), MCP_HARNESS_AUTH_REDIRECT_URI=self.REDIRECT, MCP_HARNESS_PLAN=plan), [])
        self.assertEqual(config.client_credentials, creds)
        self.assertNotIn("m2m-s3cret", repr(config))
        self.assertEqual(kit.redact("x m2m-s3cret y"), "x [redacted] y")
        # A machine trial's connect needs client_credentials, not oauth.
        self.assertEqual(kit.undeclared({"op": "connect"}, config, ["oauth"]), ["client_credentials"])
        self.assertEqual(kit.undeclared({"op": "connect"}, config, ["client_credentials"]), [])
        for bad, says in [
            ("nope", "not JSON"),
            ('{"method": "private_key_jwt"}', "client_id"),
            ('{"client_id": "m", "method": "x"}', "method"),
            ('{"client_id": "m", "method": "private_key_jwt"}', "private_key_pem"),
        ]:
            with self.assertRaises(kit.EnvError) as caught:
                kit.read_env(env(MCP_HARNESS_CLIENT_CREDENTIALS=bad), [])
            self.assertIn(says, str(caught.exception))
            self.assertIn("MCP_HARNESS_CLIENT_CREDENTIALS", str(caught.exception))

    def test_dpop_credentials_need_the_dpop_feature(self) -> None:
        creds = {"client_id": "m2m", "method": "client_secret_basic", "client_secret": "m2m-s3cret", "dpop": True}
        config = kit.read_env(env(MCP_HARNESS_CLIENT_CREDENTIALS=json.dumps(creds), MCP_HARNESS_AUTH_REDIRECT_URI=self.REDIRECT), [])
        self.assertEqual(kit.undeclared({"op": "connect"}, config, ["client_credentials"]), ["dpop"])
        self.assertEqual(kit.undeclared({"op": "connect"}, config, ["client_credentials", "dpop"]), [])
        with self.assertRaises(kit.EnvError) as caught:
            kit.read_env(env(MCP_HARNESS_CLIENT_CREDENTIALS=json.dumps({**creds, "dpop": "yes"})), [])
        self.assertIn("dpop", str(caught.exception))
        self.assertNotIn("m2m-s3cret", str(caught.exception))

    def test_auth_absent_without_redirect_uri(self) -> None:
        config = kit.read_env(env(), [])
        self.assertIsNone(config.auth)
        self.assertEqual(config.local_origins, ())

    def test_auth_read(self) -> None:
        config = kit.read_env(
            env(
                MCP_HARNESS_AUTH_REDIRECT_URI=self.REDIRECT,
                MCP_HARNESS_AUTH_CLIENT_ID="pre",
                MCP_HARNESS_AUTH_CLIENT_SECRET="client-s3cret",
                MCP_HARNESS_AUTH_CLIENT_METADATA_URL="https://localhost:2/client.json",
                MCP_HARNESS_AUTH_CLIENT_AUTH_METHOD="client_secret_post",
                MCP_HARNESS_AUTH_CLIENT_ISSUER="https://localhost:5/tenant",
                MCP_HARNESS_LOCAL_ORIGINS="https://localhost:3 https://localhost:4/",
            ),
            [],
        )
        assert config.auth is not None
        self.assertEqual(config.auth.client_auth_method, "client_secret_post")
        self.assertEqual(config.auth.client_issuer, "https://localhost:5/tenant")
        self.assertEqual((config.auth.redirect_uri, config.auth.client_id, config.auth.client_metadata_url), (self.REDIRECT, "pre", "https://localhost:2/client.json"))
        self.assertEqual(config.local_origins, ("https://localhost:3", "https://localhost:4"))
        self.assertNotIn("client-s3cret", repr(config))
        self.assertEqual(kit.redact("secret is client-s3cret"), "secret is [redacted]")

    def test_auth_errors_name_the_variable(self) -> None:
        cases = {
            "MCP_HARNESS_AUTH_REDIRECT_URI": env(MCP_HARNESS_AUTH_REDIRECT_URI="/callback"),
            "MCP_HARNESS_AUTH_CLIENT_METADATA_URL": env(MCP_HARNESS_AUTH_REDIRECT_URI=self.REDIRECT, MCP_HARNESS_AUTH_CLIENT_METADATA_URL="http://localhost/c.json"),
            "MCP_HARNESS_AUTH_CLIENT_SECRET": env(MCP_HARNESS_AUTH_REDIRECT_URI=self.REDIRECT, MCP_HARNESS_AUTH_CLIENT_SECRET="x"),
            "MCP_HARNESS_AUTH_CLIENT_ID": env(MCP_HARNESS_AUTH_CLIENT_ID="orphan"),
            "MCP_HARNESS_AUTH_CLIENT_AUTH_METHOD": env(MCP_HARNESS_AUTH_REDIRECT_URI=self.REDIRECT, MCP_HARNESS_AUTH_CLIENT_ID="pre", MCP_HARNESS_AUTH_CLIENT_AUTH_METHOD="private_key_jwt"),
            "MCP_HARNESS_LOCAL_ORIGINS": env(MCP_HARNESS_LOCAL_ORIGINS="https://localhost:3/path"),
            "MCP_HARNESS_AUTH_CLIENT_ISSUER": env(MCP_HARNESS_AUTH_REDIRECT_URI=self.REDIRECT, MCP_HARNESS_AUTH_CLIENT_ISSUER="https://localhost:5"),
        }
        for name, bad in cases.items():
            with self.subTest(name), self.assertRaises(kit.EnvError) as caught:
                kit.read_env(bad, [])
            self.assertIn(name, str(caught.exception).split(";")[0])

    def test_registered_secrets_redacted_everywhere(self) -> None:
        kit.secret("access-t0ken")
        kit.secret(None)  # nothing to register
        out = io.StringIO()
        kit.Output(out, None).line(0, "connect", {"note": "Bearer access-t0ken"}, None)
        kit.Output(out, None).line(1, "call_tool", None, kit.StepError("auth_failed", "refused access-t0ken"))
        self.assertNotIn("access-t0ken", out.getvalue())
        self.assertEqual(out.getvalue().count("[redacted]"), 2)
        self.assertEqual(json.loads(out.getvalue().splitlines()[1])["error"]["kind"], "auth_failed")

    def test_callback_params(self) -> None:
        self.assertEqual(
            kit.callback_params(self.REDIRECT + "?code=c&state=s&iss=https%3A%2F%2Fas&state=second"),
            {"code": "c", "state": "s", "iss": "https://as"},
        )

    def serve(self, status: int, location: str | None) -> tuple[str, list[str]]:
        """A one-request plain-HTTP authorization endpoint on loopback; returns its URL and the paths it saw."""
        import http.server
        import threading

        seen: list[str] = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
                seen.append(self.path)
                self.send_response(status)
                if location is not None:
                    self.send_header("Location", location)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=server.handle_request, daemon=True).start()
        self.addCleanup(server.server_close)
        return f"http://127.0.0.1:{server.server_address[1]}/authorize?state=abc&client_id=x", seen

    def test_headless_returns_location_without_following(self) -> None:
        url, seen = self.serve(302, "/callback?code=c1&state=abc")
        location = asyncio.run(kit.headless_authorize(url, timeout_s=5))
        self.assertEqual(location, url.split("/authorize")[0] + "/callback?code=c1&state=abc")
        self.assertEqual(seen, ["/authorize?state=abc&client_id=x"])  # one request: not followed

    def test_headless_refuses_non_redirect(self) -> None:
        for status, location in ((200, None), (400, None), (302, None)):
            url, _ = self.serve(status, location)
            with self.subTest(status), self.assertRaises(kit.StepError) as caught:
                asyncio.run(kit.headless_authorize(url, timeout_s=5))
            self.assertEqual(caught.exception.kind, "auth_failed")

    def test_headless_unreachable_is_auth_failed(self) -> None:
        url, _ = self.serve(302, "/x")
        port = url.split(":")[2].split("/")[0]
        asyncio.run(kit.headless_authorize(url, timeout_s=5))  # the one request it serves
        with self.assertRaises(kit.StepError) as caught:
            asyncio.run(kit.headless_authorize(f"http://127.0.0.1:{port}/authorize", timeout_s=2))
        self.assertIn(caught.exception.kind, ("auth_failed",))


class Process(unittest.TestCase):
    """`kit.run` in a child: prints go to stderr, outcome lines to stdout, exit codes."""

    SCRIPT = textwrap.dedent(
        """
        import sys
        sys.path.insert(0, {kit_dir!r})
        import mcp_harness_kit as kit

        class Noisy(kit.Adapter):
            async def op_connect(self, step):
                print("a library print")
                return {{"protocolVersion": "2025-11-25"}}

        kit.run(Noisy)
        """
    )

    def run_child(self, extra_env: dict[str, str]) -> subprocess.CompletedProcess[str]:
        script = self.SCRIPT.format(kit_dir=os.path.dirname(os.path.abspath(__file__)))
        full = {k: v for k, v in os.environ.items() if not k.startswith("MCP_HARNESS_")}
        full.update(extra_env)
        return subprocess.run([sys.executable, "-c", script], env=full, capture_output=True, text=True, timeout=60)

    def test_stdout_guarded(self) -> None:
        done = self.run_child(env(MCP_HARNESS_PLAN='[{"op":"connect"},{"op":"ping"}]'))
        self.assertEqual(done.returncode, 0, done.stderr)
        lines = [json.loads(line) for line in done.stdout.splitlines()]
        self.assertEqual([line["op"] for line in lines], ["connect", "ping"])
        self.assertEqual(lines[1]["error"]["kind"], "unsupported_op")
        self.assertIn("a library print", done.stderr)

    def test_bad_environment_exits_2(self) -> None:
        done = self.run_child(env(MCP_HARNESS_TIMEOUT_MS="-1"))
        self.assertEqual(done.returncode, 2)
        self.assertEqual(done.stdout, "")
        self.assertIn("MCP_HARNESS_TIMEOUT_MS", done.stderr)


if __name__ == "__main__":
    unittest.main()

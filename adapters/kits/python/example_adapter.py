"""A minimal adapter on the Python kit: the official `mcp` SDK, stdio and HTTP, four ops."""
import os
import sys
from contextlib import AsyncExitStack

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # the folder of mcp_harness_kit.py
import mcp_harness_kit as kit
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client


def as_json(model):
    return model.model_dump(by_alias=True, mode="json", exclude_unset=True)


class Minimal(kit.Adapter):
    async def op_connect(self, step):
        c = self.config
        server = (StdioServerParameters(command=c.server_command[0], args=c.server_command[1:])
                  if c.transport == "stdio" else streamable_http_client(c.url))
        self.stack = AsyncExitStack()
        client = Client(server, read_timeout_seconds=c.timeout_s, mode="legacy")
        self.client = await self.stack.enter_async_context(client)
        return {"protocolVersion": client.protocol_version, "serverInfo": as_json(client.server_info)}

    async def op_list_tools(self, step):
        async def page(cursor):
            result = await self.client.list_tools(cursor=cursor)
            return [as_json(tool) for tool in result.tools], result.next_cursor
        return {"tools": await kit.paginate(page)}

    async def op_call_tool(self, step):
        return kit.tool_result(as_json(await self.client.call_tool(step["name"], step.get("arguments"))))

    async def op_close(self, step):
        await self.stack.aclose()
        return {}

    def classify(self, exc, op):  # the SDK's JSON-RPC errors; the kit names the rest
        if isinstance(exc, MCPError):
            return kit.StepError("handshake_failed" if op == "connect" else "protocol_error", exc.message, code=exc.code)


kit.run(Minimal)

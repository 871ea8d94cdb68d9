// A minimal mcp-harness adapter on the JavaScript kit, for the TypeScript SDK's client package.
// Install the library beside it (`npm install @modelcontextprotocol/client`), then run
// `mcp-harness run --client 'node example-adapter.mjs' tools/pagination calls/text`.
import { Client, ProtocolError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { StepError, run, toolResult } from './mcp-harness-kit.mjs';

let client;
await run({
  name: 'minimal',
  // The library's own errors; the kit maps the rest (TLS, a bad URL, the connection failing).
  // An error the server sent keeps its JSON-RPC code.
  classify: (error, { op }) =>
    error instanceof ProtocolError
      ? new StepError(op === 'connect' ? 'handshake_failed' : 'protocol_error', error.message, error.code)
      : undefined,
  ops: {
    async connect(step, { env }) {
      const [command, ...args] = env.serverCommand ?? [];
      const transport = env.transport === 'stdio'
        ? new StdioClientTransport({ command, args })
        : new StreamableHTTPClientTransport(new URL(env.url));
      client = new Client({ name: 'minimal', version: '1.0.0' });
      await client.connect(transport, { timeout: env.timeoutMs });
      return { protocolVersion: client.getNegotiatedProtocolVersion(), serverInfo: client.getServerVersion() };
    },
    // This library walks the pages itself. For one that returns a page per call, write the
    // loop its users would write: paginate((cursor) => fetchPage(cursor), 'tools', {check: false});
    // drop {check: false} only where the library itself refuses repeats and duplicates.
    list_tools: async (step, { env }) => ({ tools: (await client.listTools(undefined, { timeout: env.timeoutMs })).tools }),
    call_tool: async (step, { env, signal }) =>
      toolResult(await client.callTool({ name: step.name, arguments: step.arguments ?? {} }, { timeout: env.timeoutMs, signal })),
    close: () => client.close(),
  },
});

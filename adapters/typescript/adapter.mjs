#!/usr/bin/env node
// mcp-harness driver-contract adapter (contract version 1) for the official TypeScript MCP SDK,
// @modelcontextprotocol/sdk pinned to 1.32.2 in package.json.
//
// The adapter drives the SDK the way a typical application would and reports what the SDK
// does. It deliberately adds no guard the SDK lacks: no URL policy, no repeated-cursor or
// duplicate-name detection, no timeout other than the SDK's own per-request timeout. The close
// step ends an HTTP session with the SDK's terminateSession() before Client.close() (see
// Connection.close). Outcome lines go to stdout, one per plan step; everything else to stderr.
//
// The rest of what a client asks maps one to one onto the SDK's Client: listResources,
// listResourceTemplates, listPrompts (the same nextCursor loop as list_tools: the SDK has no
// list-all helper and detects neither repeated cursors nor duplicate entries), readResource,
// getPrompt, complete, ping and setLoggingLevel. The SDK refuses a request for a capability the
// server did not declare only with its `enforceStrictCapabilities` option, which is off by
// default and kept off here; the SDK's shipped examples never read getServerCapabilities()
// before a request either (CLIENTS.md, "It leaves capability checks to its user"), so no step
// reports `capability_missing`. Content as seen (CLIENTS.md) is built from the SDK's validated
// result; base64 is decoded with atob(), the decoder the SDK itself validates with (see
// decoded()).
//
// What the server starts (CLIENTS.md) maps onto the SDK's Client: connect's `handlers` become the
// declared capabilities (exactly those; the SDK sends what it is given) and setRequestHandler
// handlers for roots/list, sampling/createMessage and elicitation/create (the SDK itself refuses
// an elicitation in an undeclared mode with -32602 and fills an accepted form's defaults when
// the form capability says applyDefaults, which it then also sends on the wire). `events`
// reports what those handlers, the ping handler slot and the notification handlers (log
// messages, list changes, resource updates) saw, and what each call's onprogress callback was
// given (the token is read off the outgoing request: the SDK uses its request id and hands the
// callback the notification without it). `max_timeout_ms` is the SDK's resetTimeoutOnProgress
// with maxTotalTimeout. `set_roots` is sendRootsListChanged; subscribe/unsubscribe are
// subscribeResource/unsubscribeResource, sent without a capability check like every other
// request here. `listen` is unsupported_op: the SDK has no 2026-07-28 client.

import { createHash } from 'node:crypto';
import process from 'node:process';
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ErrorCode,
  LATEST_PROTOCOL_VERSION,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  McpError,
  PingRequestSchema,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';

const SDK_NAME = '@modelcontextprotocol/sdk';
const SDK_VERSION = '1.32.2';

// Node error codes (error.cause.code of a failed fetch) that mean the peer's certificate was
// refused.
const TLS_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'CERT_SIGNATURE_FAILURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'HOSTNAME_MISMATCH',
]);

// ---------------------------------------------------------------------------------------------
// Output

function log(...parts) {
  process.stderr.write(`[ts-sdk-adapter] ${parts.join(' ')}\n`);
}

function emit(line) {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

class StepError extends Error {
  constructor(kind, message, extra = {}) {
    super(message);
    this.kind = kind;
    this.extra = extra;
  }
}

function notConnected() {
  return new StepError(
    'transport_closed',
    'there is no connection (not connected yet, the connect failed, or it was closed)',
  );
}

// ---------------------------------------------------------------------------------------------
// Environment

function readConfig() {
  const env = process.env;
  const fail = (message) => {
    log(message);
    process.exit(2);
  };
  if (env.MCP_HARNESS_CONTRACT !== '1') {
    fail(`MCP_HARNESS_CONTRACT is ${JSON.stringify(env.MCP_HARNESS_CONTRACT)}; this adapter implements contract "1"`);
  }
  const transport = env.MCP_HARNESS_TRANSPORT;
  if (transport !== 'stdio' && transport !== 'http') {
    fail(`MCP_HARNESS_TRANSPORT is ${JSON.stringify(transport)}; expected "stdio" or "http"`);
  }
  let plan;
  try {
    plan = JSON.parse(env.MCP_HARNESS_PLAN ?? '');
  } catch {
    plan = undefined;
  }
  if (!Array.isArray(plan)) fail('MCP_HARNESS_PLAN is not a JSON array of steps');

  let argv;
  let url;
  if (transport === 'stdio') {
    try {
      argv = JSON.parse(env.MCP_HARNESS_SERVER_COMMAND ?? '');
    } catch {
      argv = undefined;
    }
    if (!Array.isArray(argv) || argv.length === 0 || !argv.every((a) => typeof a === 'string')) {
      fail('MCP_HARNESS_SERVER_COMMAND is not a non-empty JSON array of strings');
    }
  } else {
    // The variable wins; the harness also passes the URL as the last argument.
    url = env.MCP_HARNESS_SERVER_URL || (process.argv.length > 2 ? process.argv.at(-1) : undefined);
    if (!url) fail('MCP_HARNESS_SERVER_URL is not set and no URL argument was given');
  }

  const timeoutMs = Number.parseInt(env.MCP_HARNESS_TIMEOUT_MS ?? '', 10);
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    fail('MCP_HARNESS_TIMEOUT_MS is not a positive integer of milliseconds');
  }
  const token = env.MCP_HARNESS_BEARER_TOKEN || undefined;
  // The protocol era the harness asks for. SDK 1.32.2 speaks only the handshake era
  // (its SUPPORTED_PROTOCOL_VERSIONS end at 2025-11-25; there is no server/discover, no _meta
  // request metadata, no resultType or multi round-trip), so 'modern' and 'dual' are answered
  // unsupported_op at connect instead of being quietly run as legacy.
  const era = env.MCP_HARNESS_ERA || 'legacy';
  if (!['legacy', 'modern', 'dual'].includes(era)) {
    fail(`MCP_HARNESS_ERA is ${JSON.stringify(era)}; expected "legacy", "modern" or "dual"`);
  }
  const protocolVersion = env.MCP_HARNESS_PROTOCOL_VERSION ?? '';
  return { transport, plan, argv, url, timeoutMs, token, era, protocolVersion };
}

/**
 * The contract's `limits` for the connect line. The SDK's Client always offers
 * LATEST_PROTOCOL_VERSION in initialize (there is no option for it), and it has no
 * server/discover at all, so it cannot offer a version the harness asks for unless that is
 * LATEST_PROTOCOL_VERSION in the handshake era.
 */
function versionLimits(config) {
  const offered = config.era === 'legacy' && config.protocolVersion === LATEST_PROTOCOL_VERSION;
  return offered ? [] : ['choose_version'];
}

// ---------------------------------------------------------------------------------------------
// Error mapping: SDK and Node errors → the contract's closed vocabulary

/** Walks an error's `cause` chain looking for a Node/undici error code. */
function causeCodes(error) {
  const codes = [];
  let current = error;
  for (let depth = 0; current && depth < 6; depth += 1) {
    if (typeof current.code === 'string') codes.push(current.code);
    current = current.cause;
  }
  return codes;
}

function describe(error) {
  if (!(error instanceof Error)) return String(error);
  const parts = [error.message];
  let cause = error.cause;
  for (let depth = 0; cause && depth < 4; depth += 1) {
    const code = typeof cause.code === 'string' ? ` [${cause.code}]` : '';
    parts.push(`${cause.message ?? String(cause)}${code}`);
    cause = cause.cause;
  }
  return parts.join(': ');
}

/**
 * Maps whatever the SDK threw to a contract error.
 * `phase` is 'initialize' for connect; `cancel` is the AbortController of a cancellable call.
 */
function classify(error, { phase, cancel } = {}) {
  if (error instanceof StepError) return error;
  const message = describe(error);

  if (error instanceof McpError) {
    const code = error.code;
    // The SDK's own request timeout: McpError(RequestTimeout) carrying { timeout } as data.
    // Its code (-32001) is the SDK's own, not a server's, so no `code` goes with it.
    if (code === ErrorCode.RequestTimeout && error.data && typeof error.data.timeout === 'number') {
      return new StepError('timeout', message);
    }
    // Its maximum total timeout, checked when a progress notification would restart the timeout.
    if (code === ErrorCode.RequestTimeout && error.data && typeof error.data.maxTotalTimeout === 'number') {
      return new StepError('timeout', message);
    }
    // An AbortSignal the caller fired: the SDK rejects with McpError(RequestTimeout, reason).
    if (code === ErrorCode.RequestTimeout && cancel?.signal.aborted) {
      return new StepError('cancelled', message);
    }
    // The SDK's local "the transport closed while the request was pending".
    if (code === ErrorCode.ConnectionClosed && /Connection closed/.test(error.message) && error.data === undefined) {
      return new StepError('transport_closed', message);
    }
    // The SDK's own checks of a tool result against the tool's cached outputSchema
    // (Client.callTool): it throws McpErrors it makes up, with these fixed messages, for a
    // missing structuredContent, one that does not validate, and a validator that failed.
    if (
      (code === ErrorCode.InvalidRequest && /^MCP error -?\d+: Tool .* has an output schema but did not return structured content$/s.test(error.message)) ||
      (code === ErrorCode.InvalidParams &&
        /^MCP error -?\d+: (Structured content does not match the tool's output schema: |Failed to validate structured content: )/.test(error.message))
    ) {
      return new StepError('schema_mismatch', message);
    }
    return new StepError(phase === 'initialize' ? 'handshake_failed' : 'protocol_error', message, { code });
  }

  if (error instanceof StreamableHTTPError) {
    if (typeof error.code === 'number' && error.code >= 100) {
      return new StepError('http_status', message, { status: error.code });
    }
    // code -1: a reply whose Content-Type is neither JSON nor SSE.
    return new StepError('invalid_response', message);
  }

  // Client.listTools compiles every listed outputSchema (cacheToolMetadata → the Ajv
  // provider's getValidator) and lets the compiler's error out of listTools: a schema it cannot
  // evaluate (an unresolvable $ref, an invalid schema) fails the whole listing. Where it was
  // thrown is what tells it apart.
  if (error instanceof Error && typeof error.stack === 'string' && /\bcacheToolMetadata\b/.test(error.stack)) {
    return new StepError('schema_mismatch', message);
  }
  if (error instanceof Error && /^Server's protocol version is not supported/.test(error.message)) {
    return new StepError('unsupported_version', message);
  }

  // Zod validation of a result (or of a JSON-RPC message read off the HTTP stream).
  if (error && (error.name === 'ZodError' || Array.isArray(error.issues))) {
    return new StepError('invalid_response', message);
  }
  if (error instanceof SyntaxError) {
    return new StepError('invalid_response', message);
  }

  const codes = causeCodes(error);
  if (codes.includes('ERR_INVALID_URL')) {
    return new StepError('insecure_url', message);
  }
  if (codes.some((c) => TLS_CODES.has(c) || c.startsWith('ERR_TLS_') || c.startsWith('ERR_SSL_'))) {
    return new StepError('tls', message);
  }
  if (cancel?.signal.aborted && error?.name === 'AbortError') {
    return new StepError('cancelled', message);
  }
  // Everything else is the connection failing: refused, reset, DNS, a child that could not be
  // spawned, "Not connected", an aborted fetch because the transport was closed.
  return new StepError('transport_closed', message);
}

// ---------------------------------------------------------------------------------------------
// Events: what the SDK surfaced to its caller (CLIENTS.md, "What the server starts")

/** Everything the SDK's handlers surfaced since the last `events` step, in arrival order. */
class Events {
  constructor() {
    this.items = [];
    this.waiters = [];
  }

  add(event) {
    this.items.push(event);
    for (const wake of this.waiters.splice(0)) wake();
  }

  async take(atLeast, timeoutMs) {
    const deadline = performance.now() + timeoutMs;
    while (this.items.length < atLeast) {
      const left = deadline - performance.now();
      if (left <= 0) break;
      let timer;
      await new Promise((resolve) => {
        this.waiters.push(resolve);
        timer = setTimeout(resolve, left);
      });
      clearTimeout(timer);
    }
    return this.items.splice(0);
  }
}

const EVENTS = new Events();

/** A server request's params as received, `_meta` left out (CLIENTS.md allows it). */
function paramsSeen(request) {
  if (request.params === undefined) return undefined;
  const { _meta, ...rest } = request.params;
  return rest;
}

function requestEvent(request) {
  const event = { type: 'request', method: request.method };
  const params = paramsSeen(request);
  if (params !== undefined) event.params = params;
  return event;
}

/**
 * The answer without the caller's own `delay_ms`, after waiting that long (a user taking time).
 * The wait runs inside the SDK's request handler: when the server cancels the request meanwhile,
 * the SDK aborts the handler's signal and sends no answer once the handler returns.
 */
async function takeTime(answer) {
  const { delay_ms: delayMs, ...rest } = answer;
  if (typeof delayMs === 'number' && delayMs > 0) {
    await new Promise((resolve) => setTimeout(resolve, delayMs));
  }
  return rest;
}

/** The answer per elicitation mode a connect step's `elicitation/create` handler gives. */
function elicitationModes(handler) {
  if (!handler || typeof handler !== 'object') return {};
  return 'action' in handler ? { form: handler } : handler;
}

/** Version strings are dates, so they order as strings. */
function atLeastVersion(version, floor) {
  return typeof version === 'string' && version >= floor;
}

// ---------------------------------------------------------------------------------------------
// One connection

class Connection {
  constructor(config, handlers = {}) {
    this.config = config;
    // The connect step's answers to server requests, by method; set_roots replaces the roots.
    this.handlers = { ...handlers };
    this.client = new Client(
      { name: 'mcp-harness-ts-sdk-adapter', version: SDK_VERSION },
      { capabilities: this.capabilities() },
    );
    this.client.onerror = (error) => log('sdk error:', describe(error));
    this.installHandlers();
    // Resolves once the SDK reports its transport closed, whoever closed it.
    this.closed = new Promise((resolve) => {
      this.client.onclose = () => resolve();
    });
    this.initializeResult = undefined;
    this.transport = this.makeTransport();
  }

  /**
   * The capabilities the handlers imply, and no others. The SDK sends exactly what it is given
   * (an empty elicitation object means form mode to it); `applyDefaults` is the SDK's own switch
   * for filling an accepted form's omitted members with the schema's defaults (SEP-1034), and
   * it travels on the wire inside the form capability, as the SDK declares it.
   */
  capabilities() {
    const capabilities = {};
    if (this.handlers['roots/list'] !== undefined) capabilities.roots = { listChanged: true };
    if (this.handlers['sampling/createMessage'] !== undefined) capabilities.sampling = {};
    const elicitation = this.handlers['elicitation/create'];
    if (elicitation !== undefined) {
      const modes = elicitationModes(elicitation);
      const keyed = !('action' in (elicitation ?? {}));
      const declared = {};
      if (modes.form !== undefined) {
        declared.form = modes.form?.defaults === true ? { applyDefaults: true } : {};
      }
      if (modes.url !== undefined) declared.url = {};
      // Before 2025-11-25 there were no modes: an empty object is form mode.
      const plain = !keyed && modes.form?.defaults !== true && !atLeastVersion(this.config.protocolVersion, '2025-11-25');
      capabilities.elicitation = plain ? {} : declared;
    }
    return capabilities;
  }

  /**
   * Request handlers for the declared capabilities (Client.setRequestHandler refuses one whose
   * capability is not declared) and notification handlers that report what arrives as events.
   * Anything else is the SDK's: ping answered {}, other requests -32601, and an elicitation in a
   * mode not declared refused by the SDK itself with -32602.
   */
  installHandlers() {
    const { client } = this;
    if (this.handlers['roots/list'] !== undefined) {
      client.setRequestHandler(ListRootsRequestSchema, (request) => {
        EVENTS.add(requestEvent(request));
        return takeTime(this.handlers['roots/list']);
      });
    }
    if (this.handlers['sampling/createMessage'] !== undefined) {
      client.setRequestHandler(CreateMessageRequestSchema, (request) => {
        EVENTS.add(requestEvent(request));
        return takeTime(this.handlers['sampling/createMessage']);
      });
    }
    if (this.handlers['elicitation/create'] !== undefined) {
      client.setRequestHandler(ElicitRequestSchema, async (request) => {
        const mode = request.params?.mode ?? 'form';
        const answer = elicitationModes(this.handlers['elicitation/create'])[mode];
        if (!answer || typeof answer !== 'object') {
          throw new McpError(ErrorCode.InvalidParams, `this client does not answer ${mode}-mode elicitations`);
        }
        EVENTS.add(requestEvent(request));
        const { defaults, ...result } = await takeTime(answer);
        // The SDK fills the defaults in (applyDefaults); it mutates content, so hand it a copy.
        if (result.content && typeof result.content === 'object') result.content = { ...result.content };
        return result;
      });
    }
    // The SDK answers ping itself ({}); its users see a server's ping only by registering their
    // own handler for it, which the SDK allows. Same answer, now reported as an event.
    client.setRequestHandler(PingRequestSchema, (request) => {
      EVENTS.add(requestEvent(request));
      return {};
    });
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
      const { level, logger, data } = notification.params;
      const event = { type: 'log', level };
      if (logger !== undefined) event.logger = logger;
      event.data = data;
      EVENTS.add(event);
    });
    const lists = [
      [ToolListChangedNotificationSchema, 'tools'],
      [ResourceListChangedNotificationSchema, 'resources'],
      [PromptListChangedNotificationSchema, 'prompts'],
    ];
    for (const [schema, list] of lists) {
      client.setNotificationHandler(schema, () => EVENTS.add({ type: 'list_changed', list }));
    }
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
      EVENTS.add({ type: 'resource_updated', uri: notification.params.uri });
    });
  }

  makeTransport() {
    const { config } = this;
    let transport;
    if (config.transport === 'stdio') {
      const [command, ...args] = config.argv;
      // stderr: 'inherit' (the SDK's default) sends the server's logs to our stderr.
      transport = new StdioClientTransport({ command, args });
    } else {
      const headers = {};
      if (config.token) headers.Authorization = `Bearer ${config.token}`;
      // new URL() throws on a malformed URL; that is the SDK's only URL check.
      transport = new StreamableHTTPClientTransport(new URL(config.url), {
        requestInit: { headers },
      });
    }
    // Observe (without changing) what arrives, to learn the negotiated version: the SDK's
    // Client keeps the initialize result's serverInfo but not its protocolVersion. The SDK's
    // Protocol.connect chains this handler before its own.
    // Observe (without changing) what is sent, to learn the progress token the SDK chose: it
    // puts its request id in params._meta.progressToken and hands the caller's onprogress
    // callback the notification's params without the token.
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
      const token = message?.params?._meta?.progressToken;
      if (this.progressSlot !== undefined && 'id' in (message ?? {}) && token !== undefined) {
        this.progressSlot.token = token;
        this.progressSlot = undefined;
      }
      return send(message, options);
    };
    transport.onmessage = (message) => {
      if (
        this.initializeResult === undefined &&
        message && typeof message === 'object' && 'id' in message &&
        message.result && typeof message.result === 'object'
      ) {
        this.initializeResult = message.result;
      }
    };
    return transport;
  }

  async connect() {
    await this.client.connect(this.transport, { timeout: this.config.timeoutMs });
    const result = this.initializeResult ?? {};
    return {
      protocolVersion: result.protocolVersion ?? null,
      serverInfo: this.client.getServerVersion() ?? result.serverInfo ?? null,
    };
  }

  /**
   * Every entry of a listing. The SDK has no list-all helper for any listing: this is the loop
   * its users write, following nextCursor until it is absent and no more (CLIENTS.md: no page
   * cap, cursor or duplicate check the SDK lacks; a server that repeats a cursor keeps it going
   * until the trial's deadline). `{ cursor }` with cursor undefined on the first page is
   * serialized by the SDK as `"params": {}`.
   */
  async listAll(fetchPage, key) {
    const entries = [];
    let cursor;
    for (;;) {
      const result = await fetchPage({ cursor }, { timeout: this.config.timeoutMs });
      entries.push(...result[key]);
      if (result.nextCursor === undefined || result.nextCursor === null) return { [key]: entries };
      cursor = result.nextCursor;
    }
  }

  listTools() {
    return this.listAll((params, options) => this.client.listTools(params, options), 'tools');
  }

  listResources() {
    return this.listAll((params, options) => this.client.listResources(params, options), 'resources');
  }

  listResourceTemplates() {
    return this.listAll(
      (params, options) => this.client.listResourceTemplates(params, options),
      'resourceTemplates',
    );
  }

  listPrompts() {
    return this.listAll((params, options) => this.client.listPrompts(params, options), 'prompts');
  }

  async readResource(uri) {
    const result = await this.client.readResource({ uri }, { timeout: this.config.timeoutMs });
    return { contents: result.contents.map(contentsAsSeen) };
  }

  async getPrompt(name, args) {
    const params = args === undefined ? { name } : { name, arguments: args };
    const result = await this.client.getPrompt(params, { timeout: this.config.timeoutMs });
    const seen = {};
    if (result.description !== undefined) seen.description = result.description;
    seen.messages = result.messages.map((m) => ({ role: m.role, content: blockAsSeen(m.content) }));
    return seen;
  }

  async complete(step) {
    // Client.complete sends the params it is given; ref, argument and context go as the step has them.
    const params = { ref: step.ref, argument: step.argument };
    if (step.context !== undefined) params.context = step.context;
    const result = await this.client.complete(params, { timeout: this.config.timeoutMs });
    return result.completion;
  }

  async ping() {
    await this.client.ping({ timeout: this.config.timeoutMs });
    return {};
  }

  async setLoggingLevel(level) {
    await this.client.setLoggingLevel(level, { timeout: this.config.timeoutMs });
    return {};
  }

  async callTool(name, args, cancelAfterMs, progress = false, maxTimeoutMs = undefined) {
    const options = { timeout: this.config.timeoutMs };
    if (progress) {
      // The SDK's progress option: the request carries a progressToken (its request id) and
      // each notifications/progress for it reaches onprogress while the call is in flight.
      const slot = {};
      this.progressSlot = slot;
      options.onprogress = (params) => {
        const event = { type: 'progress', progressToken: slot.token ?? null, progress: params.progress };
        if (params.total !== undefined) event.total = params.total;
        if (params.message !== undefined) event.message = params.message;
        EVENTS.add(event);
      };
      if (maxTimeoutMs !== undefined) {
        // The SDK restarts the timeout on each progress and, on a progress past
        // maxTotalTimeout, fails the call with RequestTimeout ('Maximum total timeout exceeded').
        options.resetTimeoutOnProgress = true;
        options.maxTotalTimeout = maxTimeoutMs;
      }
    }
    let cancel;
    let timer;
    if (cancelAfterMs !== undefined) {
      cancel = new AbortController();
      options.signal = cancel.signal;
      timer = setTimeout(() => cancel.abort(), cancelAfterMs);
    }
    try {
      const result = await this.client.callTool({ name, arguments: args }, undefined, options);
      if (result.isError === true) {
        const texts = textsOf(result);
        throw new StepError('tool_error', texts.length ? texts.join('\n') : 'the tool result had isError: true');
      }
      const content = (Array.isArray(result.content) ? result.content : []).map(blockAsSeen);
      if (result.structuredContent !== undefined && result.structuredContent !== null) {
        return { structured: result.structuredContent, content };
      }
      return { text: textsOf(result), content };
    } catch (error) {
      throw classify(error, { cancel });
    } finally {
      if (timer !== undefined) clearTimeout(timer);
      this.progressSlot = undefined;
    }
  }

  async setRoots(roots) {
    this.handlers['roots/list'] = { roots };
    // Client.sendRootsListChanged refuses (before sending) unless roots.listChanged was declared.
    await this.client.sendRootsListChanged();
    return {};
  }

  async subscribe(uri, on) {
    // Sent whatever the server declared, like every other request of this adapter (see the
    // header): the SDK checks resources.subscribe only with enforceStrictCapabilities.
    const options = { timeout: this.config.timeoutMs };
    if (on) await this.client.subscribeResource({ uri }, options);
    else await this.client.unsubscribeResource({ uri }, options);
    return {};
  }

  /**
   * Ends the connection the way a user ending a session does. Over HTTP that is the transport's
   * terminateSession() (DELETE with the server-issued session id; the SDK takes a 405 as
   * "not supported") and then Client.close(), which by itself only aborts the transport's
   * requests and sends nothing. A failed DELETE is reported after the client is closed.
   */
  async close() {
    let failure;
    if (this.transport instanceof StreamableHTTPClientTransport && this.transport.sessionId) {
      try {
        await this.transport.terminateSession();
      } catch (error) {
        failure = error;
      }
    }
    await this.client.close();
    if (failure !== undefined) throw classify(failure);
  }
}

// ---------------------------------------------------------------------------------------------
// Content as seen (CLIENTS.md): binary data by its decoded length and SHA-256

/**
 * Length and SHA-256 of base64 data. The SDK validates `data` and `blob` with the platform's
 * atob() (its Base64Schema) and hands the string on undecoded; atob is also the decoder here,
 * the one built-in JavaScript decoder that refuses input rather than skipping what it cannot
 * read (Buffer.from(…, 'base64') ignores stray characters). It follows the WHATWG
 * "forgiving-base64" rules: ASCII whitespace is removed and missing padding is accepted.
 */
function decoded(data, where) {
  let binary;
  try {
    binary = atob(data);
  } catch (error) {
    throw new StepError('invalid_response', `${where} is not valid base64: ${describe(error)}`);
  }
  const bytes = Buffer.from(binary, 'latin1');
  return { bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') };
}

function contentsAsSeen(contents) {
  const seen = { uri: contents.uri };
  if (contents.mimeType !== undefined) seen.mimeType = contents.mimeType;
  if (typeof contents.text === 'string') {
    seen.text = contents.text;
  } else if (typeof contents.blob === 'string') {
    Object.assign(seen, decoded(contents.blob, `the blob of ${contents.uri}`));
  } else {
    // The SDK's schema admits only text or blob contents; kept as a clear failure if that changes.
    throw new StepError('invalid_response', `resource contents of ${contents.uri} have neither text nor blob`);
  }
  return seen;
}

function blockAsSeen(block) {
  let seen;
  switch (block?.type) {
    case 'resource_link':
      return block; // as received (as far as the SDK's schema keeps it)
    case 'text':
      seen = { type: 'text', text: block.text };
      break;
    case 'image':
    case 'audio':
      seen = { type: block.type, mimeType: block.mimeType, ...decoded(block.data, `the ${block.type} block's data`) };
      break;
    case 'resource':
      seen = { type: 'resource', resource: contentsAsSeen(block.resource) };
      break;
    default:
      // The SDK validates blocks against its ContentBlockSchema, so this is not reached today.
      throw new StepError('invalid_response', `a content block of unknown type ${JSON.stringify(block?.type)}`);
  }
  if (block.annotations !== undefined) seen.annotations = block.annotations;
  return seen;
}

function textsOf(result) {
  const content = Array.isArray(result.content) ? result.content : [];
  return content.filter((b) => b && b.type === 'text').map((b) => b.text);
}

// ---------------------------------------------------------------------------------------------
// The plan

/** The Connection call for one of the ops that need nothing but the connection. */
function simpleWork(op, step) {
  const bad = (what) => new StepError('unsupported_op', `a ${op} step needs ${what}: ${JSON.stringify(step)}`);
  switch (op) {
    case 'list_resources':
      return (c) => c.listResources();
    case 'list_resource_templates':
      return (c) => c.listResourceTemplates();
    case 'list_prompts':
      return (c) => c.listPrompts();
    case 'read_resource':
      if (typeof step.uri !== 'string') throw bad('a string "uri"');
      return (c) => c.readResource(step.uri);
    case 'get_prompt':
      if (typeof step.name !== 'string') throw bad('a string "name"');
      return (c) => c.getPrompt(step.name, step.arguments ?? undefined);
    case 'complete':
      return (c) => c.complete(step);
    case 'ping':
      return (c) => c.ping();
    default:
      return (c) => c.setLoggingLevel(step.level);
  }
}

async function runPlan(config) {
  let connection = null;
  // Connections whose shutdown the SDK started on its own (a failed connect): wait for them
  // before exiting so the SDK can finish shutting its stdio child down.
  const shutdowns = [];

  for (let index = 0; index < config.plan.length; index += 1) {
    const step = config.plan[index];
    const op = step && typeof step === 'object' && 'op' in step ? step.op : null;
    const line = { step: index, op };
    const started = performance.now();
    try {
      switch (op) {
        case 'connect': {
          if (connection) {
            const previous = connection;
            connection = null;
            try {
              await previous.close();
            } catch (error) {
              log('closing the previous connection failed:', describe(error));
            }
          }
          if (config.era !== 'legacy') {
            throw new StepError(
              'unsupported_op',
              `${SDK_NAME} speaks only the initialize-handshake era; it has no ${config.era}-era client ` +
                '(no server/discover probe, no per-request _meta)',
            );
          }
          if (step.handlers !== undefined && (step.handlers === null || typeof step.handlers !== 'object' || Array.isArray(step.handlers))) {
            throw new StepError('unsupported_op', `"handlers" must be an object by method: ${JSON.stringify(step)}`);
          }
          const attempt = new Connection(config, step.handlers ?? {});
          try {
            line.ok = await attempt.connect();
            connection = attempt;
          } catch (error) {
            // Client.connect already called close() itself on failure.
            shutdowns.push(attempt.closed);
            throw classify(error, { phase: 'initialize' });
          }
          break;
        }
        case 'list_tools': {
          if (!connection) throw notConnected();
          try {
            line.ok = await connection.listTools();
          } catch (error) {
            throw classify(error);
          }
          break;
        }
        case 'call_tool': {
          if (typeof step.name !== 'string') {
            throw new StepError('unsupported_op', `a call_tool step needs a string "name": ${JSON.stringify(step)}`);
          }
          let cancelAfterMs;
          if (step.cancel_after_ms !== undefined && step.cancel_after_ms !== null) {
            if (!Number.isInteger(step.cancel_after_ms) || step.cancel_after_ms < 0) {
              throw new StepError('unsupported_op', `cancel_after_ms must be a non-negative integer: ${JSON.stringify(step)}`);
            }
            cancelAfterMs = step.cancel_after_ms;
          }
          if (step.progress !== undefined && typeof step.progress !== 'boolean') {
            throw new StepError('unsupported_op', `"progress" must be true or false: ${JSON.stringify(step)}`);
          }
          let maxTimeoutMs;
          if (step.max_timeout_ms !== undefined && step.max_timeout_ms !== null) {
            if (!Number.isInteger(step.max_timeout_ms) || step.max_timeout_ms <= 0 || step.progress !== true) {
              throw new StepError('unsupported_op', `max_timeout_ms must be a positive integer, with progress: true: ${JSON.stringify(step)}`);
            }
            maxTimeoutMs = step.max_timeout_ms;
          }
          if (!connection) throw notConnected();
          line.ok = await connection.callTool(step.name, step.arguments ?? {}, cancelAfterMs, step.progress === true, maxTimeoutMs);
          break;
        }
        case 'events': {
          const atLeast = step.min ?? 0;
          if (!Number.isInteger(atLeast) || atLeast < 0) {
            throw new StepError('unsupported_op', `"min" must be a non-negative integer: ${JSON.stringify(step)}`);
          }
          line.ok = { events: await EVENTS.take(atLeast, config.timeoutMs) };
          break;
        }
        case 'set_roots': {
          if (!Array.isArray(step.roots)) {
            throw new StepError('unsupported_op', `a set_roots step needs a "roots" array: ${JSON.stringify(step)}`);
          }
          if (!connection) throw notConnected();
          try {
            line.ok = await connection.setRoots(step.roots);
          } catch (error) {
            throw classify(error);
          }
          break;
        }
        case 'subscribe_resource':
        case 'unsubscribe_resource': {
          if (typeof step.uri !== 'string') {
            throw new StepError('unsupported_op', `a ${op} step needs a string "uri": ${JSON.stringify(step)}`);
          }
          if (!connection) throw notConnected();
          try {
            line.ok = await connection.subscribe(step.uri, op === 'subscribe_resource');
          } catch (error) {
            throw classify(error);
          }
          break;
        }
        case 'listen':
          // subscriptions/listen is a 2026-07-28 request; this SDK speaks only the handshake era.
          throw new StepError('unsupported_op', `${SDK_NAME} has no subscriptions/listen (2026-07-28 era)`);
        case 'list_resources':
        case 'list_resource_templates':
        case 'list_prompts':
        case 'read_resource':
        case 'get_prompt':
        case 'complete':
        case 'ping':
        case 'set_logging_level': {
          const work = simpleWork(op, step);
          if (!connection) throw notConnected();
          try {
            line.ok = await work(connection);
          } catch (error) {
            throw classify(error);
          }
          break;
        }
        case 'discover':
          // server/discover is a 2026-07-28 request; this SDK has no way to send it.
          throw new StepError('unsupported_op', `${SDK_NAME} has no server/discover (2026-07-28 era)`);
        case 'sleep': {
          if (!Number.isInteger(step.ms) || step.ms < 0) {
            throw new StepError('unsupported_op', `a sleep step needs a non-negative integer "ms": ${JSON.stringify(step)}`);
          }
          await new Promise((resolve) => setTimeout(resolve, step.ms));
          line.ok = {};
          break;
        }
        case 'close': {
          if (!connection) throw notConnected();
          const closing = connection;
          connection = null;
          await closing.close();
          line.ok = {};
          break;
        }
        default:
          throw new StepError('unsupported_op', `this adapter does not know the step ${JSON.stringify(step)}`);
      }
    } catch (error) {
      const mapped = classify(error);
      line.error = { kind: mapped.kind, message: mapped.message, ...mapped.extra };
      log(`step ${index} (${op}): ${mapped.kind}: ${mapped.message}`);
    }
    if (op === 'connect') {
      const limits = versionLimits(config);
      if (limits.length > 0) line.limits = limits;
    }
    log(`step ${index} (${op}) took ${Math.round(performance.now() - started)} ms`);
    emit(line);
  }

  // An implicit close prints no line.
  if (connection) {
    try {
      await connection.close();
    } catch (error) {
      log('implicit close failed:', describe(error));
    }
  }
  // The SDK escalates a stdio shutdown over about 4 s (2 s after closing stdin, 2 s after
  // SIGTERM); wait a little longer than that for it, then exit regardless.
  if (shutdowns.length > 0) {
    let timer;
    const bound = new Promise((resolve) => {
      timer = setTimeout(resolve, 6000);
    });
    await Promise.race([Promise.all(shutdowns), bound]);
    clearTimeout(timer);
  }
}

// ---------------------------------------------------------------------------------------------

function exitAfterFlush(code) {
  log(`plan done ${Math.round(performance.now())} ms after launch; exiting with ${code}`);
  // process.stdout may be a pipe (asynchronous); exit once everything written has drained.
  process.stdout.write('', () => process.exit(code));
}

/**
 * Node loads its fetch implementation (undici) lazily, on the first call; in a freshly started
 * process that costs tens of milliseconds, which would otherwise be charged to the SDK's first
 * request timeout (the harness starts one process per trial, some with 300 ms timeouts). A
 * fetch of a data: URL loads it without touching the network, so nothing shows on the wire.
 */
async function warmUpFetch() {
  try {
    await (await fetch('data:,')).arrayBuffer();
  } catch (error) {
    log('fetch warm-up failed (ignored):', describe(error));
  }
}

// Deep enough that an error thrown inside the SDK's schema compiler still shows the SDK frame
// that called it (see classify); V8's default keeps only 10 frames.
Error.stackTraceLimit = 50;
const config = readConfig();
log(`${SDK_NAME} ${SDK_VERSION}, transport ${config.transport}, loaded ${Math.round(performance.now())} ms after launch`);
process.on('unhandledRejection', (reason) => log('unhandled rejection:', describe(reason)));
(config.transport === 'http' ? warmUpFetch() : Promise.resolve())
  .then(() => runPlan(config))
  .then(
    () => exitAfterFlush(0),
    (error) => {
      log('adapter crashed:', error?.stack ?? String(error));
      exitAfterFlush(1);
    },
  );

#!/usr/bin/env node
// mcp-harness driver-contract adapter (contract version 1) for the TypeScript SDK v2 client
// package, @modelcontextprotocol/client pinned to 2.4.0 in package.json, on the JavaScript
// adapter kit (adapters/kits/js). The kit does the contract's plumbing; this file is the SDK.
//
// It drives the SDK as its documentation shows and reports what the SDK does, adding no guard
// the SDK lacks:
// - listings are the SDK's own auto-aggregating list*() (no cursor): it walks the pages itself,
//   stops at its 64-page cap (listMaxPages, default kept) and checks nothing else;
// - the offered version is the SDK's `supportedProtocolVersions` with the asked version first
//   (its initialize offers the first 2025-era entry), so no `choose_version` limit in the legacy
//   era; `modern` is versionNegotiation { pin: '2026-07-28' }, `dual` is { mode: 'auto' } with
//   the asked legacy version first. Over HTTP a dual verdict is handed back to the next connect
//   to the same origin through the SDK's `prior` connect option, its documented era cache;
// - connect's `handlers` (and the methods the plan's `input`s answer) become the declared
//   capabilities and setRequestHandler handlers; in the 2026-07-28 era the SDK fulfils
//   input_required results through those same handlers, and the handler answers with the
//   running step's `input` first;
// - capability checks, result caching (ttlMs), x-mcp-header mirroring, outputSchema validation
//   and the close (terminateSession then close over HTTP) are the SDK's, unchanged.
//
// Authorization trials (MCP_HARNESS_AUTH_REDIRECT_URI set; CLIENTS.md, "Authorization"): the
// transport's `authProvider` is an OAuthClientProvider kept in memory (tokens, client
// information, code verifier; every secret it sees handed to the kit's redaction), with the
// pre-registered id and secret as its client information when given (the SDK picks the token
// endpoint's auth method from the server's metadata), the CIMD URL as `clientMetadataUrl`,
// and the kit's headless step as `redirectToAuthorization`. As the SDK documents for
// interactive flows, `connect` throws UnauthorizedError once the user was sent to authorize;
// the adapter then calls `transport.finishAuth(searchParams)` with the redirect's whole query,
// the SDK's preferred form, which reads `code` and `iss`, checks `iss` (RFC 9207) and turns an
// error redirect into an OAuthError itself, and connects again with a new client and
// transport. The SDK "does not validate `state`" (its words): it sends one only when the
// provider implements the optional `state()`, and leaves the comparison to its user. The
// adapter implements neither: a guard the SDK lacks is not added. A later step that meets
// UnauthorizedError is re-authorized the same way and run once more; at most two
// authorizations per step (a user asked a third time within one action gives up).

import {
  Client,
  InsecureTokenEndpointError,
  OAuthClientFlowError,
  OAuthError,
  ProtocolError,
  SdkError,
  SdkErrorCode,
  StreamableHTTPClientTransport,
  SUPPORTED_PROTOCOL_VERSIONS,
  UnauthorizedError,
} from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Events, StepError, causeCodes, contentAsSeen, contentsAsSeen, describe, log, MemoryOAuthProvider, retryAfterAuthorization, run, toolResult } from '../kits/js/mcp-harness-kit.mjs';

const SDK = '@modelcontextprotocol/client 2.4.0';
const MODERN = '2026-07-28';
const SEEN = { base64: 'forgiving' }; // the SDK validates base64 with atob()
const EVENTS = new Events();
/** The era verdict of each HTTP origin a dual connect probed (the SDK's PriorDiscovery). */
const priors = new Map();

/** The SDK's errors in the contract's kinds; the kit maps the rest (TLS, bad URL, the connection). */
function classify(error, context) {
  const message = describe(error);
  // The SDK's refusal of an http:// token endpoint (before sending): the contract's insecure_url.
  if (error instanceof InsecureTokenEndpointError) return new StepError('insecure_url', message);
  // The SDK gave up an authorization: no token after the flow, an OAuth error response or error
  // redirect, or one of its own flow checks (issuer, registration, resource, scope).
  if (error instanceof UnauthorizedError || error instanceof OAuthError || error instanceof OAuthClientFlowError) {
    return new StepError('auth_failed', message);
  }
  // Its other refusals inside the OAuth flow (a resource mismatch, S256 not offered, no way to
  // register) are plain Errors thrown by its authInternal(): where they were thrown tells them
  // apart. A network failure on the way (fetch failed, with a cause code) keeps the kit's kind.
  if (error instanceof Error && /\bauthInternal\b/.test(error.stack ?? '') && causeCodes(error).length === 0 && !/^fetch failed/.test(error.message)) {
    return new StepError('auth_failed', message);
  }
  if (error instanceof ProtocolError) {
    const kind = context.op === 'connect' ? (error.code === -32022 ? 'unsupported_version' : 'handshake_failed') : 'protocol_error';
    return new StepError(kind, message, error.code);
  }
  if (!(error instanceof SdkError)) {
    // Its handshake's refusal of the version the server answered (a plain Error it documents).
    if (error instanceof Error && /^Server's protocol version is not supported/.test(error.message)) return new StepError('unsupported_version', message);
    if (error && (error.name === 'ZodError' || Array.isArray(error.issues))) return new StepError('invalid_response', message);
    return undefined;
  }
  const status = error.data?.status;
  switch (error.code) {
    case SdkErrorCode.RequestTimeout:
      return new StepError(context.cancelled ? 'cancelled' : 'timeout', message);
    case SdkErrorCode.ConnectionClosed:
    case SdkErrorCode.NotConnected:
    case SdkErrorCode.SendFailed:
      return typeof status === 'number' ? new StepError('http_status', message, undefined, status) : new StepError('transport_closed', message);
    case SdkErrorCode.CapabilityNotSupported:
      // Raised by its input_required driver (data { key, method }) for an input request it has
      // no handler for: nothing is retried, which is the contract's input_unsupported.
      if (typeof error.data?.key === 'string' && typeof error.data?.method === 'string') return new StepError('input_unsupported', message);
      return new StepError('capability_missing', message);
    case SdkErrorCode.InvalidResult:
    case SdkErrorCode.UnsupportedResultType:
    case SdkErrorCode.ListPaginationExceeded:
    case SdkErrorCode.ClientHttpUnexpectedContent:
      return new StepError('invalid_response', message);
    case SdkErrorCode.MethodNotSupportedByProtocolVersion:
      return new StepError('capability_missing', message);
    case SdkErrorCode.EraNegotiationFailed:
      return new StepError('unsupported_version', message);
    default:
      if (typeof status === 'number') return new StepError('http_status', message, undefined, status);
      return undefined;
  }
}

/** A server request's params as received, `_meta` left out (CLIENTS.md allows it). */
function requestEvent(request) {
  const event = { type: 'request', method: request.method };
  if (request.params !== undefined) {
    const { _meta, ...params } = request.params;
    event.params = params;
  }
  return event;
}

/** The answer without the caller's `delay_ms`, after waiting that long (a user taking time). */
async function takeTime(answer) {
  const { delay_ms: delayMs, defaults, ...rest } = answer;
  if (typeof delayMs === 'number' && delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
  return rest;
}

/** The answer per elicitation mode a connect step's `elicitation/create` handler gives. */
function elicitationModes(handler) {
  if (!handler || typeof handler !== 'object') return {};
  return 'action' in handler ? { form: handler } : handler;
}

/** The methods the plan's call_tool steps answer in their `input`. */
function plannedInputs(plan) {
  const methods = new Set();
  for (const step of plan) if (step && typeof step.input === 'object' && step.input) for (const m of Object.keys(step.input)) methods.add(m);
  return methods;
}

class Connection {
  constructor(env, handlers) {
    this.env = env;
    this.handlers = { ...handlers }; // set_roots replaces the roots
    this.options = { timeout: env.timeoutMs };
    this.input = undefined; // the running call_tool step's `input`
    this.methods = new Set([...Object.keys(this.handlers), ...plannedInputs(env.plan)]);
    const asked = env.era === 'dual' ? env.legacyProtocolVersion : env.protocolVersion;
    const versions = [asked, ...SUPPORTED_PROTOCOL_VERSIONS.filter((v) => v !== asked)];
    const options = { capabilities: this.capabilities(), supportedProtocolVersions: versions };
    if (env.era === 'modern') options.versionNegotiation = { mode: { pin: MODERN } };
    if (env.era === 'dual') options.versionNegotiation = { mode: 'auto' };
    this.client = new Client({ name: 'mcp-harness-ts-v2-adapter', version: '2.4.0' }, options);
    this.client.onerror = (error) => log('sdk error:', describe(error));
    this.installHandlers();
    this.closed = new Promise((resolve) => {
      this.client.onclose = () => resolve();
    });
    this.transport = this.makeTransport();
  }

  /** The capabilities the handlers (and planned inputs) imply, and no others. */
  capabilities() {
    const capabilities = {};
    if (this.methods.has('roots/list')) capabilities.roots = { listChanged: true };
    if (this.methods.has('sampling/createMessage')) capabilities.sampling = {};
    if (this.methods.has('elicitation/create')) {
      const handler = this.handlers['elicitation/create'];
      const modes = handler === undefined ? { form: {} } : elicitationModes(handler);
      const declared = {};
      if (modes.form !== undefined) declared.form = modes.form?.defaults === true ? { applyDefaults: true } : {};
      if (modes.url !== undefined) declared.url = {};
      const keyed = handler !== undefined && !('action' in (handler ?? {}));
      const plain = !keyed && modes.form?.defaults !== true && !(this.env.protocolVersion >= '2025-11-25');
      capabilities.elicitation = plain ? {} : declared;
    }
    return capabilities;
  }

  /** The answer to a server request (or an input request): the step's input first, then the handler. */
  answer(method, mode) {
    const own = this.input?.[method];
    if (own !== undefined) return own;
    const handler = this.handlers[method];
    if (method !== 'elicitation/create') return handler;
    return elicitationModes(handler)[mode ?? 'form'];
  }

  installHandlers() {
    const { client } = this;
    for (const method of ['roots/list', 'sampling/createMessage', 'elicitation/create']) {
      if (!this.methods.has(method)) continue;
      client.setRequestHandler(method, async (request) => {
        EVENTS.add(requestEvent(request));
        const answer = this.answer(method, request.params?.mode);
        if (answer === undefined || answer === null || typeof answer !== 'object') {
          if (method === 'elicitation/create') return { action: 'decline' };
          throw new ProtocolError(-32601, `this client has no answer to ${method}`);
        }
        const result = await takeTime(answer);
        if (result.content && typeof result.content === 'object') result.content = { ...result.content };
        return result;
      });
    }
    client.setNotificationHandler('notifications/message', ({ params: { level, logger, data } }) => {
      EVENTS.add({ type: 'log', level, ...(logger !== undefined ? { logger } : {}), data });
    });
    for (const list of ['tools', 'resources', 'prompts']) {
      client.setNotificationHandler(`notifications/${list}/list_changed`, () => EVENTS.add({ type: 'list_changed', list }));
    }
    client.setNotificationHandler('notifications/resources/updated', ({ params }) => {
      EVENTS.add({ type: 'resource_updated', uri: params.uri });
    });
  }

  makeTransport() {
    const { env } = this;
    let transport;
    if (env.transport === 'stdio') {
      const [command, ...args] = env.serverCommand;
      transport = new StdioClientTransport({ command, args });
    } else {
      const headers = env.token ? { Authorization: `Bearer ${env.token}` } : {};
      const options = { requestInit: { headers } };
      if (oauth) options.authProvider = oauth;
      transport = new StreamableHTTPClientTransport(new URL(env.url), options);
    }
    // The progress token the SDK chose, read off the outgoing request (onprogress gets none).
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
      const token = message?.params?._meta?.progressToken;
      if (this.progressSlot !== undefined && 'id' in (message ?? {}) && token !== undefined) {
        this.progressSlot.token = token;
        this.progressSlot = undefined;
      }
      return send(message, options);
    };
    return transport;
  }

  async connect() {
    const { env } = this;
    const origin = env.transport === 'http' && env.era === 'dual' ? new URL(env.url).origin : undefined;
    const options = { ...this.options };
    if (origin && priors.has(origin)) options.prior = priors.get(origin);
    await this.client.connect(this.transport, options);
    const era = this.client.getProtocolEra?.() === 'modern' ? 'modern' : 'legacy';
    if (origin && !priors.has(origin)) {
      priors.set(origin, era === 'modern' ? { kind: 'modern', discover: this.client.getDiscoverResult() } : { kind: 'legacy' });
    }
    const ok = { protocolVersion: this.client.getNegotiatedProtocolVersion() ?? null, serverInfo: this.client.getServerVersion() ?? null };
    if (env.era !== 'legacy') ok.era = era;
    return ok;
  }

  async callTool(step, context) {
    const options = { ...this.options };
    if (step.progress) {
      const slot = {};
      this.progressSlot = slot;
      options.onprogress = (params) => {
        const event = { type: 'progress', progressToken: slot.token ?? null, progress: params.progress };
        if (params.total !== undefined) event.total = params.total;
        if (params.message !== undefined) event.message = params.message;
        EVENTS.add(event);
      };
      if (step.max_timeout_ms != null) {
        options.resetTimeoutOnProgress = true;
        options.maxTotalTimeout = step.max_timeout_ms;
      }
    }
    if (context.signal) options.signal = context.signal;
    this.input = step.input ?? undefined;
    try {
      return toolResult(await this.client.callTool({ name: step.name, arguments: step.arguments ?? {} }, options), SEEN);
    } finally {
      this.progressSlot = undefined;
      this.input = undefined;
    }
  }

  async close() {
    let failure;
    try {
      await this.subscription?.close();
    } catch (error) {
      log('closing the subscription failed:', describe(error));
    }
    if (this.transport instanceof StreamableHTTPClientTransport && this.transport.sessionId) {
      try {
        await this.transport.terminateSession();
      } catch (error) {
        failure = error;
      }
    }
    await this.client.close();
    if (failure !== undefined) throw failure;
  }
}

/** The trial's OAuth provider (authorization trials over HTTP only), shared by its connections. */
let oauth;
/** Runs `attempt()`, finishing an authorization the SDK stopped for and running it again. */
function withAuthorization(attempt, transport) {
  return retryAfterAuthorization(attempt, {
    provider: oauth,
    isUnauthorized: (error) => error instanceof UnauthorizedError,
    finish: (location) => transport().finishAuth(new URL(location).searchParams),
  });
}

/** Each op, re-run once its step's authorization is finished (see withAuthorization). */
function authorized(ops) {
  return Object.fromEntries(
    Object.entries(ops).map(([name, op]) => [name, (step, context) => withAuthorization(() => op(step, context), () => connection.transport)]),
  );
}

let connection;
const shutdowns = [];
Error.stackTraceLimit = 50; // deep enough for classify to see authInternal

/**
 * A listing. When the server did not declare `capability`, the SDK sends nothing and returns an
 * empty list (its documented behaviour): that refusal is what the contract calls
 * `capability_missing`, so it is reported as such rather than as an empty `ok`.
 */
async function listing(capability, key, list) {
  const result = await list(connection.client, connection.options);
  if (!connection.client.getServerCapabilities()?.[capability]) {
    throw new StepError(
      'capability_missing',
      `the server declared no ${capability}: the SDK sent nothing and returned an empty list`,
    );
  }
  return { [key]: result[key] };
}

await run({
  name: `ts-v2-adapter ${SDK}`,
  classify,
  // No `traces`: the v2 client has no OpenTelemetry of its own, and the MCP instrumentation
  // packages (@traceloop/instrumentation-mcp, @arizeai/openinference-instrumentation-mcp) hook
  // the v1 package, @modelcontextprotocol/sdk; the kit answers a traces trial unsupported_op.
  features: ['roots', 'sampling', 'elicitation', 'oauth'], // what the kit may ask of the SDK
  events: EVENTS,
  ops: {
    async connect(step, { env }) {
      if (env.auth && env.transport === 'http' && !oauth) oauth = new MemoryOAuthProvider(env, 'mcp-harness ts-v2 adapter');
      let attempt;
      return withAuthorization(
        async () => {
          // A failed connect closed its client: each round is a new client and transport.
          attempt = new Connection(env, step.handlers ?? {});
          try {
            const ok = await attempt.connect();
            connection = attempt;
            return ok;
          } catch (error) {
            shutdowns.push(attempt.closed);
            attempt.client.close().catch(() => {});
            throw error;
          }
        },
        () => attempt.transport,
      );
    },
    ...authorized({
      list_tools: () => listing('tools', 'tools', (c, o) => c.listTools(undefined, o)),
      list_resources: () => listing('resources', 'resources', (c, o) => c.listResources(undefined, o)),
      list_resource_templates: () =>
        listing('resources', 'resourceTemplates', (c, o) => c.listResourceTemplates(undefined, o)),
      list_prompts: () => listing('prompts', 'prompts', (c, o) => c.listPrompts(undefined, o)),
      call_tool: (step, context) => connection.callTool(step, context),
      async read_resource({ uri }) {
        const result = await connection.client.readResource({ uri }, connection.options);
        return { contents: result.contents.map((c) => contentsAsSeen(c, SEEN)) };
      },
      async get_prompt({ name, arguments: args }) {
        const result = await connection.client.getPrompt(args == null ? { name } : { name, arguments: args }, connection.options);
        const messages = result.messages.map((m) => ({ role: m.role, content: contentAsSeen(m.content, SEEN) }));
        return result.description !== undefined ? { description: result.description, messages } : { messages };
      },
      async complete({ ref, argument, context }) {
        const params = context == null ? { ref, argument } : { ref, argument, context };
        return (await connection.client.complete(params, connection.options)).completion;
      },
      ping: () => connection.client.ping(connection.options).then(() => ({})),
      set_logging_level: ({ level }) => connection.client.setLoggingLevel(level, connection.options).then(() => ({})),
      async set_roots({ roots }) {
        connection.handlers['roots/list'] = { roots };
        await connection.client.sendRootsListChanged();
      },
      subscribe_resource: ({ uri }) => connection.client.subscribeResource({ uri }, connection.options).then(() => ({})),
      unsubscribe_resource: ({ uri }) => connection.client.unsubscribeResource({ uri }, connection.options).then(() => ({})),
      discover: async () => connection.client.discover(connection.options),
      async listen({ notifications }) {
        const subscription = await connection.client.listen(notifications, connection.options);
        connection.subscription = subscription;
        return { notifications: subscription.honoredFilter };
      },
    }),
    async close() {
      const closing = connection;
      connection = undefined;
      await closing?.close();
    },
  },
  async finish() {
    if (shutdowns.length === 0) return;
    let timer;
    await Promise.race([Promise.all(shutdowns), new Promise((resolve) => (timer = setTimeout(resolve, 6000)))]);
    clearTimeout(timer);
  },
});

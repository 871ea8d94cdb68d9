#!/usr/bin/env node
// mcp-harness driver-contract adapter (contract version 1) for the official TypeScript MCP SDK,
// @modelcontextprotocol/sdk pinned to 1.32.2 in package.json, on the JavaScript adapter kit
// (adapters/kits/js: environment, plan loop, step checks, outcome lines, stdout guard, token
// redaction, content as seen). What is left here is the SDK.
//
// The adapter drives the SDK the way a typical application would and reports what the SDK
// does. It deliberately adds no guard the SDK lacks: no URL policy, no repeated-cursor or
// duplicate-name detection (the kit's paginate runs unchecked), no timeout other than the SDK's
// own per-request timeout. The SDK refuses a request for a capability the server did not
// declare only with its `enforceStrictCapabilities` option, off by default and kept off here;
// its shipped examples never read getServerCapabilities() first either (CLIENTS.md, "It leaves
// capability checks to its user"), so no step reports `capability_missing`. Content as seen
// decodes base64 with atob() (the kit's 'forgiving' mode), the decoder the SDK validates with.
//
// What the server starts (CLIENTS.md) maps onto the SDK's Client: connect's `handlers` become
// the declared capabilities (exactly those) and setRequestHandler handlers; the SDK itself
// refuses an elicitation in an undeclared mode with -32602 and fills an accepted form's
// defaults when the form capability says applyDefaults. `events` reports what those handlers,
// the ping handler slot, the notification handlers and each call's onprogress callback saw (the
// token is read off the outgoing request: the SDK uses its request id and hands the callback
// the notification without it). `max_timeout_ms` is resetTimeoutOnProgress with
// maxTotalTimeout. The SDK has no 2026-07-28 client: `discover` and `listen` are left to the
// kit's unsupported_op, and a modern or dual era is refused at connect (so are its tasks).
//
// Tasks (CLIENTS.md § Tasks, 2025-11-25 only): the SDK's experimental task API,
// client.experimental.tasks. A call_tool with `task` is callToolStream: the step's ttl becomes
// its `task` option (the SDK then augments the call whatever the server declared), no ttl
// leaves augmentation to the SDK (it augments a tool listTools cached as optional or required
// when the server declared tasks.requests.tools.call); the SDK polls and fetches the result
// itself. Its stream is cancelled the only way it offers, the AbortSignal of its options; that
// sends no tasks/cancel, so a cancel or an expired `max_timeout_ms` is followed by
// tasks.cancelTask(taskId), as a user would. get_task, task_result, list_tasks and cancel_task
// are getTask, getTaskResult, listTasks (every page) and cancelTask; notifications/tasks/status
// reach a TaskStatusNotificationSchema handler. Errors are left as the SDK raises them (a
// failed task is its own InternalError "Task … failed", not the server's error).
//
// The client as a task receiver (connect's `tasks`): the SDK's own receiver support, as its
// example client (examples/client/simpleStreamableHttp.js) uses it. The Client gets a
// `taskStore` (the SDK's InMemoryTaskStore) and declares `capabilities.tasks` (list, cancel, and
// the named methods under requests); the SDK then serves tasks/get, tasks/result, tasks/list and
// tasks/cancel itself, and refuses a task-augmented request of a method not declared before any
// handler runs. A sampling or elicitation handler that sees `params.task` creates the task with
// extra.taskStore.createTask (the ttl asked), returns `{ task }` at once, and stores the
// handler's answer as the task's `completed` result once its `delay_ms` has passed; a task
// cancelled meanwhile keeps its status (the store refuses the late result, which is logged).
// Nothing about tasks/* is written here: `events` reports those requests as they arrive, read
// off the transport as the negotiated version is.
//
// Authorization trials (MCP_HARNESS_AUTH_REDIRECT_URI set; CLIENTS.md, "Authorization"): the
// transport gets the SDK's `authProvider`, the kit's MemoryOAuthProvider: an OAuthClientProvider written as the SDK's
// own example (examples/client/simpleOAuthClient.js, InMemoryOAuthClientProvider) writes it:
// in-memory tokens, client information and code verifier; the pre-registered id and secret as
// the client information when given (the SDK picks the token endpoint's auth method from the
// server's metadata); the CIMD URL as `clientMetadataUrl`; `redirectToAuthorization` is the
// kit's headless step. As in that example, the application drives the rest: `connect` throws
// UnauthorizedError once the SDK has sent the user to authorize; the adapter then hands the
// redirect's `code` to `transport.finishAuth(code)` and connects again with a new transport,
// as the example does. The SDK neither sends nor checks `state` unless the provider implements
// its optional `state()`, and checks no `iss`; the example implements neither and its callback
// reads only `code`, so the adapter does the same: what the SDK leaves to its user is left
// undone, as a user following its example would leave it. A later step that meets
// UnauthorizedError (the SDK could not refresh and wants the user again) is re-authorized the
// same way and run once more. At most two authorizations per step: a user asked a third time
// within one action gives up (auth_failed).

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { OAuthError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks';
import {
  CallToolResultSchema,
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
  TaskStatusNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import {
  Events,
  StepError,
  callbackParams,
  causeCodes,
  contentAsSeen,
  contentsAsSeen,
  describe,
  log,
  MemoryOAuthProvider,
  paginate,
  retryAfterAuthorization,
  run,
  toolResult,
} from '../kits/js/mcp-harness-kit.mjs';

const SDK = '@modelcontextprotocol/sdk 1.32.2';
const SEEN = { base64: 'forgiving' };
const EVENTS = new Events();

/**
 * The SDK's errors in the contract's kinds (the kit maps what is left: TLS, bad URL, the
 * connection failing). `context.op` is 'connect' for the handshake.
 */
function classify(error, context) {
  const message = describe(error);
  // The SDK gave up an authorization: UnauthorizedError (no token after the flow), an OAuth
  // error response it parsed (OAuthError and its subclasses), or its own refusals in the
  // OAuth module (discovery, PKCE support, registration), which throw plain Errors from
  // client/auth.js. A refused certificate or a dead connection keeps the kit's kind.
  const authStack = error instanceof Error && /client\/auth\.js|\bauthInternal\b/.test(error.stack ?? '') && !/^fetch failed/.test(error.message);
  if (error instanceof UnauthorizedError || error instanceof OAuthError || (authStack && causeCodes(error).length === 0)) {
    return new StepError('auth_failed', message);
  }
  if (error instanceof McpError) {
    const { code, data } = error;
    // The SDK's own request timeout and maximum total timeout: McpError(RequestTimeout) with
    // { timeout } or { maxTotalTimeout } as data; its code is the SDK's, so none goes with it.
    if (code === ErrorCode.RequestTimeout && (typeof data?.timeout === 'number' || typeof data?.maxTotalTimeout === 'number')) {
      return new StepError('timeout', message);
    }
    // An AbortSignal the caller fired: the SDK rejects with McpError(RequestTimeout, reason).
    if (code === ErrorCode.RequestTimeout && context.cancelled) return new StepError('cancelled', message);
    // The SDK's local "the transport closed while the request was pending".
    if (code === ErrorCode.ConnectionClosed && /Connection closed/.test(error.message) && data === undefined) {
      return new StepError('transport_closed', message);
    }
    // The SDK's own checks of a tool result against the tool's cached outputSchema: McpErrors
    // it makes up, with these fixed messages.
    if (
      (code === ErrorCode.InvalidRequest && /^MCP error -?\d+: Tool .* has an output schema but did not return structured content$/s.test(error.message)) ||
      (code === ErrorCode.InvalidParams &&
        /^MCP error -?\d+: (Structured content does not match the tool's output schema: |Failed to validate structured content: )/.test(error.message))
    ) {
      return new StepError('schema_mismatch', message);
    }
    return new StepError(context.op === 'connect' ? 'handshake_failed' : 'protocol_error', message, code);
  }
  if (error instanceof StreamableHTTPError) {
    if (typeof error.code === 'number' && error.code >= 100) return new StepError('http_status', message, undefined, error.code);
    return new StepError('invalid_response', message); // code -1: neither JSON nor SSE
  }
  // Client.listTools compiles every listed outputSchema (cacheToolMetadata) and lets the
  // compiler's error out: a schema it cannot evaluate fails the whole listing. Where it was
  // thrown is what tells it apart.
  if (error instanceof Error && /\bcacheToolMetadata\b/.test(error.stack ?? '')) return new StepError('schema_mismatch', message);
  if (error instanceof Error && /^Server's protocol version is not supported/.test(error.message)) {
    return new StepError('unsupported_version', message);
  }
  // Zod's validation of a result (or of a message read off the HTTP stream).
  if (error && (error.name === 'ZodError' || Array.isArray(error.issues))) return new StepError('invalid_response', message);
  return undefined;
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
  const { delay_ms: delayMs, ...rest } = answer;
  if (typeof delayMs === 'number' && delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
  return rest;
}

/** The answer per elicitation mode a connect step's `elicitation/create` handler gives. */
function elicitationModes(handler) {
  if (!handler || typeof handler !== 'object') return {};
  return 'action' in handler ? { form: handler } : handler;
}

/** The server requests a client may serve as tasks (2025-11-25), as connect's `tasks` names them. */
const TASK_REQUESTS = Object.freeze({
  'sampling/createMessage': { sampling: { createMessage: {} } },
  'elicitation/create': { elicitation: { create: {} } },
});

/**
 * The handler's answer to a server request, or, when the request is task-augmented and the
 * Client has a task store (the SDK called the handler, so it declared the method), the task
 * the SDK's way: created in extra.taskStore with the ttl asked and returned at once, its result
 * stored `completed` once `answer()` settles (after the handler's delay_ms).
 *
 * The work starts on a later turn of the event loop, once the CreateTaskResult is sent: the
 * store's createTask hands back its own live task object, so a result stored before the SDK
 * serialized the answer (a handler without delay) would show the new task already completed,
 * its status notification ahead of it.
 */
async function answerOrTask(request, extra, answer) {
  if (request.params?.task === undefined || extra.taskStore === undefined) return answer();
  const task = await extra.taskStore.createTask({ ttl: extra.taskRequestedTtl });
  setImmediate(() =>
    answer()
      .then((result) => extra.taskStore.storeTaskResult(task.taskId, 'completed', result))
      .catch((error) => log(`task ${JSON.stringify(task.taskId)} of ${request.method}: no result stored:`, describe(error))),
  );
  return { task };
}

/** One connection: the SDK's Client and transport. */
class Connection {
  constructor(env, handlers, taskMethods = []) {
    this.env = env;
    this.handlers = { ...handlers }; // set_roots replaces the roots
    this.taskMethods = taskMethods.filter((method) => {
      if (Object.hasOwn(TASK_REQUESTS, method)) return true;
      log(`connect's tasks names ${JSON.stringify(method)}: no task support of the SDK's client for it, left undeclared`);
      return false;
    });
    this.options = { timeout: env.timeoutMs };
    const clientOptions = { capabilities: this.capabilities() };
    // The SDK's receiver: with a task store its Protocol serves tasks/get, result, list, cancel.
    if (this.taskMethods.length > 0) clientOptions.taskStore = this.taskStore = new InMemoryTaskStore();
    this.client = new Client({ name: 'mcp-harness-ts-sdk-adapter', version: '1.32.2' }, clientOptions);
    this.client.onerror = (error) => log('sdk error:', describe(error));
    this.installHandlers();
    this.closed = new Promise((resolve) => {
      this.client.onclose = () => resolve();
    });
    this.transport = this.makeTransport();
  }

  /**
   * The capabilities the handlers imply, and no others. An empty elicitation object means form
   * mode to the SDK; `applyDefaults` is its switch for filling an accepted form's defaults,
   * and it travels on the wire inside the form capability.
   */
  capabilities() {
    const capabilities = {};
    if (this.handlers['roots/list'] !== undefined) capabilities.roots = { listChanged: true };
    if (this.handlers['sampling/createMessage'] !== undefined) capabilities.sampling = {};
    const elicitation = this.handlers['elicitation/create'];
    if (elicitation !== undefined) {
      const modes = elicitationModes(elicitation);
      const declared = {};
      if (modes.form !== undefined) declared.form = modes.form?.defaults === true ? { applyDefaults: true } : {};
      if (modes.url !== undefined) declared.url = {};
      // Before 2025-11-25 there were no modes: an empty object is form mode.
      const keyed = !('action' in (elicitation ?? {}));
      const plain = !keyed && modes.form?.defaults !== true && !(this.env.protocolVersion >= '2025-11-25');
      capabilities.elicitation = plain ? {} : declared;
    }
    // The shape the SDK checks (assertClientRequestTaskCapability) and sends as given.
    if (this.taskMethods.length > 0) {
      let requests = {};
      for (const method of this.taskMethods) requests = { ...requests, ...TASK_REQUESTS[method] };
      capabilities.tasks = { list: {}, cancel: {}, requests };
    }
    return capabilities;
  }

  /**
   * Request handlers for the declared capabilities, and notification handlers that report what
   * arrives. Anything else is the SDK's: ping answered {}, other requests -32601.
   */
  installHandlers() {
    const { client, handlers } = this;
    if (handlers['roots/list'] !== undefined) {
      client.setRequestHandler(ListRootsRequestSchema, (request) => {
        EVENTS.add(requestEvent(request));
        return takeTime(this.handlers['roots/list']);
      });
    }
    if (handlers['sampling/createMessage'] !== undefined) {
      client.setRequestHandler(CreateMessageRequestSchema, (request, extra) => {
        EVENTS.add(requestEvent(request));
        return answerOrTask(request, extra, () => takeTime(this.handlers['sampling/createMessage']));
      });
    }
    if (handlers['elicitation/create'] !== undefined) {
      client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
        const mode = request.params?.mode ?? 'form';
        const answer = elicitationModes(this.handlers['elicitation/create'])[mode];
        if (!answer || typeof answer !== 'object') {
          throw new McpError(ErrorCode.InvalidParams, `this client does not answer ${mode}-mode elicitations`);
        }
        EVENTS.add(requestEvent(request));
        return answerOrTask(request, extra, async () => {
          const { defaults, ...result } = await takeTime(answer);
          // The SDK fills the defaults in (applyDefaults) by mutating content: hand it a copy.
          // (It does so for a plain answer only: a task's stored result is left as given.)
          if (result.content && typeof result.content === 'object') result.content = { ...result.content };
          return result;
        });
      });
    }
    // The SDK answers ping itself; its users see one only through their own handler.
    client.setRequestHandler(PingRequestSchema, (request) => {
      EVENTS.add(requestEvent(request));
      return {};
    });
    client.setNotificationHandler(LoggingMessageNotificationSchema, ({ params: { level, logger, data } }) => {
      EVENTS.add({ type: 'log', level, ...(logger !== undefined ? { logger } : {}), data });
    });
    for (const [schema, list] of [
      [ToolListChangedNotificationSchema, 'tools'],
      [ResourceListChangedNotificationSchema, 'resources'],
      [PromptListChangedNotificationSchema, 'prompts'],
    ]) {
      client.setNotificationHandler(schema, () => EVENTS.add({ type: 'list_changed', list }));
    }
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, ({ params }) => {
      EVENTS.add({ type: 'resource_updated', uri: params.uri });
    });
    client.setNotificationHandler(TaskStatusNotificationSchema, ({ params }) => {
      EVENTS.add({ type: 'task_status', taskId: params.taskId, status: params.status });
    });
  }

  makeTransport() {
    const { env } = this;
    let transport;
    if (env.transport === 'stdio') {
      const [command, ...args] = env.serverCommand;
      transport = new StdioClientTransport({ command, args }); // the server's stderr is inherited
    } else {
      const headers = env.token ? { Authorization: `Bearer ${env.token}` } : {};
      // new URL() throws on a malformed URL; that is the SDK's only URL check.
      const options = { requestInit: { headers } };
      if (oauth) options.authProvider = oauth;
      transport = new StreamableHTTPClientTransport(new URL(env.url), options);
    }
    // Observe (without changing) what is sent, to learn the progress token the SDK chose (its
    // request id, which it does not hand the onprogress callback).
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
      const token = message?.params?._meta?.progressToken;
      if (this.progressSlot !== undefined && 'id' in (message ?? {}) && token !== undefined) {
        this.progressSlot.token = token;
        this.progressSlot = undefined;
      }
      return send(message, options);
    };
    // Observe what arrives, to learn the negotiated version: the SDK keeps the initialize
    // result's serverInfo but not its protocolVersion. Protocol.connect chains its own after.
    // With a task store, the tasks/* requests the SDK serves are reported here as they arrive.
    transport.onmessage = (message) => {
      if (this.initializeResult === undefined && message && 'id' in message && message.result && typeof message.result === 'object') {
        this.initializeResult = message.result;
      }
      if (this.taskStore !== undefined && message && 'id' in message && typeof message.method === 'string' && message.method.startsWith('tasks/')) {
        EVENTS.add(requestEvent(message));
      }
    };
    return transport;
  }

  async connect() {
    await this.client.connect(this.transport, this.options);
    const result = this.initializeResult ?? {};
    return { protocolVersion: result.protocolVersion ?? null, serverInfo: this.client.getServerVersion() ?? result.serverInfo ?? null };
  }

  /**
   * The loop the SDK's users write (it has no list-all helper): follow nextCursor until it is
   * absent, and no more. `{ cursor }` with cursor undefined is sent as `"params": {}`.
   */
  listAll(method, key) {
    return paginate((cursor) => this.client[method]({ cursor }, this.options), key, { check: false });
  }

  /** The onprogress option of a call with `progress`, reporting each notification as an event. */
  progressOption(options) {
    const slot = {};
    this.progressSlot = slot;
    options.onprogress = (params) => {
      const event = { type: 'progress', progressToken: slot.token ?? null, progress: params.progress };
      if (params.total !== undefined) event.total = params.total;
      if (params.message !== undefined) event.message = params.message;
      EVENTS.add(event);
    };
  }

  /**
   * A call_tool step. With `task` or `background` it is the SDK's task API (see taskCall); a
   * plain call is Client.callTool, and when that refuses a tool it cached as taskSupport
   * `required` (a local McpError telling its user to call callToolStream instead), the step
   * does what the message says.
   */
  async callTool(step, context) {
    if (step.task != null || step.background === true) return this.taskCall(step, context);
    const options = { ...this.options };
    if (step.progress) {
      this.progressOption(options);
      if (step.max_timeout_ms != null) {
        options.resetTimeoutOnProgress = true;
        options.maxTotalTimeout = step.max_timeout_ms;
      }
    }
    if (context.signal) options.signal = context.signal;
    try {
      return toolResult(await this.client.callTool({ name: step.name, arguments: step.arguments ?? {} }, undefined, options), SEEN);
    } catch (error) {
      if (error instanceof McpError && error.code === ErrorCode.InvalidRequest && /requires task-based execution\. Use client\.experimental\.tasks\.callToolStream\(\) instead/.test(error.message)) {
        log(`the SDK refused a plain call of ${JSON.stringify(step.name)} (taskSupport required): calling callToolStream, as its message says`);
        return this.taskCall(step, context);
      }
      throw error;
    } finally {
      this.progressSlot = undefined;
    }
  }

  /**
   * A call through client.experimental.tasks.callToolStream. The step's ttl is passed as the
   * stream's `task` option, which the SDK sends as given (it trusts an explicit task option);
   * without a ttl the option is left out and the SDK decides, augmenting the call when the
   * server declared tasks.requests.tools.call and listTools cached the tool as optional or
   * required. The SDK polls tasks/get itself (its pollInterval, else its default) and fetches
   * tasks/result; the adapter only reads the stream: taskCreated (the task id, and the whole
   * report for `background`), result, error.
   *
   * Cancelling: the SDK has no cancel for its stream beyond the request options' AbortSignal,
   * and aborting that sends no tasks/cancel, so the caller's cancel (or `max_timeout_ms`, which
   * bounds the whole stream) aborts the signal and then calls tasks.cancelTask with the task id
   * the stream announced, as a user of the SDK would. Whatever the SDK sends on the abort is
   * its own doing.
   */
  async taskCall(step, context) {
    const { tasks } = this.client.experimental;
    const controller = new AbortController();
    let why;
    const stop = (kind, message) => {
      if (why !== undefined) return;
      why = new StepError(kind, message);
      controller.abort(why);
    };
    const callerCancel = () => stop('cancelled', 'the caller cancelled the call');
    if (context.signal?.aborted) callerCancel();
    context.signal?.addEventListener('abort', callerCancel, { once: true });
    const timer =
      step.max_timeout_ms != null
        ? setTimeout(() => stop('timeout', `the task call took longer than max_timeout_ms (${step.max_timeout_ms} ms)`), step.max_timeout_ms)
        : undefined;
    const stopped = new Promise((resolve) => controller.signal.addEventListener('abort', () => resolve({ stopped: true }), { once: true }));
    const options = { ...this.options, signal: controller.signal };
    if (step.task?.ttl != null) options.task = { ttl: step.task.ttl };
    if (step.progress) this.progressOption(options);
    const stream = tasks.callToolStream({ name: step.name, arguments: step.arguments ?? {} }, undefined, options);
    let taskId;
    try {
      for (;;) {
        const next = stream.next();
        next.catch(() => {}); // still pending when the race is lost to a cancel
        const item = await Promise.race([next, stopped]);
        if (item.stopped) break;
        if (item.done) throw new Error('the SDK\'s callToolStream ended without a result or an error');
        const message = item.value;
        if (message.type === 'taskCreated') {
          taskId = message.task.taskId;
          log(`task ${JSON.stringify(taskId)} created (${message.task.status})`);
          if (step.background === true) return { task: message.task };
        } else if (message.type === 'taskStatus') {
          log(`task ${JSON.stringify(message.task.taskId)} is ${message.task.status}`);
        } else if (message.type === 'result') {
          return toolResult(message.result, SEEN);
        } else if (message.type === 'error') {
          // A task that ended cancelled without the caller asking: the SDK's own McpError
          // (InternalError) naming it; the contract's kind is cancelled. A failed task is
          // left as the SDK raises it (its InternalError, not the server's error).
          if (taskId !== undefined && message.error instanceof McpError && message.error.message === `MCP error ${ErrorCode.InternalError}: Task ${taskId} was cancelled`) {
            throw new StepError('cancelled', describe(message.error));
          }
          throw message.error;
        }
      }
      if (taskId !== undefined) {
        try {
          await tasks.cancelTask(taskId, this.options);
        } catch (error) {
          log(`tasks/cancel of ${JSON.stringify(taskId)} failed:`, describe(error));
        }
      }
      throw why;
    } finally {
      clearTimeout(timer);
      context.signal?.removeEventListener('abort', callerCancel);
      this.progressSlot = undefined;
      // Ends the generator: at once when it waits at a yield (background), else once its
      // current step settles (a cancel); nothing more is sent either way.
      stream.return().catch(() => {});
    }
  }

  /**
   * Every page of tasks/list through tasks.listTasks(cursor), the loop its users write (as
   * listAll: follow nextCursor until it is absent, nothing checked). The SDK sends no params
   * for a falsy cursor.
   */
  async listTasks() {
    const all = [];
    let cursor;
    do {
      const page = await this.client.experimental.tasks.listTasks(cursor, this.options);
      all.push(...page.tasks);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return { tasks: all };
  }

  /**
   * Ends the session the way a user does: over HTTP terminateSession() (DELETE with the
   * server-issued session id; a 405 is "not supported") then Client.close(), which by itself
   * sends nothing. A failed DELETE is reported after the client is closed.
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
    this.taskStore?.cleanup(); // its ttl timers
    if (failure !== undefined) throw failure;
  }
}

/** The code of a redirect; an error redirect is auth_failed. */
function codeOf(location) {
  const params = callbackParams(location);
  if (params.code === undefined) {
    const detail = params.error_description ? ` (${params.error_description})` : '';
    throw new StepError('auth_failed', `the authorization redirect carried error=${params.error ?? 'none, and no code'}${detail}`);
  }
  return params.code;
}

/** The trial's OAuth provider (authorization trials over HTTP only), shared by its connections. */
let oauth;
/** Runs `attempt()`, finishing an authorization the SDK stopped for and running it again. */
function withAuthorization(attempt, transport) {
  return retryAfterAuthorization(attempt, {
    provider: oauth,
    isUnauthorized: (error) => error instanceof UnauthorizedError,
    finish: (location) => transport().finishAuth(codeOf(location)),
  });
}

/** Each op, re-run once its step's authorization is finished (see withAuthorization). */
function authorized(ops) {
  return Object.fromEntries(
    Object.entries(ops).map(([name, op]) => [name, (step, context) => withAuthorization(() => op(step, context), () => connection.transport)]),
  );
}

/**
 * Traces trials (feature `traces`): the SDK has no OpenTelemetry of its own, so this is what its
 * user would install: @traceloop/instrumentation-mcp (OpenLLMetry), which wraps Client's
 * connect, request and close in spans, applied with its manuallyInstrument (its require hook
 * misses an ES module import), under the OpenTelemetry Node SDK with the OTLP/HTTP exporter of
 * OTEL_EXPORTER_OTLP_PROTOCOL (protobuf or JSON). Its options stay the package's defaults.
 * Imported only here, so other trials load none of it. Returns the provider's shutdown (flush).
 */
async function setupTraces() {
  const protocol = process.env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || process.env.OTEL_EXPORTER_OTLP_PROTOCOL || 'http/protobuf';
  const exporter = protocol === 'http/json' ? '@opentelemetry/exporter-trace-otlp-http' : '@opentelemetry/exporter-trace-otlp-proto';
  const [{ NodeTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, { McpInstrumentation }, resources] = await Promise.all([
    import('@opentelemetry/sdk-trace-node'),
    import(exporter),
    import('@traceloop/instrumentation-mcp'),
    import('@opentelemetry/resources'),
  ]);
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES, as the Node SDK's env detector reads them.
  const resource = resources.defaultResource().merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const provider = new NodeTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())] });
  provider.register(); // the global provider, context manager and propagators (OTEL_PROPAGATORS)
  const instrumentation = new McpInstrumentation();
  instrumentation.setTracerProvider(provider);
  instrumentation.manuallyInstrument({ Client });
  return () => provider.shutdown();
}

let connection;
// Connections whose shutdown the SDK started on its own (a failed connect): waited for at the
// end so the SDK can finish shutting its stdio child down.
const shutdowns = [];

Error.stackTraceLimit = 50; // deep enough for classify to see cacheToolMetadata
await run({
  name: `ts-sdk-adapter ${SDK}`,
  classify,
  features: ['roots', 'sampling', 'elicitation', 'oauth', 'tasks', 'task_receiver', 'traces'], // what the kit may ask of the SDK
  setupTraces,
  events: EVENTS,
  // The SDK always offers LATEST_PROTOCOL_VERSION in initialize and has no server/discover.
  limits: (env) => (env.era === 'legacy' && env.protocolVersion === LATEST_PROTOCOL_VERSION ? [] : ['choose_version']),
  ops: {
    async connect(step, { env }) {
      if (env.era !== 'legacy') {
        throw new StepError('unsupported_op', `${SDK} speaks only the initialize-handshake era; it has no ${env.era}-era client (no server/discover probe, no per-request _meta, no tasks extension: its tasks are those of 2025-11-25)`);
      }
      if (env.auth && env.transport === 'http' && !oauth) oauth = new MemoryOAuthProvider(env, 'mcp-harness ts-sdk adapter');
      let attempt;
      return withAuthorization(
        async () => {
          // A failed connect closed its client: each round is a new client and transport.
          attempt = new Connection(env, step.handlers ?? {}, step.tasks ?? []);
          try {
            const ok = await attempt.connect();
            connection = attempt;
            return ok;
          } catch (error) {
            shutdowns.push(attempt.closed); // Client.connect already called close() itself
            throw error;
          }
        },
        () => attempt.transport,
      );
    },
    ...authorized({
      list_tools: () => connection.listAll('listTools', 'tools'),
      list_resources: () => connection.listAll('listResources', 'resources'),
      list_resource_templates: () => connection.listAll('listResourceTemplates', 'resourceTemplates'),
      list_prompts: () => connection.listAll('listPrompts', 'prompts'),
      call_tool: (step, context) => connection.callTool(step, context),
      // The SDK's experimental task API (client.experimental.tasks), one request each.
      get_task: async ({ task_id: taskId }) => ({ task: await connection.client.experimental.tasks.getTask(taskId, connection.options) }),
      task_result: async ({ task_id: taskId }) => toolResult(await connection.client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema, connection.options), SEEN),
      list_tasks: () => connection.listTasks(),
      cancel_task: ({ task_id: taskId }) => connection.client.experimental.tasks.cancelTask(taskId, connection.options).then(() => ({})),
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
        await connection.client.sendRootsListChanged(); // refused unless roots.listChanged was declared
      },
      // Sent whatever the server declared, like every request here (see the header).
      subscribe_resource: ({ uri }) => connection.client.subscribeResource({ uri }, connection.options).then(() => ({})),
      unsubscribe_resource: ({ uri }) => connection.client.unsubscribeResource({ uri }, connection.options).then(() => ({})),
    }),
    async close() {
      const closing = connection;
      connection = undefined;
      await closing?.close();
    },
  },
  async finish() {
    // The SDK escalates a stdio shutdown over about 4 s; wait a little longer, then exit.
    if (shutdowns.length === 0) return;
    let timer;
    await Promise.race([Promise.all(shutdowns), new Promise((resolve) => (timer = setTimeout(resolve, 6000)))]);
    clearTimeout(timer);
  },
});

// Tests of the JavaScript adapter kit: `node --test adapters/kits/js/` (cargo test runs it
// through xtask/tests/js_kit.rs, and skips it when node is absent). The pure helpers are
// tested in-process; `run` in a child process, since it owns stdout and exits.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import { test } from 'node:test';
import {
  ERROR_KINDS,
  EnvError,
  StepError,
  callbackParams,
  headlessAuthorize,
  MemoryOAuthProvider,
  retryAfterAuthorization,
  redact,
  secret,
  checkStep,
  contentAsSeen,
  contentsAsSeen,
  mapError,
  paginate,
  readEnv,
  toolResult,
  undeclared,
} from './mcp-harness-kit.mjs';

const KIT = new URL('./mcp-harness-kit.mjs', import.meta.url).href;
const BASE = { MCP_HARNESS_CONTRACT: '1', MCP_HARNESS_TRANSPORT: 'stdio', MCP_HARNESS_SERVER_COMMAND: '["fake"]', MCP_HARNESS_PLAN: '[]', MCP_HARNESS_TIMEOUT_MS: '500' };

const rejects = (promise, kind) => assert.rejects(promise, (e) => e instanceof StepError && e.kind === kind);
const throwsKind = (fn, kind) => assert.throws(fn, (e) => e instanceof StepError && e.kind === kind);

test('readEnv reads the contract and names the variable it refuses', () => {
  const env = readEnv({ ...BASE, MCP_HARNESS_BEARER_TOKEN: 't', MCP_HARNESS_ERA: 'dual' }, []);
  assert.deepEqual([env.transport, env.serverCommand, env.timeoutMs, env.era, env.token, env.legacyProtocolVersion], ['stdio', ['fake'], 500, 'dual', 't', '2025-11-25']);
  const http = readEnv({ ...BASE, MCP_HARNESS_TRANSPORT: 'http' }, ['node', 'a.mjs', 'https://localhost:1/mcp']);
  assert.equal(http.url, 'https://localhost:1/mcp');
  for (const [name, value] of [
    ['MCP_HARNESS_CONTRACT', '2'],
    ['MCP_HARNESS_TRANSPORT', 'ws'],
    ['MCP_HARNESS_PLAN', '{}'],
    ['MCP_HARNESS_SERVER_COMMAND', '[]'],
    ['MCP_HARNESS_TIMEOUT_MS', '5s'],
    ['MCP_HARNESS_TIMEOUT_MS', undefined],
    ['MCP_HARNESS_ERA', 'future'],
  ]) {
    assert.throws(() => readEnv({ ...BASE, [name]: value }, []), (e) => e instanceof EnvError && e.message.startsWith(name), name);
  }
  assert.throws(() => readEnv({ ...BASE, MCP_HARNESS_TRANSPORT: 'http' }, ['node', 'a.mjs']), /MCP_HARNESS_SERVER_URL/);
});

test('checkStep refuses malformed fields with unsupported_op, naming the field', () => {
  assert.equal(checkStep({ op: 'call_tool', name: 'x', arguments: {}, cancel_after_ms: 0 }), undefined);
  assert.equal(checkStep({ op: 'no_such_op' }), undefined); // unknown ops are the loop's business
  for (const [step, field] of [
    [{ op: 'call_tool' }, 'name'],
    [{ op: 'call_tool', name: 'x', cancel_after_ms: -1 }, 'cancel_after_ms'],
    [{ op: 'call_tool', name: 'x', max_timeout_ms: 5 }, 'max_timeout_ms'],
    [{ op: 'read_resource', uri: 3 }, 'uri'],
    [{ op: 'sleep' }, 'ms'],
    [{ op: 'events', min: 1.5 }, 'min'],
    [{ op: 'connect', handlers: [] }, 'handlers'],
    [{ op: 'call_tool', name: 'x', task: [] }, 'task'],
    [{ op: 'call_tool', name: 'x', task: {}, background: 'yes' }, 'background'],
    [{ op: 'get_task', task_id: 7 }, 'task_id'],
    [{ op: 'cancel_task' }, 'task_id'],
    [{ op: 'task_result', task_id: {} }, 'task_id'],
  ]) {
    const error = checkStep(step);
    assert.equal(error?.kind, 'unsupported_op', JSON.stringify(step));
    assert.match(error.message, new RegExp(field));
  }
  assert.equal(checkStep(null)?.kind, 'unsupported_op');
  // On a task call max_timeout_ms bounds the task: no progress needed.
  assert.equal(checkStep({ op: 'call_tool', name: 'x', task: {}, max_timeout_ms: 5 }), undefined);
  assert.equal(checkStep({ op: 'list_tasks' }), undefined);
});

test('paginate follows cursors exactly and enforces the listing rules', async () => {
  const pages = { undefined: { tools: [{ name: 'a' }], nextCursor: '' }, '': { tools: [{ name: 'b' }], nextCursor: null } };
  const sent = [];
  const fetch = async (cursor) => (sent.push(cursor), pages[String(cursor)]);
  assert.deepEqual(await paginate(fetch, 'tools'), { tools: [{ name: 'a' }, { name: 'b' }] });
  assert.deepEqual(sent, [undefined, '']); // an empty string is a cursor; null ends
  await rejects(paginate(async () => ({ tools: [], nextCursor: 'c' }), 'tools'), 'repeated_cursor');
  await rejects(paginate(async () => ({ prompts: [{ name: 'p' }, { name: 'p' }] }), 'prompts'), 'duplicate_name');
  await rejects(paginate(async () => ({ tools: [{ name: 't' }, { name: 't' }] }), 'tools'), 'duplicate_tool_name');
  let n = 0;
  await rejects(paginate(async () => ({ resources: [], nextCursor: String((n += 1)) }), 'resources', { maxPages: 5 }), 'invalid_response');
  assert.equal(n, 5);
  // Unchecked: the bare loop, which keeps a duplicate and stops only when the cursor is absent.
  let m = 0;
  const bare = await paginate(async () => ({ tools: [{ name: 't' }], nextCursor: (m += 1) < 3 ? 'same' : undefined }), 'tools', { check: false });
  assert.equal(bare.tools.length, 3);
});

test('toolResult and content as seen follow CLIENTS.md', () => {
  const png = Buffer.from([1, 2, 3, 4]);
  const b64 = png.toString('base64');
  const sha256 = createHash('sha256').update(png).digest('hex');
  assert.deepEqual(toolResult({ content: [{ type: 'text', text: 'a' }, { type: 'image', data: b64, mimeType: 'image/png' }] }), {
    text: ['a'],
    content: [{ type: 'text', text: 'a' }, { type: 'image', mimeType: 'image/png', bytes: 4, sha256 }],
  });
  assert.deepEqual(toolResult({ structuredContent: { t: 1 }, content: [] }), { structured: { t: 1 }, content: [] });
  throwsKind(() => toolResult({ isError: true, structuredContent: {}, content: [{ type: 'text', text: 'bad' }] }), 'tool_error');
  throwsKind(() => contentAsSeen({ type: 'video' }), 'invalid_response');
  throwsKind(() => contentsAsSeen({ uri: 'u' }), 'invalid_response');
  assert.deepEqual(contentsAsSeen({ uri: 'u', text: 't', blob: '!!' }), { uri: 'u', text: 't' });
  // Strict RFC 4648 refuses whitespace and non-canonical padding bits; atob's forgiving mode does not.
  throwsKind(() => contentsAsSeen({ uri: 'u', blob: 'AQID BA==' }), 'invalid_response');
  throwsKind(() => contentsAsSeen({ uri: 'u', blob: 'AR==' }), 'invalid_response');
  assert.equal(contentsAsSeen({ uri: 'u', blob: 'AQID BA==' }, { base64: 'forgiving' }).sha256, sha256);
  const link = { type: 'resource_link', uri: 'file:///x', name: 'x', extra: 1 };
  assert.equal(contentAsSeen(link), link);
});

test('mapError names common Node errors', () => {
  const tls = new TypeError('fetch failed', { cause: Object.assign(new Error('self-signed'), { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' }) });
  assert.equal(mapError(tls).kind, 'tls');
  assert.equal(mapError(Object.assign(new TypeError('bad'), { code: 'ERR_INVALID_URL' })).kind, 'insecure_url');
  assert.equal(mapError(new SyntaxError('Unexpected token')).kind, 'invalid_response');
  assert.equal(mapError(Object.assign(new Error('aborted'), { name: 'AbortError' }), { cancelled: true }).kind, 'cancelled');
  assert.equal(mapError(new Error('ECONNRESET')).kind, 'transport_closed');
  const http = mapError(Object.assign(new Error('Bad Gateway'), { response: { status: 502 } }));
  assert.deepEqual([http.kind, http.status], ['http_status', 502]);
  const kept = new StepError('http_status', 'no', undefined, 503);
  assert.equal(mapError(kept), kept);
});

/** Runs an adapter on the kit in a child process; returns its exit code, outcome lines and stderr. */
function runAdapter(body, env) {
  const source = `import * as kit from ${JSON.stringify(KIT)};\n${body}`;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', source], { env: { PATH: process.env.PATH, ...env }, encoding: 'utf8', timeout: 20000 });
  const lines = child.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l));
  return { code: child.status, lines, stderr: child.stderr };
}

const ADAPTER = `
let open = false;
await kit.run({
  name: 'test-adapter',
  events: new kit.Events(),
  limits: () => ['choose_version'],
  ops: {
    connect: () => { console.log('library chatter'); open = true; return { protocolVersion: 'v', serverInfo: { name: 's' } }; },
    list_tools: () => kit.paginate(async () => ({ tools: [{ name: 'echo' }] }), 'tools'),
    call_tool: (step, ctx) => new Promise((resolve, reject) => {
      if (step.name === 'leak') throw new Error('refused token ' + process.env.MCP_HARNESS_BEARER_TOKEN);
      const t = setTimeout(() => resolve(kit.toolResult({ content: [{ type: 'text', text: 'hi' }] })), 200);
      ctx.signal?.addEventListener('abort', () => { clearTimeout(t); reject(Object.assign(new Error('aborted'), { name: 'AbortError' })); });
    }),
    close: () => { open = false; process.stderr.write('closed\\n'); },
  },
});
`;

test('run walks the plan: one line per step, the stdout guard, redaction, exit 0', () => {
  const plan = [
    { op: 'list_tools' },
    { op: 'connect' },
    { op: 'list_tools' },
    { op: 'call_tool', name: 'slow' },
    { op: 'call_tool', name: 'slow', cancel_after_ms: 20 },
    { op: 'call_tool', name: 'leak' },
    { op: 'discover' },
    { op: 'sleep', ms: 1 },
    { op: 'events' },
    { op: 'call_tool' },
    { op: 'close' },
    { op: 'close' },
    { op: 'connect' },
  ];
  const { code, lines, stderr } = runAdapter(ADAPTER, { ...BASE, MCP_HARNESS_PLAN: JSON.stringify(plan), MCP_HARNESS_BEARER_TOKEN: 'sekrit-42' });
  assert.equal(code, 0, stderr);
  assert.deepEqual(lines.map((l) => l.step), plan.map((_, i) => i));
  const kinds = lines.map((l) => l.error?.kind ?? 'ok');
  assert.deepEqual(kinds, ['transport_closed', 'ok', 'ok', 'ok', 'cancelled', 'transport_closed', 'unsupported_op', 'ok', 'ok', 'unsupported_op', 'ok', 'transport_closed', 'ok']);
  assert.deepEqual(lines[1].limits, ['choose_version', 'tasks']); // no tasks feature: the tasks need
  assert.deepEqual(lines[3].ok, { text: ['hi'], content: [{ type: 'text', text: 'hi' }] });
  assert.deepEqual(lines[8].ok, { events: [] });
  assert.equal(lines[5].error.message, 'refused token [redacted]');
  assert.ok(!stderr.includes('sekrit-42'), 'the token is redacted from logs');
  assert.match(stderr, /library chatter/); // console.log went to stderr
  assert.equal(stderr.match(/^closed$/gm).length, 2); // the close step and the implicit close
});

test('together runs its steps at once and reports each outcome in order', () => {
  const calls = Array.from({ length: 4 }, () => ({ op: 'call_tool', name: 'slow' }));
  const plan = [
    { op: 'connect' },
    { op: 'together', steps: [...calls, { op: 'call_tool', name: 'leak' }, { op: 'discover' }, { op: 'connect' }] },
    { op: 'together' },
  ];
  const { code, lines, stderr } = runAdapter(ADAPTER, { ...BASE, MCP_HARNESS_PLAN: JSON.stringify(plan), MCP_HARNESS_BEARER_TOKEN: 'sekrit-42' });
  assert.equal(code, 0, stderr);
  const steps = lines[1].ok.steps;
  assert.deepEqual(steps.slice(0, 4).map((s) => s.ok.text), [['hi'], ['hi'], ['hi'], ['hi']]);
  assert.deepEqual(steps.slice(4).map((s) => s.error.kind), ['transport_closed', 'unsupported_op', 'unsupported_op']);
  assert.equal(steps[4].error.message, 'refused token [redacted]');
  // Four calls of 200 ms each, at once: well under the 800 ms they take one after another.
  const took = Number(stderr.match(/step 1 \(together\) took (\d+) ms/)[1]);
  assert.ok(took < 700, `together took ${took} ms`);
  assert.equal(lines[2].error.kind, 'unsupported_op');
});

test('a step that needs a feature the adapter does not declare is unsupported_op', () => {
  const declares = (features) => ADAPTER.replace("name: 'test-adapter',", `name: 'test-adapter', features: ${JSON.stringify(features)},`);
  const plan = [
    { op: 'connect', handlers: { 'roots/list': { roots: [] } } },
    { op: 'call_tool', name: 'x', input: { 'elicitation/create': { action: 'decline' } } },
    { op: 'connect', handlers: { 'sampling/createMessage': {} } },
    { op: 'list_tools' },
  ];
  const kinds = (features) => {
    const { code, lines, stderr } = runAdapter(declares(features), { ...BASE, MCP_HARNESS_PLAN: JSON.stringify(plan) });
    assert.equal(code, 0, stderr);
    return lines.map((l) => l.error?.kind ?? 'ok');
  };
  assert.deepEqual(kinds(['roots']), ['ok', 'unsupported_op', 'unsupported_op', 'transport_closed']);
  assert.deepEqual(kinds([]), ['unsupported_op', 'transport_closed', 'unsupported_op', 'transport_closed']);
  assert.deepEqual(kinds(['roots', 'elicitation', 'sampling']).slice(0, 3), ['ok', 'ok', 'ok']);
  const { code, stderr } = runAdapter(declares(['elicitations']), { ...BASE, MCP_HARNESS_PLAN: '[]' });
  assert.equal(code, 2);
  assert.match(stderr, /unknown feature "elicitations"/);
});

test('a task step needs the tasks feature; with it the op is called; a malformed task_id is named', () => {
  const adapter = (features) => `
await kit.run({
  name: 'tasks-adapter',
  features: ${JSON.stringify(features)},
  ops: {
    connect: () => ({ protocolVersion: 'v' }),
    ...Object.fromEntries(['call_tool', 'get_task', 'cancel_task', 'task_result', 'list_tasks'].map((op) => [op, (step) => {
      process.stderr.write('called ' + op + '\\n');
      return { called: op, step };
    }])),
  },
});
`;
  const taskSteps = [
    { op: 'call_tool', name: 'slow', task: { ttl: 60000 } },
    { op: 'call_tool', name: 'slow', task: {}, max_timeout_ms: 3000 },
    { op: 'call_tool', name: 'slow', background: true },
    { op: 'get_task', task_id: 'task-1' },
    { op: 'cancel_task', task_id: 'task-1' },
    { op: 'task_result', task_id: 'task-1' },
    { op: 'list_tasks' },
  ];
  const plain = { op: 'call_tool', name: 'plain', background: false };
  const plan = [{ op: 'connect' }, ...taskSteps, plain];
  const run = (features, steps = plan) => {
    const { code, lines, stderr } = runAdapter(adapter(features), { ...BASE, MCP_HARNESS_PLAN: JSON.stringify(steps) });
    assert.equal(code, 0, stderr);
    assert.equal(lines.length, steps.length, stderr);
    return { lines, called: stderr.match(/^called \w+$/gm) ?? [] };
  };

  const refused = run(['roots']);
  for (const line of refused.lines.slice(1, -1)) {
    assert.equal(line.error?.kind, 'unsupported_op', JSON.stringify(line));
    assert.match(line.error.message, /does not declare the feature tasks \(the kit's features\)/);
  }
  assert.deepEqual(refused.lines.at(-1).ok, { called: 'call_tool', step: plain }); // background: false alone is plain
  assert.deepEqual(refused.called, ['called call_tool']);

  const carried = run(['tasks']);
  assert.deepEqual(carried.lines.slice(1).map((l) => l.ok), [...taskSteps, plain].map((step) => ({ called: step.op, step })));

  const malformed = [{ op: 'get_task', task_id: 7 }, { op: 'cancel_task' }, { op: 'task_result', task_id: null }];
  const bad = run(['tasks'], [{ op: 'connect' }, ...malformed]);
  for (const line of bad.lines.slice(1)) {
    assert.equal(line.error?.kind, 'unsupported_op', JSON.stringify(line));
    assert.match(line.error.message, /"task_id"/);
  }
  assert.deepEqual(bad.called, []);
});

test('run exits 2 naming a bad variable, before any step', () => {
  const { code, lines, stderr } = runAdapter(ADAPTER, { ...BASE, MCP_HARNESS_PLAN: 'nope' });
  assert.equal(code, 2);
  assert.deepEqual(lines, []);
  assert.match(stderr, /MCP_HARNESS_PLAN/);
});

test('readEnv reads the client credentials, registers their secret, and a machine connect needs client_credentials', () => {
  const creds = { client_id: 'm2m', method: 'private_key_jwt', private_key_pem: '-----BEGIN PRIVATE KEY-----\nm2m-k3y\n', alg: 'ES256' };
  const env = readEnv({ ...BASE, MCP_HARNESS_CLIENT_CREDENTIALS: JSON.stringify(creds), MCP_HARNESS_AUTH_REDIRECT_URI: 'http://127.0.0.1:9/cb' }, []);
  assert.deepEqual(env.clientCredentials, creds);
  assert.equal(redact(`x ${creds.private_key_pem} y`), 'x [redacted] y');
  assert.deepEqual(undeclared({ op: 'connect' }, env, ['oauth']), ['client_credentials']);
  assert.deepEqual(undeclared({ op: 'connect' }, env, ['client_credentials']), []);
  for (const bad of ['nope', '{"method":"private_key_jwt"}', '{"client_id":"m","method":"x"}', '{"client_id":"m","method":"client_secret_post"}']) {
    assert.throws(() => readEnv({ ...BASE, MCP_HARNESS_CLIENT_CREDENTIALS: bad }, []), (e) => e instanceof EnvError && /MCP_HARNESS_CLIENT_CREDENTIALS/.test(e.message) && !e.message.includes('m2m-k3y'));
  }
});

test('credentials saying dpop: true make a connect need the dpop feature', () => {
  const creds = { client_id: 'm2m', method: 'client_secret_basic', client_secret: 'm2m-s3cret', dpop: true };
  const env = readEnv({ ...BASE, MCP_HARNESS_CLIENT_CREDENTIALS: JSON.stringify(creds) }, []);
  assert.deepEqual(undeclared({ op: 'connect' }, env, ['client_credentials']), ['dpop']);
  assert.deepEqual(undeclared({ op: 'connect' }, env, ['client_credentials', 'dpop']), []);
  const bad = JSON.stringify({ ...creds, dpop: 'yes' });
  assert.throws(() => readEnv({ ...BASE, MCP_HARNESS_CLIENT_CREDENTIALS: bad }, []), (e) => e instanceof EnvError && /dpop/.test(e.message) && !e.message.includes('m2m-s3cret'));
});

test('readEnv reads the authorization variables and names the one it refuses', () => {
  const REDIRECT = 'http://127.0.0.1:9/callback';
  assert.equal(readEnv(BASE, []).auth, undefined);
  assert.deepEqual(readEnv(BASE, []).localOrigins, []);
  const env = readEnv({
    ...BASE,
    MCP_HARNESS_AUTH_REDIRECT_URI: REDIRECT,
    MCP_HARNESS_AUTH_CLIENT_ID: 'pre',
    MCP_HARNESS_AUTH_CLIENT_SECRET: 'client-s3cret',
    MCP_HARNESS_AUTH_CLIENT_METADATA_URL: 'https://localhost:2/client.json',
    MCP_HARNESS_AUTH_CLIENT_AUTH_METHOD: 'client_secret_basic',
    MCP_HARNESS_AUTH_CLIENT_ISSUER: 'https://localhost:5/tenant',
    MCP_HARNESS_LOCAL_ORIGINS: ' https://localhost:3  https://localhost:4/ ',
  }, []);
  assert.deepEqual(env.auth, { redirectUri: REDIRECT, clientId: 'pre', clientSecret: 'client-s3cret', clientMetadataUrl: 'https://localhost:2/client.json', clientAuthMethod: 'client_secret_basic', clientIssuer: 'https://localhost:5/tenant' });
  assert.deepEqual(env.localOrigins, ['https://localhost:3', 'https://localhost:4']);
  assert.equal(redact('the secret client-s3cret'), 'the secret [redacted]');
  for (const [name, extra] of [
    ['MCP_HARNESS_AUTH_REDIRECT_URI', { MCP_HARNESS_AUTH_REDIRECT_URI: '/callback' }],
    ['MCP_HARNESS_AUTH_CLIENT_METADATA_URL', { MCP_HARNESS_AUTH_REDIRECT_URI: REDIRECT, MCP_HARNESS_AUTH_CLIENT_METADATA_URL: 'http://localhost/c.json' }],
    ['MCP_HARNESS_AUTH_CLIENT_SECRET', { MCP_HARNESS_AUTH_REDIRECT_URI: REDIRECT, MCP_HARNESS_AUTH_CLIENT_SECRET: 'other-s3cret' }],
    ['MCP_HARNESS_AUTH_CLIENT_ID', { MCP_HARNESS_AUTH_CLIENT_ID: 'orphan' }],
    ['MCP_HARNESS_AUTH_CLIENT_AUTH_METHOD', { MCP_HARNESS_AUTH_REDIRECT_URI: REDIRECT, MCP_HARNESS_AUTH_CLIENT_ID: 'pre', MCP_HARNESS_AUTH_CLIENT_AUTH_METHOD: 'private_key_jwt' }],
    ['MCP_HARNESS_LOCAL_ORIGINS', { MCP_HARNESS_LOCAL_ORIGINS: 'https://localhost:3/path' }],
    ['MCP_HARNESS_AUTH_CLIENT_ISSUER', { MCP_HARNESS_AUTH_REDIRECT_URI: REDIRECT, MCP_HARNESS_AUTH_CLIENT_ISSUER: 'https://localhost:5' }],
    ['MCP_HARNESS_AUTH_CLIENT_ISSUER', { MCP_HARNESS_AUTH_REDIRECT_URI: REDIRECT, MCP_HARNESS_AUTH_CLIENT_ID: 'pre', MCP_HARNESS_AUTH_CLIENT_ISSUER: 'http://localhost:5' }],
  ]) {
    assert.throws(() => readEnv({ ...BASE, ...extra }, []), (e) => e instanceof EnvError && e.message.startsWith(name) && !e.message.includes('other-s3cret'), name);
  }
});

test('registered secrets are redacted from outcome lines; auth_failed is a kind', () => {
  assert.ok(ERROR_KINDS.includes('auth_failed'));
  secret('access-t0ken');
  secret(undefined);
  assert.equal(redact('Bearer access-t0ken'), 'Bearer [redacted]');
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', `
    import { secret, emit } from ${JSON.stringify(KIT)};
    secret('refresh-t0ken');
    emit({ step: 0, op: 'connect', error: { kind: 'auth_failed', message: 'refused refresh-t0ken' } });
  `], { encoding: 'utf8' });
  assert.equal(JSON.parse(child.stdout).error.message, 'refused [redacted]');
});

test('callbackParams reads the first value of each parameter, checking nothing', () => {
  assert.deepEqual(callbackParams('http://127.0.0.1:9/callback?code=c&state=s&iss=https%3A%2F%2Fas&state=x'), { code: 'c', state: 's', iss: 'https://as' });
});

/** A plain-HTTP authorization endpoint on loopback answering `status` (and `location`). */
async function authorizationEndpoint(status, location) {
  const seen = [];
  const server = createServer((request, response) => {
    seen.push(request.url);
    response.writeHead(status, location ? { location } : {});
    response.end();
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}/authorize?state=abc&client_id=x`;
  return { url, seen, close: () => new Promise((resolve) => server.close(resolve)) };
}

test('headlessAuthorize returns the Location without following it', async () => {
  const endpoint = await authorizationEndpoint(302, '/callback?code=c1&state=abc');
  try {
    const location = await headlessAuthorize(endpoint.url, { timeoutMs: 5000 });
    assert.equal(location, `${new URL(endpoint.url).origin}/callback?code=c1&state=abc`);
    assert.deepEqual(endpoint.seen, ['/authorize?state=abc&client_id=x']);
  } finally {
    await endpoint.close();
  }
});

test('headlessAuthorize: a non-redirect answer or an unreachable endpoint is auth_failed', async () => {
  for (const [status, location] of [[200, undefined], [400, undefined], [302, undefined]]) {
    const endpoint = await authorizationEndpoint(status, location);
    try {
      await rejects(headlessAuthorize(endpoint.url, { timeoutMs: 5000 }), 'auth_failed');
    } finally {
      await endpoint.close();
    }
  }
  const endpoint = await authorizationEndpoint(302, '/x');
  const { url } = endpoint;
  await endpoint.close();
  await rejects(headlessAuthorize(url, { timeoutMs: 2000 }), 'auth_failed');
});

test('MemoryOAuthProvider keeps everything in memory, registers each secret and hands the redirect over once', async () => {
  const REDIRECT = 'http://127.0.0.1:9/callback';
  const env = readEnv({ ...BASE, MCP_HARNESS_AUTH_REDIRECT_URI: REDIRECT, MCP_HARNESS_AUTH_CLIENT_ID: 'pre', MCP_HARNESS_AUTH_CLIENT_SECRET: 'pre-s3cret', MCP_HARNESS_AUTH_CLIENT_AUTH_METHOD: 'client_secret_post' }, []);
  const provider = new MemoryOAuthProvider(env, 'kit test');
  assert.deepEqual(provider.clientInformation(), { client_id: 'pre', client_secret: 'pre-s3cret', token_endpoint_auth_method: 'client_secret_post' });
  assert.equal(provider.redirectUrl, REDIRECT);
  assert.deepEqual(provider.clientMetadata.redirect_uris, [REDIRECT]);
  assert.equal(provider.clientMetadata.client_name, 'kit test');
  provider.saveTokens({ access_token: 'acc-t0ken', refresh_token: 'ref-t0ken' });
  provider.saveCodeVerifier('ver-1fier');
  assert.equal(redact('acc-t0ken ref-t0ken ver-1fier'), '[redacted] [redacted] [redacted]');
  assert.equal(provider.codeVerifier(), 'ver-1fier');
  provider.invalidateCredentials('tokens');
  assert.equal(provider.tokens(), undefined);
  assert.equal(provider.codeVerifier(), 'ver-1fier');
  assert.equal(provider.takeLocation(), undefined);
  const endpoint = await authorizationEndpoint(302, '/callback?code=c0de-1&state=abc');
  try {
    await provider.redirectToAuthorization(new URL(endpoint.url));
    const location = provider.takeLocation();
    assert.equal(new URL(location).searchParams.get('code'), 'c0de-1');
    assert.equal(redact('c0de-1'), '[redacted]');
    assert.equal(provider.takeLocation(), undefined);
  } finally {
    await endpoint.close();
  }
});

test('retryAfterAuthorization finishes a pending authorization and runs again, up to its limit', async () => {
  class Unauthorized extends Error {}
  const provider = { location: undefined, takeLocation() { const l = this.location; this.location = undefined; return l; } };
  const finished = [];
  let calls = 0;
  const once = () => { calls += 1; if (calls === 1) { provider.location = 'http://127.0.0.1:9/callback?code=c'; throw new Unauthorized('401'); } return 'ok'; };
  const options = { provider, isUnauthorized: (e) => e instanceof Unauthorized, finish: async (l) => finished.push(l) };
  assert.equal(await retryAfterAuthorization(once, options), 'ok');
  assert.deepEqual(finished, ['http://127.0.0.1:9/callback?code=c']);
  // Another error, or no pending authorization, is thrown as it is.
  await assert.rejects(retryAfterAuthorization(() => { throw new Unauthorized('no redirect'); }, options), Unauthorized);
  // A user asked again and again gives up.
  const always = () => { provider.location = 'http://127.0.0.1:9/callback?code=c'; throw new Unauthorized('401'); };
  await rejects(retryAfterAuthorization(always, { ...options, limit: 2 }), 'auth_failed');
});

test('sampling tools and URL consent are features', () => {
  const needs = (handlers, declared) => undeclared({ op: 'connect', handlers }, {}, declared);
  const toolUse = { role: 'assistant', content: [{ type: 'tool_use', id: 'c', name: 'w', input: {} }], model: 'm' };
  const text = { role: 'assistant', content: { type: 'text', text: 't' }, model: 'm' };
  assert.deepEqual(needs({ 'sampling/createMessage': toolUse }, ['sampling']), ['sampling_tools']);
  assert.deepEqual(needs({ 'sampling/createMessage': { rejected: true } }, ['sampling']), ['sampling_tools']);
  assert.deepEqual(needs({ 'sampling/createMessage': text }, ['sampling']), []);
  assert.deepEqual(needs({ 'sampling/createMessage': toolUse }, ['sampling', 'sampling_tools']), []);
  const browser = { 'elicitation/create': { url: { action: 'accept', browser: true } } };
  assert.deepEqual(needs(browser, ['elicitation']), ['url_consent']);
  assert.deepEqual(needs({ 'elicitation/create': { url: { action: 'accept' } } }, ['elicitation']), []);
  assert.deepEqual(needs(browser, ['elicitation', 'url_consent']), []);
});

test('a connect that serves tasks needs the task_receiver feature', () => {
  const adapter = (features) => `
await kit.run({ name: 'receiver-adapter', features: ${JSON.stringify(features)}, ops: { connect: () => ({ protocolVersion: 'v' }) } });
`;
  const first = (features, step) => {
    const { code, lines, stderr } = runAdapter(adapter(features), { ...BASE, MCP_HARNESS_PLAN: JSON.stringify([step]) });
    assert.equal(code, 0, stderr);
    return lines[0];
  };
  const serving = { op: 'connect', tasks: ['sampling/createMessage'] };
  const refused = first(['tasks'], serving);
  assert.equal(refused.error?.kind, 'unsupported_op', JSON.stringify(refused));
  assert.match(refused.error.message, /does not declare the feature task_receiver/);
  assert.ok(first(['tasks', 'task_receiver'], serving).ok);
  assert.ok(first(['tasks'], { op: 'connect', tasks: [] }).ok);
  const malformed = first(['tasks', 'task_receiver'], { op: 'connect', tasks: 'sampling/createMessage' });
  assert.equal(malformed.error?.kind, 'unsupported_op');
  assert.match(malformed.error.message, /"tasks"/);
});

test('many servers need the many_servers feature; with it each server is its own connection', () => {
  const adapter = (features) => `
await kit.run({
  name: 'servers-adapter',
  features: ${JSON.stringify(features)},
  ops: {
    connect: (step) => { process.stderr.write('connect ' + (step.server ?? 'main') + '\\n'); return { protocolVersion: 'v' }; },
    call_tool: (step) => ({ text: [step.server ?? 'main'] }),
    exposed_tools: () => ({ tools: [{ name: 'b__search', server: 'b', tool: 'search' }] }),
    close: (step) => { process.stderr.write('close ' + (step.server ?? 'main') + '\\n'); return {}; },
  },
});
`;
  const plan = [
    { op: 'connect' },
    { op: 'connect', server: 'b' },
    { op: 'exposed_tools' },
    { op: 'close', server: 'b' },
    { op: 'call_tool', name: 'x', server: 'b' },
    { op: 'call_tool', name: 'x' },
  ];
  const servers = JSON.stringify({ main: { argv: ['fake'] }, b: { argv: ['fake', 'b'] } });
  const run = (features) => {
    const { code, lines, stderr } = runAdapter(adapter(features), { ...BASE, MCP_HARNESS_PLAN: JSON.stringify(plan), MCP_HARNESS_SERVERS: servers });
    assert.equal(code, 0, stderr);
    return { kinds: lines.map((l) => l.error?.kind ?? 'ok'), lines, seen: stderr.match(/^(connect|close) \w+$/gm) ?? [] };
  };
  const carried = run(['many_servers']);
  assert.deepEqual(carried.kinds, ['ok', 'ok', 'ok', 'ok', 'transport_closed', 'ok']);
  assert.deepEqual(carried.lines[5].ok, { text: ['main'] });
  assert.deepEqual(carried.seen, ['connect main', 'connect b', 'close b', 'close main']);
  const refused = run([]);
  assert.deepEqual(refused.kinds, ['ok', 'unsupported_op', 'unsupported_op', 'transport_closed', 'transport_closed', 'ok']);
  assert.match(refused.lines[1].error.message, /does not declare the feature many_servers/);
  assert.deepEqual(readEnv({ ...BASE, MCP_HARNESS_SERVERS: servers }, []).servers.b, { argv: ['fake', 'b'] });
  assert.throws(() => readEnv({ ...BASE, MCP_HARNESS_SERVERS: '{"b": {"argv": []}}' }, []), /MCP_HARNESS_SERVERS/);
});

test('a connect with a trace context needs the trace_context feature', () => {
  const adapter = (features) => `
await kit.run({ name: 'tracing-adapter', features: ${JSON.stringify(features)}, ops: { connect: () => ({ protocolVersion: 'v' }) } });
`;
  const first = (features, step) => {
    const { code, lines, stderr } = runAdapter(adapter(features), { ...BASE, MCP_HARNESS_PLAN: JSON.stringify([step]) });
    assert.equal(code, 0, stderr);
    return lines[0];
  };
  const context = { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', baggage: 'k=v' };
  const refused = first([], { op: 'connect', trace_context: context });
  assert.equal(refused.error?.kind, 'unsupported_op', JSON.stringify(refused));
  assert.match(refused.error.message, /does not declare the feature trace_context/);
  assert.ok(first(['trace_context'], { op: 'connect', trace_context: context }).ok);
  assert.ok(first([], { op: 'connect' }).ok);
  for (const bad of [{ tracestate: 'a=b' }, { traceparent: 7 }, '00-x', { traceparent: 'x', baggage: 1 }]) {
    const malformed = first(['trace_context'], { op: 'connect', trace_context: bad });
    assert.equal(malformed.error?.kind, 'unsupported_op', JSON.stringify(bad));
    assert.match(malformed.error.message, /"trace_context"/);
  }
});

test('a traces trial needs the traces feature; its tracing is set up first and shut down last', () => {
  const adapter = (features, setup) => `
await kit.run({ name: 'traces-adapter', features: ${JSON.stringify(features)},
  setupTraces: async () => { ${setup}; console.error('setup'); return async () => console.error('shutdown'); },
  ops: { connect: () => { console.error('connect'); return { protocolVersion: 'v' }; }, close: () => console.error('close') } });
`;
  const plan = JSON.stringify([{ op: 'connect' }, { op: 'close' }]);
  const run = (features, traces, setup = '') => {
    const vars = { ...BASE, MCP_HARNESS_PLAN: plan };
    if (traces !== undefined) vars.MCP_HARNESS_TRACES = traces;
    const { code, lines, stderr } = runAdapter(adapter(features, setup), vars);
    assert.equal(code, 0, stderr);
    return { lines, calls: stderr.match(/^(setup|connect|close|shutdown)$/gm) ?? [] };
  };
  const refused = run([], '1');
  assert.equal(refused.lines[0].error?.kind, 'unsupported_op', JSON.stringify(refused.lines));
  assert.match(refused.lines[0].error.message, /does not declare the feature traces/);
  assert.equal(refused.lines[1].error?.kind, 'transport_closed');
  assert.deepEqual(refused.calls, []);
  const traced = run(['traces'], '1');
  assert.ok(traced.lines.every((l) => l.ok), JSON.stringify(traced.lines));
  assert.deepEqual(traced.calls, ['setup', 'connect', 'close', 'shutdown']);
  for (const traces of [undefined, '0']) {
    assert.deepEqual(run(['traces'], traces).calls, ['connect', 'close']);
    assert.ok(run([], traces).lines.every((l) => l.ok));
  }
  const broken = run(['traces'], '1', "throw new Error('no exporter')");
  assert.equal(broken.lines[0].error?.kind, 'handshake_failed', JSON.stringify(broken.lines));
  assert.match(broken.lines[0].error.message, /setting up traces failed: .*no exporter/);
});

test('fetch_icons needs the icons feature', () => {
  const adapter = (features) => `
await kit.run({ name: 'icons-adapter', features: ${JSON.stringify(features)}, ops: {
  connect: () => ({ protocolVersion: 'v' }),
  fetch_icons: () => ({ fetched: [], refused: [] }),
} });
`;
  const lines = (features) => {
    const { code, lines, stderr } = runAdapter(adapter(features), { ...BASE, MCP_HARNESS_PLAN: JSON.stringify([{ op: 'connect' }, { op: 'fetch_icons' }]) });
    assert.equal(code, 0, stderr);
    return lines;
  };
  const refused = lines([])[1];
  assert.equal(refused.error?.kind, 'unsupported_op', JSON.stringify(refused));
  assert.match(refused.error.message, /does not declare the feature icons/);
  assert.deepEqual(lines(['icons'])[1].ok, { fetched: [], refused: [] });
});

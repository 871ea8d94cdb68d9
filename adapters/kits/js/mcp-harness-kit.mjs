// mcp-harness adapter kit for JavaScript (Node 20+), driver contract version 1 (CLIENTS.md).
//
// Why: every adapter needs the same plumbing around its library (read and check the
// environment, walk the plan, validate each step's fields, print one outcome line per step,
// keep library prints off stdout, never print the bearer token, name common Node errors with
// the contract's kinds, exit 0 once the plan is done). Written once here, an adapter is mostly
// calls into its SDK: it hands `run` one function per op it supports, and an optional
// `classify` hook for its library's own errors.
//
// One file, no dependencies: copy it beside your adapter, or import it by relative path.
//
//   import { run, toolResult } from './mcp-harness-kit.mjs';
//   await run({
//     name: 'my-adapter',
//     ops: {
//       connect: async (step, { env }) => { ...; return { protocolVersion, serverInfo }; },
//       call_tool: async (step, { env, signal }) => toolResult(await client.callTool(step.name, step.arguments)),
//       close: async () => client.close(),
//     },
//   });
//
// An op left out of `ops` is answered `unsupported_op`; steps before a successful `connect` or
// after `close` are answered `transport_closed` without calling the adapter; `sleep` is done
// here, and `events` too when `run` is given an `Events` queue.

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import process from 'node:process';
import { rootCertificates } from 'node:tls';
import { performance } from 'node:perf_hooks';

// ---------------------------------------------------------------------------------------------
// Errors

/** The contract's closed vocabulary of error kinds (CLIENTS.md, "Error kinds"). */
export const ERROR_KINDS = Object.freeze([
  'unsupported_version', 'handshake_failed', 'protocol_error', 'tool_error', 'repeated_cursor',
  'duplicate_tool_name', 'duplicate_name', 'capability_missing', 'schema_mismatch', 'timeout',
  'cancelled', 'transport_closed', 'invalid_response', 'insecure_url', 'tls', 'http_status',
  'unsupported_op', 'input_unsupported', 'auth_failed',
]);

/** A step's failure, in the contract's closed vocabulary of kinds. */
export class StepError extends Error {
  /**
   * @param {string} kind one of CLIENTS.md's error kinds
   * @param {string} message what happened (the token is redacted when it is printed)
   * @param {number} [code] the JSON-RPC error code, when a JSON-RPC error caused it
   * @param {number} [status] the HTTP status, with kind `http_status`
   */
  constructor(kind, message, code, status) {
    super(message);
    this.name = 'StepError';
    this.kind = kind;
    this.code = code;
    this.status = status;
  }
}

/** Node/OpenSSL error codes (anywhere in an error's `cause` chain) meaning a refused certificate. */
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

/**
 * The `code` strings along an error's `cause` chain (fetch wraps the socket's error).
 * @param {unknown} error
 * @returns {string[]}
 */
export function causeCodes(error) {
  const codes = [];
  let current = /** @type {any} */ (error);
  for (let depth = 0; current && depth < 8; depth += 1) {
    if (typeof current.code === 'string') codes.push(current.code);
    current = current.cause;
  }
  return codes;
}

/**
 * An error's message and its causes', one string (for logs and error lines).
 * @param {unknown} error
 * @returns {string}
 */
export function describe(error) {
  if (!(error instanceof Error)) return String(error);
  const parts = [error.message];
  let cause = /** @type {any} */ (error).cause;
  for (let depth = 0; cause && depth < 4; depth += 1) {
    const code = typeof cause.code === 'string' ? ` [${cause.code}]` : '';
    parts.push(`${cause.message ?? String(cause)}${code}`);
    cause = cause.cause;
  }
  return parts.join(': ');
}

/**
 * The kit's mapping of errors any Node client meets; the adapter's `classify` hook runs first.
 * A StepError is kept; a cancelled call's abort is `cancelled`; an AbortSignal.timeout() is
 * `timeout`; an unparsable body is `invalid_response`; an error carrying an HTTP status is
 * `http_status` with it; a URL Node cannot parse is
 * `insecure_url`; a refused certificate is `tls`; everything else is the connection failing
 * (refused, reset, a child that could not be spawned): `transport_closed`.
 * @param {unknown} error
 * @param {{cancelled?: boolean}} [context]
 * @returns {StepError}
 */
export function mapError(error, context = {}) {
  if (error instanceof StepError) return error;
  const message = describe(error);
  const name = /** @type {any} */ (error)?.name;
  if (context.cancelled && name === 'AbortError') return new StepError('cancelled', message);
  if (name === 'TimeoutError') return new StepError('timeout', message);
  if (error instanceof SyntaxError) return new StepError('invalid_response', message);
  // An HTTP error that carries a non-success status (fetch wrappers' `status`, axios'
  // `response.status`); a 2xx answer the library refused (a wrong content type) is not one.
  const any = /** @type {any} */ (error);
  const status = [any?.status, any?.statusCode, any?.response?.status].find((s) => Number.isInteger(s) && s >= 300 && s <= 599);
  if (status !== undefined) return new StepError('http_status', message, undefined, status);
  const codes = causeCodes(error);
  if (codes.includes('ERR_INVALID_URL')) return new StepError('insecure_url', message);
  if (codes.some((c) => TLS_CODES.has(c) || c.startsWith('ERR_TLS_') || c.startsWith('ERR_SSL_'))) {
    return new StepError('tls', message);
  }
  return new StepError('transport_closed', message);
}

// ---------------------------------------------------------------------------------------------
// Output: stdout is for outcome lines only; the token is never printed

const realStdoutWrite = process.stdout.write.bind(process.stdout);
/** Every secret the kit knows: the bearer token, the client secret, whatever `secret` registered. */
const secrets = new Set();
let logPrefix = 'adapter';

/**
 * Registers `value` as a secret to redact from every outcome line and log line; returns it.
 * Hand the kit each token, code or client secret your library lets you see (a provider's
 * `saveTokens`, `saveClientInformation`): the harness fails a trial whose output shows one.
 * @template {string|undefined|null} T
 * @param {T} value
 * @returns {T}
 */
export function secret(value) {
  if (typeof value === 'string' && value !== '') secrets.add(value);
  return value;
}

/**
 * `text` with every registered secret (the bearer token among them) replaced.
 * @param {string} text
 * @returns {string}
 */
export function redact(text) {
  let out = String(text);
  for (const value of [...secrets].sort((a, b) => b.length - a.length)) out = out.split(value).join('[redacted]');
  return out;
}

/**
 * A log line on stderr, redacted.
 * @param {...unknown} parts
 */
export function log(...parts) {
  process.stderr.write(`[${logPrefix}] ${redact(parts.map(String).join(' '))}\n`);
}

/**
 * Sends everything written to process.stdout (console.log, a library's prints) to stderr,
 * so that only `emit` reaches the real stdout. Called by `run`; idempotent.
 */
export function guardStdout() {
  if (process.stdout.write === guardedWrite) return;
  process.stdout.write = guardedWrite;
}

/** @type {typeof process.stdout.write} */
const guardedWrite = /** @type {any} */ (
  (chunk, encoding, callback) => process.stderr.write(chunk, encoding, callback)
);

/**
 * Writes one outcome line to the real stdout, with every string in it redacted.
 * @param {object} line
 */
export function emit(line) {
  realStdoutWrite(`${JSON.stringify(line, (_key, value) => (typeof value === 'string' ? redact(value) : value))}\n`);
}

// ---------------------------------------------------------------------------------------------
// Environment

/** Thrown by readEnv: names the variable and what was expected. */
export class EnvError extends Error {}

/**
 * @typedef {object} Env
 * @property {'stdio'|'http'} transport
 * @property {object[]} plan
 * @property {string[]} [serverCommand] stdio: the fake's argv
 * @property {string} [url] http: the MCP endpoint
 * @property {number} timeoutMs
 * @property {string} protocolVersion
 * @property {'legacy'|'modern'|'dual'} era
 * @property {string} legacyProtocolVersion dual era: the version of the fallback initialize
 * @property {number} [shutdownGraceMs]
 * @property {string} [token] the bearer token (never log it)
 * @property {string} [caFile]
 * @property {string} [scenario]
 * @property {Auth} [auth] set on authorization trials (MCP_HARNESS_AUTH_REDIRECT_URI): configure
 *   the library as an OAuth client then, and only then
 * @property {string[]} localOrigins MCP_HARNESS_LOCAL_ORIGINS: loopback origins the user's local
 *   policy allows
 * @property {Record<string, {argv?: string[], url?: string}>} servers MCP_HARNESS_SERVERS: every
 *   server by name (`main` too); empty unless the case has several (CLIENTS.md, "Many servers")
 */

/**
 * @typedef {object} Auth
 * @property {string} redirectUri the redirect URI registered for the client
 * @property {string} [clientId] a pre-registered client id
 * @property {string} [clientSecret] its secret (registered with the kit's redaction)
 * @property {string} [clientMetadataUrl] the client's metadata document URL (CIMD)
 * @property {'client_secret_basic'|'client_secret_post'|'none'} [clientAuthMethod] how the
 *   pre-registered client authenticates at the token endpoint, as registered
 * @property {string} [clientIssuer] the issuer of the authorization server the pre-registered
 *   client belongs to, for a library that binds credentials to an issuer
 */

/** The token endpoint authentication methods a pre-registered client may be registered with. */
export const CLIENT_AUTH_METHODS = Object.freeze(['client_secret_basic', 'client_secret_post', 'none']);

const AUTH_VARS = ['MCP_HARNESS_AUTH_CLIENT_ID', 'MCP_HARNESS_AUTH_CLIENT_SECRET', 'MCP_HARNESS_AUTH_CLIENT_METADATA_URL', 'MCP_HARNESS_AUTH_CLIENT_AUTH_METHOD', 'MCP_HARNESS_AUTH_CLIENT_ISSUER'];

/**
 * The authorization variables, checked (undefined on a trial without authorization).
 * @param {Record<string, string|undefined>} vars
 * @param {(name: string, value: unknown, expected: string) => never} bad
 * @returns {Auth|undefined}
 */
function readAuth(vars, bad) {
  const url = (name, schemes) => {
    const raw = vars[name];
    if (!raw) return undefined;
    let parsed;
    try {
      parsed = new URL(raw);
    } catch {
      parsed = undefined;
    }
    if (!parsed || !schemes.includes(parsed.protocol) || !parsed.hostname) {
      bad(name, raw, `an absolute ${schemes.map((s) => `${s}//`).join(' or ')} URL`);
    }
    return raw;
  };
  const redirectUri = url('MCP_HARNESS_AUTH_REDIRECT_URI', ['http:', 'https:']);
  const clientMetadataUrl = url('MCP_HARNESS_AUTH_CLIENT_METADATA_URL', ['https:']);
  if (!redirectUri) {
    const extra = AUTH_VARS.find((name) => vars[name]);
    if (extra) bad(extra, vars[extra] === vars.MCP_HARNESS_AUTH_CLIENT_SECRET ? '[secret]' : vars[extra], 'to come with MCP_HARNESS_AUTH_REDIRECT_URI (an authorization trial)');
    return undefined;
  }
  /** @type {Auth} */
  const auth = { redirectUri };
  if (vars.MCP_HARNESS_AUTH_CLIENT_ID) auth.clientId = vars.MCP_HARNESS_AUTH_CLIENT_ID;
  if (vars.MCP_HARNESS_AUTH_CLIENT_SECRET) {
    if (!auth.clientId) bad('MCP_HARNESS_AUTH_CLIENT_SECRET', '[secret]', 'to come with MCP_HARNESS_AUTH_CLIENT_ID');
    auth.clientSecret = secret(vars.MCP_HARNESS_AUTH_CLIENT_SECRET);
  }
  if (clientMetadataUrl) auth.clientMetadataUrl = clientMetadataUrl;
  const method = vars.MCP_HARNESS_AUTH_CLIENT_AUTH_METHOD;
  if (method) {
    if (!CLIENT_AUTH_METHODS.includes(method)) bad('MCP_HARNESS_AUTH_CLIENT_AUTH_METHOD', method, CLIENT_AUTH_METHODS.join(', '));
    if (!auth.clientId) bad('MCP_HARNESS_AUTH_CLIENT_AUTH_METHOD', method, 'to come with MCP_HARNESS_AUTH_CLIENT_ID');
    auth.clientAuthMethod = method;
  }
  const issuer = url('MCP_HARNESS_AUTH_CLIENT_ISSUER', ['https:']);
  if (issuer) {
    if (!auth.clientId) bad('MCP_HARNESS_AUTH_CLIENT_ISSUER', issuer, 'to come with MCP_HARNESS_AUTH_CLIENT_ID');
    auth.clientIssuer = issuer;
  }
  return auth;
}

/** How a machine client authenticates (MCP_HARNESS_CLIENT_CREDENTIALS's `method`). */
export const MACHINE_METHODS = Object.freeze(['client_secret_basic', 'client_secret_post', 'private_key_jwt']);

/**
 * MCP_HARNESS_CLIENT_CREDENTIALS, checked, its secret or key registered for redaction
 * (undefined when unset): `{client_id, method, client_secret?, private_key_pem?, alg?}`.
 * @param {string|undefined} raw
 * @param {(name: string, value: unknown, expected: string) => never} bad
 */
function readClientCredentials(raw, bad) {
  if (!raw) return undefined;
  const name = 'MCP_HARNESS_CLIENT_CREDENTIALS';
  let creds;
  try {
    creds = JSON.parse(raw);
  } catch {
    bad(name, '[credentials]', 'a JSON object with client_id and method');
  }
  if (!isObject(creds) || typeof creds.client_id !== 'string') bad(name, '[credentials]', 'an object with a string client_id');
  if (!MACHINE_METHODS.includes(creds.method)) bad(name, '[credentials]', `a method of ${MACHINE_METHODS.join(', ')}`);
  const needs = creds.method === 'private_key_jwt' ? 'private_key_pem' : 'client_secret';
  if (typeof creds[needs] !== 'string' || creds[needs] === '') bad(name, '[credentials]', `${creds.method} with a string ${needs}`);
  if ('dpop' in creds && typeof creds.dpop !== 'boolean') bad(name, '[credentials]', 'dpop true or false');
  secret(creds[needs]);
  return creds;
}

/**
 * MCP_HARNESS_LOCAL_ORIGINS: space-separated origins, checked.
 * @param {string|undefined} raw
 * @param {(name: string, value: unknown, expected: string) => never} bad
 * @returns {string[]}
 */
function readLocalOrigins(raw, bad) {
  return (raw ?? '').split(/\s+/).filter(Boolean).map((origin) => {
    let parsed;
    try {
      parsed = new URL(origin);
    } catch {
      parsed = undefined;
    }
    const pathless = parsed && (parsed.pathname === '/' || parsed.pathname === '') && !parsed.search && !parsed.hash;
    if (!parsed || !['http:', 'https:'].includes(parsed.protocol) || !pathless || !origin.match(/^https?:\/\/[^/]+\/?$/)) {
      bad('MCP_HARNESS_LOCAL_ORIGINS', origin, 'space-separated origins such as https://localhost:8443');
    }
    return parsed.origin;
  });
}

/**
 * Reads and checks the contract's variables.
 * @param {Record<string, string|undefined>} [vars] defaults to process.env
 * @param {string[]} [argv] defaults to process.argv (the URL is also the last argument)
 * @returns {Env}
 * @throws {EnvError} naming the variable
 */
export function readEnv(vars = process.env, argv = process.argv) {
  const bad = (name, value, expected) => {
    throw new EnvError(`${name} is ${value === undefined ? 'not set' : JSON.stringify(value)}; expected ${expected}`);
  };
  if (vars.MCP_HARNESS_CONTRACT !== '1') bad('MCP_HARNESS_CONTRACT', vars.MCP_HARNESS_CONTRACT, '"1" (this kit implements contract version 1)');
  const transport = vars.MCP_HARNESS_TRANSPORT;
  if (transport !== 'stdio' && transport !== 'http') bad('MCP_HARNESS_TRANSPORT', transport, '"stdio" or "http"');
  const json = (name) => {
    try {
      return JSON.parse(vars[name] ?? '');
    } catch {
      return undefined;
    }
  };
  const plan = json('MCP_HARNESS_PLAN');
  if (!Array.isArray(plan)) bad('MCP_HARNESS_PLAN', vars.MCP_HARNESS_PLAN, 'a JSON array of steps');
  /** @type {Env} */
  const env = { transport, plan, timeoutMs: 0, protocolVersion: '', era: 'legacy', legacyProtocolVersion: '2025-11-25' };
  if (transport === 'stdio') {
    const command = json('MCP_HARNESS_SERVER_COMMAND');
    if (!Array.isArray(command) || command.length === 0 || !command.every((a) => typeof a === 'string')) {
      bad('MCP_HARNESS_SERVER_COMMAND', vars.MCP_HARNESS_SERVER_COMMAND, 'a non-empty JSON array of strings');
    }
    env.serverCommand = command;
  } else {
    env.url = vars.MCP_HARNESS_SERVER_URL || (argv.length > 2 ? argv.at(-1) : undefined);
    if (!env.url) bad('MCP_HARNESS_SERVER_URL', undefined, 'the server URL (or the URL as the last argument)');
  }
  const positive = (name, required) => {
    const raw = vars[name];
    if (raw === undefined || raw === '') {
      if (required) bad(name, raw, 'a positive integer of milliseconds');
      return undefined;
    }
    if (!/^\d+$/.test(raw) || Number(raw) <= 0) bad(name, raw, 'a positive integer of milliseconds');
    return Number(raw);
  };
  env.timeoutMs = /** @type {number} */ (positive('MCP_HARNESS_TIMEOUT_MS', true));
  env.shutdownGraceMs = positive('MCP_HARNESS_SHUTDOWN_GRACE_MS', false);
  const era = vars.MCP_HARNESS_ERA || 'legacy';
  if (era !== 'legacy' && era !== 'modern' && era !== 'dual') bad('MCP_HARNESS_ERA', era, '"legacy", "modern" or "dual"');
  env.era = era;
  env.protocolVersion = vars.MCP_HARNESS_PROTOCOL_VERSION ?? '';
  env.legacyProtocolVersion = vars.MCP_HARNESS_LEGACY_PROTOCOL_VERSION || '2025-11-25';
  if (vars.MCP_HARNESS_BEARER_TOKEN) env.token = vars.MCP_HARNESS_BEARER_TOKEN;
  if (vars.MCP_HARNESS_CA_FILE) env.caFile = vars.MCP_HARNESS_CA_FILE;
  if (vars.MCP_HARNESS_SCENARIO) env.scenario = vars.MCP_HARNESS_SCENARIO;
  const auth = readAuth(vars, bad);
  if (auth) env.auth = auth;
  const clientCredentials = readClientCredentials(vars.MCP_HARNESS_CLIENT_CREDENTIALS, bad);
  if (clientCredentials) env.clientCredentials = clientCredentials;
  env.localOrigins = readLocalOrigins(vars.MCP_HARNESS_LOCAL_ORIGINS, bad);
  env.servers = readServers(vars.MCP_HARNESS_SERVERS, bad);
  env.traces = vars.MCP_HARNESS_TRACES === '1';
  return env;
}

/**
 * MCP_HARNESS_SERVERS: a JSON object from server name to `{"argv": [strings]}` or `{"url": string}`.
 * @param {string|undefined} raw
 * @param {(name: string, value: string, expected: string) => never} bad
 */
function readServers(raw, bad) {
  if (!raw) return {};
  const expected = 'a JSON object from server name to {"argv": [strings]} or {"url": string}';
  let servers;
  try {
    servers = JSON.parse(raw);
  } catch {
    servers = undefined;
  }
  if (servers === null || typeof servers !== 'object' || Array.isArray(servers)) bad('MCP_HARNESS_SERVERS', raw, expected);
  for (const entry of Object.values(servers)) {
    const argv = entry?.argv;
    const goodArgv = Array.isArray(argv) && argv.length > 0 && argv.every((a) => typeof a === 'string');
    const goodUrl = typeof entry?.url === 'string' && argv === undefined;
    if (!(goodArgv && entry.url === undefined) && !goodUrl) bad('MCP_HARNESS_SERVERS', raw, expected);
  }
  return servers;
}

// ---------------------------------------------------------------------------------------------
// Authorization: the user's part, headless (CLIENTS.md, "Authorization")

/**
 * The user's part of an authorization without a browser: GETs the authorization URL (trusting
 * `caFile`, the run's CA, besides Node's roots), never follows a redirect, and resolves to the
 * redirect's `Location` (made absolute), the URL a browser would have been sent to. Hand it to
 * the library's callback handling as is: the library, not the adapter, checks `state` and
 * `iss`. A non-redirect answer, a redirect without `Location`, or an endpoint that cannot be
 * reached rejects with StepError('auth_failed').
 * @param {string|URL} url the authorization URL the library built
 * @param {{caFile?: string, timeoutMs?: number}} [options]
 * @returns {Promise<string>}
 */
export async function headlessAuthorize(url, { caFile, timeoutMs = 10000 } = {}) {
  const target = new URL(String(url));
  const lib = target.protocol === 'https:' ? https : target.protocol === 'http:' ? http : undefined;
  if (!lib) throw new StepError('auth_failed', `the authorization URL's scheme ${target.protocol} cannot be opened`);
  const options = { method: 'GET', headers: { accept: 'text/html' }, timeout: timeoutMs, agent: false };
  if (lib === https && caFile) options.ca = [...rootCertificates, readFileSync(caFile, 'utf8')];
  const { status, location } = await new Promise((resolve, reject) => {
    const request = lib.request(target, options, (response) => {
      response.resume();
      resolve({ status: response.statusCode ?? 0, location: response.headers.location });
    });
    request.on('timeout', () => request.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    request.on('error', (error) =>
      reject(new StepError('auth_failed', `the authorization endpoint could not be reached: ${describe(error)}`)),
    );
    request.end();
  });
  if (status < 300 || status > 399) throw new StepError('auth_failed', `the authorization endpoint answered ${status}, not a redirect`);
  if (!location) throw new StepError('auth_failed', `the authorization endpoint answered ${status} without a Location`);
  return new URL(location, target).href;
}

/**
 * The query parameters of a redirect (`code`, `state`, `iss`, or `error`,
 * `error_description`, `state`), first value of each. Parsing only: nothing is checked.
 * @param {string} location
 * @returns {Record<string, string>}
 */
export function callbackParams(location) {
  /** @type {Record<string, string>} */
  const params = {};
  for (const [name, value] of new URL(location).searchParams) if (!(name in params)) params[name] = value;
  return params;
}

/**
 * An in-memory OAuth client provider in the shape the MCP TypeScript SDKs' `authProvider`
 * takes (their `OAuthClientProvider`), written as their examples write one: tokens, client
 * information and code verifier in memory for the trial only; the pre-registered client (id,
 * secret, token endpoint method) when the harness gives one; the CIMD URL as
 * `clientMetadataUrl`; every secret it is handed registered for redaction. Its
 * `redirectToAuthorization` is the headless step: the redirect's Location waits in
 * `takeLocation()` for the adapter, which hands it to the SDK as that SDK's example does. It
 * checks nothing (`state`, `iss`): that is the SDK's business. The TypeScript SDK's provider
 * has no place for the pre-registered client's issuer: a library that binds credentials to an
 * issuer takes `env.auth.clientIssuer` itself.
 */
export class MemoryOAuthProvider {
  /**
   * @param {ReturnType<typeof readEnv>} env the environment (`env.auth` must be set)
   * @param {string} clientName the `client_name` of the client's metadata
   */
  constructor(env, clientName) {
    this.env = env;
    this.clientName = clientName;
    const { clientId, clientSecret, clientMetadataUrl, clientAuthMethod } = env.auth;
    if (clientId) {
      // A pre-registered client, as registered (its token endpoint method when the harness
      // names it; the SDK otherwise picks one from the server's metadata).
      this._clientInformation = { client_id: clientId };
      if (clientSecret) this._clientInformation.client_secret = clientSecret;
      if (clientAuthMethod) this._clientInformation.token_endpoint_auth_method = clientAuthMethod;
    }
    if (clientMetadataUrl) this.clientMetadataUrl = clientMetadataUrl;
    /** The Location of the last headless authorization, until the adapter takes it. */
    this.location = undefined;
  }

  get redirectUrl() {
    return this.env.auth.redirectUri;
  }

  get clientMetadata() {
    return {
      client_name: this.clientName,
      redirect_uris: [this.env.auth.redirectUri],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  clientInformation() {
    return this._clientInformation;
  }

  saveClientInformation(information) {
    secret(information?.client_secret);
    this._clientInformation = information;
  }

  tokens() {
    return this._tokens;
  }

  saveTokens(tokens) {
    secret(tokens?.access_token);
    secret(tokens?.refresh_token);
    this._tokens = tokens;
  }

  async redirectToAuthorization(authorizationUrl) {
    this.location = await headlessAuthorize(authorizationUrl, { caFile: this.env.caFile, timeoutMs: this.env.timeoutMs });
  }

  saveCodeVerifier(codeVerifier) {
    secret(codeVerifier);
    this._codeVerifier = codeVerifier;
  }

  codeVerifier() {
    if (this._codeVerifier === undefined) throw new Error('No code verifier saved');
    return this._codeVerifier;
  }

  invalidateCredentials(scope) {
    if (scope === 'all' || scope === 'client') this._clientInformation = undefined;
    if (scope === 'all' || scope === 'tokens') this._tokens = undefined;
    if (scope === 'all' || scope === 'verifier') this._codeVerifier = undefined;
  }

  /**
   * The pending redirect's Location (consumed), its `code` registered as a secret; undefined
   * when no authorization is pending.
   * @returns {string|undefined}
   */
  takeLocation() {
    const location = this.location;
    this.location = undefined;
    if (location !== undefined) secret(callbackParams(location).code);
    return location;
  }
}

/**
 * Runs `attempt()`; when the library stopped for the user (`isUnauthorized(error)`, after the
 * provider's headless step left a Location), hands that Location to `finish` (which gives it
 * to the library as its examples make their application do) and runs `attempt()` again. A
 * user asked more than `limit` times within one step gives up: `auth_failed`.
 * @template T
 * @param {() => Promise<T>} attempt
 * @param {{provider?: MemoryOAuthProvider, isUnauthorized: (error: unknown) => boolean, finish: (location: string) => Promise<unknown>, limit?: number}} options
 * @returns {Promise<T>}
 */
export async function retryAfterAuthorization(attempt, { provider, isUnauthorized, finish, limit = 2 }) {
  for (let round = 0; ; round += 1) {
    try {
      return await attempt();
    } catch (error) {
      if (!provider || !isUnauthorized(error) || provider.location === undefined) throw error;
      const location = provider.takeLocation();
      if (round >= limit) throw new StepError('auth_failed', `still unauthorized after ${round} authorizations in one step: ${describe(error)}`);
      await finish(location);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Steps: the fields each op takes (CLIENTS.md, "Plan steps"); a malformed step is answered
// `unsupported_op` naming the field, and the adapter is not called

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const isCount = (v) => Number.isInteger(v) && v >= 0;
/** connect's trace_context: {traceparent, tracestate?, baggage?}, strings (CLIENTS.md § Trace context). */
const isTrace = (v) => isObject(v) && typeof v.traceparent === 'string'
  && ['tracestate', 'baggage'].every((k) => v[k] == null || typeof v[k] === 'string');

/** Per op: [field, test, what is expected]; a field left out passes unless marked required. */
const FIELDS = {
  connect: [
    ['handlers', isObject, 'an object by method'],
    ['tasks', Array.isArray, 'an array of methods'],
    ['trace_context', isTrace, 'an object of strings {traceparent, tracestate?, baggage?}'],
  ],
  call_tool: [
    ['name', (v) => typeof v === 'string', 'a string', true],
    ['arguments', isObject, 'an object'],
    ['cancel_after_ms', isCount, 'a non-negative integer'],
    ['progress', (v) => typeof v === 'boolean', 'true or false'],
    ['max_timeout_ms', (v) => Number.isInteger(v) && v > 0, 'a positive integer'],
    ['input', isObject, 'an object by method'],
    ['task', isObject, 'an object'],
    ['background', (v) => typeof v === 'boolean', 'true or false'],
  ],
  get_task: [['task_id', (v) => typeof v === 'string', 'a string', true]],
  cancel_task: [['task_id', (v) => typeof v === 'string', 'a string', true]],
  task_result: [['task_id', (v) => typeof v === 'string', 'a string', true]],
  list_tasks: [],
  read_resource: [['uri', (v) => typeof v === 'string', 'a string', true]],
  subscribe_resource: [['uri', (v) => typeof v === 'string', 'a string', true]],
  unsubscribe_resource: [['uri', (v) => typeof v === 'string', 'a string', true]],
  get_prompt: [
    ['name', (v) => typeof v === 'string', 'a string', true],
    ['arguments', isObject, 'an object'],
  ],
  complete: [
    ['ref', isObject, 'an object', true],
    ['argument', isObject, 'an object', true],
    ['context', isObject, 'an object'],
  ],
  set_logging_level: [['level', (v) => typeof v === 'string', 'a string', true]],
  events: [['min', isCount, 'a non-negative integer']],
  set_roots: [['roots', Array.isArray, 'an array', true]],
  listen: [['notifications', isObject, 'an object', true]],
  sleep: [['ms', isCount, 'a non-negative integer', true]],
  together: [['steps', Array.isArray, 'an array', true]],
};

/** Ops that cannot run inside `together` (they are not requests of the open connection). */
const NOT_TOGETHER = new Set(['connect', 'close', 'sleep', 'events', 'together']);

/**
 * Checks a step's fields; null ones count as left out.
 * @param {any} step
 * @returns {StepError|undefined} `unsupported_op` naming the field, or undefined when valid
 */
export function checkStep(step) {
  if (!isObject(step) || typeof step.op !== 'string') {
    return new StepError('unsupported_op', `a step must be an object with a string "op": ${JSON.stringify(step)}`);
  }
  for (const [field, test, expected, required] of FIELDS[step.op] ?? []) {
    const value = step[field];
    if (value === undefined || value === null) {
      if (required) return new StepError('unsupported_op', `a ${step.op} step needs "${field}" (${expected}): ${JSON.stringify(step)}`);
    } else if (!test(value)) {
      return new StepError('unsupported_op', `"${field}" of a ${step.op} step must be ${expected}: ${JSON.stringify(step)}`);
    }
  }
  // On a task call max_timeout_ms bounds the whole task (CLIENTS.md § Tasks).
  if (step.op === 'call_tool' && step.max_timeout_ms != null && step.progress !== true && step.task == null) {
    return new StepError('unsupported_op', `max_timeout_ms needs progress: true (or a task): ${JSON.stringify(step)}`);
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Events: what the client surfaced to its caller, for the `events` op

/** A queue of events; `take` hands over everything since the last take. */
export class Events {
  constructor() {
    /** @type {object[]} */
    this.items = [];
    /** @type {Array<() => void>} */
    this.waiters = [];
  }

  /** @param {object} event */
  add(event) {
    this.items.push(event);
    for (const wake of this.waiters.splice(0)) wake();
  }

  /**
   * Waits (at most `timeoutMs`) until `atLeast` events arrived, then takes them all.
   * @param {number} atLeast
   * @param {number} timeoutMs
   * @returns {Promise<object[]>}
   */
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

// ---------------------------------------------------------------------------------------------
// The contract's shapes

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Decodes base64 as RFC 4648 says (standard alphabet, canonical padding, no whitespace) with
 * `strict`, or as the WHATWG forgiving-base64 of atob() (what many JS libraries validate with).
 * @param {string} data
 * @param {string} where names the data in the error
 * @param {'strict'|'forgiving'} [mode]
 * @returns {Buffer}
 */
export function decodeBase64(data, where, mode = 'strict') {
  if (typeof data !== 'string') throw new StepError('invalid_response', `${where} is not a string`);
  if (mode === 'forgiving') {
    try {
      return Buffer.from(atob(data), 'latin1');
    } catch (error) {
      throw new StepError('invalid_response', `${where} is not valid base64: ${describe(error)}`);
    }
  }
  const bytes = BASE64.test(data) ? Buffer.from(data, 'base64') : undefined;
  if (!bytes || bytes.toString('base64') !== data) {
    throw new StepError('invalid_response', `${where} is not canonical base64 (RFC 4648)`);
  }
  return bytes;
}

/** @param {Buffer} bytes */
const digest = (bytes) => ({ bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') });

/**
 * Resource contents as seen: text kept, a blob reported by its decoded length and SHA-256.
 * @param {any} contents
 * @param {{base64?: 'strict'|'forgiving'}} [options]
 */
export function contentsAsSeen(contents, options = {}) {
  const seen = { uri: contents?.uri };
  if (contents?.mimeType !== undefined) seen.mimeType = contents.mimeType;
  if (typeof contents?.text === 'string') {
    seen.text = contents.text;
  } else if (typeof contents?.blob === 'string') {
    Object.assign(seen, digest(decodeBase64(contents.blob, `the blob of ${contents.uri}`, options.base64)));
  } else {
    throw new StepError('invalid_response', `resource contents of ${contents?.uri} have neither text nor blob`);
  }
  return seen;
}

/**
 * A content block as seen (CLIENTS.md, "Content as seen"); `annotations` kept, `_meta` dropped.
 * @param {any} block
 * @param {{base64?: 'strict'|'forgiving'}} [options]
 */
export function contentAsSeen(block, options = {}) {
  let seen;
  switch (block?.type) {
    case 'resource_link':
      return block;
    case 'text':
      seen = { type: 'text', text: block.text };
      break;
    case 'image':
    case 'audio':
      seen = { type: block.type, mimeType: block.mimeType, ...digest(decodeBase64(block.data, `the ${block.type} block's data`, options.base64)) };
      break;
    case 'resource':
      seen = { type: 'resource', resource: contentsAsSeen(block.resource, options) };
      break;
    default:
      throw new StepError('invalid_response', `a content block of unknown type ${JSON.stringify(block?.type)}`);
  }
  if (block.annotations !== undefined) seen.annotations = block.annotations;
  return seen;
}

/**
 * The text of a result's text blocks, in order.
 * @param {any} result
 * @returns {string[]}
 */
export function textsOf(result) {
  const content = Array.isArray(result?.content) ? result.content : [];
  return content.filter((b) => b && b.type === 'text').map((b) => b.text);
}

/**
 * A tools/call result as the call_tool line reports it: `isError: true` is `tool_error`;
 * otherwise `structured` (structuredContent, when present and not null) or `text`, and
 * `content`, every block as seen.
 * @param {any} result
 * @param {{base64?: 'strict'|'forgiving'}} [options]
 */
export function toolResult(result, options = {}) {
  if (result?.isError === true) {
    const texts = textsOf(result);
    throw new StepError('tool_error', texts.length ? texts.join('\n') : 'the tool result had isError: true');
  }
  const content = (Array.isArray(result?.content) ? result.content : []).map((b) => contentAsSeen(b, options));
  if (result?.structuredContent !== undefined && result.structuredContent !== null) {
    return { structured: result.structuredContent, content };
  }
  return { text: textsOf(result), content };
}

/** The member that identifies an entry of each listing, and the kind of a duplicate. */
const LISTINGS = {
  tools: ['name', 'duplicate_tool_name'],
  resources: ['uri', 'duplicate_name'],
  resourceTemplates: ['uriTemplate', 'duplicate_name'],
  prompts: ['name', 'duplicate_name'],
  tasks: ['taskId', 'duplicate_name'],
};

/** The most pages one checked listing follows before it fails (the reference client's cap). */
export const PAGE_CAP = 1000;

/**
 * Every entry of a paginated listing, `{[key]: entries}`. `fetchPage(cursor)` returns one page
 * (cursor undefined for the first). With `check` (the default) the contract's rules hold: a
 * cursor sent before in this listing is `repeated_cursor`, an entry listed twice is
 * `duplicate_tool_name` / `duplicate_name`, and past `maxPages` the listing fails rather than
 * return a shorter list. `check: false` is the bare loop a library's users write (follow
 * `nextCursor` until absent or null, nothing more): for adapters whose library has no guard.
 * @param {(cursor: string|undefined) => Promise<any>} fetchPage
 * @param {'tools'|'resources'|'resourceTemplates'|'prompts'|'tasks'} key
 * @param {{check?: boolean, maxPages?: number}} [options]
 */
export async function paginate(fetchPage, key, { check = true, maxPages = PAGE_CAP } = {}) {
  if (!Object.hasOwn(LISTINGS, key)) throw new TypeError(`paginate: unknown listing ${JSON.stringify(key)}; expected one of ${Object.keys(LISTINGS).join(', ')}`);
  const [idMember, duplicateKind] = LISTINGS[key];
  const entries = [];
  const cursors = new Set();
  const ids = new Set();
  let cursor;
  for (let pages = 1; ; pages += 1) {
    const page = await fetchPage(cursor);
    const items = page?.[key];
    if (!Array.isArray(items)) throw new StepError('invalid_response', `a page has no "${key}" array`);
    for (const item of items) {
      if (check) {
        const id = item?.[idMember];
        if (typeof id !== 'string') throw new StepError('invalid_response', `an entry of "${key}" has no string "${idMember}"`);
        if (ids.has(id)) throw new StepError(duplicateKind, `the server listed the ${idMember} ${JSON.stringify(id)} twice`);
        ids.add(id);
      }
      entries.push(item);
    }
    const next = page.nextCursor;
    if (next === undefined || next === null) return { [key]: entries };
    if (check) {
      if (typeof next !== 'string') throw new StepError('invalid_response', `nextCursor is not a string: ${JSON.stringify(next)}`);
      if (cursors.has(next)) throw new StepError('repeated_cursor', `the server repeated the cursor ${JSON.stringify(next)}`);
      if (pages >= maxPages) throw new StepError('invalid_response', `still a next cursor after ${pages} pages (page cap ${maxPages}): the pages do not end`);
      cursors.add(next);
    }
    cursor = next;
  }
}

// ---------------------------------------------------------------------------------------------
// The plan

/**
 * What an op is given besides its step.
 * @typedef {object} Context
 * @property {Env} env
 * @property {string|null} op the step's op
 * @property {number} index the step's index in the plan
 * @property {AbortSignal} [signal] call_tool with cancel_after_ms: aborted after that many ms
 * @property {boolean} cancelled whether `signal` fired
 */

/**
 * An adapter: one function per op it supports (`connect` at least), and hooks.
 * @typedef {object} Adapter
 * @property {string} [name] the log prefix
 * @property {Record<string, (step: any, context: Context) => Promise<object|void>|object|void>} ops
 *   by op name; each returns the `ok` object (void is `{}`) or throws (a StepError, or whatever
 *   the library threw, mapped by `classify` then `mapError`)
 * @property {(error: unknown, context: Context) => StepError|undefined} [classify] the
 *   library's own error mapping; undefined leaves the error to `mapError`
 * @property {string[]} [features] what of `FEATURES` the library has (roots, sampling,
 *   elicitation, oauth, tasks): a step that needs another is answered `unsupported_op`, so its trial
 *   grades unimplemented rather than fail (none declared leaves all such trials unimplemented,
 *   which fails a run as a failure does)
 * @property {(env: Env, step: any) => string[]} [limits] the `limits` of each connect line
 * @property {Events} [events] the kit answers `events` steps from this queue
 * @property {() => Promise<void>|void} [finish] runs after the implicit close, before exit
 * @property {(env: Env) => Promise<(() => Promise<void>|void)|void>} [setupTraces] with the
 *   `traces` feature, on a traces trial: installs the library's tracing (OTLP/HTTP to the
 *   standard OTEL_* variables) before the first step; returns what flushes and shuts it down,
 *   which the kit awaits after the last step (and `finish`). When it throws, every connect
 *   fails `handshake_failed` with its message: a declared feature that does not work fails
 * @property {boolean} [warmUpFetch] load Node's fetch before the first step over HTTP (default
 *   true: its lazy load would otherwise be charged to the first request's timeout)
 */

/**
 * The features an adapter declares its library has, and the server request each answers
 * (`oauth` answers none: it is an authorization trial's connect; nor does `tasks`: it is the
 * task steps of CLIENTS.md § Tasks; nor `many_servers`: a step naming another `server`, and
 * `exposed_tools`). Sampling with tools (an answer with tool_use content, or a rejection:
 * usesSamplingTools) and URL consent (a url elicitation answer saying `browser`: playsBrowser)
 * are values of the answers. Nor does `client_credentials`: a machine-to-machine trial's
 * connect; nor `dpop`: such a connect whose credentials say `"dpop": true`; nor `traces`: every
 * connect of a traces trial (MCP_HARNESS_TRACES=1).
 */
export const FEATURES = Object.freeze({
  roots: 'roots/list',
  sampling: 'sampling/createMessage',
  elicitation: 'elicitation/create',
  oauth: null,
  tasks: null,
  task_receiver: null,
  sampling_tools: null,
  url_consent: null,
  many_servers: null,
  trace_context: null,
  icons: null,
  client_credentials: null,
  dpop: null,
  traces: null,
});

/** The server a step without `server` is about (CLIENTS.md, "Many servers"). */
export const MAIN_SERVER = 'main';

/** The ops about a task that exists already (CLIENTS.md § Tasks): each needs `tasks`. */
export const TASK_OPS = Object.freeze(['get_task', 'cancel_task', 'task_result', 'list_tasks']);

/**
 * Whether a step is a task step: a task op, or a call_tool with `task` or `background: true`.
 * @param {any} step
 * @returns {boolean}
 */
export function needsTasks(step) {
  return TASK_OPS.includes(step.op) || (step.op === 'call_tool' && (step.task != null || step.background === true));
}

/**
 * Whether the sampling answer is a model using tools (`tool_use` content) or a rejection.
 * @param {Record<string, any>} answers
 * @returns {boolean}
 */
export function usesSamplingTools(answers) {
  const answer = answers['sampling/createMessage'];
  if (answer === null || typeof answer !== 'object') return false;
  const blocks = Array.isArray(answer.content) ? answer.content : [answer.content];
  return answer.rejected === true || blocks.some((b) => b !== null && typeof b === 'object' && b.type === 'tool_use');
}

/**
 * Whether the elicitation's `url` answer says `browser: true` (the caller is the browser).
 * @param {Record<string, any>} answers
 * @returns {boolean}
 */
export function playsBrowser(answers) {
  const url = answers['elicitation/create']?.url;
  return url !== null && typeof url === 'object' && url.browser === true;
}

/**
 * The features a step needs that `declared` leaves out: a connect's `handlers` or a
 * call_tool's `input` answering a server request, a connect on an authorization trial, or a
 * task step.
 * @param {any} step
 * @param {Env} env
 * @param {string[]} declared
 * @returns {string[]}
 */
export function undeclared(step, env, declared = []) {
  const answers = (step.op === 'connect' ? step.handlers : step.op === 'call_tool' ? step.input : null) ?? {};
  const needed = Object.entries(FEATURES)
    .filter(([, method]) => method !== null && Object.hasOwn(answers, method))
    .map(([name]) => name);
  if (step.op === 'connect' && env.clientCredentials) needed.push('client_credentials');
  else if (step.op === 'connect' && env.auth) needed.push('oauth');
  if (step.op === 'connect' && env.clientCredentials?.dpop === true) needed.push('dpop');
  if (needsTasks(step)) needed.push('tasks');
  if (step.op === 'connect' && Array.isArray(step.tasks) && step.tasks.length > 0) needed.push('task_receiver');
  if (usesSamplingTools(answers)) needed.push('sampling_tools');
  if (playsBrowser(answers)) needed.push('url_consent');
  if (step.op === 'exposed_tools' || (step.server ?? MAIN_SERVER) !== MAIN_SERVER) needed.push('many_servers');
  if (step.op === 'connect' && step.trace_context != null) needed.push('trace_context');
  if (step.op === 'fetch_icons') needed.push('icons');
  if (step.op === 'connect' && env.traces) needed.push('traces');
  return needed.filter((name) => !declared.includes(name));
}

/**
 * Runs the plan and exits the process: 0 once the plan is carried out, 1 if the kit itself
 * failed, 2 on a bad environment (naming the variable).
 * @param {Adapter} adapter
 * @param {{vars?: Record<string, string|undefined>, argv?: string[], exit?: (code: number) => void}} [options]
 *   for tests: the environment, the arguments and the exit function
 */
export async function run(adapter, options = {}) {
  logPrefix = adapter.name ?? 'adapter';
  guardStdout();
  const exit = options.exit ?? ((code) => process.exit(code));
  const done = (code) => {
    log(`plan done ${Math.round(performance.now())} ms after launch; exiting with ${code}`);
    realStdoutWrite('', () => exit(code));
  };
  let env;
  try {
    env = readEnv(options.vars, options.argv);
  } catch (error) {
    if (!(error instanceof EnvError)) throw error;
    log(error.message);
    done(2);
    return;
  }
  const unknown = (adapter.features ?? []).find((f) => !Object.hasOwn(FEATURES, f));
  if (unknown !== undefined) {
    log(`unknown feature ${JSON.stringify(unknown)} in features; expected some of ${Object.keys(FEATURES).join(', ')}`);
    done(2);
    return;
  }
  secret(env.token);
  log(`transport ${env.transport}, ${env.plan.length} steps, loaded ${Math.round(performance.now())} ms after launch`);
  process.on('unhandledRejection', (reason) => log('unhandled rejection:', describe(reason)));
  try {
    if (env.transport === 'http' && adapter.warmUpFetch !== false) await warmUpFetch();
    await runPlan(adapter, env);
  } catch (error) {
    log('the adapter crashed:', /** @type {any} */ (error)?.stack ?? String(error));
    done(1);
    return;
  }
  done(0);
}

/** Loads Node's fetch (undici) with a data: URL: nothing shows on the wire. */
async function warmUpFetch() {
  try {
    await (await fetch('data:,')).arrayBuffer();
  } catch (error) {
    log('fetch warm-up failed (ignored):', describe(error));
  }
}

/** Throws `unsupported_op` when the step needs a feature the adapter does not declare. */
function refuseUndeclared(step, env, declared) {
  const lacking = undeclared(step, env, declared);
  if (lacking.length > 0) {
    throw new StepError('unsupported_op', `this adapter does not declare the feature ${lacking.join(', ')} (the kit's features)`);
  }
}

/** A failure as an outcome's `error` object: the adapter's mapping, else the kit's. */
function errorOf(adapter, error, context) {
  const mapped =
    error instanceof StepError ? error : (adapter.classify?.(error, context) ?? mapError(error, context));
  const out = { kind: mapped.kind, message: mapped.message };
  if (mapped.code !== undefined) out.code = mapped.code;
  if (mapped.status !== undefined) out.status = mapped.status;
  return out;
}

/**
 * The `together` step: starts its steps at once and reports each one's outcome, in the order
 * given, once all have ended: `{steps: [{ok} | {error}, …]}`.
 * @param {Adapter} adapter
 * @param {Env} env
 * @param {any} step
 * @param {number} index
 */
async function together(adapter, env, step, index) {
  const one = async (inner) => {
    const op = isObject(inner) && typeof inner.op === 'string' ? inner.op : null;
    /** @type {Context} */
    const context = { env, op, index, cancelled: false };
    try {
      const invalid = checkStep(inner);
      if (invalid) throw invalid;
      if (NOT_TOGETHER.has(op) || typeof adapter.ops[op] !== 'function') {
        throw new StepError('unsupported_op', `this adapter does not do ${op} inside together`);
      }
      refuseUndeclared(inner, env, adapter.features);
      return { ok: (await adapter.ops[op](inner, context)) ?? {} };
    } catch (error) {
      return { error: errorOf(adapter, error, context) };
    }
  };
  return { steps: await Promise.all(step.steps.map(one)) };
}

/**
 * @param {Adapter} adapter
 * @param {Env} env
 */
async function runPlan(adapter, env) {
  let shutdown;
  let untraced;
  if (env.traces && (adapter.features ?? []).includes('traces')) {
    try {
      shutdown = await adapter.setupTraces?.(env);
    } catch (error) {
      untraced = new StepError('handshake_failed', `setting up traces failed: ${describe(error)}`);
      log(untraced.message);
    }
  }
  try {
    await runSteps(adapter, env, untraced);
  } finally {
    try {
      await shutdown?.();
    } catch (error) {
      log('shutting traces down failed:', describe(error));
    }
  }
}

/**
 * @param {Adapter} adapter
 * @param {Env} env
 * @param {StepError} [untraced] why every connect fails: the declared tracing could not be set up
 */
async function runSteps(adapter, env, untraced) {
  const { ops } = adapter;
  // The servers connected, by name (`server`, default main); the adapter's ops get each step
  // with its `server` and keep one connection per server themselves.
  const connected = new Set();
  const closeQuietly = async (why, server = MAIN_SERVER) => {
    connected.delete(server);
    const step = server === MAIN_SERVER ? { op: 'close' } : { op: 'close', server };
    try {
      await ops.close?.(step, { env, op: 'close', index: -1, cancelled: false });
    } catch (error) {
      log(`${why} failed:`, describe(error));
    }
  };

  for (let index = 0; index < env.plan.length; index += 1) {
    const step = env.plan[index];
    const op = step !== null && typeof step === 'object' && typeof step.op === 'string' ? step.op : null;
    const line = { step: index, op };
    const started = performance.now();
    /** @type {Context} */
    const context = { env, op, index, cancelled: false };
    let timer;
    try {
      const invalid = checkStep(step);
      if (invalid) throw invalid;
      if (step.server !== undefined && typeof step.server !== 'string') {
        throw new StepError('unsupported_op', `the ${op} step's "server" must be a server's name: ${JSON.stringify(step)}`);
      }
      const server = step.server ?? MAIN_SERVER;
      if (op === 'sleep') {
        await new Promise((resolve) => setTimeout(resolve, step.ms));
        line.ok = {};
      } else if (op === 'events' && adapter.events) {
        line.ok = { events: await adapter.events.take(step.min ?? 0, env.timeoutMs) };
      } else if (op !== 'close' && op !== 'together' && typeof ops[op] !== 'function') {
        throw new StepError('unsupported_op', `this adapter does not implement ${op}`);
      } else if (op === 'connect') {
        if (connected.has(server)) await closeQuietly('closing the previous connection', server);
        refuseUndeclared(step, env, adapter.features);
        if (untraced) throw untraced;
        line.ok = (await ops.connect(step, context)) ?? {};
        connected.add(server);
      } else if (op === 'exposed_tools') {
        refuseUndeclared(step, env, adapter.features);
        if (connected.size === 0) throw new StepError('transport_closed', 'there is no connection to any server');
        line.ok = (await ops.exposed_tools(step, context)) ?? {};
      } else if (!connected.has(server)) {
        throw new StepError('transport_closed', 'there is no connection (not connected yet, the connect failed, or it was closed)');
      } else if (op === 'close') {
        connected.delete(server);
        line.ok = (await ops.close?.(step, context)) ?? {};
      } else if (op === 'together') {
        line.ok = await together(adapter, env, step, index);
      } else {
        refuseUndeclared(step, env, adapter.features);
        if (op === 'call_tool' && step.cancel_after_ms != null) {
          const controller = new AbortController();
          context.signal = controller.signal;
          timer = setTimeout(() => {
            context.cancelled = true;
            controller.abort();
          }, step.cancel_after_ms);
        }
        line.ok = (await ops[op](step, context)) ?? {};
      }
    } catch (error) {
      line.error = errorOf(adapter, error, context);
      log(`step ${index} (${op}): ${line.error.kind}: ${line.error.message}`);
    } finally {
      clearTimeout(timer);
    }
    if (op === 'connect') {
      const limits = [...(adapter.limits?.(env, step) ?? [])];
      // A library without tasks cannot call a `required` tool as one (the `tasks` need).
      if (!(adapter.features ?? []).includes('tasks') && !limits.includes('tasks')) limits.push('tasks');
      if (limits.length > 0) line.limits = limits;
    }
    log(`step ${index} (${op}) took ${Math.round(performance.now() - started)} ms`);
    emit(line);
  }
  // The implicit close prints no line.
  for (const server of [...connected].sort()) await closeQuietly('the implicit close', server);
  await adapter.finish?.();
}

import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import type { AuthTries, CallSignal, UpstreamAuth } from '../contracts/upstream.js';
import { activeTracing, currentContext, injectInto } from '../ops/tracing.js';

/**
 * The upstream HTTP client: node:http(s) with keep-alive agents, and nothing
 * on top. The modern link reads node responses directly through it; the
 * fetch-shaped links go through node-http-fetch.ts, which builds on it. Every
 * object per call costs on the relay path (issue 7): no Response, no Headers,
 * no WHATWG stream and no AbortSignal listener unless the caller passes a signal.
 */

/**
 * A free keep-alive socket is closed 3–4 s after its last use (a sweep each
 * second), under the 5 s a node:http server keeps one (undici uses 4 s).
 */
const IDLE_MS = 3_000;
const SWEEP_MS = 1_000;
/** Redirects followed at most, as fetch does. */
const MAX_REDIRECTS = 20;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** When a socket last went back to the pool (performance.now()). */
const FREED_AT = Symbol('mcp-bridge.freedAt');
type PooledSocket = Socket & { [FREED_AT]?: number };

/**
 * Keep-alive agents whose idle sockets a sweep closes. Timing a socket per
 * exchange (`socket.setTimeout` on reuse and again when freed) costs a timer
 * object, a bound function and a listener per call (issue 17); the sweep costs
 * one number per call and one timer per agent, and a live exchange (a quiet
 * listen stream) has no idle limit at all.
 */
export function sweptAgent(mod: typeof https): https.Agent;
export function sweptAgent(mod: typeof http): http.Agent;
export function sweptAgent(mod: typeof http | typeof https): http.Agent {
  const agent = new mod.Agent({ keepAlive: true, scheduling: 'lifo' });
  agent.on('free', (socket: PooledSocket) => void (socket[FREED_AT] = performance.now()));
  const sweep = setInterval(() => closeIdle(agent), SWEEP_MS).unref();
  const destroy = agent.destroy.bind(agent);
  agent.destroy = () => {
    clearInterval(sweep);
    destroy();
  };
  return agent;
}

/** Destroys the free sockets idle past IDLE_MS (the agent drops a socket from its pool when it closes). */
function closeIdle(agent: http.Agent): void {
  const before = performance.now() - IDLE_MS;
  for (const sockets of Object.values(agent.freeSockets)) {
    for (const socket of [...(sockets ?? [])] as PooledSocket[]) if ((socket[FREED_AT] ?? 0) < before) socket.destroy();
  }
}

const agents = { 'http:': sweptAgent(http), 'https:': sweptAgent(https) };

/** One request. Header names are lower case; `content-length` is added here (to a copy). */
export interface UpstreamRequest {
  method: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  /** Aborting destroys the exchange: before the response the promise rejects with the reason, after it the body errors. */
  signal?: CallSignal;
  /** The bridge's OAuth toward this upstream: the header is added here, and a 401/403 challenge runs the flow and sends again. */
  auth?: UpstreamAuth;
}

/** Where requests go: a URL parsed once into node's request options. */
export class UpstreamTarget {
  readonly url: URL;
  readonly secure: boolean;
  private readonly base: http.RequestOptions;
  /** What node would put in `Host` (the URL's host: brackets kept, a default port left out). */
  private readonly host: string;
  /** `Authorization` for credentials in the URL, as node would build it. */
  private readonly basic: string | undefined;

  constructor(url: string | URL) {
    this.url = typeof url === 'string' ? new URL(url) : url;
    if (this.url.protocol !== 'http:' && this.url.protocol !== 'https:') throw new TypeError(`not an http(s) URL: ${this.url.protocol}`);
    this.secure = this.url.protocol === 'https:';
    const auth = this.url.username || this.url.password ? `${decodeURIComponent(this.url.username)}:${decodeURIComponent(this.url.password)}` : undefined;
    this.base = {
      protocol: this.url.protocol,
      hostname: this.url.hostname.startsWith('[') ? this.url.hostname.slice(1, -1) : this.url.hostname,
      port: this.url.port === '' ? undefined : Number(this.url.port),
      path: `${this.url.pathname}${this.url.search}`,
      agent: agents[this.url.protocol as 'http:' | 'https:'],
    };
    this.host = this.url.host;
    this.basic = auth === undefined ? undefined : `Basic ${Buffer.from(auth).toString('base64')}`;
  }

  /**
   * Node's options for one request, its headers as a flat `[name, value, …]`
   * list: node stores such a list as given (every name and value still
   * checked), where an object costs a `setHeader` per header and lookups for
   * Host and Authorization (issue 17). So Host and the URL's credentials are
   * added here, as node adds them to an object (`names` are lower case).
   */
  options(method: string, headers: Readonly<Record<string, string>>, contentLength?: number): http.RequestOptions {
    const list: string[] = [];
    for (const name in headers) if (contentLength === undefined || name !== 'content-length') list.push(name, headers[name]);
    if (headers.host === undefined) list.push('host', this.host);
    if (this.basic !== undefined && headers.authorization === undefined) list.push('authorization', this.basic);
    if (contentLength !== undefined) list.push('content-length', String(contentLength));
    // Not `{ ...this.base, method, headers: list }`: on this V8 (Node 20) a spread copy that then gets
    // more properties makes what it points to outlive the next young-generation GC, so every call's
    // request state was promoted to the old space and collected there (issue 17: scavenges 0.4 -> 2.5 ms).
    return Object.assign({}, this.base, { method, headers: list });
  }
}

/** Rejects the way fetch does, so callers (safe-retry.ts) read the socket error from `cause`. */
function networkError(err: Error): TypeError {
  return new TypeError('fetch failed', { cause: err });
}

function abortReason(signal: { readonly reason: unknown }): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

/** One exchange without redirects; resolves with the node response, its body unread. */
export function exchangeOnce(target: UpstreamTarget, r: UpstreamRequest): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const signal = r.signal;
    if (signal?.aborted) return reject(abortReason(signal));
    // With tracing on, an exchange sent inside the observed link's call carries that upstream span's W3C trace context.
    const trace = activeTracing() ? currentContext() : undefined;
    const headers = trace ? { ...r.headers } : r.headers;
    if (trace) injectInto(headers, trace);
    const length = r.body === undefined ? undefined : typeof r.body === 'string' ? Buffer.byteLength(r.body) : r.body.length;
    const mod = target.secure ? https : http;
    const req = mod.request(target.options(r.method, headers, length));
    let onAbort: (() => void) | undefined;
    if (signal) {
      onAbort = () => req.destroy(abortReason(signal) as Error);
      signal.addEventListener('abort', onAbort, { once: true });
      req.once('close', () => signal.removeEventListener('abort', onAbort!));
    }
    req.once('response', resolve);
    req.on('error', (err) => reject(signal?.aborted ? abortReason(signal) : networkError(err)));
    req.end(r.body);
  });
}

/** The next hop of a redirect, as the fetch standard rewrites it (§4.4 HTTP-redirect fetch, steps 12–13). */
export function redirected(status: number, r: UpstreamRequest): UpstreamRequest {
  if (status === 303 ? r.method !== 'HEAD' : (status === 301 || status === 302) && r.method === 'POST') {
    const headers = { ...r.headers };
    for (const name of ['content-type', 'content-encoding', 'content-language', 'content-length', 'content-location']) delete headers[name];
    return { ...r, method: 'GET', headers, body: undefined };
  }
  return { ...r, headers: { ...r.headers } };
}

function isRedirect(res: http.IncomingMessage): boolean {
  return REDIRECTS.has(res.statusCode ?? 0) && res.headers.location !== undefined;
}

/** One exchange, redirects followed as fetch follows them; the final response's body is unread. */
export function exchange(target: UpstreamTarget, r: UpstreamRequest): Promise<http.IncomingMessage> {
  const auth = r.auth;
  if (!auth) return exchangeFollowing(target, r);
  // The usual case, a token in hand (or none needed): sent at once, so no async frame is added and the
  // tracing context of the call is still current; only a challenge goes through the flow.
  const now = auth.headerNow();
  if (now === null) return authorized(target, r, auth);
  return exchangeFollowing(target, withAuthorization(r, now)).then((res) => (isChallenge(res) ? authorized(target, r, auth, { sent: now, res }) : res));
}

/** No async frame for the usual case, an answer without a redirect (issue 7: every promise counts on the relay path). */
function exchangeFollowing(target: UpstreamTarget, r: UpstreamRequest): Promise<http.IncomingMessage> {
  return exchangeOnce(target, r).then((res) => (isRedirect(res) ? followRedirects(target, r, res) : res));
}

async function followRedirects(target: UpstreamTarget, r: UpstreamRequest, res: http.IncomingMessage): Promise<http.IncomingMessage> {
  for (let hop = 1; isRedirect(res); hop++) {
    res.resume();
    if (hop > MAX_REDIRECTS) throw networkError(new Error('redirect count exceeded'));
    target = new UpstreamTarget(new URL(res.headers.location!, target.url));
    r = redirected(res.statusCode ?? 0, r);
    res = await exchangeOnce(target, r);
  }
  return res;
}

/** Bodies are strings or buffers, so a request refused for its credentials can be sent again as it was. */
function withAuthorization(r: UpstreamRequest, sent: string | undefined): UpstreamRequest {
  return { ...r, headers: sent === undefined ? r.headers : { ...r.headers, authorization: sent }, auth: undefined };
}

/** A 401, or a 403 asking for more scope (step-up): an OAuth challenge to answer. */
function isChallenge(res: http.IncomingMessage): boolean {
  const status = res.statusCode ?? 0;
  return status === 401 || (status === 403 && res.headers['www-authenticate']?.includes('insufficient_scope') === true);
}

/** Sends `r` with the bridge's credentials, answering OAuth challenges (`first`: one already received). */
async function authorized(target: UpstreamTarget, r: UpstreamRequest, auth: UpstreamAuth, first?: { sent: string | undefined; res: http.IncomingMessage }): Promise<http.IncomingMessage> {
  const tries: AuthTries = { unauthorized: 0, stepUps: 0 };
  let answered = first;
  for (;;) {
    if (!answered) {
      const sent = await auth.header();
      answered = { sent, res: await exchangeFollowing(target, withAuthorization(r, sent)) };
    }
    const { sent, res } = answered;
    answered = undefined;
    if (!isChallenge(res)) return res;
    const status = res.statusCode ?? 0;
    // The refusal's body is not needed, and a flow may wait minutes for a browser: free the socket now.
    res.resume();
    if (!(await auth.challenged({ status, wwwAuthenticate: res.headers['www-authenticate'] }, sent, tries))) throw new TypeError('fetch failed', { cause: new Error(`upstream answered HTTP ${status}`) });
  }
}

/** The whole body, with plain listeners (an async iterator costs a promise per chunk). Rejects like a fetch body does. */
export function readWhole(res: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    res.once('end', () => resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
    res.once('error', (err) => reject(new TypeError('terminated', { cause: err })));
    res.once('aborted', () => reject(new TypeError('terminated', { cause: new Error('the upstream closed the connection mid-body') })));
  });
}

import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import { Readable } from 'node:stream';

/**
 * Why not the global fetch: on the relay path Node 20's fetch (undici's spec
 * machinery and WHATWG streams) cost about 400 µs of CPU per call on the bench
 * machine and about 50 KiB per held SSE response (issue 7, bench/README.md);
 * node:http with a keep-alive agent does the same exchange for a fraction.
 */

/** A free keep-alive socket is closed after this long, under the 5 s a node:http server keeps one (undici uses 4 s too). */
const FREE_SOCKET_MS = 4_000;
/** Redirects followed at most, as fetch does. */
const MAX_REDIRECTS = 20;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const NULL_BODY = new Set([204, 205, 304]);

/** One shared listener, so reuse can remove it again (setTimeout adds a listener per call). */
function closeIdle(this: Socket): void {
  this.destroy();
}

function agentFor(mod: typeof http | typeof https): http.Agent {
  const agent = new mod.Agent({ keepAlive: true, scheduling: 'lifo' });
  agent.on('free', (socket: Socket) => socket.setTimeout(FREE_SOCKET_MS, closeIdle));
  return agent;
}

const agents = { 'http:': agentFor(http), 'https:': agentFor(https) };

interface Plain {
  method: string;
  headers: Record<string, string>;
  body: string | Buffer | undefined;
  signal: AbortSignal | undefined;
}

/** The init shapes this client handles itself; anything else goes to the global fetch unchanged. */
function plain(input: unknown, init: RequestInit | undefined): { url: URL; req: Plain } | undefined {
  if (typeof input !== 'string' && !(input instanceof URL)) return undefined;
  const url = new URL(String(input));
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  if (init?.redirect !== undefined && init.redirect !== 'follow') return undefined;
  const b = init?.body;
  if (b !== undefined && b !== null && typeof b !== 'string' && !(b instanceof Uint8Array)) return undefined;
  const headers: Record<string, string> = {};
  const h = init?.headers;
  const entries = h === undefined ? [] : h instanceof Headers || Array.isArray(h) ? h : Object.entries(h);
  for (const [k, v] of entries as Iterable<[string, string]>) headers[k.toLowerCase()] = v;
  const body = b === undefined || b === null ? undefined : typeof b === 'string' ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  return { url, req: { method: (init?.method ?? 'GET').toUpperCase(), headers, body, signal: init?.signal ?? undefined } };
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

/** Whole bodies for JSON (what the links read with `text()`); event streams and unknown types stream. */
function buffered(res: http.IncomingMessage): boolean {
  const type = (res.headers['content-type'] ?? '').toLowerCase();
  if (type.startsWith('text/event-stream')) return false;
  return type.includes('json') || res.headers['content-length'] !== undefined;
}

function headersOf(res: http.IncomingMessage): Headers {
  const out = new Headers();
  for (const [k, v] of Object.entries(res.headers)) {
    if (v === undefined) continue;
    if (Array.isArray(v)) for (const item of v) out.append(k, item);
    else out.set(k, v);
  }
  return out;
}

/** One exchange; resolves with the node response (not yet read) or rejects like fetch does. */
function exchange(url: URL, r: Plain): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    if (r.signal?.aborted) return reject(abortReason(r.signal));
    const mod = url.protocol === 'https:' ? https : http;
    const headers = { ...r.headers };
    if (r.body !== undefined) headers['content-length'] = String(Buffer.byteLength(r.body));
    const req = mod.request(url, { method: r.method, headers, agent: agents[url.protocol as 'http:' | 'https:'], signal: r.signal }, resolve);
    // A reused socket carries the free-socket timer; a live exchange has no idle limit (listen streams stay quiet for long).
    req.on('socket', (socket) => socket.setTimeout(0, closeIdle));
    req.on('error', (err) => reject(r.signal?.aborted ? abortReason(r.signal) : new TypeError('fetch failed', { cause: err })));
    req.end(r.body);
  });
}

/** The next hop of a redirect, as the fetch standard rewrites it (§4.4 HTTP-redirect fetch, steps 12–13). */
function redirected(status: number, r: Plain): Plain {
  if (status === 303 ? r.method !== 'HEAD' : (status === 301 || status === 302) && r.method === 'POST') {
    const headers = { ...r.headers };
    for (const name of ['content-type', 'content-encoding', 'content-language', 'content-location']) delete headers[name];
    return { ...r, method: 'GET', headers, body: undefined };
  }
  return r;
}

/**
 * A `fetch` for the upstream links over node:http(s) with keep-alive agents.
 * Same contract as the global fetch for what the links send (string or
 * bytes, plain or `Headers` headers, a signal, redirects followed); any other
 * input is handed to the global fetch unchanged.
 */
export const nodeHttpFetch: typeof fetch = async (input, init) => {
  const p = plain(input, init);
  if (!p) return globalThis.fetch(input, init);
  let { url, req } = p;
  for (let hop = 0; ; hop++) {
    const res = await exchange(url, req);
    const status = res.statusCode ?? 0;
    const location = res.headers.location;
    if (REDIRECTS.has(status) && location !== undefined) {
      res.resume();
      if (hop >= MAX_REDIRECTS) throw new TypeError('fetch failed', { cause: new Error('redirect count exceeded') });
      url = new URL(location, url);
      req = redirected(status, req);
      continue;
    }
    const responseInit = { status, statusText: res.statusMessage ?? '', headers: headersOf(res) };
    if (NULL_BODY.has(status) || req.method === 'HEAD') {
      res.resume();
      return new Response(null, responseInit);
    }
    if (!buffered(res)) return new Response(Readable.toWeb(res) as ReadableStream<Uint8Array>, responseInit);
    return new BufferedResponse(await readWhole(res), responseInit);
  }
};

/** The whole body, with plain listeners (an async iterator costs a promise per chunk). */
function readWhole(res: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    res.once('end', () => resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
    res.once('error', (err) => reject(new TypeError('terminated', { cause: err })));
    res.once('aborted', () => reject(new TypeError('terminated', { cause: new Error('the upstream closed the connection mid-body') })));
  });
}

/**
 * A Response over bytes already read: `text()`, `json()` and `arrayBuffer()`
 * answer from them, where a Response built on a Buffer would pipe it through a
 * WHATWG stream first (~30 µs per call on the relay path, issue 7). Touching
 * `body` (or anything else that needs the stream) hands over to a real
 * Response on the same bytes, so the fetch contract holds.
 */
class BufferedResponse extends Response {
  #bytes: Buffer;
  #init: ResponseInit;
  #used = false;
  #inner: Response | undefined;

  constructor(bytes: Buffer, init: ResponseInit) {
    super(null, init);
    this.#bytes = bytes;
    this.#init = init;
  }

  #real(): Response {
    this.#inner ??= new Response(this.#used ? null : (this.#bytes as Uint8Array<ArrayBuffer>), this.#init);
    return this.#inner;
  }

  #take(): Buffer {
    if (this.#used || this.#inner?.bodyUsed) throw new TypeError('Body is unusable: Body has already been read');
    this.#used = true;
    return this.#bytes;
  }

  override get body(): Response['body'] {
    return this.#real().body;
  }

  override get bodyUsed(): boolean {
    return this.#used || (this.#inner?.bodyUsed ?? false);
  }

  override async text(): Promise<string> {
    if (this.#inner) return this.#inner.text();
    return this.#take().toString('utf8');
  }

  override async json(): Promise<any> {
    return JSON.parse(await this.text());
  }

  override async arrayBuffer(): Promise<ArrayBuffer> {
    if (this.#inner) return this.#inner.arrayBuffer();
    const b = this.#take();
    return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;
  }

  override blob(): Promise<Blob> {
    return this.#real().blob();
  }

  override formData(): Promise<FormData> {
    return this.#real().formData();
  }

  override clone(): Response {
    if (this.bodyUsed) throw new TypeError('Response.clone: Body has already been consumed.');
    return this.#inner ? this.#inner.clone() : new BufferedResponse(this.#bytes, this.#init);
  }
}

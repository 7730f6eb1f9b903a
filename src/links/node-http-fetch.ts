import type http from 'node:http';
import { Readable } from 'node:stream';
import { exchange, readWhole, UpstreamTarget, type UpstreamRequest } from './upstream-http.js';

/**
 * Why not the global fetch: on the relay path Node 20's fetch (undici's spec
 * machinery and WHATWG streams) cost about 400 µs of CPU per call on the bench
 * machine and about 50 KiB per held SSE response (issue 7, bench/README.md);
 * node:http with a keep-alive agent (upstream-http.ts) does the same exchange
 * for a fraction. This file gives it the fetch contract, for the links that
 * speak fetch; the modern link reads node responses directly.
 */

const NULL_BODY = new Set([204, 205, 304]);

/** The init shapes this client handles itself; anything else goes to the global fetch unchanged. */
function plain(input: unknown, init: RequestInit | undefined): { url: URL; req: UpstreamRequest } | undefined {
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

/**
 * A `fetch` for the upstream links over node:http(s) with keep-alive agents.
 * Same contract as the global fetch for what the links send (string or
 * bytes, plain or `Headers` headers, a signal, redirects followed); any other
 * input is handed to the global fetch unchanged.
 */
export const nodeHttpFetch: typeof fetch = async (input, init) => {
  const p = plain(input, init);
  if (!p) return globalThis.fetch(input, init);
  const res = await exchange(new UpstreamTarget(p.url), p.req);
  const status = res.statusCode ?? 0;
  const responseInit = { status, statusText: res.statusMessage ?? '', headers: headersOf(res) };
  if (NULL_BODY.has(status) || p.req.method === 'HEAD') {
    res.resume();
    return new Response(null, responseInit);
  }
  if (!buffered(res)) return new Response(Readable.toWeb(res) as ReadableStream<Uint8Array>, responseInit);
  return new BufferedResponse(await readWhole(res), responseInit);
};

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

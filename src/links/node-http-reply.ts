import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import type { UpstreamReply } from './upstream-reply.js';

/**
 * The session links' HTTP exchanges over node:http(s) with keep-alive
 * agents, read straight from the IncomingMessage. A call whose SSE answer
 * stays open (a parked MRTR call waits for its client's retry, issue 7 row 4)
 * then holds the socket, the message and the parser, and none of the
 * Response, Headers and WHATWG streams a fetch-shaped client adds per
 * exchange. Failures reject as fetch does (TypeError 'fetch failed', the
 * socket error as cause; an aborted signal's reason), so callers read both alike.
 */

/** A free keep-alive socket is closed after this long, under the 5 s a node:http server keeps one. */
const FREE_SOCKET_MS = 4_000;
/** Redirects followed at most, as fetch does. */
const MAX_REDIRECTS = 20;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

function closeIdle(this: Socket): void {
  this.destroy();
}

function agentFor(mod: typeof http | typeof https): http.Agent {
  const agent = new mod.Agent({ keepAlive: true, scheduling: 'lifo' });
  agent.on('free', (socket: Socket) => socket.setTimeout(FREE_SOCKET_MS, closeIdle));
  return agent;
}

const agents = { 'http:': agentFor(http), 'https:': agentFor(https) };

export interface NodeRequest {
  method: string;
  /** Lower-case names. */
  headers: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
}

function ignore(): void {}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

function exchange(url: URL, r: NodeRequest): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    if (r.signal?.aborted) return reject(abortReason(r.signal));
    const mod = url.protocol === 'https:' ? https : http;
    const headers = r.body === undefined ? r.headers : { ...r.headers, 'content-length': String(Buffer.byteLength(r.body)) };
    const req = mod.request(url, { method: r.method, headers, agent: agents[url.protocol as 'http:' | 'https:'], signal: r.signal }, resolve);
    // A reused socket carries the free-socket timer; a live exchange has no idle limit (parked calls stay quiet for long).
    req.on('socket', (socket) => socket.setTimeout(0, closeIdle));
    req.on('error', (err) => reject(r.signal?.aborted ? abortReason(r.signal) : new TypeError('fetch failed', { cause: err })));
    req.end(r.body);
  });
}

/** The next hop of a redirect, as the fetch standard rewrites it (§4.4 HTTP-redirect fetch, steps 12–13). */
function redirected(status: number, r: NodeRequest): NodeRequest {
  if (status === 303 ? r.method !== 'HEAD' : (status === 301 || status === 302) && r.method === 'POST') {
    const headers = { ...r.headers };
    for (const name of ['content-type', 'content-encoding', 'content-language', 'content-location']) delete headers[name];
    return { ...r, method: 'GET', headers, body: undefined };
  }
  return r;
}

/** One request, redirects followed; resolves once the answer's head is in, its body unread. */
export async function nodeHttpReply(target: string, req: NodeRequest, maxLineBytes?: number): Promise<UpstreamReply> {
  let url = new URL(target);
  let r = req;
  for (let hop = 0; ; hop++) {
    const res = await exchange(url, r);
    const status = res.statusCode ?? 0;
    const location = res.headers.location;
    if (!REDIRECTS.has(status) || location === undefined) return new NodeReply(res, maxLineBytes);
    res.resume();
    if (hop >= MAX_REDIRECTS) throw new TypeError('fetch failed', { cause: new Error('redirect count exceeded') });
    url = new URL(location, url);
    r = redirected(status, r);
  }
}

class NodeReply implements UpstreamReply {
  readonly status: number;
  readonly ok: boolean;
  readonly maxLineBytes: number | undefined;
  #res: http.IncomingMessage;
  #text: Promise<string> | undefined;
  #end: (() => void) | undefined;

  constructor(res: http.IncomingMessage, maxLineBytes: number | undefined) {
    this.#res = res;
    // Destroying a body mid-stream (discard, a line past the bound) may still emit an error: it is not news.
    res.on('error', ignore);
    this.status = res.statusCode ?? 0;
    this.ok = this.status >= 200 && this.status < 300;
    this.maxLineBytes = maxLineBytes;
  }

  header(name: string): string | undefined {
    const v = this.#res.headers[name.toLowerCase()];
    return Array.isArray(v) ? v.join(', ') : v;
  }

  text(): Promise<string> {
    this.#text ??= new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      this.#stream((c) => chunks.push(c)).then(() => resolve(Buffer.concat(chunks).toString('utf8')), reject);
    });
    return this.#text;
  }

  stream(onChunk: (chunk: Uint8Array) => void): Promise<void> {
    return this.#stream(onChunk);
  }

  /** Plain listeners: an async iterator would cost a promise per chunk. */
  #stream(onChunk: (chunk: Buffer) => void): Promise<void> {
    const res = this.#res;
    return new Promise((resolve, reject) => {
      if (res.destroyed || res.readableEnded) return resolve();
      const done = (err?: unknown) => {
        res.off('data', onData);
        res.off('end', onEnd);
        res.off('error', onError);
        res.off('aborted', onAborted);
        this.#end = undefined;
        if (err === undefined) resolve();
        else reject(err);
      };
      const onData = (chunk: Buffer) => {
        try {
          onChunk(chunk);
        } catch (err) {
          // Settled first: destroying emits 'aborted' and 'error', which would report a plain disconnect.
          done(err);
          res.destroy();
        }
      };
      const onEnd = () => done();
      const onError = (err: Error) => done(err.name === 'AbortError' ? err : new TypeError('terminated', { cause: err }));
      const onAborted = () => done(new TypeError('terminated', { cause: new Error('the upstream closed the connection mid-body') }));
      this.#end = onEnd;
      res.on('data', onData);
      res.once('end', onEnd);
      res.once('error', onError);
      res.once('aborted', onAborted);
    });
  }

  async discard(): Promise<void> {
    const res = this.#res;
    if (res.readableEnded) return;
    const end = this.#end;
    // An unread small body (202, an error page) drains so the socket goes back to the pool; a stream is closed.
    if (end) {
      end();
      res.destroy();
    } else if (this.header('content-type')?.toLowerCase().includes('text/event-stream')) {
      res.destroy();
    } else {
      res.resume();
    }
  }
}

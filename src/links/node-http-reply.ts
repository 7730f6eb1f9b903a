import type http from 'node:http';
import { exchange, UpstreamTarget, type UpstreamRequest } from './upstream-http.js';
import type { UpstreamReply } from './upstream-reply.js';

/**
 * The session links' HTTP exchanges over the upstream client
 * (upstream-http.ts), read straight from the IncomingMessage. A call whose SSE answer
 * stays open (a parked MRTR call waits for its client's retry, issue 7 row 4)
 * then holds the socket, the message and the parser, and none of the
 * Response, Headers and WHATWG streams a fetch-shaped client adds per
 * exchange. Failures reject as fetch does (TypeError 'fetch failed', the
 * socket error as cause; an aborted signal's reason), so callers read both alike.
 */

function ignore(): void {}

/**
 * One request, redirects followed (upstream-http.ts); resolves once the answer's head is in, its body unread.
 * A session sends every request to one endpoint: it passes its target, parsed once (issue 17: a URL parse per call).
 */
export async function nodeHttpReply(target: string | UpstreamTarget, req: UpstreamRequest, maxLineBytes?: number): Promise<UpstreamReply> {
  return new NodeReply(await exchange(typeof target === 'string' ? new UpstreamTarget(target) : target, req), maxLineBytes);
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

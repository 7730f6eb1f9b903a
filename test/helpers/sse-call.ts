import http from 'node:http';
import { SseParser, type SseEvent } from '../../src/wire/sse-parser.js';

/**
 * One HTTP exchange whose reply may be an SSE stream, read as it arrives: the
 * events in order, the raw body text (to see `id:` and `retry:` lines as sent),
 * and `drop()`, which cuts the connection mid-stream like a failing network.
 */
export class SseCall {
  status = 0;
  headers: http.IncomingHttpHeaders = {};
  readonly events: SseEvent[] = [];
  text = '';
  /** Resolves when the reply has ended (or the connection was cut). */
  readonly ended: Promise<void>;
  private req!: http.ClientRequest;
  private waiters: Array<() => void> = [];
  private markEnded!: () => void;
  private done = false;

  private constructor() {
    this.ended = new Promise((resolve) => (this.markEnded = resolve));
  }

  /** Sends the request and resolves once the reply's head has arrived. */
  static open(url: string, opts: { method: string; headers: Record<string, string>; body?: string }): Promise<SseCall> {
    const call = new SseCall();
    return new Promise((resolve, reject) => {
      call.req = http.request(url, { method: opts.method, headers: opts.headers }, (res) => {
        call.status = res.statusCode ?? 0;
        call.headers = res.headers;
        const parser = new SseParser((e) => {
          call.events.push(e);
          call.wake();
        });
        res.on('data', (c: Buffer) => {
          call.text += c.toString('utf8');
          parser.push(c);
          call.wake();
        });
        const end = () => {
          call.done = true;
          call.markEnded();
          call.wake();
        };
        res.on('end', end);
        res.on('close', end);
        res.on('error', end);
        resolve(call);
      });
      call.req.on('error', (err) => {
        if (call.status === 0) reject(err);
      });
      call.req.end(opts.body);
    });
  }

  /** The JSON-RPC messages of the events so far (events with data). */
  get messages(): any[] {
    return this.events.filter((e) => e.data !== '').map((e) => JSON.parse(e.data));
  }

  /** Waits until `pred` holds for what arrived, or the reply ended, or `timeoutMs` passed; returns whether it holds. */
  async until(pred: (call: SseCall) => boolean, timeoutMs = 10_000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    for (let guard = 0; guard < 100_000; guard++) {
      if (pred(this)) return true;
      const left = deadline - Date.now();
      if (this.done || left <= 0) return pred(this);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    return pred(this);
  }

  /** Cuts the connection (the client side of a dropped network). */
  drop(): void {
    this.req.destroy();
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }
}

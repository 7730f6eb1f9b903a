import type { ServerResponse } from 'node:http';
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import { stringifyJsonRpc } from '../jsonrpc/id-codec.js';
import { verbatimText } from '../jsonrpc/verbatim.js';
import type { Logger } from '../log.js';
import { SseStream } from './sse-stream.js';

/** The SSE form of a reply: a plain SseStream, or a stream that outlives its connection (resumable-stream.ts). */
export interface ReplyStream {
  send(msg: JSONRPCMessage): boolean;
  end(): void;
}

export interface LazySseReplyOptions {
  heartbeatMs: number;
  /** Headers sent with the reply whichever form it takes (e.g. `mcp-session-id`). */
  headers?: Record<string, string>;
  /** Where a stream closed for a client that stopped reading is logged (sse-stream.ts). */
  logger?: Logger;
  /** Builds the SSE form on `res`; a plain SseStream when absent. */
  openStream?: (res: ServerResponse) => ReplyStream;
}

/**
 * The reply to one POSTed request: plain JSON unless something must be written
 * before the final response, in which case the reply switches to an SSE stream
 * that ends after the response (digest §2.3, §4.3).
 */
export class LazySseReply {
  private stream: ReplyStream | undefined;
  private finished = false;
  private dropped = false;
  /** Built on the first listener: most replies finish without one (issue 7, memory per open listen). */
  private dropListeners: Array<() => void> | undefined;

  constructor(private readonly res: ServerResponse, private readonly opts: LazySseReplyOptions) {
    res.on('close', () => {
      if (this.finished) return;
      this.dropped = true;
      const listeners = this.dropListeners;
      this.dropListeners = undefined;
      if (listeners) for (const l of listeners) l();
    });
  }

  /** True once the reply has switched to SSE. */
  get streaming(): boolean {
    return this.stream !== undefined;
  }

  /** False after `finish()` or once the client has gone. */
  get open(): boolean {
    return !this.finished && !this.dropped && !this.res.destroyed;
  }

  /**
   * Writes a message before the final response; the first call switches the
   * reply to SSE. False when it cannot be delivered (once on SSE, the stream
   * decides: a resumable one keeps messages for a client that is away).
   */
  send(msg: JSONRPCMessage): boolean {
    if (this.stream) return !this.finished && this.stream.send(msg);
    if (!this.open) return false;
    return this.begin().send(msg);
  }

  /** Switches to SSE now, before anything is written (a call that outlasts the JSON window). */
  startStream(): void {
    if (!this.stream && this.open) this.begin();
  }

  /**
   * Ends the reply with the final answer: one JSON body, or on SSE one event per
   * message. An absent answer (a cancelled request) still ends the reply, as an
   * empty SSE stream, since a request must get JSON or SSE (digest §4.3).
   * `status` applies to a JSON reply only: once on SSE, 200 has been sent.
   */
  finish(answer: JSONRPCMessage | JSONRPCMessage[] | undefined, status = 200, headers?: Record<string, string>): void {
    if (this.finished) return;
    this.finished = true;
    const messages = answer === undefined ? [] : Array.isArray(answer) ? answer : [answer];
    if (this.stream) {
      // The stream may outlive a dropped connection: it takes the answer either way.
      for (const m of messages) this.stream.send(m);
      this.stream.end();
      return;
    }
    if (this.dropped || this.res.destroyed) return;
    if (answer !== undefined) {
      // An upstream response relayed unchanged goes out as the upstream sent it (jsonrpc/verbatim.ts).
      const body = verbatimText(answer) ?? stringifyJsonRpc(answer);
      // A known length spares the chunked framing (one write instead of body + terminator).
      const head: Record<string, string | number> = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) };
      if (this.opts.headers) Object.assign(head, this.opts.headers);
      if (headers) Object.assign(head, headers);
      this.res.writeHead(status, head);
      this.res.end(body);
      return;
    }
    this.begin().end();
  }

  /** Called when the client closes the connection before `finish()` (a cancel on modern HTTP; not on 2025 HTTP). */
  onClientDrop(listener: () => void): void {
    if (this.dropped) queueMicrotask(listener);
    else if (!this.finished) (this.dropListeners ??= []).push(listener);
  }

  private begin(): ReplyStream {
    this.stream = this.opts.openStream?.(this.res) ?? new SseStream(this.res, this.opts);
    return this.stream;
  }
}

import type { ServerResponse } from 'node:http';
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import type { Logger } from '../log.js';
import { stringifyJsonRpc } from '../jsonrpc/id-codec.js';
import { SSE_HEARTBEAT, SSE_RESPONSE_HEADERS, sseEvent } from '../wire/sse-writer.js';
import { heartbeatSweep } from './heartbeat-sweep.js';

export interface SseStreamOptions {
  /** Period of `: keepalive` comments (digest §2.3); 0 disables them. */
  heartbeatMs: number;
  /** Extra response headers, e.g. `mcp-session-id`. */
  headers?: Record<string, string>;
  /** Bytes written but not yet taken by the client beyond which the stream is closed (default 8 MiB). */
  maxBufferedBytes?: number;
  /** Where the slow-client closure is logged. */
  logger?: Logger;
}

/** A client this far behind has stopped reading; anything more would only pile up in the bridge's memory. */
export const DEFAULT_MAX_BUFFERED_BYTES = 8 * 1024 * 1024;

/** The stream each open response belongs to, so one shared 'close' listener serves them all. */
const byResponse = new WeakMap<ServerResponse, SseStream>();

/**
 * One open server-sent-event response: headers go out at once, heartbeats keep
 * proxies from timing it out, and `onClose` reports its end whoever caused it.
 * An idle stream (an open listen) holds no timer and no closure of its own:
 * heartbeats come from one shared sweep, the close listener is shared too.
 */
export class SseStream {
  private ended = false;
  /** The heartbeat sweep slot this stream sits in; -1 without heartbeats. */
  private heartbeatSlot = -1;
  private closeListeners: Array<() => void> | undefined;

  constructor(private readonly res: ServerResponse, private readonly opts: SseStreamOptions) {
    res.writeHead(200, { ...SSE_RESPONSE_HEADERS, ...opts.headers });
    res.flushHeaders();
    res.socket?.setNoDelay(true);
    if (opts.heartbeatMs > 0) this.heartbeatSlot = heartbeatSweep(opts.heartbeatMs).add(this);
    byResponse.set(res, this);
    res.on('close', SseStream.onResponseClose);
  }

  /** False once the stream has ended or the client has gone. */
  get open(): boolean {
    return !this.ended && !this.res.destroyed && !this.res.writableEnded;
  }

  /** Writes a JSON-RPC message (or batch) as a `message` event; false when the stream is gone. */
  send(msg: JSONRPCMessage | JSONRPCMessage[]): boolean {
    return this.write(sseEvent('message', stringifyJsonRpc(msg)));
  }

  /** Writes a named event with raw data (e.g. the http+sse `endpoint` event). */
  event(name: string, data: string): boolean {
    return this.write(sseEvent(name, data));
  }

  /** Writes a frame built already (an event with an id, a replayed event); false when the stream is gone. */
  frame(chunk: string): boolean {
    return this.write(chunk);
  }

  end(): void {
    if (!this.ended && !this.res.writableEnded) this.res.end();
    this.markEnded();
  }

  /** Called once when the stream ends: `end()`, or the client closed the connection. */
  onClose(listener: () => void): void {
    if (this.ended) queueMicrotask(listener);
    else (this.closeListeners ??= []).push(listener);
  }

  /**
   * Writes one keepalive comment (the heartbeat sweep's turn for this stream).
   * A response that went away without a 'close' this stream heard (it was
   * already gone when the stream began) ends the stream here, so the sweep
   * never holds a dead member.
   */
  heartbeat(): void {
    if (!this.write(SSE_HEARTBEAT)) this.markEnded();
  }

  private write(chunk: string): boolean {
    if (!this.open) return false;
    // res.write() never refuses: past the socket's buffer node keeps every byte in memory. A client that
    // stops reading must not make the bridge buffer without bound, so once the backlog it has not taken
    // passes the bound the stream is closed (for a modern request that is its cancel; a GET stream's
    // client may reconnect). One large write onto a drained stream is fine: it is the backlog that counts.
    const backlog = this.res.writableLength;
    const max = this.opts.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES;
    if (backlog > max) {
      this.opts.logger?.warn('sse.slow_client_closed', { bufferedBytes: backlog, maxBufferedBytes: max });
      this.res.destroy();
      this.markEnded();
      return false;
    }
    this.res.write(chunk);
    return true;
  }

  /** The one 'close' listener of every stream's response (`this` is the response). */
  private static onResponseClose(this: ServerResponse): void {
    byResponse.get(this)?.markEnded();
  }

  private markEnded(): void {
    if (this.ended) return;
    this.ended = true;
    if (this.heartbeatSlot >= 0) heartbeatSweep(this.opts.heartbeatMs).delete(this, this.heartbeatSlot);
    this.res.off('close', SseStream.onResponseClose);
    byResponse.delete(this.res);
    const listeners = this.closeListeners;
    this.closeListeners = undefined;
    for (const l of listeners ?? []) l();
  }
}

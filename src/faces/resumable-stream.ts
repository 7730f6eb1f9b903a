import type { ServerResponse } from 'node:http';
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import { sseMessage, ssePriming } from '../wire/sse-writer.js';
import { SseStream, type SseStreamOptions } from './sse-stream.js';

/** What a stream needs of its session: event ids and their store, the SSE options, and a word when it changes. */
export interface StreamHost {
  /** True when events get ids and are kept: a client that holds one can resume. */
  readonly resumable: boolean;
  /** `retry` of the priming event that opens each stream; undefined: no priming event (the version does not know it). */
  readonly primeRetryMs: number | undefined;
  readonly sse: SseStreamOptions;
  /** Builds an event's frame from its id (undefined without a store) and keeps it for replay. */
  record(stream: ResumableStream, frameFor: (id: string | undefined) => string, replayable?: boolean): string;
  /** A connection of `stream` opened or closed, or the stream ended. */
  changed(stream: ResumableStream): void;
}

/** The standalone GET stream, or one POST's response stream. */
export type StreamKind = 'get' | 'post';

/**
 * One SSE stream of a Streamable HTTP session, which outlives its connections:
 * once the client holds an event id of it, what is sent while it is away is
 * kept (EventStore) and a GET with `Last-Event-ID` carries the stream on
 * (2025-11-25 transports: a disconnect is not a cancel, and resumption is
 * always by GET). Without a store it is a plain SSE response.
 */
export class ResumableStream {
  #conn: SseStream | undefined;
  /** The client has read an event id of this stream, so it can resume it. */
  #cursor = false;
  #ended = false;

  constructor(
    readonly no: number,
    readonly kind: StreamKind,
    private readonly host: StreamHost,
  ) {}

  /** A connection is open now. */
  get connected(): boolean {
    return this.#conn?.open ?? false;
  }

  get ended(): boolean {
    return this.#ended;
  }

  /**
   * Starts the stream on `res`. The priming event goes first: "an event ID
   * and an empty data field", with `retry` since the bridge may close the
   * connection (slow client) before the stream ends (2025-11-25 transports).
   */
  begin(res: ServerResponse): void {
    const conn = this.#connect(res);
    const retryMs = this.host.primeRetryMs;
    if (retryMs === undefined) return;
    const frame = this.host.record(this, (id) => ssePriming(id!, retryMs), false);
    if (conn.frame(frame)) this.#cursor = true;
  }

  /**
   * Carries the stream on over a client's new connection: `missed` (the stored
   * events after its Last-Event-ID) first, then whatever comes next; a stream
   * that has ended ends the connection after the replay.
   */
  resume(res: ServerResponse, missed: string[]): void {
    const conn = this.#connect(res);
    // A client that resumes holds an id of this stream now, if it did not before (a GET stream taken over).
    if (this.host.resumable) this.#cursor = true;
    for (const frame of missed) conn.frame(frame);
    if (this.#ended) conn.end();
  }

  /**
   * Sends one message. False when nobody can get it: no connection, and the
   * client holds no id of this stream to resume it with (the caller may then
   * try another route).
   */
  send(msg: JSONRPCMessage): boolean {
    if (this.#ended) return false;
    const frame = this.host.record(this, (id) => sseMessage(msg, 'message', id));
    if (this.#conn?.frame(frame)) {
      if (this.host.resumable) this.#cursor = true;
      return true;
    }
    return this.#cursor;
  }

  /** Ends the stream: after its response (POST), or with its session. */
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#conn?.end();
    this.host.changed(this);
  }

  #connect(res: ServerResponse): SseStream {
    // The client resumed, so it has given the connection it held before up.
    this.#conn?.end();
    const conn = new SseStream(res, this.host.sse);
    this.#conn = conn;
    conn.onClose(() => {
      if (this.#conn === conn) this.#conn = undefined;
      this.host.changed(this);
    });
    this.host.changed(this);
    return conn;
  }
}

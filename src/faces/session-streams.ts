import type { ServerResponse } from 'node:http';
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import { formatEventId, parseEventId } from '../wire/sse-event-id.js';
import { EventStore } from './event-store.js';
import { ResumableStream, type StreamHost } from './resumable-stream.js';
import { SseStream, type SseStreamOptions } from './sse-stream.js';
import { IdTable } from '../heap/id-table.js';

/** `retry` of priming events: how long a client waits before it reconnects to a dropped stream. */
export const SSE_RETRY_MS = 1_000;

/** Frames kept per session besides the event bound, in characters: one large result must not pin megabytes for long. */
export const EVENT_STORE_MAX_CHARS = 4 * 1024 * 1024;

export interface SessionStreamsOptions {
  sse: SseStreamOptions;
  /** Events kept for `Last-Event-ID` (`--event-store-max`); 0: no ids, no store, no priming. */
  maxEvents: number;
  /** The session's version knows priming events (empty data breaks older clients' parsers). */
  priming: boolean;
  /** A GET connection opened or closed, or a stream ended: the idle timer looks again. */
  changed(): void;
}

/**
 * The SSE streams of one Streamable HTTP session (2025-11-25 transports,
 * Resumability and Redelivery): event ids `<stream>-<seq>` unique across the
 * session, one bounded EventStore allocated when the first event is stored,
 * and `resume`, which answers a GET with `Last-Event-ID` with what that
 * stream missed and carries it on. Nothing is replayed from another stream.
 */
export class SessionStreams implements StreamHost {
  readonly resumable: boolean;
  readonly primeRetryMs: number | undefined;
  readonly sse: SseStreamOptions;
  #store: EventStore<ResumableStream> | undefined;
  #streams = 0;
  /** The current standalone stream; it stays resumable while its client is away. */
  #get: ResumableStream | undefined;
  /** POST streams whose response is still to come, by number: an id older than the store can still find them. */
  #running: IdTable<number, ResumableStream> | undefined;

  constructor(private readonly opts: SessionStreamsOptions) {
    this.resumable = opts.maxEvents > 0;
    this.primeRetryMs = this.resumable && opts.priming ? SSE_RETRY_MS : undefined;
    this.sse = opts.sse;
  }

  /** The client has a standalone GET connection open. */
  get getConnected(): boolean {
    return this.#get?.connected ?? false;
  }

  /** Events kept now (0 before the first). */
  get stored(): number {
    return this.#store?.size ?? 0;
  }

  /** Writes on the standalone stream; false when the client has none it reads or could resume. */
  sendStandalone(msg: JSONRPCMessage): boolean {
    return this.#get?.send(msg) ?? false;
  }

  /** A GET without Last-Event-ID: a new standalone stream (the caller has refused a second connection). */
  openGet(res: ServerResponse): void {
    this.#get = new ResumableStream(++this.#streams, 'get', this);
    this.#get.begin(res);
  }

  /** The SSE form of one POST's reply. */
  openPost(res: ServerResponse): ResumableStream {
    const stream = new ResumableStream(++this.#streams, 'post', this);
    (this.#running ??= new IdTable()).set(stream.no, stream);
    stream.begin(res);
    return stream;
  }

  /**
   * A GET with `Last-Event-ID`. Returns a refusal text (400) for an id this
   * session never issued; otherwise answers on `res`:
   * 1. the id's event is still stored: the events of its stream after it are
   *    replayed, then the stream goes on over `res` (a POST stream that has
   *    ended ends after the replay; a GET stream continues as the standalone one);
   * 2. the id is older than the store: the stream restarts, nothing replayed
   *    (no error, no duplicate) — the standalone stream or a POST stream still
   *    running continues from now, anything else ends at once.
   */
  resume(res: ServerResponse, lastEventId: string): string | undefined {
    const at = parseEventId(lastEventId);
    const found = at && this.#store ? this.#store.find(at.seq) : 'unknown';
    if (!at || found === 'unknown' || (found !== 'evicted' && found.stream.no !== at.stream)) {
      return 'Bad Request: Last-Event-ID is not an event id of this session';
    }
    if (found === 'evicted') {
      const stream = this.#get?.no === at.stream ? this.#get : this.#running?.get(at.stream);
      this.sse.logger?.debug('sse.resume.restart', { stream: at.stream, running: stream !== undefined });
      if (stream) stream.resume(res, []);
      else endAtOnce(res, this.sse, []);
      return undefined;
    }
    const stream = found.stream;
    const missed = this.#store!.after(at.seq, stream);
    this.sse.logger?.debug('sse.resume', { stream: at.stream, replayed: missed.length });
    if (stream.kind === 'get') this.#get!.resume(res, missed);
    else if (!stream.ended) stream.resume(res, missed);
    else endAtOnce(res, this.sse, missed);
    return undefined;
  }

  /** Ends every stream (the session is closing). */
  close(): void {
    this.#get?.end();
    for (const s of [...(this.#running?.values() ?? [])]) s.end();
  }

  /** @internal StreamHost: the id is made here, the frame kept in the store. */
  record(stream: ResumableStream, frameFor: (id: string | undefined) => string, replayable = true): string {
    if (!this.resumable) return frameFor(undefined);
    this.#store ??= new EventStore(this.opts.maxEvents, EVENT_STORE_MAX_CHARS);
    return this.#store.add(stream, (seq) => frameFor(formatEventId(stream.no, seq)), replayable);
  }

  /** @internal StreamHost. */
  changed(stream: ResumableStream): void {
    if (stream.ended && stream.kind === 'post') this.#running?.delete(stream.no);
    this.opts.changed();
  }
}

/** A stream with nothing more to carry: the replay, then the end. Its connection has no id if nothing is replayed, so a client's next try is a plain GET. */
function endAtOnce(res: ServerResponse, sse: SseStreamOptions, frames: string[]): void {
  const conn = new SseStream(res, sse);
  for (const frame of frames) conn.frame(frame);
  conn.end();
}

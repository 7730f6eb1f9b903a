import type { CallSignal } from '../contracts/upstream.js';
import type { Logger } from '../log.js';
import type { HttpSessionClient } from './http-session-client.js';
import { readMessageStream, type StreamCursor } from './message-stream-reader.js';
import type { UpstreamReply } from './upstream-reply.js';

export interface GetStreamOptions {
  client: HttpSessionClient;
  logger: Logger;
  /** Each message of the stream (unsolicited requests and notifications, resumed responses). */
  onMessage(msg: unknown): void;
  /** The session is gone: 404 on a session with an id, or a re-open refused after the stream once worked. */
  onExpired(detail: string): void;
  /** The server could not be reached `maxConnectFailures` times in a row. */
  onUnreachable(detail: string): void;
  baseDelayMs?: number;
  maxDelayMs?: number;
  maxConnectFailures?: number;
}

/** Statuses that mean "not now" rather than "this session is gone". */
const TRANSIENT = new Set([408, 409, 425, 429, 500, 502, 503, 504]);

/**
 * The standalone GET stream of one session (digest §4.3, §5.4): opened once
 * the session exists, re-opened while the session lives when it drops, honouring
 * `retry` and sending `Last-Event-ID` once ids were seen, with bounded backoff.
 */
export class GetStream {
  private readonly opts: GetStreamOptions;
  private readonly ac = new AbortController();
  private readonly cursor: StreamCursor = {};
  private stopped = false;
  private everConnected = false;

  constructor(opts: GetStreamOptions) {
    this.opts = opts;
  }

  /** True once the server has accepted the stream at least once. */
  get connected(): boolean {
    return this.everConnected;
  }

  /** Starts the loop; resolves once the first attempt is settled (connected, refused or failed). */
  start(): Promise<void> {
    return new Promise((resolve) => {
      void this.run(resolve);
    });
  }

  stop(): void {
    this.stopped = true;
    this.ac.abort();
  }

  private async run(firstSettled: () => void): Promise<void> {
    const { client, logger } = this.opts;
    const base = this.opts.baseDelayMs ?? 250;
    const max = this.opts.maxDelayMs ?? 5_000;
    const maxFailures = this.opts.maxConnectFailures ?? 4;
    let failures = 0;
    let quiet = 0;
    while (!this.stopped) {
      let res: UpstreamReply;
      try {
        res = await client.get(this.cursor.lastEventId, this.ac.signal);
      } catch (err) {
        firstSettled();
        if (this.stopped) return;
        failures += 1;
        logger.debug('upstream.get_stream.connect_failed', { failures, error: err });
        if (failures >= maxFailures) return this.opts.onUnreachable(`GET stream: ${(err as Error).message}`);
        await sleep(Math.min(base * 2 ** (failures - 1), max), this.ac.signal);
        continue;
      }
      failures = 0;
      if (!res.ok || !(res.header('content-type') ?? '').includes('text/event-stream')) {
        await res.discard();
        firstSettled();
        if (this.stopped) return;
        // A stateless server (it issued no Mcp-Session-Id) answering 404/405 just has no GET stream:
        // there is no session that could have expired (digest §4.3 "Sessions").
        if (client.sessionId === undefined && (res.status === 404 || res.status === 405)) {
          logger.debug('upstream.get_stream.none', { status: res.status, stateless: true });
          return;
        }
        if (res.status === 404) return this.opts.onExpired('GET answered 404');
        if (TRANSIENT.has(res.status)) {
          quiet += 1;
          await sleep(Math.min(base * 2 ** quiet, max), this.ac.signal);
          continue;
        }
        // A server may refuse the GET stream (405 or another 4xx): fine the first time (digest §4.3).
        if (this.everConnected) return this.opts.onExpired(`GET re-open answered HTTP ${res.status}`);
        logger.debug('upstream.get_stream.refused', { status: res.status });
        return;
      }
      this.everConnected = true;
      firstSettled();
      let sawEvent = false;
      try {
        await readMessageStream(res, { onMessage: this.opts.onMessage, onEvent: () => (sawEvent = true) }, this.cursor);
      } catch (err) {
        if (this.stopped) return;
        logger.debug('upstream.get_stream.dropped', { error: err });
      }
      if (this.stopped) return;
      quiet = sawEvent ? 0 : quiet + 1;
      const delay = this.cursor.retryMs ?? base * 2 ** quiet;
      await sleep(Math.min(delay, max), this.ac.signal);
    }
  }
}

/** Resolves after `ms`, or at once when the signal aborts. */
export function sleep(ms: number, signal?: CallSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

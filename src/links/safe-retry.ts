import type { CallSignal } from '../contracts/upstream.js';
import type { Logger } from '../log.js';
import { BridgeError } from '../errors.js';

/**
 * 2026-07-28 methods a server may see twice without harm: reads. They are sent
 * again when the connection failed before an answer arrived, even if the
 * request may have reached the server (a restart between request and answer).
 * `tools/call` is not among them (a tool may act), nor `subscriptions/listen`
 * (its keeper re-opens it), nor anything unknown.
 */
export const RETRY_SAFE_METHODS: ReadonlySet<string> = new Set([
  'server/discover',
  'tools/list',
  'prompts/list',
  'prompts/get',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'completion/complete',
  'ping',
]);

/** Socket errors that prove the request never left: nothing was sent, so any method may be sent again. */
const NEVER_SENT = new Set(['ECONNREFUSED', 'EADDRNOTAVAIL', 'ENETUNREACH', 'EHOSTUNREACH']);

export interface SafeRetryOptions {
  logger: Logger;
  /** Attempts after the first (default 5: 100, 200, 400, 800, 1600 ms apart, about 3 s in all). */
  retries?: number;
  baseDelayMs?: number;
}

/** The socket error code behind a failed fetch (undici puts it on `cause`). */
function codeOf(err: unknown): string | undefined {
  const cause = (err as { cause?: { code?: unknown } } | undefined)?.cause;
  return typeof cause?.code === 'string' ? cause.code : undefined;
}

/** Whether a fetch that failed with `err` (no HTTP response at all) may be sent again for `method`. */
export function mayRetry(method: string, err: unknown): boolean {
  // An OAuth failure (BRIDGE_ERR_AUTH) already ran its flow: sending again would run it again.
  if (err instanceof BridgeError) return false;
  const code = codeOf(err);
  return (code !== undefined && NEVER_SENT.has(code)) || RETRY_SAFE_METHODS.has(method);
}


/**
 * Runs `attempt` for one request of `method`: a failure before any HTTP
 * response (an upstream restarting, a stale keep-alive socket) is retried with
 * backoff when `mayRetry` allows it. HTTP error statuses are answers and are
 * never retried here; an aborted request is not retried either.
 */
export function safeRetry<T>(method: string, opts: SafeRetryOptions, signal: CallSignal | undefined, attempt: () => Promise<T>): Promise<T> {
  // The first attempt runs without an async frame around it: most calls never retry (issue 7).
  return attempt().catch((err: unknown) => retryAfter(err, method, opts, signal, attempt));
}

async function retryAfter<T>(first: unknown, method: string, opts: SafeRetryOptions, signal: CallSignal | undefined, attempt: () => Promise<T>): Promise<T> {
  const retries = opts.retries ?? 5;
  const base = opts.baseDelayMs ?? 100;
  let err = first;
  for (let n = 0; ; n++) {
    if (signal?.aborted || n >= retries || !mayRetry(method, err)) throw err;
    const delayMs = base * 2 ** n;
    opts.logger.info('upstream.call.retry', { method, attempt: n + 1, delayMs, cause: codeOf(err) ?? (err as Error).message });
    await pause(delayMs, signal);
    try {
      return await attempt();
    } catch (next) {
      err = next;
    }
  }
}

function pause(ms: number, signal: CallSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

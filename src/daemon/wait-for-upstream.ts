import type { UpstreamFacts } from '../contracts/upstream.js';
import { BridgeError } from '../errors.js';
import type { Logger } from '../log.js';

/** How long and how often `probeUntilUp` tries. */
export interface WaitForUpstreamOptions {
  /** Give up after this long; `Infinity` waits until the upstream answers or the process is stopped. */
  waitMs: number;
  logger: Logger;
  /** First delay between attempts; doubles each time up to `maxDelayMs`. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** Stops waiting: the pending delay ends and the last error is thrown (a server removed from a config file). */
  signal?: AbortSignal;
  /** Told of each failed attempt that will be tried again. */
  onRetry?: (err: unknown, attempt: number) => void;
}

const BASE_DELAY_MS = 250;
const MAX_DELAY_MS = 5_000;

/** Only "not there yet" is worth waiting for; a usage error or a server that is not MCP will not change. */
function retryable(err: unknown): boolean {
  return err instanceof BridgeError && err.code === 'BRIDGE_ERR_UPSTREAM_UNREACHABLE';
}

/**
 * Runs `probe` until it succeeds (`--wait-for-upstream`): an unreachable
 * upstream is tried again after 250 ms, doubling to 5 s, until `waitMs` has
 * passed; then the last error is thrown with the time waited in its message.
 * Any other failure is thrown at once.
 */
export async function probeUntilUp(probe: () => Promise<UpstreamFacts>, opts: WaitForUpstreamOptions): Promise<UpstreamFacts> {
  const started = Date.now();
  const base = opts.baseDelayMs ?? BASE_DELAY_MS;
  const max = opts.maxDelayMs ?? MAX_DELAY_MS;
  for (let attempt = 1; ; attempt++) {
    try {
      const facts = await probe();
      if (attempt > 1) opts.logger.info('upstream.up', { attempts: attempt, waitedMs: Date.now() - started });
      return facts;
    } catch (err) {
      if (!retryable(err)) throw err;
      const waited = Date.now() - started;
      const delay = Math.min(base * 2 ** (attempt - 1), max, Math.max(0, opts.waitMs - waited));
      if (waited >= opts.waitMs || delay <= 0 || opts.signal?.aborted) {
        throw new BridgeError('BRIDGE_ERR_UPSTREAM_UNREACHABLE', `${(err as Error).message} (still unreachable after waiting ${waited} ms, ${attempt} attempts; see --wait-for-upstream)`, { cause: err });
      }
      opts.logger.warn('upstream.waiting', { attempt, retryInMs: delay, waitedMs: waited, error: (err as Error).message });
      opts.onRetry?.(err, attempt);
      await sleep(delay, opts.signal);
    }
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
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

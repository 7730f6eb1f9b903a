import lockfile from 'proper-lockfile';
import { BridgeError } from '../../errors.js';
import { ensureDir } from './token-store.js';

/** A lock not refreshed for this long belongs to a bridge that died: it is taken over. */
const STALE_MS = 10_000;
const POLL_MS = 150;

/**
 * Holds the flow lock of one upstream across processes (desktop clients
 * start several bridges at once): one bridge runs the flow, the others wait
 * here and then read its tokens. Resolves with the release function.
 */
export async function acquireFlowLock(dir: string, target: string, waitMs: number): Promise<() => Promise<void>> {
  await ensureDir(dir);
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      return await lockfile.lock(target, { realpath: false, stale: STALE_MS, update: STALE_MS / 4, retries: 0 });
    } catch (err) {
      if ((err as { code?: string }).code !== 'ELOCKED') throw new BridgeError('BRIDGE_ERR_AUTH', `cannot lock ${target}: ${(err as Error).message}`, { cause: err });
      if (Date.now() >= deadline) throw new BridgeError('BRIDGE_ERR_AUTH', `another mcp-bridge has held the OAuth flow for this upstream for over ${waitMs} ms; finish it in the browser or remove ${target}.lock`, { cause: err });
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  }
}

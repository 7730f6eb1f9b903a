import type { LegacyUpstreamSession } from '../../src/contracts/upstream.js';
import type { Logger } from '../../src/log.js';
import type { DownstreamRecord } from './session-registry.js';

/** How long a hold waits for the server to ask the new holder for its roots. */
export const ROOTS_REFRESH_MS = 1_000;

/**
 * Roots are client state a legacy server caches per session (digest §4.5:
 * `roots/list`, refreshed on `notifications/roots/list_changed`). A shared
 * upstream session serves many downstream sessions, so the bridge remembers
 * whose roots each upstream session last heard; when another client takes it
 * for a call, the server is told the roots changed and asks that client before
 * the call goes up. Server requests that arrive during a hold, before the call
 * is sent, belong to the holder.
 */
export class RootsAffinity {
  /** upstream session → id of the downstream session whose roots it last received. */
  readonly #heardFrom = new WeakMap<LegacyUpstreamSession, string>();
  readonly #holders = new Map<LegacyUpstreamSession, DownstreamRecord>();
  readonly #waiters = new Map<LegacyUpstreamSession, () => void>();

  constructor(private readonly logger: Logger) {}

  /** Records that `record` answered a server request from `session` (only `roots/list` matters). */
  answered(session: LegacyUpstreamSession, record: DownstreamRecord, method: string): void {
    if (method !== 'roots/list') return;
    this.#heardFrom.set(session, record.id);
    if (this.#holders.get(session) === record) this.#waiters.get(session)?.();
  }

  /** The downstream session holding `session` alone, if any. */
  holder(session: LegacyUpstreamSession): DownstreamRecord | undefined {
    return this.#holders.get(session);
  }

  /**
   * Marks `session` as held by `record` (an exclusive lease) and, when its server
   * last heard another client's roots, refreshes them (bounded by ROOTS_REFRESH_MS).
   * Resolves (never rejects) with the function that ends the hold.
   */
  async hold(session: LegacyUpstreamSession, record: DownstreamRecord): Promise<() => void> {
    this.#holders.set(session, record);
    const release = () => {
      if (this.#holders.get(session) === record) this.#holders.delete(session);
    };
    const last = this.#heardFrom.get(session);
    if (last === undefined || last === record.id || record.init.capabilities?.roots === undefined) return release;
    const asked = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => done(false), ROOTS_REFRESH_MS);
      const done = (ok: boolean) => {
        clearTimeout(timer);
        this.#waiters.delete(session);
        resolve(ok);
      };
      this.#waiters.set(session, () => done(true));
    });
    try {
      await session.notify('notifications/roots/list_changed');
    } catch (err) {
      this.#waiters.get(session)?.();
      this.logger.debug('l2l.roots_refresh_failed', { upstreamSession: session.id, err });
      return release;
    }
    const refreshed = await asked;
    if (!refreshed) this.logger.debug('l2l.roots_not_refreshed', { upstreamSession: session.id, session: record.id });
    // The client's answer is written upstream after it resolves: let that write go first.
    await new Promise((r) => setImmediate(r));
    return release;
  }
}

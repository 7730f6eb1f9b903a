import type { JSONRPCNotification } from '@modelcontextprotocol/server';
import type { LegacyUpstreamSession } from '../../src/contracts/upstream.js';
import type { Logger } from '../../src/log.js';
import { levelAdmits, moreVerbose, type LoggingLevel } from './modern-envelope.js';
import type { LegSink } from './progress-relay.js';
import { LiveSet } from '../../src/heap/live-set.js';

/**
 * Per-request logging in front of per-session logging (digest §5.5, §1.9).
 * A modern request opts in with `_meta` logLevel; a legacy session has one
 * level set by `logging/setLevel`. The bridge raises the session's level to
 * the most verbose one any request on it wants (it never lowers it: messages
 * are filtered per request anyway) and delivers each `notifications/message`
 * only to the request it belongs to, if that request asked, at its level.
 */

/** One request in flight on a session; `current()` is its attached leg, if any. */
/** A subscriber's slot in its session's set of calls in flight (live-set.ts). */
export const LOG_SLOT: unique symbol = Symbol('mcp-bridge.logSlot');

export interface LogSubscriber {
  [LOG_SLOT]: number;
  current(): LegSink | undefined;
}

interface SessionLogState {
  /** The level last set upstream; undefined until the bridge set one. */
  level?: LoggingLevel;
  inFlight: LiveSet<LogSubscriber, typeof LOG_SLOT>;
}

export interface LogRelayOptions {
  /** The upstream declared `logging` (else `logging/setLevel` is never sent). */
  upstreamLogs: boolean;
  callTimeoutMs: number;
  logger: Logger;
}

/** Tracks which requests are in flight on which session and what they want logged. */
export class LogRelay {
  readonly #sessions = new WeakMap<LegacyUpstreamSession, SessionLogState>();
  readonly #opts: LogRelayOptions;

  constructor(opts: LogRelayOptions) {
    this.#opts = opts;
  }

  /** Registers a request on a session; the returned function unregisters it (idempotent). */
  track(session: LegacyUpstreamSession, sub: LogSubscriber): () => void {
    const state = this.#state(session);
    state.inFlight.add(sub);
    return () => {
      state.inFlight.delete(sub);
    };
  }

  /** Raises the session's upstream level when `wanted` is more verbose than what is set. Never throws. */
  async ensure(session: LegacyUpstreamSession, wanted: LoggingLevel | undefined): Promise<void> {
    if (wanted === undefined || !this.#opts.upstreamLogs || session.closed) return;
    const state = this.#state(session);
    if (state.level !== undefined && moreVerbose(state.level, wanted) === state.level) return;
    const previous = state.level;
    state.level = wanted;
    const outcome = await session.call({ method: 'logging/setLevel', params: { level: wanted } }, { timeoutMs: this.#opts.callTimeoutMs });
    if ('error' in outcome) {
      state.level = previous;
      this.#opts.logger.warn('m2l.set_level_failed', { session: session.id, level: wanted, error: outcome.error });
    }
  }

  /** A message that arrived tied to a call (on its own stream): delivered if its leg asked. */
  deliver(sub: LogSubscriber, n: JSONRPCNotification): boolean {
    const leg = sub.current();
    const level = (n.params as { level?: unknown } | undefined)?.level;
    if (!leg?.logLevel || !levelAdmits(leg.logLevel, level)) return false;
    leg.notify(n);
    return true;
  }

  /**
   * A message that arrived unsolicited (stdio, http+sse, WebSocket, a GET
   * stream). It can be tied to a request only when exactly one request is in
   * flight on that session (an exclusive lease makes that so); otherwise it
   * must be dropped (digest §5.5: never to requests that did not opt in). On a
   * session that correlates, unsolicited traffic is unrelated by definition.
   */
  deliverUnsolicited(session: LegacyUpstreamSession, n: JSONRPCNotification): boolean {
    if (session.correlates) return false;
    const state = this.#sessions.get(session);
    if (!state || state.inFlight.size !== 1) return false;
    const [only] = state.inFlight;
    return this.deliver(only, n);
  }

  #state(session: LegacyUpstreamSession): SessionLogState {
    let state = this.#sessions.get(session);
    if (!state) {
      state = { inFlight: new LiveSet(LOG_SLOT) };
      this.#sessions.set(session, state);
    }
    return state;
  }
}

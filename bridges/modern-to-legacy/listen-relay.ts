import type { Implementation, JSONRPCNotification, JSONRPCRequest, RequestId } from '@modelcontextprotocol/server';
import type { ModernRequestContext } from '../../src/contracts/downstream.js';
import type { LegacyUpstreamSession, UpstreamInit } from '../../src/contracts/upstream.js';
import { RpcCode } from '../../src/jsonrpc/codes.js';
import type { RpcOutcome } from '../../src/jsonrpc/messages.js';
import type { SessionPool } from '../../src/links/session-pool.js';
import type { Logger } from '../../src/log.js';
import { LISTEN_LIMIT_MESSAGE, type ListenBudget } from '../shared/listen-budget.js';
import { acknowledgement, ListenFilter, stampSubscription, SUBSCRIPTION_ID_META_KEY } from '../shared/listen-filter.js';
import type { LogRelay } from './log-relay.js';
import { META } from './modern-envelope.js';

/**
 * `subscriptions/listen` in front of a legacy server (digest §1.8, §5.4): the
 * honoured subset from the upstream's capabilities, upstream
 * `resources/subscribe` (reference-counted per session across listens) done
 * before the acknowledgement, unsolicited `list_changed` / `resources/updated`
 * fanned out to the listens that asked, stamped with their subscriptionId.
 * A listen ends gracefully (a result) on bridge shutdown, silently when the
 * client goes away; either way its upstream subscriptions are released.
 */

export interface ListenRelayOptions {
  pool: SessionPool;
  /** Subscribe calls count as requests in flight, so nothing they provoke is taken for another request's log. */
  logRelay: LogRelay;
  serverCapabilities: Record<string, unknown>;
  serverInfo: Implementation;
  logger: Logger;
  callTimeoutMs: number;
  /** The daemon's `--max-listens` bound; absent: unbounded. */
  budget?: ListenBudget;
}

interface Listen {
  id: RequestId;
  filter: ListenFilter;
  init: UpstreamInit;
  notify(n: JSONRPCNotification): void;
  /** Where this listen's URIs are subscribed upstream. */
  session?: LegacyUpstreamSession;
  end(): void;
}

interface UriSubscription {
  count: number;
  /** Resolves true once subscribed upstream, false when the server refused. */
  ready: Promise<boolean>;
}

const RESOURCE_UPDATED = 'notifications/resources/updated';

/** Every open listen of one bridge, and the upstream subscriptions they hold. */
export class ListenRelay {
  readonly #opts: ListenRelayOptions;
  readonly #listens = new Set<Listen>();
  readonly #subs = new Map<LegacyUpstreamSession, Map<string, UriSubscription>>();

  constructor(opts: ListenRelayOptions) {
    this.#opts = opts;
  }

  get size(): number {
    return this.#listens.size;
  }

  /**
   * Runs one listen until it ends; resolves with the graceful result. Throws
   * RpcError -32602 on a bad filter; beyond `--max-listens`, -32603 "Subscription limit reached" ([SDK] digest §1.8).
   */
  async open(req: JSONRPCRequest, ctx: ModernRequestContext, init: UpstreamInit): Promise<RpcOutcome> {
    const filter = ListenFilter.honour((req.params as Record<string, unknown> | undefined)?.notifications, this.#opts.serverCapabilities);
    const release = this.#opts.budget ? this.#opts.budget.take() : () => undefined;
    if (!release) {
      this.#opts.logger.warn('m2l.listen_limit', { id: req.id, maxListens: this.#opts.budget?.max });
      return { error: { code: RpcCode.InternalError, message: LISTEN_LIMIT_MESSAGE } };
    }
    try {
      return await this.#run(req.id, filter, ctx, init);
    } finally {
      release();
    }
  }

  async #run(id: RequestId, honoured: ListenFilter, ctx: ModernRequestContext, init: UpstreamInit): Promise<RpcOutcome> {
    let filter = honoured;
    let session: LegacyUpstreamSession | undefined;
    if (filter.uris.length > 0) {
      session = await this.#opts.pool.anchor(init);
      const failed = await this.#subscribe(session, filter.uris);
      filter = filter.without(failed);
    }
    // digest §1.8: the acknowledgement is the first message carrying this subscription's id.
    ctx.notify(acknowledgement(id, filter));
    if (filter.isEmpty || ctx.signal.aborted) {
      if (session) this.#unsubscribe(session, filter.uris);
      return this.#graceful(id);
    }
    return new Promise<RpcOutcome>((resolve) => {
      const listen: Listen = {
        id,
        filter,
        init,
        notify: (n) => ctx.notify(n),
        session,
        end: () => {
          if (!this.#listens.delete(listen)) return;
          ctx.signal.removeEventListener('abort', listen.end);
          if (listen.session) this.#unsubscribe(listen.session, listen.filter.uris);
          this.#opts.logger.info('m2l.listen_ended', { id, aborted: ctx.signal.aborted });
          resolve(this.#graceful(id));
        },
      };
      this.#listens.add(listen);
      ctx.signal.addEventListener('abort', listen.end, { once: true });
      this.#opts.logger.info('m2l.listen_opened', { id, honoured: filter.honoured, session: session?.id });
    });
  }

  /** One unsolicited upstream notification: to every listen whose filter takes it. */
  dispatch(session: LegacyUpstreamSession, n: JSONRPCNotification): void {
    for (const listen of this.#listens) {
      if (!listen.filter.accepts(n)) continue;
      // An update comes from the session that holds the subscription; list changes from any.
      if (n.method === RESOURCE_UPDATED && listen.session !== session) continue;
      listen.notify(stampSubscription(n, listen.id));
    }
  }

  /** Ends every listen with its graceful result (digest §5.4 step 7). */
  close(): void {
    for (const listen of [...this.#listens]) listen.end();
  }

  #graceful(id: RequestId): RpcOutcome {
    return { result: { resultType: 'complete', _meta: { [SUBSCRIPTION_ID_META_KEY]: id, [META.serverInfo]: this.#opts.serverInfo } } };
  }

  /** Subscribes each URI once per session; returns the URIs the server refused. */
  async #subscribe(session: LegacyUpstreamSession, uris: string[]): Promise<string[]> {
    const table = this.#tableFor(session);
    const results = await Promise.all(
      uris.map(async (uri) => {
        let sub = table.get(uri);
        if (sub) sub.count++;
        else {
          sub = { count: 1, ready: this.#call(session, 'resources/subscribe', uri) };
          table.set(uri, sub);
        }
        const ok = await sub.ready;
        if (!ok) this.#unsubscribe(session, [uri], false);
        return ok ? undefined : uri;
      }),
    );
    return results.filter((u): u is string => u !== undefined);
  }

  #unsubscribe(session: LegacyUpstreamSession, uris: string[], upstream = true): void {
    const table = this.#subs.get(session);
    if (!table) return;
    for (const uri of uris) {
      const sub = table.get(uri);
      if (!sub) continue;
      if (--sub.count > 0) continue;
      table.delete(uri);
      if (upstream && !session.closed) void this.#call(session, 'resources/unsubscribe', uri);
    }
    if (table.size === 0) {
      this.#subs.delete(session);
      this.#opts.pool.unanchor(session);
    }
  }

  async #call(session: LegacyUpstreamSession, method: string, uri: string): Promise<boolean> {
    const untrack = this.#opts.logRelay.track(session, { current: () => undefined });
    const outcome = await session.call({ method, params: { uri } }, { timeoutMs: this.#opts.callTimeoutMs }).finally(untrack);
    if ('error' in outcome) this.#opts.logger.warn('m2l.subscription_call_failed', { method, uri, session: session.id, error: outcome.error });
    return !('error' in outcome);
  }

  #tableFor(session: LegacyUpstreamSession): Map<string, UriSubscription> {
    let table = this.#subs.get(session);
    if (!table) {
      table = new Map();
      this.#subs.set(session, table);
      session.onClose((reason) => void this.#reanchor(session, reason));
    }
    return table;
  }

  /** The anchor died (child exit, 404, stream drop): subscribe again on a fresh one (digest §5.1 "re-subscribe"). */
  async #reanchor(dead: LegacyUpstreamSession, reason: string): Promise<void> {
    this.#subs.delete(dead);
    const affected = [...this.#listens].filter((l) => l.session === dead);
    for (const listen of affected) {
      listen.session = undefined;
      try {
        const session = await this.#opts.pool.anchor(listen.init);
        const failed = await this.#subscribe(session, listen.filter.uris);
        if (!this.#listens.has(listen)) {
          this.#unsubscribe(session, listen.filter.uris.filter((u) => !failed.includes(u)));
          continue;
        }
        listen.session = session;
        if (failed.length > 0) listen.filter = listen.filter.without(failed);
        this.#opts.logger.info('m2l.listen_resubscribed', { id: listen.id, session: session.id, reason });
      } catch (err) {
        // Without a subscription the listen would be silent: end it so the client listens again.
        this.#opts.logger.warn('m2l.listen_resubscribe_failed', { id: listen.id, error: err });
        listen.end();
      }
    }
  }
}

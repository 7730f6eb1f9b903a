import type { Implementation, JSONRPCNotification, JSONRPCRequest, RequestId } from '@modelcontextprotocol/server';
import type { ModernRequestContext } from '../../src/contracts/downstream.js';
import type { LegacyUpstreamSession, UpstreamInit } from '../../src/contracts/upstream.js';
import { RpcCode } from '../../src/jsonrpc/codes.js';
import type { RpcOutcome } from '../../src/jsonrpc/messages.js';
import type { SessionPool } from '../../src/links/session-pool.js';
import type { Logger } from '../../src/log.js';
import { LISTEN_LIMIT_MESSAGE, type ListenBudget } from '../shared/listen-budget.js';
import { acknowledgement, ListenFilter, stampSubscription, SUBSCRIPTION_ID_META_KEY } from '../shared/listen-filter.js';
import { LOG_SLOT, type LogRelay } from './log-relay.js';
import { META } from './modern-envelope.js';
import { principalId } from '../../src/identity/principal.js';
import { LIVE_SLOT, LiveSet } from '../../src/heap/live-set.js';

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

/**
 * One open listen. It is kept small on purpose (issue 7: a thousand idle
 * listens): no closure but its abort listener, no suspended async frame; the
 * request context it answers on already carries `notify` and the signal.
 */
interface Listen {
  [LIVE_SLOT]: number;
  readonly id: RequestId;
  filter: ListenFilter;
  readonly ctx: ModernRequestContext;
  /** Where this listen's URIs are subscribed upstream. */
  session: LegacyUpstreamSession | undefined;
  /** How to open a fresh anchor if that session dies; only a listen with URIs needs one. */
  readonly init: UpstreamInit | undefined;
  /** Settles the request with the listen's result. */
  readonly resolve: (outcome: RpcOutcome) => void;
  /** Registered through `ctx.onCancel` (or on `ctx.signal`): the client went (or the face shut down). */
  onAbort: () => void;
}

interface UriSubscription {
  count: number;
  /** Resolves true once subscribed upstream, false when the server refused. */
  ready: Promise<boolean>;
}

const RESOURCE_UPDATED = 'notifications/resources/updated';

const noop = (): void => undefined;

/** Every open listen of one bridge, and the upstream subscriptions they hold. */
export class ListenRelay {
  readonly #opts: ListenRelayOptions;
  readonly #listens = new LiveSet<Listen>();
  readonly #subs = new Map<LegacyUpstreamSession, Map<string, UriSubscription>>();

  constructor(opts: ListenRelayOptions) {
    this.#opts = opts;
  }

  get size(): number {
    return this.#listens.size;
  }

  /**
   * Runs one listen until it ends; resolves with the graceful result. Rejects with
   * RpcError -32602 on a bad filter; beyond `--max-listens`, -32603 "Subscription limit reached" ([SDK] digest §1.8).
   * A listen without URIs opens synchronously: nothing of it waits on an await.
   */
  open(req: JSONRPCRequest, ctx: ModernRequestContext, init: UpstreamInit): Promise<RpcOutcome> {
    let filter: ListenFilter;
    try {
      filter = ListenFilter.honour((req.params as Record<string, unknown> | undefined)?.notifications, this.#opts.serverCapabilities);
    } catch (err) {
      return Promise.reject(err);
    }
    const budget = this.#opts.budget;
    if (budget && !budget.tryTake()) {
      this.#opts.logger.warn('m2l.listen_limit', { id: req.id, maxListens: budget.max });
      return Promise.resolve({ error: { code: RpcCode.InternalError, message: LISTEN_LIMIT_MESSAGE } });
    }
    if (filter.uris.length === 0) return this.#start(req.id, filter, ctx, undefined, undefined);
    return this.#subscribeThenStart(req.id, filter, ctx, init);
  }

  /** Subscribes the listen's URIs upstream before its acknowledgement, which reports only those that took. */
  async #subscribeThenStart(id: RequestId, honoured: ListenFilter, ctx: ModernRequestContext, init: UpstreamInit): Promise<RpcOutcome> {
    let session: LegacyUpstreamSession;
    let filter: ListenFilter;
    try {
      session = await this.#opts.pool.anchor(init);
      filter = honoured.without(await this.#subscribe(session, honoured.uris));
    } catch (err) {
      this.#opts.budget?.give();
      throw err;
    }
    return this.#start(id, filter, ctx, session, init);
  }

  /** Acknowledges the listen, then holds it open until `#end`; the budget slot is taken. */
  #start(id: RequestId, filter: ListenFilter, ctx: ModernRequestContext, session: LegacyUpstreamSession | undefined, init: UpstreamInit | undefined): Promise<RpcOutcome> {
    try {
      // digest §1.8: the acknowledgement is the first message carrying this subscription's id.
      ctx.notify(acknowledgement(id, filter));
    } catch (err) {
      this.#abandon(filter, session);
      return Promise.reject(err);
    }
    // With onCancel, a request cancelled already ends at once through it; reading ctx.signal would build one.
    if (filter.isEmpty || (!ctx.onCancel && ctx.signal.aborted)) {
      this.#abandon(filter, session);
      return Promise.resolve(this.#graceful(id));
    }
    let resolve!: (outcome: RpcOutcome) => void;
    const answer = new Promise<RpcOutcome>((r) => {
      resolve = r;
    });
    const listen: Listen = { [LIVE_SLOT]: -1, id, filter, ctx, session, init, resolve, onAbort: noop };
    this.#watch(listen);
    this.#opts.logger.info('m2l.listen_opened', { id, honoured: filter.honoured, session: session?.id });
    return answer;
  }

  /** Gives back what a listen that never opened took: its upstream subscriptions and budget slot. */
  #abandon(filter: ListenFilter, session: LegacyUpstreamSession | undefined): void {
    if (session) this.#unsubscribe(session, filter.uris);
    this.#opts.budget?.give();
  }

  /** Registers the listen; its abort listener is built here so that it holds only the relay and the listen. */
  #watch(listen: Listen): void {
    listen.onAbort = () => this.#end(listen);
    this.#listens.add(listen);
    // A face that offers onCancel spares the listen an AbortSignal (and its EventTarget) for its whole life.
    if (listen.ctx.onCancel) listen.ctx.onCancel(listen.onAbort);
    else listen.ctx.signal.addEventListener('abort', listen.onAbort, { once: true });
  }

  /** Ends a listen once: upstream subscriptions and its budget slot released, the graceful result sent. */
  #end(listen: Listen): void {
    if (!this.#listens.delete(listen)) return;
    if (!listen.ctx.onCancel) listen.ctx.signal.removeEventListener('abort', listen.onAbort);
    if (listen.session) this.#unsubscribe(listen.session, listen.filter.uris);
    this.#opts.budget?.give();
    this.#opts.logger.info('m2l.listen_ended', { id: listen.id });
    listen.resolve(this.#graceful(listen.id));
  }

  /** One unsolicited upstream notification: to every listen whose filter takes it. */
  dispatch(session: LegacyUpstreamSession, n: JSONRPCNotification): void {
    const owner = session.init.principal ?? '';
    // A copy: a listen whose stream fails as it is written to leaves the set, which would skip another.
    for (const listen of this.#listens.snapshot()) {
      if (!listen.filter.accepts(n)) continue;
      // A listen hears only its own principal's upstream sessions (DESIGN "Identity"): one user's view never reaches another.
      if (principalId(listen.ctx.principal) !== owner) continue;
      // An update comes from the session that holds the subscription; list changes from any.
      if (n.method === RESOURCE_UPDATED && listen.session !== session) continue;
      listen.ctx.notify(stampSubscription(n, listen.id));
    }
  }

  /** Ends every listen with its graceful result (digest §5.4 step 7). */
  close(): void {
    for (const listen of this.#listens.snapshot()) this.#end(listen);
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
    const untrack = this.#opts.logRelay.track(session, { [LOG_SLOT]: -1, current: () => undefined });
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
    const affected = this.#listens.snapshot().filter((l) => l.session === dead);
    for (const listen of affected) {
      listen.session = undefined;
      try {
        // A listen with a session was opened with URIs, so with an init.
        const session = await this.#opts.pool.anchor(listen.init!);
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
        this.#end(listen);
      }
    }
  }
}

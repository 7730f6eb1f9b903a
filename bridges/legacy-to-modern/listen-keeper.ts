import { randomUUID } from 'node:crypto';
import type { JSONRPCNotification } from '@modelcontextprotocol/server';
import type { ModernLink } from '../../src/contracts/upstream.js';
import { notification, type RpcOutcome } from '../../src/jsonrpc/messages.js';
import type { Logger } from '../../src/log.js';
import type { ListenBudget } from '../shared/listen-budget.js';
import { LIVE_SLOT, LiveSet } from '../../src/heap/live-set.js';

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const SUBSCRIPTION_ID_KEY = 'io.modelcontextprotocol/subscriptionId';
const ACKNOWLEDGED = 'notifications/subscriptions/acknowledged';

/** Filter flag ↔ the server capability that makes it honourable ↔ the notification a re-open synthesizes. */
const LIST_FLAGS = [
  { flag: 'toolsListChanged', cap: 'tools', method: 'notifications/tools/list_changed' },
  { flag: 'promptsListChanged', cap: 'prompts', method: 'notifications/prompts/list_changed' },
  { flag: 'resourcesListChanged', cap: 'resources', method: 'notifications/resources/list_changed' },
] as const;

export interface ListenKeeperOptions {
  link: ModernLink;
  /** The upstream's discover capabilities: they decide the filter (digest §5.4). */
  serverCapabilities: Obj;
  /** The session's envelope `_meta`, read at each (re-)open. */
  envelope(): Obj;
  /** Delivers one notification to the legacy client (its GET stream, http+sse stream, WebSocket, stdout). */
  deliver(n: JSONRPCNotification): void;
  logger: Logger;
  /** How long a (re-)open waits for the acknowledgement before going on. */
  ackTimeoutMs?: number;
  /** Re-open delays after a drop: doubling from `minMs` up to `maxMs`. */
  backoff?: { minMs: number; maxMs: number };
  /** `--max-listens`: a session beyond it holds no listen (and gets no list_changed); absent: unbounded. */
  budget?: ListenBudget;
  /** `--auth pass-through`: the session principal's headers for its upstream listen. */
  upstreamHeaders?: Readonly<Record<string, string>>;
}

interface Listen {
  [LIVE_SLOT]: number;
  id: string;
  key: string;
  controller: AbortController;
  acked: Promise<boolean>;
  honoured: Obj | undefined;
  ackedAt: number | undefined;
  ended: boolean;
}

/**
 * One legacy session's upstream `subscriptions/listen` (digest §5.4): its
 * filter is the server's list-changed capabilities plus the session's
 * `resources/subscribe` set. A filter is fixed per listen, so a change opens a
 * new listen, waits for its acknowledgement, and only then closes the old one.
 * A listen that drops is re-opened with bounded backoff.
 */
export class ListenKeeper {
  private readonly opts: ListenKeeperOptions;
  private readonly live = new LiveSet<Listen>();
  private current: Listen | undefined;
  private uris: string[] = [];
  private chain: Promise<void> = Promise.resolve();
  private retryTimer: NodeJS.Timeout | undefined;
  private failures = 0;
  private closed = false;
  /** This session's slot in the listen budget, held while it wants a listen. */
  private slot: (() => void) | undefined;

  constructor(opts: ListenKeeperOptions) {
    this.opts = opts;
  }

  /** The acknowledged filter of the current listen, if any. */
  get honoured(): Obj | undefined {
    return this.current?.honoured;
  }

  /** Opens the first listen; resolves once it is acknowledged (or the ack timeout passed). */
  start(): Promise<void> {
    return this.enqueue(false);
  }

  /** Makes the listen follow these resource URIs; resolves once a listen with them is acknowledged. */
  setResources(uris: Iterable<string>): Promise<void> {
    this.uris = [...new Set(uris)].sort();
    return this.enqueue(false);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    for (const l of this.live.snapshot()) l.controller.abort(new Error('legacy session closed'));
    this.live.clear();
    this.current = undefined;
    this.releaseSlot();
  }

  /** True when this session may hold a listen; beyond the bound it goes on without one, with a warning. */
  private holdSlot(): boolean {
    if (this.slot) return true;
    const budget = this.opts.budget;
    this.slot = budget ? budget.take() : () => undefined;
    if (!this.slot) {
      this.opts.logger.warn('l2m.listen.limit', { maxListens: budget?.max, detail: 'no upstream listen for this session: it gets no list_changed or resources/updated notifications (--max-listens)' });
    }
    return this.slot !== undefined;
  }

  private releaseSlot(): void {
    this.slot?.();
    this.slot = undefined;
  }

  /** The filter for the current URIs: only what the server advertises can be honoured. */
  private filter(): Obj {
    const caps = this.opts.serverCapabilities;
    const f: Obj = {};
    for (const { flag, cap } of LIST_FLAGS) if (isObj(caps[cap]) && (caps[cap] as Obj).listChanged === true) f[flag] = true;
    const resources = caps.resources;
    if (this.uris.length > 0 && isObj(resources) && resources.subscribe === true) f.resourceSubscriptions = [...this.uris];
    return f;
  }

  private enqueue(reopen: boolean): Promise<void> {
    const run = this.chain.then(() => this.apply(reopen));
    this.chain = run.catch(() => undefined);
    return run;
  }

  private async apply(reopen: boolean): Promise<void> {
    if (this.closed) return;
    const filter = this.filter();
    const key = JSON.stringify(filter);
    const old = this.current;
    if (old && old.key === key && !old.ended) return;
    if (Object.keys(filter).length === 0) {
      this.end(old);
      this.current = undefined;
      this.releaseSlot();
      return;
    }
    if (!this.holdSlot()) return;
    const fresh = this.open(filter, key);
    const acked = await withTimeout(fresh.acked, this.opts.ackTimeoutMs ?? 5_000);
    if (this.closed) return;
    this.current = fresh;
    this.end(old);
    if (fresh.ended) return this.scheduleReopen(fresh);
    if (reopen && acked) this.refreshAfterGap(fresh);
  }

  private open(filter: Obj, key: string): Listen {
    let ack!: (ok: boolean) => void;
    const listen: Listen = {
      [LIVE_SLOT]: -1,
      id: `mcp-bridge-listen-${randomUUID()}`,
      key,
      controller: new AbortController(),
      acked: new Promise<boolean>((r) => (ack = r)),
      honoured: undefined,
      ackedAt: undefined,
      ended: false,
    };
    this.live.add(listen);
    const params = { _meta: this.opts.envelope(), notifications: filter };
    this.opts.logger.debug('l2m.listen.open', { listenId: listen.id, filter });
    void this.opts.link
      .call({ method: 'subscriptions/listen', id: listen.id, params, ...(this.opts.upstreamHeaders ? { headers: this.opts.upstreamHeaders } : {}) }, { signal: listen.controller.signal, onNotification: (n) => this.onNotification(listen, n, ack) })
      .then((outcome) => {
        listen.ended = true;
        this.live.delete(listen);
        ack(false);
        this.onEnd(listen, outcome);
      });
    return listen;
  }

  private onNotification(listen: Listen, n: JSONRPCNotification, ack: (ok: boolean) => void): void {
    if (n.method === ACKNOWLEDGED) {
      const params = n.params as Obj | undefined;
      listen.honoured = isObj(params?.notifications) ? params.notifications : {};
      listen.ackedAt = Date.now();
      ack(true);
      return;
    }
    // Until it is acknowledged and swapped in, a new listen delivers nothing: the old one still does.
    if (listen !== this.current || this.closed) return;
    this.opts.deliver(withoutSubscriptionId(n));
  }

  private onEnd(listen: Listen, outcome: RpcOutcome): void {
    if (listen.controller.signal.aborted || listen !== this.current || this.closed) return;
    const honouredNothing = listen.honoured !== undefined && Object.keys(listen.honoured).length === 0;
    if ('result' in outcome && honouredNothing) {
      // The SDK acks and ends at once when it can honour nothing (digest §1.8): re-opening would spin.
      this.opts.logger.info('l2m.listen.nothing_honoured', { listenId: listen.id });
      return;
    }
    this.opts.logger.warn('l2m.listen.dropped', { listenId: listen.id, ...('error' in outcome ? { message: outcome.error.message } : { graceful: true }) });
    this.scheduleReopen(listen);
  }

  private scheduleReopen(listen: Listen): void {
    if (this.closed || this.retryTimer) return;
    const { minMs, maxMs } = this.opts.backoff ?? { minMs: 250, maxMs: 10_000 };
    // A listen that lived a while was healthy: start the backoff over.
    if (listen.ackedAt !== undefined && Date.now() - listen.ackedAt > maxMs) this.failures = 0;
    const delay = Math.min(maxMs, minMs * 2 ** this.failures);
    this.failures = Math.min(this.failures + 1, 30);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.enqueue(true);
    }, delay);
    this.retryTimer.unref?.();
  }

  /** Notifications sent while no listen was open are lost; tell the client to refresh (digest §5.4). */
  private refreshAfterGap(listen: Listen): void {
    for (const { flag, method } of LIST_FLAGS) if (listen.honoured?.[flag] === true) this.opts.deliver(notification(method));
  }

  private end(listen: Listen | undefined): void {
    if (!listen) return;
    listen.controller.abort(new Error('listen replaced'));
    this.live.delete(listen);
  }
}

/** The notification without the listen's `_meta` subscriptionId, which means nothing to a legacy client. */
export function withoutSubscriptionId(n: JSONRPCNotification): JSONRPCNotification {
  const params = n.params as Obj | undefined;
  if (!isObj(params?._meta) || !(SUBSCRIPTION_ID_KEY in params._meta)) return n;
  const meta = { ...params._meta };
  delete meta[SUBSCRIPTION_ID_KEY];
  const rest: Obj = { ...params };
  if (Object.keys(meta).length > 0) rest._meta = meta;
  else delete rest._meta;
  return { ...n, params: rest } as JSONRPCNotification;
}

function withTimeout(p: Promise<boolean>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    timer.unref?.();
    void p.then((v) => {
      clearTimeout(timer);
      resolve(v);
    });
  });
}

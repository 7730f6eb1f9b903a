import type { JSONRPCNotification, JSONRPCRequest } from '@modelcontextprotocol/server';
import type { LegacyChannel } from '../../src/contracts/downstream.js';
import type { CallSignal, LegacyUpstreamSession, UpstreamInit } from '../../src/contracts/upstream.js';
import { RpcCode } from '../../src/jsonrpc/codes.js';
import type { RpcOutcome } from '../../src/jsonrpc/messages.js';
import { RpcError } from '../../src/errors.js';
import { SessionPool, type SessionLease } from '../../src/links/session-pool.js';
import type { Logger } from '../../src/log.js';
import { upstreamLevelFor, type McpLogLevel } from './log-levels.js';
import { fanoutTargets } from './notification-fanout.js';
import { RootsAffinity } from './roots-affinity.js';
import { SessionRegistry, type DownstreamRecord } from './session-registry.js';
import { SubscriptionTable } from './subscription-table.js';
import { IdTable } from '../../src/heap/id-table.js';

/** Calls that may make the server ask the client something (DESIGN "Hard parts": correlation). */
const INPUT_METHODS: ReadonlySet<string> = new Set(['tools/call', 'prompts/get', 'resources/read']);

const OK: RpcOutcome = { result: {} };

export interface PooledUpstreamOptions {
  pool: SessionPool;
  logger: Logger;
  callTimeoutMs: number;
}

/**
 * The upstream side of legacy-to-legacy over a shared `SessionPool`: leases,
 * and the per-downstream-session state a shared upstream session would mix up
 * (resource subscriptions, log level), plus fan-out of its unsolicited traffic.
 */
export class PooledUpstream {
  readonly registry: SessionRegistry;
  readonly subscriptions = new SubscriptionTable();
  /** Whose roots each shared upstream session last heard (a server caches them per session). */
  readonly roots: RootsAffinity;
  readonly #pool: SessionPool;
  readonly #logger: Logger;
  readonly #timeoutMs: number;
  readonly #removeListener: () => void;
  /** The level last set on each upstream session by this bridge. */
  readonly #applied = new WeakMap<LegacyUpstreamSession, McpLogLevel>();
  /** `key\nuri` → the upstream session that holds the subscription. */
  readonly #subscribedOn = new Map<string, LegacyUpstreamSession>();
  /** `key\nuri` → the tail of its upstream subscribe/unsubscribe operations, run one at a time. */
  readonly #chains = new IdTable<string, Promise<unknown>>();
  readonly #watched = new WeakSet<LegacyUpstreamSession>();
  /** key → the anchor its downstream sessions were answered from, unanchored when the last one leaves. */
  readonly #anchors = new Map<string, LegacyUpstreamSession>();
  /** key → the level its upstream sessions must run at (see #levelFor). */
  readonly #levels = new Map<string, McpLogLevel | undefined>();
  #correlates = false;
  #closed = false;

  constructor(opts: PooledUpstreamOptions) {
    this.#pool = opts.pool;
    this.#logger = opts.logger;
    this.#timeoutMs = opts.callTimeoutMs;
    this.registry = new SessionRegistry(this.subscriptions);
    this.roots = new RootsAffinity(opts.logger);
    this.#removeListener = this.#pool.addListener({
      notification: (session, n) => this.#fanout(session, n),
      request: (session, req) => this.#unsolicitedRequest(session, req),
    });
  }

  /** Opens (or reuses) the anchor session for this init's key and registers the downstream session. */
  async open(id: string, init: UpstreamInit, channel: LegacyChannel): Promise<{ record: DownstreamRecord; anchor: LegacyUpstreamSession }> {
    const anchor = await this.#pool.anchor(init);
    this.#correlates = anchor.correlates;
    const record = this.registry.add({ id, key: SessionPool.keyOf(init), init, channel });
    this.#levels.delete(record.key);
    this.#anchors.set(record.key, anchor);
    return { record, anchor };
  }

  /**
   * A lease for one request: exclusive for calls that may trigger server requests
   * when the upstream cannot tie them to their call (digest §5.3 case A item 8).
   */
  lease(record: DownstreamRecord, method: string, signal: CallSignal): Promise<SessionLease> {
    const exclusive = this.#exclusive(record, method);
    const leased = this.#pool.acquire(record.init, { exclusive, signal, key: record.key });
    return exclusive ? leased.then((lease) => this.#hold(lease, record)) : leased;
  }

  async #hold(lease: SessionLease, record: DownstreamRecord): Promise<SessionLease> {
    // Held alone: the server's requests before the call is sent are this client's too, and it must see this client's roots.
    const endHold = await this.roots.hold(lease.session, record);
    return {
      session: lease.session,
      release: () => {
        endHold();
        lease.release();
      },
    };
  }

  /**
   * Whether a call should take the server requests the session attributes to it.
   * A shared lease on a session that cannot correlate may overlap other clients'
   * calls, so its stray server requests take the unsolicited path instead.
   */
  tiesServerRequests(record: DownstreamRecord, method: string): boolean {
    return this.#correlates || this.#exclusive(record, method);
  }

  /**
   * A call holds its session alone only when it may need input and the client
   * could give it: a client that declared no capabilities cannot be asked for
   * sampling, elicitation or roots (a server must not send what was not
   * declared, and the bridge never forwards it), so its calls share the session
   * as other calls do. All sessions on a key declared the same capabilities.
   */
  #exclusive(record: DownstreamRecord, method: string): boolean {
    return !this.#correlates && INPUT_METHODS.has(method) && record.askable;
  }

  /**
   * Brings a leased session to the level its key needs (sessions opened after
   * setLevel missed it). Undefined, not a promise, when it already is: the
   * common case, and the caller then need not wait a tick.
   */
  ensureLevel(session: LegacyUpstreamSession, key: string): Promise<void> | undefined {
    const level = this.#levelFor(key);
    if (level === undefined || session.closed || this.#applied.get(session) === level) return undefined;
    return this.#setUpstreamLevel(session, level).then((outcome) => {
      if ('error' in outcome) this.#logger.warn('l2l.set_level_failed', { upstreamSession: session.id, error: outcome.error });
    });
  }

  /** `logging/setLevel` from one client: stored for it, upstream at the most verbose level on the key. */
  async setLevel(record: DownstreamRecord, level: McpLogLevel): Promise<RpcOutcome> {
    const previous = record.level;
    record.level = level;
    this.#levels.delete(record.key);
    const outcome = await this.#applyLevel(record.key);
    if ('error' in outcome) {
      record.level = previous;
      this.#levels.delete(record.key);
    }
    return 'error' in outcome ? outcome : OK;
  }

  /** `resources/subscribe` from one client; the first subscriber on a key subscribes upstream before `{}` goes back. */
  subscribe(record: DownstreamRecord, uri: string, params: Record<string, unknown>): Promise<RpcOutcome> {
    return this.#serial(record.key, uri, async () => {
      if (this.subscriptions.has(record.id, uri)) return OK;
      if (this.subscriptions.count(record.key, uri) === 0) {
        const outcome = await this.#subscribeUpstream(record.key, record.init, uri, params);
        if ('error' in outcome) return outcome;
      }
      this.subscriptions.add(record.key, record.id, uri);
      return OK;
    });
  }

  /** `resources/unsubscribe` from one client; the last one on a key unsubscribes upstream. */
  unsubscribe(record: DownstreamRecord, uri: string): Promise<RpcOutcome> {
    return this.#serial(record.key, uri, async () => {
      if (!this.subscriptions.remove(record.id, uri).last) return OK;
      const slot = `${record.key}\n${uri}`;
      const holder = this.#subscribedOn.get(slot);
      this.#subscribedOn.delete(slot);
      if (holder && !holder.closed) {
        const outcome = await holder.call({ method: 'resources/unsubscribe', params: { uri } }, { timeoutMs: this.#timeoutMs });
        if ('error' in outcome) this.#logger.warn('l2l.unsubscribe_failed', { uri, error: outcome.error });
      }
      return OK;
    });
  }

  /** A client notification every upstream session on its key must hear (`notifications/roots/list_changed`). */
  broadcast(record: DownstreamRecord, n: JSONRPCNotification): void {
    for (const session of this.#pool.sessionsFor(record.key)) {
      if (session.closed) continue;
      session.notify(n.method, n.params as Record<string, unknown> | undefined).catch((err: unknown) => {
        this.#logger.debug('l2l.notify_upstream_failed', { method: n.method, upstreamSession: session.id, err });
      });
    }
  }

  /** Forgets a closed downstream session: its subscriptions (unsubscribing at refcount 0) and its log level. */
  async release(record: DownstreamRecord): Promise<void> {
    if (!this.registry.remove(record.id)) return;
    this.#levels.delete(record.key);
    if (this.#closed) return;
    await Promise.all(this.subscriptions.urisOf(record.id).map((uri) => this.unsubscribe(record, uri)));
    if (this.registry.onKey(record.key).length > 0) {
      const outcome = await this.#applyLevel(record.key);
      if ('error' in outcome) this.#logger.warn('l2l.set_level_failed', { key: record.key, error: outcome.error });
      return;
    }
    // Nobody on this key any more: its anchor may idle out and free its pool slot (or child).
    const anchor = this.#anchors.get(record.key);
    this.#anchors.delete(record.key);
    if (anchor && !anchor.closed) this.#pool.unanchor(anchor);
  }

  /** Stops listening to the pool; the pool itself belongs to the daemon. */
  close(): void {
    this.#closed = true;
    this.#removeListener();
  }

  /** Cached per key: read on every call, it changes only when a session joins, leaves or sets its level. */
  #levelFor(key: string): McpLogLevel | undefined {
    if (this.#levels.has(key)) return this.#levels.get(key);
    const level = upstreamLevelFor(this.registry.onKey(key).map((r) => r.level));
    this.#levels.set(key, level);
    return level;
  }

  async #applyLevel(key: string): Promise<RpcOutcome> {
    const level = this.#levelFor(key);
    const outcomes = await Promise.all(this.#pool.sessionsFor(key).map((s) => this.#setUpstreamLevel(s, level)));
    return outcomes.find((o) => 'error' in o) ?? OK;
  }

  async #setUpstreamLevel(session: LegacyUpstreamSession, level: McpLogLevel | undefined): Promise<RpcOutcome> {
    if (level === undefined || session.closed || this.#applied.get(session) === level) return OK;
    const outcome = await session.call({ method: 'logging/setLevel', params: { level } }, { timeoutMs: this.#timeoutMs });
    if (!('error' in outcome)) this.#applied.set(session, level);
    return outcome;
  }

  async #subscribeUpstream(key: string, init: UpstreamInit, uri: string, params: Record<string, unknown>): Promise<RpcOutcome> {
    const anchor = await this.#pool.anchor(init);
    const outcome = await anchor.call({ method: 'resources/subscribe', params }, { timeoutMs: this.#timeoutMs });
    if ('error' in outcome) return outcome;
    this.#subscribedOn.set(`${key}\n${uri}`, anchor);
    this.#watchHolder(anchor, key);
    return OK;
  }

  /** When the session holding subscriptions ends (child exit, expiry, idle), subscribe again on a fresh anchor. */
  #watchHolder(session: LegacyUpstreamSession, key: string): void {
    if (this.#watched.has(session)) return;
    this.#watched.add(session);
    session.onClose(() => {
      if (this.#closed) return;
      for (const [slot, holder] of this.#subscribedOn) {
        if (holder !== session || !slot.startsWith(`${key}\n`)) continue;
        this.#subscribedOn.delete(slot);
        const uri = slot.slice(key.length + 1);
        void this.#serial(key, uri, async () => {
          const owner = this.registry.onKey(key).find((r) => this.subscriptions.has(r.id, uri));
          if (this.#closed || !owner || this.#subscribedOn.has(slot)) return OK;
          const outcome = await this.#subscribeUpstream(key, owner.init, uri, { uri });
          if ('error' in outcome) this.#logger.warn('l2l.resubscribe_failed', { uri, error: outcome.error });
          return outcome;
        });
      }
    });
  }

  #serial(key: string, uri: string, op: () => Promise<RpcOutcome>): Promise<RpcOutcome> {
    const slot = `${key}\n${uri}`;
    const run = (this.#chains.get(slot) ?? Promise.resolve()).then(op).catch((err: unknown): RpcOutcome => ({
      error: { code: RpcCode.InternalError, message: err instanceof Error ? err.message : String(err) },
    }));
    this.#chains.set(slot, run);
    void run.then(() => {
      if (this.#chains.get(slot) === run) this.#chains.delete(slot);
    });
    return run;
  }

  #fanout(session: LegacyUpstreamSession, n: JSONRPCNotification): void {
    const targets = fanoutTargets(n, this.registry.onKey(SessionPool.keyOf(session.init)));
    if (targets.length === 0) this.#logger.debug('l2l.notification_undelivered', { method: n.method, upstreamSession: session.id });
    for (const t of targets) t.channel.notify(n);
  }

  /**
   * An upstream request tied to no call: only a key used by exactly one client has
   * somewhere to send it. With none of ours on the key, -32601 lets the pool ask
   * its next listener (another bridge may own the session).
   */
  async #unsolicitedRequest(session: LegacyUpstreamSession, req: JSONRPCRequest): Promise<Record<string, unknown>> {
    const holder = this.roots.holder(session);
    const candidates = holder ? [holder] : this.registry.onKey(SessionPool.keyOf(session.init));
    if (candidates.length === 0) throw new RpcError(RpcCode.MethodNotFound, `no legacy client on this session for ${req.method}`);
    if (candidates.length === 1) {
      const result = await candidates[0].channel.request(req.method, req.params as Record<string, unknown> | undefined);
      this.roots.answered(session, candidates[0], req.method);
      return result;
    }
    this.#logger.debug('l2l.unsolicited_request_refused', { method: req.method, candidates: candidates.length });
    throw new RpcError(RpcCode.InternalError, 'no client request is in flight to attach this request to');
  }
}

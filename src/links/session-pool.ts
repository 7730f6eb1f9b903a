import { availableParallelism } from 'node:os';
import type { JSONRPCNotification, JSONRPCRequest } from '@modelcontextprotocol/server';
import type { CallSignal, LegacyLink, LegacyUpstreamSession, UpstreamInit } from '../contracts/upstream.js';
import { BridgeError, RpcError } from '../errors.js';
import { RpcCode } from '../jsonrpc/codes.js';
import type { Logger } from '../log.js';
import { canonicalJson } from './canonical-json.js';

/** Bounds of the pool. */
export interface PoolOptions {
  /** Sessions in all, across every key (for stdio: children). */
  max: number;
  /** A session with no lease is closed after this long. */
  idleMs: number;
  logger: Logger;
  /** Waiting acquires at most; one more is refused at once with BRIDGE_ERR_POOL_EXHAUSTED. Unbounded when absent. */
  maxQueued?: number;
  /** Sessions opened as soon as a call waits; default min(max, CPU cores). Beyond, the pool grows only on a stalled queue. */
  eager?: number;
  /** Past `eager`, one more session opens once a key's queue has not moved for this long (default 5 ms). */
  growAfterMs?: number;
}

/**
 * Why growth waits: on a box with few cores, more children than cores only add
 * scheduling and pipe cost (8 stdio children cost ~295 µs per call against ~85
 * for one). A queue that moves is served by the sessions there are; a queue that
 * stalls (every session held by slow or parked exclusive calls) still gets one.
 */
const DEFAULT_GROW_AFTER_MS = 5;

/** One use of a pooled session; release it when the call is done. */
export interface SessionLease {
  readonly session: LegacyUpstreamSession;
  /** Returns the session to the pool. Idempotent. */
  release(): void;
}

/** Unsolicited traffic of pooled sessions. */
export interface PoolListener {
  notification?(session: LegacyUpstreamSession, n: JSONRPCNotification): void;
  /** Answer, or reject with an RpcError; -32601 passes the request on to the next listener. */
  request?(session: LegacyUpstreamSession, req: JSONRPCRequest): Promise<Record<string, unknown>>;
}

interface Entry {
  key: string;
  session?: LegacyUpstreamSession;
  leases: number;
  exclusiveHeld: boolean;
  anchored: boolean;
  /** When the last lease ended (eviction picks the stalest). */
  idleSince: number;
  idleTimer?: NodeJS.Timeout;
  /** Settles once the open attempt has finished either way. */
  opened?: Promise<unknown>;
}

interface Waiter {
  key: string;
  init: UpstreamInit;
  exclusive: boolean;
  grant(entry: Entry, exclusive: boolean): void;
  fail(err: Error): void;
}

/**
 * The one pool every bridge that reaches a legacy server draws sessions from
 * (DESIGN "One pool"). Sessions are keyed by protocol version and capabilities so
 * the server sees exactly what the client declared; waiters are served FIFO per
 * key. A session that closes is dropped; one idle for `idleMs` is closed, except
 * an anchor while the pool has listeners (its subscriptions must live somewhere).
 */
export class SessionPool {
  private readonly entries = new Set<Entry>();
  private readonly waiters: Waiter[] = [];
  private readonly listeners = new Set<PoolListener>();
  private readonly log: Logger;
  private closed = false;
  private pumping = false;
  private pumpAgain = false;
  /** key → when its queue last moved (a grant, a session opened, a first waiter). */
  private readonly progress = new Map<string, number>();
  private growTimer: NodeJS.Timeout | undefined;
  private growDue = Infinity;
  private readonly eager: number;
  private readonly growAfterMs: number;

  constructor(
    private readonly link: LegacyLink,
    private readonly opts: PoolOptions,
  ) {
    this.log = opts.logger.child({ pool: link.kind });
    this.eager = Math.max(1, Math.min(opts.max, opts.eager ?? availableParallelism()));
    this.growAfterMs = opts.growAfterMs ?? DEFAULT_GROW_AFTER_MS;
  }

  /** Key = principal + protocolVersion + canonical JSON of capabilities (clientInfo of the first opener is used). */
  static keyOf(init: UpstreamInit): string {
    // The principal first: sessions (and stdio children) are never shared between users (DESIGN "Identity").
    return `${init.principal ?? ''}\n${init.protocolVersion}\n${canonicalJson(init.capabilities ?? {})}`;
  }

  /**
   * exclusive: the session has no other lease while held (needed where server
   * requests cannot be correlated; on sessions that correlate it is treated as
   * shared). shared: may overlap with other shared leases on one session. Opens
   * sessions on demand up to `max`, queues beyond it (FIFO), and an aborted
   * signal removes the waiter (rejects with RpcError -32603).
   */
  acquire(init: UpstreamInit, opts: { exclusive: boolean; signal?: CallSignal; key?: string }): Promise<SessionLease> {
    if (this.closed) return Promise.reject(new BridgeError('BRIDGE_ERR_CLOSED', 'session pool is closed'));
    const { signal } = opts;
    if (signal?.aborted) return Promise.reject(abortedError());
    const key = opts.key ?? SessionPool.keyOf(init);
    // Nobody queued ahead on this key and a session fits: granted now, without a waiter (the common case under load).
    if (!this.waiters.some((w) => w.key === key)) {
      const pick = this.pick(key, opts.exclusive);
      if (pick) return Promise.resolve(this.lease(pick.entry, pick.exclusive));
    }
    return new Promise<SessionLease>((resolve, reject) => {
      const onAbort = () => {
        this.removeWaiter(waiter);
        reject(abortedError());
      };
      const waiter: Waiter = {
        key,
        init,
        exclusive: opts.exclusive,
        grant: (entry, exclusive) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(this.lease(entry, exclusive));
        },
        fail: (err) => {
          signal?.removeEventListener('abort', onAbort);
          reject(err);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      if (!this.waiters.some((w) => w.key === waiter.key)) this.progress.set(waiter.key, performance.now());
      this.waiters.push(waiter);
      this.pump();
      // Waiting beyond the sessions now opening (or that growth may still open within `max`) means queued;
      // past the bound the caller hears it now, not after a long wait.
      const max = this.opts.maxQueued;
      const headroom = Math.max(0, this.opts.max - this.entries.size);
      if (max !== undefined && this.waiters.includes(waiter) && this.waiters.length - this.openingCount() - headroom > max) {
        this.removeWaiter(waiter);
        waiter.fail(new BridgeError('BRIDGE_ERR_POOL_EXHAUSTED', `upstream busy: ${max} calls are already waiting for a pooled upstream session (--max-queued, --pool-max)`));
      }
    });
  }

  /** Unsolicited traffic of every pooled session (list_changed, resources/updated, unsolicited requests). */
  addListener(l: PoolListener): () => void {
    this.listeners.add(l);
    return () => {
      if (!this.listeners.delete(l)) return;
      // Anchors were kept for listeners; with none left they may idle out.
      if (this.listeners.size === 0) for (const e of this.entries) if (e.anchored) this.scheduleIdle(e);
    };
  }

  /** One open session for this key, opened if needed (for subscriptions that must live somewhere). */
  async anchor(init: UpstreamInit): Promise<LegacyUpstreamSession> {
    const key = SessionPool.keyOf(init);
    const existing = this.openEntries(key);
    const chosen = existing.find((e) => e.anchored) ?? existing[0];
    if (chosen) {
      chosen.anchored = true;
      return chosen.session!;
    }
    const lease = await this.acquire(init, { exclusive: false });
    const entry = [...this.entries].find((e) => e.session === lease.session);
    if (entry) entry.anchored = true;
    lease.release();
    return lease.session;
  }

  /** Lets an anchor idle out again (its subscriptions ended). */
  unanchor(session: LegacyUpstreamSession): void {
    const entry = [...this.entries].find((e) => e.session === session);
    if (!entry) return;
    entry.anchored = false;
    this.scheduleIdle(entry);
  }

  /** The open sessions for a key. */
  sessionsFor(key: string): LegacyUpstreamSession[] {
    return this.openEntries(key).map((e) => e.session!);
  }

  /** sessions: open sessions; leased: sessions with at least one lease; queued: waiting acquires. */
  stats(): { sessions: number; leased: number; queued: number } {
    const open = [...this.entries].filter((e) => e.session && !e.session.closed);
    return { sessions: open.length, leased: open.filter((e) => e.leases > 0).length, queued: this.waiters.length };
  }

  /** Rejects every waiter and closes every pooled session (the link itself stays open: its owner closes it). */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.growTimer);
    for (const w of this.waiters.splice(0)) w.fail(new BridgeError('BRIDGE_ERR_CLOSED', 'session pool closed'));
    const entries = [...this.entries];
    this.entries.clear();
    // Sessions still opening close themselves when they arrive (see open()); wait for that too.
    await Promise.all(
      entries.map((e) => {
        clearTimeout(e.idleTimer);
        return e.session ? e.session.close() : e.opened;
      }),
    );
  }

  // ─── granting and opening ─────────────────────────────────────────────────

  /**
   * Grants what can be granted, FIFO per key, then opens sessions for keys still
   * waiting. Re-entrant calls (a session closing during eviction) run one more pass
   * instead of nesting, so no key is opened for twice.
   */
  private pump(): void {
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    this.pumping = true;
    try {
      do {
        this.pumpAgain = false;
        this.pumpOnce();
      } while (this.pumpAgain && !this.closed);
    } finally {
      this.pumping = false;
    }
  }

  private pumpOnce(): void {
    if (this.closed || this.waiters.length === 0) return;
    const blocked: string[] = [];
    for (const w of [...this.waiters]) {
      if (blocked.includes(w.key)) continue;
      const pick = this.pick(w.key, w.exclusive);
      if (!pick) {
        blocked.push(w.key);
        continue;
      }
      this.removeWaiter(w);
      if (this.waiters.some((x) => x.key === w.key)) this.progress.set(w.key, performance.now());
      else this.progress.delete(w.key);
      w.grant(pick.entry, pick.exclusive);
    }
    for (const key of blocked) this.openFor(key);
  }

  private pick(key: string, wantsExclusive: boolean): { entry: Entry; exclusive: boolean } | undefined {
    let best: Entry | undefined;
    for (const e of this.entries) {
      if (e.key !== key || e.session === undefined || e.session.closed) continue;
      const exclusive = wantsExclusive && !e.session.correlates;
      if (exclusive ? e.leases === 0 : !e.exclusiveHeld) {
        if (!best || e.leases < best.leases) best = e;
      }
    }
    if (!best) return undefined;
    return { entry: best, exclusive: wantsExclusive && !best.session!.correlates };
  }

  /**
   * Opens as many sessions as the key's waiters need (each exclusive one needs its
   * own) within `max`: at once up to `eager` sessions in the pool, past that one at
   * a time while the key's queue has stalled for `growAfterMs` with none opening.
   */
  private openFor(key: string): void {
    const waiting = this.waiters.filter((w) => w.key === key);
    const need = waiting.filter((w) => w.exclusive).length + (waiting.some((w) => !w.exclusive) ? 1 : 0);
    let opening = [...this.entries].filter((e) => e.key === key && !e.session).length;
    while (opening < need) {
      if (this.entries.size >= this.eager && !this.stalled(key, opening)) {
        if (opening === 0) this.scheduleGrowth((this.progress.get(key) ?? 0) + this.growAfterMs);
        return;
      }
      if (!this.makeRoom()) return;
      opening++;
      this.open(key, waiting[0].init);
    }
  }

  private stalled(key: string, opening: number): boolean {
    return opening === 0 && performance.now() - (this.progress.get(key) ?? 0) >= this.growAfterMs;
  }

  /** One timer for the whole pool, at the earliest moment a stalled key may grow. */
  private scheduleGrowth(due: number): void {
    if (this.growTimer !== undefined && due >= this.growDue) return;
    clearTimeout(this.growTimer);
    this.growDue = due;
    this.growTimer = setTimeout(() => {
      this.growTimer = undefined;
      this.growDue = Infinity;
      this.pump();
    }, Math.max(0, due - performance.now()) + 1);
  }

  /** True when one more session fits, closing the stalest idle session of any key if needed. */
  private makeRoom(): boolean {
    if (this.entries.size < this.opts.max) return true;
    let victim: Entry | undefined;
    for (const e of this.entries) {
      if (!e.session || e.leases > 0 || this.keptAlive(e)) continue;
      if (!victim || e.idleSince < victim.idleSince) victim = e;
    }
    if (!victim) return false;
    this.log.debug('pool.evict', { session: victim.session!.id });
    this.drop(victim);
    void victim.session!.close();
    return true;
  }

  private open(key: string, init: UpstreamInit): void {
    const entry: Entry = { key, leases: 0, exclusiveHeld: false, anchored: false, idleSince: Date.now() };
    this.entries.add(entry);
    entry.opened = this.link.openSession(init).then(
      async (session) => {
        if (!this.entries.has(entry)) {
          await session.close();
          return;
        }
        entry.session = session;
        entry.idleSince = Date.now();
        this.progress.set(key, performance.now());
        session.setUnsolicitedHandlers({
          notification: (n) => this.fanOut(session, n),
          request: (req) => this.askListeners(session, req),
        });
        session.onClose((reason) => {
          this.log.info('pool.session_closed', { session: session.id, reason });
          this.drop(entry);
          this.pump();
        });
        this.log.info('pool.session_opened', { session: session.id, ...this.stats() });
        this.scheduleIdle(entry);
        this.pump();
      },
      (err: Error) => {
        this.entries.delete(entry);
        if (this.closed) return;
        this.log.warn('pool.open_failed', { error: err });
        // One failed open answers one waiter, so a dead upstream cannot loop forever.
        const w = this.waiters.find((x) => x.key === key);
        if (w) {
          this.removeWaiter(w);
          w.fail(err);
        }
        this.pump();
      },
    );
  }

  private lease(entry: Entry, exclusive: boolean): SessionLease {
    entry.leases++;
    if (exclusive) entry.exclusiveHeld = true;
    return new Lease(this, entry, exclusive);
  }

  /** @internal A lease ending (called once per lease by Lease.release). */
  released(entry: Entry, exclusive: boolean): void {
    entry.leases--;
    if (exclusive) entry.exclusiveHeld = false;
    entry.idleSince = Date.now();
    if (!this.entries.has(entry)) return;
    this.scheduleIdle(entry);
    if (this.waiters.length > 0) this.pump();
  }

  // ─── idle, unsolicited traffic, bookkeeping ───────────────────────────────

  private keptAlive(e: Entry): boolean {
    return e.anchored && this.listeners.size > 0;
  }

  /**
   * Arms the idle check once; a timer already armed stays (re-arming on every
   * release cost a clearTimeout + setTimeout per call) and, when it fires, waits
   * out what is left of `idleMs` since the last lease ended.
   */
  private scheduleIdle(entry: Entry, delayMs = this.opts.idleMs): void {
    if (entry.idleTimer !== undefined || entry.leases > 0 || !entry.session || this.keptAlive(entry)) return;
    entry.idleTimer = setTimeout(() => {
      entry.idleTimer = undefined;
      if (entry.leases > 0 || this.keptAlive(entry) || !this.entries.has(entry)) return;
      const left = this.opts.idleMs - (Date.now() - entry.idleSince);
      if (left > 0) return this.scheduleIdle(entry, left);
      this.log.info('pool.idle_close', { session: entry.session!.id, idleMs: this.opts.idleMs });
      this.drop(entry);
      void entry.session!.close();
    }, delayMs);
    entry.idleTimer.unref();
  }

  private fanOut(session: LegacyUpstreamSession, n: JSONRPCNotification): void {
    for (const l of this.listeners) {
      try {
        l.notification?.(session, n);
      } catch (err) {
        this.log.warn('pool.listener_failed', { method: n.method, error: err });
      }
    }
  }

  private async askListeners(session: LegacyUpstreamSession, req: JSONRPCRequest): Promise<Record<string, unknown>> {
    for (const l of this.listeners) {
      if (!l.request) continue;
      try {
        return await l.request(session, req);
      } catch (err) {
        if (!(err instanceof RpcError && err.code === RpcCode.MethodNotFound)) throw err;
      }
    }
    throw new RpcError(RpcCode.MethodNotFound, `bridge has no client to forward ${req.method} to`);
  }

  private openEntries(key: string): Entry[] {
    return [...this.entries].filter((e) => e.key === key && e.session !== undefined && !e.session.closed);
  }

  private drop(entry: Entry): void {
    clearTimeout(entry.idleTimer);
    this.entries.delete(entry);
  }

  private openingCount(): number {
    let n = 0;
    for (const e of this.entries) if (!e.session) n++;
    return n;
  }

  private removeWaiter(w: Waiter): void {
    const i = this.waiters.indexOf(w);
    if (i >= 0) this.waiters.splice(i, 1);
  }
}

/** One use of a pooled session (a class: no closures per call). */
class Lease implements SessionLease {
  readonly session: LegacyUpstreamSession;
  private done = false;

  constructor(
    private readonly pool: SessionPool,
    private readonly entry: Entry,
    private readonly exclusive: boolean,
  ) {
    this.session = entry.session!;
  }

  release(): void {
    if (this.done) return;
    this.done = true;
    this.pool.released(this.entry, this.exclusive);
  }
}

function abortedError(): RpcError {
  return new RpcError(RpcCode.InternalError, 'cancelled while waiting for an upstream session');
}

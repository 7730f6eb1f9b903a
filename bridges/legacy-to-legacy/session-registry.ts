import type { LegacyChannel } from '../../src/contracts/downstream.js';
import type { UpstreamInit } from '../../src/contracts/upstream.js';
import type { McpLogLevel } from './log-levels.js';
import type { FanoutCandidate } from './notification-fanout.js';
import type { SubscriptionTable } from './subscription-table.js';
import { mayBeAsked } from '../shared/may-be-asked.js';

/** The bridge's own record of one downstream legacy session on a pooled upstream. */
export interface DownstreamRecord extends FanoutCandidate {
  readonly id: string;
  /** `SessionPool.keyOf(init)`: the upstream sessions this one may use. */
  readonly key: string;
  readonly init: UpstreamInit;
  readonly channel: LegacyChannel;
  /** The client declared a capability the server may ask through (see `mayBeAsked`). */
  readonly askable: boolean;
  /** Set by `logging/setLevel`; undefined until the client sets one. */
  level: McpLogLevel | undefined;
}

/**
 * The open downstream sessions of a pooled bridge, grouped by pool key, so that
 * traffic from a shared upstream session can find the sessions it may concern.
 */
export class SessionRegistry {
  readonly #byId = new Map<string, DownstreamRecord>();
  readonly #byKey = new Map<string, Set<DownstreamRecord>>();
  readonly #subscriptions: SubscriptionTable;

  constructor(subscriptions: SubscriptionTable) {
    this.#subscriptions = subscriptions;
  }

  /** Registers a session; its `subscribed()` reads the shared subscription table. */
  add(fields: { id: string; key: string; init: UpstreamInit; channel: LegacyChannel }): DownstreamRecord {
    const table = this.#subscriptions;
    // Object.assign, not `{ ...fields, more }`: on this V8 a spread copy given more keys gets a hidden class of
    // its own, ~225 B per session, and per call it outlived the young GC (src/links/upstream-http.ts, options).
    const record: DownstreamRecord = Object.assign({}, fields, { askable: mayBeAsked(fields.init.capabilities), level: undefined, subscribed: (uri: string) => table.has(fields.id, uri) });
    this.#byId.set(record.id, record);
    const group = this.#byKey.get(record.key) ?? new Set();
    group.add(record);
    this.#byKey.set(record.key, group);
    return record;
  }

  remove(id: string): DownstreamRecord | undefined {
    const record = this.#byId.get(id);
    if (!record) return undefined;
    this.#byId.delete(id);
    const group = this.#byKey.get(record.key)!;
    group.delete(record);
    if (group.size === 0) this.#byKey.delete(record.key);
    return record;
  }

  get(id: string): DownstreamRecord | undefined {
    return this.#byId.get(id);
  }

  /** The sessions using one pool key, in the order they opened. */
  onKey(key: string): DownstreamRecord[] {
    return [...(this.#byKey.get(key) ?? [])];
  }

  all(): DownstreamRecord[] {
    return [...this.#byId.values()];
  }

  get size(): number {
    return this.#byId.size;
  }
}

import { randomUUID } from 'node:crypto';
import { IdTable } from '../../src/heap/id-table.js';

/**
 * The table of upstream calls waiting for a modern client's retry (digest
 * §5.3 case A step 4: "the client may never retry, so put a timeout on held
 * upstream requests; on expiry send upstream notifications/cancelled and drop
 * state"). Each entry is reached only through the reference sealed into its
 * requestState; taking it out stops its clock.
 */

/** What the table needs from a parked call: a way to give it up. */
export interface Parkable {
  /** Cancels the call upstream and frees what it holds (its session lease). */
  cancel(reason: string): void;
}

export interface ParkedCallsOptions {
  /** How long an entry may wait before it is cancelled and forgotten. */
  ttlMs: number;
  /** Told after an entry expired (for logs). */
  onExpire?: (ref: string) => void;
  /** Clock, for tests. */
  now?: () => number;
}

/** setTimeout's maximum; a later expiry is reached by re-arming (longer delays would fire at once). */
const MAX_TIMER_MS = 2 ** 31 - 1;

interface Slot<T> {
  entry: T;
  expiresAt: number;
  ttlMs: number;
  /** The principal the entry belongs to ('' for none). */
  owner: string;
}

/**
 * Parked calls by reference. One timer for the table, armed for the earliest
 * expiry, rather than one per entry: a thousand parked calls would otherwise
 * hold a thousand timers and their closures (bench row 4).
 */
export class ParkedCalls<T extends Parkable> {
  readonly #slots = new IdTable<string, Slot<T>>();
  readonly #opts: ParkedCallsOptions;
  readonly #now: () => number;
  #timer: NodeJS.Timeout | undefined;
  #armedFor = Number.POSITIVE_INFINITY;

  constructor(opts: ParkedCallsOptions) {
    this.#opts = opts;
    this.#now = opts.now ?? Date.now;
  }

  /** Parks an entry and returns its new, unguessable reference. */
  park(entry: T, ttlMs = this.#opts.ttlMs, owner = ''): string {
    const ref = randomUUID();
    const expiresAt = this.#now() + ttlMs;
    this.#slots.set(ref, { entry, expiresAt, ttlMs, owner });
    if (expiresAt < this.#armedFor) this.#arm(expiresAt);
    return ref;
  }

  /** Removes and returns the entry (a retry resumes it); undefined when expired, taken or unknown. */
  take(ref: string): T | undefined {
    const slot = this.#slots.get(ref);
    if (!slot) return undefined;
    this.#slots.delete(ref);
    if (this.#slots.size === 0) this.#disarm();
    return slot.entry;
  }

  has(ref: string): boolean {
    return this.#slots.has(ref);
  }

  get size(): number {
    return this.#slots.size;
  }

  /** Entries parked for one principal (`--max-parked-per-principal`; a scan, run only when that bound is set). */
  countOwnedBy(owner: string): number {
    let n = 0;
    for (const slot of this.#slots.values()) if (slot.owner === owner) n++;
    return n;
  }

  /** Cancels every entry (bridge shutdown). */
  cancelAll(reason: string): void {
    for (const ref of [...this.#slots.keys()]) this.take(ref)?.cancel(reason);
  }

  #arm(at: number): void {
    this.#disarm();
    this.#armedFor = at;
    this.#timer = setTimeout(() => this.#sweep(), Math.min(MAX_TIMER_MS, Math.max(0, at - this.#now())));
    this.#timer.unref();
  }

  #disarm(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#armedFor = Number.POSITIVE_INFINITY;
  }

  /** Expires every entry that is due, then arms for the next one (a taken entry's expiry may have armed it: nothing is due then). */
  #sweep(): void {
    this.#timer = undefined;
    this.#armedFor = Number.POSITIVE_INFINITY;
    const now = this.#now();
    const due: Array<[string, Slot<T>]> = [];
    let next = Number.POSITIVE_INFINITY;
    for (const [ref, slot] of this.#slots) {
      if (slot.expiresAt <= now) due.push([ref, slot]);
      else if (slot.expiresAt < next) next = slot.expiresAt;
    }
    for (const [ref] of due) this.#slots.delete(ref);
    if (next !== Number.POSITIVE_INFINITY) this.#arm(next);
    for (const [ref, slot] of due) {
      slot.entry.cancel(`not resumed within ${slot.ttlMs} ms (requestState time-to-live)`);
      this.#opts.onExpire?.(ref);
    }
  }
}

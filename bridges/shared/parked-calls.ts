import { randomUUID } from 'node:crypto';

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
}

interface Slot<T> {
  entry: T;
  timer: NodeJS.Timeout;
  ttlMs: number;
}

/** Parked calls by reference, each with its own TTL timer. */
export class ParkedCalls<T extends Parkable> {
  readonly #slots = new Map<string, Slot<T>>();
  readonly #opts: ParkedCallsOptions;

  constructor(opts: ParkedCallsOptions) {
    this.#opts = opts;
  }

  /** Parks an entry and returns its new, unguessable reference. */
  park(entry: T, ttlMs = this.#opts.ttlMs): string {
    const ref = randomUUID();
    const timer = setTimeout(() => this.#expire(ref), ttlMs);
    timer.unref();
    this.#slots.set(ref, { entry, timer, ttlMs });
    return ref;
  }

  /** Removes and returns the entry (a retry resumes it); undefined when expired, taken or unknown. */
  take(ref: string): T | undefined {
    const slot = this.#slots.get(ref);
    if (!slot) return undefined;
    clearTimeout(slot.timer);
    this.#slots.delete(ref);
    return slot.entry;
  }

  has(ref: string): boolean {
    return this.#slots.has(ref);
  }

  get size(): number {
    return this.#slots.size;
  }

  /** Cancels every entry (bridge shutdown). */
  cancelAll(reason: string): void {
    for (const ref of [...this.#slots.keys()]) this.take(ref)?.cancel(reason);
  }

  #expire(ref: string): void {
    const ttlMs = this.#slots.get(ref)?.ttlMs;
    const entry = this.take(ref);
    if (!entry) return;
    entry.cancel(`not resumed within ${ttlMs} ms (requestState time-to-live)`);
    this.#opts.onExpire?.(ref);
  }
}

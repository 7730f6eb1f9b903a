/**
 * The slot a LiveSet member sits in (-1: in none). A member class declares it
 * as a field, `[LIVE_SLOT] = -1`, so every instance has it from the start. An
 * object that sits in several sets at once has a slot key for each (the set's
 * constructor takes it).
 */
export const LIVE_SLOT: unique symbol = Symbol('mcp-bridge.liveSlot');

/** What a LiveSet holds: an object of ours that carries its own slot under `S`. */
export type LiveMember<S extends symbol = typeof LIVE_SLOT> = { [K in S]: number };

/**
 * A set of the things in flight (requests, calls) that come and go on every
 * call, in an array: a member knows its slot, and leaving moves the last
 * member into it. Not a JS Set: on Node 20's V8 a Set or Map whose entries
 * churn rehashes every few operations, and each old table keeps its entries
 * and a pointer to its successor. Once one table has reached the old
 * generation (a pause spanning two scavenges is enough), that chain makes
 * every later table, and every call any of them held, outlive each scavenge:
 * all per-call state was promoted, and each scavenge took 5–8 ms instead of 1
 * (issue 17, row 7). An array that is popped keeps no stale entries.
 * A member belongs to one LiveSet per slot key. Iteration order is not insertion order.
 */
export class LiveSet<T extends LiveMember<S>, S extends symbol = typeof LIVE_SLOT> implements Iterable<T> {
  readonly #members: T[] = [];
  readonly #slot: S;

  constructor(slot: S = LIVE_SLOT as S) {
    this.#slot = slot;
  }

  get size(): number {
    return this.#members.length;
  }

  has(member: T): boolean {
    const slot = member[this.#slot];
    return slot >= 0 && this.#members[slot] === member;
  }

  add(member: T): this {
    if (this.has(member)) return this;
    this.#put(member, this.#members.length);
    this.#members.push(member);
    return this;
  }

  delete(member: T): boolean {
    if (!this.has(member)) return false;
    const slot = member[this.#slot];
    const last = this.#members.pop()!;
    if (last !== member) {
      this.#members[slot] = last;
      this.#put(last, slot);
    }
    this.#put(member, -1);
    return true;
  }

  /** Empties the set (its members leave it). */
  clear(): void {
    for (const m of this.#members) this.#put(m, -1);
    this.#members.length = 0;
  }

  /** A copy of the members: safe to iterate while they leave (a shutdown cancelling each). */
  snapshot(): T[] {
    return this.#members.slice();
  }

  #put(member: T, slot: number): void {
    (member as LiveMember<S>)[this.#slot] = slot;
  }

  /** The members now; a member leaving during the iteration may make it skip another (use snapshot()). */
  [Symbol.iterator](): Iterator<T> {
    return this.#members[Symbol.iterator]();
  }
}

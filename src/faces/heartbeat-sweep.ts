/** Something that writes one keepalive comment when its turn comes. */
export interface Heartbeating {
  heartbeat(): void;
}

/** Ticks per period: a member joins the slot swept last, so its first beat comes 3/4 to 1 period after it joined. */
const SLOTS = 4;

/**
 * One timer per heartbeat period for every open SSE stream, instead of a
 * `setInterval` per stream (a Timeout, its closure and context: ~300 B each,
 * held for as long as a listen stays open). Members sit in SLOTS sets swept in
 * turn, one every period / SLOTS, so each member beats once a period: the
 * silence a proxy sees never exceeds the period (digest §2.3), and no stream
 * gets a heartbeat before three quarters of one has passed.
 */
export class HeartbeatSweep<T extends Heartbeating> {
  readonly #periodMs: number;
  readonly #slots: Array<Set<T>> = Array.from({ length: SLOTS }, () => new Set<T>());
  /** The slot the last tick swept; a new member waits a whole round for it. */
  #last = 0;
  #size = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(periodMs: number) {
    this.#periodMs = periodMs;
  }

  /** Members now. */
  get size(): number {
    return this.#size;
  }

  /** Adds a member; returns the slot to pass to `delete`. */
  add(member: T): number {
    const slot = this.#last;
    if (this.#slots[slot].has(member)) return slot;
    this.#slots[slot].add(member);
    if (this.#size++ === 0) this.#start();
    return slot;
  }

  /** Removes a member added in `slot`; the timer stops with the last one. */
  delete(member: T, slot: number): void {
    if (!this.#slots[slot]?.delete(member)) return;
    if (--this.#size === 0) this.#stop();
  }

  #start(): void {
    this.#timer = setInterval(() => this.#tick(), this.#periodMs / SLOTS);
    // Heartbeats never keep the process alive on their own (as the per-stream timers did not).
    this.#timer.unref();
  }

  #stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #tick(): void {
    this.#last = (this.#last + 1) % SLOTS;
    // A member that ends while beating leaves its set; iterating a Set tolerates that.
    for (const member of this.#slots[this.#last]) member.heartbeat();
  }
}

const sweeps = new Map<number, HeartbeatSweep<Heartbeating>>();

/** The daemon-wide sweep for one period (every face passes the same `--heartbeat`). */
export function heartbeatSweep(periodMs: number): HeartbeatSweep<Heartbeating> {
  let sweep = sweeps.get(periodMs);
  if (!sweep) {
    sweep = new HeartbeatSweep(periodMs);
    sweeps.set(periodMs, sweep);
  }
  return sweep;
}

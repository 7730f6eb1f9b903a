/**
 * The daemon-wide bound on open listens (`--max-listens`): modern clients'
 * `subscriptions/listen` streams, and the upstream listens the bridge holds for
 * legacy sessions. Bridges in front of the same upstream share one budget.
 */
export class ListenBudget {
  readonly max: number;
  #taken = 0;

  /** `max` listens at most; Infinity when unbounded. */
  constructor(max = Number.POSITIVE_INFINITY) {
    this.max = max;
  }

  /** Listens holding a slot now. */
  get size(): number {
    return this.#taken;
  }

  /**
   * Takes a slot; undefined when the bound is reached. The returned function
   * gives it back, once however often it is called.
   */
  take(): (() => void) | undefined {
    if (!this.tryTake()) return undefined;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.give();
    };
  }

  /**
   * Takes a slot without a release function (false at the bound), for a holder
   * that tracks its slot itself and calls `give()` exactly once: one closure
   * less per open listen.
   */
  tryTake(): boolean {
    if (this.#taken >= this.max) return false;
    this.#taken++;
    return true;
  }

  /** Gives back a slot taken with `tryTake()`. */
  give(): void {
    if (this.#taken > 0) this.#taken--;
  }
}

/** The SDK's wording when a server's subscription bound is reached (digest §1.8: -32603, HTTP 200). */
export const LISTEN_LIMIT_MESSAGE = 'Subscription limit reached';

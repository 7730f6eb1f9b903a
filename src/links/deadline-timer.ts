/** Something with a deadline on the `performance.now()` clock; Infinity for none. */
export interface Deadlined {
  deadline: number;
}

/**
 * The deadlines of many items on one timer, armed for the earliest. A setTimeout
 * per call and a clearTimeout when it settles cost a timer object and a closure
 * on every call, though nearly every call settles long before its deadline.
 * Settled items simply drop out of `live`; a timer that fires for one of them
 * rescans and re-arms for the earliest deadline still pending. The timer is
 * unref'd: it never keeps the process alive on its own.
 */
export class DeadlineTimer<T extends Deadlined> {
  private timer: NodeJS.Timeout | undefined;
  private armedFor = Infinity;

  constructor(
    /** The items still pending (their deadlines are read at each check). */
    private readonly live: () => Iterable<T>,
    /** Called once for each item whose deadline has passed. */
    private readonly expire: (item: T) => void,
  ) {}

  /** Makes sure the timer fires by `item.deadline` (call after setting it). */
  watch(item: T): void {
    const at = item.deadline;
    if (at >= this.armedFor) return;
    clearTimeout(this.timer);
    this.armedFor = at;
    this.timer = setTimeout(this.fire, Math.max(1, Math.ceil(at - performance.now())));
    this.timer.unref();
  }

  /** Stops the timer (the owner has nothing pending any more, for good). */
  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.armedFor = Infinity;
  }

  private readonly fire = (): void => {
    this.timer = undefined;
    this.armedFor = Infinity;
    const now = performance.now();
    const due: T[] = [];
    let next: T | undefined;
    for (const item of this.live()) {
      if (item.deadline <= now) due.push(item);
      else if (item.deadline < (next?.deadline ?? Infinity)) next = item;
    }
    // A timer that fired late (a busy event loop) may find several due: expire them earliest first.
    due.sort((a, b) => a.deadline - b.deadline);
    for (const item of due) this.expire(item);
    if (next) this.watch(next);
  };
}

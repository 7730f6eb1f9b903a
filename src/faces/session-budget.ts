/**
 * The bound on downstream legacy sessions across every face (`--max-sessions`):
 * Streamable HTTP, http+sse and WebSocket sessions all draw from one budget,
 * so no mix of transports can exceed it. `--max-sessions-per-principal` bounds
 * one principal's share of it.
 */
export class SessionBudget {
  private inUse = 0;
  private readonly byPrincipal = new Map<string, number>();

  /** `onRefused` hears of each session refused for want of budget (metrics). */
  constructor(
    readonly max: number,
    readonly maxPerPrincipal = Number.POSITIVE_INFINITY,
    private readonly onRefused?: () => void,
  ) {}

  get used(): number {
    return this.inUse;
  }

  /**
   * A release function (idempotent) for one new session of `principal`, or
   * undefined when the budget, or that principal's share, is spent (`refusal` says which).
   */
  tryAcquire(principal = ''): (() => void) | undefined {
    const mine = this.byPrincipal.get(principal) ?? 0;
    if (this.inUse >= this.max || (principal !== '' && mine >= this.maxPerPrincipal)) {
      this.onRefused?.();
      return undefined;
    }
    this.inUse++;
    this.byPrincipal.set(principal, mine + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inUse--;
      const left = (this.byPrincipal.get(principal) ?? 1) - 1;
      if (left === 0) this.byPrincipal.delete(principal);
      else this.byPrincipal.set(principal, left);
    };
  }

  /** The message a refused client reads (HTTP 503, JSON-RPC -32000). */
  refusal(principal = ''): string {
    if (this.inUse < this.max && principal !== '') {
      return `Service Unavailable: this principal already holds ${this.maxPerPrincipal} sessions (--max-sessions-per-principal); close one or retry later`;
    }
    return `Service Unavailable: the bridge already serves ${this.max} sessions (--max-sessions); close one or retry later`;
  }
}

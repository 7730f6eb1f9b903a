/**
 * The bound on downstream legacy sessions across every face (`--max-sessions`):
 * Streamable HTTP, http+sse and WebSocket sessions all draw from one budget,
 * so no mix of transports can exceed it.
 */
export class SessionBudget {
  private inUse = 0;

  /** `onRefused` hears of each session refused for want of budget (metrics). */
  constructor(
    readonly max: number,
    private readonly onRefused?: () => void,
  ) {}

  get used(): number {
    return this.inUse;
  }

  /** A release function (idempotent) for one new session, or undefined when the budget is spent. */
  tryAcquire(): (() => void) | undefined {
    if (this.inUse >= this.max) {
      this.onRefused?.();
      return undefined;
    }
    this.inUse++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inUse--;
    };
  }

  /** The message a refused client reads (HTTP 503, JSON-RPC -32000). */
  refusal(): string {
    return `Service Unavailable: the bridge already serves ${this.max} sessions (--max-sessions); close one or retry later`;
  }
}

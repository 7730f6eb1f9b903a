/** How crash backoff behaves. */
export interface CrashBackoffOptions {
  /** A child that exits sooner than this after start counts as a quick exit. */
  quickExitMs?: number;
  /** Delay after the second quick exit in a row; doubles with each further one. */
  baseDelayMs?: number;
  maxDelayMs?: number;
}

/**
 * Exponential respawn delay for children that keep dying right after start. The
 * first quick exit costs nothing (a one-off crash restarts at once); a child that
 * lived longer than `quickExitMs` resets the count.
 */
export class CrashBackoff {
  private readonly quickExitMs: number;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private quick = 0;

  constructor(opts: CrashBackoffOptions = {}) {
    this.quickExitMs = opts.quickExitMs ?? 3_000;
    this.baseDelayMs = opts.baseDelayMs ?? 250;
    this.maxDelayMs = opts.maxDelayMs ?? 5_000;
  }

  /** Consecutive quick exits so far. */
  get quickExits(): number {
    return this.quick;
  }

  /** Records an unrequested exit after `livedMs`. */
  recordExit(livedMs: number): void {
    this.quick = livedMs < this.quickExitMs ? this.quick + 1 : 0;
  }

  /** How long to wait before the next spawn. */
  delayMs(): number {
    if (this.quick < 2) return 0;
    return Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** (this.quick - 2));
  }
}

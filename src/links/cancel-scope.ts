import type { AbortLike } from './safe-retry.js';

/**
 * The cancel of one upstream call: an AbortSignal's abort part as a plain
 * object. On the relay path an AbortController costs a few µs per call (its
 * signal is an EventTarget, and each listener another few); a call is cancelled
 * rarely, so the link uses this one and listens to the caller's signal once.
 */
export class CancelScope implements AbortLike {
  aborted = false;
  reason: unknown = undefined;
  private listeners: Array<() => void> | undefined;

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const listeners = this.listeners;
    this.listeners = undefined;
    if (listeners) for (const l of listeners) l();
  }

  addEventListener(_type: 'abort', listener: () => void): void {
    (this.listeners ??= []).push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const i = this.listeners?.indexOf(listener) ?? -1;
    if (i >= 0) this.listeners!.splice(i, 1);
  }
}

import type { AbortListener, CallSignal } from '../contracts/upstream.js';

/**
 * The cancel of one upstream call: an AbortSignal's abort part as a plain
 * object. On the relay path an AbortController costs a few µs per call (its
 * signal is an EventTarget, and each listener another few); a call is cancelled
 * rarely, so the link uses this one and listens to the caller's signal once.
 */
export class CancelScope implements CallSignal {
  aborted = false;
  reason: unknown = undefined;
  private listeners: AbortListener[] | undefined;

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const listeners = this.listeners;
    this.listeners = undefined;
    if (!listeners) return;
    for (const l of listeners) {
      if (typeof l === 'function') l();
      else l.handleEvent();
    }
  }

  addEventListener(_type: 'abort', listener: AbortListener): void {
    (this.listeners ??= []).push(listener);
  }

  removeEventListener(_type: 'abort', listener: AbortListener): void {
    const i = this.listeners?.indexOf(listener) ?? -1;
    if (i >= 0) this.listeners!.splice(i, 1);
  }
}

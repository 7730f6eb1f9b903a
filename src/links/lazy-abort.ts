import { CancelScope } from './cancel-scope.js';
import { LIVE_SLOT } from '../heap/live-set.js';

/**
 * A legacy session call's cancel: a CancelScope (what node:http exchanges and
 * timers listen to), with a real AbortSignal built only when something needs
 * one (a configured fetch). An AbortController per call cost an EventTarget and
 * a listener on it for every call (issue 17, row 6), though calls are rarely cancelled.
 */
export class LazyAbort extends CancelScope {
  [LIVE_SLOT] = -1;
  #controller: AbortController | undefined;

  /** The AbortSignal of this cancel, aborted with the same reason. */
  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.aborted) this.#controller.abort(this.reason);
    }
    return this.#controller.signal;
  }

  /** As AbortController.abort(): without a reason, an AbortError. */
  override abort(reason: unknown = new DOMException('This operation was aborted', 'AbortError')): void {
    if (this.aborted) return;
    super.abort(reason);
    this.#controller?.abort(reason);
  }
}

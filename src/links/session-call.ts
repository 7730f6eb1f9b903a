import type { RequestId } from '@modelcontextprotocol/server';
import type { CallHandlers } from '../contracts/upstream.js';
import type { RpcOutcome } from '../jsonrpc/messages.js';
import { LazyAbort } from './lazy-abort.js';
import type { PendingCall } from './post-exchange.js';

/** What a session does when one of its calls ends or its caller aborts it. */
export interface SessionCallOwner {
  /** The call settled: forget it (pending table, progress token). */
  ended(call: SessionCall): void;
  /** The caller's signal aborted: cancel the call upstream. */
  aborted(call: SessionCall): void;
}

/**
 * One call in flight on a Streamable HTTP session, with its deadline on the
 * session's shared timer (performance.now(); Infinity: none). A class rather
 * than an object literal whose `settle` and abort listener are closures: on
 * Node 20's V8 that shape kept every call's state alive past the next
 * young-generation GC, so all of it was promoted and left to the major GC
 * (issue 17: 1.5 MB promoted per scavenge on row 6, 10 KB with this class).
 * It is its own abort listener (`handleEvent`).
 */
export class SessionCall implements PendingCall {
  readonly ac = new LazyAbort();
  settled = false;
  #resolve: ((outcome: RpcOutcome) => void) | undefined;

  constructor(
    readonly id: RequestId,
    readonly method: string,
    readonly handlers: CallHandlers,
    readonly deadline: number,
    readonly timeoutMs: number,
    private readonly owner: SessionCallOwner,
    resolve: (outcome: RpcOutcome) => void,
  ) {
    this.#resolve = resolve;
  }

  /** Resolves the call once; later calls are ignored. */
  settle(outcome: RpcOutcome): void {
    if (this.settled) return;
    this.settled = true;
    this.handlers.signal?.removeEventListener('abort', this);
    this.owner.ended(this);
    const resolve = this.#resolve;
    this.#resolve = undefined;
    resolve?.(outcome);
  }

  /** The caller's signal aborted. */
  handleEvent(): void {
    this.owner.aborted(this);
  }
}

import type { JSONRPCNotification } from '@modelcontextprotocol/server';
import type { ModernRequestContext } from '../contracts/downstream.js';
import type { Principal } from '../identity/principal.js';
import { LIVE_SLOT } from '../heap/live-set.js';
import type { LazySseReply } from './lazy-sse-reply.js';

/**
 * One modern HTTP request being answered, and the context its handler gets.
 * The AbortController is built only when a handler reads `signal`: it costs
 * ~700 B and a few µs per request (an EventTarget), and a handler that can
 * listen through `onCancel` (a listen, the m2m relay) never needs it (issue 7).
 */
export class ModernInflight implements ModernRequestContext {
  readonly transport = 'http' as const;
  /** Set once the answer is being written: nothing more is sent for the request (digest §1.9). */
  settled = false;
  cancelled = false;
  [LIVE_SLOT] = -1;
  private controller: AbortController | undefined;
  private reason: Error | undefined;
  private listeners: Array<() => void> | undefined;

  constructor(
    private readonly reply: LazySseReply,
    readonly headers: Record<string, string | undefined>,
    readonly principal?: Principal,
  ) {}

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.cancelled) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  notify(n: JSONRPCNotification): void {
    if (!this.settled && !this.cancelled) this.reply.send(n);
  }

  onCancel(listener: () => void): void {
    if (this.cancelled) queueMicrotask(listener);
    else (this.listeners ??= []).push(listener);
  }

  /** The client went away, or the bridge is stopping: `signal` aborts and `onCancel` listeners run, once. */
  cancel(reason: Error): void {
    if (this.cancelled) return;
    this.cancelled = true;
    this.reason = reason;
    this.controller?.abort(reason);
    const listeners = this.listeners;
    this.listeners = undefined;
    if (listeners) for (const l of listeners) l();
  }
}

import type { JSONRPCNotification, RequestId } from '@modelcontextprotocol/server';
import type { LoggingLevel } from './modern-envelope.js';

/**
 * Where a request's own notifications go: the stream of the modern leg that is
 * currently waiting on the upstream call (digest §1.9: progress and messages
 * travel only on their request's response stream).
 */
export interface LegSink {
  notify(n: JSONRPCNotification): void;
  progressToken?: RequestId;
  logLevel?: LoggingLevel;
}

type Obj = Record<string, unknown>;

/**
 * Forwards upstream `notifications/progress` of one call to whichever modern
 * leg is attached. One upstream call can outlive several legs (MRTR rounds),
 * so progress continues on the retry's stream, under the retry's own token
 * when it sent one, else the original request's token; between legs (the call
 * is parked, no stream is open) progress is dropped, as the spec requires once
 * a response was sent.
 */
export class ProgressRelay {
  #leg: LegSink | undefined;
  readonly #originalToken: RequestId | undefined;

  constructor(originalToken: RequestId | undefined) {
    this.#originalToken = originalToken;
  }

  get leg(): LegSink | undefined {
    return this.#leg;
  }

  attach(leg: LegSink): void {
    this.#leg = leg;
  }

  detach(): void {
    this.#leg = undefined;
  }

  /** True when `n` went out on the attached leg. */
  forward(n: JSONRPCNotification): boolean {
    const leg = this.#leg;
    const token = leg?.progressToken ?? this.#originalToken;
    if (!leg || token === undefined) return false;
    const params = (n.params ?? {}) as Obj;
    leg.notify({ jsonrpc: '2.0', method: n.method, params: { ...params, progressToken: token } } as JSONRPCNotification);
    return true;
  }
}

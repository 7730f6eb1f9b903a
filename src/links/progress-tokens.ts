import type { JSONRPCNotification, ProgressToken, RequestId } from '@modelcontextprotocol/server';
import type { CallHandlers } from '../contracts/upstream.js';
import { IdTable } from '../heap/id-table.js';

interface Entry {
  callId: RequestId;
  original: ProgressToken;
}

/** What `route` needs of a call: its handlers, and whether it already ended. */
export interface ProgressTarget {
  handlers: CallHandlers;
  settled: boolean;
}

/**
 * Session-unique progress tokens (digest §5.5): the caller's token is replaced
 * on the way up, because servers and SDKs route progress by token and two
 * callers may pick the same one, and mapped back on each notification.
 */
export class ProgressTokens {
  private next = 1;
  private readonly byWire = new IdTable<ProgressToken, Entry>();
  private readonly byCall = new IdTable<RequestId, ProgressToken>();

  /** Params with `_meta.progressToken` replaced, or the same params when there is none. */
  rewrite(params: Record<string, unknown> | undefined, callId: RequestId): Record<string, unknown> | undefined {
    const meta = params?._meta as Record<string, unknown> | undefined;
    const original = meta?.progressToken as ProgressToken | undefined;
    if (typeof original !== 'string' && typeof original !== 'number') return params;
    const wire = `progress-${this.next++}`;
    this.byWire.set(wire, { callId, original });
    this.byCall.set(callId, wire);
    return { ...params, _meta: { ...meta, progressToken: wire } };
  }

  /** Hands a progress notification to its call with the original token; false when no call owns it. */
  route(n: JSONRPCNotification, lookup: (callId: RequestId) => ProgressTarget | undefined): boolean {
    const token = (n.params as { progressToken?: ProgressToken } | undefined)?.progressToken;
    const entry = token === undefined ? undefined : this.byWire.get(token);
    if (!entry) return false;
    const call = lookup(entry.callId);
    if (call && !call.settled) {
      call.handlers.onNotification?.({ ...n, params: { ...n.params, progressToken: entry.original } } as JSONRPCNotification);
    }
    return true;
  }

  release(callId: RequestId): void {
    const wire = this.byCall.get(callId);
    if (wire === undefined) return;
    this.byCall.delete(callId);
    this.byWire.delete(wire);
  }
}

import type { OutboundRequest } from '../contracts/upstream.js';
import type { RpcOutcome } from '../jsonrpc/messages.js';

type Obj = Record<string, unknown>;

/**
 * The state a legacy server keeps per session that was set through it: the
 * log level and the resource subscriptions. A session the server forgot
 * (restart, expiry) is re-initialized and given this state again, so its
 * owner never notices (digest §4.3 Sessions).
 */
export class SessionMemo {
  private level: Obj | undefined;
  private readonly uris = new Set<string>();

  /** Records what a successful call changed. */
  remember(method: string, params: Obj | undefined, outcome: RpcOutcome): void {
    if ('error' in outcome) return;
    const uri = params?.uri;
    if (method === 'logging/setLevel') this.level = params;
    else if (method === 'resources/subscribe' && typeof uri === 'string') this.uris.add(uri);
    else if (method === 'resources/unsubscribe' && typeof uri === 'string') this.uris.delete(uri);
  }

  /** The requests that restore it on a fresh session, log level first. */
  replay(): OutboundRequest[] {
    const out: OutboundRequest[] = [];
    if (this.level) out.push({ method: 'logging/setLevel', params: this.level });
    for (const uri of this.uris) out.push({ method: 'resources/subscribe', params: { uri } });
    return out;
  }
}

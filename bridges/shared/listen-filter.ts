import type { JSONRPCNotification, RequestId } from '@modelcontextprotocol/server';
import { RpcCode } from '../../src/jsonrpc/codes.js';
import { RpcError } from '../../src/errors.js';

/**
 * The `subscriptions/listen` filter (digest §1.8): which part of a requested
 * filter a server honours given its capabilities, and which notifications a
 * listen receives. Request-scoped notifications (progress, message) never
 * match: they do not belong on a listen stream.
 */

export const SUBSCRIPTION_ID_META_KEY = 'io.modelcontextprotocol/subscriptionId';

/** The core `SubscriptionFilter` fields. */
export interface SubscriptionFilterShape {
  toolsListChanged?: boolean;
  promptsListChanged?: boolean;
  resourcesListChanged?: boolean;
  resourceSubscriptions?: string[];
}

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Boolean flag of the filter ↔ its notification ↔ the server capability that makes it honourable. */
const FLAGS = [
  { flag: 'toolsListChanged', method: 'notifications/tools/list_changed', cap: ['tools', 'listChanged'] },
  { flag: 'promptsListChanged', method: 'notifications/prompts/list_changed', cap: ['prompts', 'listChanged'] },
  { flag: 'resourcesListChanged', method: 'notifications/resources/list_changed', cap: ['resources', 'listChanged'] },
] as const;

const RESOURCE_UPDATED = 'notifications/resources/updated';

function hasCap(caps: Obj, [group, flag]: readonly [string, string]): boolean {
  const g = caps[group];
  return isObj(g) && g[flag] === true;
}

/**
 * Filters of list flags only, one per combination: most listens ask for no
 * URIs, and they share these instead of holding a filter each (frozen, since
 * every such listen and its acknowledgement point at the same object).
 */
const FLAGS_ONLY: Array<ListenFilter | undefined> = [];

/** The honoured part of one listen's filter, and the matching rule. */
export class ListenFilter {
  /** What the acknowledgement reports (digest §1.8: unsupported types left out). */
  readonly honoured: SubscriptionFilterShape;

  private constructor(honoured: SubscriptionFilterShape) {
    this.honoured = honoured;
  }

  /**
   * Validates the requested filter (required object; -32602 otherwise) and keeps
   * only what `serverCaps` supports: `*.listChanged` for the list flags,
   * `resources.subscribe` for `resourceSubscriptions`. Unknown fields (e.g. the
   * tasks extension's `taskIds`) are not honoured.
   */
  static honour(requested: unknown, serverCaps: unknown): ListenFilter {
    if (!isObj(requested)) {
      throw new RpcError(RpcCode.InvalidParams, 'subscriptions/listen requires params.notifications (a SubscriptionFilter object)');
    }
    const caps = isObj(serverCaps) ? serverCaps : {};
    let mask = 0;
    for (let i = 0; i < FLAGS.length; i++) {
      const f = FLAGS[i];
      const v = requested[f.flag];
      if (v !== undefined && typeof v !== 'boolean') throw new RpcError(RpcCode.InvalidParams, `notifications.${f.flag} must be a boolean`);
      if (v === true && hasCap(caps, f.cap)) mask |= 1 << i;
    }
    const uris = requested.resourceSubscriptions;
    if (uris !== undefined && (!Array.isArray(uris) || uris.some((u) => typeof u !== 'string'))) {
      throw new RpcError(RpcCode.InvalidParams, 'notifications.resourceSubscriptions must be an array of strings');
    }
    if (!(Array.isArray(uris) && uris.length > 0 && hasCap(caps, ['resources', 'subscribe']))) return ListenFilter.flagsOnly(mask);
    const honoured = flagsShape(mask);
    honoured.resourceSubscriptions = [...new Set(uris as string[])];
    return new ListenFilter(honoured);
  }

  /** The shared filter for the list flags in `mask` (bit i: FLAGS[i]). */
  private static flagsOnly(mask: number): ListenFilter {
    let filter = FLAGS_ONLY[mask];
    if (!filter) {
      filter = new ListenFilter(Object.freeze(flagsShape(mask)));
      FLAGS_ONLY[mask] = filter;
    }
    return filter;
  }

  /** The URIs to subscribe upstream. */
  get uris(): string[] {
    return this.honoured.resourceSubscriptions ?? [];
  }

  get isEmpty(): boolean {
    return FLAGS.every((f) => !this.honoured[f.flag]) && this.uris.length === 0;
  }

  /** A copy without the URIs that could not be subscribed upstream. */
  without(failedUris: string[]): ListenFilter {
    if (failedUris.length === 0) return this;
    const left = this.uris.filter((u) => !failedUris.includes(u));
    const honoured: SubscriptionFilterShape = { ...this.honoured };
    if (left.length > 0) honoured.resourceSubscriptions = left;
    else delete honoured.resourceSubscriptions;
    return new ListenFilter(honoured);
  }

  /** True when this listen asked for `n` (resources/updated: exact URI match, as the SDK does). */
  accepts(n: { method: string; params?: unknown }): boolean {
    const f = FLAGS.find((x) => x.method === n.method);
    if (f) return this.honoured[f.flag] === true;
    if (n.method !== RESOURCE_UPDATED) return false;
    const uri = isObj(n.params) ? n.params.uri : undefined;
    return typeof uri === 'string' && this.uris.includes(uri);
  }
}

/** The honoured shape of the list flags in `mask`, in FLAGS order (the acknowledgement's key order). */
function flagsShape(mask: number): SubscriptionFilterShape {
  const honoured: SubscriptionFilterShape = {};
  for (let i = 0; i < FLAGS.length; i++) if (mask & (1 << i)) honoured[FLAGS[i].flag] = true;
  return honoured;
}

/** `n` with the listen's id in `params._meta` (digest §1.2, §1.8); other `_meta` keys kept. */
export function stampSubscription(n: { method: string; params?: unknown }, subscriptionId: RequestId): JSONRPCNotification {
  const params = isObj(n.params) ? n.params : {};
  const meta = isObj(params._meta) ? params._meta : {};
  return {
    jsonrpc: '2.0',
    method: n.method,
    params: { ...params, _meta: { ...meta, [SUBSCRIPTION_ID_META_KEY]: subscriptionId } },
  } as JSONRPCNotification;
}

/** The acknowledgement that must be the first message of a listen (digest §1.8). */
export function acknowledgement(subscriptionId: RequestId, filter: ListenFilter): JSONRPCNotification {
  return stampSubscription({ method: 'notifications/subscriptions/acknowledged', params: { notifications: filter.honoured } }, subscriptionId);
}

import type { ClientRequest } from '@modelcontextprotocol/server';

/**
 * The client→server request methods a modern (2026-07-28) face knows, and what
 * each is there (digest §1.5). Requests that pass the face reach the bridge;
 * removed and unknown methods are answered `-32601` with HTTP 404 (§1.10).
 */

/** Core: served. Extension: passed to the bridge (the upstream decides). Removed: gone in 2026. */
export type ModernMethodStatus = 'core' | 'extension' | 'removed';

export interface ModernMethodEntry {
  status: ModernMethodStatus;
  /** May answer `resultType: "input_required"` (MRTR, digest §1.6). */
  mayNeedInput?: boolean;
  /** For removed methods: what a 2026 client does instead. */
  replacement?: string;
}

/** Methods that are not in the SDK's era-neutral ClientRequest union but that a client may still send. */
type ExtraMethod =
  | 'roots/list'
  | 'sampling/createMessage'
  | 'elicitation/create'
  | 'tasks/get'
  | 'tasks/update'
  | 'tasks/cancel'
  | 'tasks/result'
  | 'tasks/list';

type KnownMethod = ClientRequest['method'] | ExtraMethod;

/** Every known method; `satisfies` makes a method the SDK adds a compile error here until it is classified. */
export const MODERN_METHODS = {
  'server/discover': { status: 'core' },
  'tools/list': { status: 'core' },
  'tools/call': { status: 'core', mayNeedInput: true },
  'prompts/list': { status: 'core' },
  'prompts/get': { status: 'core', mayNeedInput: true },
  'resources/list': { status: 'core' },
  'resources/templates/list': { status: 'core' },
  'resources/read': { status: 'core', mayNeedInput: true },
  'completion/complete': { status: 'core' },
  'subscriptions/listen': { status: 'core' },
  // io.modelcontextprotocol/tasks extension (digest §1.12): the bridge relays, the upstream decides.
  'tasks/get': { status: 'extension' },
  'tasks/update': { status: 'extension' },
  'tasks/cancel': { status: 'extension' },
  initialize: { status: 'removed', replacement: 'server/discover and the per-request _meta envelope' },
  ping: { status: 'removed', replacement: 'HTTP keep-alives' },
  'logging/setLevel': { status: 'removed', replacement: "_meta['io.modelcontextprotocol/logLevel'] on each request" },
  'resources/subscribe': { status: 'removed', replacement: 'subscriptions/listen with notifications.resourceSubscriptions' },
  'resources/unsubscribe': { status: 'removed', replacement: 'closing the subscriptions/listen stream' },
  'roots/list': { status: 'removed', replacement: 'inputRequests inside an input_required result' },
  'sampling/createMessage': { status: 'removed', replacement: 'inputRequests inside an input_required result' },
  'elicitation/create': { status: 'removed', replacement: 'inputRequests inside an input_required result' },
  'tasks/result': { status: 'removed', replacement: 'tasks/get of the tasks extension' },
  'tasks/list': { status: 'removed' },
} as const satisfies Record<KnownMethod, ModernMethodEntry>;

/** The entry for `method`, or undefined when the method is unknown. */
export function modernMethod(method: string): ModernMethodEntry | undefined {
  return Object.hasOwn(MODERN_METHODS, method) ? (MODERN_METHODS as Record<string, ModernMethodEntry>)[method] : undefined;
}

/** Whether a modern face passes `method` to the bridge. */
export function isServedModernMethod(method: string): boolean {
  const entry = modernMethod(method);
  return entry !== undefined && entry.status !== 'removed';
}

/** The -32601 message for a method the modern face does not pass on. */
export function methodNotFoundMessage(method: string): string {
  const entry = modernMethod(method);
  if (entry?.status !== 'removed') return `Method not found: ${method}`;
  const instead = entry.replacement ? `; use ${entry.replacement}` : '';
  return `Method not found: ${method} (removed in protocol revision 2026-07-28${instead})`;
}

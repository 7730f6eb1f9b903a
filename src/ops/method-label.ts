/**
 * Bounded label values for metrics and span names: a method is named only when
 * it is one the protocol defines (any epoch), a tool only when the upstream's
 * own `tools/list` named it; everything else is `other`, so a client cannot
 * grow the series set by sending made-up names.
 */

const KNOWN_METHODS = new Set([
  'initialize',
  'ping',
  'server/discover',
  'tools/list',
  'tools/call',
  'prompts/list',
  'prompts/get',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'resources/subscribe',
  'resources/unsubscribe',
  'subscriptions/listen',
  'completion/complete',
  'logging/setLevel',
  'tasks/get',
  'tasks/list',
  'tasks/result',
  'tasks/cancel',
]);

/** The label for a request method: itself when the protocol defines it, else `other`. */
export function methodLabel(method: string): string {
  return KNOWN_METHODS.has(method) ? method : 'other';
}

/** Tool names seen in the upstream's `tools/list` results, at most this many (a server with more gets `other` for the rest). */
const MAX_TOOLS = 256;

/** The tool names an upstream listed; only those become label values. */
export class KnownTools {
  private readonly names = new Set<string>();

  /** Learns the names in a `tools/list` result. */
  learn(result: Record<string, unknown> | undefined): void {
    const tools = result?.tools;
    if (!Array.isArray(tools)) return;
    for (const t of tools) {
      if (this.names.size >= MAX_TOOLS) return;
      const name = (t as { name?: unknown } | null)?.name;
      if (typeof name === 'string' && name.length <= 128) this.names.add(name);
    }
  }

  /** The label for a tool name: itself when listed, else `other`. */
  label(name: unknown): string {
    return typeof name === 'string' && this.names.has(name) ? name : 'other';
  }
}

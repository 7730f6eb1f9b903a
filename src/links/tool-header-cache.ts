import { paramHeaderSpecs, paramHeadersFor, type ParamHeaderSpec } from '../wire/param-headers.js';

/** What one tool's `x-mcp-header` annotations say: its header specs, or why the tool is invalid. */
export type ToolHeaderEntry = { ok: true; specs: ParamHeaderSpec[] } | { ok: false; reason: string };

/**
 * The `x-mcp-header` declarations of a modern HTTP server's tools, learned from
 * the `tools/list` results that pass through the link (digest §2.5, §5.8), so a
 * `tools/call` can carry its `Mcp-Param-*` headers.
 */
export class ToolHeaderCache {
  private entries = new Map<string, ToolHeaderEntry>();

  /** True when the tool was seen in a `tools/list` result. */
  has(toolName: string): boolean {
    return this.entries.has(toolName);
  }

  /** The tool's entry, undefined when never seen. */
  entry(toolName: string): ToolHeaderEntry | undefined {
    return this.entries.get(toolName);
  }

  /** The tool's valid specs; undefined when unknown, invalid, or declaring none. */
  specsFor(toolName: string): ParamHeaderSpec[] | undefined {
    const e = this.entries.get(toolName);
    return e?.ok && e.specs.length > 0 ? e.specs : undefined;
  }

  /**
   * `Mcp-Param-*` headers for a call. An invalid tool gets none: a conforming
   * client drops it from tools/list, so a call naming it is the caller's choice.
   */
  headersFor(toolName: string, args: unknown): Record<string, string> {
    const specs = this.specsFor(toolName);
    return specs ? paramHeadersFor(specs, args) : {};
  }

  /** Adds (or overwrites) the tools of one `tools/list` page. Returns the entries of invalid tools. */
  record(tools: unknown): { name: string; reason: string }[] {
    const invalid: { name: string; reason: string }[] = [];
    if (!Array.isArray(tools)) return invalid;
    for (const tool of tools) {
      if (tool === null || typeof tool !== 'object') continue;
      const { name, inputSchema } = tool as { name?: unknown; inputSchema?: unknown };
      if (typeof name !== 'string') continue;
      const e = paramHeaderSpecs(inputSchema);
      this.entries.set(name, e);
      if (!e.ok) invalid.push({ name, reason: e.reason });
    }
    return invalid;
  }

  /** Forgets everything (a full refresh follows, or the list changed). */
  clear(): void {
    this.entries = new Map();
  }
}

import { paramHeaderSpecs, type ParamHeaderSpec } from '../../src/wire/param-headers.js';

/** A tool whose `x-mcp-header` annotations make it invalid, and why (digest §2.5). */
export interface InvalidTool {
  name: string;
  reason: string;
}

/**
 * The `x-mcp-header` declarations of the upstream's tools, learned from every
 * `tools/list` result that passes through the bridge, so the HTTP face can check
 * a client's `Mcp-Param-*` headers (digest §2.5, §2.6).
 */
export class ToolHeaderRegistry {
  readonly #specs = new Map<string, ParamHeaderSpec[]>();

  /**
   * Reads one `tools/list` page. Valid tools are remembered (a later page or list
   * overwrites), invalid ones forgotten and returned so the caller can drop them.
   */
  learn(tools: unknown): InvalidTool[] {
    const invalid: InvalidTool[] = [];
    if (!Array.isArray(tools)) return invalid;
    for (const tool of tools) {
      if (tool === null || typeof tool !== 'object') continue;
      const { name, inputSchema } = tool as { name?: unknown; inputSchema?: unknown };
      if (typeof name !== 'string') continue;
      const read = paramHeaderSpecs(inputSchema);
      if (read.ok) {
        this.#specs.set(name, read.specs);
      } else {
        this.#specs.delete(name);
        invalid.push({ name, reason: read.reason });
      }
    }
    return invalid;
  }

  /**
   * Learns one `tools/list` result and returns it without its invalid tools,
   * as a Streamable-HTTP client must see it (digest §2.5, §5.8), with what was dropped.
   */
  withoutInvalid(result: Record<string, unknown>): { result: Record<string, unknown>; dropped: InvalidTool[] } {
    const dropped = this.learn(result.tools);
    if (dropped.length === 0) return { result, dropped };
    const names = new Set(dropped.map((t) => t.name));
    const tools = (result.tools as unknown[]).filter((t) => !names.has((t as { name?: unknown }).name as string));
    return { result: { ...result, tools }, dropped };
  }

  /** The tool's declarations; undefined when the tool is unknown, invalid, or declares none. */
  specsFor(toolName: string): ParamHeaderSpec[] | undefined {
    const specs = this.#specs.get(toolName);
    return specs && specs.length > 0 ? specs : undefined;
  }

  /** True when the tool was seen valid in a `tools/list` result. */
  knows(toolName: string): boolean {
    return this.#specs.has(toolName);
  }
}

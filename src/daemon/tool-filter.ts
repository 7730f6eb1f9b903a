import type { JSONRPCRequest, JSONRPCResponse } from '@modelcontextprotocol/server';
import picomatch from 'picomatch';
import type { LegacyHandler, LegacySessionHandler, ModernHandler } from '../contracts/downstream.js';
import { RpcCode } from '../jsonrpc/codes.js';
import { errorResponse } from '../jsonrpc/messages.js';

/**
 * Which upstream tools clients may see and call (`allowTools` / `denyTools`,
 * `--allow-tool` / `--deny-tool`): glob lists; with an allow list only the
 * tools it matches pass, and a deny match hides a tool whatever allow says.
 */
export class ToolFilter {
  private readonly allow: ((name: string) => boolean) | undefined;
  private readonly deny: ((name: string) => boolean) | undefined;

  private constructor(allow: string[], deny: string[]) {
    // Tool names are not file names: a leading `.` is nothing special (tool names hold no `/`, SEP-986).
    const opts = { dot: true };
    this.allow = allow.length > 0 ? picomatch(allow, opts) : undefined;
    this.deny = deny.length > 0 ? picomatch(deny, opts) : undefined;
  }

  /** A filter, or undefined when neither list has an entry (nothing to wrap). */
  static from(allow: string[] = [], deny: string[] = []): ToolFilter | undefined {
    return allow.length === 0 && deny.length === 0 ? undefined : new ToolFilter(allow, deny);
  }

  allows(name: string): boolean {
    if (this.allow && !this.allow(name)) return false;
    return !(this.deny && this.deny(name));
  }

  /**
   * The answer for a request the filter stops before it goes upstream (a call
   * of a hidden tool, -32602 as for any unknown tool), or undefined to pass it on.
   */
  refusal(req: JSONRPCRequest): JSONRPCResponse | undefined {
    if (req.method !== 'tools/call') return undefined;
    const name = (req.params as { name?: unknown } | undefined)?.name;
    if (typeof name !== 'string' || this.allows(name)) return undefined;
    return errorResponse(req.id, { code: RpcCode.InvalidParams, message: `Unknown tool: ${name}` });
  }

  /** A `tools/list` answer without the hidden tools; a new object, so no relay sends the upstream's bytes. */
  filterAnswer(req: JSONRPCRequest, answer: JSONRPCResponse): JSONRPCResponse {
    if (req.method !== 'tools/list' || !('result' in answer)) return answer;
    const tools = (answer.result as { tools?: unknown }).tools;
    if (!Array.isArray(tools)) return answer;
    const kept = tools.filter((t) => typeof (t as { name?: unknown })?.name !== 'string' || this.allows((t as { name: string }).name));
    return { ...answer, result: { ...answer.result, tools: kept } };
  }

  /** The modern handler, filtered: hidden tools are not listed, not callable, and have no `Mcp-Param-*` declarations. */
  wrapModern(h: ModernHandler): ModernHandler {
    return {
      handle: (req, ctx) => {
        const refused = this.refusal(req);
        return refused ? Promise.resolve(refused) : h.handle(req, ctx).then((answer) => this.filterAnswer(req, answer));
      },
      paramHeaders: h.paramHeaders ? (tool) => (this.allows(tool) ? h.paramHeaders!(tool) : undefined) : undefined,
      drain: h.drain ? () => h.drain!() : undefined,
      close: () => h.close(),
    };
  }

  /** The legacy handler, its sessions filtered the same way. */
  wrapLegacy(h: LegacyHandler): LegacyHandler {
    return {
      openSession: async (params, info, channel) => {
        const opened = await h.openSession(params, info, channel);
        return { result: opened.result, session: this.wrapSession(opened.session) };
      },
      close: () => h.close(),
    };
  }

  private wrapSession(s: LegacySessionHandler): LegacySessionHandler {
    return {
      handleRequest: (req, ctx) => {
        const refused = this.refusal(req);
        return refused ? Promise.resolve(refused) : s.handleRequest(req, ctx).then((answer) => this.filterAnswer(req, answer));
      },
      handleNotification: (n) => s.handleNotification(n),
      close: () => s.close(),
    };
  }
}

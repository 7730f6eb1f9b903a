import type { JSONRPCRequest, JSONRPCResponse } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import type { ModernHandler, ModernRequestContext } from '../../src/contracts/downstream.js';
import { ToolFilter } from '../../src/daemon/tool-filter.js';

const TOOLS = ['echo', 'get-env', 'get-sum', 'trigger-sampling-request', 'read.file', '.hidden'];

describe('ToolFilter', () => {
  const cases: Array<[string[], string[], string[]]> = [
    [['*'], [], TOOLS],
    [['get-*'], [], ['get-env', 'get-sum']],
    [[], ['get-env', 'trigger-*'], ['echo', 'get-sum', 'read.file', '.hidden']],
    [['get-*', 'echo'], ['get-env'], ['echo', 'get-sum']],
    [['read.*'], [], ['read.file']],
    [['{echo,get-sum}'], [], ['echo', 'get-sum']],
    [['*'], ['.*'], ['echo', 'get-env', 'get-sum', 'trigger-sampling-request', 'read.file']],
  ];
  it.each(cases)('allow %j deny %j keeps %j', (allow, deny, kept) => {
    const f = ToolFilter.from(allow, deny)!;
    expect(TOOLS.filter((t) => f.allows(t))).toEqual(kept);
  });

  it('is absent when neither list has an entry', () => {
    expect(ToolFilter.from([], [])).toBeUndefined();
    expect(ToolFilter.from()).toBeUndefined();
  });

  it('wraps a modern handler: tools/list filtered (a new object), a hidden call refused -32602 without reaching the handler, param headers hidden', async () => {
    const seen: string[] = [];
    const list: JSONRPCResponse = { jsonrpc: '2.0', id: 1, result: { tools: TOOLS.map((name) => ({ name, inputSchema: { type: 'object' } })), nextCursor: 'c' } };
    const inner: ModernHandler = {
      handle: async (req) => {
        seen.push(req.method);
        return req.method === 'tools/list' ? list : { jsonrpc: '2.0', id: req.id, result: { content: [] } };
      },
      paramHeaders: () => [{ name: 'Region', path: ['region'] }] as never,
      close: async () => {},
    };
    const h = ToolFilter.from([], ['get-*'])!.wrapModern(inner);
    const ctx = {} as ModernRequestContext;
    const listed = await h.handle({ jsonrpc: '2.0', id: 1, method: 'tools/list' } as JSONRPCRequest, ctx);
    expect(listed).not.toBe(list);
    const result = (listed as unknown as { result: { tools: Array<{ name: string }>; nextCursor: string } }).result;
    expect(result).toMatchObject({ nextCursor: 'c' });
    expect(result.tools.map((t) => t.name)).toEqual(['echo', 'trigger-sampling-request', 'read.file', '.hidden']);
    const refused = await h.handle({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'get-env', arguments: {} } } as JSONRPCRequest, ctx);
    expect(refused).toEqual({ jsonrpc: '2.0', id: 2, error: { code: -32602, message: 'Unknown tool: get-env' } });
    expect(seen).toEqual(['tools/list']);
    await h.handle({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'echo' } } as JSONRPCRequest, ctx);
    expect(seen).toEqual(['tools/list', 'tools/call']);
    expect(h.paramHeaders!('get-env')).toBeUndefined();
    expect(h.paramHeaders!('echo')).toBeDefined();
  });
});

import { describe, expect, it } from 'vitest';
import { checkStandardHeaders, mcpNameFor, modernRequestHeaders } from '../../src/wire/modern-headers.js';

const V = '2026-07-28';
const meta = { _meta: { 'io.modelcontextprotocol/protocolVersion': V } };

describe('mcpNameFor', () => {
  it.each([
    ['tools/call', { name: 'echo' }, 'echo'],
    ['prompts/get', { name: 'p' }, 'p'],
    ['resources/read', { uri: 'file:///x' }, 'file:///x'],
    ['tasks/get', { taskId: 't1' }, 't1'],
    ['tasks/cancel', { taskId: 't1' }, 't1'],
    ['tools/list', { name: 'ignored' }, undefined],
    ['tools/call', undefined, undefined],
    ['toString', {}, undefined],
  ] as const)('%s %j → %s', (method, params, want) => {
    expect(mcpNameFor(method, params as Record<string, unknown> | undefined)).toBe(want);
  });
});

describe('modernRequestHeaders', () => {
  it('sends version, method and an encoded name', () => {
    expect(modernRequestHeaders({ method: 'tools/call', params: { ...meta, name: 'grüß' } }, V)).toEqual({
      'MCP-Protocol-Version': V,
      'Mcp-Method': 'tools/call',
      'Mcp-Name': '=?base64?Z3LDvMOf?=',
    });
  });
  it('omits Mcp-Name for methods without one', () => {
    expect(modernRequestHeaders({ method: 'server/discover', params: meta }, V)).toEqual({ 'MCP-Protocol-Version': V, 'Mcp-Method': 'server/discover' });
  });
});

describe('checkStandardHeaders', () => {
  const call = { method: 'tools/call', params: { ...meta, name: 'bar' } };
  const good = { 'mcp-protocol-version': V, 'mcp-method': 'tools/call', 'mcp-name': 'bar' };
  const cases: { name: string; headers: Record<string, string | undefined>; body?: typeof call | { method: string; params?: Record<string, unknown> }; problem?: string }[] = [
    { name: 'matching headers pass', headers: good },
    { name: 'a base64 Mcp-Name is decoded first', headers: { ...good, 'mcp-name': '=?base64?YmFy?=' } },
    { name: 'Mcp-Name is not required on tools/list', headers: { 'mcp-protocol-version': V, 'mcp-method': 'tools/list' }, body: { method: 'tools/list', params: meta } },
    { name: 'missing MCP-Protocol-Version', headers: { ...good, 'mcp-protocol-version': undefined }, problem: 'Header mismatch: required header MCP-Protocol-Version is missing' },
    { name: 'version differs from _meta', headers: { ...good, 'mcp-protocol-version': '2025-11-25' }, problem: "Header mismatch: MCP-Protocol-Version header value '2025-11-25' does not match body value '2026-07-28'" },
    { name: 'missing Mcp-Method', headers: { ...good, 'mcp-method': undefined }, problem: 'Header mismatch: required header Mcp-Method is missing' },
    { name: 'method values are case-sensitive', headers: { ...good, 'mcp-method': 'Tools/Call' }, problem: "Header mismatch: Mcp-Method header value 'Tools/Call' does not match body value 'tools/call'" },
    { name: 'missing Mcp-Name on tools/call', headers: { ...good, 'mcp-name': undefined }, problem: 'Header mismatch: required header Mcp-Name is missing' },
    { name: 'Mcp-Name differs (digest §2.6 example)', headers: { ...good, 'mcp-name': 'foo' }, problem: "Header mismatch: Mcp-Name header value 'foo' does not match body value 'bar'" },
    { name: 'invalid characters', headers: { ...good, 'mcp-name': 'b\nar' }, problem: 'Header mismatch: Mcp-Name header contains invalid characters' },
  ];
  it.each(cases)('$name', ({ headers, body, problem }) => {
    expect(checkStandardHeaders(headers, body ?? call)?.message).toBe(problem);
  });
});

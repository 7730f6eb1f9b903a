import { describe, expect, it } from 'vitest';
import { classifyPost } from '../../src/faces/classify-post.js';

const PV = 'io.modelcontextprotocol/protocolVersion';
const modernMeta = { [PV]: '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
const modernReq = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: modernMeta } };
const legacyReq = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
const init = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c', version: '1' } } };
const KNOWN = 'known-session';
const known = (id: string) => id === KNOWN;

type Want = 'legacy' | 'modern' | { status: number; code: number };
const rows: Array<{ name: string; body: unknown; headers?: Record<string, string>; want: Want }> = [
  { name: 'initialize without an envelope is legacy', body: init, want: 'legacy' },
  { name: 'initialize with a 2025 header is legacy', body: init, headers: { 'mcp-protocol-version': '2025-06-18' }, want: 'legacy' },
  { name: 'initialize with a modern header is a header mismatch', body: init, headers: { 'mcp-protocol-version': '2026-07-28' }, want: { status: 400, code: -32020 } },
  { name: 'initialize with an envelope is modern (the ladder answers -32601)', body: { ...init, params: { _meta: modernMeta } }, want: 'modern' },
  { name: 'a request with the envelope claim is modern', body: modernReq, want: 'modern' },
  { name: 'the envelope wins over a known session id', body: modernReq, headers: { 'mcp-session-id': KNOWN }, want: 'modern' },
  { name: 'a claim-less request on a known session is legacy', body: legacyReq, headers: { 'mcp-session-id': KNOWN, 'mcp-protocol-version': '2026-07-28' }, want: 'legacy' },
  { name: 'a claim-less request with a modern header is modern (envelope missing)', body: legacyReq, headers: { 'mcp-protocol-version': '2026-07-28' }, want: 'modern' },
  { name: 'a claim-less request with an unknown session is legacy (404 there)', body: legacyReq, headers: { 'mcp-session-id': 'gone' }, want: 'legacy' },
  { name: 'a claim-less request without anything is legacy', body: legacyReq, want: 'legacy' },
  { name: 'a legacy batch is legacy', body: [legacyReq, { jsonrpc: '2.0', method: 'notifications/initialized' }], headers: { 'mcp-session-id': KNOWN }, want: 'legacy' },
  { name: 'a batch with a modern element is refused', body: [legacyReq, modernReq], want: { status: 400, code: -32600 } },
  { name: 'an empty batch is refused', body: [], want: { status: 400, code: -32600 } },
  { name: 'a posted response without a session is refused', body: { jsonrpc: '2.0', id: 'mcp-bridge-1', result: {} }, want: { status: 400, code: -32600 } },
  { name: 'a posted response with a session is legacy', body: { jsonrpc: '2.0', id: 'mcp-bridge-1', result: {} }, headers: { 'mcp-session-id': KNOWN }, want: 'legacy' },
  { name: 'a modern notification is modern', body: { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } }, headers: { 'mcp-protocol-version': '2026-07-28' }, want: 'modern' },
  { name: 'a claim-less notification without headers is legacy', body: { jsonrpc: '2.0', method: 'notifications/initialized' }, want: 'legacy' },
  { name: 'a non-message without a session goes to the modern ladder (-32600)', body: { hello: 'world' }, want: 'modern' },
  { name: 'a non-message on a known session is legacy', body: { hello: 'world' }, headers: { 'mcp-session-id': KNOWN }, want: 'legacy' },
];

describe('classifyPost', () => {
  it.each(rows)('$name', ({ body, headers, want }) => {
    const got = classifyPost(body, headers ?? {}, known);
    if (typeof want === 'string') expect(got).toEqual({ route: want });
    else expect(got).toMatchObject({ route: 'reject', status: want.status, error: { code: want.code } });
  });
});

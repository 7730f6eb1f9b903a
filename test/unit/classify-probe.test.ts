import { describe, expect, it } from 'vitest';
import {
  classifyDiscoverAnswer,
  classifyInitializeAnswer,
  classifySseAnswer,
  type ProbeDecision,
  type ProbeObservation,
} from '../../src/epochs/classify-probe.js';

const MODERN = ['2026-07-28'] as const;
const err = (code: number, message: string, data?: unknown) => ({ jsonrpc: '2.0', id: 'p', error: data === undefined ? { code, message } : { code, message, data } });
const ok = (result: Record<string, unknown>) => ({ jsonrpc: '2.0', id: 'p', result });
const discoverResult = { resultType: 'complete', supportedVersions: ['2026-07-28'], capabilities: { tools: {} } };
const initResult = { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'x', version: '1' } };
const json = 'application/json';
const html = 'text/html; charset=utf-8';

type Row = { name: string; o: ProbeObservation; verdict: ProbeDecision['verdict']; extra?: Record<string, unknown> };

describe('classifyDiscoverAnswer', () => {
  const rows: Row[] = [
    { name: 'SDK v2 modern server: 200 DiscoverResult', o: { kind: 'http', status: 200, contentType: json, message: ok(discoverResult) }, verdict: 'modern', extra: { discover: discoverResult } },
    { name: 'stdio DiscoverResult', o: { kind: 'stdio-reply', message: ok(discoverResult) }, verdict: 'modern' },
    { name: 'DiscoverResult without a mutual version → legacy', o: { kind: 'http', status: 200, contentType: json, message: ok({ supportedVersions: ['2027-01-01'] }) }, verdict: 'try-initialize' },
    { name: '400 -32022 naming a mutual modern version', o: { kind: 'http', status: 400, contentType: json, message: err(-32022, 'Unsupported', { supported: ['2027-01-01', '2026-07-28'], requested: '2027-01-01' }) }, verdict: 'retry-modern', extra: { version: '2026-07-28' } },
    { name: '400 -32022 listing only legacy versions', o: { kind: 'http', status: 400, contentType: json, message: err(-32022, 'Unsupported', { supported: ['2025-11-25'] }) }, verdict: 'try-initialize' },
    { name: '400 -32022 with an empty supported list', o: { kind: 'http', status: 400, contentType: json, message: err(-32022, 'Unsupported', { supported: [] }) }, verdict: 'try-initialize' },
    { name: 'stdio -32022 naming a mutual version', o: { kind: 'stdio-reply', message: err(-32022, 'Unsupported', { supported: ['2026-07-28'] }) }, verdict: 'retry-modern' },
    { name: 'stateless legacy server: 200 with -32601', o: { kind: 'http', status: 200, contentType: json, message: err(-32601, 'Method not found') }, verdict: 'try-initialize' },
    { name: 'server-everything streamableHttp: 400 -32000 no session', o: { kind: 'http', status: 400, contentType: json, message: err(-32000, 'Bad Request: No valid session ID provided') }, verdict: 'try-initialize' },
    { name: 'SDK v2 legacy transport: 400 -32000 server not initialized', o: { kind: 'http', status: 400, contentType: json, message: err(-32000, 'Bad Request: Server not initialized') }, verdict: 'try-initialize' },
    { name: 'expired session: 404 -32001 is not era evidence', o: { kind: 'http', status: 404, contentType: json, message: err(-32001, 'Session not found') }, verdict: 'try-initialize' },
    { name: '-32020 is not era evidence ([SDK])', o: { kind: 'http', status: 400, contentType: json, message: err(-32020, 'Header mismatch') }, verdict: 'try-initialize' },
    { name: 'server-everything sse / plain server: bare 404', o: { kind: 'http', status: 404, contentType: html }, verdict: 'try-initialize' },
    { name: 'bare 405', o: { kind: 'http', status: 405 }, verdict: 'try-initialize' },
    { name: '401 needs auth', o: { kind: 'http', status: 401, contentType: json }, verdict: 'auth-required' },
    { name: '403 needs auth', o: { kind: 'http', status: 403 }, verdict: 'auth-required' },
    { name: '5xx is not an era verdict', o: { kind: 'http', status: 502, contentType: html }, verdict: 'not-mcp' },
    { name: 'plain HTTP server: 200 HTML page', o: { kind: 'http', status: 200, contentType: html }, verdict: 'not-mcp' },
    { name: 'lenient legacy server: 200 with result {} (not a DiscoverResult) → legacy', o: { kind: 'http', status: 200, contentType: json, message: ok({}) }, verdict: 'try-initialize' },
    { name: 'lenient legacy server: 200 SSE with result {} → legacy', o: { kind: 'http', status: 200, contentType: 'text/event-stream', message: ok({}) }, verdict: 'try-initialize' },
    { name: '200 JSON-RPC result that is not a DiscoverResult → legacy', o: { kind: 'http', status: 200, contentType: json, message: ok({ hello: 'world' }) }, verdict: 'try-initialize' },
    { name: '200 with a JSON-RPC error that is not modern evidence → legacy', o: { kind: 'http', status: 200, contentType: json, message: err(-32000, 'Bad Request') }, verdict: 'try-initialize' },
    { name: '200 plain JSON that is not JSON-RPC', o: { kind: 'http', status: 200, contentType: json, message: { hello: 'world' } }, verdict: 'not-mcp' },
    { name: '200 JSON array that is not JSON-RPC', o: { kind: 'http', status: 200, contentType: json, message: [1, 2] }, verdict: 'not-mcp' },
    { name: '200 with an empty body', o: { kind: 'http', status: 200, contentType: json }, verdict: 'not-mcp' },
    { name: 'network error', o: { kind: 'network-error', message: 'ECONNREFUSED' }, verdict: 'unreachable' },
    { name: 'silent legacy stdio server: timeout', o: { kind: 'timeout' }, verdict: 'try-initialize' },
    { name: 'legacy stdio server that exits: closed', o: { kind: 'closed' }, verdict: 'try-initialize' },
    { name: 'legacy stdio server: -32602 before initialize', o: { kind: 'stdio-reply', message: err(-32602, 'Invalid params') }, verdict: 'try-initialize' },
    { name: 'legacy stdio server: any other reply', o: { kind: 'stdio-reply', message: { jsonrpc: '2.0', method: 'notifications/message' } }, verdict: 'try-initialize' },
  ];
  it.each(rows)('$name → $verdict', ({ o, verdict, extra }) => {
    const d = classifyDiscoverAnswer(o, MODERN);
    expect(d.verdict).toBe(verdict);
    expect(d.evidence).not.toBe('');
    if (extra) expect(d).toMatchObject(extra);
  });
});

describe('classifyInitializeAnswer', () => {
  const rows: (Row & { transport: 'http' | 'stdio' })[] = [
    { name: 'server-everything streamableHttp: InitializeResult', transport: 'http', o: { kind: 'http', status: 200, contentType: 'text/event-stream', message: ok(initResult), sessionId: 'abc' }, verdict: 'initialize', extra: { initializeResult: initResult } },
    { name: 'stdio InitializeResult', transport: 'stdio', o: { kind: 'stdio-reply', message: ok(initResult) }, verdict: 'initialize' },
    { name: 'SDK v2 modern-only server: 400 -32022 supported modern', transport: 'http', o: { kind: 'http', status: 400, contentType: json, message: err(-32022, 'Unsupported protocol version', { supported: ['2026-07-28'], requested: '2025-11-25' }) }, verdict: 'retry-modern', extra: { version: '2026-07-28' } },
    { name: 'modern-only stdio server: -32022', transport: 'stdio', o: { kind: 'stdio-reply', message: err(-32022, 'Unsupported', { supported: ['2026-07-28'] }) }, verdict: 'retry-modern' },
    { name: '-32022 without a mutual version', transport: 'http', o: { kind: 'http', status: 400, contentType: json, message: err(-32022, 'Unsupported', { supported: ['2030-01-01'] }) }, verdict: 'not-mcp' },
    { name: 'server-everything sse: bare 404 on POST', transport: 'http', o: { kind: 'http', status: 404, contentType: html }, verdict: 'try-sse' },
    { name: 'bare 405', transport: 'http', o: { kind: 'http', status: 405 }, verdict: 'try-sse' },
    { name: '400 with a non-modern JSON-RPC error', transport: 'http', o: { kind: 'http', status: 400, contentType: json, message: err(-32000, 'Bad Request') }, verdict: 'try-sse' },
    { name: 'stdio error reply', transport: 'stdio', o: { kind: 'stdio-reply', message: err(-32603, 'boom') }, verdict: 'not-mcp' },
    { name: 'stdio timeout', transport: 'stdio', o: { kind: 'timeout' }, verdict: 'not-mcp' },
    { name: 'plain HTTP server: 200 HTML', transport: 'http', o: { kind: 'http', status: 200, contentType: html }, verdict: 'not-mcp' },
    { name: 'result without capabilities', transport: 'http', o: { kind: 'http', status: 200, contentType: json, message: ok({ protocolVersion: '2025-06-18' }) }, verdict: 'not-mcp' },
    { name: '401', transport: 'http', o: { kind: 'http', status: 401 }, verdict: 'auth-required' },
    { name: '503', transport: 'http', o: { kind: 'http', status: 503 }, verdict: 'not-mcp' },
    { name: 'network error', transport: 'http', o: { kind: 'network-error', message: 'ECONNRESET' }, verdict: 'unreachable' },
  ];
  it.each(rows)('$name → $verdict', ({ o, transport, verdict, extra }) => {
    const d = classifyInitializeAnswer(o, transport);
    expect(d.verdict).toBe(verdict);
    if (extra) expect(d).toMatchObject(extra);
  });
});

describe('classifySseAnswer', () => {
  const rows: Row[] = [
    { name: 'server-everything sse: endpoint event', o: { kind: 'sse-endpoint', endpoint: '/message?sessionId=1' }, verdict: 'http+sse', extra: { endpoint: '/message?sessionId=1' } },
    { name: 'plain HTTP server: 404 without an endpoint', o: { kind: 'no-endpoint', status: 404, detail: 'not an event stream' }, verdict: 'not-mcp' },
    { name: 'stream with no endpoint event before timeout', o: { kind: 'timeout' }, verdict: 'not-mcp' },
    { name: '403', o: { kind: 'http', status: 403 }, verdict: 'auth-required' },
    { name: 'network error', o: { kind: 'network-error', message: 'ECONNREFUSED' }, verdict: 'unreachable' },
  ];
  it.each(rows)('$name → $verdict', ({ o, verdict, extra }) => {
    const d = classifySseAnswer(o);
    expect(d.verdict).toBe(verdict);
    if (extra) expect(d).toMatchObject(extra);
  });
});

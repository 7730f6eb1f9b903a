import { describe, expect, it } from 'vitest';
import { validateModernMessage, type ModernVerdict } from '../../src/faces/modern-validation.js';
import type { ParamHeaderSpec } from '../../src/contracts/downstream.js';

const V = '2026-07-28';
const PV = 'io.modelcontextprotocol/protocolVersion';
const CC = 'io.modelcontextprotocol/clientCapabilities';
const CI = 'io.modelcontextprotocol/clientInfo';
const LL = 'io.modelcontextprotocol/logLevel';

type Obj = Record<string, unknown>;

function envelope(overrides: Obj = {}): Obj {
  return { [PV]: V, [CC]: {}, [CI]: { name: 'test', version: '1.0.0' }, ...overrides };
}

function req(method: string, params: Obj = {}, meta: Obj | null = envelope(), id: unknown = 1): Obj {
  const p = meta === null ? params : { ...params, _meta: meta };
  return { jsonrpc: '2.0', id, method, params: p };
}

function note(method: string, params?: Obj): Obj {
  return params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params };
}

/** The headers a conforming client sends for `method` (lower-cased names). */
function hdr(method: string, extra: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return { 'mcp-protocol-version': V, 'mcp-method': method, ...extra };
}

const specs: Record<string, ParamHeaderSpec[]> = {
  region: [{ name: 'Region', path: ['region'], type: 'string' }],
  count: [{ name: 'Count', path: ['count'], type: 'integer' }],
  nested: [{ name: 'Flag', path: ['opts', 'flag'], type: 'boolean' }],
};
const paramHeaders = (tool: string) => specs[tool];

type Expect = { ok: 'request' | 'notification' } | { code: number; status: number; id?: unknown; data?: Obj; message?: RegExp };

interface Row {
  name: string;
  body: unknown;
  headers?: Record<string, string | undefined>;
  expect: Expect;
}

const rows: Row[] = [
  // ── rung 1: JSON-RPC shape (-32600, 400)
  { name: 'a batch array is refused', body: [req('tools/list')], headers: hdr('tools/list'), expect: { code: -32600, status: 400, id: null } },
  { name: 'a posted response is refused', body: { jsonrpc: '2.0', id: 1, result: {} }, headers: hdr('x'), expect: { code: -32600, status: 400, id: null } },
  { name: 'jsonrpc 1.0 is refused with its id', body: { ...req('tools/list'), jsonrpc: '1.0' }, expect: { code: -32600, status: 400, id: 1 } },
  { name: 'a numeric method is refused', body: { jsonrpc: '2.0', id: 'a', method: 7 }, expect: { code: -32600, status: 400, id: 'a' } },
  { name: 'a bare string is refused with id null', body: 'hello', expect: { code: -32600, status: 400, id: null } },
  { name: 'a request with id null is refused', body: req('tools/list', {}, envelope(), null), expect: { code: -32600, status: 400, id: null } },
  // ── rung 2: header/body version mismatch (-32020) comes before the envelope
  {
    name: 'header and body versions differ',
    body: req('tools/list', {}, envelope({ [PV]: '2025-11-25' })),
    headers: hdr('tools/list'),
    expect: { code: -32020, status: 400, data: { mismatch: { header: 'MCP-Protocol-Version', headerValue: V, body: '2025-11-25' } } },
  },
  {
    name: 'a version mismatch wins over a broken envelope',
    body: req('tools/list', {}, { [PV]: '2025-06-18' }),
    headers: hdr('tools/list'),
    expect: { code: -32020, status: 400 },
  },
  // ── rung 3: envelope (-32602, 400, data names the key)
  { name: 'no params at all', body: { jsonrpc: '2.0', id: 2, method: 'tools/list' }, expect: { code: -32602, status: 400, id: 2, data: { envelope: { key: 'params', problem: 'missing' } } } },
  { name: 'params without _meta', body: req('tools/list', {}, null), headers: hdr('tools/list'), expect: { code: -32602, status: 400, data: { envelope: { key: '_meta', problem: 'missing' } } } },
  { name: 'missing protocolVersion', body: req('tools/list', {}, { [CC]: {} }), expect: { code: -32602, status: 400, data: { envelope: { key: PV, problem: 'missing' } } } },
  { name: 'missing clientCapabilities', body: req('tools/list', {}, { [PV]: V }), expect: { code: -32602, status: 400, data: { envelope: { key: CC, problem: 'missing' } } } },
  { name: 'clientCapabilities is an array', body: req('tools/list', {}, envelope({ [CC]: [] })), expect: { code: -32602, status: 400, data: { envelope: { key: CC, problem: 'expected an object' } } } },
  { name: 'protocolVersion is a number', body: req('tools/list', {}, envelope({ [PV]: 20260728 })), expect: { code: -32602, status: 400, data: { envelope: { key: PV, problem: 'expected a string' } } } },
  { name: 'clientInfo without version', body: req('tools/list', {}, envelope({ [CI]: { name: 'x' } })), expect: { code: -32602, status: 400, data: { envelope: { key: CI } } } },
  { name: 'an unknown logLevel', body: req('tools/list', {}, envelope({ [LL]: 'verbose' })), expect: { code: -32602, status: 400, data: { envelope: { key: LL } } } },
  { name: 'a fractional progressToken', body: req('tools/list', {}, envelope({ progressToken: 1.5 })), expect: { code: -32602, status: 400, data: { envelope: { key: 'progressToken' } } } },
  { name: 'clientInfo may be absent', body: req('tools/list', {}, { [PV]: V, [CC]: {} }), expect: { ok: 'request' } },
  // ── rung 4: supported version (-32022, 400, data {supported, requested})
  { name: 'a legacy version in the envelope', body: req('tools/list', {}, envelope({ [PV]: '2025-11-25' })), expect: { code: -32022, status: 400, data: { supported: [V], requested: '2025-11-25' } } },
  {
    name: 'a future version with a matching header',
    body: req('tools/list', {}, envelope({ [PV]: '2027-01-01' })),
    headers: hdr('tools/list', { 'mcp-protocol-version': '2027-01-01' }),
    expect: { code: -32022, status: 400, data: { supported: [V], requested: '2027-01-01' } },
  },
  // ── rung 5: standard headers (-32020, 400)
  { name: 'missing MCP-Protocol-Version header', body: req('tools/list'), headers: { 'mcp-method': 'tools/list' }, expect: { code: -32020, status: 400, message: /MCP-Protocol-Version/ } },
  { name: 'missing Mcp-Method header', body: req('tools/list'), headers: { 'mcp-protocol-version': V }, expect: { code: -32020, status: 400, message: /Mcp-Method/ } },
  { name: 'Mcp-Method names another method', body: req('tools/list'), headers: hdr('prompts/list'), expect: { code: -32020, status: 400 } },
  { name: 'Mcp-Method values are case-sensitive', body: req('tools/list'), headers: hdr('Tools/List'), expect: { code: -32020, status: 400 } },
  { name: 'tools/call without Mcp-Name', body: req('tools/call', { name: 'echo' }), headers: hdr('tools/call'), expect: { code: -32020, status: 400, message: /Mcp-Name/ } },
  {
    name: 'Mcp-Name disagrees with params.name',
    body: req('tools/call', { name: 'bar' }),
    headers: hdr('tools/call', { 'mcp-name': 'foo' }),
    expect: { code: -32020, status: 400, message: /^Header mismatch: Mcp-Name header value 'foo' does not match body value 'bar'$/ },
  },
  { name: 'base64 Mcp-Name matches a non-ASCII name', body: req('tools/call', { name: 'Hello, 世界' }), headers: hdr('tools/call', { 'mcp-name': '=?base64?SGVsbG8sIOS4lueVjA==?=' }), expect: { ok: 'request' } },
  { name: 'base64 Mcp-Name with invalid base64', body: req('tools/call', { name: 'x' }), headers: hdr('tools/call', { 'mcp-name': '=?base64?@@@?=' }), expect: { code: -32020, status: 400 } },
  { name: 'Mcp-Name carrying CR/LF', body: req('tools/call', { name: 'a' }), headers: hdr('tools/call', { 'mcp-name': 'a\r\nx-evil: 1' }), expect: { code: -32020, status: 400, message: /invalid characters/ } },
  { name: 'resources/read mirrors params.uri', body: req('resources/read', { uri: 'file:///a.txt' }), headers: hdr('resources/read', { 'mcp-name': 'file:///a.txt' }), expect: { ok: 'request' } },
  { name: 'prompts/get with the wrong Mcp-Name', body: req('prompts/get', { name: 'greet' }), headers: hdr('prompts/get', { 'mcp-name': 'other' }), expect: { code: -32020, status: 400 } },
  { name: 'header rungs come before the method table', body: req('foo/bar'), headers: { 'mcp-protocol-version': V }, expect: { code: -32020, status: 400 } },
  // ── rung 6: method table (-32601, 404)
  { name: 'initialize with an envelope', body: req('initialize', { protocolVersion: V }), headers: hdr('initialize'), expect: { code: -32601, status: 404, message: /removed/ } },
  { name: 'ping is removed', body: req('ping'), headers: hdr('ping'), expect: { code: -32601, status: 404 } },
  { name: 'logging/setLevel is removed', body: req('logging/setLevel', { level: 'info' }), expect: { code: -32601, status: 404 } },
  { name: 'resources/subscribe is removed', body: req('resources/subscribe', { uri: 'a' }), expect: { code: -32601, status: 404 } },
  { name: 'resources/unsubscribe is removed', body: req('resources/unsubscribe', { uri: 'a' }), expect: { code: -32601, status: 404 } },
  { name: 'roots/list is removed', body: req('roots/list'), expect: { code: -32601, status: 404 } },
  { name: 'an unknown method', body: req('foo/bar'), headers: hdr('foo/bar'), expect: { code: -32601, status: 404, id: 1, message: /foo\/bar/ } },
  { name: 'tasks/get (extension) passes with Mcp-Name = taskId', body: req('tasks/get', { taskId: 't-1' }), headers: hdr('tasks/get', { 'mcp-name': 't-1' }), expect: { ok: 'request' } },
  { name: 'tasks/result (2025 tasks) is removed', body: req('tasks/result', { taskId: 't' }), expect: { code: -32601, status: 404 } },
  // ── rung 7: Mcp-Param-* (-32020, 400)
  { name: 'integer header 42.0 equals body 42', body: req('tools/call', { name: 'count', arguments: { count: 42 } }), headers: hdr('tools/call', { 'mcp-name': 'count', 'mcp-param-count': '42.0' }), expect: { ok: 'request' } },
  { name: 'integer header 43 differs from body 42', body: req('tools/call', { name: 'count', arguments: { count: 42 } }), headers: hdr('tools/call', { 'mcp-name': 'count', 'mcp-param-count': '43' }), expect: { code: -32020, status: 400, message: /Mcp-Param-Count/ } },
  { name: 'a declared param header is missing', body: req('tools/call', { name: 'region', arguments: { region: 'eu' } }), headers: hdr('tools/call', { 'mcp-name': 'region' }), expect: { code: -32020, status: 400, data: { mismatch: { header: 'Mcp-Param-Region' } } } },
  { name: 'a null body value needs no header', body: req('tools/call', { name: 'region', arguments: { region: null } }), headers: hdr('tools/call', { 'mcp-name': 'region' }), expect: { ok: 'request' } },
  { name: 'a base64 param header matches', body: req('tools/call', { name: 'region', arguments: { region: ' padded ' } }), headers: hdr('tools/call', { 'mcp-name': 'region', 'mcp-param-region': '=?base64?IHBhZGRlZCA=?=' }), expect: { ok: 'request' } },
  { name: 'a param header with LF', body: req('tools/call', { name: 'region', arguments: { region: 'eu' } }), headers: hdr('tools/call', { 'mcp-name': 'region', 'mcp-param-region': 'eu\nx' }), expect: { code: -32020, status: 400 } },
  { name: 'a nested boolean param header matches', body: req('tools/call', { name: 'nested', arguments: { opts: { flag: true } } }), headers: hdr('tools/call', { 'mcp-name': 'nested', 'mcp-param-flag': 'true' }), expect: { ok: 'request' } },
  { name: 'a tool without declarations needs no param headers', body: req('tools/call', { name: 'echo', arguments: { region: 'eu' } }), headers: hdr('tools/call', { 'mcp-name': 'echo' }), expect: { ok: 'request' } },
  { name: 'stdio skips every header rung', body: req('tools/call', { name: 'region', arguments: { region: 'eu' } }), expect: { ok: 'request' } },
  // ── notifications: no envelope or header required, present ones cross-checked
  { name: 'notifications/cancelled without an envelope', body: note('notifications/cancelled', { requestId: 1 }), expect: { ok: 'notification' } },
  { name: 'a notification with an envelope and headers', body: note('notifications/cancelled', { requestId: 1, _meta: envelope() }), headers: hdr('notifications/cancelled'), expect: { ok: 'notification' } },
  { name: 'a notification with mismatched versions', body: note('notifications/cancelled', { requestId: 1, _meta: envelope({ [PV]: '2025-11-25' }) }), headers: hdr('notifications/cancelled'), expect: { code: -32020, status: 400, id: null } },
  { name: 'a notification claiming a legacy version', body: note('notifications/cancelled', { requestId: 1, _meta: envelope({ [PV]: '2025-11-25' }) }), expect: { code: -32022, status: 400, id: null } },
  { name: 'a notification with the wrong Mcp-Method', body: note('notifications/cancelled', { requestId: 1 }), headers: hdr('notifications/progress'), expect: { code: -32020, status: 400 } },
  // ── accepted requests
  { name: 'tools/list on stdio', body: req('tools/list'), expect: { ok: 'request' } },
  { name: 'server/discover on HTTP', body: req('server/discover', {}, envelope(), 'd-1'), headers: hdr('server/discover'), expect: { ok: 'request' } },
  { name: 'subscriptions/listen on HTTP', body: req('subscriptions/listen', { notifications: { toolsListChanged: true } }), headers: hdr('subscriptions/listen'), expect: { ok: 'request' } },
];

function check(verdict: ModernVerdict, row: Row): void {
  const e = row.expect;
  if ('ok' in e) {
    expect(verdict.ok, JSON.stringify(verdict)).toBe(true);
    expect(e.ok in verdict).toBe(true);
    expect((verdict as { request?: unknown; notification?: unknown })[e.ok]).toBe(row.body);
    return;
  }
  expect(verdict.ok).toBe(false);
  if (verdict.ok) return;
  expect(verdict.error.code).toBe(e.code);
  expect(verdict.status).toBe(e.status);
  if ('id' in e) expect(verdict.id).toEqual(e.id);
  if (e.data) expect(verdict.error.data).toMatchObject(e.data);
  if (e.message) expect(verdict.error.message).toMatch(e.message);
}

describe('validateModernMessage', () => {
  it('has a row for every rung, code and status', () => {
    expect(rows.length).toBeGreaterThanOrEqual(30);
    const codes = new Set(rows.flatMap((r) => ('code' in r.expect ? [r.expect.code] : [])));
    expect([...codes].sort()).toEqual([-32602, -32601, -32600, -32022, -32020].sort());
  });

  it.each(rows)('$name', (row) => {
    check(validateModernMessage(row.body, row.headers, paramHeaders), row);
  });

  it('echoes the request id in every request-level refusal', () => {
    const verdict = validateModernMessage(req('ping', {}, envelope(), 'abc'), undefined);
    expect(verdict).toMatchObject({ ok: false, id: 'abc' });
  });
});

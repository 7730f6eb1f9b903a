import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { CLI_ENTRY, startCli, type RunningCli } from '../helpers/cli.js';
import { EVERYTHING_STDIO_COMMAND, stopProcess } from '../helpers/processes.js';
import { httpRequest, OpenSse, rawWs, wsFrame, type HttpSpec, type RawResponse } from '../helpers/raw-http.js';
import { waitFor } from '../helpers/wait-for.js';

/**
 * More than a hundred malformed inputs against the built CLI in front of
 * server-everything (stdio), across every face, each with the HTTP status and
 * JSON-RPC code it must get, while two well-behaved SDK v1 clients keep
 * calling `echo` and must see every answer right. Afterwards the bridge is
 * alive and serves a new client.
 */

const TOKEN = 'bad-input-token-0123456789abcdef';
const AUTH = { authorization: `Bearer ${TOKEN}` };
const MAX_BODY = 64 * 1024;
const MAX_HEADER = 8 * 1024;
const MODERN = '2026-07-28';
const ACCEPT_BOTH = 'application/json, text/event-stream';
const JSON_HEADERS = { 'content-type': 'application/json', accept: ACCEPT_BOTH };

interface Ctx {
  port: number;
  /** A live 2025-06-18 Streamable HTTP session. */
  session: string;
  /** A live http+sse session that was never initialized. */
  sseBare: string;
  /** A live, initialized 2024-11-05 http+sse session. */
  sseReady: string;
}

/** undefined: the body is not checked; null: there must be no JSON-RPC error body. */
type Code = number | null | undefined;

interface HttpCase {
  kind: 'http';
  name: string;
  spec: (c: Ctx) => HttpSpec;
  status: number;
  code: Code;
  check?: (r: RawResponse) => void;
}
interface WsUpgradeCase {
  kind: 'ws-upgrade';
  name: string;
  headers: Record<string, string | null>;
  path?: string;
  status: number;
  code: Code;
}
interface WsFrameCase {
  kind: 'ws-frame';
  name: string;
  /** Sent as a text frame (string) or binary frame (Buffer) on an open, uninitialized session. */
  frame: string | Buffer;
  code: number;
}
interface WsCloseCase {
  kind: 'ws-close';
  name: string;
  frames: Buffer[];
  closeCode: number;
}
interface SseStreamCase {
  kind: 'sse-stream';
  name: string;
  session: 'sseBare' | 'sseReady';
  body: Record<string, unknown> | unknown[];
  /** The id the error answer on the stream carries. */
  id: string | number | null;
  code: number;
}
type Case = HttpCase | WsUpgradeCase | WsFrameCase | WsCloseCase | SseStreamCase;

// ─── building inputs ────────────────────────────────────────────────────────

const json = (v: unknown) => JSON.stringify(v);
const nest = (n: number) => '['.repeat(n) + ']'.repeat(n);
const meta = (extra: Record<string, unknown> = {}) => ({ 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {}, ...extra });

/** POST /mcp with JSON headers and the token; `headers` override, a null value removes. */
function mcp(body: string | Buffer, headers: Record<string, string | null> = {}): (c: Ctx) => HttpSpec {
  return () => ({ method: 'POST', path: '/mcp', headers: merge({ ...JSON_HEADERS, ...AUTH }, headers), body });
}
/** A modern request with its envelope and standard headers; `headers` override, null removes. */
function modern(method: string, params: Record<string, unknown>, headers: Record<string, string | null> = {}, id: unknown = 1): (c: Ctx) => HttpSpec {
  const name = typeof params.name === 'string' ? params.name : typeof params.uri === 'string' ? params.uri : undefined;
  const std: Record<string, string | null> = { 'mcp-protocol-version': MODERN, 'mcp-method': method, ...(name ? { 'mcp-name': name } : {}) };
  return mcp(json({ jsonrpc: '2.0', id, method, params: { ...params, _meta: meta(params._meta as Record<string, unknown>) } }), { ...std, ...headers });
}
/** POST /mcp on the live 2025-06-18 session. */
function onSession(body: string, headers: Record<string, string | null> = {}): (c: Ctx) => HttpSpec {
  return (c) => mcp(body, { 'mcp-session-id': c.session, 'mcp-protocol-version': '2025-06-18', ...headers })(c);
}
function messages(body: string | Buffer, session: (c: Ctx) => string | undefined, headers: Record<string, string | null> = {}): (c: Ctx) => HttpSpec {
  return (c) => {
    const sid = session(c);
    return { method: 'POST', path: sid === undefined ? '/messages' : `/messages?sessionId=${sid}`, headers: merge({ 'content-type': 'application/json', ...AUTH }, headers), body };
  };
}
function req(method: string, path: string, headers: Record<string, string | null> = {}, body?: string): (c: Ctx) => HttpSpec {
  return () => ({ method, path, headers: merge({ ...AUTH }, headers), body });
}
function merge(base: Record<string, string>, over: Record<string, string | null>): Record<string, string> {
  const out: Record<string, string> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    for (const existing of Object.keys(out)) if (existing.toLowerCase() === k.toLowerCase()) delete out[existing];
    if (v !== null) out[k] = v;
  }
  return out;
}

const initialize = (protocolVersion: unknown = '2025-06-18', extra: Record<string, unknown> = {}) =>
  json({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion, capabilities: {}, clientInfo: { name: 'bad', version: '1' }, ...extra } });
const request = (method: string, params?: unknown, id: unknown = 1) => json({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });
const echoCall = { name: 'echo', arguments: { message: 'x' } };

// ─── the table ──────────────────────────────────────────────────────────────

const http = (name: string, spec: (c: Ctx) => HttpSpec, status: number, code: Code, check?: (r: RawResponse) => void): HttpCase => ({ kind: 'http', name, spec, status, code, check });
const challenge = (r: RawResponse) => expect(r.headers['www-authenticate']).toMatch(/^Bearer realm="mcp-bridge"/);

const CASES: Case[] = [
  // Authentication: every face, before anything else is looked at.
  http('POST /mcp without a token', mcp(initialize(), { authorization: null }), 401, -32000, challenge),
  http('POST /mcp with a wrong token', mcp(initialize(), { authorization: 'Bearer wrong-token-0123456789' }), 401, -32000, (r) => expect(r.headers['www-authenticate']).toContain('invalid_token')),
  http('POST /mcp with the token under the Basic scheme', mcp(initialize(), { authorization: `Basic ${TOKEN}` }), 401, -32000, challenge),
  http('POST /mcp with the bare token, no scheme', mcp(initialize(), { authorization: TOKEN }), 401, -32000, challenge),
  http('POST /mcp with the token plus a suffix', mcp(initialize(), { authorization: `Bearer ${TOKEN}x` }), 401, -32000),
  http('POST /mcp with an empty Authorization', mcp(initialize(), { authorization: '' }), 401, -32000),
  http('GET /sse without a token', req('GET', '/sse', { authorization: null, accept: 'text/event-stream' }), 401, -32000, challenge),
  http('POST /messages without a token', messages(request('ping'), (c) => c.sseReady, { authorization: null }), 401, -32000, challenge),
  http('GET /mcp without a token', req('GET', '/mcp', { authorization: null }), 401, -32000, challenge),
  http('DELETE /mcp without a token', (c) => req('DELETE', '/mcp', { authorization: null, 'mcp-session-id': c.session })(c), 401, -32000),
  http('an unknown path without a token', req('GET', '/admin', { authorization: null }), 401, -32000),
  { kind: 'ws-upgrade', name: 'WebSocket upgrade without a token', headers: {}, status: 401, code: -32000 },
  { kind: 'ws-upgrade', name: 'WebSocket upgrade with a wrong token', headers: { Authorization: 'Bearer nope-nope-nope-nope' }, status: 401, code: -32000 },

  // DNS rebinding: Host, then Origin.
  http('POST /mcp with a rebinding Host', (c) => ({ ...mcp(initialize())(c), host: 'attacker.example:8808' }), 421, -32000),
  http('GET /sse with a rebinding Host', (c) => ({ ...req('GET', '/sse', { accept: 'text/event-stream' })(c), host: 'evil.test' }), 421, -32000),
  http('GET /healthz with a rebinding Host', (c) => ({ ...req('GET', '/healthz')(c), host: 'evil.test' }), 421, -32000),
  http('POST /mcp with a Host that is not a host', (c) => ({ ...mcp(initialize())(c), host: 'a b c' }), 421, -32000),
  http('POST /mcp with a localhost look-alike Host', (c) => ({ ...mcp(initialize())(c), host: 'localhost.evil.test' }), 421, -32000),
  http('POST /mcp from a foreign Origin', mcp(initialize(), { origin: 'https://evil.example' }), 403, -32000),
  http('POST /mcp from the opaque Origin null', mcp(initialize(), { origin: 'null' }), 403, -32000),
  http('GET /sse from a foreign Origin', req('GET', '/sse', { origin: 'http://evil.example', accept: 'text/event-stream' }), 403, -32000),
  http('POST /messages from a foreign Origin', messages(request('ping'), (c) => c.sseReady, { origin: 'https://evil.example' }), 403, -32000),
  { kind: 'ws-upgrade', name: 'WebSocket upgrade with a rebinding Host', headers: { ...AUTH, Host: 'attacker.example' }, status: 421, code: -32000 },
  { kind: 'ws-upgrade', name: 'WebSocket upgrade from a foreign Origin', headers: { ...AUTH, Origin: 'https://evil.example' }, status: 403, code: -32000 },
  http('HTTP/1.1 without a Host header', (c) => ({ ...mcp(initialize())(c), host: null }), 400, undefined),

  // Malformed HTTP that node's parser refuses before any route.
  http('a header value with a control character', mcp(initialize(), { 'mcp-method': 'tools\x01call' }), 400, -32000),
  http('a header value with DEL', mcp(initialize(), { 'mcp-name': 'echo\x7f' }), 400, -32000),
  http('a header value with NUL', mcp(initialize(), { 'x-note': 'a\x00b' }), 400, -32000),
  http('a header value with a bare CR', mcp(initialize(), { 'mcp-method': 'a\rb' }), 400, -32000),
  http('an Mcp-Session-Id with ESC', mcp(initialize(), { 'mcp-session-id': 'abc\x1bdef' }), 400, -32000),
  http('a header name with a space', mcp(initialize(), { 'Bad Name': 'x' }), 400, -32000),
  http('one header larger than --max-header-size', mcp(initialize(), { 'x-big': 'a'.repeat(MAX_HEADER + 10) }), 431, -32000, (r) => expect(r.json.error.message).toMatch(/--max-header-size/)),
  http('many headers adding up past --max-header-size', mcp(initialize(), Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`x-h${i}`, 'v'.repeat(100)]))), 431, -32000),
  http('Content-Length and Transfer-Encoding together (smuggling)', mcp(initialize(), { 'transfer-encoding': 'chunked', 'content-length': '5' }), 400, -32000),
  http('a chunked body with a bad chunk size', mcp(Buffer.from('zz\r\n{}\r\n0\r\n\r\n'), { 'transfer-encoding': 'chunked' }), 400, -32000),

  // POST /mcp: media type, size, JSON itself.
  http('Content-Type text/plain', mcp(initialize(), { 'content-type': 'text/plain' }), 415, -32000),
  http('no Content-Type', mcp(initialize(), { 'content-type': null }), 415, -32000),
  http('Content-Type application/xml', mcp('<x/>', { 'content-type': 'application/xml' }), 415, -32000),
  http('a body that is not JSON', mcp('{"jsonrpc":'), 400, -32700),
  http('an empty JSON body', mcp(''), 400, -32700),
  http('a body with a UTF-8 BOM', mcp(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(initialize())])), 400, -32700),
  http('invalid UTF-8 outside strings', mcp(Buffer.from([0xff, 0x7b, 0x7d])), 400, -32700),
  http('trailing garbage after the JSON', mcp(initialize() + 'garbage'), 400, -32700),
  http('a body larger than --max-body', mcp(json({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(MAX_BODY) } })), 413, -32000),
  http('a Content-Length past --max-body (refused before reading)', mcp('{}', { 'content-length': String(10 * MAX_BODY) }), 413, -32000),
  http('nesting 65 levels deep', mcp(json({ jsonrpc: '2.0', id: 1, method: 'ping', params: { deep: JSON.parse(nest(64)) } })), 400, -32600, (r) => expect(r.json.error.message).toMatch(/--max-json-depth/)),
  http('nesting 20,000 levels deep', mcp(nest(20_000)), 400, -32600),
  http('body null', mcp('null'), 400, -32600),
  http('body 42', mcp('42'), 400, -32600),
  http('body a string', mcp('"initialize"'), 400, -32600),
  http('an empty batch', mcp('[]'), 400, -32600),
  http('a numeric id written with an exponent', mcp('{"jsonrpc":"2.0","id":1e3,"method":"ping"}'), 400, -32600, (r) => expect(r.json.error.message).toMatch(/integer or a string/)),
  http('a fractional id', mcp('{"jsonrpc":"2.0","id":1.5,"method":"ping"}'), 400, -32600),
  http('an id that overflows to Infinity', mcp('{"jsonrpc":"2.0","id":1e400,"method":"ping"}'), 400, -32600),
  http('an id written 1.0 inside a batch', (c) => mcp('[{"jsonrpc":"2.0","id":1.0,"method":"ping"}]', { 'mcp-session-id': c.session })(c), 400, -32600),
  http('jsonrpc "1.0"', mcp(json({ jsonrpc: '1.0', id: 1, method: 'ping' })), 400, -32600),
  http('no jsonrpc member', mcp(json({ id: 1, method: 'ping' })), 400, -32600),
  http('method is a number', mcp(json({ jsonrpc: '2.0', id: 1, method: 42 })), 400, -32600),
  http('id is an object', mcp(json({ jsonrpc: '2.0', id: { x: 1 }, method: 'ping' })), 400, -32600),
  http('id is a boolean', mcp(json({ jsonrpc: '2.0', id: true, method: 'ping' })), 400, -32600),
  http('a request with id null', mcp(json({ jsonrpc: '2.0', id: null, method: 'ping' })), 400, -32600),
  http('an object that is no message at all', mcp(json({ hello: 'world' })), 400, -32600),

  // Modern (2026-07-28) requests: the validation ladder (digest §2.6).
  http('modern: header version differs from the body', modern('tools/list', {}, { 'mcp-protocol-version': '2025-06-18' }), 400, -32020),
  http('modern: clientCapabilities missing from the envelope', mcp(json({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN } } }), { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/list' }), 400, -32602),
  http('modern: protocolVersion is a number', mcp(json({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': 2026, 'io.modelcontextprotocol/clientCapabilities': {} } } }), { 'mcp-method': 'tools/list' }), 400, -32602),
  http('modern: clientCapabilities is an array', modern('tools/list', { _meta: { 'io.modelcontextprotocol/clientCapabilities': [] } }), 400, -32602),
  http('modern: clientInfo without a version', modern('tools/list', { _meta: { 'io.modelcontextprotocol/clientInfo': { name: 'x' } } }), 400, -32602),
  http('modern: logLevel that is not a level', modern('tools/list', { _meta: { 'io.modelcontextprotocol/logLevel': 'loud' } }), 400, -32602),
  http('modern: progressToken is an object', modern('tools/list', { _meta: { progressToken: { a: 1 } } }), 400, -32602),
  http('modern: an unsupported version', mcp(json({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: meta({ 'io.modelcontextprotocol/protocolVersion': '2099-01-01' }) } }), { 'mcp-protocol-version': '2099-01-01', 'mcp-method': 'tools/list' }), 400, -32022, (r) => expect(r.json.error.data.supported).toContain(MODERN)),
  http('modern: MCP-Protocol-Version header missing', modern('tools/list', {}, { 'mcp-protocol-version': null }), 400, -32020),
  http('modern: Mcp-Method header missing', modern('tools/list', {}, { 'mcp-method': null }), 400, -32020),
  http('modern: Mcp-Method differs from the body', modern('tools/list', {}, { 'mcp-method': 'prompts/list' }), 400, -32020),
  http('modern: Mcp-Method differs only in case', modern('tools/list', {}, { 'mcp-method': 'Tools/List' }), 400, -32020),
  http('modern: tools/call without Mcp-Name', modern('tools/call', echoCall, { 'mcp-name': null }), 400, -32020),
  http('modern: Mcp-Name differs from the tool', modern('tools/call', echoCall, { 'mcp-name': 'other' }), 400, -32020),
  http('modern: Mcp-Name with broken base64', modern('tools/call', echoCall, { 'mcp-name': '=?base64?ZWNo?=' }), 400, -32020),
  http('modern: Mcp-Name base64 of the wrong name', modern('tools/call', echoCall, { 'mcp-name': `=?base64?${Buffer.from('ech0').toString('base64')}?=` }), 400, -32020),
  http('modern: resources/read without Mcp-Name', modern('resources/read', { uri: 'demo://resource/static/document/architecture.md' }, { 'mcp-name': null }), 400, -32020),
  http('modern: prompts/get with Mcp-Name of another prompt', modern('prompts/get', { name: 'simple-prompt' }, { 'mcp-name': 'complex-prompt' }), 400, -32020),
  http('modern: an unknown method', modern('foo/bar', {}), 404, -32601),
  http('modern: initialize with an envelope (removed in 2026)', modern('initialize', { protocolVersion: MODERN, capabilities: {} }), 404, -32601),
  http('modern: resources/subscribe (removed in 2026)', modern('resources/subscribe', { uri: 'demo://x' }, { 'mcp-name': null }), 404, -32601),
  http('modern: a batch holding a modern request', mcp(json([{ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: meta() } }])), 400, -32600),
  http('modern: a modern header on a body without an envelope', mcp(request('tools/list', {}), { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/list' }), 400, -32602),
  http('modern: initialize sent with a modern MCP-Protocol-Version', mcp(initialize(), { 'mcp-protocol-version': MODERN }), 400, -32020),
  http('modern: a fractional numeric id', modern('tools/list', {}, {}, 0.5), 400, -32600),

  // Responses posted where requests belong.
  http('a result response posted without a session', mcp(json({ jsonrpc: '2.0', id: 1, result: {} })), 400, -32600),
  http('an error response posted without a session', mcp(json({ jsonrpc: '2.0', id: 1, error: { code: -1, message: 'x' } })), 400, -32600),
  http('a response inside a batch with a modern request', mcp(json([{ jsonrpc: '2.0', id: 1, result: {} }, { jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: meta() } }])), 400, -32600),
  http('a response for an id never asked, on a session', onSession(json({ jsonrpc: '2.0', id: 'never-asked', result: {} })), 202, null),

  // Streamable HTTP sessions (2025).
  http('a legacy request without a session', mcp(request('tools/list')), 400, -32000),
  http('an unknown session id', mcp(request('tools/list'), { 'mcp-session-id': 'f'.repeat(64) }), 404, -32001),
  http('a path-like session id', mcp(request('tools/list'), { 'mcp-session-id': '../../etc/passwd' }), 404, -32001),
  http('GET /mcp with an unknown session', req('GET', '/mcp', { 'mcp-session-id': 'nope', accept: 'text/event-stream' }), 404, -32001),
  http('DELETE /mcp with an unknown session', req('DELETE', '/mcp', { 'mcp-session-id': 'nope' }), 404, -32001),
  http('GET /mcp without a session', req('GET', '/mcp', { accept: 'text/event-stream' }), 405, -32000, (r) => expect(r.headers.allow).toBe('POST')),
  http('DELETE /mcp without a session', req('DELETE', '/mcp'), 405, -32000),
  http('PUT /mcp', req('PUT', '/mcp', { 'content-type': 'application/json' }, '{}'), 405, -32000),
  http('PATCH /mcp', req('PATCH', '/mcp', { 'content-type': 'application/json' }, '{}'), 405, -32000),
  http('initialize again on a live session', onSession(initialize()), 400, -32600),
  http('initialize twice in one batch', mcp(json([JSON.parse(initialize()), { ...JSON.parse(initialize()), id: 2 }])), 400, -32600),
  http('a session POST without Accept', onSession(request('tools/list'), { accept: null }), 406, -32000),
  http('a session POST accepting only JSON', onSession(request('tools/list'), { accept: 'application/json' }), 406, -32000),
  http('an unknown MCP-Protocol-Version on a session', onSession(request('tools/list'), { 'mcp-protocol-version': '1999-01-01' }), 400, -32000),
  http('the modern version header on a session request (wrong epoch)', onSession(request('tools/list'), { 'mcp-protocol-version': MODERN }), 400, -32000),
  http('a batch on a 2025-06-18 session (batches are 2025-03-26 only)', onSession(json([JSON.parse(request('tools/list')), JSON.parse(request('prompts/list', undefined, 2))])), 200, -32600),
  http('a message without method or result, on a session', onSession(json({ jsonrpc: '2.0', id: 5 })), 400, -32600),
  http('an unknown method on a session', onSession(request('foo/bar', {})), 200, -32601),
  http('GET /mcp on a session accepting only JSON', (c) => req('GET', '/mcp', { 'mcp-session-id': c.session, accept: 'application/json' })(c), 406, -32000),
  http('initialize without params', mcp(json({ jsonrpc: '2.0', id: 1, method: 'initialize' })), 200, -32602),
  http('initialize with a numeric protocolVersion', mcp(initialize(20250618)), 200, -32602),
  http('initialize with capabilities null', mcp(json({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: null } })), 200, -32602),
  http('a 2024 ?sessionId= POST sent to /mcp', (c) => ({ ...mcp(request('tools/list'))(c), path: `/mcp?sessionId=${c.sseReady}` }), 400, -32000),

  // http+sse (2024-11-05).
  http('POST /messages without sessionId', messages(request('ping'), () => undefined), 400, -32000),
  http('POST /messages with an unknown sessionId', messages(request('ping'), () => 'unknown'), 404, -32001),
  http('POST /messages with a body that is not JSON', messages('{', (c) => c.sseReady), 400, -32700),
  http('POST /messages as text/plain', messages(request('ping'), (c) => c.sseReady, { 'content-type': 'text/plain' }), 415, -32000),
  http('POST /messages with an empty batch', messages('[]', (c) => c.sseReady), 400, -32600),
  http('POST /messages with a non-message', messages(json({ foo: 1 }), (c) => c.sseReady), 400, -32600),
  http('POST /messages nesting too deep', messages(nest(100), (c) => c.sseReady), 400, -32600),
  http('POST /messages larger than --max-body', messages(json({ pad: 'x'.repeat(MAX_BODY + 1) }), (c) => c.sseReady), 413, -32000),
  http('POST /messages with an id written 1e2', messages('{"jsonrpc":"2.0","id":1e2,"method":"ping"}', (c) => c.sseReady), 400, -32600),
  http('GET /messages', req('GET', '/messages'), 404, -32000),
  http('POST /sse', req('POST', '/sse', { 'content-type': 'application/json' }, '{}'), 404, -32000),
  { kind: 'sse-stream', name: 'http+sse: a request before initialize', session: 'sseBare', body: JSON.parse(request('tools/list', undefined, 'early')), id: 'early', code: -32600 },
  { kind: 'sse-stream', name: 'http+sse: a batch on a 2024-11-05 session', session: 'sseReady', body: [JSON.parse(request('tools/list', undefined, 'b1'))], id: null, code: -32600 },
  { kind: 'sse-stream', name: 'http+sse: initialize again', session: 'sseReady', body: { ...JSON.parse(initialize('2024-11-05')), id: 'again' }, id: 'again', code: -32600 },
  { kind: 'sse-stream', name: 'http+sse: an unknown method', session: 'sseReady', body: JSON.parse(request('foo/bar', {}, 'unknown')), id: 'unknown', code: -32601 },

  // WebSocket upgrades and frames.
  { kind: 'ws-upgrade', name: 'WebSocket upgrade to another path', headers: { ...AUTH }, path: '/ws2', status: 404, code: undefined },
  { kind: 'ws-upgrade', name: 'WebSocket upgrade with an unsupported version', headers: { ...AUTH, 'Sec-WebSocket-Version': '12' }, status: 400, code: undefined },
  { kind: 'ws-upgrade', name: 'WebSocket upgrade without a key', headers: { ...AUTH, 'Sec-WebSocket-Key': null }, status: 400, code: undefined },
  { kind: 'ws-frame', name: 'a text frame that is not JSON', frame: 'not json', code: -32700 },
  { kind: 'ws-frame', name: 'a binary frame of garbage', frame: Buffer.from([0xde, 0xad, 0xbe, 0xef]), code: -32700 },
  { kind: 'ws-frame', name: 'a frame nesting too deep', frame: nest(200), code: -32600 },
  { kind: 'ws-frame', name: 'a frame with an id written 2.0', frame: '{"jsonrpc":"2.0","id":2.0,"method":"ping"}', code: -32600 },
  { kind: 'ws-frame', name: 'a frame that is an empty object', frame: '{}', code: -32600 },
  { kind: 'ws-frame', name: 'a frame that is an empty batch', frame: '[]', code: -32600 },
  { kind: 'ws-frame', name: 'a request before initialize', frame: request('tools/list', undefined, 'ws-early'), code: -32600 },
  { kind: 'ws-frame', name: 'initialize with capabilities missing', frame: json({ jsonrpc: '2.0', id: 'ws-init', method: 'initialize', params: { protocolVersion: '2025-06-18' } }), code: -32602 },
  { kind: 'ws-close', name: 'a message larger than --max-body', frames: [wsFrame(0x1, Buffer.alloc(MAX_BODY + 1, 0x20))], closeCode: 1009 },
  { kind: 'ws-close', name: 'a text frame of invalid UTF-8', frames: [wsFrame(0x1, Buffer.from([0xc3, 0x28]))], closeCode: 1007 },
  { kind: 'ws-close', name: 'an unmasked client frame', frames: [wsFrame(0x1, Buffer.from('{}'), { mask: false })], closeCode: 1002 },
  { kind: 'ws-close', name: 'a reserved opcode', frames: [wsFrame(0x3, Buffer.from('x'))], closeCode: 1002 },
  { kind: 'ws-close', name: 'RSV1 set without an extension', frames: [wsFrame(0x1, Buffer.from('{}'), { rsv1: true })], closeCode: 1002 },
  { kind: 'ws-close', name: 'a continuation frame with nothing to continue', frames: [wsFrame(0x0, Buffer.from('x'))], closeCode: 1002 },
  { kind: 'ws-close', name: 'a fragmented control frame', frames: [wsFrame(0x9, Buffer.from('x'), { fin: false })], closeCode: 1002 },
];

// ─── running it ─────────────────────────────────────────────────────────────

interface Probe {
  name: string;
  calls: number;
  wrong: string[];
  stop: boolean;
  done?: Promise<void>;
}

/** A well-behaved client calling echo in a loop until told to stop; every answer is checked against its own payload. */
function keepCalling(client: Client, name: string): Probe {
  const probe: Probe = { name, calls: 0, wrong: [], stop: false };
  probe.done = (async () => {
    for (let i = 0; i < 100_000 && !probe.stop; i++) {
      const message = `${name}-${i}-${Math.random().toString(36).slice(2)}`;
      try {
        const r = await client.callTool({ name: 'echo', arguments: { message } });
        const text = (r.content as Array<{ text?: string }>)[0]?.text;
        if (text !== `Echo: ${message}`) probe.wrong.push(`${message} → ${JSON.stringify(r.content)}`);
      } catch (err) {
        probe.wrong.push(`${message} → ${(err as Error).message}`);
      }
      probe.calls++;
    }
  })();
  return probe;
}

describe('bad input: every face, against the built CLI', () => {
  let cli: RunningCli;
  let ctx: Ctx;
  const clients: Client[] = [];
  const probes: Probe[] = [];
  const streams: OpenSse[] = [];
  let ws: WebSocket;
  const wsInbox: string[] = [];
  let sseStreams: Record<'sseBare' | 'sseReady', OpenSse>;

  beforeAll(async () => {
    cli = await startCli(['--auth-token', TOKEN, '--max-body', String(MAX_BODY), '--max-header-size', String(MAX_HEADER), '--log-level', 'error', '--', ...EVERYTHING_STDIO_COMMAND]);
    const port = Number(new URL(cli.url).port);

    const init = await httpRequest(port, mcp(initialize())({} as Ctx));
    expect(init.status).toBe(200);
    const session = init.headers['mcp-session-id'];
    await httpRequest(port, mcp(json({ jsonrpc: '2.0', method: 'notifications/initialized' }), { 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' })({} as Ctx));

    const openSse = async () => {
      const s = await OpenSse.open(port, '/sse', AUTH);
      streams.push(s);
      const endpoint = await s.next((e) => e.event === 'endpoint');
      return { stream: s, id: new URL(endpoint!.data, cli.url).searchParams.get('sessionId')! };
    };
    const bare = await openSse();
    const ready = await openSse();
    const initPost = await httpRequest(port, messages(initialize('2024-11-05'), () => ready.id)({} as Ctx));
    expect(initPost.status).toBe(202);
    expect(await ready.stream.next((e) => e.data.includes('"protocolVersion"'))).toBeDefined();
    await httpRequest(port, messages(json({ jsonrpc: '2.0', method: 'notifications/initialized' }), () => ready.id)({} as Ctx));
    ctx = { port, session, sseBare: bare.id, sseReady: ready.id };
    sseStreams = { sseBare: bare.stream, sseReady: ready.stream };

    ws = new WebSocket(`ws://127.0.0.1:${port}/ws`, 'mcp', { headers: AUTH });
    ws.on('message', (d) => wsInbox.push(d.toString()));
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });

    const streamable = new Client({ name: 'well-behaved-streamable', version: '1.0.0' });
    await streamable.connect(new StreamableHTTPClientTransport(new URL(`${cli.url}/mcp`), { requestInit: { headers: AUTH } }));
    const sse = new Client({ name: 'well-behaved-sse', version: '1.0.0' });
    await sse.connect(new SSEClientTransport(new URL(`${cli.url}/sse`), { requestInit: { headers: AUTH } }));
    clients.push(streamable, sse);
    probes.push(keepCalling(streamable, 'streamable'), keepCalling(sse, 'sse'));
  }, 60_000);

  afterAll(async () => {
    for (const p of probes) p.stop = true;
    await Promise.allSettled(probes.map((p) => p.done));
    await Promise.allSettled(clients.map((c) => c.close()));
    for (const s of streams) s.close();
    ws?.terminate();
    await cli?.close();
  });

  it(`has at least 100 cases (${CASES.length})`, () => {
    expect(CASES.length).toBeGreaterThanOrEqual(100);
    expect(new Set(CASES.map((c) => c.name)).size).toBe(CASES.length);
  });

  it.each(CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    if (c.kind === 'http') {
      const r = await httpRequest(ctx.port, c.spec(ctx));
      expect(r.status, r.body).toBe(c.status);
      if (c.code === null) expect(r.json?.error).toBeUndefined();
      else if (c.code !== undefined) {
        expect(r.headers['content-type']).toMatch(/application\/json/);
        expect(r.json?.jsonrpc).toBe('2.0');
        expect(r.json?.error?.code, r.body).toBe(c.code);
      }
      c.check?.(r);
    } else if (c.kind === 'ws-upgrade') {
      const r = await rawWs(ctx.port, { headers: c.headers, path: c.path });
      expect(r.status, r.body).toBe(c.status);
      if (c.code !== undefined && c.code !== null) expect(JSON.parse(r.body).error.code).toBe(c.code);
    } else if (c.kind === 'ws-frame') {
      const before = wsInbox.length;
      ws.send(c.frame);
      for (let i = 0; i < 200 && wsInbox.length === before; i++) await new Promise((r) => setTimeout(r, 10));
      expect(wsInbox.length).toBe(before + 1);
      expect(JSON.parse(wsInbox[before]).error.code).toBe(c.code);
      expect(ws.readyState).toBe(WebSocket.OPEN);
    } else if (c.kind === 'ws-close') {
      const r = await rawWs(ctx.port, { headers: { ...AUTH }, frames: c.frames });
      expect(r.status).toBe(101);
      expect(r.closeCode).toBe(c.closeCode);
    } else {
      const r = await httpRequest(ctx.port, messages(json(c.body), (x) => x[c.session])(ctx));
      expect(r.status, r.body).toBe(202);
      const answer = await sseStreams[c.session].next((e) => {
        try {
          const m = JSON.parse(e.data);
          return m.error !== undefined && m.id === c.id;
        } catch {
          return false;
        }
      });
      expect(answer, `no error answer for id ${c.id} on the stream`).toBeDefined();
      expect(JSON.parse(answer!.data).error.code).toBe(c.code);
    }
  });

  it('the well-behaved clients saw every answer right while the cases ran', async () => {
    for (const p of probes) p.stop = true;
    await Promise.all(probes.map((p) => p.done));
    console.info(`bad-input: ${CASES.length} malformed HTTP/SSE/WebSocket inputs; echo calls meanwhile: ${probes.map((p) => `${p.name} ${p.calls} (${p.wrong.length} wrong)`).join(', ')}`);
    for (const p of probes) {
      expect(p.wrong, p.name).toEqual([]);
      expect(p.calls, p.name).toBeGreaterThan(5);
    }
  });

  it('afterwards the process is alive and serves a new client', async () => {
    expect(cli.child.exitCode).toBeNull();
    expect(cli.child.signalCode).toBeNull();
    const health = await httpRequest(ctx.port, { method: 'GET', path: '/healthz' });
    expect(health.status).toBe(200);
    const fresh = new Client({ name: 'after', version: '1.0.0' });
    await fresh.connect(new StreamableHTTPClientTransport(new URL(`${cli.url}/mcp`), { requestInit: { headers: AUTH } }));
    try {
      const r = await fresh.callTool({ name: 'echo', arguments: { message: 'still here' } });
      expect((r.content as Array<{ text: string }>)[0].text).toBe('Echo: still here');
    } finally {
      await fresh.close();
    }
  });
});

// ─── the stdio face ─────────────────────────────────────────────────────────

const STDIO_MAX_LINE = 64 * 1024;

/** Lines sent, in order, to one `--stdio` bridge; each must be answered with this code (and id). */
const STDIO_CASES: Array<{ name: string; line: string; id: string | number | null; code: number }> = [
  { name: 'a line that is not JSON', line: '{"jsonrpc":', id: null, code: -32700 },
  { name: 'a line longer than --max-line', line: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(STDIO_MAX_LINE) } }), id: null, code: -32700 },
  { name: 'a line nesting too deep', line: nest(1000), id: null, code: -32600 },
  { name: 'an id written 1E+3', line: '{"jsonrpc":"2.0","id":1E+3,"method":"ping"}', id: null, code: -32600 },
  { name: 'an object that is no message', line: '{"hello":1}', id: null, code: -32600 },
  { name: 'a request before initialize', line: request('tools/list', undefined, 'early'), id: 'early', code: -32600 },
  { name: 'an empty batch', line: '[]', id: null, code: -32600 },
  { name: 'a batch before initialize', line: json([JSON.parse(request('tools/list', undefined, 'b'))]), id: null, code: -32600 },
  { name: 'initialize without capabilities', line: json({ jsonrpc: '2.0', id: 'i0', method: 'initialize', params: { protocolVersion: '2025-06-18' } }), id: 'i0', code: -32602 },
];

describe('bad input: the stdio face of the built CLI', () => {
  let child: ChildProcessWithoutNullStreams;
  const lines: string[] = [];

  beforeAll(() => {
    child = spawn(process.execPath, [CLI_ENTRY, '--stdio', '--max-line', String(STDIO_MAX_LINE), '--log-level', 'error', '--', ...EVERYTHING_STDIO_COMMAND]);
    let buf = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      buf += c;
      const parts = buf.split('\n');
      buf = parts.pop()!;
      lines.push(...parts.filter((l) => l.trim() !== ''));
    });
    child.stderr.resume();
  });
  afterAll(async () => {
    child.stdin.end();
    await stopProcess(child, 5_000);
  });

  /** The responses (not the server's notifications) written after `before`. */
  const responsesFrom = (before: number) => lines.slice(before).map((l) => JSON.parse(l)).filter((m) => !('method' in m));

  let pings = 0;
  /**
   * The responses after `before`, up to the answer to a ping written now: the face handles lines in
   * order, so by then it has said all it had to about the earlier ones (a second answer too).
   */
  async function responsesUntilPing(before: number): Promise<any[]> {
    const id = `ping-${++pings}`;
    child.stdin.write(json({ jsonrpc: '2.0', id, method: 'ping' }) + '\n');
    const responses = await waitFor(() => {
      const r = responsesFrom(before);
      return r.some((m) => m.id === id) ? r : undefined;
    }, 10_000, `the answer to ${id}`);
    return responses.filter((m) => m.id !== id);
  }

  /** Writes one line and returns the one response it gets; a second response would fail the test. */
  async function answer(line: string): Promise<any> {
    const before = lines.length;
    child.stdin.write(line + '\n');
    for (let i = 0; i < 1000 && responsesFrom(before).length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    const responses = await responsesUntilPing(before);
    expect(responses.length, `answers to ${line.slice(0, 80)}`).toBe(1);
    return responses[0];
  }

  it.each(STDIO_CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const reply = await answer(c.line);
    expect(reply.id).toBe(c.id);
    expect(reply.error.code).toBe(c.code);
  });

  it('an oversized line costs only itself: the request written right after it, in the same chunk, is answered', async () => {
    const before = lines.length;
    const big = JSON.stringify({ jsonrpc: '2.0', id: 'big', method: 'ping', params: { pad: 'y'.repeat(2 * STDIO_MAX_LINE) } });
    child.stdin.write(`${big}\n${json({ jsonrpc: '2.0', id: 'next', method: 'ping' })}\n`);
    for (let i = 0; i < 1000 && responsesFrom(before).length < 2; i++) await new Promise((r) => setTimeout(r, 10));
    expect(await responsesUntilPing(before)).toEqual([
      { jsonrpc: '2.0', id: null, error: { code: -32700, message: expect.stringMatching(/exceeds 65536 bytes/) } },
      { jsonrpc: '2.0', id: 'next', result: {} },
    ]);
  });

  it('afterwards the same client initializes and its calls are answered right', async () => {
    const init = await answer(initialize());
    expect(init.result.serverInfo.name).toBe('mcp-servers/everything');
    child.stdin.write(json({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n');
    for (const [id, message] of [['7', 'as string'], [7, 'as number']] as const) {
      const r = await answer(json({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { message } } }));
      expect(r.id).toBe(id);
      expect(r.result.content[0].text).toBe(`Echo: ${message}`);
    }
    expect(child.exitCode).toBeNull();
  });
});


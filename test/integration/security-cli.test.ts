import type { IncomingHttpHeaders } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { WebSocket } from 'ws';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startCli, type RunningCli } from '../helpers/cli.js';
import { EVERYTHING_STDIO_COMMAND } from '../helpers/processes.js';
import { httpRequest, rawWs, type HttpSpec } from '../helpers/raw-http.js';
import { startV1SessionServer } from '../helpers/v1-session-server.js';

/**
 * Issue 6 "Security", end to end through the built CLI: the listen refusal,
 * bearer auth on every face, Host checks, the session bound, upstream
 * credentials kept upstream and out of the logs, the SSE line bound toward the
 * upstream, and JSON-RPC ids relayed exactly.
 */

const TOKEN = 'security-token-0123456789abcdef';
const AUTH = { authorization: `Bearer ${TOKEN}` };
const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...AUTH };
const MODERN = '2026-07-28';
const initBody = (id: string | number = 1) =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'sec', version: '1' } } });
const post = (body: string, headers: Record<string, string> = {}): HttpSpec => ({ method: 'POST', path: '/mcp', headers: { ...JSON_HEADERS, ...headers }, body });
const portOf = (cli: RunningCli) => Number(new URL(cli.url).port);

/** Opens a Streamable HTTP session by hand and returns its id. */
async function openSession(port: number): Promise<string> {
  const r = await httpRequest(port, post(initBody()));
  expect(r.status).toBe(200);
  const sid = r.headers['mcp-session-id'];
  await httpRequest(port, post(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' }));
  return sid;
}

describe('listening beyond loopback', () => {
  it('is refused at start without a token: exit 2, and the message says what to do', async () => {
    const r = await runCli(['--listen', '0.0.0.0:0', '--', ...EVERYTHING_STDIO_COMMAND]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/refusing to listen on 0\.0\.0\.0 without authentication/);
    expect(r.stderr).toMatch(/--auth-token <token> \(or MCP_BRIDGE_AUTH_TOKEN\)/);
    expect(r.stderr).toMatch(/--allow-unauthenticated/);
  });

  it('a token that is too weak is a usage error too', async () => {
    const r = await runCli(['--auth-token', 'short', '--', ...EVERYTHING_STDIO_COMMAND]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--auth-token must be at least 16 characters/);
  });
});

describe('auth, Host and the session bound, in front of server-everything', () => {
  let cli: RunningCli;
  let port: number;
  const clients: Client[] = [];

  beforeAll(async () => {
    cli = await startCli(['--auth-token', TOKEN, '--allow-host', 'bridge.test', '--max-sessions', '3', '--log-level', 'debug', '--', ...EVERYTHING_STDIO_COMMAND]);
    port = portOf(cli);
  }, 60_000);
  afterAll(async () => {
    await Promise.allSettled(clients.map((c) => c.close()));
    await cli?.close();
  });

  it('an SDK client without the token is refused with 401 and a Bearer challenge', async () => {
    const client = new Client({ name: 'no-token', version: '1' });
    await expect(client.connect(new StreamableHTTPClientTransport(new URL(`${cli.url}/mcp`)))).rejects.toThrow(/401|Unauthorized/i);
    const r = await httpRequest(port, post(initBody(), { authorization: '' }));
    expect(r.status).toBe(401);
    expect(r.headers['www-authenticate']).toBe('Bearer realm="mcp-bridge"');
  });

  it('SDK clients with the token work over Streamable HTTP and http+sse; /healthz needs none', async () => {
    const streamable = new Client({ name: 'tok-streamable', version: '1' });
    const transport = new StreamableHTTPClientTransport(new URL(`${cli.url}/mcp`), { requestInit: { headers: AUTH } });
    await streamable.connect(transport);
    clients.push(streamable);
    expect(JSON.stringify((await streamable.callTool({ name: 'echo', arguments: { message: 'a' } })).content)).toContain('Echo: a');
    const sse = new Client({ name: 'tok-sse', version: '1' });
    await sse.connect(new SSEClientTransport(new URL(`${cli.url}/sse`), { requestInit: { headers: AUTH } }));
    clients.push(sse);
    expect(JSON.stringify((await sse.callTool({ name: 'echo', arguments: { message: 'b' } })).content)).toContain('Echo: b');
    expect((await httpRequest(port, { method: 'GET', path: '/healthz' })).status).toBe(200);
    // DELETE the session, so the session-bound test below starts from none.
    await transport.terminateSession();
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });

  it('a WebSocket client with the token is served; without it the upgrade gets 401', async () => {
    expect((await rawWs(port)).status).toBe(401);
    const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`, 'mcp', { headers: AUTH });
    try {
      const first = new Promise<string>((resolve, reject) => {
        ws.once('message', (d) => resolve(d.toString()));
        ws.once('error', reject);
      });
      await new Promise<void>((resolve) => ws.once('open', () => resolve()));
      ws.send(initBody('ws-init'));
      expect(JSON.parse(await first).result.serverInfo.name).toBe('mcp-servers/everything');
    } finally {
      // A completed closing handshake means the bridge has ended the session.
      await new Promise<void>((resolve) => {
        ws.once('close', () => resolve());
        ws.close();
      });
    }
  });

  it('a Host named by --allow-host is served; another name gets 421', async () => {
    const allowed = await httpRequest(port, { ...post(initBody()), host: `bridge.test:${port}` });
    expect(allowed.status).toBe(200);
    await httpRequest(port, { method: 'DELETE', path: '/mcp', headers: { ...AUTH, 'mcp-session-id': allowed.headers['mcp-session-id'] } });
    const other = await httpRequest(port, { ...post(initBody()), host: 'other.test' });
    expect(other.status).toBe(421);
    expect(other.json.error.message).toMatch(/--allow-host/);
  });

  it('--max-sessions: a session beyond the bound gets 503 on every face, modern requests still pass, and a freed slot is reused', async () => {
    const sids = [await openSession(port), await openSession(port), await openSession(port)];
    const refused = await httpRequest(port, post(initBody('over')));
    expect(refused.status).toBe(503);
    expect(refused.json).toMatchObject({ jsonrpc: '2.0', id: 'over', error: { code: -32000 } });
    expect(refused.json.error.message).toMatch(/3 sessions \(--max-sessions\)/);
    const sse = await httpRequest(port, { method: 'GET', path: '/sse', headers: { ...AUTH, accept: 'text/event-stream' } });
    expect(sse.status).toBe(503);
    expect(sse.json.error.code).toBe(-32000);
    const ws = await rawWs(port, { headers: AUTH });
    expect(ws.status).toBe(503);
    expect(JSON.parse(ws.body).error.message).toMatch(/--max-sessions/);
    // Modern requests are stateless: they hold no session and are never refused for it.
    const modern = await httpRequest(
      port,
      post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} } } }), {
        'mcp-protocol-version': MODERN,
        'mcp-method': 'tools/list',
      }),
    );
    expect(modern.status).toBe(200);
    expect(modern.json.result.tools.length).toBeGreaterThan(0);
    const del = await httpRequest(port, { method: 'DELETE', path: '/mcp', headers: { ...AUTH, 'mcp-session-id': sids[0] } });
    expect(del.status).toBe(200);
    sids[0] = await openSession(port);
    for (const sid of sids) await httpRequest(port, { method: 'DELETE', path: '/mcp', headers: { ...AUTH, 'mcp-session-id': sid } });
  });

  it('string and number ids stay apart and exact: "7" and 7 in flight together on one session, and a long string id', async () => {
    const sid = await openSession(port);
    const call = (id: unknown, message: string) =>
      httpRequest(port, post(JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { message } } }), { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' }));
    const bodyOf = (r: Awaited<ReturnType<typeof call>>) => (r.json ?? JSON.parse(/data: (.*)/.exec(r.body)![1]));
    const [asString, asNumber, long] = await Promise.all([call('7', 'as string'), call(7, 'as number'), call('12345678901234567890123456789', 'long')]);
    expect(bodyOf(asString).id).toBe('7');
    expect(bodyOf(asString).result.content[0].text).toBe('Echo: as string');
    expect(bodyOf(asNumber).id).toBe(7);
    expect(bodyOf(asNumber).result.content[0].text).toBe('Echo: as number');
    expect(bodyOf(long).id).toBe('12345678901234567890123456789');
    await httpRequest(port, { method: 'DELETE', path: '/mcp', headers: { ...AUTH, 'mcp-session-id': sid } });
  });

  it('modern requests keep "1" and 1 apart too', async () => {
    const call = (id: unknown, message: string) =>
      httpRequest(
        port,
        post(
          JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { message }, _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} } } }),
          { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': 'echo' },
        ),
      );
    const [s, n] = await Promise.all([call('1', 'string one'), call(1, 'number one')]);
    expect([s.json.id, s.json.result.content[0].text]).toEqual(['1', 'Echo: string one']);
    expect([n.json.id, n.json.result.content[0].text]).toEqual([1, 'Echo: number one']);
  });

  it('the bridge token never reaches a log line, even at debug', () => {
    expect(cli.stderr()).toContain('"level":"debug"');
    expect(cli.stderr()).not.toContain(TOKEN);
  });
});

// ─── an upstream of our own, to see what reaches it ─────────────────────────

const UPSTREAM_BEARER = 'Bearer upstream-secret-bearer-4242';
const UPSTREAM_KEY = 'upstream-api-key-9731';

interface RecordingUpstream {
  url: string;
  seen: IncomingHttpHeaders[];
  close(): Promise<void>;
}

/** A stateful SDK v1 Streamable HTTP server that records every request's headers and has `echo` and `big` tools. */
async function startRecordingUpstream(): Promise<RecordingUpstream> {
  const seen: IncomingHttpHeaders[] = [];
  const server = await startV1SessionServer({
    name: 'recording',
    intercept(req) {
      seen.push(req.headers);
      return false;
    },
    register(mcp) {
      mcp.registerTool('echo', { inputSchema: { message: z.string() } }, async ({ message }) => ({ content: [{ type: 'text', text: `Echo: ${message}` }] }));
      mcp.registerTool('big', { inputSchema: { size: z.number() } }, async ({ size }) => ({ content: [{ type: 'text', text: 'x'.repeat(size) }] }));
    },
  });
  return { url: server.url, seen, close: server.close };
}

describe('upstream credentials and the SSE line bound, in front of an HTTP upstream', () => {
  let upstream: RecordingUpstream;
  let cli: RunningCli;
  let port: number;
  const downstream: string[] = [];

  beforeAll(async () => {
    upstream = await startRecordingUpstream();
    cli = await startCli([
      '--upstream', upstream.url,
      '--header', `Authorization: ${UPSTREAM_BEARER}`,
      '--header', `X-Api-Key: ${UPSTREAM_KEY}`,
      '--auth-token', TOKEN,
      '--max-line', '8192',
      '--log-level', 'debug',
    ]);
    port = portOf(cli);
  }, 60_000);
  afterAll(async () => {
    await cli?.close();
    await upstream?.close();
  });

  /** Every exchange the downstream client sees, headers and body, kept for the leak check. */
  const send = async (spec: HttpSpec) => {
    const r = await httpRequest(port, spec);
    downstream.push(JSON.stringify(r.headers) + r.body);
    return r;
  };

  it('relays calls over a legacy session and over the modern face', async () => {
    const init = await send(post(initBody()));
    const sid = init.headers['mcp-session-id'];
    const h = { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' };
    await send(post(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), h));
    const legacy = await send(post(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { message: 'legacy' } } }), h));
    expect(legacy.body).toContain('Echo: legacy');
    const modern = await send(
      post(
        JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'echo', arguments: { message: 'modern' }, _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} } } }),
        { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': 'echo' },
      ),
    );
    expect(modern.json.result.content[0].text).toBe('Echo: modern');
    await send({ method: 'DELETE', path: '/mcp', headers: { ...AUTH, 'mcp-session-id': sid } });
  });

  it('every upstream request carries the --header credentials, and never the bridge token', () => {
    expect(upstream.seen.length).toBeGreaterThan(3);
    for (const h of upstream.seen) {
      expect(h.authorization).toBe(UPSTREAM_BEARER);
      expect(h['x-api-key']).toBe(UPSTREAM_KEY);
      expect(JSON.stringify(h)).not.toContain(TOKEN);
    }
  });

  it('no downstream response carries the upstream credentials, and no log line shows them', () => {
    expect(downstream.length).toBeGreaterThan(3);
    for (const text of downstream) {
      expect(text).not.toContain('upstream-secret-bearer-4242');
      expect(text).not.toContain(UPSTREAM_KEY);
    }
    const logs = cli.stderr();
    expect(logs).toContain('"level":"debug"');
    for (const secret of ['upstream-secret-bearer-4242', UPSTREAM_KEY, TOKEN]) expect(logs).not.toContain(secret);
  });

  it('--max-line: an upstream SSE line past the bound fails that call with an error, and the next call is served', async () => {
    const client = new Client({ name: 'max-line', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${cli.url}/mcp`), { requestInit: { headers: AUTH } }));
    try {
      const small = await client.callTool({ name: 'big', arguments: { size: 1000 } });
      expect((small.content as Array<{ text: string }>)[0].text).toHaveLength(1000);
      const failed = await client.callTool({ name: 'big', arguments: { size: 20_000 } }).then(
        (r) => ({ ok: true as const, r }),
        (err: Error) => ({ ok: false as const, message: err.message }),
      );
      expect(failed.ok).toBe(false);
      if (!failed.ok) expect(failed.message).toMatch(/exceeds 8192 bytes/);
      const after = await client.callTool({ name: 'echo', arguments: { message: 'after' } });
      expect((after.content as Array<{ text: string }>)[0].text).toBe('Echo: after');
    } finally {
      await client.close();
    }
  });
});

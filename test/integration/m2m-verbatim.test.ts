import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCli, type RunningCli } from '../helpers/cli.js';
import { httpRequest } from '../helpers/raw-http.js';

/**
 * modern-to-modern over HTTP: a response the bridge passes on unchanged goes to
 * the client as the upstream's own bytes (unknown fields, key order and
 * spacing kept); one carrying another id is built anew. A plain request goes
 * upstream as the client's own bytes; one with members a request does not
 * have is serialized from its parse, as before. The upstream is a raw
 * node:http 2026-07-28 server on 127.0.0.1 that records the bodies it gets.
 */

const VERSION = '2026-07-28';
const META = { 'io.modelcontextprotocol/protocolVersion': VERSION, 'io.modelcontextprotocol/clientCapabilities': {} };

/** Raw reply texts by tool name; `{id}` is replaced with the request's id (JSON). */
const TOOL_REPLIES: Record<string, string> = {
  exact: '{ "result" : {"resultType":"complete","content":[{"type":"text","text":"kept"}],"x-vendor":{"b":1,"a":2}} , "id":{id}, "jsonrpc":"2.0", "x-top":true }',
  'no-result-type': '{"jsonrpc":"2.0","id":{id},"result":{"content":[{"type":"text","text":"bare"}]}}',
  'other-id': '{"jsonrpc":"2.0","id":"not-yours","result":{"resultType":"complete","content":[{"type":"text","text":"moved"}]}}',
};

function reply(res: http.ServerResponse, text: string): void {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

async function startRawModernServer(): Promise<{ url: string; bodies: string[]; close(): Promise<void> }> {
  const bodies: string[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      bodies.push(body);
      const msg = JSON.parse(body) as { id?: unknown; method: string; params?: { name?: string } };
      if (msg.id === undefined) return void res.writeHead(202).end();
      const id = JSON.stringify(msg.id);
      if (msg.method === 'server/discover') {
        return reply(res, `{"jsonrpc":"2.0","id":${id},"result":{"resultType":"complete","supportedVersions":["${VERSION}"],"capabilities":{"tools":{}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"raw","version":"1"}}}}`);
      }
      if (msg.method === 'tools/list') {
        const tools = Object.keys(TOOL_REPLIES).map((name) => ({ name, inputSchema: { type: 'object' } }));
        return reply(res, JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: { resultType: 'complete', tools } }));
      }
      const text = TOOL_REPLIES[msg.params?.name ?? ''];
      if (msg.method === 'tools/call' && text) return reply(res, text.replace('{id}', id));
      reply(res, JSON.stringify({ jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: 'Method not found' } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    bodies,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

describe('modern-to-modern relays unchanged responses byte for byte', () => {
  let upstream: Awaited<ReturnType<typeof startRawModernServer>>;
  let cli: RunningCli;
  let port: number;

  beforeAll(async () => {
    upstream = await startRawModernServer();
    cli = await startCli(['--upstream', upstream.url, '--log-level', 'warn']);
    port = Number(new URL(cli.url).port);
  }, 30_000);
  afterAll(async () => {
    await cli?.close();
    await upstream?.close();
  });

  const post = (name: string, body: string) =>
    httpRequest(port, {
      method: 'POST',
      path: '/mcp',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': VERSION, 'mcp-method': 'tools/call', 'mcp-name': name },
      body,
    });
  const callTool = (id: number | string, name: string) => post(name, JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {}, _meta: META } }));

  it('a tools/call result reaches the client exactly as the upstream wrote it', async () => {
    for (const id of [7, 'seven']) {
      const r = await callTool(id, 'exact');
      expect(r.status).toBe(200);
      expect(r.body).toBe(TOOL_REPLIES.exact.replace('{id}', JSON.stringify(id)));
    }
  });

  it('a response carrying another id is not passed on as is: the client gets its own id', async () => {
    const r = await callTool(8, 'other-id');
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ jsonrpc: '2.0', id: 8, result: { resultType: 'complete', content: [{ type: 'text', text: 'moved' }] } });
  });

  it('a result without resultType reaches the client as "complete", the rest of it unchanged', async () => {
    const r = await callTool(11, 'no-result-type');
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ jsonrpc: '2.0', id: 11, result: { resultType: 'complete', content: [{ type: 'text', text: 'bare' }] } });
  });

  it('a plain request reaches the upstream as the client wrote it; one with other members is serialized from its parse', async () => {
    const plain = `{ "params": {"name":"exact","arguments":{"z":1,"a":[1, 2]},"_meta":${JSON.stringify(META)}},\n  "method":"tools/call", "id":9, "jsonrpc":"2.0" }`;
    expect((await post('exact', plain)).status).toBe(200);
    expect(upstream.bodies.at(-1)).toBe(plain);
    const extra = { jsonrpc: '2.0', id: 10, method: 'tools/call', params: { name: 'exact', arguments: {}, _meta: META }, 'x-extra': 1 };
    expect((await post('exact', ` ${JSON.stringify(extra)}`)).status).toBe(200);
    const { 'x-extra': _dropped, ...sent } = extra;
    expect(JSON.parse(upstream.bodies.at(-1)!)).toEqual(sent);
  });
});

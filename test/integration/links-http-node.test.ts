import type { IncomingHttpHeaders } from 'node:http';
import { ElicitResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { LegacyUpstreamSession, UpstreamInit } from '../../src/contracts/upstream.js';
import { LegacyHttpLink } from '../../src/links/legacy-http-link.js';
import { silentLogger } from '../../src/log.js';
import { startV1SessionServer, type V1SessionServer } from '../helpers/v1-session-server.js';
import { waitFor } from '../helpers/wait-for.js';

const MAX_LINE = 8192;
const INIT: UpstreamInit = { protocolVersion: '2025-06-18', capabilities: { elicitation: {} }, clientInfo: { name: 'links-http-node-test', version: '1.0.0' } };

/**
 * A stateful SDK v1 Streamable HTTP server (SSE answers) that writes down the
 * headers of every request, and whose old path `/moved` redirects (307) to `/mcp`.
 */
async function startServer(): Promise<V1SessionServer & { seen: Array<{ method: string; url: string; headers: IncomingHttpHeaders }> }> {
  const seen: Array<{ method: string; url: string; headers: IncomingHttpHeaders }> = [];
  const server = await startV1SessionServer({
    name: 'node-path',
    intercept(req, res) {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
      if (req.url !== '/moved') return false;
      res.writeHead(307, { location: '/mcp' }).end();
      return true;
    },
    register(mcp) {
      mcp.registerTool('big', { inputSchema: { size: z.number() } }, async ({ size }) => ({ content: [{ type: 'text', text: 'x'.repeat(size) }] }));
      mcp.registerTool('ask_name', { description: 'elicits a name on the call stream' }, async (extra) => {
        const r = await extra.sendRequest(
          { method: 'elicitation/create', params: { message: 'name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } } },
          ElicitResultSchema,
        );
        return { content: [{ type: 'text', text: `hello ${String(r.content?.name)}` }] };
      });
    },
  });
  return { ...server, seen };
}

function textOf(outcome: unknown): string {
  const result = (outcome as { result?: { content?: Array<{ text?: string }> } }).result;
  return (result?.content ?? []).map((c) => c.text ?? '').join('\n');
}

describe('LegacyHttpLink without a fetch: node:http read directly', () => {
  let server: Awaited<ReturnType<typeof startServer>>;
  const links: LegacyHttpLink[] = [];

  beforeAll(async () => {
    server = await startServer();
  });
  afterEach(async () => {
    await Promise.all(links.splice(0).map((l) => l.close()));
    server.seen.length = 0;
  });
  afterAll(async () => server?.close());

  async function open(path = '/mcp'): Promise<LegacyUpstreamSession> {
    const link = new LegacyHttpLink({ url: `${server.base}${path}`, headers: { Authorization: 'Bearer node-path-secret', 'X-Extra': 'yes' }, logger: silentLogger, maxLineBytes: MAX_LINE });
    links.push(link);
    return link.openSession(INIT);
  }

  it('follows a 307 to the endpoint, and every request carries the configured headers and the session id', async () => {
    const session = await open('/moved');
    expect(textOf(await session.call({ method: 'tools/call', params: { name: 'big', arguments: { size: 10 } } }))).toBe('x'.repeat(10));
    const atEndpoint = server.seen.filter((r) => r.url === '/mcp');
    expect(server.seen.some((r) => r.url === '/moved')).toBe(true);
    expect(atEndpoint.length).toBeGreaterThan(2);
    for (const r of server.seen) {
      expect(r.headers.authorization).toBe('Bearer node-path-secret');
      expect(r.headers['x-extra']).toBe('yes');
    }
    for (const r of atEndpoint.slice(1)) expect(r.headers['mcp-session-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('--max-line: an SSE line past the bound fails that call, and the next call on the session is served', async () => {
    const session = await open();
    expect(textOf(await session.call({ method: 'tools/call', params: { name: 'big', arguments: { size: 1000 } } }))).toHaveLength(1000);
    const failed = await session.call({ method: 'tools/call', params: { name: 'big', arguments: { size: 3 * MAX_LINE } } });
    expect(failed).toMatchObject({ error: { code: -32603, message: expect.stringMatching(/exceeds 8192 bytes/) } });
    expect(textOf(await session.call({ method: 'tools/call', params: { name: 'big', arguments: { size: 20 } } }))).toBe('x'.repeat(20));
  });

  it('a server request on the call stream reaches the call, and its answer completes the call', async () => {
    const session = await open();
    const outcome = await session.call(
      { method: 'tools/call', params: { name: 'ask_name', arguments: {} } },
      { onServerRequest: async (req) => (req.method === 'elicitation/create' ? { action: 'accept', content: { name: 'Node' } } : {}) },
    );
    expect(textOf(outcome)).toBe('hello Node');
  });

  it('an aborted call resolves as cancelled while its stream is open', async () => {
    const session = await open();
    const ac = new AbortController();
    let asked = false;
    const onServerRequest = () => ((asked = true), new Promise<never>(() => undefined));
    const pending = session.call({ method: 'tools/call', params: { name: 'ask_name', arguments: {} } }, { onServerRequest, signal: ac.signal });
    // The server's elicitation reaching the call proves its stream is open.
    await waitFor(() => asked || undefined, 5_000, 'the elicitation on the call stream');
    ac.abort();
    expect(await pending).toMatchObject({ error: { code: -32603, message: expect.stringMatching(/cancelled/) } });
    expect(textOf(await session.call({ method: 'tools/call', params: { name: 'big', arguments: { size: 5 } } }))).toBe('xxxxx');
  });
});

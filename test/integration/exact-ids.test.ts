import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCli, type RunningCli } from '../helpers/cli.js';
import { MODERN_STDIO_COMMAND, startModernHttpServer, type RunningModernServer } from '../helpers/modern-fixture.js';
import { EVERYTHING_STDIO_COMMAND } from '../helpers/processes.js';
import { startV1SessionServer, type V1SessionServer } from '../helpers/v1-session-server.js';
import { httpRecorder, stdinTee, type Recorder } from './accept-helpers.js';
import { ACCEPT_BOTH, ALL_FACES, BIG, carriesId, type Face, legacyEcho, legacyHttp, meta, MODERN, modernEcho, modernPost, roundTrip, STDIO_START_MS } from './exact-ids-faces.js';

/**
 * Issue 11: a JSON-RPC id comes back exactly as the client wrote it, integers
 * past ±(2^53−1) included, on every face (POST /mcp modern and
 * initialize-era, /sse + /messages, /ws, --stdio) and through every bridge
 * direction, with real upstreams. Everything is raw text: a JSON client would
 * round the id before the test could look at it. The ids of an upstream's
 * own requests, and cancels: exact-ids-upstream.test.ts.
 */

interface Upstream {
  name: string;
  /** The bridge direction each client epoch takes. */
  directions: string;
  start(): Promise<{ args: string[]; recorder?: Recorder; stop(): Promise<void> }>;
  faces: Face[];
  /** Faces whose requests reach the upstream with the client's own id (an m2m HTTP relay). */
  verbatim?: Face[];
  /** What the upstream receives is recorded (a stdin tee, an HTTP recorder). */
  recorded?: boolean;
  /** The bridge itself names a listen's notifications by the listen's id (no verbatim relay of it). */
  stampsListens?: boolean;
}

/**
 * A modern HTTP server that reads JSON numbers as doubles, as a naive one
 * does: in front of the modern fixture, it answers every numeric id as the
 * double it parsed (9007199254740993 → 9007199254740992), on an SSE reply.
 */
async function startRoundingServer(target: string): Promise<{ url: string; close(): Promise<void> }> {
  let seq = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      if (req.method !== 'POST') return void res.writeHead(405).end();
      const msg = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id?: unknown };
      const parsed = msg.id;
      if (typeof parsed === 'number') msg.id = ++seq;
      const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => k === 'content-type' || k === 'accept' || k.startsWith('mcp-'))) as Record<string, string>;
      const up = await fetch(target, { method: 'POST', headers, body: JSON.stringify(msg) });
      const text = await up.text();
      const messages = (up.headers.get('content-type') ?? '').includes('event-stream')
        ? text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)) as { id?: unknown })
        : text === '' ? [] : [JSON.parse(text) as { id?: unknown }];
      res.writeHead(up.status, { 'content-type': 'text/event-stream' });
      for (const m of messages) res.write(`event: message\ndata: ${JSON.stringify('id' in m ? { ...m, id: parsed } : m)}\n\n`);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

function registerEcho(mcp: McpServer): void {
  mcp.registerTool('echo', { description: 'Echoes', inputSchema: { message: z.string() } }, async ({ message }) => ({ content: [{ type: 'text', text: `Echo: ${message}` }] }));
}

const UPSTREAMS: Upstream[] = [
  {
    name: 'server-everything over stdio',
    directions: 'modern-to-legacy, legacy-to-legacy',
    faces: ALL_FACES,
    recorded: true,
    stampsListens: true,
    start: async () => {
      const tee = stdinTee(EVERYTHING_STDIO_COMMAND);
      return { args: ['--', ...tee.command], recorder: tee.recorder, stop: () => tee.recorder.close() };
    },
  },
  {
    name: 'the modern fixture over HTTP',
    directions: 'modern-to-modern (verbatim relay), legacy-to-modern',
    faces: ALL_FACES,
    verbatim: ['modern POST /mcp', 'stdio modern'],
    recorded: true,
    start: async () => {
      const fixture: RunningModernServer = await startModernHttpServer();
      const recorder = await httpRecorder(fixture.url);
      const url = `${recorder.url}${new URL(fixture.url).pathname}`;
      return { args: ['--upstream', url], recorder, stop: async () => (await recorder.close(), await fixture.close()) };
    },
  },
  {
    name: 'the modern fixture over stdio',
    directions: 'modern-to-modern (remapped ids), legacy-to-modern',
    faces: ['modern POST /mcp', 'initialize-era POST /mcp', 'stdio modern'],
    stampsListens: true,
    start: async () => ({ args: ['--', ...MODERN_STDIO_COMMAND], stop: async () => {} }),
  },
  {
    name: 'a modern HTTP server that rounds ids past 2^53 in its SSE replies',
    directions: 'modern-to-modern (verbatim relay)',
    faces: ['modern POST /mcp'],
    start: async () => {
      const fixture: RunningModernServer = await startModernHttpServer();
      const rounding = await startRoundingServer(fixture.url);
      return { args: ['--upstream', rounding.url], stop: async () => (await rounding.close(), await fixture.close()) };
    },
  },
  {
    name: 'an SDK v1 Streamable HTTP server',
    directions: 'modern-to-legacy, legacy-to-legacy',
    faces: ['modern POST /mcp', 'initialize-era POST /mcp', '/ws'],
    start: async () => {
      const server: V1SessionServer = await startV1SessionServer({ name: 'exact-ids-v1', register: registerEcho });
      return { args: ['--upstream', server.url], stop: () => server.close() };
    },
  },
];

describe.each(UPSTREAMS)('exact ids: $name ($directions)', (u) => {
  let cli: RunningCli;
  let upstream: Awaited<ReturnType<Upstream['start']>>;

  beforeAll(async () => {
    upstream = await u.start();
    cli = await startCli(['--log-level', 'warn', ...upstream.args]);
  });

  afterAll(async () => {
    await cli?.close();
    await upstream?.stop();
  });

  // A stdio face starts a bridge of its own first (STDIO_START_MS).
  it.each(u.faces)('%s: every answer carries its id token byte-identical', async (face) => {
    await roundTrip(face, cli, upstream.args, u.verbatim?.includes(face) ?? false);
  }, STDIO_START_MS + 30_000);

  if (u.stampsListens) it('a listen’s notifications name it by its exact id (io.modelcontextprotocol/subscriptionId)', async () => {
    const ac = new AbortController();
    const body = `{"jsonrpc":"2.0","id":9007199254740993,"method":"subscriptions/listen","params":${JSON.stringify({ notifications: { toolsListChanged: true }, _meta: meta })}}`;
    const res = await fetch(`${cli.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: ACCEPT_BOTH, 'mcp-protocol-version': MODERN, 'mcp-method': 'subscriptions/listen' }, body, signal: ac.signal });
    const reader = res.body!.getReader();
    let text = '';
    try {
      for (let guard = 0; guard < 1_000 && !text.includes('acknowledged'); guard++) {
        const chunk = await reader.read();
        if (chunk.done) break;
        text += new TextDecoder().decode(chunk.value);
      }
    } finally {
      ac.abort();
    }
    expect(text).toContain('notifications/subscriptions/acknowledged');
    expect(text).toContain('"io.modelcontextprotocol/subscriptionId":9007199254740993');
  });

  if (u.recorded) it('what the upstream receives: the bridge’s own ids where it remaps, the client’s bytes where it relays verbatim', async () => {
    const modern = await modernPost(cli.url);
    const legacy = await legacyHttp(cli.url);
    await Promise.all(BIG.flatMap((token, i) => [modern.send(modernEcho(token, `up-m${i}`)), legacy.send(legacyEcho(token, `up-l${i}`))]));
    await legacy.close();
    const raw = upstream.recorder!.raw();
    const sent = (message: string) => raw.filter((t) => t.includes(`"${message}"`));
    for (const [i, token] of BIG.entries()) {
      // A legacy session upstream carries the bridge's own ids, never a client's.
      expect(sent(`up-l${i}`)).toHaveLength(1);
      expect(carriesId(sent(`up-l${i}`)[0]!, token)).toBe(false);
      // The modern POST face relays to a modern HTTP upstream the request as the client wrote it; anything else remaps.
      expect(sent(`up-m${i}`)).toHaveLength(1);
      if (u.verbatim?.includes('modern POST /mcp')) expect(sent(`up-m${i}`)[0]).toBe(modernEcho(token, `up-m${i}`));
      else expect(carriesId(sent(`up-m${i}`)[0]!, token)).toBe(false);
    }
  });
});

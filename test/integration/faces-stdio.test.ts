import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import type { JSONRPCMessage, JSONRPCNotification, JSONRPCRequest, JSONRPCResponse } from '@modelcontextprotocol/server';
import type { LegacyHandler, ModernHandler, ModernRequestContext } from '../../src/contracts/downstream.js';
import { StdioFace } from '../../src/faces/stdio-face.js';
import { resultResponse } from '../../src/jsonrpc/messages.js';
import { silentLogger } from '../../src/log.js';
import { waitFor } from '../helpers/wait-for.js';

const V = '2026-07-28';
const PV = 'io.modelcontextprotocol/protocolVersion';
const META = { [PV]: V, 'io.modelcontextprotocol/clientCapabilities': {}, 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' } };
const SERVER_META = { 'io.modelcontextprotocol/serverInfo': { name: 'stdio-modern', version: '1.0.0' } };

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });
}

/** Per-test record of what the handlers saw. */
let seen: { modern: string[]; legacy: string[]; started: unknown[]; aborted: unknown[]; sessionsClosed: number };

const modern: ModernHandler = {
  async handle(req: JSONRPCRequest, ctx: ModernRequestContext): Promise<JSONRPCResponse> {
    seen.modern.push(req.method);
    if (req.method === 'server/discover') {
      return resultResponse(req.id, { resultType: 'complete', supportedVersions: [V], capabilities: { tools: {} }, ttlMs: 0, cacheScope: 'private', _meta: SERVER_META });
    }
    if (req.method === 'tools/list') {
      return resultResponse(req.id, { resultType: 'complete', tools: [{ name: 'echo', inputSchema: { type: 'object' } }], ttlMs: 0, cacheScope: 'private', _meta: SERVER_META });
    }
    const { name, arguments: args = {} } = (req.params ?? {}) as { name?: string; arguments?: Record<string, unknown> };
    if (name === 'stream') {
      const token = (req.params as { _meta?: { progressToken?: unknown } })._meta?.progressToken;
      for (let i = 1; i <= 2; i++) ctx.notify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: token, progress: i } } as JSONRPCNotification);
    }
    if (name === 'slow') {
      seen.started.push(req.id);
      await sleep(10_000, ctx.signal);
      if (ctx.signal.aborted) seen.aborted.push(req.id);
      ctx.notify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'late', progress: 1 } } as JSONRPCNotification);
    }
    return resultResponse(req.id, { resultType: 'complete', content: [{ type: 'text', text: String(args.text ?? name) }], _meta: SERVER_META });
  },
  close: async () => {},
};

const legacy: LegacyHandler = {
  async openSession(params) {
    return {
      result: { protocolVersion: params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'stdio-legacy', version: '1' } },
      session: {
        handleRequest: async (req) => {
          seen.legacy.push(req.method);
          return resultResponse(req.id, req.method === 'tools/list' ? { tools: [] } : { routed: 'legacy' });
        },
        handleNotification: () => {},
        close: async () => void seen.sessionsClosed++,
      },
    } as Awaited<ReturnType<LegacyHandler['openSession']>>;
  },
  close: async () => {},
};

/** One face on in-memory pipes, with the client side's lines collected. */
class Harness {
  readonly stdin = new PassThrough();
  readonly stdout = new PassThrough();
  readonly face: StdioFace;
  readonly out: Array<Record<string, unknown>> = [];
  readonly rawLines: string[] = [];
  private buf = '';

  constructor() {
    this.face = StdioFace.start({ modern, legacy, logger: silentLogger, input: this.stdin, output: this.stdout });
    this.stdout.setEncoding('utf8');
    this.stdout.on('data', (chunk: string) => {
      this.buf += chunk;
      for (let nl = this.buf.indexOf('\n'); nl !== -1; nl = this.buf.indexOf('\n')) {
        const line = this.buf.slice(0, nl);
        this.buf = this.buf.slice(nl + 1);
        this.rawLines.push(line);
        this.out.push(JSON.parse(line));
      }
    });
  }

  send(msg: unknown): void {
    this.stdin.write(typeof msg === 'string' ? msg + '\n' : JSON.stringify(msg) + '\n');
  }

  /** Waits for the response with `id` (bounded). */
  async response(id: unknown, ms = 3000): Promise<Record<string, unknown>> {
    const end = Date.now() + ms;
    for (;;) {
      const found = this.out.find((m) => m.id === id && ('result' in m || 'error' in m));
      if (found) return found;
      if (Date.now() > end) throw new Error(`no response for ${JSON.stringify(id)}; got ${JSON.stringify(this.out)}`);
      await sleep(5);
    }
  }
}

/** Polls `cond` every 5 ms, for up to `ms`; the assertion after it says what was expected. */
/** Waits until `cond` holds; a timeout fails naming the condition (it used to return silently). */
async function until(cond: () => boolean, ms = 5_000): Promise<void> {
  await waitFor(() => (cond() ? true : undefined), ms, String(cond));
}

const harnesses: Harness[] = [];
function harness(): Harness {
  seen = { modern: [], legacy: [], started: [], aborted: [], sessionsClosed: 0 };
  const h = new Harness();
  harnesses.push(h);
  return h;
}

afterEach(async () => {
  for (const h of harnesses.splice(0)) {
    h.stdin.end();
    await h.face.close();
  }
});

const initialize = (id: unknown = 0) => ({ jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'legacy', version: '1' } } });
const modernReq = (id: unknown, method: string, params: Record<string, unknown> = {}, meta: Record<string, unknown> = META) => ({ jsonrpc: '2.0', id, method, params: { ...params, _meta: meta } });

describe('stdio face: epoch detection', () => {
  it('initialize without an envelope opens a legacy session', async () => {
    const h = harness();
    h.send(initialize());
    expect(await h.response(0)).toMatchObject({ result: { serverInfo: { name: 'stdio-legacy' }, protocolVersion: '2025-06-18' } });
    h.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    h.send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(await h.response(1)).toMatchObject({ result: { tools: [] } });
    expect(seen.legacy).toEqual(['tools/list']);
    expect(seen.modern).toEqual([]);
  });

  it('a first message with the envelope pins modern; a later initialize gets -32022', async () => {
    const h = harness();
    h.send(modernReq(1, 'tools/list'));
    expect(await h.response(1)).toMatchObject({ result: { tools: [{ name: 'echo' }] } });
    h.send(initialize(2));
    expect(await h.response(2)).toMatchObject({ error: { code: -32022, data: { supported: [V], requested: '2025-06-18' } } });
    expect(seen.legacy).toEqual([]);
  });

  it('a server/discover probe followed by initialize switches to legacy', async () => {
    const h = harness();
    h.send(modernReq('probe', 'server/discover'));
    expect(await h.response('probe')).toMatchObject({ result: { supportedVersions: [V] } });
    h.send(initialize(0));
    expect(await h.response(0)).toMatchObject({ result: { serverInfo: { name: 'stdio-legacy' } } });
    h.send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(await h.response(1)).toMatchObject({ result: { tools: [] } });
    expect(seen.modern).toEqual(['server/discover']);
  });

  it('server/discover then a modern request pins modern', async () => {
    const h = harness();
    h.send(modernReq('d', 'server/discover'));
    await h.response('d');
    h.send(modernReq(1, 'tools/list'));
    await h.response(1);
    h.send(initialize(2));
    expect(await h.response(2)).toMatchObject({ error: { code: -32022 } });
  });

  it('a bad envelope first is refused (-32602) and decides nothing', async () => {
    const h = harness();
    h.send(modernReq(1, 'tools/list', {}, { [PV]: V }));
    expect(await h.response(1)).toMatchObject({ error: { code: -32602, data: { envelope: { key: 'io.modelcontextprotocol/clientCapabilities' } } } });
    h.send(initialize(2));
    expect(await h.response(2)).toMatchObject({ result: { serverInfo: { name: 'stdio-legacy' } } });
  });

  it('an unparseable line gets -32700 with id null', async () => {
    const h = harness();
    h.send('{"jsonrpc": "2.0", nope');
    await h.response(null);
    expect(h.out[0]).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
  });
});

describe('stdio face: modern requests', () => {
  it('notifications go out as lines before the response, tied to the request', async () => {
    const h = harness();
    h.send(modernReq(1, 'tools/call', { name: 'stream' }, { ...META, progressToken: 'tok' }));
    await h.response(1);
    expect(h.out.map((m) => m.method ?? 'response')).toEqual(['notifications/progress', 'notifications/progress', 'response']);
    expect(h.out[0]).toMatchObject({ params: { progressToken: 'tok', progress: 1 } });
  });

  it('notifications/cancelled aborts that request, and nothing more is written for it', async () => {
    const h = harness();
    h.send(modernReq('slow-1', 'tools/call', { name: 'slow' }));
    await until(() => seen.started.includes('slow-1'));
    h.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'slow-1', reason: 'test' } });
    h.send(modernReq(2, 'tools/call', { name: 'echo', arguments: { text: 'after' } }));
    await h.response(2);
    await until(() => seen.aborted.length > 0);
    expect(seen.aborted).toEqual(['slow-1']);
    // The aborted handler went on to notify and return; a request sent after that is answered after anything
    // the face would have written for it (one pipe keeps the order).
    h.send(modernReq(3, 'tools/call', { name: 'echo', arguments: { text: 'later' } }));
    await h.response(3);
    expect(h.out.filter((m) => m.id === 'slow-1' || m.method !== undefined)).toEqual([]);
  });

  it('the ladder runs without header rungs (Mcp-* headers do not exist on stdio) and still refuses removed methods', async () => {
    const h = harness();
    h.send(modernReq(1, 'tools/call', { name: 'echo', arguments: { text: 'ok' } }));
    expect(await h.response(1)).toMatchObject({ result: { content: [{ text: 'ok' }] } });
    h.send(modernReq(2, 'ping'));
    expect(await h.response(2)).toMatchObject({ error: { code: -32601 } });
  });

  it('stdout carries only JSON-RPC lines', async () => {
    const h = harness();
    h.send(modernReq(1, 'tools/call', { name: 'stream' }, { ...META, progressToken: 1 }));
    h.send('garbage');
    h.send(modernReq(2, 'nope/nope'));
    await h.response(1);
    await h.response(2);
    expect(h.rawLines.length).toBeGreaterThanOrEqual(5);
    for (const line of h.rawLines) expect(JSON.parse(line)).toMatchObject({ jsonrpc: '2.0' });
  });
});

describe('stdio face: shutdown', () => {
  it('stdin EOF closes the legacy session and resolves done', async () => {
    const h = harness();
    h.send(initialize());
    await h.response(0);
    h.stdin.end();
    await h.face.done;
    expect(seen.sessionsClosed).toBe(1);
  });

  it('stdin EOF aborts modern requests in flight and resolves done', async () => {
    const h = harness();
    h.send(modernReq('long', 'tools/call', { name: 'slow' }));
    await until(() => seen.started.includes('long'));
    h.stdin.end();
    await h.face.done;
    await until(() => seen.aborted.length > 0);
    expect(seen.aborted).toEqual(['long']);
  });
});

/** An SDK Transport over the harness pipes, so real SDK clients speak to the face in-process. */
function pipeTransport(h: Harness) {
  let buf = '';
  const t = {
    onmessage: undefined as ((m: JSONRPCMessage) => void) | undefined,
    onclose: undefined as (() => void) | undefined,
    onerror: undefined as ((e: Error) => void) | undefined,
    async start() {
      h.stdout.on('data', (chunk: string) => {
        buf += chunk;
        for (let nl = buf.indexOf('\n'); nl !== -1; nl = buf.indexOf('\n')) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          t.onmessage?.(JSON.parse(line));
        }
      });
    },
    async send(m: JSONRPCMessage) {
      h.stdin.write(JSON.stringify(m) + '\n');
    },
    async close() {
      h.stdin.end();
      t.onclose?.();
    },
  };
  return t;
}

describe('stdio face: real SDK clients', () => {
  it('the SDK v2 client pinned to 2026-07-28 discovers and calls a tool', async () => {
    const h = harness();
    const client = new Client({ name: 'sdk-v2', version: '1' }, { versionNegotiation: { mode: { pin: V } } });
    await client.connect(pipeTransport(h));
    expect(client.getServerVersion()).toMatchObject({ name: 'stdio-modern' });
    const result = await client.callTool({ name: 'echo', arguments: { text: 'over stdio' } });
    expect(result.content).toEqual([{ type: 'text', text: 'over stdio' }]);
    expect(seen.modern).toContain('server/discover');
    await client.close();
  });

  it('the SDK v1 client initializes a legacy session and lists tools', async () => {
    const h = harness();
    const client = new ClientV1({ name: 'sdk-v1', version: '1' });
    await client.connect(pipeTransport(h));
    expect(client.getServerVersion()).toMatchObject({ name: 'stdio-legacy' });
    expect(await client.listTools()).toMatchObject({ tools: [] });
    expect(seen.legacy).toEqual(['tools/list']);
    await client.close();
  });
});


import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stdinTee, type Recorder } from './accept-helpers.js';
import { startCli, type RunningCli } from '../helpers/cli.js';
import { modernPost, readMessages } from '../helpers/faults.js';
import { startModernHttpServer, type RunningModernServer } from '../helpers/modern-fixture.js';
import { CLIENT_KIND, SERVER_KIND, attr, startOtlpReceiver, type OtlpReceiver } from '../helpers/otlp-receiver.js';

/**
 * Issue 13, traces: the built CLI with `OTEL_EXPORTER_OTLP_ENDPOINT` pointing
 * at an OTLP/HTTP receiver on 127.0.0.1 (a node:http server decoding the JSON
 * export), between a raw 2026-07-28 client and the SDK v2 modern fixture
 * behind a recording hop. A client's trace context (header or `_meta`) becomes
 * the parent of the bridge's SERVER span, whose CLIENT child's context reaches
 * the upstream in the `traceparent` header and in `params._meta.traceparent`.
 */

/** A hop in front of the upstream that records each request's traceparent header and body, then forwards it. */
async function startRecordingHop(target: string): Promise<{ url: string; seen: Array<{ header?: string; body: any }>; close(): Promise<void> }> {
  const seen: Array<{ header?: string; body: any }> = [];
  const to = new URL(target);
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      let body: unknown;
      try {
        body = raw.length ? JSON.parse(raw.toString('utf8')) : undefined;
      } catch {
        body = undefined;
      }
      seen.push({ header: req.headers.traceparent as string | undefined, body });
      const up = http.request({ host: to.hostname, port: to.port, path: to.pathname, method: req.method, headers: { ...req.headers, host: to.host } }, (upRes) => {
        res.writeHead(upRes.statusCode ?? 502, upRes.headers);
        upRes.pipe(res);
      });
      up.on('error', () => res.writeHead(502).end());
      up.end(raw);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${to.pathname}`, seen, close: () => new Promise((r) => { server.close(() => r()); server.closeAllConnections(); }) };
}

async function until<T>(get: () => T | undefined, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = get();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}

const hex = (n: number, len: number) => n.toString(16).padStart(len, '0');

describe('traces cross the bridge (OTLP/HTTP to a receiver on 127.0.0.1)', () => {
  let receiver: OtlpReceiver;
  let upstream: RunningModernServer;
  let hop: Awaited<ReturnType<typeof startRecordingHop>>;
  let cli: RunningCli;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    upstream = await startModernHttpServer();
    hop = await startRecordingHop(upstream.url);
    cli = await startCli(['--log-level', 'warn', '--upstream', hop.url], 30_000, {
      ...process.env,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_BSP_SCHEDULE_DELAY: '50',
      OTEL_SERVICE_NAME: 'bridge-under-test',
    });
    // Span names carry a tool name only once the upstream's own tools/list has named it (bounded, like metric labels).
    await readMessages(await modernPost(cli.url, 1, 'tools/list'));
  });
  afterAll(async () => {
    await cli?.close();
    await hop?.close();
    await upstream?.close();
    await receiver?.close();
  });

  const check = async (traceId: string, clientSpanId: string, via: 'header' | '_meta', id: number) => {
    const traceparent = `00-${traceId}-${clientSpanId}-01`;
    const res = await modernPost(cli.url, id, 'tools/call', { name: 'echo', arguments: { message: 'traced' }, ...(via === '_meta' ? { _meta: { traceparent } } : {}) }, undefined, via === 'header' ? { traceparent } : {});
    const answer = (await readMessages(res)).find((m) => m.id === id)!;
    expect(JSON.stringify(answer.result)).toContain('Echo: traced');

    const server = await until(() => receiver.spans.find((s) => s.traceId === traceId && s.kind === SERVER_KIND));
    const client = await until(() => receiver.spans.find((s) => s.traceId === traceId && s.kind === CLIENT_KIND));
    expect(server.parentSpanId).toBe(clientSpanId);
    expect(server.name).toBe('tools/call echo');
    expect(attr(server, 'mcp.method.name')).toBe('tools/call');
    expect(attr(server, 'gen_ai.tool.name')).toBe('echo');
    expect(attr(server, 'mcp.protocol.version')).toBe('2026-07-28');
    expect(attr(server, 'mcp.bridge.client_epoch')).toBe('modern');
    expect(attr(server, 'mcp.bridge.upstream_epoch')).toBe('modern');
    expect(client.parentSpanId).toBe(server.spanId);
    expect(client.name).toBe('upstream tools/call');

    // The upstream saw the bridge's CLIENT span as its parent, both ways.
    const up = hop.seen.find((s) => s.body?.id === id && s.body?.method === 'tools/call')!;
    expect(up.header).toBe(`00-${traceId}-${client.spanId}-01`);
    expect(up.body.params._meta.traceparent).toBe(`00-${traceId}-${client.spanId}-01`);
    // The rest of the client's envelope went up unchanged.
    expect(up.body.params._meta['io.modelcontextprotocol/protocolVersion']).toBe('2026-07-28');
  };

  it('a traceparent header from the client parents the SERVER span; its CLIENT child reaches the upstream (header and _meta)', async () => {
    await check(hex(0xabc1, 32), hex(0x1234, 16), 'header', 101);
    expect(receiver.contentTypes.every((t) => t.startsWith('application/json'))).toBe(true);
  });

  it('so does params._meta.traceparent (2026-07-28) when no header carries one', async () => {
    await check(hex(0xabc2, 32), hex(0x5678, 16), '_meta', 102);
  });

  it('a request without trace context starts a new trace at the bridge', async () => {
    const before = receiver.spans.length;
    const res = await modernPost(cli.url, 103, 'tools/list');
    await readMessages(res);
    const server = await until(() => receiver.spans.slice(before).find((s) => s.kind === SERVER_KIND && s.name === 'tools/list' && attr(s, 'jsonrpc.request.id') === '103'));
    expect(server.parentSpanId ?? '').toBe('');
    const up = hop.seen.find((s) => s.body?.id === 103)!;
    expect(up.header?.split('-')[1]).toBe(server.traceId);
  });

  it('a parent the client did not sample: no span is exported, and the trace goes upstream unsampled', async () => {
    const unsampled = hex(0xabc3, 32);
    const res = await modernPost(cli.url, 104, 'tools/call', { name: 'echo', arguments: { message: 'unsampled' } }, undefined, { traceparent: `00-${unsampled}-${hex(0x9abc, 16)}-00` });
    expect(JSON.stringify((await readMessages(res)).find((m) => m.id === 104)?.result)).toContain('Echo: unsampled');
    const up = hop.seen.find((s) => s.body?.id === 104 && s.body?.method === 'tools/call')!;
    expect(up.header).toMatch(new RegExp(`^00-${unsampled}-[0-9a-f]{16}-00$`));
    expect(up.body.params._meta.traceparent).toBe(up.header);
    // Spans leave in the order they end: once a later sampled request's spans are in, none of the first can follow.
    await check(hex(0xabc4, 32), hex(0xdef0, 16), 'header', 105);
    expect(receiver.spans.filter((s) => s.traceId === unsampled)).toEqual([]);
  });
});

describe('traces cross the bridge in front of a legacy stdio server', () => {
  const SERVER = [process.execPath, path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'crash-server.mjs')];
  let receiver: OtlpReceiver;
  let recorder: Recorder;
  let cli: RunningCli;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    const tee = stdinTee(SERVER);
    recorder = tee.recorder;
    cli = await startCli(['--log-level', 'warn', '--', ...tee.command], 30_000, { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '50' });
  });
  afterAll(async () => {
    await cli?.close();
    await recorder?.close();
    await receiver?.close();
  });

  /** The child's received tools/call whose _meta.traceparent names `traceId`. */
  const received = (traceId: string) =>
    recorder.received().find((m) => m.method === 'tools/call' && String(((m.params as any)?._meta as any)?.traceparent ?? '').split('-')[1] === traceId) as any;

  it('a 2026-07-28 client (modern-to-legacy): SERVER span from its traceparent, CLIENT child, and the child process gets _meta.traceparent', async () => {
    const traceId = hex(0xbeef1, 32);
    const res = await modernPost(cli.url, 7, 'tools/call', { name: 'echo', arguments: { message: 'm2l' } }, undefined, { traceparent: `00-${traceId}-${hex(0x77, 16)}-01` });
    expect(JSON.stringify((await readMessages(res)).find((m) => m.id === 7)!.result)).toContain('Echo: m2l');
    const server = await until(() => receiver.spans.find((s) => s.traceId === traceId && s.kind === SERVER_KIND));
    const client = await until(() => receiver.spans.find((s) => s.traceId === traceId && s.kind === CLIENT_KIND));
    expect(server.parentSpanId).toBe(hex(0x77, 16));
    expect(attr(server, 'mcp.bridge.upstream_epoch')).toBe('initialize');
    expect(client.parentSpanId).toBe(server.spanId);
    const up = await until(() => received(traceId));
    expect(up.params._meta.traceparent).toBe(`00-${traceId}-${client.spanId}-01`);
  });

  it('an initialize-era Streamable HTTP client with a traceparent header (legacy-to-legacy): SERVER span parented by it', async () => {
    const traceId = hex(0xbeef3, 32);
    const client = new Client({ name: 'traced-v1-header', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${cli.url}/mcp`), { requestInit: { headers: { traceparent: `00-${traceId}-${hex(0x99, 16)}-01` } } }));
    try {
      expect(JSON.stringify(await client.callTool({ name: 'echo', arguments: { message: 'hdr' } }))).toContain('Echo: hdr');
    } finally {
      await client.close();
    }
    const server = await until(() => receiver.spans.find((s) => s.traceId === traceId && s.kind === SERVER_KIND && s.name.startsWith('tools/call')));
    expect(server.parentSpanId).toBe(hex(0x99, 16));
    const upstream = await until(() => receiver.spans.find((s) => s.traceId === traceId && s.kind === CLIENT_KIND && s.parentSpanId === server.spanId));
    expect((await until(() => received(traceId))).params._meta.traceparent).toBe(`00-${traceId}-${upstream.spanId}-01`);
  });

  it('an initialize-era SDK v1 client with params._meta.traceparent (legacy-to-legacy): the same chain, with mcp.session.id', async () => {
    const traceId = hex(0xbeef2, 32);
    const client = new Client({ name: 'traced-v1', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${cli.url}/mcp`)));
    try {
      const result = await client.callTool({ name: 'echo', arguments: { message: 'l2l' }, _meta: { traceparent: `00-${traceId}-${hex(0x88, 16)}-01` } });
      expect(JSON.stringify(result)).toContain('Echo: l2l');
    } finally {
      await client.close();
    }
    const server = await until(() => receiver.spans.find((s) => s.traceId === traceId && s.kind === SERVER_KIND));
    const upstream = await until(() => receiver.spans.find((s) => s.traceId === traceId && s.kind === CLIENT_KIND));
    expect(server.parentSpanId).toBe(hex(0x88, 16));
    expect(attr(server, 'mcp.bridge.client_epoch')).toBe('initialize');
    expect(attr(server, 'mcp.session.id')).toMatch(/\S{8,}/);
    expect(upstream.parentSpanId).toBe(server.spanId);
    expect((await until(() => received(traceId))).params._meta.traceparent).toBe(`00-${traceId}-${upstream.spanId}-01`);
  });
});

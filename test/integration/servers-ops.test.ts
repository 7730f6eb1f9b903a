import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConfigBridge, type ConfigBridge } from '../helpers/config-bridge.js';
import { modernPost, readMessages, waitUntil } from '../helpers/faults.js';
import { MODERN_STDIO_COMMAND, startModernHttpServer, type RunningModernServer } from '../helpers/modern-fixture.js';
import { CLIENT_KIND, SERVER_KIND, attr, startOtlpReceiver, type OtlpReceiver } from '../helpers/otlp-receiver.js';
import { parsePrometheus, sum, type Sample } from '../helpers/prometheus-text.js';

/**
 * Issue 13 in config mode (issue 14): one daemon, one registry, one tracer.
 * A legacy stdio server (SDK v1) and the 2026-07-28 SDK v2 fixture over HTTP
 * in one file; `/metrics` scraped before and after known traffic to each,
 * with exact deltas per `server` label; spans at an OTLP receiver on
 * 127.0.0.1 carry the server's name; SIGHUP changing, adding and removing
 * entries leaves one series per label set and counters that go on.
 */

const here = path.dirname(fileURLToPath(import.meta.url));
const LEGACY = [process.execPath, path.join(here, '..', 'fixtures', 'crash-server.mjs')];
const TOKEN = 'servers-ops-token-0123456789';
const AUTH = { authorization: `Bearer ${TOKEN}` };

let dir: string;
let file: string;
let modern: RunningModernServer;
let receiver: OtlpReceiver;
let bridge: ConfigBridge;

const legacyEntry = () => ({ command: LEGACY[0], args: LEGACY.slice(1) });
const modernEntry = (extra: Record<string, unknown> = {}) => ({ type: 'http', url: modern.url, ...extra });
const write = (servers: Record<string, unknown>, bridgeKeys: Record<string, unknown> = { logLevel: 'warn', authToken: TOKEN }) =>
  writeFileSync(file, JSON.stringify({ mcpServers: servers, bridge: bridgeKeys }, null, 2));

async function scrape(url = `${bridge.url}/metrics`, headers: Record<string, string> = AUTH): Promise<Sample[]> {
  const res = await fetch(url, { headers });
  expect(res.status).toBe(200);
  const samples = parsePrometheus(await res.text());
  // One sample per name and label set: a series registered twice would show twice.
  const keys = samples.map((s) => `${s.name}${JSON.stringify(Object.entries(s.labels).sort())}`);
  expect(keys.length - new Set(keys).size).toBe(0);
  return samples;
}

/** One modern request to a server's route, with the token; the answer's message. */
async function call(server: string, id: number, method: string, params: Record<string, unknown> = {}, headers: Record<string, string> = {}): Promise<Record<string, unknown>> {
  const res = await modernPost(`${bridge.url}/servers/${server}`, id, method, params, undefined, { ...AUTH, ...headers });
  return (await readMessages(res)).find((m) => m.id === id)!;
}

const echo = (server: string, id: number, message: string, headers: Record<string, string> = {}) => call(server, id, 'tools/call', { name: 'echo', arguments: { message } }, headers);

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'mcp-bridge-servers-ops-'));
  file = path.join(dir, 'servers.json');
  [modern, receiver] = await Promise.all([startModernHttpServer(), startOtlpReceiver()]);
  write({ legacy: legacyEntry(), modern: modernEntry() });
  bridge = await startConfigBridge(file, [], 30_000, {
    env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '50', OTEL_SERVICE_NAME: 'servers-under-test' },
    headers: AUTH,
  });
  await bridge.waitReady(['legacy', 'modern']);
  // Tool names become label values once each server's own tools/list named them.
  await call('legacy', 1, 'tools/list');
  await call('modern', 1, 'tools/list');
}, 60_000);

afterAll(async () => {
  await bridge?.close();
  await Promise.allSettled([modern?.close(), receiver?.close()]);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('metrics and traces of a config-file daemon', { timeout: 60_000 }, () => {
  it('serves /metrics on the main port behind the same token, and counts the refusal', async () => {
    const before = await scrape();
    expect((await fetch(`${bridge.url}/metrics`)).status).toBe(401);
    const after = await scrape();
    expect(sum(after, 'mcp_bridge_refused_total', { reason: 'auth' }) - sum(before, 'mcp_bridge_refused_total', { reason: 'auth' })).toBe(1);
    expect(bridge.stderr()).toContain(`; metrics ${bridge.url}/metrics`);
  });

  it('counts each server\'s requests under its own server label, with exact deltas', async () => {
    const before = await scrape();
    for (let i = 0; i < 3; i++) expect(JSON.stringify((await echo('legacy', 10 + i, `l${i}`)).result)).toContain(`Echo: l${i}`);
    expect(JSON.stringify((await echo('modern', 20, 'm')).result)).toContain('Echo: m');
    const after = await scrape();
    const delta = (name: string, labels: Record<string, string>) => sum(after, name, labels) - sum(before, name, labels);
    const call = { face: 'http', client_epoch: 'modern', method: 'tools/call', tool: 'echo', outcome: 'ok' };
    expect(delta('mcp_bridge_requests_total', { ...call, server: 'legacy', upstream_epoch: 'initialize' })).toBe(3);
    expect(delta('mcp_bridge_requests_total', { ...call, server: 'modern', upstream_epoch: 'modern' })).toBe(1);
    expect(delta('mcp_bridge_requests_total', { method: 'tools/call' })).toBe(4);
    expect(delta('mcp_bridge_request_duration_seconds_count', { server: 'legacy', method: 'tools/call' })).toBe(3);
    expect(delta('mcp_bridge_request_duration_seconds_count', { server: 'modern', method: 'tools/call' })).toBe(1);
    expect(delta('mcp_bridge_upstream_duration_seconds_count', { server: 'legacy', upstream_epoch: 'initialize', method: 'tools/call' })).toBe(3);
    expect(delta('mcp_bridge_upstream_duration_seconds_count', { server: 'modern', upstream_epoch: 'modern', method: 'tools/call' })).toBe(1);
    // Every per-server series names a server of the file; the gauges have one row per server.
    expect(new Set(after.filter((s) => s.name.startsWith('mcp_bridge_requests_total')).map((s) => s.labels.server))).toEqual(new Set(['legacy', 'modern']));
    expect(sum(after, 'mcp_bridge_stdio_children', { server: 'legacy' })).toBeGreaterThanOrEqual(1);
    expect(sum(after, 'mcp_bridge_stdio_children', { server: 'modern' })).toBe(0);
    expect(after.filter((s) => s.name === 'mcp_bridge_requests_in_flight').map((s) => s.labels.server).sort()).toEqual(['legacy', 'modern']);
  });

  it('counts a downstream session and its initialize under the server it was opened on', async () => {
    const before = await scrape();
    const client = new Client({ name: 'servers-ops-v1', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${bridge.url}/servers/legacy/mcp`), { requestInit: { headers: AUTH } }));
    try {
      const during = await scrape();
      const delta = (labels: Record<string, string>) => sum(during, 'mcp_bridge_downstream_sessions', labels) - sum(before, 'mcp_bridge_downstream_sessions', labels);
      expect(delta({ server: 'legacy', transport: 'streamable-http' })).toBe(1);
      expect(delta({ server: 'modern', transport: 'streamable-http' })).toBe(0);
      const init = { server: 'legacy', face: 'streamable-http', client_epoch: 'initialize', method: 'initialize', outcome: 'ok' };
      expect(sum(during, 'mcp_bridge_requests_total', init) - sum(before, 'mcp_bridge_requests_total', init)).toBe(1);
    } finally {
      await client.close();
    }
  });

  it('spans carry the server name (mcp.bridge.server) on the SERVER span and its upstream CLIENT child', async () => {
    const hex = (n: number, len: number) => n.toString(16).padStart(len, '0');
    for (const [server, n] of [['modern', 0xa1], ['legacy', 0xa2]] as const) {
      const traceId = hex(n, 32);
      const answer = await echo(server, 30 + n, 'traced', { traceparent: `00-${traceId}-${hex(0x42, 16)}-01` });
      expect(JSON.stringify(answer.result)).toContain('Echo: traced');
      const span = await waitUntil(`${server}'s SERVER span`, () => receiver.spans.find((s) => s.traceId === traceId && s.kind === SERVER_KIND), 15_000);
      const child = await waitUntil(`${server}'s CLIENT span`, () => receiver.spans.find((s) => s.traceId === traceId && s.kind === CLIENT_KIND), 15_000);
      expect(span.parentSpanId).toBe(hex(0x42, 16));
      expect(attr(span, 'mcp.bridge.server')).toBe(server);
      expect(attr(span, 'gen_ai.tool.name')).toBe('echo');
      expect(child.parentSpanId).toBe(span.spanId);
      expect(attr(child, 'mcp.bridge.server')).toBe(server);
    }
  });

  it('SIGHUP changing, adding and removing servers keeps /metrics whole: one series per label set, counters that go on, no rows for a removed server', async () => {
    const before = await scrape();
    const calls = (samples: Sample[], server: string) => sum(samples, 'mcp_bridge_requests_total', { server, method: 'tools/call', outcome: 'ok' });
    // modern changes (its sessions restart), extra is added; legacy is kept.
    write({ legacy: legacyEntry(), modern: modernEntry({ callTimeout: 30_000 }), extra: { command: MODERN_STDIO_COMMAND[0], args: MODERN_STDIO_COMMAND.slice(1) } });
    expect(await bridge.reload()).toMatch(/added \[extra\], removed \[\], changed \[modern\], kept \[legacy\]/);
    await bridge.waitReady(['legacy', 'modern', 'extra']);
    await call('extra', 40, 'tools/list');
    expect(JSON.stringify((await echo('modern', 41, 'again')).result)).toContain('Echo: again');
    expect(JSON.stringify((await echo('extra', 42, 'new')).result)).toContain('Echo: new');
    const during = await scrape();
    // The changed server's series go on from where they were (the same scope), not from 0.
    expect(calls(during, 'modern') - calls(before, 'modern')).toBe(1);
    expect(calls(during, 'legacy') - calls(before, 'legacy')).toBe(0);
    expect(calls(during, 'extra')).toBe(1);
    expect(sum(during, 'mcp_bridge_stdio_children', { server: 'extra' })).toBeGreaterThanOrEqual(1);

    write({ legacy: legacyEntry(), modern: modernEntry({ callTimeout: 30_000 }) });
    expect(await bridge.reload()).toMatch(/removed \[extra\]/);
    await waitUntil('extra gone from /servers', async () => !(await bridge.servers()).some((s) => s.name === 'extra'));
    const after = await scrape();
    expect(after.some((s) => s.name === 'mcp_bridge_stdio_children' && s.labels.server === 'extra')).toBe(false);
    expect(after.some((s) => s.name === 'mcp_bridge_requests_in_flight' && s.labels.server === 'extra')).toBe(false);
    // A counter never goes back: extra's calls stay counted after it left.
    expect(calls(after, 'extra')).toBe(1);
    expect(JSON.stringify((await echo('legacy', 43, 'still')).result)).toContain('Echo: still');
  });
});

describe('the "bridge" object\'s metricsListen and corsOrigin in config mode', { timeout: 60_000 }, () => {
  let other: ConfigBridge;
  let otherFile: string;

  beforeAll(async () => {
    otherFile = path.join(dir, 'listen.json');
    writeFileSync(otherFile, JSON.stringify({ mcpServers: { legacy: legacyEntry() }, bridge: { logLevel: 'warn', authToken: TOKEN, metricsListen: '127.0.0.1:0', corsOrigin: ['https://app.example'] } }));
    other = await startConfigBridge(otherFile, [], 30_000, { headers: AUTH });
    await other.waitReady(['legacy']);
  }, 60_000);
  afterAll(() => other?.close());

  it('serves /metrics on its own address without the token, and the main port no longer has the route', async () => {
    const metricsUrl = /; metrics (http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(other.stderr())![1];
    expect(new URL(metricsUrl).port).not.toBe(new URL(other.url).port);
    const samples = await scrape(metricsUrl, {});
    expect(samples.some((s) => s.name === 'mcp_bridge_requests_in_flight' && s.labels.server === 'legacy')).toBe(true);
    expect((await fetch(`${other.url}/metrics`, { headers: AUTH })).status).toBe(404);
  });

  it('answers a CORS preflight on a server route for the allowed origin, and refuses another origin', async () => {
    const preflight = (origin: string) =>
      fetch(`${other.url}/servers/legacy/mcp`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, authorization, mcp-protocol-version' } });
    const ok = await preflight('https://app.example');
    expect(ok.status).toBe(204);
    expect(ok.headers.get('access-control-allow-origin')).toBe('https://app.example');
    expect(ok.headers.get('access-control-expose-headers')).toContain('Mcp-Session-Id');
    expect((await preflight('https://evil.example')).status).toBe(403);
    // The allowed origin passes the Origin check on a real request too.
    const res = await modernPost(`${other.url}/servers/legacy`, 1, 'tools/list', {}, undefined, { ...AUTH, origin: 'https://app.example' });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('https://app.example');
    await res.body?.cancel();
  });
});

import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCli, type RunningCli } from '../helpers/cli.js';
import { modernPost, readMessages } from '../helpers/faults.js';
import { parsePrometheus, sum, type Sample } from '../helpers/prometheus-text.js';
import { httpRequest } from '../helpers/raw-http.js';

/**
 * Issue 13, metrics: the built CLI in front of a legacy stdio server (SDK v1),
 * `/metrics` scraped before and after known traffic, and the exact deltas
 * checked: requests by face, epochs, method, tool and outcome, durations,
 * refusals by reason, sessions and children.
 */

const here = path.dirname(fileURLToPath(import.meta.url));
const SERVER = [process.execPath, path.join(here, '..', 'fixtures', 'crash-server.mjs')];
const TOKEN = 'metrics-test-token-0123456789';
const AUTH = { authorization: `Bearer ${TOKEN}` };

const port = (url: string) => Number(new URL(url).port);

async function scrape(url: string, headers: Record<string, string> = AUTH): Promise<Sample[]> {
  const res = await fetch(url, { headers });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toContain('text/plain');
  return parsePrometheus(await res.text());
}

/** One modern request with the token, read to its end; the answer's one message. */
async function call(base: string, id: number, method: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const res = await modernPost(base, id, method, params, undefined, AUTH);
  const messages = await readMessages(res);
  return messages.find((m) => m.id === id)!;
}

describe('GET /metrics on the main port, behind the same token as /mcp', () => {
  let cli: RunningCli;

  beforeAll(async () => {
    // A small --max-body, so the 413 case is a body that is written whole before the bridge answers.
    cli = await startCli(['--log-level', 'warn', '--auth-token', TOKEN, '--max-body', '4096', '--', ...SERVER]);
  });
  afterAll(() => cli?.close());

  it('needs the token: 401 without it, and the refusal is counted under reason="auth"', async () => {
    const before = await scrape(`${cli.url}/metrics`);
    const res = await fetch(`${cli.url}/metrics`);
    expect(res.status).toBe(401);
    const after = await scrape(`${cli.url}/metrics`);
    expect(sum(after, 'mcp_bridge_refused_total', { reason: 'auth' }) - sum(before, 'mcp_bridge_refused_total', { reason: 'auth' })).toBe(1);
  });

  it('counts modern requests by face, epochs, method, listed tool and outcome, with their durations, exactly', async () => {
    const before = await scrape(`${cli.url}/metrics`);
    const list = await call(cli.url, 1, 'tools/list');
    expect((list.result as { tools: unknown[] }).tools.length).toBeGreaterThan(0);
    for (let i = 0; i < 3; i++) expect(JSON.stringify((await call(cli.url, 10 + i, 'tools/call', { name: 'echo', arguments: { message: `m${i}` } })).result)).toContain(`Echo: m${i}`);
    await call(cli.url, 20, 'tools/call', { name: 'not-a-listed-tool', arguments: {} });
    const after = await scrape(`${cli.url}/metrics`);

    const base = { face: 'http', client_epoch: 'modern', upstream_epoch: 'initialize' };
    const delta = (name: string, labels: Record<string, string>) => sum(after, name, labels) - sum(before, name, labels);
    expect(delta('mcp_bridge_requests_total', { ...base, method: 'tools/list', outcome: 'ok' })).toBe(1);
    expect(delta('mcp_bridge_requests_total', { ...base, method: 'tools/call', tool: 'echo', outcome: 'ok' })).toBe(3);
    // A name the upstream never listed is not a label value.
    expect(delta('mcp_bridge_requests_total', { ...base, method: 'tools/call', tool: 'other' })).toBe(1);
    expect(after.some((s) => s.labels.tool === 'not-a-listed-tool')).toBe(false);
    expect(delta('mcp_bridge_request_duration_seconds_count', { ...base, method: 'tools/call' })).toBe(4);
    expect(delta('mcp_bridge_upstream_duration_seconds_count', { upstream_epoch: 'initialize', method: 'tools/call' })).toBe(4);
    expect(delta('mcp_bridge_requests_in_flight', {})).toBe(0);
    expect(sum(after, 'mcp_bridge_upstream_sessions')).toBeGreaterThanOrEqual(1);
    expect(sum(after, 'mcp_bridge_stdio_children')).toBeGreaterThanOrEqual(1);
    // Default process metrics are there too.
    expect(sum(after, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(after.some((s) => s.name === 'nodejs_eventloop_lag_seconds')).toBe(true);
  });

  it('counts refusals by reason: host, origin, validation (ladder and body), limits', async () => {
    const before = await scrape(`${cli.url}/metrics`);
    const p = port(cli.url);
    const post = (headers: Record<string, string>, body: string, host?: string) => httpRequest(p, { method: 'POST', path: '/mcp', host, headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...AUTH, ...headers }, body });
    const tools = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    expect((await post({}, tools, 'evil.example')).status).toBe(421);
    expect((await post({ origin: 'https://evil.example' }, tools)).status).toBe(403);
    // Mcp-Method disagrees with the body: the modern ladder refuses it.
    const modern = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'x', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} } } });
    expect((await post({ 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'prompts/list' }, modern)).status).toBe(400);
    expect((await post({}, '{"jsonrpc":')).status).toBe(400);
    expect((await post({}, JSON.stringify({ pad: 'x'.repeat(8 * 1024) }))).status).toBe(413);
    const after = await scrape(`${cli.url}/metrics`);
    const delta = (reason: string) => sum(after, 'mcp_bridge_refused_total', { reason }) - sum(before, 'mcp_bridge_refused_total', { reason });
    expect({ host: delta('host'), origin: delta('origin'), validation: delta('validation'), limits: delta('limits'), auth: delta('auth') }).toEqual({ host: 1, origin: 1, validation: 2, limits: 1, auth: 0 });
  });

  it('counts a Streamable HTTP session: initialize under its face and epoch, and the open session while it lasts', async () => {
    const before = await scrape(`${cli.url}/metrics`);
    const client = new Client({ name: 'metrics-v1', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${cli.url}/mcp`), { requestInit: { headers: AUTH } }));
    try {
      const during = await scrape(`${cli.url}/metrics`);
      expect(sum(during, 'mcp_bridge_downstream_sessions', { transport: 'streamable-http' }) - sum(before, 'mcp_bridge_downstream_sessions', { transport: 'streamable-http' })).toBe(1);
      const labels = { face: 'streamable-http', client_epoch: 'initialize', upstream_epoch: 'initialize', method: 'initialize', outcome: 'ok' };
      expect(sum(during, 'mcp_bridge_requests_total', labels) - sum(before, 'mcp_bridge_requests_total', labels)).toBe(1);
    } finally {
      await client.close();
    }
  });
});

describe('--metrics-listen: /metrics on its own address, without auth', () => {
  let cli: RunningCli;
  let metricsUrl: string;

  beforeAll(async () => {
    cli = await startCli(['--log-level', 'warn', '--auth-token', TOKEN, '--metrics-listen', '127.0.0.1:0', '--', ...SERVER]);
    metricsUrl = /metrics (http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(cli.stderr())![1];
  });
  afterAll(() => cli?.close());

  it('serves the exposition there without a token, and the main port no longer has the route', async () => {
    const samples = await scrape(metricsUrl, {});
    expect(samples.some((s) => s.name === 'mcp_bridge_requests_in_flight')).toBe(true);
    expect(port(metricsUrl)).not.toBe(port(cli.url));
    expect((await fetch(`${cli.url}/metrics`, { headers: AUTH })).status).toBe(404);
  });
});

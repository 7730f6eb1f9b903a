import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startCli, type RunningCli } from '../helpers/cli.js';
import { startAuthServer, startProtectedServer, type AuthServer, type ProtectedServer } from '../helpers/oauth-upstream.js';
import { parsePrometheus, sum, type Sample } from '../helpers/prometheus-text.js';

/**
 * Issue 13, OAuth metrics: the built CLI in front of an OAuth-protected SDK v1
 * server with the SDK v1 authorization server (as oauth-upstream.test.ts), and
 * `/metrics` scraped before and after a refresh, a refused refresh and a
 * failed flow: `mcp_bridge_oauth_refreshes_total` and
 * `mcp_bridge_oauth_failures_total` move by exactly what happened.
 */
const BROWSER = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../conformance/runner/follow-redirect-browser.mjs');
const REFRESHES = 'mcp_bridge_oauth_refreshes_total';
const FAILURES = 'mcp_bridge_oauth_failures_total';

let as: AuthServer;
let rs: ProtectedServer;
let dir: string;
const running: Array<{ close(): Promise<void> }> = [];

beforeAll(() => {
  process.env.BROWSER = BROWSER;
});
afterAll(() => {
  delete process.env.BROWSER;
});

afterEach(async () => {
  for (const r of running.splice(0)) await r.close().catch(() => undefined);
  await rs?.close();
  await as?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function setup(protect: 'all' | 'tools/call', extra: string[] = []): Promise<{ bridge: RunningCli; client: Client }> {
  as = await startAuthServer();
  rs = await startProtectedServer(as, protect);
  dir = await mkdtemp(path.join(os.tmpdir(), 'mcp-bridge-oauth-metrics-'));
  const bridge = await startCli(['--log-level', 'warn', '--upstream', rs.url, '--oauth-dir', dir, ...extra]);
  running.push(bridge);
  const client = new Client({ name: 'oauth-metrics-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${bridge.url}/mcp`)));
  running.push(client);
  return { bridge, client };
}

async function scrape(bridge: RunningCli): Promise<Sample[]> {
  const res = await fetch(`${bridge.url}/metrics`);
  expect(res.status).toBe(200);
  return parsePrometheus(await res.text());
}

/** The change of every OAuth series between two scrapes (absent counts as 0). */
function deltas(before: Sample[], after: Sample[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of after) {
    if (s.name !== REFRESHES && s.name !== FAILURES) continue;
    const label = s.name === REFRESHES ? `refresh:${s.labels.outcome}` : `failure:${s.labels.reason}`;
    out[label] = s.value - sum(before, s.name, s.labels);
  }
  return out;
}

async function callEcho(client: Client): Promise<string> {
  const result = (await client.callTool({ name: 'echo', arguments: {} })) as { content: Array<{ text: string }> };
  return result.content[0].text;
}

describe('OAuth refreshes and failures in /metrics', { timeout: 60_000 }, () => {
  it('a 401 on a stale access token: one refresh counted ok, no failure', async () => {
    const { bridge, client } = await setup('all');
    expect(await callEcho(client)).toBe('ok');
    const before = await scrape(bridge);
    // Every refresh outcome is exposed from the start, at 0 until counted.
    expect(before.filter((s) => s.name === REFRESHES).map((s) => s.labels.outcome).sort()).toEqual(['error', 'ok', 'rejected']);
    as.provider.revokeAccess();
    expect(await callEcho(client)).toBe('ok');
    expect(as.provider.counters).toMatchObject({ authorizations: 1, refreshes: 1 });
    expect(deltas(before, await scrape(bridge))).toEqual({ 'refresh:ok': 1, 'refresh:rejected': 0, 'refresh:error': 0 });
  });

  it('a revoked grant: the refresh is counted rejected, the new authorization that follows is no failure', async () => {
    const { bridge, client } = await setup('all');
    expect(await callEcho(client)).toBe('ok');
    const before = await scrape(bridge);
    as.provider.revokeAll();
    expect(await callEcho(client)).toBe('ok');
    expect(as.provider.counters.authorizations).toBe(2);
    expect(deltas(before, await scrape(bridge))).toEqual({ 'refresh:ok': 0, 'refresh:rejected': 1, 'refresh:error': 0 });
  });

  it('a flow no browser finishes: one failure counted callback_timeout, and the next one too', async () => {
    const { bridge, client } = await setup('tools/call', ['--oauth-no-browser', '--oauth-timeout', '300']);
    const before = await scrape(bridge);
    expect(sum(before, FAILURES)).toBe(0);
    const call = () => client.callTool({ name: 'echo', arguments: {} }).then(() => undefined, (e: unknown) => e as { code?: number; message?: string });
    expect((await call())?.message).toMatch(/no OAuth callback within 300 ms/);
    expect(deltas(before, await scrape(bridge))).toEqual({ 'refresh:ok': 0, 'refresh:rejected': 0, 'refresh:error': 0, 'failure:callback_timeout': 1 });
    expect((await call())?.code).toBe(-32603);
    expect(deltas(before, await scrape(bridge))).toEqual({ 'refresh:ok': 0, 'refresh:rejected': 0, 'refresh:error': 0, 'failure:callback_timeout': 2 });
  });
});

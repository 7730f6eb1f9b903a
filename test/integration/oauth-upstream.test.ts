import { readFile, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { derivedCallbackPort } from '../../src/links/oauth/callback-server.js';
import { CLI_ENTRY, runCli, startCli, type RunningCli } from '../helpers/cli.js';
import { startAuthServer, startProtectedServer, type AuthServer, type ProtectedServer } from '../helpers/oauth-upstream.js';

/**
 * Issue 12: the bridge in front of an OAuth-protected SDK v1 server, the SDK
 * v1 authorization server (mcpAuthRouter) on another port, and a "browser"
 * that follows the authorization redirect to the bridge's loopback callback.
 */
const BROWSER = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../conformance/runner/follow-redirect-browser.mjs');

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

async function setup(opts: { accessTtlSec?: number; protect?: 'all' | 'tools/call' } = {}): Promise<void> {
  as = await startAuthServer({ accessTtlSec: opts.accessTtlSec });
  rs = await startProtectedServer(as, opts.protect);
  dir = await mkdtemp(path.join(os.tmpdir(), 'mcp-bridge-oauth-'));
}

afterEach(async () => {
  for (const r of running.splice(0)) await r.close().catch(() => undefined);
  await rs?.close();
  await as?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function httpBridge(extra: string[] = []): Promise<RunningCli> {
  const bridge = await startCli(['--upstream', rs.url, '--oauth-dir', dir, ...extra]);
  running.push(bridge);
  return bridge;
}

async function httpClient(bridge: RunningCli): Promise<Client> {
  const client = new Client({ name: 'oauth-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${bridge.url}/mcp`)));
  running.push(client);
  return client;
}

async function callEcho(client: Client): Promise<string> {
  const result = (await client.callTool({ name: 'echo', arguments: {} })) as { content: Array<{ text: string }>; isError?: boolean };
  return result.content[0].text;
}

describe('OAuth toward a protected upstream', { timeout: 60_000 }, () => {
  beforeEach(() => setup());

  it('a desktop client on --stdio: the 401 at the probe runs the flow, tokens are stored 0600 in a 0700 directory', async () => {
    const transport = new StdioClientTransport({ command: process.execPath, args: [CLI_ENTRY, '--stdio', '--upstream', rs.url, '--oauth-dir', dir], env: { ...process.env, BROWSER } as Record<string, string>, stderr: 'pipe' });
    const client = new Client({ name: 'desktop', version: '1.0.0' });
    await client.connect(transport);
    running.push(client);
    expect(await callEcho(client)).toBe('ok');
    expect(as.provider.counters).toMatchObject({ registrations: 1, authorizations: 1, codeExchanges: 1 });
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    const files = (await readdir(dir)).filter((f) => f.endsWith('.json'));
    expect(files).toHaveLength(1);
    expect((await stat(path.join(dir, files[0]))).mode & 0o777).toBe(0o600);
  });

  it('two bridges started together for one upstream run one flow; the other reads its tokens', async () => {
    const [a, b] = await Promise.all([httpBridge(), httpBridge()]);
    expect(as.provider.counters.authorizations).toBe(1);
    expect(as.provider.counters.registrations).toBe(1);
    expect(await callEcho(await httpClient(a))).toBe('ok');
    expect(await callEcho(await httpClient(b))).toBe('ok');
    expect(a.stderr() + b.stderr()).not.toMatch(/at-[0-9a-f-]{36}|rt-[0-9a-f-]{36}/);
  });

  it('a revoked token: the 401 finds the refresh token revoked too (invalid_grant), discards them and authorizes again', async () => {
    const client = await httpClient(await httpBridge());
    expect(await callEcho(client)).toBe('ok');
    as.provider.revokeAll();
    expect(await callEcho(client)).toBe('ok');
    expect(as.provider.counters.authorizations).toBe(2);
  });

  it('a 401 on a stale token refreshes it, without a new authorization', async () => {
    const client = await httpClient(await httpBridge());
    expect(await callEcho(client)).toBe('ok');
    as.provider.revokeAccess();
    expect(await callEcho(client)).toBe('ok');
    expect(as.provider.counters).toMatchObject({ authorizations: 1, refreshes: 1 });
  });

  it('login stores tokens and exits 0, auth status lists scopes and expiry but no token, logout removes them', async () => {
    const login = await runCli(['login', rs.url, '--oauth-dir', dir], 15_000);
    expect(login.code, login.stderr).toBe(0);
    const status = await runCli(['auth', 'status', '--oauth-dir', dir]);
    expect(status.code).toBe(0);
    expect(status.stdout).toContain(rs.url);
    expect(status.stdout).toMatch(/scope: mcp:tools/);
    expect(status.stdout).toMatch(/expires \d{4}-/);
    expect(status.stdout + status.stderr).not.toMatch(/at-|rt-/);
    // A bridge started after login needs no browser.
    await httpBridge(['--oauth-no-browser']);
    expect(as.provider.counters.authorizations).toBe(1);
    const logout = await runCli(['logout', rs.url, '--oauth-dir', dir]);
    expect(logout.code).toBe(0);
    expect((await readdir(dir)).filter((f) => f.endsWith('.json'))).toHaveLength(0);
    expect((await runCli(['auth', 'status', '--oauth-dir', dir])).stdout).toMatch(/no stored tokens/);
  });

  it('a busy callback port: the next free one, and a fresh registration (the stored one names the old port)', async () => {
    expect((await runCli(['login', rs.url, '--oauth-dir', dir], 15_000)).code).toBe(0);
    const port = derivedCallbackPort(rs.url);
    const squatter = createServer();
    await new Promise<void>((resolve, reject) => squatter.once('error', reject).listen(port, '127.0.0.1', () => resolve()));
    running.push({ close: () => new Promise<void>((r) => squatter.close(() => r())) });
    const again = await runCli(['login', rs.url, '--oauth-dir', dir], 15_000);
    expect(again.code, again.stderr).toBe(0);
    expect(as.provider.counters).toMatchObject({ registrations: 2, authorizations: 2 });
    const [file] = (await readdir(dir)).filter((f) => f.endsWith('.json'));
    const record = JSON.parse(await readFile(path.join(dir, file), 'utf8')) as { client: { redirect_uris: string[] } };
    expect(record.client.redirect_uris).toEqual([`http://127.0.0.1:${port + 1}/oauth/callback`]);
  });

  it('a flow that cannot finish ends the start with exit 1 and a message naming the OAuth failure', async () => {
    const result = await runCli(['--upstream', rs.url, '--oauth-dir', dir, '--oauth-no-browser', '--oauth-timeout', '300', '--listen', '127.0.0.1:0']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/no OAuth callback within 300 ms/);
    expect(result.stderr).toMatch(/open this URL in a browser/);
  });
});

describe('OAuth refresh and late challenges', { timeout: 60_000 }, () => {
  it('a token about to expire is refreshed before it is sent, without a new authorization', async () => {
    await setup({ accessTtlSec: 30 });
    const client = await httpClient(await httpBridge());
    expect(await callEcho(client)).toBe('ok');
    expect(await callEcho(client)).toBe('ok');
    expect(as.provider.counters.authorizations).toBe(1);
    expect(as.provider.counters.refreshes).toBeGreaterThanOrEqual(1);
  });

  it('an upstream whose 401 arrives only on tools/call: the call runs the flow and is sent again', async () => {
    await setup({ protect: 'tools/call' });
    const client = await httpClient(await httpBridge());
    expect(as.provider.counters.authorizations).toBe(0);
    expect(await callEcho(client)).toBe('ok');
    expect(rs.refused.get('tools/call')).toBe(1);
    expect(as.provider.counters.authorizations).toBe(1);
  });

  it('a late 401 whose flow fails answers that call -32603 BRIDGE_ERR_AUTH naming the failure', async () => {
    await setup({ protect: 'tools/call' });
    const client = await httpClient(await httpBridge(['--oauth-no-browser', '--oauth-timeout', '300']));
    const err = (await client.callTool({ name: 'echo', arguments: {} }).then(() => undefined, (e: unknown) => e)) as { code?: number; message?: string; data?: { bridgeCode?: string } };
    expect(err?.code).toBe(-32603);
    expect(err?.message).toMatch(/no OAuth callback within 300 ms/);
    expect(err?.data?.bridgeCode).toBe('BRIDGE_ERR_AUTH');
  });
});

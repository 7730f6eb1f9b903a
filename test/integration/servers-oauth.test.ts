import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { Client as V2Client, StreamableHTTPClientTransport as V2Http } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as V1Http } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePrometheus, sum, type Sample } from '../helpers/prometheus-text.js';
import { parseServersConfig } from '../../src/config/servers-config.js';
import { createBridgeHandler } from '../../src/embed/create-bridge-handler.js';
import { DEFAULT_OAUTH } from '../../src/links/oauth/oauth-config.js';
import { createLogger } from '../../src/log.js';
import { CLI_ENTRY, runCli } from '../helpers/cli.js';
import { startConfigBridge, type ConfigBridge } from '../helpers/config-bridge.js';
import { freePort, waitUntil } from '../helpers/faults.js';
import { startModernHttpServer, type RunningModernServer } from '../helpers/modern-fixture.js';
import { startAuthServer, startProtectedServer, type AuthServer, type ProtectedServer } from '../helpers/oauth-upstream.js';
import { CLIENT_SECRET, TOOLS_SCOPE, startOidcIssuer, type OidcIssuer } from '../helpers/oidc-issuer.js';

/**
 * Issue 14 with issue 12: per-server OAuth in a config file. One daemon in
 * front of
 * - `cc`: an SDK v1 server taking JWTs of a real authorization server
 *   (oidc-provider), reached with the client-credentials grant and a secret
 *   from `${ENV}`;
 * - `code`: an SDK v1 server behind the SDK v1 authorization server
 *   (mcpAuthRouter), reached with the authorization-code flow, a "browser"
 *   (BROWSER) following the redirect to the bridge's loopback callback;
 * - `plain`: the 2026-07-28 SDK v2 fixture, no protection;
 * - `stuck`: another protected server whose flow cannot finish (no browser, 300 ms).
 * Each server has its own tokens, flow and 401 handling; the others never notice.
 * Also: login / logout / auth status --config, --stdio --config --server, the
 * embedded handler, and a SIGTERM while a flow waits for its browser.
 */
const BROWSER = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../conformance/runner/follow-redirect-browser.mjs');
const MODERN = '2026-07-28';

let dir: string;
let oauthDir: string;
let file: string;
let oidc: OidcIssuer;
let as: AuthServer;
let ccServer: ProtectedServer;
let codeServer: ProtectedServer;
let stuckServer: ProtectedServer;
let plain: RunningModernServer;
let bridge: ConfigBridge;
const clients: Array<{ close(): Promise<void> }> = [];

/** A protected server that takes the OIDC issuer's JWT access tokens issued for its own URL (RFC 8707 `aud`). */
function jwtAuthority(issuer: string) {
  const keys = createRemoteJWKSet(new URL(`${issuer}/jwks`));
  return { issuer, verify: (token: string, resource: string) => jwtVerify(token, keys, { issuer, audience: resource }).then(() => true, () => false) };
}

async function v1(name: string): Promise<V1Client> {
  const client = new V1Client({ name: `v1-${name}`, version: '1.0.0' });
  await client.connect(new V1Http(new URL(`${bridge.url}/servers/${name}/mcp`)));
  clients.push(client);
  return client;
}

async function v2(name: string): Promise<V2Client> {
  const client = new V2Client({ name: `v2-${name}`, version: '1.0.0' }, { versionNegotiation: { mode: { pin: MODERN } } });
  await client.connect(new V2Http(new URL(`${bridge.url}/servers/${name}/mcp`)));
  clients.push(client);
  return client;
}

/** The upstreams whose record in the OAuth directory holds tokens. */
function tokenRecords(): string[] {
  return readdirSync(oauthDir)
    .filter((f) => f.endsWith('.json'))
    .map((f) => JSON.parse(readFileSync(path.join(oauthDir, f), 'utf8')) as { upstream: string; tokens?: { access_token?: string } })
    .filter((r) => r.tokens?.access_token)
    .map((r) => r.upstream)
    .sort();
}

const REFRESHES = 'mcp_bridge_oauth_refreshes_total';
const FAILURES = 'mcp_bridge_oauth_failures_total';

async function scrape(): Promise<Sample[]> {
  const res = await fetch(`${bridge.url}/metrics`);
  expect(res.status).toBe(200);
  return parsePrometheus(await res.text());
}

const echo = async (client: V1Client | V2Client) => JSON.stringify(await client.callTool({ name: 'echo', arguments: { message: 'hi' } }));

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'mcp-bridge-servers-oauth-'));
  oauthDir = path.join(dir, 'oauth');
  file = path.join(dir, 'servers.json');
  [oidc, as, plain] = await Promise.all([startOidcIssuer(), startAuthServer(), startModernHttpServer()]);
  [ccServer, codeServer, stuckServer] = await Promise.all([startProtectedServer(jwtAuthority(oidc.issuer)), startProtectedServer(as), startProtectedServer(as)]);
  writeFileSync(
    file,
    JSON.stringify({
      mcpServers: {
        cc: { type: 'http', url: ccServer.url, oauth: { grant: 'client_credentials', clientId: 'alice-svc', clientSecret: '${SERVERS_OAUTH_CC_SECRET}', scope: [TOOLS_SCOPE] } },
        code: { type: 'http', url: codeServer.url },
        plain: { type: 'http', url: plain.url },
        stuck: { type: 'http', url: stuckServer.url, oauth: { noBrowser: true, timeout: 300 } },
      },
      bridge: { logLevel: 'info', oauthDir },
    }),
  );
  process.env.SERVERS_OAUTH_CC_SECRET = CLIENT_SECRET;
  process.env.BROWSER = BROWSER;
  bridge = await startConfigBridge(file);
  await bridge.waitReady(['cc', 'code', 'plain'], 30_000);
  await waitUntil('stuck failed', async () => (await bridge.servers()).find((s) => s.name === 'stuck')?.state === 'failed', 20_000);
}, 90_000);

afterAll(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => undefined);
  await bridge?.close();
  await Promise.allSettled([ccServer?.close(), codeServer?.close(), stuckServer?.close(), plain?.close(), as?.close(), oidc?.close()]);
  delete process.env.SERVERS_OAUTH_CC_SECRET;
  delete process.env.BROWSER;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('per-server OAuth in a config file', { timeout: 60_000 }, () => {
  it('each protected server authorized itself at its probe: client credentials for cc, one authorization-code flow for code', async () => {
    const list = await bridge.servers();
    expect(list.map((s) => [s.name, s.state])).toEqual([
      ['cc', 'ready'],
      ['code', 'ready'],
      ['plain', 'ready'],
      ['stuck', 'failed'],
    ]);
    expect(as.provider.counters).toMatchObject({ authorizations: 1, codeExchanges: 1 });
    // Both refused the probe's first request, which came without a token, and nothing after it.
    const refusals = (s: ProtectedServer) => [...s.refused.values()].reduce((a, b) => a + b, 0);
    expect(refusals(ccServer)).toBe(1);
    expect(refusals(codeServer)).toBe(1);
  });

  it('a server whose flow cannot finish fails on its own, named with the OAuth error; /readyz says which', async () => {
    const stuck = (await bridge.servers()).find((s) => s.name === 'stuck')!;
    expect(stuck.error).toMatch(/no OAuth callback within 300 ms/);
    // Its own settings applied: no browser, only the URL printed.
    expect(bridge.stderr()).toMatch(/open this URL in a browser/);
    const ready = await fetch(`${bridge.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(((await ready.json()) as { detail: string }).detail).toMatch(/3 of 4 servers ready; stuck: failed/);
  });

  it('SDK v1 and v2 clients reach both protected servers through /servers/<name>/mcp, and the unprotected one alongside', async () => {
    for (const name of ['cc', 'code']) {
      expect(await echo(await v1(name))).toContain('"text":"ok"');
      expect(await echo(await v2(name))).toContain('"text":"ok"');
    }
    expect(await echo(await v1('plain'))).toContain('Echo: hi');
    expect(await echo(await v2('plain'))).toContain('Echo: hi');
    // No flow ran for the calls: the tokens from the probe served them.
    expect(as.provider.counters.authorizations).toBe(1);
  });

  it('each server keeps its own token record; no token or secret reaches the log', async () => {
    // stuck registered a client (dynamic registration) but got no tokens.
    expect(tokenRecords()).toEqual([ccServer.url, codeServer.url].sort());
    expect(readdirSync(oauthDir).filter((f) => f.endsWith('.json'))).toHaveLength(3);
    const log = bridge.stderr();
    expect(log).not.toContain(CLIENT_SECRET);
    expect(log).not.toMatch(/at-[0-9a-f-]{36}|rt-[0-9a-f-]{36}|eyJ[\w-]+\.eyJ/);
  });

  it('a stale token on one server is refreshed there (no new authorization), while the other protected server goes on with its own', async () => {
    const code = await v1('code');
    const cc = await v2('cc');
    expect(await echo(code)).toContain('"text":"ok"');
    const before = await scrape();
    as.provider.revokeAccess();
    const ccRefusals = ccServer.refused.get('tools/call') ?? 0;
    expect(await echo(cc)).toContain('"text":"ok"');
    expect(as.provider.counters.refreshes).toBe(0);
    expect(await echo(code)).toContain('"text":"ok"');
    expect(as.provider.counters).toMatchObject({ authorizations: 1, refreshes: 1 });
    expect(codeServer.refused.get('tools/call')).toBe(1);
    expect(ccServer.refused.get('tools/call') ?? 0).toBe(ccRefusals);
    // The refresh is counted under its own server only (issue 13's OAuth series, labelled in config mode).
    const after = await scrape();
    const delta = (server: string) => sum(after, REFRESHES, { server, outcome: 'ok' }) - sum(before, REFRESHES, { server, outcome: 'ok' });
    expect(delta('code')).toBe(1);
    expect(delta('cc')).toBe(0);
    expect(sum(after, FAILURES, { server: 'stuck' })).toBeGreaterThanOrEqual(1);
    expect(sum(after, FAILURES, { server: 'code' }) - sum(before, FAILURES, { server: 'code' })).toBe(0);
  });

  it('auth status --config names each server with its tokens (never one), and logout / login --config --server act on one server', async () => {
    const status = await runCli(['auth', 'status', '--config', file]);
    expect(status.code, status.stderr).toBe(0);
    const line = (name: string) => status.stdout.split('\n').find((l) => l.startsWith(`${name}  `)) ?? '';
    expect(line('cc')).toContain(ccServer.url);
    expect(line('cc')).toMatch(/scope: mcp:tools .*client: alice-svc/);
    expect(line('code')).toMatch(/scope: mcp:tools .*refreshable/);
    expect(line('plain')).toMatch(/no stored tokens/);
    expect(status.stdout).not.toMatch(/at-|rt-|eyJ/);

    const logout = await runCli(['logout', '--config', file, '--server', 'code']);
    expect(logout.code, logout.stderr).toBe(0);
    expect(tokenRecords()).toEqual([ccServer.url]);
    expect((await runCli(['auth', 'status', '--config', file, '--server', 'code'])).stdout).toMatch(/^code .*no stored tokens/);

    const login = await runCli(['login', '--config', file, '--server', 'code'], 20_000);
    expect(login.code, login.stderr).toBe(0);
    expect(as.provider.counters.authorizations).toBe(2);
    expect((await runCli(['auth', 'status', '--config', file, '--server', 'code'])).stdout).toMatch(/^code .*scope: mcp:tools/);

    const none = await runCli(['login', '--config', file, '--server', 'plain-nope']);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/no server 'plain-nope'/);
  });

  it('--stdio --config --server: a desktop client reaches one protected server with that server\'s stored tokens', async () => {
    const transport = new StdioClientTransport({ command: process.execPath, args: [CLI_ENTRY, '--stdio', '--config', file, '--server', 'cc'], env: { ...process.env } as Record<string, string>, stderr: 'pipe' });
    const client = new V1Client({ name: 'desktop', version: '1.0.0' });
    await client.connect(transport);
    clients.push(client);
    const refusals = [...ccServer.refused.values()].reduce((a, b) => a + b, 0);
    expect(await echo(client)).toContain('"text":"ok"');
    expect([...ccServer.refused.values()].reduce((a, b) => a + b, 0)).toBe(refusals);
  });

  it('an unknown or mistyped key in "oauth" stops the start with exit 2 naming it and its place in the file', async () => {
    const bad = path.join(dir, 'bad.json');
    writeFileSync(bad, '{"mcpServers": {\n  "x": {"url": "http://127.0.0.1:1/mcp", "oauth": {"clientID": "a"}}}}');
    const unknown = await runCli(['--listen', '127.0.0.1:0', '--config', bad]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain(`${bad}:2:52: unknown key "clientID" in mcpServers.x.oauth`);
    writeFileSync(bad, '{"mcpServers": {\n  "x": {"url": "http://127.0.0.1:1/mcp", "oauth": {"callbackPort": true}}}}');
    const typed = await runCli(['--listen', '127.0.0.1:0', '--config', bad]);
    expect(typed.code).toBe(2);
    expect(typed.stderr).toContain(`${bad}:2:68: mcpServers.x.oauth.callbackPort must be a whole number`);
  });
});

describe('an embedded bridge (createBridgeHandler) with per-server OAuth', { timeout: 60_000 }, () => {
  it('a config entry\'s "oauth" applies in the app: the client-credentials server answers through the app\'s own node:http server', async () => {
    const config = parseServersConfig(
      JSON.stringify({ mcpServers: { cc: { type: 'http', url: ccServer.url, oauth: { grant: 'client_credentials', clientId: 'alice-svc', clientSecret: '${SERVERS_OAUTH_CC_SECRET}' } } } }),
      path.join(dir, 'embedded.json'),
    );
    const embedDir = mkdtempSync(path.join(tmpdir(), 'mcp-bridge-servers-oauth-embed-'));
    const handler = createBridgeHandler({ config, options: { logger: createLogger('warn'), oauth: { ...DEFAULT_OAUTH, dir: embedDir } } });
    const app = http.createServer(handler);
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
    try {
      await handler.ready;
      expect(handler.servers().map((s) => [s.name, s.state])).toEqual([['cc', 'ready']]);
      const client = new V1Client({ name: 'embedded', version: '1.0.0' });
      await client.connect(new V1Http(new URL(`http://127.0.0.1:${(app.address() as AddressInfo).port}/servers/cc/mcp`)));
      clients.push(client);
      expect(await echo(client)).toContain('"text":"ok"');
      // Its own token record, in the directory the app gave.
      expect(readdirSync(embedDir).filter((f) => f.endsWith('.json'))).toHaveLength(1);
    } finally {
      await handler.close();
      await new Promise<void>((resolve) => app.close(() => resolve()));
      rmSync(embedDir, { recursive: true, force: true });
    }
  });
});

describe('stopping while a server waits for its browser', { timeout: 60_000 }, () => {
  it('a client the authorization server refuses (invalid_client): the hint names the keys of the server\'s "oauth", not --oauth-* flags', async () => {
    const badDir = mkdtempSync(path.join(tmpdir(), 'mcp-bridge-servers-oauth-bad-'));
    const badFile = path.join(badDir, 'servers.json');
    writeFileSync(badFile, JSON.stringify({ mcpServers: { bad: { type: 'http', url: ccServer.url, oauth: { grant: 'client_credentials', clientId: 'alice-svc', clientSecret: 'not-the-secret' } } }, bridge: { logLevel: 'warn', oauthDir: badDir } }));
    const daemon = await startConfigBridge(badFile);
    try {
      const failed = await waitUntil('bad failed', async () => (await daemon.servers()).find((s) => s.name === 'bad' && s.state === 'failed'), 20_000);
      expect(failed.error).toMatch(/\(invalid_client\).*check "clientId" and "clientSecret" in this server's "oauth"/);
      expect(failed.error).not.toContain('--oauth-client');
      expect(daemon.stderr()).not.toContain('not-the-secret');
    } finally {
      await daemon.close();
      rmSync(badDir, { recursive: true, force: true });
    }
  });

  it('a server removed by SIGHUP while its flow waits for the browser: the flow ends, its callback port is free at once, and no failure is counted', async () => {
    const waiting = await startProtectedServer(as);
    const port = await freePort();
    const waitDir = mkdtempSync(path.join(tmpdir(), 'mcp-bridge-servers-oauth-hup-'));
    const waitFile = path.join(waitDir, 'servers.json');
    const write = (servers: Record<string, unknown>) => writeFileSync(waitFile, JSON.stringify({ mcpServers: servers, bridge: { logLevel: 'info', oauthDir: waitDir } }));
    write({ slow: { type: 'http', url: waiting.url, oauth: { noBrowser: true, callbackPort: port } }, plain: { type: 'http', url: plain.url } });
    const daemon = await startConfigBridge(waitFile);
    try {
      await waitUntil('the authorization URL printed', () => /open this URL in a browser/.test(daemon.stderr()), 20_000);
      write({ plain: { type: 'http', url: plain.url } });
      expect(await daemon.reload()).toMatch(/reloaded/);
      await waitUntil('slow gone from /servers', async () => !(await daemon.servers()).some((s) => s.name === 'slow'), 10_000);
      // The flow would hold the port for its whole --oauth-timeout (300 s): bind it ourselves, now.
      const taken = http.createServer();
      await waitUntil('the callback port free', () => new Promise<boolean>((resolve) => {
        taken.once('error', () => resolve(false));
        taken.listen(port, '127.0.0.1', () => resolve(true));
      }), 5_000);
      await new Promise<void>((resolve) => taken.close(() => resolve()));
      const samples = parsePrometheus(await (await fetch(`${daemon.url}/metrics`)).text());
      expect(sum(samples, FAILURES, { server: 'slow' })).toBe(0);
    } finally {
      await daemon.close();
      await waiting.close();
      rmSync(waitDir, { recursive: true, force: true });
    }
  });

  it('SIGTERM ends the daemon with exit 0 at once, though the flow would wait for minutes more', async () => {
    const waiting = await startProtectedServer(as);
    const waitDir = mkdtempSync(path.join(tmpdir(), 'mcp-bridge-servers-oauth-wait-'));
    const waitFile = path.join(waitDir, 'servers.json');
    writeFileSync(waitFile, JSON.stringify({ mcpServers: { slow: { type: 'http', url: waiting.url, oauth: { noBrowser: true } } }, bridge: { logLevel: 'warn', oauthDir: waitDir } }));
    const daemon = await startConfigBridge(waitFile);
    try {
      await waitUntil('the authorization URL printed', () => /open this URL in a browser/.test(daemon.stderr()), 20_000);
      // The bound: stopProcess in the helper would SIGKILL after 8 s; the default --oauth-timeout is 300 s.
      const exited = new Promise<number | null | string>((resolve) => {
        const bound = setTimeout(() => resolve('still running after 8 s'), 8_000);
        daemon.child.once('exit', (code) => {
          clearTimeout(bound);
          resolve(code);
        });
      });
      daemon.child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      await daemon.close();
      await waiting.close();
      rmSync(waitDir, { recursive: true, force: true });
    }
  });
});

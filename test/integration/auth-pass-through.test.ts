import { Client as V2Client, StreamableHTTPClientTransport as V2Http, UnauthorizedError as V2Unauthorized } from '@modelcontextprotocol/client';
import { UnauthorizedError as V1Unauthorized } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Http } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startCli, type RunningCli } from '../helpers/cli.js';
import { startConfigBridge } from '../helpers/config-bridge.js';
import { waitUntil } from '../helpers/faults.js';
import { BrowserlessOAuthProvider, guardUpstream, type GuardedUpstream } from '../helpers/guarded-upstream.js';
import { startModernHttpServer, type RunningModernServer } from '../helpers/modern-fixture.js';
import { startOidcIssuer, type OidcIssuer } from '../helpers/oidc-issuer.js';
import { startV1SessionServer, type V1SessionServer } from '../helpers/v1-session-server.js';

/**
 * `--auth pass-through` through the built CLI: an SDK client with an
 * `authProvider` meets the bridge's 401, reads the bridge's protected-resource
 * metadata (the upstream's, with the bridge as `resource`), runs OAuth
 * (dynamic registration, authorization code + PKCE) against a real
 * authorization server (oidc-provider), and its token then reaches the
 * protected upstream, which checks it (audience: the bridge's URL).
 * Both client epochs (SDK v1 on Streamable HTTP sessions, SDK v2 modern),
 * in front of a modern and a legacy upstream.
 */

const V = '2026-07-28';

let as: OidcIssuer;
const bridges: Record<string, { bridge: RunningCli; guard: GuardedUpstream }> = {};
let modernServer: RunningModernServer;
let legacyServer: V1SessionServer;

async function guardedBridge(name: string, target: string): Promise<void> {
  const audiences: string[] = [];
  const guard = await guardUpstream(target, as.issuer, () => audiences);
  audiences.push(guard.url);
  // The probe at start needs a credential of the bridge's own: a service token for the upstream itself.
  const probe = await as.clientCredentials('alice-svc', guard.url);
  const bridge = await startCli(['--log-level', 'warn', '--auth', 'pass-through', '--upstream', guard.url, '--header', `Authorization: Bearer ${probe}`]);
  // Tokens clients get through the bridge name the bridge (RFC 8707 resource); the upstream accepts that audience.
  audiences.push(`${bridge.url}/mcp`);
  bridges[name] = { bridge, guard };
}

beforeAll(async () => {
  as = await startOidcIssuer();
  modernServer = await startModernHttpServer();
  legacyServer = await startV1SessionServer({
    name: 'legacy-protected',
    register: (mcp) => mcp.registerTool('echo', { inputSchema: { message: z.string() } }, async ({ message }) => ({ content: [{ type: 'text', text: `Echo: ${message}` }] })),
  });
  await Promise.all([guardedBridge('modern', modernServer.url), guardedBridge('legacy', legacyServer.url)]);
}, 60_000);

afterAll(async () => {
  await Promise.allSettled(Object.values(bridges).flatMap(({ bridge, guard }) => [bridge.close(), guard.close()]));
  await Promise.allSettled([modernServer?.close(), legacyServer?.close(), as?.close()]);
});

const textOf = (r: unknown) => (r as { content: Array<{ text: string }> }).content[0]?.text;

describe('--auth pass-through', () => {
  it('a request without a token gets 401 pointing at the bridge metadata, which is the upstream’s with the bridge as resource', async () => {
    const { bridge, guard } = bridges.modern!;
    const refusedBefore = guard.refused();
    const res = await fetch(`${bridge.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${bridge.url}/.well-known/oauth-protected-resource/mcp"`);
    await res.body?.cancel();
    const doc = (await (await fetch(`${bridge.url}/.well-known/oauth-protected-resource/mcp`)).json()) as Record<string, unknown>;
    expect(doc.resource).toBe(`${bridge.url}/mcp`);
    expect(doc.authorization_servers).toEqual([as.issuer]);
    expect(guard.refused()).toBe(refusedBefore);
    // http+sse and WebSocket clients meet the same 401 at connect, naming their own path's metadata.
    const sse = await fetch(`${bridge.url}/sse`, { headers: { accept: 'text/event-stream' } });
    expect(sse.status).toBe(401);
    expect(sse.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${bridge.url}/.well-known/oauth-protected-resource/sse"`);
    await sse.body?.cancel();
    const sseDoc = (await (await fetch(`${bridge.url}/.well-known/oauth-protected-resource/sse`)).json()) as Record<string, unknown>;
    expect(sseDoc.resource).toBe(`${bridge.url}/sse`);
  });

  for (const upstream of ['modern', 'legacy'] as const) {
    it(`SDK v1 (Streamable HTTP session) completes OAuth through the bridge to a protected ${upstream} upstream`, async () => {
      const { bridge, guard } = bridges[upstream]!;
      as.interactionAccount = `v1-user-${upstream}`;
      const provider = new BrowserlessOAuthProvider();
      const first = new V1Http(new URL(`${bridge.url}/mcp`), { authProvider: provider as never });
      await expect(new V1Client({ name: 'v1-oauth', version: '1.0.0' }).connect(first)).rejects.toBeInstanceOf(V1Unauthorized);
      expect(provider.code).toBeDefined();
      await first.finishAuth(provider.code!);
      const client = new V1Client({ name: 'v1-oauth', version: '1.0.0' });
      await client.connect(new V1Http(new URL(`${bridge.url}/mcp`), { authProvider: provider as never }));
      try {
        expect(textOf(await client.callTool({ name: 'echo', arguments: { message: 'through' } }))).toBe('Echo: through');
      } finally {
        await client.close();
      }
      // From the upstream side: the user's own token arrived, for the bridge's audience.
      const mine = guard.admitted.filter((a) => a.sub === `v1-user-${upstream}`);
      expect(mine.length).toBeGreaterThan(0);
      for (const a of mine) expect(a.aud).toBe(`${bridge.url}/mcp`);
      expect(provider.authorizations).toBe(1);
    });

    it(`SDK v2 (modern, ${V}) completes OAuth through the bridge to a protected ${upstream} upstream`, async () => {
      const { bridge, guard } = bridges[upstream]!;
      as.interactionAccount = `v2-user-${upstream}`;
      const provider = new BrowserlessOAuthProvider();
      const client = () => new V2Client({ name: 'v2-oauth', version: '1.0.0' }, { versionNegotiation: { mode: { pin: V } } });
      const first = new V2Http(new URL(`${bridge.url}/mcp`), { authProvider: provider as never });
      await expect(client().connect(first)).rejects.toBeInstanceOf(V2Unauthorized);
      expect(provider.code).toBeDefined();
      expect(provider.iss).toBe(as.issuer);
      await first.finishAuth(provider.code!, provider.iss);
      const c = client();
      await c.connect(new V2Http(new URL(`${bridge.url}/mcp`), { authProvider: provider as never }));
      try {
        expect(textOf(await c.callTool({ name: 'echo', arguments: { message: 'modern' } }))).toBe('Echo: modern');
      } finally {
        await c.close();
      }
      const mine = guard.admitted.filter((a) => a.sub === `v2-user-${upstream}`);
      expect(mine.length).toBeGreaterThan(0);
      for (const a of mine) expect(a.aud).toBe(`${bridge.url}/mcp`);
    });
  }

  for (const upstream of ['modern', 'legacy'] as const) {
    it(`a token the ${upstream} upstream refuses: its 401 reaches modern and legacy clients with the bridge's metadata in the challenge`, async () => {
      const { bridge, guard } = bridges[upstream]!;
      // A real token, for a resource that is neither the bridge nor the upstream: the upstream refuses it.
      const foreign = await as.clientCredentials('bob-svc', 'urn:another:resource');
      const challenge = `Bearer resource_metadata="${bridge.url}/.well-known/oauth-protected-resource/mcp", error="invalid_token"`;
      const refusedBefore = guard.refused();
      const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${foreign}` };
      const params = { name: 'echo', arguments: { message: 'x' } };
      const modernBody = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { ...params, _meta: { 'io.modelcontextprotocol/protocolVersion': V, 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} } } };
      const modern = await fetch(`${bridge.url}/mcp`, { method: 'POST', headers: { ...headers, 'mcp-protocol-version': V, 'mcp-method': 'tools/call', 'mcp-name': 'echo' }, body: JSON.stringify(modernBody) });
      expect(modern.status).toBe(401);
      expect(modern.headers.get('www-authenticate')).toBe(challenge);
      expect(((await modern.json()) as { error: { code: number } }).error.code).toBe(-32603);
      // A legacy client: refused at initialize (legacy upstream) or at its first call (a modern upstream's initialize is answered by the bridge).
      const init = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
      let legacy = await fetch(`${bridge.url}/mcp`, { method: 'POST', headers, body: JSON.stringify(init) });
      const sid = legacy.headers.get('mcp-session-id');
      if (sid) {
        await legacy.body?.cancel();
        const inSession = { ...headers, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' };
        await (await fetch(`${bridge.url}/mcp`, { method: 'POST', headers: inSession, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) })).body?.cancel();
        legacy = await fetch(`${bridge.url}/mcp`, { method: 'POST', headers: inSession, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params }) });
      }
      expect(legacy.status).toBe(401);
      expect(legacy.headers.get('www-authenticate')).toBe(challenge);
      await legacy.body?.cancel();
      expect(guard.refused()).toBeGreaterThan(refusedBefore);
      expect(guard.admitted.some((a) => a.sub === 'bob-svc')).toBe(false);
    });
  }

  for (const upstream of ['modern', 'legacy'] as const) {
    it(`two principals at once to the ${upstream} upstream: every upstream request carries its own user's token, and no upstream session serves both`, async () => {
      const { bridge, guard } = bridges[upstream]!;
      const resource = `${bridge.url}/mcp`;
      const tokens = { 'alice-svc': await as.clientCredentials('alice-svc', resource), 'bob-svc': await as.clientCredentials('bob-svc', resource) };
      const from = guard.admitted.length;
      const params = { name: 'echo', arguments: { message: 'mine' } };
      const meta = { 'io.modelcontextprotocol/protocolVersion': V, 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} };
      const base = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
      const work = async (who: keyof typeof tokens) => {
        const headers = { ...base, authorization: `Bearer ${tokens[who]}` };
        const modern = () =>
          fetch(`${bridge.url}/mcp`, { method: 'POST', headers: { ...headers, 'mcp-protocol-version': V, 'mcp-method': 'tools/call', 'mcp-name': 'echo' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { ...params, _meta: meta } }) }).then((r) => r.text());
        const init = await fetch(`${bridge.url}/mcp`, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: who, version: '1' } } }) });
        const sid = init.headers.get('mcp-session-id')!;
        await init.text();
        const inSession = { ...headers, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' };
        await (await fetch(`${bridge.url}/mcp`, { method: 'POST', headers: inSession, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) })).text();
        const legacy = (id: number) => fetch(`${bridge.url}/mcp`, { method: 'POST', headers: inSession, body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params }) }).then((r) => r.text());
        const answers = await Promise.all([modern(), legacy(2), modern(), legacy(3)]);
        for (const a of answers) expect(a).toContain('Echo: mine');
        await (await fetch(`${bridge.url}/mcp`, { method: 'DELETE', headers: inSession })).text();
      };
      await Promise.all([work('alice-svc'), work('bob-svc')]);
      const seen = guard.admitted.slice(from);
      expect(new Set(seen.map((a) => a.sub))).toEqual(new Set(['alice-svc', 'bob-svc']));
      for (const a of seen) expect(a.aud).toBe(resource);
      // From the upstream side: an upstream session is only ever used with one user's token.
      const owners = new Map<string, Set<string>>();
      for (const a of seen) if (a.session) owners.set(a.session, (owners.get(a.session) ?? new Set()).add(a.sub));
      if (upstream === 'legacy') expect(owners.size).toBeGreaterThanOrEqual(2);
      for (const subs of owners.values()) expect(subs.size).toBe(1);
      // A credential never reaches a log line.
      for (const t of Object.values(tokens)) expect(bridge.stderr()).not.toContain(t);
    });
  }

  it('a config file with "auth": "pass-through": each server serves its own upstream’s metadata under its path', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'identity-config-'));
    const file = path.join(dir, 'servers.json');
    const modernUp = bridges.modern!.guard;
    const probe = await as.clientCredentials('alice-svc', modernUp.url);
    writeFileSync(file, JSON.stringify({ mcpServers: { tickets: { url: modernUp.url, headers: { Authorization: `Bearer ${probe}` } } }, bridge: { auth: 'pass-through' } }));
    const daemon = await startConfigBridge(file, ['--log-level', 'warn']);
    try {
      // GET /servers is behind the gate like every route: pass-through admits any bearer token to the bridge's own routes.
      await waitUntil('tickets is ready', async () => {
        const r = await fetch(`${daemon.url}/servers`, { headers: { authorization: 'Bearer any' } });
        const list = ((await r.json()) as { servers?: Array<{ name: string; state: string }> }).servers;
        return list?.some((x) => x.name === 'tickets' && x.state === 'ready');
      });
      const res = await fetch(`${daemon.url}/servers/tickets/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${daemon.url}/.well-known/oauth-protected-resource/servers/tickets/mcp"`);
      await res.body?.cancel();
      const doc = (await (await fetch(`${daemon.url}/.well-known/oauth-protected-resource/servers/tickets/mcp`)).json()) as Record<string, unknown>;
      expect(doc).toMatchObject({ resource: `${daemon.url}/servers/tickets/mcp`, authorization_servers: [as.issuer] });
      expect((await fetch(`${daemon.url}/.well-known/oauth-protected-resource/servers/nobody/mcp`)).status).toBe(404);
    } finally {
      await daemon.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('with no credential of its own for the start-up probe, the bridge runs no OAuth flow of its own: it exits 1 at once, saying what to pass', async () => {
    // No --header Authorization: a URL upstream gets the bridge's default OAuth, which pass-through must not have
    // (it waited for a browser here, and a client's refused token would have started the bridge's flow and been
    // sent again under the bridge's identity).
    const guard = await guardUpstream(modernServer.url, as.issuer, () => []);
    try {
      const run = await runCli(['--log-level', 'info', '--auth', 'pass-through', '--upstream', guard.url], 15_000);
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/answered HTTP 401 .* it needs credentials \(pass them with --header 'Authorization: …'\)/);
      expect(run.stderr).not.toMatch(/oauth|authoriz(e|ation) (url|flow)|browser/i);
      expect(guard.admitted).toEqual([]);
    } finally {
      await guard.close();
    }
  });

  it('refuses --auth pass-through in front of a command upstream (exit 2)', async () => {
    const a = await runCli(['--auth', 'pass-through', '--', process.execPath, '-e', '0']);
    expect(a.code).toBe(2);
    expect(a.stderr).toMatch(/command upstream/);
  });
});

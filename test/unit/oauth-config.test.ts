import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { configFromFlags } from '../../src/daemon/config-from-flags.js';
import { derivedCallbackPort } from '../../src/links/oauth/callback-server.js';
import { authStatusCommand } from '../../src/links/oauth/oauth-commands.js';
import { oauthConfigFrom } from '../../src/links/oauth/oauth-config.js';
import { TokenStore, upstreamKey } from '../../src/links/oauth/token-store.js';

const URL_A = 'https://mcp.example.com/mcp';
const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

describe('--oauth-* flags', () => {
  it.each([
    [{ oauthClientSecret: 's' }, /add --oauth-client-id/],
    [{ oauthClientMetadataUrl: 'http://example.com/cimd.json' }, /https URL with a path/],
    [{ oauthClientMetadataUrl: 'https://example.com/' }, /https URL with a path/],
    [{ oauthCallbackPort: '70000' }, /port number/],
    [{ oauthGrant: 'password' }, /authorization_code or client_credentials/],
    [{ oauthGrant: 'client_credentials' }, /needs --oauth-client-id/],
    [{ oauthGrant: 'client_credentials', oauthClientId: 'c' }, /either --oauth-client-secret/],
    [{ oauthPrivateKey: '/nonexistent.pem', oauthClientId: 'c' }, /PEM private key file/],
    [{ oauthTimeout: '0' }, /--oauth-timeout/],
    [{ oauthResource: 'not a uri' }, /absolute URI/],
  ])('%o is refused with what to do', (flags, message) => {
    expect(() => oauthConfigFrom(flags, {})).toThrow(message);
  });

  it('defaults: ~/.mcp-bridge/oauth, a 300 s browser wait, the env dir and secret when set', () => {
    expect(oauthConfigFrom({}, {})).toMatchObject({ dir: path.join(os.homedir(), '.mcp-bridge', 'oauth'), timeoutMs: 300_000, grant: 'authorization_code', noBrowser: false });
    const cfg = oauthConfigFrom({ oauthClientId: 'c' }, { MCP_BRIDGE_OAUTH_DIR: '/tmp/x', MCP_BRIDGE_OAUTH_CLIENT_SECRET: 'env-secret' });
    expect(cfg).toMatchObject({ dir: '/tmp/x', clientId: 'c', clientSecret: 'env-secret' });
  });

  it('OAuth applies to URL upstreams, not beside a static Authorization header or a command', () => {
    expect(configFromFlags({ upstream: URL_A }, [], {}).oauth).toBeDefined();
    expect(configFromFlags({ upstream: URL_A, header: ['Authorization: Bearer x'] }, [], {}).oauth).toBeUndefined();
    expect(() => configFromFlags({ upstream: URL_A, header: ['Authorization: Bearer x'], oauthScope: 'a' }, [], {})).toThrow(/keep one/);
    expect(() => configFromFlags({ oauthScope: 'a' }, ['node', 'server.js'], {})).toThrow(/--upstream URL/);
  });

  it('the client secret is scrubbed from every log line', () => {
    const opts = configFromFlags({ upstream: URL_A, oauthClientId: 'c', oauthClientSecret: 'very-secret-value', logLevel: 'info' }, [], {});
    const lines: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string) => lines.push(String(chunk)) > 0) as typeof process.stderr.write;
    try {
      opts.logger.child({ side: 'upstream' }).warn('oauth.failed', { error: 'the token endpoint said very-secret-value is wrong' });
    } finally {
      process.stderr.write = write;
    }
    expect(lines.join('')).toContain('oauth.failed');
    expect(lines.join('')).not.toContain('very-secret-value');
  });
});

describe('token store and auth status', () => {
  it('a stable callback port per upstream, below the ephemeral range', () => {
    expect(derivedCallbackPort(URL_A)).toBe(derivedCallbackPort(URL_A));
    expect(derivedCallbackPort(URL_A)).toBeGreaterThanOrEqual(10_000);
    expect(derivedCallbackPort(URL_A)).toBeLessThan(30_000);
  });

  it('URL, resource and client id each make a store of their own', () => {
    const keys = new Set([upstreamKey(URL_A), upstreamKey(URL_A, 'https://tenant1/'), upstreamKey(URL_A, undefined, 'client-1'), upstreamKey('https://other.example/mcp')]);
    expect(keys.size).toBe(4);
  });

  it('status shows scope, expiry and refreshability, never a token', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'oauth-unit-'));
    dirs.push(dir);
    const store = new TokenStore(dir, { upstream: URL_A });
    await store.update((r) => (r.tokens = { access_token: 'AT-secret-1234', refresh_token: 'RT-secret-5678', token_type: 'Bearer', scope: 'mcp:tools', expires_at: Date.parse('2030-01-01T00:00:00Z') }));
    await writeFile(path.join(dir, 'unrelated.txt'), 'x');
    const text = await authStatusCommand(dir, Date.parse('2029-01-01T00:00:00Z'));
    expect(text).toBe(`${URL_A}  scope: mcp:tools  expires 2030-01-01T00:00:00.000Z  refreshable`);
    expect(text).not.toMatch(/secret/);
  });
});

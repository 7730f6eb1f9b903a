import { describe, expect, it } from 'vitest';
import { ParkedCalls } from '../../bridges/shared/parked-calls.js';
import { RequestStateCodec } from '../../bridges/shared/request-state.js';
import { bearerToken, oauthChallenge } from '../../src/faces/auth-verdict.js';
import { PassThroughAuth } from '../../src/faces/auth-pass-through.js';
import { SessionBudget } from '../../src/faces/session-budget.js';
import { clientAuthFromFlags, type ClientAuthFlags } from '../../src/identity/client-auth-config.js';
import { SessionPool } from '../../src/links/session-pool.js';

const ctx = (over: Partial<Parameters<typeof clientAuthFromFlags>[1]> = {}) => ({ authToken: undefined, stdio: false, upstreamIsUrl: true, otherFlags: {}, env: {}, ...over });

describe('clientAuthFromFlags: refusals say what to do', () => {
  const refused: Array<[string, ClientAuthFlags, Partial<Parameters<typeof clientAuthFromFlags>[1]>, RegExp]> = [
    ['an unknown mode', { auth: 'basic' }, {}, /--auth must be one of none, token, jwt, pass-through/],
    ['token mode without a token', { auth: 'token' }, {}, /--auth token needs --auth-token/],
    ['jwt without issuer or audience', { auth: 'jwt', authIssuer: 'http://127.0.0.1:1' }, {}, /needs --auth-issuer <url> and --auth-audience/],
    ['jwt with an issuer that is no URL', { auth: 'jwt', authIssuer: 'issuer', authAudience: 'a' }, {}, /--auth-issuer must be an http\(s\) URL/],
    ['a jwt flag without --auth jwt', { authIssuer: 'http://127.0.0.1:1' }, {}, /--auth-issuer belongs to --auth jwt/],
    ['--forward-header without pass-through', { auth: 'jwt', authIssuer: 'http://x', authAudience: 'a', forwardHeader: ['x-tenant'] }, {}, /--forward-header belongs to --auth pass-through/],
    ['pass-through with the bridge’s own OAuth', { auth: 'pass-through' }, { otherFlags: { oauthClientId: 'bridge' } }, /--auth pass-through [^]*\(--oauth-client-id\) cannot apply/],
    ['pass-through to a command', { auth: 'pass-through' }, { upstreamIsUrl: false }, /command upstream has none/],
    ['forwarding a header the bridge writes', { auth: 'pass-through', forwardHeader: ['Mcp-Session-Id'] }, {}, /sets that header itself/],
    ['a mode with --stdio', { auth: 'jwt', authIssuer: 'http://x', authAudience: 'a' }, { stdio: true }, /with --stdio/],
    ['--auth-token with another mode', { auth: 'pass-through', authToken: 'x'.repeat(20) }, { authToken: 'x'.repeat(20) }, /--auth-token is the token mode/],
  ];
  it.each(refused)('%s', (_name, flags, c, message) => {
    expect(() => clientAuthFromFlags(flags, ctx(c))).toThrow(message);
  });

  it('reads jwt and pass-through; a token alone is the token mode (undefined: the gate builds it)', () => {
    expect(clientAuthFromFlags({ auth: 'jwt', authIssuer: 'http://as', authAudience: 'urn:a', authRequiredScope: ['s1', 's2'] }, ctx({ env: { MCP_BRIDGE_AUTH_INTROSPECTION_SECRET: 'sec' } }))).toEqual({
      mode: 'jwt', issuer: 'http://as', audience: 'urn:a', jwksUrl: undefined, requiredScopes: ['s1', 's2'], introspectionUrl: undefined, introspectionClientId: undefined, introspectionClientSecret: 'sec',
    });
    expect(clientAuthFromFlags({ auth: 'pass-through', forwardHeader: ['X-Tenant'] }, ctx())).toEqual({ mode: 'pass-through', forwardHeaders: ['X-Tenant'] });
    expect(clientAuthFromFlags({}, ctx({ authToken: 'x'.repeat(20) }))).toBeUndefined();
    expect(clientAuthFromFlags({}, ctx())).toBeUndefined();
  });
});

describe('challenges and bearer parsing', () => {
  it.each([
    [undefined, undefined],
    ['', undefined],
    ['Bearer abc', 'abc'],
    ['bearer   abc  ', 'abc'],
    ['Basic abc', 'scheme'],
    ['Bearer', 'scheme'],
    ['Bearer a b', 'scheme'],
  ])('%j → %j', (header, want) => expect(bearerToken(header)).toBe(want));

  it('RFC 9728 §5.1 / RFC 6750 §3 parameters, quoted', () => {
    const urls = { metadataUrl: 'http://h/.well-known/oauth-protected-resource/mcp' };
    expect(oauthChallenge(urls, [], undefined)).toBe('Bearer resource_metadata="http://h/.well-known/oauth-protected-resource/mcp"');
    expect(oauthChallenge(urls, ['a', 'b'], 'invalid_token', 'say "no"')).toBe(
      'Bearer resource_metadata="http://h/.well-known/oauth-protected-resource/mcp", scope="a b", error="invalid_token", error_description="say \\"no\\""',
    );
  });
});

describe('pass-through principal', () => {
  const auth = new PassThroughAuth({ upstreamUrlFor: () => 'http://127.0.0.1:1/mcp', forwardHeaders: ['X-Tenant', 'authorization'] });
  it('the token and the named headers go upstream, nothing else; the principal is a digest, never the token', () => {
    const v = auth.authenticate({ authorization: 'Bearer tok-1', 'x-tenant': 't1', cookie: 'c=1', 'x-other': 'o' });
    expect(v.ok).toBe(true);
    if (!v.ok) return;
    expect(v.principal.upstreamHeaders).toEqual({ authorization: 'Bearer tok-1', 'x-tenant': 't1' });
    expect(v.principal.id).toMatch(/^pass:[A-Za-z0-9_-]{22}$/);
    expect(v.principal.id).not.toContain('tok-1');
    const other = auth.authenticate({ authorization: 'Bearer tok-2' });
    expect(other.ok && other.principal.id).not.toBe(v.principal.id);
  });
});

describe('state keyed by principal', () => {
  const init = { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'c', version: '1' } };
  it('the pool key differs by principal, not by clientInfo', () => {
    expect(SessionPool.keyOf({ ...init, principal: 'jwt:alice' })).not.toBe(SessionPool.keyOf({ ...init, principal: 'jwt:bob' }));
    expect(SessionPool.keyOf({ ...init, principal: 'jwt:alice' })).toBe(SessionPool.keyOf({ ...init, clientInfo: { name: 'other', version: '2' }, principal: 'jwt:alice' }));
    expect(SessionPool.keyOf(init)).not.toBe(SessionPool.keyOf({ ...init, principal: 'jwt:alice' }));
  });

  it('a requestState opens only for the principal it was sealed for, and reads as unknown otherwise', () => {
    const codec = new RequestStateCodec({ ttlMs: 60_000, instanceId: 'i1' });
    const params = { name: 't', arguments: {} };
    const state = codec.seal('ref-1', 'tools/call', params, undefined, 'jwt:alice');
    expect(codec.open(state, 'tools/call', params, 'jwt:alice')).toEqual({ ok: true, ref: 'ref-1' });
    for (const caller of ['jwt:bob', undefined]) {
      const v = codec.open(state, 'tools/call', params, caller);
      expect(v.ok).toBe(false);
      if (!v.ok) {
        expect(v.reason).toBe('principal');
        expect(v.message).toMatch(/no longer parked/);
      }
    }
    // A state sealed without a principal is not anyone's.
    expect(codec.open(codec.seal('ref-2', 'tools/call', params), 'tools/call', params, 'jwt:alice').ok).toBe(false);
  });

  it('the session budget bounds one principal’s share and says which bound was hit', () => {
    const b = new SessionBudget(10, 2);
    const a1 = b.tryAcquire('alice');
    const a2 = b.tryAcquire('alice');
    expect(b.tryAcquire('alice')).toBeUndefined();
    expect(b.refusal('alice')).toMatch(/--max-sessions-per-principal/);
    expect(b.tryAcquire('bob')).toBeDefined();
    a1!();
    a1!();
    expect(b.tryAcquire('alice')).toBeDefined();
    a2!();
    expect(b.used).toBe(2);
  });

  it('parked calls count per owner', () => {
    const parked = new ParkedCalls<{ cancel(): void }>({ ttlMs: 60_000 });
    const r = parked.park({ cancel() {} }, undefined, 'alice');
    parked.park({ cancel() {} }, undefined, 'bob');
    expect(parked.countOwnedBy('alice')).toBe(1);
    parked.take(r);
    expect(parked.countOwnedBy('alice')).toBe(0);
    parked.cancelAll('done');
  });
});

describe('a config file’s "bridge" object takes the same modes', () => {
  it('auth, issuer, audience, scopes and per-principal bounds; pass-through with --oauth-* is refused there too', async () => {
    const { parseServersConfig } = await import('../../src/config/servers-config.js');
    const { optionsFromConfig } = await import('../../src/config/load-servers-config.js');
    const file = (bridge: Record<string, unknown>) =>
      parseServersConfig(JSON.stringify({ mcpServers: { a: { url: 'http://127.0.0.1:1/mcp' } }, bridge }), '/tmp/identity.json', {});
    const { options } = optionsFromConfig(
      file({ auth: 'jwt', authIssuer: 'http://127.0.0.1:2', authAudience: 'urn:a', authRequiredScope: ['mcp:tools'], maxSessionsPerPrincipal: '4', maxParkedPerPrincipal: '2' }),
      {},
      [],
      {},
    );
    expect(options.clientAuth).toMatchObject({ mode: 'jwt', issuer: 'http://127.0.0.1:2', audience: 'urn:a', requiredScopes: ['mcp:tools'] });
    expect([options.maxSessionsPerPrincipal, options.maxParkedPerPrincipal]).toEqual([4, 2]);
    const pass = optionsFromConfig(file({ auth: 'pass-through', forwardHeader: ['x-tenant'] }), {}, [], {});
    expect(pass.options.clientAuth).toEqual({ mode: 'pass-through', forwardHeaders: ['x-tenant'] });
    expect(() => optionsFromConfig(file({ auth: 'pass-through' }), { oauthClientId: 'bridge' } as never, [], {})).toThrow(/--oauth-client-id/);
  });
});

describe('a desktop client launching --stdio with a file meant for HTTP', () => {
  it('drops the file’s client-auth keys (the client is the process that started the bridge)', async () => {
    const { parseServersConfig } = await import('../../src/config/servers-config.js');
    const { optionsFromConfig } = await import('../../src/config/load-servers-config.js');
    const config = parseServersConfig(JSON.stringify({ mcpServers: { a: { url: 'http://127.0.0.1:1/mcp' } }, bridge: { auth: 'jwt', authIssuer: 'http://127.0.0.1:2', authAudience: 'urn:a' } }), '/tmp/identity.json', {});
    expect(optionsFromConfig(config, { stdio: true }, [], {}).options.clientAuth).toBeUndefined();
  });
});

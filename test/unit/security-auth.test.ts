import { describe, expect, it } from 'vitest';
import { AUTH_REALM, BearerAuth, isValidAuthToken } from '../../src/faces/auth.js';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { RequestGate, type Refusal } from '../../src/faces/request-gate.js';

const TOKEN = 'tok-0123456789abcdef';

/** The gate reads a request's headers and path (for the challenge's metadata URL). */
const gateCheck = (gate: RequestGate, headers: IncomingHttpHeaders, opts?: { open?: boolean }) => gate.check({ headers, url: '/mcp' } as IncomingMessage, opts) as Refusal | undefined;

describe('BearerAuth.check', () => {
  const auth = new BearerAuth(TOKEN);
  it.each([
    [undefined, 'missing'],
    ['', 'missing'],
    ['   ', 'missing'],
    [`Basic ${Buffer.from('u:p').toString('base64')}`, 'scheme'],
    [TOKEN, 'scheme'],
    [`Bearer`, 'scheme'],
    [`Bearer ${TOKEN} extra`, 'scheme'],
    [`Bearer ${TOKEN}x`, 'invalid'],
    [`Bearer ${TOKEN.slice(0, -1)}`, 'invalid'],
    [`Bearer ${TOKEN.toUpperCase()}`, 'invalid'],
    ['Bearer a', 'invalid'],
    [`Bearer ${TOKEN}`, undefined],
    [`bearer ${TOKEN}`, undefined],
    [`BEARER   ${TOKEN}  `, undefined],
  ] as const)('%j → %s', (header, want) => {
    expect(auth.check(header)).toBe(want);
  });

  it('challenges name the realm, and invalid_token only when a token was presented (RFC 6750 §3)', () => {
    expect(BearerAuth.challenge('missing')).toBe(`Bearer realm="${AUTH_REALM}"`);
    expect(BearerAuth.challenge('scheme')).toBe(`Bearer realm="${AUTH_REALM}"`);
    expect(BearerAuth.challenge('invalid')).toBe(`Bearer realm="${AUTH_REALM}", error="invalid_token"`);
  });
});

describe('isValidAuthToken', () => {
  it.each([
    ['0123456789abcdef', true],
    ['a-b.c_d~e+f/g0123==', true],
    ['x'.repeat(64), true],
    ['short', false],
    ['0123456789abcde', false],
    ['has space 0123456789', false],
    ['quote"0123456789abc', false],
    ['newline\n0123456789a', false],
    ['=0123456789abcdef', false],
  ] as const)('%j → %s', (token, want) => {
    expect(isValidAuthToken(token)).toBe(want);
  });
});

describe('RequestGate.check: Host, then Origin, then the token', () => {
  const gate = new RequestGate({ allowOrigins: [], allowHosts: ['bridge.internal'], listenHost: '127.0.0.1', authToken: TOKEN });
  const ok = { host: '127.0.0.1:8808', authorization: `Bearer ${TOKEN}` };
  it.each([
    ['everything right', ok, undefined, undefined],
    ['an allowed extra host', { ...ok, host: 'bridge.internal:443' }, undefined, undefined],
    ['a rebinding host name', { ...ok, host: 'evil.example:8808' }, 421, 'host'],
    ['a foreign origin', { ...ok, origin: 'https://evil.example' }, 403, 'origin'],
    ['bad host and bad origin: host first', { host: 'evil.example', origin: 'https://evil.example' }, 421, 'host'],
    ['bad origin and no token: origin first', { host: 'localhost', origin: 'https://evil.example' }, 403, 'origin'],
    ['no token', { host: 'localhost:1' }, 401, 'auth'],
    ['a wrong token', { ...ok, authorization: 'Bearer nope-nope-nope-nope' }, 401, 'auth'],
  ] as const)('%s', (_name, headers, status, reason) => {
    const refused = gateCheck(gate, headers);
    expect(refused?.status).toBe(status);
    expect(refused?.reason).toBe(reason);
    if (refused) expect(refused.error.code).toBe(-32000);
  });

  it('401 carries WWW-Authenticate; invalid_token when one was sent', () => {
    expect(gateCheck(gate, { host: 'localhost' })?.headers).toEqual({ 'www-authenticate': `Bearer realm="${AUTH_REALM}"` });
    expect(gateCheck(gate, { host: 'localhost', authorization: 'Bearer wrong-wrong-wrong-wrong' })?.headers['www-authenticate']).toContain('error="invalid_token"');
  });

  it('open routes (/healthz) skip the token but not Host or Origin', () => {
    expect(gateCheck(gate, { host: 'localhost' }, { open: true })).toBeUndefined();
    expect(gateCheck(gate, { host: 'evil.example' }, { open: true })?.status).toBe(421);
  });

  it('without a token configured, nothing asks for one', () => {
    const open = new RequestGate({ allowOrigins: [], allowHosts: [] });
    expect(open.requiresAuth).toBe(false);
    expect(gateCheck(open, { host: 'localhost:9' })).toBeUndefined();
  });

  it('the error message never contains the configured token', () => {
    for (const authorization of [undefined, 'Bearer x', `Basic ${TOKEN}`]) {
      expect(JSON.stringify(gateCheck(gate, { host: 'localhost', authorization }))).not.toContain(TOKEN);
    }
  });
});

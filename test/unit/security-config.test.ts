import { describe, expect, it } from 'vitest';
import { configFromFlags, type CliFlags } from '../../src/daemon/config-from-flags.js';
import { DEFAULT_OPTIONS } from '../../src/daemon/options.js';
import { BridgeError } from '../../src/errors.js';

const TOKEN = 'a'.repeat(32);
const cmd = ['node', 'server.js'];

function usage(flags: CliFlags, env: NodeJS.ProcessEnv = {}): string {
  try {
    configFromFlags(flags, cmd, env);
  } catch (err) {
    expect(err).toBeInstanceOf(BridgeError);
    expect((err as BridgeError).code).toBe('BRIDGE_ERR_USAGE');
    return (err as Error).message;
  }
  throw new Error('expected a usage error');
}

describe('listening beyond loopback needs a token or an explicit opt-out', () => {
  it.each(['0.0.0.0:8808', '[::]:8808', '192.168.1.5:1', 'my-host:1'])('refuses %s without a token, saying what to do', (listen) => {
    const message = usage({ listen });
    expect(message).toMatch(/refusing to listen on .* without authentication/);
    expect(message).toMatch(/--auth-token/);
    expect(message).toMatch(/MCP_BRIDGE_AUTH_TOKEN/);
    expect(message).toMatch(/--allow-unauthenticated/);
  });

  it.each([
    ['a --auth-token', { listen: '0.0.0.0:1', authToken: TOKEN }, {}],
    ['MCP_BRIDGE_AUTH_TOKEN', { listen: '0.0.0.0:1' }, { MCP_BRIDGE_AUTH_TOKEN: TOKEN }],
    ['--allow-unauthenticated', { listen: '0.0.0.0:1', allowUnauthenticated: true }, {}],
    ['loopback (127.0.0.1)', { listen: '127.0.0.1:1' }, {}],
    ['loopback (localhost)', { listen: 'localhost:1' }, {}],
    ['loopback (::1)', { listen: '[::1]:1' }, {}],
    ['--stdio (no listener at all)', { listen: '0.0.0.0:1', stdio: true }, {}],
  ] as const)('starts with %s', (_name, flags, env) => {
    expect(() => configFromFlags({ ...flags }, cmd, env)).not.toThrow();
  });

  it('the flag wins over the environment', () => {
    expect(configFromFlags({ authToken: TOKEN }, cmd, { MCP_BRIDGE_AUTH_TOKEN: 'b'.repeat(32) }).authToken).toBe(TOKEN);
    expect(configFromFlags({}, cmd, { MCP_BRIDGE_AUTH_TOKEN: TOKEN }).authToken).toBe(TOKEN);
    expect(configFromFlags({}, cmd, {}).authToken).toBeUndefined();
  });

  it.each(['short', 'has spaces in it 0123456789', 'x'.repeat(15)])('refuses the weak or malformed token %j', (authToken) => {
    expect(usage({ authToken })).toMatch(/--auth-token must be at least 16 characters/);
  });

  it('refuses --auth-token with --stdio, and ignores the environment variable there', () => {
    expect(usage({ stdio: true, authToken: TOKEN })).toMatch(/with --stdio/);
    expect(configFromFlags({ stdio: true }, cmd, { MCP_BRIDGE_AUTH_TOKEN: TOKEN }).authToken).toBeUndefined();
  });
});

describe('limits and allow-lists from flags', () => {
  it('defaults', () => {
    const o = configFromFlags({}, cmd, {});
    expect(o.allowHosts).toEqual([]);
    expect(o.allowUnauthenticated).toBe(false);
    expect([o.maxHeaderBytes, o.maxLineBytes, o.maxJsonDepth, o.maxSessions, o.maxParkedCalls, o.maxListens, o.poolMaxQueued]).toEqual([
      DEFAULT_OPTIONS.maxHeaderBytes,
      DEFAULT_OPTIONS.maxLineBytes,
      DEFAULT_OPTIONS.maxJsonDepth,
      DEFAULT_OPTIONS.maxSessions,
      DEFAULT_OPTIONS.maxParkedCalls,
      DEFAULT_OPTIONS.maxListens,
      DEFAULT_OPTIONS.poolMaxQueued,
    ]);
  });

  it('each flag lands in its option', () => {
    const o = configFromFlags(
      { allowHost: ['a.example', 'b.example:8443'], maxHeaderSize: '8192', maxLine: '65536', maxJsonDepth: '16', maxSessions: '5', maxParked: '6', maxListens: '7', maxQueued: '0' },
      cmd,
      {},
    );
    expect(o.allowHosts).toEqual(['a.example', 'b.example:8443']);
    expect([o.maxHeaderBytes, o.maxLineBytes, o.maxJsonDepth, o.maxSessions, o.maxParkedCalls, o.maxListens, o.poolMaxQueued]).toEqual([8192, 65536, 16, 5, 6, 7, 0]);
  });

  it.each([
    [{ maxHeaderSize: '100' }, /--max-header-size must be a whole number ≥ 1024/],
    [{ maxLine: '10' }, /--max-line must be a whole number ≥ 1024/],
    [{ maxJsonDepth: '2' }, /--max-json-depth must be a whole number ≥ 8/],
    [{ maxSessions: '0' }, /--max-sessions must be a whole number ≥ 1/],
    [{ maxParked: 'many' }, /--max-parked must be a whole number/],
    [{ maxListens: '-1' }, /--max-listens must be a whole number/],
    [{ maxQueued: '1.5' }, /--max-queued must be a whole number ≥ 0/],
    [{ allowHost: ['bad host'] }, /--allow-host must be a host name/],
  ] as const)('rejects %j', (flags, message) => {
    expect(usage({ ...flags } as CliFlags)).toMatch(message);
  });
});

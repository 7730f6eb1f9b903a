import { describe, expect, it } from 'vitest';
import { configFromFlags, parseHeaders, parseListen, upstreamFrom } from '../../src/daemon/config-from-flags.js';
import { DEFAULT_OPTIONS } from '../../src/daemon/options.js';
import { BridgeError } from '../../src/errors.js';

const usageError = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(BridgeError);
    expect((err as BridgeError).code).toBe('BRIDGE_ERR_USAGE');
    return (err as Error).message;
  }
  throw new Error('expected a usage error');
};

describe('parseListen', () => {
  it.each([
    ['127.0.0.1:8808', { host: '127.0.0.1', port: 8808 }],
    ['0.0.0.0:0', { host: '0.0.0.0', port: 0 }],
    [':9000', { host: '127.0.0.1', port: 9000 }],
    ['9000', { host: '127.0.0.1', port: 9000 }],
    ['[::1]:8080', { host: '::1', port: 8080 }],
    ['localhost:1', { host: 'localhost', port: 1 }],
  ])('%s', (raw, expected) => expect(parseListen(raw)).toEqual(expected));

  it.each(['', 'host:', 'host:70000', 'a:b', '1.2.3.4:-1'])('rejects %j', (raw) => {
    expect(usageError(() => parseListen(raw))).toMatch(/--listen must be host:port/);
  });
});

describe('parseHeaders', () => {
  it('keeps colons inside values and trims', () => {
    expect(parseHeaders(['Authorization: Bearer a:b', 'X-Team:  blue '])).toEqual({ Authorization: 'Bearer a:b', 'X-Team': 'blue' });
  });
  it.each(['NoColon', ': value', 'Bad Name: v'])('rejects %j', (raw) => {
    expect(usageError(() => parseHeaders([raw]))).toMatch(/--header must look like/);
  });
});

describe('upstreamFrom', () => {
  it('a URL', () => {
    expect(upstreamFrom({ upstream: 'http://127.0.0.1:3001/mcp', header: ['A: 1'] }, [])).toEqual({ kind: 'url', url: 'http://127.0.0.1:3001/mcp', headers: { A: '1' } });
  });
  it('a command after --', () => {
    expect(upstreamFrom({}, ['node', 'server.js', '--flag'])).toEqual({ kind: 'command', command: 'node', args: ['server.js', '--flag'] });
  });
  it('nothing: the bundled reference server over stdio', () => {
    const t = upstreamFrom({}, []);
    expect(t.kind).toBe('command');
    if (t.kind === 'command') {
      expect(t.command).toBe(process.execPath);
      expect(t.args.at(-1)).toBe('stdio');
      expect(t.args[0]).toMatch(/server-everything[/\\]dist[/\\]index\.js$/);
    }
  });
  it('both a URL and a command is refused with what to do instead', () => {
    expect(usageError(() => upstreamFrom({ upstream: 'http://x/mcp' }, ['node']))).toMatch(/either --upstream <url> or -- <command>/);
  });
  it.each(['not a url', 'ftp://host/x', '/relative'])('rejects upstream %j', (raw) => {
    expect(usageError(() => upstreamFrom({ upstream: raw }, []))).toMatch(/--upstream must be/);
  });
  it('does not quote back the credentials of an --upstream it refuses', () => {
    const message = usageError(() => upstreamFrom({ upstream: 'http//alice:s3cret@host/mcp' }, []));
    expect(message).toMatch(/got 'http\/\/\[redacted\]@host\/mcp'/);
    expect(message).not.toContain('s3cret');
  });
  it('refuses --header without a URL upstream', () => {
    expect(usageError(() => upstreamFrom({ header: ['A: 1'] }, ['node']))).toMatch(/--header applies to an --upstream URL/);
  });
});

describe('configFromFlags', () => {
  it('spreads defaults first', () => {
    const o = configFromFlags({}, ['node', 's.js'], {});
    expect(o.listen).toEqual(DEFAULT_OPTIONS.listen);
    expect(o.listen.host).toBe('127.0.0.1');
    expect(o.poolMax).toBe(DEFAULT_OPTIONS.poolMax);
    expect(o.upstreamEpoch).toBe('auto');
    expect(o.stdio).toBe(false);
  });
  it('flags override defaults', () => {
    const o = configFromFlags({ poolMax: '3', callTimeout: '1000', stdio: true, upstreamEpoch: 'initialize', allowOrigin: ['https://app.example'] }, ['node'], {});
    expect([o.poolMax, o.callTimeoutMs, o.stdio, o.upstreamEpoch, o.allowOrigins]).toEqual([3, 1000, true, 'initialize', ['https://app.example']]);
  });
  it.each([
    [{ poolMax: '0' }, /--pool-max must be a whole number ≥ 1/],
    [{ callTimeout: '1.5' }, /--call-timeout must be a whole number/],
    [{ logLevel: 'loud' }, /--log-level must be one of/],
    [{ upstreamEpoch: 'future' }, /--upstream-epoch must be/],
    [{ requestStateKey: 'short' }, /at least 32 bytes/],
  ])('rejects %j', (flags, message) => {
    expect(usageError(() => configFromFlags(flags, ['node'], {}))).toMatch(message);
  });
  it('reads the requestState key from the environment', () => {
    const key = 'k'.repeat(32);
    expect(configFromFlags({}, ['node'], { MCP_BRIDGE_REQUEST_STATE_KEY: key }).requestStateKey).toBe(key);
  });
});

describe('listen from the environment', () => {
  it('MCP_BRIDGE_LISTEN applies when --listen is absent, and --listen wins', () => {
    const token = { MCP_BRIDGE_AUTH_TOKEN: 't'.repeat(32) };
    expect(configFromFlags({}, ['node'], { MCP_BRIDGE_LISTEN: '0.0.0.0:8808', ...token }).listen).toEqual({ host: '0.0.0.0', port: 8808 });
    expect(configFromFlags({ listen: '127.0.0.1:1' }, ['node'], { MCP_BRIDGE_LISTEN: '0.0.0.0:8808' }).listen).toEqual({ host: '127.0.0.1', port: 1 });
  });
});

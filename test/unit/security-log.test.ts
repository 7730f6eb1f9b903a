import { describe, expect, it } from 'vitest';
import { configFromFlags } from '../../src/daemon/config-from-flags.js';
import { createLogger, REDACTED, redact, scrubSecrets } from '../../src/log.js';

function capture(secrets: string[] = []) {
  const lines: string[] = [];
  return { lines, logger: createLogger('debug', {}, (l) => lines.push(l), secrets) };
}

describe('redact: credential-bearing names', () => {
  it.each([
    'authorization',
    'Authorization',
    'proxy-authorization',
    'cookie',
    'set-cookie',
    'x-api-key',
    'X-Api-Key',
    'api-key',
    'apikey',
    'x-auth-token',
    'x-access-token',
    'private-token',
    'password',
    'requestStateKey',
  ])('%s is redacted wherever it is nested', (name) => {
    const out = redact({ upstream: { headers: { [name]: 'Bearer s3cret' } }, list: [{ [name]: 's3cret' }] }) as Record<string, any>;
    expect(out.upstream.headers[name]).toBe(REDACTED);
    expect(out.list[0][name]).toBe(REDACTED);
  });

  it.each(['content-type', 'mcp-method', 'progressToken', 'sessionId'])('%s is kept', (name) => {
    expect((redact({ [name]: 'v' }) as Record<string, unknown>)[name]).toBe('v');
  });
});

describe('scrubSecrets: configured values, whatever field they hide in', () => {
  it('scrubs a value inside a message, an error and a nested field, in its JSON-escaped form', () => {
    const { lines, logger } = capture(['tok"en\\with-quotes', 'plain-secret-value']);
    logger.warn('upstream.failed', { err: new Error('server said: plain-secret-value is wrong'), detail: { echoed: 'x tok"en\\with-quotes y' } });
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain('plain-secret-value');
    expect(lines[0]).not.toContain('with-quotes');
    expect(JSON.parse(lines[0]).err.message).toBe(`server said: ${REDACTED} is wrong`);
  });

  it('children inherit the secrets', () => {
    const { lines, logger } = capture(['child-secret-123']);
    logger.child({ side: 'upstream' }).info('x', { v: 'child-secret-123' });
    expect(lines[0]).not.toContain('child-secret-123');
  });

  it('values shorter than 4 characters are not scrubbed (they would match everything)', () => {
    expect(scrubSecrets('{"a":"1"}', ['1'])).toBe('{"a":"1"}');
  });
});

describe('the CLI logger never prints --header values, the auth token or a URL password', () => {
  it('every configured secret is scrubbed', () => {
    const lines: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    const token = 'bridge-token-0123456789abcdef';
    const opts = configFromFlags(
      {
        upstream: 'https://user:url-pass-word@mcp.example.com/mcp',
        header: ['Authorization: Bearer upstream-bearer-xyz', 'X-Tenant-Secret: tenant-secret-42'],
        authToken: token,
        logLevel: 'debug',
      },
      [],
      {},
    );
    process.stderr.write = ((chunk: string) => {
      lines.push(String(chunk));
      return true;
    }) as typeof process.stderr.write;
    try {
      opts.logger.info('upstream.config', { upstream: opts.upstream, authToken: token, note: 'sent Bearer upstream-bearer-xyz', tenant: 'tenant-secret-42' });
      opts.logger.child({ link: 'http' }).error('upstream.error', { err: new Error('401 for url-pass-word / upstream-bearer-xyz') });
    } finally {
      process.stderr.write = write;
    }
    const text = lines.join('');
    expect(lines).toHaveLength(2);
    for (const secret of ['upstream-bearer-xyz', 'tenant-secret-42', token, 'url-pass-word']) expect(text).not.toContain(secret);
    expect(text).toContain(REDACTED);
  });
});

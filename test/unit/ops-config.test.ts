import { describe, expect, it } from 'vitest';
import { configFromFlags } from '../../src/daemon/config-from-flags.js';
import { BridgeError } from '../../src/errors.js';
import { allowedRequestHeaders } from '../../src/ops/cors.js';
import { KnownTools, methodLabel } from '../../src/ops/method-label.js';
import { Readiness } from '../../src/ops/readiness.js';
import { samplerFrom } from '../../src/ops/tracing-sdk.js';
import { createLogger } from '../../src/log.js';

/** Issue 13: the pure parts of operations: flags, CORS header filter, label bounds, readiness rules, log format. */

const TOKEN = 'a-valid-token-0123456789';

const usage = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    expect((err as BridgeError).code).toBe('BRIDGE_ERR_USAGE');
    return (err as Error).message;
  }
  throw new Error('expected a usage error');
};

describe('operations flags', () => {
  it('--cors-origin takes origins, repeatable', () => {
    const o = configFromFlags({ corsOrigin: ['https://app.example.com', 'http://localhost:6274'], logFormat: 'json' }, ['node', 's.js']);
    expect(o.corsOrigins).toEqual(['https://app.example.com', 'http://localhost:6274']);
  });

  it.each(['app.example.com', 'https://app.example.com/path', 'ftp://x.example', 'null'])('--cors-origin %j is refused with a hint', (origin) => {
    expect(usage(() => configFromFlags({ corsOrigin: [origin] }, ['node', 's.js']))).toMatch(/--cors-origin must be an origin/);
  });

  it('--cors-origin makes no sense with --stdio', () => {
    expect(usage(() => configFromFlags({ stdio: true, corsOrigin: ['https://app.example.com'] }, ['node', 's.js'], {}))).toMatch(/--stdio/);
  });

  it('--cors-origin * needs an auth mode', () => {
    expect(usage(() => configFromFlags({ corsOrigin: ['*'] }, ['node', 's.js']))).toMatch(/--auth-token/);
    expect(configFromFlags({ corsOrigin: ['*'], authToken: TOKEN }, ['node', 's.js'], {}).corsOrigins).toEqual(['*']);
  });

  it('metrics are on by default; --metrics-listen parses host:port, loopback when only a port is given', () => {
    expect(configFromFlags({}, ['node', 's.js'], {}).metrics).toBe(true);
    expect(configFromFlags({ metricsListen: '9464' }, ['node', 's.js'], {}).metricsListen).toEqual({ host: '127.0.0.1', port: 9464 });
    expect(usage(() => configFromFlags({ metricsListen: 'x:y' }, ['node', 's.js'], {}))).toMatch(/--metrics-listen must be host:port/);
    expect(usage(() => configFromFlags({ metrics: false, metricsListen: '9464' }, ['node', 's.js'], {}))).toMatch(/--no-metrics/);
  });

  it('--log-format is pretty or json', () => {
    expect(usage(() => configFromFlags({ logFormat: 'xml' }, ['node', 's.js'], {}))).toMatch(/--log-format must be one of json, pretty/);
  });
});

describe('allowedRequestHeaders (preflight)', () => {
  it.each([
    [undefined, ''],
    ['content-type', 'content-type'],
    ['Content-Type, Authorization, Mcp-Session-Id, MCP-Protocol-Version, Last-Event-ID', 'Content-Type, Authorization, Mcp-Session-Id, MCP-Protocol-Version, Last-Event-ID'],
    ['mcp-method,mcp-name,mcp-param-region', 'mcp-method, mcp-name, mcp-param-region'],
    ['x-custom, mcp-param-, cookie', ''],
    ['traceparent, tracestate', 'traceparent, tracestate'],
  ])('%j → %j', (requested, allowed) => expect(allowedRequestHeaders(requested)).toBe(allowed));
});

describe('bounded labels', () => {
  it('methods outside the protocol are "other"', () => {
    expect(methodLabel('tools/call')).toBe('tools/call');
    expect(methodLabel('server/discover')).toBe('server/discover');
    expect(methodLabel('made/up-1234')).toBe('other');
  });

  it('a tool is named only once the upstream listed it', () => {
    const tools = new KnownTools();
    expect(tools.label('echo')).toBe('other');
    tools.learn({ tools: [{ name: 'echo' }, { name: 42 }, null] });
    expect(tools.label('echo')).toBe('echo');
    expect(tools.label('nope')).toBe('other');
    expect(tools.label(undefined)).toBe('other');
  });
});

describe('Readiness rules', () => {
  const at = 1_000_000;
  it.each([
    ['probing', false, undefined, { ready: false, reason: 'probing' }],
    ['no crashes', true, { exits: 0, quickExits: 0 }, { ready: true }],
    ['one quick exit (restarts at once)', true, { exits: 1, quickExits: 1, lastExitAt: at - 10 }, { ready: true }],
    ['two quick exits just now', true, { exits: 2, quickExits: 2, lastExitAt: at - 10 }, { ready: false, reason: 'crash-looping' }],
    ['two quick exits long ago', true, { exits: 2, quickExits: 2, lastExitAt: at - 60_000 }, { ready: true }],
  ] as const)('%s', async (_name, probed, crashes, expected) => {
    const r = new Readiness({ draining: () => false, crashes: crashes && (() => crashes) });
    if (probed) r.markProbed();
    expect(await r.check(at)).toMatchObject(expected);
  });

  it('draining wins over everything but probing', async () => {
    const r = new Readiness({ draining: () => true });
    r.markProbed();
    expect(await r.check()).toMatchObject({ ready: false, reason: 'draining' });
  });
});

describe('log formats', () => {
  it('pretty: time, level, event, then key=value; secrets scrubbed as in JSON lines', () => {
    const lines: string[] = [];
    const log = createLogger('info', { side: 'face' }, (l) => lines.push(l), ['super-secret-value'], 'pretty');
    log.warn('http.refused', { reason: 'origin', note: 'has spaces', leaked: 'x super-secret-value y', authorization: 'Bearer abc' });
    expect(lines[0]).toMatch(/^\d\d:\d\d:\d\d\.\d{3} WARN  http\.refused side=face reason=origin note="has spaces" leaked="x \[redacted\] y" authorization=\[redacted\]\n$/);
  });

  it('json stays one object per line', () => {
    const lines: string[] = [];
    createLogger('info', {}, (l) => lines.push(l), [], 'json').info('listening', { url: 'http://127.0.0.1:1' });
    expect(JSON.parse(lines[0])).toMatchObject({ level: 'info', event: 'listening', url: 'http://127.0.0.1:1' });
  });
});

describe('samplerFrom (OTEL_TRACES_SAMPLER)', () => {
  it.each([
    [{}, 'ParentBased{root=AlwaysOnSampler'],
    [{ OTEL_TRACES_SAMPLER: 'always_off' }, 'AlwaysOffSampler'],
    [{ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' }, 'TraceIdRatioBased{0.25}'],
    [{ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.01' }, 'ParentBased{root=TraceIdRatioBased{0.01}'],
    [{ OTEL_TRACES_SAMPLER: 'nonsense' }, 'ParentBased{root=AlwaysOnSampler'],
  ])('%j', (env, described) => expect(samplerFrom(env as NodeJS.ProcessEnv).toString()).toContain(described));
});

import { describe, expect, it } from 'vitest';
import { discoverFromInitialize } from '../../bridges/modern-to-legacy/discover-from-initialize.js';
import { levelAdmits, moreVerbose, readEnvelope, upstreamParams } from '../../bridges/modern-to-legacy/modern-envelope.js';
import { shapeError, shapeResult } from '../../bridges/modern-to-legacy/result-shaping.js';
import type { UpstreamFacts } from '../../src/contracts/upstream.js';
import { RpcError } from '../../src/errors.js';

const serverInfo = { name: 'everything', version: '2.0.0' };
const SI = 'io.modelcontextprotocol/serverInfo';

describe('shapeResult (legacy result → complete modern result)', () => {
  it.each([
    ['a plain result gains resultType and serverInfo', 'tools/call', false, { content: [] }, { content: [], resultType: 'complete', _meta: { [SI]: serverInfo } }],
    [
      'a list gains ttlMs 0 and cacheScope private',
      'prompts/list',
      true,
      { prompts: [] },
      { prompts: [], resultType: 'complete', ttlMs: 0, cacheScope: 'private', _meta: { [SI]: serverInfo } },
    ],
    [
      'cache fields already present are kept',
      'resources/read',
      true,
      { contents: [], ttlMs: 5, cacheScope: 'public' },
      { contents: [], ttlMs: 5, cacheScope: 'public', resultType: 'complete', _meta: { [SI]: serverInfo } },
    ],
    [
      'upstream _meta keys are kept (and win)',
      'tools/call',
      false,
      { content: [], _meta: { k: 1, [SI]: { name: 'x', version: '1' } } },
      { content: [], resultType: 'complete', _meta: { k: 1, [SI]: { name: 'x', version: '1' } } },
    ],
    [
      'tools/list loses the 2025-11-25 execution field',
      'tools/list',
      true,
      { tools: [{ name: 'a', execution: { taskSupport: 'optional' }, inputSchema: {} }, { name: 'b' }] },
      { tools: [{ name: 'a', inputSchema: {} }, { name: 'b' }], resultType: 'complete', ttlMs: 0, cacheScope: 'private', _meta: { [SI]: serverInfo } },
    ],
  ])('%s', (_name, method, cacheable, legacy, modern) => {
    expect(shapeResult(legacy, { method, cacheable, serverInfo })).toEqual(modern);
  });
});

describe('shapeError (legacy error → modern error)', () => {
  it.each([
    ['-32002 becomes -32602 with data.uri', { code: -32002, message: 'Resource not found' }, { uri: 'x://1' }, { code: -32602, message: 'Resource not found', data: { uri: 'x://1' } }],
    ['-32002 keeps object data', { code: -32002, message: 'nf', data: { uri: 'y://2' } }, { uri: 'x://1' }, { code: -32602, message: 'nf', data: { uri: 'y://2' } }],
    [
      'a legacy version refusal becomes -32022 with the modern list',
      { code: -32602, message: 'Unsupported protocol version', data: { supported: ['2024-11-05'] } },
      {},
      { code: -32022, message: 'Unsupported protocol version (upstream: Unsupported protocol version)', data: { supported: ['2026-07-28'], requested: '2026-07-28' } },
    ],
    ['other errors pass through', { code: -32601, message: 'Method not found' }, {}, { code: -32601, message: 'Method not found' }],
  ])('%s', (_name, legacy, params, modern) => {
    expect(shapeError(legacy, { params, requestedVersion: '2026-07-28' })).toEqual(modern);
  });
});

describe('discoverFromInitialize', () => {
  const facts: UpstreamFacts = {
    epoch: 'initialize',
    transport: 'stdio',
    protocolVersion: '2025-11-25',
    capabilities: {},
    initialize: {
      protocolVersion: '2025-11-25',
      capabilities: { tools: { listChanged: true }, logging: {}, tasks: { list: {} } },
      serverInfo,
      instructions: 'read me',
    } as UpstreamFacts['initialize'],
  };
  it('synthesises the full DiscoverResult', () => {
    expect(discoverFromInitialize(facts)).toEqual({
      resultType: 'complete',
      supportedVersions: ['2026-07-28'],
      capabilities: { tools: { listChanged: true }, logging: {} },
      instructions: 'read me',
      ttlMs: 0,
      cacheScope: 'private',
      _meta: { [SI]: serverInfo },
    });
  });
  it('falls back to the facts and a placeholder identity', () => {
    const r = discoverFromInitialize({ epoch: 'http+sse', transport: 'http+sse', protocolVersion: '2024-11-05', capabilities: { prompts: {} } });
    expect(r.capabilities).toEqual({ prompts: {} });
    expect(r).not.toHaveProperty('instructions');
    expect((r._meta as Record<string, unknown>)[SI]).toEqual({ name: 'legacy-mcp-server', version: 'unknown' });
  });
});

describe('the modern envelope', () => {
  const meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': { roots: {} },
    'io.modelcontextprotocol/clientInfo': { name: 'c', version: '1' },
    'io.modelcontextprotocol/logLevel': 'info',
    progressToken: 'p1',
    traceparent: '00-abc',
  };
  const req = { jsonrpc: '2.0' as const, id: 1, method: 'tools/call', params: { name: 'echo', arguments: { message: 'hi' }, _meta: meta, inputResponses: {}, requestState: 's' } };

  it('readEnvelope reads caps, clientInfo, logLevel and progressToken', () => {
    const env = readEnvelope(req);
    expect(env).toMatchObject({ protocolVersion: '2026-07-28', clientCapabilities: { roots: {} }, clientInfo: { name: 'c', version: '1' }, logLevel: 'info', progressToken: 'p1' });
  });

  it('readEnvelope refuses an invalid logLevel with -32602', () => {
    const bad = { ...req, params: { _meta: { ...meta, 'io.modelcontextprotocol/logLevel': 'loud' } } };
    expect(() => readEnvelope(bad)).toThrow(RpcError);
    expect(() => readEnvelope(bad)).toThrow(/must be one of debug, info/);
  });

  it('upstreamParams drops the envelope keys and retry fields, keeps the rest', () => {
    expect(upstreamParams(req.params)).toEqual({ name: 'echo', arguments: { message: 'hi' }, _meta: { progressToken: 'p1', traceparent: '00-abc' } });
    expect(upstreamParams({ _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } })).toBeUndefined();
    expect(upstreamParams({ cursor: 'c', _meta: { 'io.modelcontextprotocol/clientCapabilities': {} } })).toEqual({ cursor: 'c' });
  });

  it('upstreamParams strips a modern client’s params.task (digest §5.7: no tasks on either side)', () => {
    expect(upstreamParams({ name: 'echo', arguments: {}, task: { ttl: 60_000 } })).toEqual({ name: 'echo', arguments: {} });
    expect(upstreamParams({ task: {} })).toBeUndefined();
  });

  it.each([
    ['info', 'info', true],
    ['info', 'error', true],
    ['info', 'debug', false],
    ['emergency', 'alert', false],
    ['debug', 'emergency', true],
    ['info', 'nonsense', false],
  ] as const)('threshold %s admits %s: %s', (threshold, level, expected) => {
    expect(levelAdmits(threshold, level)).toBe(expected);
  });

  it('moreVerbose picks the lower level', () => {
    expect(moreVerbose('error', 'debug')).toBe('debug');
    expect(moreVerbose(undefined, 'notice')).toBe('notice');
    expect(moreVerbose('warning', undefined)).toBe('warning');
  });
});

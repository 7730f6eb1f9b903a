import { describe, expect, it } from 'vitest';
import { ServersReadiness, type ServerReadinessView } from '../../src/ops/servers-readiness.js';

describe('ServersReadiness (/readyz of a config-file daemon)', () => {
  const cases: Array<[string, ServerReadinessView[], boolean, unknown]> = [
    ['every server ready', [{ name: 'a', state: 'ready' }, { name: 'b', state: 'ready' }], false, { ready: true }],
    ['an empty file is ready (nothing to wait for)', [], false, { ready: true }],
    [
      'names each server that is not ready, with its error',
      [{ name: 'a', state: 'ready' }, { name: 'b', state: 'waiting', error: 'ECONNREFUSED 127.0.0.1:9' }, { name: 'c', state: 'starting' }],
      false,
      { ready: false, reason: 'servers-not-ready', detail: '1 of 3 servers ready; b: waiting (ECONNREFUSED 127.0.0.1:9); c: starting' },
    ],
    ['draining wins over everything', [{ name: 'a', state: 'ready' }], true, { ready: false, reason: 'draining', detail: 'mcp-bridge is shutting down' }],
  ];
  it.each(cases)('%s', async (_name, servers, draining, expected) => {
    expect(await new ServersReadiness(() => servers, () => draining).check()).toEqual(expected);
  });
});

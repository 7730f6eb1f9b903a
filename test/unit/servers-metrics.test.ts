import { describe, expect, it } from 'vitest';
import { BridgeMetrics, type MetricSources } from '../../src/ops/bridge-metrics.js';
import { parsePrometheus, sum } from '../helpers/prometheus-text.js';

const sources = (n: number): MetricSources => ({
  inflight: () => n,
  downstreamSessions: () => ({ 'streamable-http': n }),
  pool: () => ({ sessions: n, queued: 0 }),
  children: () => n,
  childRestarts: () => n,
  parked: () => 0,
  listens: () => 0,
});

const scrape = async (m: BridgeMetrics) => parsePrometheus((await m.render()).body).filter((s) => s.name.startsWith('mcp_bridge_'));

describe('BridgeMetrics of a config-file daemon: one registry, a server label per server', () => {
  it('a server wired again (SIGHUP) records into the same series: counts go on, no label set appears twice', async () => {
    const m = new BridgeMetrics('', { servers: () => [] });
    const first = m.scope('a', 'initialize');
    first.recorder('http', 'modern').record('tools/call', 'echo', 'ok', 0.01);
    first.upstream('tools/call', 0.005);
    const again = m.scope('a', 'initialize');
    expect(again).toBe(first);
    again.recorder('http', 'modern').record('tools/call', 'echo', 'ok', 0.02);
    again.upstream('tools/call', 0.005);
    m.scope('b', 'modern').recorder('http', 'modern').record('tools/call', 'echo', 'error', 0.01);
    const samples = await scrape(m);
    const keys = samples.map((s) => `${s.name}${JSON.stringify(s.labels)}`);
    expect(new Set(keys).size).toBe(keys.length);
    expect(sum(samples, 'mcp_bridge_requests_total', { server: 'a', upstream_epoch: 'initialize', outcome: 'ok' })).toBe(2);
    expect(sum(samples, 'mcp_bridge_request_duration_seconds_count', { server: 'a' })).toBe(2);
    expect(sum(samples, 'mcp_bridge_upstream_duration_seconds_count', { server: 'a' })).toBe(2);
    expect(sum(samples, 'mcp_bridge_requests_total', { server: 'b', upstream_epoch: 'modern', outcome: 'error' })).toBe(1);
  });

  it('gauges have one row per wired server and none for a server that left; restarts count per server', async () => {
    let wired: Array<{ server: string; sources: MetricSources }> = [
      { server: 'a', sources: sources(1) },
      { server: 'b', sources: sources(2) },
    ];
    const m = new BridgeMetrics('', { servers: () => wired });
    let samples = await scrape(m);
    expect(samples.filter((s) => s.name === 'mcp_bridge_stdio_children').map((s) => [s.labels.server, s.value])).toEqual([['a', 1], ['b', 2]]);
    expect(sum(samples, 'mcp_bridge_downstream_sessions', { server: 'b', transport: 'streamable-http' })).toBe(2);
    expect(sum(samples, 'mcp_bridge_child_restarts_total', { server: 'b' })).toBe(2);
    wired = [{ server: 'a', sources: sources(1) }];
    samples = await scrape(m);
    expect(samples.filter((s) => s.name === 'mcp_bridge_stdio_children').map((s) => s.labels.server)).toEqual(['a']);
    expect(samples.some((s) => s.name === 'mcp_bridge_downstream_sessions' && s.labels.server === 'b')).toBe(false);
    // A server started again under its name counts its new exits on top of the old ones.
    wired = [{ server: 'b', sources: sources(1) }];
    samples = await scrape(m);
    expect(sum(samples, 'mcp_bridge_child_restarts_total', { server: 'b' })).toBe(3);
  });

  it('a single upstream keeps its series without a server label', async () => {
    const m = new BridgeMetrics('modern', sources(1));
    m.recorder('http', 'modern').record('tools/list', '', 'ok', 0.001);
    m.mrtrRound('downstream');
    const samples = await scrape(m);
    expect(samples.filter((s) => 'server' in s.labels)).toEqual([]);
    expect(sum(samples, 'mcp_bridge_requests_total', { upstream_epoch: 'modern', method: 'tools/list', outcome: 'ok' })).toBe(1);
    expect(sum(samples, 'mcp_bridge_mrtr_rounds_total', { side: 'downstream' })).toBe(1);
    expect(sum(samples, 'mcp_bridge_requests_in_flight')).toBe(1);
  });
});

import { Registry, type Metric } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { SeriesHistogram } from '../../src/ops/series-histogram.js';
import { parsePrometheus, sum } from '../helpers/prometheus-text.js';

describe('SeriesHistogram in a prom-client registry', () => {
  it('renders cumulative buckets with le, +Inf, _sum and _count per series', async () => {
    const registry = new Registry();
    const h = new SeriesHistogram('x_seconds', 'test', [0.1, 1]);
    registry.registerMetric(h as unknown as Metric);
    const a = h.series({ method: 'a' });
    const b = h.series({ method: 'b' });
    for (const v of [0.05, 0.1, 0.5, 3]) a.observe(v);
    b.observe(2);
    const text = await registry.metrics();
    expect(text).toContain('# TYPE x_seconds histogram');
    const s = parsePrometheus(text);
    expect([0.1, 1].map((le) => sum(s, 'x_seconds_bucket', { method: 'a', le: String(le) }))).toEqual([2, 3]);
    expect(sum(s, 'x_seconds_bucket', { method: 'a', le: '+Inf' })).toBe(4);
    expect(sum(s, 'x_seconds_count', { method: 'a' })).toBe(4);
    expect(sum(s, 'x_seconds_sum', { method: 'a' })).toBeCloseTo(3.65);
    expect(sum(s, 'x_seconds_bucket', { method: 'b', le: '1' })).toBe(0);
    expect(sum(s, 'x_seconds_bucket', { method: 'b', le: '+Inf' })).toBe(1);
    registry.resetMetrics();
    expect(sum(parsePrometheus(await registry.metrics()), 'x_seconds_count')).toBe(0);
  });
});

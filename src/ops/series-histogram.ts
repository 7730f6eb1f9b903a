/**
 * A Prometheus histogram whose series are bound once and observed with plain
 * arithmetic: prom-client's own `observe` builds a label hash and validates the
 * labels on every call, which the request path should not pay (issue 13's
 * bench). It registers in a prom-client Registry as a custom metric (the
 * registry only calls `get()`), so the exposition and format stay prom-client's.
 */
export class SeriesHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly all: HistogramSeries[] = [];

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly buckets: readonly number[],
  ) {}

  /** The series for `labels`; call once per label set and keep it. */
  series(labels: Record<string, string>): HistogramSeries {
    const s = new HistogramSeries(labels, this.buckets);
    this.all.push(s);
    return s;
  }

  /** What the registry renders: cumulative `_bucket` lines with `le`, then `_sum` and `_count`, per series. */
  async get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: Array<{ labels: Record<string, string | number>; value: number; metricName: string }> }> {
    const values: Array<{ labels: Record<string, string | number>; value: number; metricName: string }> = [];
    for (const s of this.all) {
      let cumulative = 0;
      for (let i = 0; i <= this.buckets.length; i++) {
        cumulative += s.counts[i];
        values.push({ labels: { ...s.labels, le: i < this.buckets.length ? this.buckets[i] : '+Inf' }, value: cumulative, metricName: `${this.name}_bucket` });
      }
      values.push({ labels: s.labels, value: s.sum, metricName: `${this.name}_sum` });
      values.push({ labels: s.labels, value: s.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  /** Registry.resetMetrics() calls it. */
  reset(): void {
    for (const s of this.all) s.clear();
  }
}

/** One label set of a SeriesHistogram. */
export class HistogramSeries {
  /** Per bucket (not cumulative); the last slot is +Inf. */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(
    readonly labels: Record<string, string>,
    private readonly buckets: readonly number[],
  ) {
    this.counts = new Float64Array(buckets.length + 1);
  }

  observe(value: number): void {
    const b = this.buckets;
    let i = 0;
    while (i < b.length && value > b[i]) i++;
    this.counts[i]++;
    this.sum += value;
    this.count++;
  }

  clear(): void {
    this.counts.fill(0);
    this.sum = 0;
    this.count = 0;
  }
}

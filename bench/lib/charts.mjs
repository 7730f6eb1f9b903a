// The run's pictures (issue 17): Vega-Lite specs compiled and rendered to SVG
// in Node by Vega itself (no browser, no canvas: the headless "none" renderer).
//   calls-per-s.svg    calls/s over concurrency, one panel per path: mcp-bridge, the peers, the bare relay (floor), direct
//   cpu-per-call.svg   CPU µs per call over concurrency, the same panels
//   memory-per-item.svg RSS added per item (row 4), log scale: a child per item is three orders above the rest
//   scale-rss.svg      row 7: tree RSS over the items held open
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import * as vega from 'vega';
import { compile } from 'vega-lite';

const PANELS = { 1: '1 · relay → SDK v2 server', 2: '2 · wrap stdio (2025 sessions)', 3: '3 · 2026 → legacy stdio', 5: '5 · relay → node:http floor', 6: '6 · 2026 → node:http legacy floor' };
/** One colour per kind of target across panels. */
const ROLES = {
  'mcp-bridge': 'mcp-bridge',
  'bare-relay': 'bare node:http relay (floor)',
  direct: 'direct, no hop',
  'supergateway-stateful': 'supergateway stateful',
  'supergateway-stateless': 'supergateway stateless',
  'mcp-proxy': 'mcp-proxy',
  'mcp-proxy-modern': 'mcp-proxy --modern',
};

async function svgOf(spec) {
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: 'none' });
  const svg = await view.toSVG();
  view.finalize();
  return svg;
}

function loadRows(cells) {
  return cells
    .filter((x) => x.kind === undefined && PANELS[x.row] && !x.failed && x.calls > 0)
    .map((x) => ({ panel: PANELS[x.row], role: ROLES[x.target] ?? x.target, c: x.concurrency, callsPerS: Math.round(x.callsPerS), cpuUs: Math.round(x.cpuUsPerCall) }));
}

function overConcurrency(values, field, title, subtitle) {
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: { text: title, subtitle },
    data: { values },
    facet: { column: { field: 'panel', type: 'nominal', title: null, sort: Object.values(PANELS) } },
    spec: {
      width: 170,
      height: 200,
      layer: [
        { mark: { type: 'line', point: true } },
        { mark: { type: 'text', dy: -8, fontSize: 8 }, encoding: { text: { field, type: 'quantitative', format: ',.0f' } } },
      ],
      encoding: {
        x: { field: 'c', type: 'ordinal', title: 'concurrency (c)', axis: { labelAngle: 0 } },
        y: { field, type: 'quantitative', scale: { type: 'log' }, title },
        color: { field: 'role', type: 'nominal', title: 'target', sort: Object.values(ROLES), legend: { labelLimit: 260 } },
      },
    },
    resolve: { scale: { y: 'independent' } },
  };
}

function memorySpec(cells) {
  const values = cells
    .filter((x) => x.row === 4 && !x.failed && Number.isFinite(x.rssKiBPer))
    .map((x) => ({ item: `${x.kind}: ${x.label}`, rss: Math.max(0.1, Math.round(x.rssKiBPer * 10) / 10), who: x.target === 'floor' ? 'bare node:http (floor)' : x.target.startsWith('mcp-bridge') ? 'mcp-bridge' : 'peer' }));
  if (values.length === 0) return undefined;
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: { text: 'Memory added per item (RSS of the process tree, KiB)', subtitle: 'row 4: slope over batches; log scale (a child process per item is ~70 MB)' },
    data: { values },
    width: 420,
    height: { step: 18 },
    layer: [
      // A log axis has no zero: each bar starts at 1 KiB.
      { mark: 'bar', encoding: { x2: { datum: 1 } } },
      { mark: { type: 'text', align: 'left', dx: 3, fontSize: 9 }, encoding: { text: { field: 'rss', type: 'quantitative', format: ',.1f' } } },
    ],
    encoding: {
      y: { field: 'item', type: 'nominal', title: null, sort: null, axis: { labelLimit: 360 } },
      x: { field: 'rss', type: 'quantitative', scale: { type: 'log', domainMin: 1 }, title: 'KiB per item' },
      color: { field: 'who', type: 'nominal', title: null, legend: { labelLimit: 260 } },
    },
  };
}

function scaleSpec(cells, sub) {
  const scale = cells.find((x) => x.row === 7 && x.kind === 'scale');
  if (!scale) return undefined;
  const values = scale.points.map((p) => ({ items: p.items, rssMiB: Math.round(p.rssKiB / 102.4) / 10, phase: p.phase === 'start' ? 'idle legacy sessions' : p.phase }));
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: {
      text: `One instance: RSS over ${scale.n} idle sessions, then ${scale.n} listens`,
      subtitle: [`row 7: ${scale.fits.sessions.slope.toFixed(1)} KiB/session (R² ${scale.fits.sessions.r2.toFixed(3)}), ${scale.fits.listens.slope.toFixed(1)} KiB/listen (R² ${scale.fits.listens.r2.toFixed(3)}); echo p99 at c=8 ${scale.p99Ratio.toFixed(2)}× with the load`, sub],
    },
    data: { values },
    width: 520,
    height: 260,
    mark: { type: 'line', point: true },
    encoding: {
      x: { field: 'items', type: 'quantitative', title: 'items held open (sessions, then sessions + listens)' },
      y: { field: 'rssMiB', type: 'quantitative', title: 'tree RSS (MiB)', scale: { zero: true } },
      color: { field: 'phase', type: 'nominal', title: null, legend: { orient: 'bottom', labelLimit: 260 } },
    },
  };
}

/** Renders every chart the run has data for into `dir`; resolves with the files written. */
export async function writeCharts({ meta, cells }, dir) {
  const sub = `${meta.date.slice(0, 16).replace('T', ' ')} UTC · ${meta.cores} cores · load average at start ${meta.loadavg} · ${meta.mode} run`;
  const load = loadRows(cells);
  const specs = {
    'calls-per-s.svg': load.length ? overConcurrency(load, 'callsPerS', 'calls/s', sub) : undefined,
    'cpu-per-call.svg': load.length ? overConcurrency(load, 'cpuUs', 'CPU µs per call (tree under test)', sub) : undefined,
    'memory-per-item.svg': memorySpec(cells),
    'scale-rss.svg': scaleSpec(cells, sub),
  };
  const written = [];
  for (const [name, spec] of Object.entries(specs)) {
    if (!spec) continue;
    const file = path.join(dir, name);
    writeFileSync(file, await svgOf(spec));
    written.push(file);
  }
  return written;
}

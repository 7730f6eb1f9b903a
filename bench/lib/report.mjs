// Turns a run's cells into the ratio columns, the target verdicts (issue 7,
// and issue 17's, set against the bare node:http relay of the same run) and
// the markdown tables; every ratio comes from cells of the same run.

const f = (x, d = 0) => (x === undefined || Number.isNaN(x) ? '–' : x.toFixed(d));
const find = (cells, row, target, c) => cells.find((x) => x.row === row && x.target === target && x.concurrency === c && !x.failed && x.kind === undefined);
const load = (cells, row) => cells.filter((x) => x.row === row && x.kind === undefined);
const concurrencies = (cells, row) => [...new Set(load(cells, row).map((x) => x.concurrency))];
const PEERS = ['supergateway-stateful', 'supergateway-stateless', 'mcp-proxy'];

/** Adds `ratio` text to each load cell: what it is compared against, from the same run. */
export function addRatios(cells) {
  for (const row of [1, 5]) {
    for (const cell of load(cells, row)) {
      const direct = find(cells, row, 'direct', cell.concurrency);
      if ((cell.target !== 'mcp-bridge' && cell.target !== 'bare-relay') || !direct || cell.failed) continue;
      cell.vsDirect = { p50: cell.p50Ms / direct.p50Ms, callsPerS: cell.callsPerS / direct.callsPerS };
      cell.ratio = `p50 ${f(cell.vsDirect.p50, 2)}× direct; calls/s ${f(cell.vsDirect.callsPerS * 100)}% of direct; adds ${f(cell.cpuUsPerCall)} µs CPU`;
    }
  }
  // Issue 17: the bridge against the bare node:http relay of the same row, cell by cell.
  for (const row of [1, 5, 6]) {
    for (const cell of load(cells, row)) {
      const bare = find(cells, row, 'bare-relay', cell.concurrency);
      if (cell.target !== 'mcp-bridge' || !bare || cell.failed) continue;
      cell.vsBare = { cpu: cell.cpuUsPerCall / bare.cpuUsPerCall, callsPerS: cell.callsPerS / bare.callsPerS, p50: cell.p50Ms / bare.p50Ms };
      const text = `vs bare relay: CPU ${f(cell.vsBare.cpu, 2)}×, calls/s ${f(cell.vsBare.callsPerS, 2)}×, p50 ${f(cell.vsBare.p50, 2)}×`;
      cell.ratio = cell.ratio ? `${cell.ratio}; ${text}` : text;
    }
  }
  for (const cell of load(cells, 2)) {
    if (cell.target !== 'mcp-bridge' || cell.failed) continue;
    const peers = PEERS.map((p) => find(cells, 2, p, cell.concurrency)).filter(Boolean);
    if (peers.length === 0) continue;
    const fastest = peers.reduce((a, b) => (b.callsPerS > a.callsPerS ? b : a));
    const leanest = peers.reduce((a, b) => (b.cpuUsPerCall < a.cpuUsPerCall ? b : a));
    cell.vsPeers = { callsPerS: cell.callsPerS / fastest.callsPerS, fastest: fastest.target, cpu: cell.cpuUsPerCall / leanest.cpuUsPerCall, leanest: leanest.target };
    cell.ratio = `calls/s ${f(cell.vsPeers.callsPerS, 2)}× ${fastest.target}; CPU ${f(cell.vsPeers.cpu, 2)}× ${leanest.target}`;
  }
  for (const cell of load(cells, 2)) {
    const off = find(cells, 2, 'mcp-bridge-ops-off', cell.concurrency);
    if (cell.target !== 'mcp-bridge-ops-on' || !off || cell.failed) continue;
    cell.vsOpsOff = { callsPerS: cell.callsPerS / off.callsPerS, cpu: cell.cpuUsPerCall / off.cpuUsPerCall };
    cell.ratio = `calls/s ${f(cell.vsOpsOff.callsPerS, 2)}× metrics and traces off; CPU ${f(cell.vsOpsOff.cpu, 2)}×`;
  }
  for (const cell of load(cells, 3)) {
    const r2 = find(cells, 2, 'mcp-bridge', cell.concurrency);
    if (cell.target !== 'mcp-bridge' || !r2 || cell.failed) continue;
    cell.vsRow2 = r2.callsPerS / cell.callsPerS;
    cell.ratio = `row 2 mcp-bridge is ${f(cell.vsRow2, 2)}× this`;
  }
}

const verdict = (met, text) => ({ met, text });

/** One verdict per target line of issues 7 and 17; `met` is undefined when the run lacks the cells. */
export function evaluateTargets(cells) {
  return [...issue7Targets(cells).map((t) => ({ ...t, issue: 7 })), ...issue17Targets(cells).map((t) => ({ ...t, issue: 17 }))];
}

/** Issue 7's targets that issue 17 did not re-aim: the peers, session open, the headline path, idle sessions. */
function issue7Targets(cells) {
  const out = [];
  // Row 2
  const r2 = concurrencies(cells, 2).map((c) => find(cells, 2, 'mcp-bridge', c)).filter((x) => x?.vsPeers);
  out.push(r2.length ? verdict(r2.every((x) => x.vsPeers.callsPerS > 1), `Row 2: ahead of every peer on calls/s in every cell — ${r2.map((x) => `c=${x.concurrency}: ${f(x.callsPerS)} vs ${x.vsPeers.fastest} ${f(x.callsPerS / x.vsPeers.callsPerS)}`).join('; ')}`) : verdict(undefined, 'Row 2: calls/s — not measured'));
  out.push(r2.length ? verdict(r2.every((x) => x.vsPeers.cpu <= 0.5), `Row 2: CPU per call ≤ 0.5× the best peer's — ${r2.map((x) => `c=${x.concurrency}: ${f(x.cpuUsPerCall)} µs vs ${x.vsPeers.leanest} ${f(x.cpuUsPerCall / x.vsPeers.cpu)} µs (${f(x.vsPeers.cpu, 2)}×)`).join('; ')}`) : verdict(undefined, 'Row 2: CPU — not measured'));
  const ops = concurrencies(cells, 2).map((c) => find(cells, 2, 'mcp-bridge-ops-on', c)).filter((x) => x?.vsOpsOff);
  out.push(ops.length ? verdict(ops.every((x) => x.vsOpsOff.callsPerS >= 0.9), `Row 2: metrics + traces on cost ≤ 10% calls/s (issue 13) — ${ops.map((x) => `c=${x.concurrency}: ${f(x.callsPerS)} vs ${f(x.callsPerS / x.vsOpsOff.callsPerS)} off (${f(x.vsOpsOff.callsPerS, 2)}×)`).join('; ')}`) : verdict(undefined, 'Row 2: cost of metrics and traces — not measured'));
  const open = cells.find((x) => x.row === 2 && x.target === 'mcp-bridge' && x.sessionOpen)?.sessionOpen;
  out.push(open ? verdict(open.p50Ms <= 20, `Row 2: a session opens in ≤ 20 ms — p50 ${f(open.p50Ms, 1)} ms, max ${f(open.maxMs, 1)} ms (n=${open.n})`) : verdict(undefined, 'Row 2: session open — not measured'));
  // Row 3
  const r3 = concurrencies(cells, 3).map((c) => find(cells, 3, 'mcp-bridge', c)).filter((x) => x?.vsRow2 !== undefined);
  out.push(r3.length ? verdict(r3.every((x) => x.vsRow2 <= 1.5), `Row 3: calls/s within 1.5× of row 2's mcp-bridge — ${r3.map((x) => `c=${x.concurrency}: ${f(x.callsPerS)} vs ${f(x.callsPerS * x.vsRow2)} (${f(x.vsRow2, 2)}×)`).join('; ')}`) : verdict(undefined, 'Row 3: calls/s — not measured'));
  // Row 4
  const idle = mem(cells, 'idle-session', 'mcp-bridge');
  const proxyIdle = mem(cells, 'idle-session', 'mcp-proxy');
  out.push(idle && proxyIdle ? verdict(idle.rssKiBPer <= 0.5 * proxyIdle.rssKiBPer && idle.processesPer < 0.01, `Row 4: per idle session ≤ 0.5× mcp-proxy and no process — ${f(idle.rssKiBPer, 1)} KiB vs ${f(proxyIdle.rssKiBPer, 1)} KiB RSS (${f(idle.rssKiBPer / proxyIdle.rssKiBPer, 2)}×), ${f(idle.processesPer, 3)} processes/session; live heap ${f(idle.liveHeapKiBPer, 1)} vs ${f(proxyIdle.liveHeapKiBPer, 1)} KiB`) : verdict(undefined, 'Row 4: idle sessions — not measured'));
  return out;
}

const mem = (cells, kind, target) => cells.find((x) => x.row === 4 && x.kind === kind && x.target === target && !x.failed);
const ROW_PATHS = { 5: 'modern relay', 6: 'modern-to-legacy' };

/** Issue 17: each against the bench's bare node:http relay in the same run, and the scale run. */
function issue17Targets(cells) {
  const out = [];
  for (const row of [5, 6]) {
    const name = `Row ${row} (${ROW_PATHS[row]})`;
    const xs = concurrencies(cells, row).map((c) => find(cells, row, 'mcp-bridge', c)).filter((x) => x?.vsBare);
    const list = (pick, show) => xs.map((x) => `c=${x.concurrency}: ${show(x)} (${f(pick(x), 2)}×)`).join('; ');
    if (xs.length === 0) {
      out.push(verdict(undefined, `${name}: against the bare relay — not measured`));
      continue;
    }
    const bareOf = (x) => find(cells, row, 'bare-relay', x.concurrency);
    out.push(verdict(xs.every((x) => x.vsBare.cpu <= 1.2), `${name}: CPU per call ≤ 1.2× the bare relay's — ${list((x) => x.vsBare.cpu, (x) => `${f(x.cpuUsPerCall)} vs ${f(bareOf(x).cpuUsPerCall)} µs`)}`));
    out.push(verdict(xs.every((x) => x.vsBare.callsPerS >= 0.9), `${name}: calls/s ≥ 0.9× the bare relay's — ${list((x) => x.vsBare.callsPerS, (x) => `${f(x.callsPerS)} vs ${f(bareOf(x).callsPerS)}`)}`));
    const one = xs.find((x) => x.concurrency === 1);
    out.push(one ? verdict(one.vsBare.p50 <= 1.1, `${name}: p50 at c=1 ≤ 1.1× the bare relay's — ${f(one.p50Ms, 3)} vs ${f(bareOf(one).p50Ms, 3)} ms (${f(one.vsBare.p50, 2)}×)`) : verdict(undefined, `${name}: p50 at c=1 — not measured`));
  }
  const sse = mem(cells, 'listen', 'floor');
  const idle = mem(cells, 'idle-session', 'mcp-bridge');
  const idleGet = mem(cells, 'idle-session-get', 'mcp-bridge');
  out.push(idleGet && idle && sse
    ? verdict(idleGet.rssKiBPer <= 1.2 * (sse.rssKiBPer + idle.rssKiBPer), `Row 4: an idle session with its GET stream ≤ 1.2× (bare SSE response + idle session) — ${f(idleGet.rssKiBPer, 1)} KiB vs ${f(sse.rssKiBPer, 1)} + ${f(idle.rssKiBPer, 1)} KiB RSS (${f(idleGet.rssKiBPer / (sse.rssKiBPer + idle.rssKiBPer), 2)}×); live heap ${f(idleGet.liveHeapKiBPer, 1)} KiB`)
    : verdict(undefined, 'Row 4: idle session with its GET stream — not measured (needs idle-session-get, idle-session and listen:floor)'));
  const parked = mem(cells, 'parked-call', 'mcp-bridge');
  const parkFloor = mem(cells, 'parked-call', 'floor');
  const againstFloor = parked && parkFloor ? `; the floor, a bare node:http relay holding the same open upstream exchange: ${f(parkFloor.rssKiBPer, 1)} KiB RSS, ${f(parkFloor.liveHeapKiBPer, 1)} KiB live heap (${f(parked.rssKiBPer / parkFloor.rssKiBPer, 2)}×)` : '';
  out.push(parked ? verdict(parked.rssKiBPer <= 24, `Row 4: ≤ 24 KiB RSS per parked MRTR call — ${f(parked.rssKiBPer, 1)} KiB RSS (${f(parked.pssKiBPer, 1)} KiB PSS, ${f(parked.liveHeapKiBPer, 1)} KiB live heap)${againstFloor}`) : verdict(undefined, 'Row 4: parked calls — not measured'));
  const listen = mem(cells, 'listen', 'mcp-bridge');
  out.push(listen && sse ? verdict(listen.rssKiBPer <= 1.2 * sse.rssKiBPer, `Row 4: a listen ≤ 1.2× a bare node:http SSE response — ${f(listen.rssKiBPer, 1)} vs ${f(sse.rssKiBPer, 1)} KiB RSS (${f(listen.rssKiBPer / sse.rssKiBPer, 2)}×); live heap ${f(listen.liveHeapKiBPer, 1)} vs ${f(sse.liveHeapKiBPer, 1)} KiB`) : verdict(undefined, 'Row 4: listens — not measured (needs listen and listen:floor)'));
  const scale = cells.find((x) => x.row === 7 && x.kind === 'scale');
  if (scale) {
    const errors = scale.sessions.errors + scale.listens.errors;
    // Linear: a straight fit explains the curve (R² ≥ 0.95) and the second half grows no faster than 1.5× the first.
    const linearFit = (x) => x.r2 >= 0.95 && x.secondHalf <= 1.5 * Math.max(x.firstHalf, 0.1);
    const linear = linearFit(scale.fits.sessions) && linearFit(scale.fits.listens);
    const show = (x, per) => `${f(x.slope, 1)} KiB/${per} (R² ${f(x.r2, 3)}; halves ${f(x.firstHalf, 1)} → ${f(x.secondHalf, 1)})`;
    out.push(verdict(errors === 0 && linear, `Row 7: ${scale.n} idle legacy sessions and ${scale.n} open listens on one instance, no error and RSS linear (R² ≥ 0.95 and the second half's slope ≤ 1.5× the first's, per phase) — ${errors} errors; ${show(scale.fits.sessions, 'session')}, ${show(scale.fits.listens, 'listen')}; descriptor limit ${scale.fdLimit ?? '?'}`));
    const idleCell = cells.find((x) => x.row === 7 && x.phase === 'idle');
    const loadedCell = cells.find((x) => x.row === 7 && x.phase === 'loaded');
    out.push(verdict(scale.p99Ratio <= 1.2 && loadedCell.errors === 0, `Row 7: p99 of echo calls at c=8 under that idle load ≤ 1.2× the same run without — ${f(loadedCell.p99Ms, 2)} vs ${f(idleCell.p99Ms, 2)} ms (${f(scale.p99Ratio, 2)}×), ${loadedCell.errors} errors`));
  } else {
    out.push(verdict(undefined, 'Row 7: scale — not measured'));
  }
  return out;
}

const ROW_TITLES = {
  1: 'Row 1 — modern-to-modern relay (SDK v2 server over HTTP)',
  2: 'Row 2 — wrapping server-everything stdio for Streamable HTTP (2025-06-18 sessions)',
  3: 'Row 3 — 2026-07-28 requests → bridge → legacy stdio server',
  4: 'Row 4 — memory added per item (whole process tree)',
  5: 'Row 5 — the floor: bare node:http modern echo',
  6: 'Row 6 — modern-to-legacy against the bare relay (bare node:http echo of each epoch)',
  7: 'Row 7 — scale: idle sessions and listens on one instance',
};

function loadTable(rows) {
  const lines = ['| target | c | calls/s | p50 ms | p99 ms | CPU µs/call (tree) | of which root process | upstream CPU µs/call | compared | errors |', '|---|---:|---:|---:|---:|---:|---:|---:|---|---:|'];
  for (const x of rows) {
    if (x.failed) lines.push(`| ${x.label} | ${x.concurrency} | failed: ${x.failed.replace(/\|/g, '/').replace(/\n/g, ' ').slice(0, 120)} | | | | | | | |`);
    else lines.push(`| ${x.label} | ${x.concurrency} | ${f(x.callsPerS)} | ${f(x.p50Ms, 2)} | ${f(x.p99Ms, 2)} | ${f(x.cpuUsPerCall)} | ${f(x.rootCpuUsPerCall)} | ${f(x.upstreamCpuUsPerCall)} | ${x.ratio ?? ''} | ${x.errors}${x.note ? ` (${x.note})` : ''} |`);
  }
  return lines;
}

/** The markdown page: context, one table per row, the verdicts. */
export function markdown({ meta, cells, targets }) {
  const out = [`# mcp-bridge bench (${meta.mode} run)`, '', `${meta.date} · ${meta.cpu} · ${meta.cores} cores · Node ${meta.node} · load average at start ${meta.loadavg} · ${meta.seconds.toFixed(0)} s`, ''];
  out.push(`Load: ${meta.plan.coldWarmupMs ?? meta.plan.warmupMs} ms warm-up at a target's first concurrency (a fresh process still compiling) and ${meta.plan.warmupMs} ms at the others (longer while a target still spawns or boots children), then ${meta.plan.measureMs} ms per cell in ${meta.plan.rounds} alternating rounds; undici ${meta.tools.undici}, one keep-alive connection per worker (c = workers). CPU is utime+stime of the process tree under test (children included, reaped ones through cutime/cstime) over the measured time, divided by the calls completed.`, '');
  for (const row of [1, 2, 3, 5, 6, 7]) {
    const rows = load(cells, row);
    const failed = cells.find((x) => x.row === row && x.kind === 'row-failed');
    if (failed) out.push(`## ${ROW_TITLES[row]}`, '', `The row failed: ${failed.failed}`, '');
    if (rows.length === 0) continue;
    out.push(`## ${ROW_TITLES[row]}`, '', ...loadTable(rows), '');
    if (row === 2) {
      const opens = new Map(rows.filter((x) => x.sessionOpen).map((x) => [x.label, x.sessionOpen]));
      if (opens.size) out.push('Session open (initialize + initialized, fresh connection): ' + [...opens].map(([l, o]) => `${l} p50 ${f(o.p50Ms, 1)} ms (max ${f(o.maxMs, 1)})`).join(' · '), '');
    }
    const scale = cells.find((x) => x.row === row && x.kind === 'scale');
    if (scale) {
      out.push(`${scale.n} idle legacy sessions opened in ${f(scale.sessions.seconds, 1)} s (${scale.sessions.errors} errors), then ${scale.n} listens in ${f(scale.listens.seconds, 1)} s (${scale.listens.errors} errors); tree RSS ${f(scale.points[0].rssKiB / 1024, 0)} → ${f(scale.points.at(-1).rssKiB / 1024, 0)} MiB: ${f(scale.fits.sessions.slope, 1)} KiB per session (R² ${f(scale.fits.sessions.r2, 3)}), ${f(scale.fits.listens.slope, 1)} KiB per listen (R² ${f(scale.fits.listens.r2, 3)}); descriptor limit ${scale.fdLimit ?? '?'}. Chart: \`scale-rss.svg\`.`, '');
    }
    const mrtr = cells.find((x) => x.row === row && x.kind === 'mrtr');
    if (mrtr) out.push(`MRTR round end to end (SDK v2 client, trigger-elicitation-request, handler answers at once): p50 ${f(mrtr.elicit.p50Ms, 2)} ms, p99 ${f(mrtr.elicit.p99Ms, 2)} ms (n=${mrtr.elicit.n}); the same client's plain echo: p50 ${f(mrtr.echo.p50Ms, 2)} ms, p99 ${f(mrtr.echo.p99Ms, 2)} ms.`, '');
  }
  const mem = cells.filter((x) => x.row === 4);
  if (mem.length) {
    out.push(`## ${ROW_TITLES[4]}`, '', '| what | target | n | RSS KiB/item | PSS KiB/item | live JS heap KiB/item | processes/item | tree RSS before → after (MiB) |', '|---|---|---:|---:|---:|---:|---:|---|');
    for (const m of mem) {
      if (m.failed) out.push(`| ${m.kind} | ${m.label} | | failed: ${m.failed.replace(/\|/g, '/').replace(/\n/g, ' ').slice(0, 120)} | | | | |`);
      else out.push(`| ${m.kind} | ${m.label} | ${m.n} | ${f(m.rssKiBPer, 1)} | ${f(m.pssKiBPer, 1)} | ${f(m.liveHeapKiBPer, 1)} | ${f(m.processesPer, 2)} | ${f(m.before.rssKiB / 1024, 1)} → ${f(m.after.rssKiB / 1024, 1)} |`);
    }
    out.push('', 'RSS/PSS per item is the slope of the tree\'s memory over batches of items. Live JS heap is the root process\'s heap in use after a full GC (through its inspector), before and after: what it holds per item; RSS also carries garbage not yet collected and heap V8 keeps committed.', '');
  }
  for (const issue of [17, 7]) {
    out.push(issue === 17 ? '## Targets (issue 17: against the bare node:http relay of this run, and at scale)' : '## Targets kept from issue 7', '');
    for (const t of targets.filter((x) => x.issue === issue)) out.push(`- **${t.met === undefined ? 'not measured' : t.met ? 'met' : 'missed'}** — ${t.text}`);
    out.push('');
  }
  out.push('Charts: `calls-per-s.svg`, `cpu-per-call.svg`, `memory-per-item.svg`, `scale-rss.svg` beside this file.');
  out.push('', `Rerun: \`npm run bench\` (about 5 minutes) or \`npm run bench -- --quick\` (about 80 s); \`--rows 1,5\` picks rows, \`--profile\` writes the bridge's CPU profiles next to these files.`, '');
  return out.join('\n');
}

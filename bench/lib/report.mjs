// Turns a run's cells into the ratio columns, the target verdicts (issue 7)
// and the markdown table; every ratio comes from cells of the same run.

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
/** The bare node:http relay's figure beside a verdict, when the run has it. */
const bare = (cell, show) => (cell?.vsDirect ? `; bare node:http relay ${show(cell)}` : '');

/** One verdict per target line of issue 7; `met` is undefined when the run lacks the cells. */
export function evaluateTargets(cells) {
  const out = [];
  // Row 1
  const r1 = find(cells, 1, 'mcp-bridge', 1);
  const bare1 = find(cells, 1, 'bare-relay', 1);
  out.push(r1?.vsDirect ? verdict(r1.vsDirect.p50 <= 1.15, `Row 1: p50 ≤ 1.15× direct at c=1 — ${f(r1.p50Ms, 3)} ms vs ${f(find(cells, 1, 'direct', 1).p50Ms, 3)} ms = ${f(r1.vsDirect.p50, 2)}×${bare(bare1, (b) => `${f(b.vsDirect.p50, 2)}×`)}`) : verdict(undefined, 'Row 1: p50 at c=1 — not measured'));
  const r1cpu = concurrencies(cells, 1).map((c) => find(cells, 1, 'mcp-bridge', c)).filter(Boolean);
  const bareCpu = concurrencies(cells, 1).map((c) => find(cells, 1, 'bare-relay', c)).filter(Boolean);
  out.push(r1cpu.length ? verdict(r1cpu.every((x) => x.cpuUsPerCall <= 150), `Row 1: the bridge adds ≤ 150 µs CPU per call — ${r1cpu.map((x) => `c=${x.concurrency}: ${f(x.cpuUsPerCall)} µs`).join(', ')}${bareCpu.length ? ` (bare node:http relay: ${bareCpu.map((x) => `c=${x.concurrency}: ${f(x.cpuUsPerCall)} µs`).join(', ')})` : ''}`) : verdict(undefined, 'Row 1: bridge CPU — not measured'));
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
  const mem = (kind, target) => cells.find((x) => x.row === 4 && x.kind === kind && x.target === target && !x.failed);
  const idle = mem('idle-session', 'mcp-bridge');
  const proxyIdle = mem('idle-session', 'mcp-proxy');
  out.push(idle && proxyIdle ? verdict(idle.rssKiBPer <= 0.5 * proxyIdle.rssKiBPer && idle.processesPer < 0.01, `Row 4: per idle session ≤ 0.5× mcp-proxy and no process — ${f(idle.rssKiBPer, 1)} KiB vs ${f(proxyIdle.rssKiBPer, 1)} KiB RSS (${f(idle.rssKiBPer / proxyIdle.rssKiBPer, 2)}×), ${f(idle.processesPer, 3)} processes/session; live heap ${f(idle.liveHeapKiBPer, 1)} vs ${f(proxyIdle.liveHeapKiBPer, 1)} KiB`) : verdict(undefined, 'Row 4: idle sessions — not measured'));
  const parked = mem('parked-call', 'mcp-bridge');
  out.push(parked ? verdict(parked.rssKiBPer <= 16, `Row 4: ≤ 16 KiB per parked call — ${f(parked.rssKiBPer, 1)} KiB RSS (${f(parked.pssKiBPer, 1)} KiB PSS, ${f(parked.liveHeapKiBPer, 1)} KiB live heap)`) : verdict(undefined, 'Row 4: parked calls — not measured'));
  const listen = mem('listen', 'mcp-bridge');
  out.push(listen ? verdict(listen.rssKiBPer <= 8, `Row 4: ≤ 8 KiB per listen — ${f(listen.rssKiBPer, 1)} KiB RSS (${f(listen.pssKiBPer, 1)} KiB PSS, ${f(listen.liveHeapKiBPer, 1)} KiB live heap; bare node:http ${f(mem('listen', 'floor')?.rssKiBPer, 1)} KiB RSS)`) : verdict(undefined, 'Row 4: listens — not measured'));
  // Row 5
  const r5 = find(cells, 5, 'mcp-bridge', 8);
  const bare5 = find(cells, 5, 'bare-relay', 8);
  out.push(r5?.vsDirect ? verdict(r5.vsDirect.callsPerS >= 0.4, `Row 5: through the bridge ≥ 40% of the floor's direct calls/s at c=8 — ${f(r5.callsPerS)} vs ${f(find(cells, 5, 'direct', 8).callsPerS)} (${f(r5.vsDirect.callsPerS * 100)}%)${bare(bare5, (b) => `${f(b.callsPerS)} (${f(b.vsDirect.callsPerS * 100)}%)`)}`) : verdict(undefined, 'Row 5: c=8 — not measured'));
  return out;
}

const ROW_TITLES = {
  1: 'Row 1 — modern-to-modern relay (SDK v2 server over HTTP)',
  2: 'Row 2 — wrapping server-everything stdio for Streamable HTTP (2025-06-18 sessions)',
  3: 'Row 3 — 2026-07-28 requests → bridge → legacy stdio server',
  4: 'Row 4 — memory added per item (whole process tree)',
  5: 'Row 5 — the floor: bare node:http modern echo',
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
  out.push(`Load: ${meta.plan.warmupMs} ms warm-up (longer while a target still spawns or boots children), then ${meta.plan.measureMs} ms per cell in ${meta.plan.rounds} alternating rounds; undici ${meta.tools.undici}, one keep-alive connection per worker (c = workers). CPU is utime+stime of the process tree under test (children included, reaped ones through cutime/cstime) over the measured time, divided by the calls completed.`, '');
  for (const row of [1, 2, 3, 5]) {
    const rows = load(cells, row);
    const failed = cells.find((x) => x.row === row && x.kind === 'row-failed');
    if (failed) out.push(`## ${ROW_TITLES[row]}`, '', `The row failed: ${failed.failed}`, '');
    if (rows.length === 0) continue;
    out.push(`## ${ROW_TITLES[row]}`, '', ...loadTable(rows), '');
    if (row === 2) {
      const opens = new Map(rows.filter((x) => x.sessionOpen).map((x) => [x.label, x.sessionOpen]));
      if (opens.size) out.push('Session open (initialize + initialized, fresh connection): ' + [...opens].map(([l, o]) => `${l} p50 ${f(o.p50Ms, 1)} ms (max ${f(o.maxMs, 1)})`).join(' · '), '');
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
  out.push('## Targets (issue 7)', '');
  for (const t of targets) out.push(`- **${t.met === undefined ? 'not measured' : t.met ? 'met' : 'missed'}** — ${t.text}`);
  out.push('', `Rerun: \`npm run bench\` (about 5 minutes) or \`npm run bench -- --quick\` (about 80 s); \`--rows 1,5\` picks rows, \`--profile\` writes the bridge's CPU profiles next to these files.`, '');
  return out.join('\n');
}

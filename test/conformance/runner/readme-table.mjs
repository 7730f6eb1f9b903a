// Prints the README's conformance table from results.json: one row per scenario, one column per run
// through the bridge (direct fixture runs are left out: they only tell fixture bugs from bridge bugs).
// Usage: node test/conformance/runner/readme-table.mjs [results.json]
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const file = process.argv[2] ?? path.join(here, '..', 'results.json');
const { runs } = JSON.parse(readFileSync(file, 'utf8'));
const bridged = runs.filter((r) => !r.id.endsWith('-direct'));
const MARK = { pass: 'pass', expected: 'expected fail', fail: '**FAIL**', 'not-run': '—' };

const out = [];
out.push('| run | direction | transport | spec | pass | expected fail | unexpected | not run (out of scope) |');
out.push('|---|---|---|---|---|---|---|---|');
for (const r of bridged) {
  const n = (v) => r.rows.filter((x) => x.verdict === v).length;
  out.push(`| ${r.id} | ${r.direction} | ${r.transport} | ${r.spec} | ${n('pass')} | ${n('expected')} | ${n('fail')} | ${n('not-run')} |`);
}
out.push('');
out.push(`| scenario | ${bridged.map((r) => `${r.id} (${r.transport})`).join(' | ')} |`);
out.push(`|---|${bridged.map(() => '---').join('|')}|`);
const scenarios = [...new Set(bridged.flatMap((r) => r.rows.map((x) => x.scenario)))].sort();
for (const s of scenarios) {
  const cells = bridged.map((r) => {
    const row = r.rows.find((x) => x.scenario === s);
    return row ? (MARK[row.verdict] ?? row.verdict) : '';
  });
  if (cells.every((c) => c === '—' || c === '')) continue;
  out.push(`| ${s} | ${cells.join(' | ')} |`);
}
process.stdout.write(out.join('\n') + '\n');

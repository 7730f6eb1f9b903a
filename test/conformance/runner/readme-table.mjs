// Prints the README's conformance table from results.json: one row per scenario, one column per run
// through the bridge (direct fixture runs are left out: they only tell fixture bugs from bridge bugs).
// Cells use the same verdict names as results.md.
// Usage: node test/conformance/runner/readme-table.mjs [results.json]
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { counts, verdictText } from './report.mjs';

/** The README tables for `runs` (results.json's `runs`), as markdown lines. */
export function readmeTable(runs) {
  const bridged = runs.filter((r) => !r.id.endsWith('-direct'));
  const out = [];
  out.push('| run | direction | transport | spec | pass | warning | not scored | expected fail | not run | unexplained |');
  out.push('|---|---|---|---|---|---|---|---|---|---|');
  for (const r of bridged) {
    const c = counts(r.rows);
    const bad = c.unexplained + (r.errors?.length ?? 0);
    out.push(`| ${r.id} | ${r.direction} | ${r.transport} | ${r.spec} | ${c.pass} | ${c.warning} | ${c['not-scored']} | ${c['expected-fail']} | ${c['not-run']} | ${bad > 0 ? `**${bad}**` : 0} |`);
  }
  out.push('');
  out.push(`| scenario | ${bridged.map((r) => `${r.id} (${r.transport})`).join(' | ')} |`);
  out.push(`|---|${bridged.map(() => '---').join('|')}|`);
  const scenarios = [...new Set(bridged.flatMap((r) => r.rows.map((x) => x.scenario)))].sort();
  for (const s of scenarios) {
    const rows = bridged.map((r) => r.rows.find((x) => x.scenario === s));
    // A scenario no bridged run ran (all skipped or absent) is covered by the "not run" lines of results.md.
    if (rows.every((row) => !row || row.verdict === 'not-run')) continue;
    out.push(`| ${s} | ${rows.map((row) => (row ? verdictText(row) : '')).join(' | ')} |`);
  }
  return out;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const file = process.argv[2] ?? path.join(here, '..', 'results.json');
  process.stdout.write(readmeTable(JSON.parse(readFileSync(file, 'utf8')).runs).join('\n') + '\n');
}

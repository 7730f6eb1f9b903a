// Writes the summary of a conformance run: `results.md` (the tables the
// README points to) and `results.json` (the same data for tools).
import { writeFileSync } from 'node:fs';

const RESULT_TEXT = { pass: 'pass', expected: 'fail (baseline)', unexpected: '**FAIL**', 'not-run': 'not run' };

const cell = (s) => String(s ?? '').replace(/\|/g, '\\|').replace(/\s+/g, ' ').trim();

function note(row) {
  if (row.verdict === 'not-run' || row.verdict === 'expected') return row.reason ?? '';
  if (row.verdict === 'pass') {
    const stale = row.stale.length > 0 ? [`baseline entry now passes: ${row.stale.join(', ')}`] : [];
    const warnings = (row.warnings ?? []).map((w) => `warning ${w.id}: ${w.message}`);
    return [...stale, ...warnings].join('; ').slice(0, 400);
  }
  const checks = row.failedChecks.map((c) => `${c.id}: ${c.message}`).slice(0, 3);
  return [row.clientError, ...checks].filter(Boolean).join('; ').slice(0, 400);
}

export function counts(rows) {
  const c = { pass: 0, expected: 0, unexpected: 0, 'not-run': 0 };
  for (const r of rows) c[r.verdict] += 1;
  return c;
}

/** `runs`: [{ id, title, direction, transport, spec, rows: [...] , error? }] */
export function writeReport({ mdPath, jsonPath, suiteVersion, runs, partial, seconds }) {
  const stale = runs.flatMap((r) => r.rows.flatMap((row) => row.stale.map((k) => `${r.id}: ${k}`)));
  const md = [
    '# Conformance results',
    '',
    `Official suite \`@modelcontextprotocol/conformance@${suiteVersion}\`, written by \`npm run conformance\`${partial ? ' (a partial run: only the runs named on the command line)' : ''} in ${seconds} s.`,
    'Each run starts the fixture and the bridge on 127.0.0.1, runs the suite, and stops everything. A failure listed in',
    '`test/conformance/baseline/<run>.txt` is expected; any other failure makes the command exit non-zero.',
    '',
    '| run | direction | transport | spec | pass | fail (baseline) | FAIL | not run |',
    '|---|---|---|---|---|---|---|---|',
    ...runs.map((r) => {
      const c = counts(r.rows);
      return `| [${r.id}](#${r.id}) | ${cell(r.direction)} | ${r.transport} | ${r.spec} | ${c.pass} | ${c.expected} | ${c.unexpected + (r.error ? 1 : 0)} | ${c['not-run']} |`;
    }),
    '',
  ];
  if (stale.length > 0) md.push('Baseline entries that now pass (remove them):', '', ...stale.map((s) => `- ${s}`), '');
  for (const r of runs) {
    md.push(`## ${r.id}`, '', r.title, '');
    if (r.error) md.push(`**The run could not complete:** ${cell(r.error)}`, '');
    md.push('| scenario | direction | transport | result | scored | notes |', '|---|---|---|---|---|---|');
    for (const row of r.rows.filter((x) => x.verdict !== 'not-run')) {
      md.push(`| ${row.scenario} | ${cell(r.direction)} | ${r.transport} | ${RESULT_TEXT[row.verdict]} | ${cell(row.scored)} | ${cell(note(row))} |`);
    }
    md.push('');
    // Scenarios left out share a handful of reasons: one line per reason keeps the table readable.
    const notRun = new Map();
    for (const row of r.rows.filter((x) => x.verdict === 'not-run')) notRun.set(row.reason, [...(notRun.get(row.reason) ?? []), row.scenario]);
    for (const [reason, names] of notRun) md.push(`Not run (${names.length}), ${reason}: ${names.join(', ')}.`, '');
  }
  writeFileSync(mdPath, md.join('\n'));
  writeFileSync(jsonPath, JSON.stringify({ suite: `@modelcontextprotocol/conformance@${suiteVersion}`, partial, seconds, runs: runs.map((r) => ({ ...r, counts: counts(r.rows) })) }, null, 2) + '\n');
}

// Writes the summary of a conformance run: `results.md` (the tables the
// README points to) and `results.json` (the same data for tools). Both show
// each verdict under its own name; a row the baseline does not explain is
// marked so it cannot pass for an explained one.
import { writeFileSync } from 'node:fs';

/** How each verdict reads in a table. */
export const VERDICT_TEXT = {
  pass: 'pass',
  warning: 'warning',
  'not-scored': 'not scored',
  'expected-fail': 'expected fail',
  fail: '**FAIL**',
  'not-run': 'not run',
  missing: '**MISSING**',
};

const cell = (s) => String(s ?? '').replace(/\|/g, '\\|').replace(/\s+/g, ' ').trim();

/** The table text for one row: its verdict, flagged when the baseline does not explain it or holds a stale line for it. */
export function verdictText(row) {
  const text = VERDICT_TEXT[row.verdict] ?? row.verdict;
  if (row.ok || text.startsWith('**')) return text;
  if ((row.unexplained ?? []).length === 0) return `${text} (**stale baseline line**)`;
  return `**${text}** (unexplained)`;
}

/** What the baseline does not explain about a row, for logs and notes. */
export function unexplainedText(row) {
  if (row.verdict === 'missing') return 'neither run nor listed as skip in the baseline';
  const parts = (row.problems ?? []).filter((p) => p.reason === undefined).map((p) => `${p.key}: ${p.message}`);
  for (const k of row.stale ?? []) parts.push(`baseline line "${k}" excuses nothing here: remove it`);
  return parts.join('; ');
}

function note(row) {
  if (row.verdict === 'not-run') return row.reason;
  const explained = [...new Map((row.problems ?? []).filter((p) => p.reason !== undefined).map((p) => [p.reason, p.key]))].map(([reason, key]) => `${key}: ${reason}`);
  return [unexplainedText(row), ...explained].filter(Boolean).join('; ').slice(0, 500);
}

/** Rows per verdict, plus `unexplained`: rows the baseline does not fully explain. */
export function counts(rows) {
  const c = Object.fromEntries(Object.keys(VERDICT_TEXT).map((v) => [v, 0]));
  c.unexplained = 0;
  for (const r of rows) {
    c[r.verdict] += 1;
    if (!r.ok) c.unexplained += 1;
  }
  return c;
}

export function summary(c) {
  return `${c.pass} pass, ${c.warning} warning, ${c['not-scored']} not scored, ${c['expected-fail']} expected fail, ${c.fail} FAIL, ${c.missing} missing, ${c['not-run']} not run; ${c.unexplained} unexplained`;
}

/** `runs`: [{ id, title, direction, transport, spec, rows: [...], errors: [...] }] */
export function writeReport({ mdPath, jsonPath, suiteVersion, runs, partial, seconds }) {
  const md = [
    '# Conformance results',
    '',
    `Official suite \`@modelcontextprotocol/conformance@${suiteVersion}\`, written by \`npm run conformance\`${partial ? ' (a partial run: only the runs named on the command line)' : ''} in ${seconds} s.`,
    'A scenario passes only as the suite would pass it: no FAILURE or WARNING check, no timeout, a client that exited 0',
    '(unless the scenario allows client errors), and at least one check that scores (SUCCESS, FAILURE or WARNING).',
    '*warning*: a SHOULD was missed; *not scored*: only INFO checks ran; *expected fail*: a failure',
    '`test/conformance/baseline/<run>.txt` explains; *not run*: listed as skip there. Every non-pass needs a baseline',
    'line naming it, and every baseline line must still be needed, or the command exits non-zero. The requirement',
    'column is what the suite\'s `requirements/<rev>.yaml` says of the scenario.',
    '',
    '| run | direction | transport | spec | pass | warning | not scored | expected fail | not run | unexplained |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...runs.map((r) => {
      const c = counts(r.rows);
      const bad = c.unexplained + r.errors.length;
      return `| [${r.id}](#${r.id}) | ${cell(r.direction)} | ${r.transport} | ${r.spec} | ${c.pass} | ${c.warning} | ${c['not-scored']} | ${c['expected-fail']} | ${c['not-run']} | ${bad > 0 ? `**${bad}**` : 0} |`;
    }),
    '',
  ];
  for (const r of runs) {
    md.push(`## ${r.id}`, '', r.title, '');
    for (const e of r.errors) md.push(`**Run error:** ${cell(e)}`, '');
    md.push('| scenario | requirement | result | notes |', '|---|---|---|---|');
    for (const row of r.rows.filter((x) => x.verdict !== 'not-run')) md.push(`| ${row.scenario} | ${cell(row.requirement)} | ${verdictText(row)} | ${cell(note(row))} |`);
    md.push('');
    // Skipped scenarios share a handful of reasons: one line per reason keeps the table readable.
    const notRun = new Map();
    for (const row of r.rows.filter((x) => x.verdict === 'not-run')) notRun.set(row.reason, [...(notRun.get(row.reason) ?? []), row.scenario]);
    for (const [reason, names] of notRun) md.push(`Not run (${names.length}), ${cell(reason)}: ${names.join(', ')}.`, '');
  }
  writeFileSync(mdPath, md.join('\n'));
  const trim = (row) => ({ ...row, ...(row.problems ? { problems: row.problems.map((p) => ({ ...p, message: String(p.message).slice(0, 500) })) } : {}) });
  const json = { suite: `@modelcontextprotocol/conformance@${suiteVersion}`, partial, seconds, runs: runs.map((r) => ({ ...r, rows: r.rows.map(trim), counts: counts(r.rows) })) };
  writeFileSync(jsonPath, JSON.stringify(json, null, 2) + '\n');
}

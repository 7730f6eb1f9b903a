// Reads a requirement set (`requirements/<revision>.yaml` of the suite): which
// scenarios a revision scores, per leg, and which it runs without scoring and
// why. The files are flat lists, so a line reader is enough; anything it does
// not recognise under a known section is an error rather than a silent gap.
import { readFileSync } from 'node:fs';

export const LEGS = ['server', 'client'];

/** `{ server: Set, client: Set, notScored: Map<name, { leg, reason }> }` from the file's text. */
export function parseRequirements(text, name = 'requirements') {
  const out = { server: new Set(), client: new Set(), notScored: new Map() };
  let section;
  let entry;
  text.split('\n').forEach((raw, i) => {
    const line = raw.replace(/(^|\s+)#.*$/, '');
    if (!line.trim()) return;
    const top = /^(\w+):\s*$/.exec(line);
    if (top) {
      section = top[1];
      return;
    }
    if (LEGS.includes(section)) {
      const m = /^\s+-\s+(\S+)\s*$/.exec(line);
      if (!m) throw new Error(`${name}:${i + 1}: expected "- <scenario>" under ${section}:`);
      out[section].add(m[1]);
    } else if (section === 'not_scored') {
      const start = /^\s+-\s+scenario:\s*(\S+)/.exec(line);
      if (start) {
        entry = { leg: undefined, reason: undefined };
        out.notScored.set(start[1], entry);
        return;
      }
      const field = /^\s+(leg|reason):\s*(\S+)/.exec(line);
      if (field && entry) entry[field[1]] = field[2];
    }
  });
  for (const [scenario, v] of out.notScored) {
    if (!LEGS.includes(v.leg)) throw new Error(`${name}: not_scored ${scenario} has no leg`);
  }
  return out;
}

export function readRequirements(file) {
  return parseRequirements(readFileSync(file, 'utf8'), file);
}

/**
 * Every scenario of one leg the set names, scored first:
 * `[{ scenario, requirement }]` where requirement is `required` or `not_scored: <reason>` (the set's own words).
 */
export function scenariosOf(req, leg) {
  return [
    ...[...req[leg]].map((scenario) => ({ scenario, requirement: 'required' })),
    ...[...req.notScored].filter(([, v]) => v.leg === leg).map(([scenario, v]) => ({ scenario, requirement: `not_scored: ${v.reason}` })),
  ];
}

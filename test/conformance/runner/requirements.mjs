// Reads a requirement set (`requirements/<revision>.yaml` of the suite): which
// scenarios a revision scores, per leg, and which it runs without scoring and
// why. The files are flat lists, so a line reader is enough.
import { readFileSync } from 'node:fs';

/** `{ server: Set, client: Set, notScored: Map<name, { leg, reason }> }` */
export function readRequirements(file) {
  const out = { server: new Set(), client: new Set(), notScored: new Map() };
  let section;
  let entry;
  for (const raw of readFileSync(file, 'utf8').split('\n')) {
    const line = raw.replace(/\s+#.*$/, '');
    const top = /^(\w+):\s*$/.exec(line);
    if (top) {
      section = top[1];
      continue;
    }
    if (section === 'server' || section === 'client') {
      const m = /^\s+-\s+(\S+)\s*$/.exec(line);
      if (m) out[section].add(m[1]);
    } else if (section === 'not_scored') {
      const start = /^\s+-\s+scenario:\s*(\S+)/.exec(line);
      if (start) {
        entry = { leg: undefined, reason: undefined };
        out.notScored.set(start[1], entry);
        continue;
      }
      const field = /^\s+(leg|reason):\s*(\S+)/.exec(line);
      if (field && entry) entry[field[1]] = field[2];
    }
  }
  return out;
}

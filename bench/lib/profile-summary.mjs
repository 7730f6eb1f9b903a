// Reads a V8 .cpuprofile (node --cpu-prof) and lists where the time went:
// self time per function, and total (inclusive) time per file of this
// project. `node bench/lib/profile-summary.mjs <file.cpuprofile> [top]`
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT_DIR } from './paths.mjs';

function shortUrl(url) {
  if (!url) return '(native)';
  const file = url.replace(/^file:\/\//, '');
  const nm = file.lastIndexOf('node_modules/');
  if (nm >= 0) return file.slice(nm + 'node_modules/'.length);
  return file.startsWith(ROOT_DIR) ? path.relative(ROOT_DIR, file) : file;
}

/** `{ totalMs, self: [{ name, where, ms, pct }], files: [{ file, ms, pct }] }` for one profile. */
export function summarizeProfile(file, top = 25) {
  const prof = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const selfUs = new Map();
  // timeDeltas[i] is the time before sample i; attribute it to that sample's node.
  for (let i = 0; i < prof.samples.length; i++) selfUs.set(prof.samples[i], (selfUs.get(prof.samples[i]) ?? 0) + (prof.timeDeltas[i] ?? 0));
  const total = [...selfUs.values()].reduce((a, b) => a + b, 0);
  const idle = [...selfUs].filter(([id]) => byId.get(id).callFrame.functionName === '(idle)').reduce((a, [, us]) => a + us, 0);
  const busy = total - idle;
  const fnSelf = new Map();
  const fileIncl = new Map();
  for (const [id, us] of selfUs) {
    const n = byId.get(id);
    const cf = n.callFrame;
    if (cf.functionName === '(idle)') continue;
    const key = `${cf.functionName || '(anonymous)'}\t${shortUrl(cf.url)}:${cf.lineNumber + 1}`;
    fnSelf.set(key, (fnSelf.get(key) ?? 0) + us);
    // Inclusive per project file: each sample counts once per file on its stack.
    const files = new Set();
    for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
      const u = byId.get(cur).callFrame.url;
      if (u && u.startsWith(pathToFileURL(ROOT_DIR).href) && !u.includes('node_modules')) files.add(shortUrl(u));
    }
    for (const fl of files) fileIncl.set(fl, (fileIncl.get(fl) ?? 0) + us);
  }
  const pct = (us) => (busy > 0 ? (100 * us) / busy : 0);
  const self = [...fnSelf].sort((a, b) => b[1] - a[1]).slice(0, top).map(([k, us]) => {
    const [name, where] = k.split('\t');
    return { name, where, ms: us / 1000, pct: pct(us) };
  });
  const files = [...fileIncl].sort((a, b) => b[1] - a[1]).slice(0, top).map(([fl, us]) => ({ file: fl, ms: us / 1000, pct: pct(us) }));
  return { busyMs: busy / 1000, self, files };
}

/** Plain-text rendering, for the console and the results folder. */
export function profileText(file, top = 25) {
  const s = summarizeProfile(file, top);
  const lines = [`${path.basename(file)}: ${s.busyMs.toFixed(0)} ms busy`, '', 'self time (top functions):'];
  for (const x of s.self) lines.push(`  ${x.pct.toFixed(1).padStart(5)}%  ${x.ms.toFixed(0).padStart(6)} ms  ${x.name}  ${x.where}`);
  lines.push('', 'inclusive time per project file:');
  for (const x of s.files) lines.push(`  ${x.pct.toFixed(1).padStart(5)}%  ${x.ms.toFixed(0).padStart(6)} ms  ${x.file}`);
  return lines.join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [file, top] = process.argv.slice(2);
  if (!file) {
    process.stderr.write('usage: node bench/lib/profile-summary.mjs <file.cpuprofile> [top]\n');
    process.exit(2);
  }
  process.stdout.write(profileText(file, Number(top) || 25) + '\n');
}

// CPU time and memory of a process tree, read from Linux /proc.
// CPU counts reaped descendants through cutime/cstime, so a child that ran and
// exited between two readings (supergateway's child per request) is not lost.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** Kernel clock ticks per second (utime/stime unit). */
export const CLK_TCK = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** Fields of /proc/<pid>/stat after the command name, or undefined once the process is gone. */
function statFields(pid, file = `/proc/${pid}/stat`) {
  try {
    const stat = readFileSync(file, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** Every live pid of the tree rooted at `root` (root first), from one scan of /proc. */
export function treePids(root) {
  const children = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const f = statFields(entry);
    if (!f || f[0] === 'Z') continue;
    const ppid = Number(f[1]);
    if (!children.has(ppid)) children.set(ppid, []);
    children.get(ppid).push(Number(entry));
  }
  const out = [];
  const queue = [root];
  // Bounded: a pid is visited once, and /proc holds finitely many.
  const seen = new Set();
  while (queue.length > 0) {
    const pid = queue.shift();
    if (seen.has(pid)) continue;
    seen.add(pid);
    if (!statFields(pid)) continue;
    out.push(pid);
    for (const c of children.get(pid) ?? []) queue.push(c);
  }
  return out;
}

/**
 * CPU seconds the tree has used so far: utime+stime of each live member plus
 * cutime+cstime (its reaped children). Every process is counted exactly once.
 */
export function treeCpuSeconds(root) {
  let ticks = 0;
  for (const pid of treePids(root)) {
    const f = statFields(pid);
    // After ')': state(0) ppid(1) … utime(11) stime(12) cutime(13) cstime(14).
    if (f) ticks += Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
  }
  return ticks / CLK_TCK;
}

/** CPU seconds of one process alone (utime+stime, no children). */
export function ownCpuSeconds(pid) {
  const f = statFields(pid);
  return f ? (Number(f[11]) + Number(f[12])) / CLK_TCK : 0;
}

/** CPU seconds of a process's main thread alone (its JS event loop; not V8's GC, compiler or worker threads). */
export function mainThreadCpuSeconds(pid) {
  const f = statFields(pid, `/proc/${pid}/task/${pid}/stat`);
  return f ? (Number(f[11]) + Number(f[12])) / CLK_TCK : 0;
}

/** Read and write system calls a process made so far (`/proc/<pid>/io`), or zeros once it is gone. */
export function syscallCounts(pid) {
  try {
    const text = readFileSync(`/proc/${pid}/io`, 'utf8');
    const field = (name) => Number(new RegExp(`^${name}: (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
    return { reads: field('syscr'), writes: field('syscw') };
  } catch {
    return { reads: 0, writes: 0 };
  }
}

/** RSS and PSS (KiB) summed over the tree, with its process count. */
export function treeMemory(root) {
  let rssKiB = 0;
  let pssKiB = 0;
  const pids = treePids(root);
  for (const pid of pids) {
    try {
      const text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
      rssKiB += Number(/^Rss:\s+(\d+)/m.exec(text)?.[1] ?? 0);
      pssKiB += Number(/^Pss:\s+(\d+)/m.exec(text)?.[1] ?? 0);
    } catch {
      // the process ended while we looked
    }
  }
  return { rssKiB, pssKiB, processes: pids.length };
}

/** Sums CPU over several roots (a bridge and its upstream, for instance). */
export function cpuOf(roots) {
  let s = 0;
  for (const r of roots) s += treeCpuSeconds(r);
  return s;
}

// Starting and stopping the processes under test. Every output pipe is drained
// (a full stderr pipe would stall a chatty server mid-run) into a short tail
// kept for error messages.
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { CLI_ENTRY, LOOPBACK_PRELOAD } from './paths.mjs';
import { treePids } from './proc-tree.mjs';

const TAIL_CHARS = 8_000;
/** Every process this run started and has not stopped yet (for an interrupted run). */
const live = new Set();
const LOOPBACK_READY = /LOOPBACK_LISTENING ([\d.]+):(\d+)/;
const BRIDGE_READY = /serving \S+ upstream at (http:\/\/[\d.]+:\d+)\/mcp/;

/**
 * Spawns a process and resolves once `ready` matches its stderr (or stdout),
 * with `{ name, pid, url, tail(), stop() }`; `url` is `http://host:port`.
 */
export function startProcess({ name, command, args, env = {}, ready, timeoutMs = 30_000 }) {
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child);
  child.once('exit', () => live.delete(child));
  let tail = '';
  let seen = '';
  const keep = (chunk) => {
    tail = (tail + chunk).slice(-TAIL_CHARS);
  };
  return new Promise((resolve, reject) => {
    let done = false;
    const timer = setTimeout(() => finish(new Error(`${name} did not start within ${timeoutMs} ms\n${tail}`)), timeoutMs);
    const finish = (err, url) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      seen = '';
      if (err) {
        killTree(child.pid, 'SIGKILL');
        reject(err);
        return;
      }
      resolve({ name, pid: child.pid, child, url, tail: () => tail, stop: (graceMs) => stopTree(child, graceMs) });
    };
    const watch = (chunk) => {
      keep(chunk);
      if (done) return;
      seen = (seen + chunk).slice(-TAIL_CHARS);
      const m = ready.exec(seen);
      if (m) finish(undefined, m[1].startsWith('http') ? m[1] : `http://${m[1]}:${m[2]}`);
    };
    child.stdout.setEncoding('utf8').on('data', watch);
    child.stderr.setEncoding('utf8').on('data', watch);
    child.once('error', (err) => finish(err));
    child.once('exit', (code, signal) => finish(new Error(`${name} exited early (code ${code}, signal ${signal})\n${tail}`)));
  });
}

/** A node script under the loopback preload, which forces 127.0.0.1 and reports the port; `nodeArgs` go before the entry. */
export function startLoopbackNode(name, entry, args = [], env = {}, nodeArgs = []) {
  return startProcess({ name, command: process.execPath, args: [...nodeArgs, '--require', LOOPBACK_PRELOAD, entry, ...args], env, ready: LOOPBACK_READY });
}

/** node flags: a CPU profile into `cpuProfDir`, and/or an inspector on 127.0.0.1 (row 4 reads the live heap through it). */
export function nodeFlags({ cpuProfDir, inspect } = {}) {
  return [...(cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', cpuProfDir] : []), ...(inspect ? ['--inspect=127.0.0.1:0'] : [])];
}

/**
 * The built mcp-bridge CLI on 127.0.0.1:0 in front of `upstream` (a URL or a
 * command array). `cpuProfDir` runs it under `node --cpu-prof`; `inspect` opens an inspector.
 */
export function startMcpBridge(upstream, { cpuProfDir, inspect, extraArgs = [], env = {} } = {}) {
  const node = nodeFlags({ cpuProfDir, inspect });
  const target = typeof upstream === 'string' ? ['--upstream', upstream] : ['--', ...upstream];
  // warn: the peers run quiet too (supergateway --logLevel none), so no one pays for logs.
  const args = [...node, CLI_ENTRY, '--listen', '127.0.0.1:0', '--log-level', 'warn', ...extraArgs, ...target];
  return startProcess({ name: 'mcp-bridge', command: process.execPath, args, env, ready: BRIDGE_READY });
}

/** Start time of a process (ticks since boot), or undefined once it is gone. */
function startTime(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

let helpText;

/** `[flag, value]` pairs whose flag the built CLI knows (older builds lack the newer limits), flattened. */
export function knownBridgeFlags(pairs) {
  helpText ??= execFileSync(process.execPath, [CLI_ENTRY, '--help'], { encoding: 'utf8', timeout: 20_000 });
  return pairs.filter(([flag]) => helpText.includes(flag)).flat();
}

function killTree(root, signal) {
  let pids = [];
  try {
    pids = treePids(root);
  } catch {
    // /proc unreadable: the root alone
    pids = [root];
  }
  for (const pid of pids.reverse()) {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
}

/** Stops whatever is still running (an interrupted or failed run). */
export async function stopAll() {
  await Promise.all([...live].map((child) => stopTree(child, 2_000)));
}

/** SIGTERM to the root (it may exit cleanly and write a profile), SIGKILL to what is left of its tree after the grace. */
export function stopTree(child, graceMs = 5_000) {
  // A pid that already exited may have been reused: nothing of it is ours to signal.
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const pids = treePids(child.pid).map((pid) => ({ pid, started: startTime(pid) }));
  return new Promise((resolve) => {
    const sweep = () => {
      for (const { pid, started } of pids.slice(1)) {
        // Only the very process seen at stop time (same start time), never a reused pid.
        if (started === undefined || startTime(pid) !== started) continue;
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
      resolve();
    };
    const timer = setTimeout(() => {
      try {
        process.kill(child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }, graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      // Children get a moment to follow their parent out before the sweep.
      setTimeout(sweep, 300);
    });
    child.kill('SIGTERM');
  });
}

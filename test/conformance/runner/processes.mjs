// Child processes of a conformance run: the fixtures, the bridge and the
// suite's CLI. Every child is tracked so a run (or an interrupted one) can
// stop them all; nothing outlives the runner.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const BRIDGE_BIN = path.join(ROOT, 'dist', 'bin', 'mcp-bridge.js');
export const FIXTURES = {
  legacy: path.join(ROOT, 'test', 'conformance', 'legacy-fixture', 'server.mjs'),
  modern: path.join(ROOT, 'test', 'conformance', 'modern-fixture', 'server.mjs'),
};

const live = new Set();

/** Spawns a child whose stderr (and stdout with `stdout: 'pipe'`) is kept, the last 1 MiB, for diagnostics. */
export function start(command, args, { env = {}, stdout = 'ignore' } = {}) {
  const child = spawn(command, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', stdout, 'pipe'] });
  const proc = { child, stderr: '', stdout: '', exited: new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal }))) };
  for (const name of stdout === 'pipe' ? ['stderr', 'stdout'] : ['stderr']) {
    child[name].setEncoding('utf8');
    child[name].on('data', (chunk) => {
      proc[name] = (proc[name] + chunk).slice(-1_048_576);
    });
  }
  live.add(proc);
  void proc.exited.then(() => live.delete(proc));
  return proc;
}

/** Resolves with the first match of `pattern` on the child's stderr, or rejects on exit or timeout. */
export function waitForStderr(proc, pattern, timeoutMs = 20_000) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => finish(new Error(`no ${pattern} on stderr within ${timeoutMs} ms:\n${proc.stderr}`)), timeoutMs);
    const onData = () => {
      const m = pattern.exec(proc.stderr);
      if (m) finish(null, m);
    };
    const finish = (err, m) => {
      clearTimeout(timer);
      proc.child.stderr.off('data', onData);
      if (err) reject(err);
      else resolve(m);
    };
    proc.child.stderr.on('data', onData);
    void proc.exited.then(({ code, signal }) => finish(new Error(`exited (${code ?? signal}) before ${pattern}:\n${proc.stderr}`)));
    onData();
  });
}

/** SIGTERM, then SIGKILL after `graceMs`. */
export async function stop(proc, graceMs = 2_000) {
  if (!proc || proc.child.exitCode !== null || proc.child.signalCode !== null) return;
  const timer = setTimeout(() => proc.child.kill('SIGKILL'), graceMs);
  proc.child.kill('SIGTERM');
  await proc.exited;
  clearTimeout(timer);
}

export async function stopAll() {
  await Promise.all([...live].map((p) => stop(p)));
}

/** Starts a fixture over HTTP on 127.0.0.1 and resolves with its MCP URL. */
export async function startHttpFixture(kind) {
  const proc = start(process.execPath, [FIXTURES[kind], 'http', '0']);
  const [, url] = await waitForStderr(proc, /listening (http:\/\/127\.0\.0\.1:\d+\/mcp)/);
  return { proc, url };
}

/** The bridge's upstream flags for a fixture over stdio (a command) or HTTP (a URL). */
export function fixtureCommand(kind) {
  return ['--', process.execPath, FIXTURES[kind], 'stdio'];
}

/**
 * Starts the built bridge on 127.0.0.1:0 with `upstreamArgs`; resolves with
 * its MCP URL. CONFORMANCE_BRIDGE_LOG_LEVEL=debug makes its stderr (kept in
 * the results) tell the whole story of a failing scenario.
 */
export async function startBridge(upstreamArgs, extraFlags = []) {
  const level = process.env.CONFORMANCE_BRIDGE_LOG_LEVEL ?? 'warn';
  const proc = start(process.execPath, [BRIDGE_BIN, '--listen', '127.0.0.1:0', '--log-level', level, ...extraFlags, ...upstreamArgs]);
  const [, url] = await waitForStderr(proc, /serving \S+ upstream at (http:\/\/127\.0\.0\.1:\d+\/mcp)/, 30_000);
  return { proc, url };
}

import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));

/** Absolute path of the loopback preload for servers that bind all interfaces. */
export const LOOPBACK_PRELOAD = path.join(here, 'loopback-preload.cjs');

/** The reference server's entry point (server-everything). */
export const EVERYTHING_ENTRY = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');

/** The stdio command that runs server-everything: [command, ...args]. */
export const EVERYTHING_STDIO_COMMAND = [process.execPath, EVERYTHING_ENTRY, 'stdio'];

export interface RunningServer {
  url: string;
  port: number;
  child: ChildProcess;
  close(): Promise<void>;
}

/**
 * Starts server-everything in `sse` or `streamableHttp` mode on 127.0.0.1 with
 * an OS-chosen port and resolves once it listens. The base URL is returned
 * (`http://127.0.0.1:<port>`): `/sse` for sse mode, `/mcp` for streamableHttp.
 */
export function startEverything(mode: 'sse' | 'streamableHttp', env: Record<string, string> = {}): Promise<RunningServer> {
  return startListeningProcess(process.execPath, ['--require', LOOPBACK_PRELOAD, EVERYTHING_ENTRY, mode], { PORT: '0', ...env });
}

/** Spawns a process that prints LOOPBACK_LISTENING (via the preload) and resolves with its URL. */
export function startListeningProcess(command: string, args: string[], env: Record<string, string> = {}, timeoutMs = 20_000): Promise<RunningServer> {
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  return new Promise((resolve, reject) => {
    let stderr = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server did not start within ${timeoutMs} ms: ${stderr}`));
    }, timeoutMs);
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => {
      stderr += chunk;
      const m = /LOOPBACK_LISTENING ([\d.]+):(\d+)/.exec(stderr);
      if (m && timer) {
        clearTimeout(timer);
        const port = Number(m[2]);
        resolve({ url: `http://127.0.0.1:${port}`, port, child, close: () => stopProcess(child) });
        stderr = '';
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited early (code ${code}): ${stderr}`));
    });
  });
}

/** Ends a child: SIGTERM, then SIGKILL after a grace period. */
export function stopProcess(child: ChildProcess, graceMs = 2_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

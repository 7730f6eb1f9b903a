import { spawn, type ChildProcess } from 'node:child_process';
import { CLI_ENTRY } from './cli.js';
import { waitUntil } from './faults.js';
import { stopProcess } from './processes.js';

/** A `mcp-bridge --config <file>` daemon started from the built CLI. */
export interface ConfigBridge {
  url: string;
  child: ChildProcess;
  stderr(): string;
  /** Sends SIGHUP and resolves with the stderr line that reports the reload (or why it kept the running config). */
  reload(): Promise<string>;
  /** `GET /servers`, parsed. */
  servers(): Promise<Array<{ name: string; state: string; epoch?: string; transport?: string; error?: string }>>;
  /** Resolves once every named server reports `ready`. */
  waitReady(names: string[], timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts `mcp-bridge --listen 127.0.0.1:0 --config <file> …args` and resolves once it listens;
 * `env` for the child, `headers` for the helper's own requests (a bridge with an auth token).
 */
export function startConfigBridge(file: string, args: string[] = [], timeoutMs = 30_000, opts: { env?: NodeJS.ProcessEnv; headers?: Record<string, string> } = {}): Promise<ConfigBridge> {
  const child = spawn(process.execPath, [CLI_ENTRY, '--listen', '127.0.0.1:0', '--config', file, ...args], { stdio: ['ignore', 'ignore', 'pipe'], env: opts.env ?? process.env });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`mcp-bridge --config did not start in ${timeoutMs} ms\n${stderr}`));
    }, timeoutMs);
    const onExit = (code: number | null) => {
      clearTimeout(timer);
      reject(new Error(`mcp-bridge exited early (code ${code})\n${stderr}`));
    };
    child.once('exit', onExit);
    const onData = () => {
      const m = /serving \d+ servers at (http:\/\/[\d.]+:\d+)\/servers/.exec(stderr);
      if (!m) return;
      clearTimeout(timer);
      child.off('exit', onExit);
      child.stderr!.off('data', onData);
      const url = m[1];
      const servers = async () => ((await (await fetch(`${url}/servers`, { headers: opts.headers })).json()) as { servers: Awaited<ReturnType<ConfigBridge['servers']>> }).servers;
      resolve({
        url,
        child,
        stderr: () => stderr,
        servers,
        reload: async () => {
          const seen = stderr.length;
          child.kill('SIGHUP');
          return waitUntil('the reload report', () => /mcp-bridge: (reloaded|SIGHUP)[^\n]*\n/.exec(stderr.slice(seen))?.[0]);
        },
        waitReady: async (names, ms = 20_000) => {
          await waitUntil(`servers ${names.join(', ')} ready`, async () => {
            const list = await servers();
            return names.every((n) => list.find((s) => s.name === n)?.state === 'ready');
          }, ms);
        },
        close: () => stopProcess(child, 8_000),
      });
    };
    child.stderr!.on('data', onData);
  });
}

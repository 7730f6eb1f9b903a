import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { stopProcess } from './processes.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The built CLI (npm test builds before running vitest). */
export const CLI_ENTRY = path.join(root, 'dist/bin/mcp-bridge.js');

/** The command that launches the built CLI: [node, entry]. */
export const CLI_COMMAND = [process.execPath, CLI_ENTRY];

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI to completion (bounded by timeoutMs) and collects its output. */
export function runCli(args: string[], timeoutMs = 20_000): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_ENTRY, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`mcp-bridge ${args.join(' ')} did not finish in ${timeoutMs} ms\n${stderr}`));
    }, timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export interface RunningCli {
  /** Base URL of the HTTP faces, e.g. http://127.0.0.1:41234 */
  url: string;
  child: ChildProcess;
  stderr(): string;
  close(): Promise<void>;
}

/** Starts `mcp-bridge --listen 127.0.0.1:0 …` (unless `args` names its own --listen; with `env`, default this process's) and resolves once it serves, with its URL. */
export function startCli(args: string[], timeoutMs = 30_000, env: NodeJS.ProcessEnv = process.env): Promise<RunningCli> {
  const own = args.indexOf('--') === -1 ? args : args.slice(0, args.indexOf('--'));
  const listen = own.includes('--listen') ? [] : ['--listen', '127.0.0.1:0'];
  const child = spawn(process.execPath, [CLI_ENTRY, ...listen, ...args], { stdio: ['ignore', 'ignore', 'pipe'], env });
  let stderr = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`mcp-bridge did not start in ${timeoutMs} ms\n${stderr}`));
    }, timeoutMs);
    child.stderr!.setEncoding('utf8').on('data', (c: string) => {
      stderr += c;
      const m = /serving \S+ upstream at (http:\/\/[\d.]+:\d+)\/mcp/.exec(stderr);
      if (m) {
        clearTimeout(timer);
        resolve({ url: m[1], child, stderr: () => stderr, close: () => stopProcess(child, 5_000) });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`mcp-bridge exited early (code ${code})\n${stderr}`));
    });
  });
}

#!/usr/bin/env node
// npm test's last step: the vitest suite and the conformance runner at the same time. On a quiet
// machine vitest leaves part of the two cores idle (its integration tests wait on sockets, children
// and timers) and the conformance scenarios are CPU-bound process start-ups. So while vitest runs the
// runner (CONFORMANCE_BESIDE_VITEST) takes one thing at a time, and only while the load average
// says a core is spare: on a loaded machine it waits, and conformance runs after vitest as before.
// When vitest ends it is told (SIGUSR2) to go on at its full CONFORMANCE_CLIENT_JOBS. Every run and
// every scenario is run and judged as `node test/conformance/run.mjs` alone does; only the schedule differs.
// The exit code is vitest's when it failed, else the runner's. Extra arguments go to vitest.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const VITEST = path.join(ROOT, 'node_modules', 'vitest', 'vitest.mjs');
const RUNNER = path.join(ROOT, 'test', 'conformance', 'run.mjs');

const exitOf = (child) => new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? (signal ? 128 : 1))));

const conformance = spawn(process.execPath, [RUNNER], { cwd: ROOT, stdio: 'inherit', env: { ...process.env, CONFORMANCE_BESIDE_VITEST: '1' } });
const conformanceExit = exitOf(conformance);
const vitest = spawn(process.execPath, [VITEST, 'run', ...process.argv.slice(2)], { cwd: ROOT, stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    vitest.kill(signal);
    conformance.kill(signal);
  });
}

const vitestCode = await exitOf(vitest);
if (conformance.exitCode === null && conformance.signalCode === null) conformance.kill('SIGUSR2');
const conformanceCode = await conformanceExit;
process.stderr.write(`vitest exited ${vitestCode}, conformance exited ${conformanceCode}\n`);
process.exitCode = vitestCode !== 0 ? vitestCode : conformanceCode;

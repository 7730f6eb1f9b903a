#!/usr/bin/env node
// The tests drive two programs from Debian, as users run them: chromium (the CORS test, through
// playwright-core, which downloads no browser) and HAProxy (the scale-out test). `npm test` runs this
// first: what is missing is installed with apt-get when that can be done here (root, or sudo without a
// password), else the command stops and says what to install. Nothing is downloaded from elsewhere.
import { execFileSync, spawnSync } from 'node:child_process';

const TOOLS = [
  { command: 'chromium', pkg: 'chromium', why: 'the browser test of CORS (test/integration/ops-browser-cors.test.ts)' },
  { command: 'haproxy', pkg: 'haproxy', why: 'the scale-out test (test/integration/cluster-haproxy.test.ts)' },
];

const has = (command) => spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
const log = (msg) => process.stderr.write(`system-tools: ${msg}\n`);

const missing = TOOLS.filter((t) => !has(t.command));
if (missing.length === 0) process.exit(0);

const asRoot = process.getuid?.() === 0;
const sudo = !asRoot && spawnSync('sudo', ['-n', 'true'], { stdio: 'ignore' }).status === 0;
const pkgs = missing.map((t) => t.pkg);
if (!has('apt-get') || (!asRoot && !sudo)) {
  for (const t of missing) log(`${t.command} is missing; it is needed by ${t.why}`);
  log(`install it (Debian/Ubuntu: sudo apt-get install -y ${pkgs.join(' ')}), then run npm test again`);
  process.exit(1);
}
log(`installing ${pkgs.join(', ')} with apt-get …`);
const run = (args) => execFileSync(asRoot ? args[0] : 'sudo', asRoot ? args.slice(1) : ['-n', ...args], { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
run(['apt-get', 'update', '-qq']);
run(['apt-get', 'install', '-y', '-qq', '--no-install-recommends', ...pkgs]);
const still = missing.filter((t) => !has(t.command));
if (still.length > 0) {
  log(`apt-get finished but ${still.map((t) => t.command).join(', ')} is still not on PATH`);
  process.exit(1);
}

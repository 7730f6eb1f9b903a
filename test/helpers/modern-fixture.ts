import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startModernServer, type ModernFixtureState, type RunningModernServer } from '../fixtures/modern-server.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));

export type { ModernFixtureState, RunningModernServer };

/** Starts the modern-only fixture (SDK v2, `legacy: 'reject'`) in-process on 127.0.0.1:0. */
export function startModernHttpServer(): Promise<RunningModernServer> {
  return startModernServer();
}

/** Absolute path of the fixture's stdio entry. */
export const MODERN_STDIO_ENTRY = path.join(here, '..', 'fixtures', 'modern-server-stdio.mjs');

/** The stdio command that runs the modern fixture: [command, ...args]. */
export const MODERN_STDIO_COMMAND: string[] = [process.execPath, MODERN_STDIO_ENTRY];

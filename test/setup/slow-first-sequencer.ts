import { statSync } from 'node:fs';
import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Seconds each slow integration file took alone on the 2-core machine (vitest's per-file durations of
 * a whole run, 2026-12). Only the order is taken from them: vitest runs whole files, so a one-minute
 * file that starts last sets the wall time alone. Vitest's own cache of durations (node_modules/.vite)
 * knows better and wins where it exists; a clean clone (CI) has none and would go by file size.
 */
const SECONDS: Record<string, number> = {
  'test/integration/cluster-haproxy.test.ts': 67,
  'test/integration/exact-ids.test.ts': 66,
  'test/integration/load.test.ts': 57,
  'test/integration/resume-streamable-http.test.ts': 48,
  'test/integration/matrix-legacy.test.ts': 46,
  'test/integration/bridge-m2l-stdio.test.ts': 37,
  'test/integration/cli.test.ts': 31,
  'test/integration/accept-modern-to-legacy.test.ts': 31,
  'test/integration/leaks.test.ts': 29,
  'test/integration/faults-lifecycle.test.ts': 28,
  'test/integration/oauth-upstream.test.ts': 23,
  'test/integration/bridge-l2l.test.ts': 23,
  'test/integration/matrix-modern.test.ts': 22,
  'test/integration/cluster-route.test.ts': 20,
  'test/integration/ops-readyz.test.ts': 19,
  'test/integration/accept-validation.test.ts': 18,
  'test/integration/session-pool-stdio.test.ts': 18,
  'test/integration/links-stdio-everything.test.ts': 17,
  'test/integration/bridge-l2m-e2e.test.ts': 15,
  'test/integration/security-cli.test.ts': 15,
  'test/integration/servers-config.test.ts': 14,
  'test/integration/probe-kinds.test.ts': 13,
};

/** Longest first within each project, as vitest's own sequencer does once it has timings. */
export class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const base = await super.sort(files);

    const root = this.ctx.config.root;
    const weight = new Map<TestSpecification, number>();
    for (const f of base) {
      const rel = path.relative(root, f.moduleId).split(path.sep).join('/');
      const cached = this.ctx.cache.getFileTestResults(`${f.project.name}:${rel}`)?.duration;
      weight.set(f, cached ?? (SECONDS[rel] ?? 0) * 1000 + sizeOf(f.moduleId) / 1e6);
    }
    // Stable: the project groups super.sort made stay as they are; only the order inside each changes.
    const group = (f: TestSpecification) => `${f.project.config.sequence.groupOrder}:${f.project.name}`;
    const groups = [...new Set(base.map(group))];
    return groups.flatMap((g) => base.filter((f) => group(f) === g).sort((a, b) => weight.get(b)! - weight.get(a)!));
  }
}

function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

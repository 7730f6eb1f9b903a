// Renders the charts again from a run's figures, without running anything:
//   node bench/charts.mjs [bench/results/latest.json]
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { writeCharts } from './lib/charts.mjs';
import { RESULTS_DIR } from './lib/paths.mjs';

const file = path.resolve(process.argv[2] ?? path.join(RESULTS_DIR, 'latest.json'));
const run = JSON.parse(readFileSync(file, 'utf8'));
for (const out of await writeCharts(run, path.dirname(file))) process.stderr.write(`[charts] ${path.relative(process.cwd(), out)}\n`);

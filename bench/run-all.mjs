// `npm run bench`: every benchmark, one after the other, after the setup they need (package.json's
// script runs scripts/setup-system.sh with WANT_TORCH=1 and the build first). Each writes
// bench/results/<name>.json. Stops at the first that fails: a bench that refuses an unfair comparison
// (no optimised BLAS on one side) exits 2 and says what to install.
//   node bench/run-all.mjs [name…]   (names: a subset, in this order)
import console from 'node:console';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import process from 'node:process';
import { root } from './lib/build.mjs';

const ALL = ['train-throughput', 'matmul', 'decode', 'draw-latency', 'long-attention', 'telemetry'];
const names = process.argv.length > 2 ? process.argv.slice(2) : ALL;
for (const name of names) {
  if (!ALL.includes(name)) throw new Error(`unknown benchmark ${name} (known: ${ALL.join(', ')})`);
  console.log(`\n=== node bench/${name}.mjs`);
  const r = spawnSync(process.execPath, [join(root, 'bench', `${name}.mjs`)], { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) {
    console.error(`bench/${name}.mjs exited with ${r.status ?? r.signal}; bench/results/ holds the ones before it`);
    process.exit(r.status || 1);
  }
}
console.log(`\nresults: ${join(root, 'bench', 'results')}/{${names.join(',')}}.json`);

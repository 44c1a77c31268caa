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

// A name and the command line of its bench: train-throughput-unfused is training "before" issue 18's
// kernels (the unfused tfjs path, as the engine runs without them), in its own process for its own RSS.
const BENCHES = {
  'train-throughput-unfused': ['train-throughput.mjs', '--unfused'],
  'train-throughput': ['train-throughput.mjs'],
  matmul: ['matmul.mjs'],
  decode: ['decode.mjs'],
  'draw-latency': ['draw-latency.mjs'],
  'long-attention': ['long-attention.mjs'],
  telemetry: ['telemetry.mjs'],
};
const ALL = Object.keys(BENCHES);
const names = process.argv.length > 2 ? process.argv.slice(2) : ALL;
for (const name of names) {
  if (!ALL.includes(name)) throw new Error(`unknown benchmark ${name} (known: ${ALL.join(', ')})`);
  const [script, ...flags] = BENCHES[name];
  console.log(`\n=== node bench/${script} ${flags.join(' ')}`);
  const r = spawnSync(process.execPath, [join(root, 'bench', script), ...flags], { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) {
    console.error(`bench/${script} exited with ${r.status ?? r.signal}; bench/results/ holds the ones before it`);
    process.exit(r.status || 1);
  }
}
console.log(`\nresults: ${join(root, 'bench', 'results')}/{${names.join(',')}}.json`);

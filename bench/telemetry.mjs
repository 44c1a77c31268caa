// What per-head telemetry costs in training throughput (issue 11's ≤ 5% at the default K): the
// CLI trains the `small` preset on the reverse task with telemetry off and on, in alternating
// rounds (the shared machine drifts; a round of each side back to back sees the same drift), and
// compares the wall time per step between the metrics rows of step 1 and the last step (so
// start-up is left out and every telemetry pass in between is in). Snapshots, checkpoints and
// evaluation are off on both sides, so telemetry is the only difference.
//   node bench/telemetry.mjs [--steps 21] [--every 5] [--rounds 2] [--default-every 50] [--backend wasm]
// A telemetry pass happens once every K steps, so its share at the default K is the share
// measured at --every scaled by every/default-every; --every 50 --steps 101 measures it directly.
import console from 'node:console';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import process from 'node:process';
import { root } from './lib/build.mjs';
import { machine, median, parseArgs, writeResult } from './lib/common.mjs';

const args = parseArgs({ steps: 21, every: 5, rounds: 2, defaultEvery: 50, backend: 'wasm', pairs: 32 });
const cli = join(root, 'dist', 'cli.js');
const tmp = mkdtempSync(join(tmpdir(), 'bench-telemetry-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));

/** Seconds per step between the rows of step 1 and the last step of one run. */
function run(name, telemetryEvery) {
  const out = join(tmp, name);
  const r = spawnSync(
    process.execPath,
    [
      cli,
      'train',
      '--task',
      'reverse',
      '--config',
      'small',
      '--steps',
      String(args.steps),
      '--backend',
      args.backend,
      '--snapshot-every',
      '0',
      '--checkpoint-every',
      String(args.steps),
      '--eval-every',
      String(args.steps),
      '--bleu-sentences',
      '0',
      '--telemetry-every',
      String(telemetryEvery),
      '--telemetry-pairs',
      String(args.pairs),
      '--out',
      out,
    ],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
  );
  if (r.status !== 0) throw new Error(`train exited with ${r.status}: ${r.stderr.slice(-2000)}`);
  const rows = readFileSync(join(out, 'metrics.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  const first = rows.find((x) => x.step === 1);
  const last = rows.find((x) => x.step === args.steps);
  const telemetryRows = telemetryEvery
    ? readFileSync(join(out, 'telemetry.jsonl'), 'utf8').split('\n').filter(Boolean).length
    : 0;
  rmSync(out, { recursive: true, force: true });
  return { perStep: (last.time - first.time) / 1000 / (args.steps - 1), telemetryRows };
}

const m = machine();
console.log('# telemetry cost: small preset, reverse task, CLI training with telemetry off and on');
console.log(`date ${m.date}; ${m.nproc} CPUs (${m.cpu}); load average ${m.load}; node ${m.node}`);
console.log(
  `steps ${args.steps} per run, telemetry every ${args.every} steps on ${args.pairs} probe pairs, ${args.rounds} rounds`,
);
const off = [];
const on = [];
let rows = 0;
for (let i = 0; i < args.rounds; i++) {
  off.push(run(`off-${i}`, 0).perStep);
  const r = run(`on-${i}`, args.every);
  on.push(r.perStep);
  rows = r.telemetryRows;
  console.log(
    `round ${i + 1}: off ${off.at(-1).toFixed(3)} s/step, on ${on.at(-1).toFixed(3)} s/step (${rows} telemetry rows)`,
  );
}
const tOff = median(off);
const tOn = median(on);
const share = (tOn - tOff) / tOff;
const pass = (tOn - tOff) * args.every; // seconds of one telemetry pass
console.log(`median s/step: off ${tOff.toFixed(3)}, on ${tOn.toFixed(3)}`);
console.log(`throughput cost at every ${args.every}: ${(share * 100).toFixed(2)}% (one pass ≈ ${pass.toFixed(2)} s)`);
console.log(
  `at the default every ${args.defaultEvery}: ${((share * args.every * 100) / args.defaultEvery).toFixed(2)}% (scaled: one pass per ${args.defaultEvery} steps)`,
);
writeResult('telemetry', {
  args,
  engine: `node dist/cli.js train --backend ${args.backend}`,
  peer: null,
  results: {
    off,
    on,
    medianOff: tOff,
    medianOn: tOn,
    share,
    passSeconds: pass,
    shareAtDefault: (share * args.every) / args.defaultEvery,
  },
});

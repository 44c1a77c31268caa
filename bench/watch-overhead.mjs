// What ten active watchpoints cost training (issue 31's goal: ≤ 5%): the tiny reverse run trained
// by the CLI (`train --task reverse --config tiny --backend wasm`) for --steps steps, telemetry every
// --every steps, with no watch and with ten watch conditions that never hold (each names a head
// pattern, so every telemetry row evaluates all ten), in alternating rounds (none first, then the
// next round watches first). The figure is the wall time from the end of step --from to the last
// step, read from metrics.jsonl's `time` (the engine's own clock; process start and data
// generation left out; no evaluation), its median over the rounds, side by side, and their ratio.
//   node bench/watch-overhead.mjs [--steps 300] [--from 50] [--every 5] [--rounds 3]
import console from 'node:console';
import process from 'node:process';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { root } from './lib/build.mjs';
import { machine, median, parseArgs, writeResult } from './lib/common.mjs';

const args = parseArgs({ steps: 300, from: 50, every: 5, rounds: 3 });
const STATS = ['entropy', 'confidence'];
const KINDS = ['encoder_self', 'decoder_self', 'cross'];
/** Ten conditions over every head that no telemetry row meets (entropy and confidence are ≥ 0). */
const WATCHES = [
  ...KINDS.flatMap((k) => STATS.map((s) => `${k}:*.*.${s} < -1`)),
  'max(cross:*.*.entropy) < -1',
  'min(encoder_self:*.*.confidence) < -1',
  'mean(decoder_self:*.*.entropy) < -1',
  'cross:1.*.confidence < -1 && step > 0',
];

const dir = mkdtempSync(join(tmpdir(), 'watch-overhead-'));
process.once('exit', () => rmSync(dir, { recursive: true, force: true }));

/** Seconds from the end of step --from to the last step of one training. */
function train(watched, round) {
  const out = join(dir, `run-${round}-${watched ? 'watch' : 'none'}`);
  const watch = watched ? ['--watch', WATCHES.join('; ')] : [];
  const cli = join(root, 'bin', 'attention-debugger');
  const base = ['train', '--task', 'reverse', '--config', 'tiny', '--backend', 'wasm', '--out', out];
  const settings = [
    '--steps',
    String(args.steps),
    '--telemetry-every',
    String(args.every),
    '--eval-every',
    String(args.steps * 10),
  ];
  const r = spawnSync(process.execPath, [cli, ...base, ...settings, ...watch], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`train failed (${r.status}): ${r.stderr.slice(-2000)}`);
  const rows = readFileSync(join(out, 'metrics.jsonl'), 'utf8').trim().split('\n').map(JSON.parse);
  const at = (step) => rows.filter((m) => m.step === step).at(-1).time;
  return (at(args.steps) - at(args.from)) / 1000;
}

const m = machine();
console.log(
  `watch overhead: tiny reverse, ${args.steps} steps, ${WATCHES.length} watches · ${m.nproc} CPUs, load ${m.load}`,
);
const none = [];
const watched = [];
for (let round = 0; round < args.rounds; round++) {
  const order = round % 2 === 0 ? [false, true] : [true, false];
  for (const w of order) (w ? watched : none).push(train(w, round));
  console.log(`round ${round + 1}: no watch ${none.at(-1).toFixed(2)} s · ten watches ${watched.at(-1).toFixed(2)} s`);
}
const ratio = median(watched) / median(none);
console.log(
  `median seconds for steps ${args.from}–${args.steps}: no watch ${median(none).toFixed(2)} · ` +
    `ten watches ${median(watched).toFixed(2)} · ratio ${ratio.toFixed(3)} (${((ratio - 1) * 100).toFixed(1)}%)`,
);
writeResult('watch-overhead', { none, watched, ratio, watches: WATCHES, ...args });

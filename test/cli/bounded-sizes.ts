/**
 * Sizes bounded before work starts (issue 27, item 4): rows of bad input for malformed.test.ts, in the form malformed-plants.ts describes.
 * Each was seen to hang, run for minutes or fail deep in the work ("Invalid typed array length", "Invalid string
 * length", a wasm trap after 30 s) before the limits of src/engine/run/limits.ts and memory.ts; now each is refused
 * up front, naming the limit and the largest value that fits, and the folder is left as it was.
 */
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { decode, type MalformedCase, micro, type Plant, resume, train } from './malformed-plants';

/** A copy of {case}/run whose model has `maxLen` positions (sinusoidal: the checkpoint holds none). */
function runWithPositions(maxLen: number): Plant {
  return (path) => {
    cpSync(join(path, '..', 'run'), path, { recursive: true });
    const config = JSON.parse(readFileSync(join(path, 'config.json'), 'utf8'));
    writeFileSync(join(path, 'config.json'), JSON.stringify({ ...config, max_len: maxLen }));
  };
}

/** n token ids of the copy task's vocabulary (4…10), as --src or --tgt text. */
const tokens = (n: number) => Array.from({ length: n }, (_, i) => 4 + (i % 7)).join(' ');

/** A new run of the copy task with a preset (or {case}/micro.json) and the given flags. */
const preset = (name: string, ...args: string[]) =>
  train('--task', 'copy', '--config', name, '--out', '{case}/new', ...args);
const MICRO_FILE = { 'micro.json': micro() };
const row = (r: Omit<MalformedCase, 'issue' | 'item'>): MalformedCase => ({ issue: 27, item: 4, ...r });

export const BOUNDED_SIZES: MalformedCase[] = [
  // --max-length: a preset's max_len follows it, and 1e9 positions broke the sinusoid's typed array.
  ...['1e9', '8191', '1e300'].map((value) =>
    row({
      name: `--max-length ${value} on a preset`,
      args: preset('tiny', '--max-length', value),
      code: 2,
      error: `--max-length ${Number(value)}: more than 8,190 (a preset's max_len is max_length + 2 positions, at most 8,192); give at most 8190`,
    }),
  ),
  row({
    name: 'a --config file whose max_len is 1e9',
    args: preset('{case}/long.json'),
    files: { 'long.json': micro({ max_len: 1e9 }) },
    code: 1,
    error: '{case}/long.json: max_len 1000000000: more than 8,192',
  }),
  row({
    name: 'a --config file whose training.max_length is 1e9',
    args: preset('{case}/long.json'),
    files: { 'long.json': micro({}, { max_length: 1e9 }) },
    code: 1,
    error: '{case}/long.json: max_length 1000000000: more than 8,190',
  }),
  // --steps: a run that never ends (and batches that would fill the disk).
  ...[
    ['a new run', preset('{case}/micro.json', '--steps', '1e12')],
    ['a new run, one past the limit', preset('{case}/micro.json', '--steps', '10000001')],
    ['a resume', resume('--steps', '1e12')],
  ].map(([what, args]) =>
    row({
      name: `train --steps past the limit: ${what as string}`,
      args: args as string[],
      run: true,
      files: MICRO_FILE,
      code: 2,
      error: "more than 10,000,000 (33 times the paper's longest run, big's 300,000 steps",
    }),
  ),
  ...['1e12', '1332186'].map((steps) =>
    row({
      name: `batches --steps ${steps}: a file past 2 GiB`,
      args: ['batches', '--run', '{case}/run', '--out', '{case}/b.bin', '--steps', steps],
      run: true,
      code: 2,
      // batch_tokens 200: at most 2·200 ids and 3 sizes a batch, 1,612 bytes; 2 GiB / 1,612 = 1,332,185.
      error: `--steps ${Number(steps)}: more than 1,332,185 (up to 1,612 bytes a batch of batch_tokens 200, 2 GiB a file); give at most 1332185`,
    }),
  ),
  // --batch-tokens and --config big: the memory estimate, with activations, against the wasm heap.
  ...[
    ['tiny', '1e9', '--batch-tokens 1000000000'],
    ['{case}/micro.json', '1e12', '--batch-tokens 1000000000000'],
    ['base', '60000', '--batch-tokens 60000'],
  ].map(([config, tokens, named]) =>
    row({
      name: `--batch-tokens ${tokens} with ${config} on wasm`,
      args: preset(config!, '--batch-tokens', tokens!),
      files: MICRO_FILE,
      code: 1,
      error: `with ${named} need about`,
    }),
  ),
  ...[
    ['big', "more than the wasm backend's heap (4.0 GiB); the largest batch_tokens that fits is "],
    ['base', "more than the wasm backend's heap (4.0 GiB); the largest batch_tokens that fits is "],
  ].map(([config, error]) =>
    row({
      name: `--config ${config} on wasm (its batch_tokens 50,000)`,
      args: preset(config!),
      code: 1,
      error: error!,
    }),
  ),
  // --telemetry-pairs: every probe pair's maps are kept; --bleu-sentences: all decoded at each evaluation.
  ...[
    ['a new run', preset('{case}/micro.json', '--telemetry-pairs', '1e9')],
    ['a resume', resume('--telemetry-pairs', '1e9')],
  ].map(([what, args]) =>
    row({
      name: `--telemetry-pairs 1e9: ${what as string}`,
      args: args as string[],
      run: true,
      files: MICRO_FILE,
      code: 2,
      // 2 heads, 1 + 1 layers, 21 tokens a side: 4·2·(21² + 21² + 21²) = 10,584 bytes a pair; 1 GiB / 10,584 = 101,449.
      error: '--telemetry-pairs 1000000000: more than 101,449 (telemetry keeps every map of its probe pairs',
    }),
  ),
  ...[
    ['a new run', preset('{case}/micro.json', '--bleu-sentences', '1e9'), 1e9],
    ['a resume', resume('--bleu-sentences', '10001'), 10001],
  ].map(([what, args, value]) =>
    row({
      name: `--bleu-sentences past the limit: ${what as string}`,
      args: args as string[],
      run: true,
      files: MICRO_FILE,
      code: 2,
      error: `--bleu-sentences ${value as number}: more than 10,000 (each evaluation decodes them all`,
    }),
  ),
  // --beam: 100,000 took over 120 s on one line.
  ...[
    ['decode', decode('--beam', '100000')],
    ['decode, one past the limit', decode('--beam', '65')],
    ['evaluate', ['evaluate', '--backend', 'wasm', '--run', '{case}/run', '--beam', '1e6']],
  ].map(([what, args]) =>
    row({
      name: `--beam past the limit: ${what as string}`,
      args: args as string[],
      run: true,
      stdin: '4 5 6\n',
      code: 2,
      error: "more than 64 (3 times the paper's widest beam, 21 (§6.3)",
    }),
  ),
  // average --last: more checkpoints than the run holds (it has those of steps 3 and 6).
  ...['1e12', '3'].map((last) =>
    row({
      name: `average --last ${last} on a run of 2 checkpoints`,
      args: ['average', '--run', '{case}/run', '--last', last],
      run: true,
      code: 2,
      error: `--last ${Number(last)}: more than 2 (the checkpoints {case}/run holds); give at most 2`,
    }),
  ),
  // attention --src/--tgt: tokens past max_len, and 4,100 a side on a long model ("Invalid string length").
  row({
    name: 'attention --src of 41 tokens on a model of 32 positions',
    args: ['attention', '--backend', 'wasm', '--run', '{case}/run', '--src', tokens(40), '--tgt', '4 5'],
    run: true,
    code: 2,
    error: "--src tokens 41: more than 32 (the model's max_len: a position each); give at most 32",
  }),
  row({
    name: 'attention --tgt of 5,001 tokens on a model of 5,000 positions',
    args: ['attention', '--backend', 'wasm', '--run', '{case}/long', '--src', '4 5', '--tgt', tokens(5000)],
    run: true,
    files: { long: runWithPositions(5000) },
    code: 2,
    error: '--tgt tokens 5001: more than 5,000',
  }),
  row({
    name: 'attention of 4,100 tokens a side on a model of 5,000 positions',
    args: ['attention', '--backend', 'wasm', '--run', '{case}/long', '--src', tokens(4100), '--tgt', tokens(4099)],
    run: true,
    files: { long: runWithPositions(5000) },
    code: 1,
    // 2 heads, 1 + 1 layers: 4·2·(4,101² + 4,100² + 4,100·4,101) bytes = 385 MB; √(160 MB / (4·2·3)) = 2,643 tokens.
    error:
      'the attention of 4101 source and 4100 target tokens would take 385 MB for all maps, more than the 160 MB ' +
      'the engine computes at once: shorten the input to about 2643 tokens',
  }),
];

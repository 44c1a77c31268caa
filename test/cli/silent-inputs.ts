/**
 * Runs written by PyTorch and inputs that were silent (issue 27, items 6 and 7): rows of bad input
 * for malformed.test.ts, in the form malformed-plants.ts describes.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import {
  type MalformedCase,
  type Plant,
  CKPT,
  decode,
  fork,
  micro,
  newRun,
  poison,
  resume,
  train,
} from './malformed-plants';
import { pytorchRun } from './pytorch-plant';

/**
 * Rewrites a safetensors header so that tensor `b` reads tensor `a`'s bytes (both of one shape): the
 * file keeps its length, b's own bytes are left unreferenced.
 */
function shareBytes(a: string, b: string): Plant {
  return (path) => {
    const buf = readFileSync(path);
    const n = Number(buf.readBigUInt64LE(0));
    const header = JSON.parse(buf.subarray(8, 8 + n).toString('utf8'));
    header[b].data_offsets = header[a].data_offsets;
    const text = Buffer.from(JSON.stringify(header));
    const length = Buffer.alloc(8);
    length.writeBigUInt64LE(BigInt(text.length));
    writeFileSync(path, Buffer.concat([length, text, buf.subarray(8 + n)]));
  };
}

const NORM1 = 'encoder.layers.0.norm1.weight'; // [16], as norm2
const NORM2 = 'encoder.layers.0.norm2.weight';
const attention = (...args: string[]) => ['attention', '--backend', 'wasm', ...args];

/** What the engine says of a run PyTorch wrote that it is asked to train on or batch (run/pytorchRun.ts). */
const PYTORCH_REFUSED = '{case}/pt/config.json: written by PyTorch (writer "pytorch"): the engine cannot resume, fork';

export const SILENT_INPUTS: MalformedCase[] = [
  // 6. A run written by PyTorch (python/attention_debugger): read by every reader, refused with the reason by
  // what would train on it or write the engine's batches of it (its training section has no batch_tokens).
  ...[
    ['train --resume', train('--out', '{case}/pt', '--resume')],
    ['train --resume --steps 10', train('--out', '{case}/pt', '--resume', '--steps', '10')],
    ['train --fork RUN', train('--fork', '{case}/pt', '--out', '{case}/fork')],
    [
      'train --fork RUN@2 --freeze-heads',
      train('--fork', '{case}/pt@2', '--out', '{case}/fork', '--freeze-heads', 'cross:0.1'),
    ],
    ['batches', ['batches', '--run', '{case}/pt', '--out', '{case}/batches.bin', '--steps', '2']],
  ].map(
    ([what, args]): MalformedCase => ({
      name: `${what as string} on a run written by PyTorch`,
      issue: 27,
      item: 6,
      args: args as string[],
      files: { pt: pytorchRun },
      code: 1,
      error: PYTORCH_REFUSED,
    }),
  ),

  // 7. Inputs that were silent. A vocabulary size that cannot hold the 4 special tokens and a word.
  {
    name: '--vocab-size 3 (below the special tokens)',
    issue: 27,
    item: 7,
    args: newRun('{case}/micro.json', '--vocab-size', '3'),
    files: { 'micro.json': micro() },
    code: 1,
    error: '--vocab-size: 3 cannot hold the 4 special tokens (<pad> <s> </s> <unk>) and a word; give at least 5',
  },
  {
    name: 'training.vocab_size 4 in a config file (the special tokens and no word)',
    issue: 27,
    item: 7,
    args: train('--data', '{case}/data', '--config', '{case}/micro.json', '--out', '{case}/new'),
    files: { 'micro.json': micro({}, { vocab_size: 4 }), 'data/train.en': 'a b\n', 'data/train.de': 'c d\n' },
    code: 1,
    error: '{case}/micro.json: vocab_size: 4 cannot hold the 4 special tokens',
  },
  {
    name: '--vocab-size with --task (the task vocabulary is fixed; config.json recorded the ignored size)',
    issue: 27,
    item: 7,
    args: newRun('{case}/micro.json', '--vocab-size', '50'),
    files: { 'micro.json': micro() },
    code: 1,
    error:
      "--vocab-size sets the size of a BPE vocabulary learned from --data or --gettext; the copy task's vocabulary",
  },
  // Words read as <unk> are named (the command goes on: exit 0, the run untouched).
  {
    name: 'decode: source words outside the task vocabulary',
    issue: 27,
    item: 7,
    args: decode('--beam', '1'),
    run: true,
    stdin: '4 5 6\n4 seven 5 42 seven\n',
    code: 0,
    error: `decode: stdin line 2: "seven", "42" not in the run's vocabulary: read as <unk>`,
  },
  {
    name: 'decode --json: a source word outside the task vocabulary',
    issue: 27,
    item: 7,
    args: decode('--beam', '1', '--json'),
    run: true,
    stdin: '4 x 5\n',
    code: 0,
    error: `decode: stdin line 1: "x" not in the run's vocabulary: read as <unk>`,
  },
  {
    name: 'attention --run: target words outside the task vocabulary',
    issue: 27,
    item: 7,
    args: attention('--run', '{case}/run', '--src', '4 5', '--tgt', '5 five'),
    run: true,
    code: 0,
    error: `attention: --tgt: "five" not in the run's vocabulary: read as <unk>`,
  },
  // Two inputs for one thing, one of which would be ignored.
  {
    name: 'attention --src with --src-ids',
    issue: 27,
    item: 7,
    args: attention('--run', '{case}/run', '--src', '4 5', '--src-ids', '6,7,2', '--tgt', '5 4'),
    run: true,
    code: 2,
    error: 'attention: --src and --src-ids both given',
  },
  {
    name: 'attention --tgt with --tgt-ids',
    issue: 27,
    item: 7,
    args: attention('--checkpoint', '{case}/run', '--src-ids', '4,5,2', '--tgt-ids', '1,5', '--tgt', '5 4'),
    run: true,
    code: 2,
    error: 'attention: --tgt and --tgt-ids both given',
  },
  {
    name: 'attention --tgt-ids not starting with <s>',
    issue: 27,
    item: 7,
    args: attention('--checkpoint', '{case}/run', '--src-ids', '4,5,2', '--tgt-ids', '5,4'),
    run: true,
    code: 2,
    error: "attention: --tgt-ids 5,4: the decoder's input starts with BOS (1): give 1,5,4",
  },
  // Head and check lists with an empty entry or one named twice.
  ...(
    [
      ['--freeze-heads', 'cross:0.0,,cross:0.1', '--freeze-heads "cross:0.0,,cross:0.1": entry 2 is empty'],
      ['--mask-heads', 'cross:0.1,', '--mask-heads "cross:0.1,": entry 2 is empty'],
      ['--reinit-heads', 'cross:0.1, cross:0.1', '--reinit-heads: "cross:0.1" is given twice'],
      ['--freeze-heads', ',', '--freeze-heads needs at least one entry'],
    ] as const
  ).map(
    ([flag, value, error]): MalformedCase => ({
      name: `train --fork ${flag} "${value}"`,
      issue: 27,
      item: 7,
      args: fork(flag, value),
      run: true,
      code: 2,
      error,
    }),
  ),
  {
    name: 'decode --ablate with a head named twice',
    issue: 27,
    item: 7,
    args: decode('--ablate', 'cross:0.0,cross:0.0'),
    run: true,
    stdin: '4 5\n',
    code: 2,
    error: '--ablate: "cross:0.0" is given twice',
  },
  ...(
    [
      ['', '--break-on needs at least one entry, e.g. nonfinite,loss_spike'],
      ['nonfinite,,loss_spike', '--break-on "nonfinite,,loss_spike": entry 2 is empty'],
      ['nonfinite,nonfinite', '--break-on: "nonfinite" is given twice'],
    ] as const
  ).map(
    ([value, error]): MalformedCase => ({
      name: `train --resume --break-on "${value}"`,
      issue: 27,
      item: 7,
      args: resume('--steps', '8', '--break-on', value),
      run: true,
      code: 2,
      error,
    }),
  ),
  // A checkpoint whose header makes two tensors share bytes.
  ...[
    ['decode', decode('--beam', '1')],
    ['attention', attention('--checkpoint', `{case}/${CKPT}`, '--src-ids', '4,5,2', '--tgt-ids', '1,5')],
    ['average', ['average', '--run', '{case}/run', '--out', '{case}/avg.safetensors']],
  ].map(
    ([what, args]): MalformedCase => ({
      name: `${what as string}: a checkpoint whose header gives two tensors the same bytes`,
      issue: 27,
      item: 7,
      args: args as string[],
      run: true,
      stdin: '4 5\n',
      files: { [CKPT]: shareBytes(NORM1, NORM2) },
      code: 1,
      error: `step-6.safetensors: tensor "${NORM2}": data [`,
    }),
  ),
  // A NaN checkpoint: average no longer averages it (check-run: test/run/nan-checkpoint.test.ts).
  {
    name: 'average over a checkpoint holding NaN',
    issue: 27,
    item: 7,
    args: ['average', '--run', '{case}/run', '--out', '{case}/avg.safetensors'],
    run: true,
    files: { [CKPT]: poison('decoder.layers.0.linear1.weight') },
    code: 1,
    error: `{case}/${CKPT}: tensor "decoder.layers.0.linear1.weight" holds NaN at index 0`,
  },
];

/**
 * Malformed inputs of the command line (issue 12, "Trust under bad input"), one row each: the
 * arguments, the files planted first, the exit code and a fragment of the error, which must name
 * the file, the line or the field at fault. malformed.test.ts runs every row through the built CLI
 * in a folder of its own, and checks that the folder (the run folder within it included) is
 * byte-identical before and after: a failing command loses or half-writes nothing.
 *
 * In args and planted text, {case} is the row's folder. A row with `run: true` starts with a copy of
 * the base run at {case}/run: the copy task trained 6 steps by the micro model below (checkpoints at
 * steps 3 and 6, each with its optimizer file).
 */
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readSafetensors, writeSafetensors } from '../../src/engine/checkpoint/safetensors';
import { MICRO_MODEL, MICRO_TRAINING } from '../train/helpers';

/** The micro model (test/train/helpers.ts) with the base run's training settings. */
export const MICRO = { ...MICRO_MODEL, training: { ...MICRO_TRAINING, steps: 6, checkpoint_every: 3 } };

/** A --config file: the micro model with some fields changed (or, for `undefined`, removed). */
export function micro(model: Record<string, unknown> = {}, training: Record<string, unknown> = {}): string {
  return JSON.stringify({ ...MICRO, ...model, training: { ...MICRO.training, ...training } });
}

/** What is planted at a path of the case folder: text, or a change made to what is there. */
export type Plant = string | ((path: string) => void);

export interface MalformedCase {
  /** What is wrong, as a user would say it. */
  name: string;
  /** The item of issue 12 it belongs to, or `fork`: issue 13's train --fork. */
  item: number | 'fork';
  args: string[];
  stdin?: string;
  /** Start with a copy of the base run at {case}/run. */
  run?: boolean;
  /** Planted in order, paths relative to the case folder. */
  files?: Record<string, Plant>;
  code: number;
  /** A fragment of stderr (with {case} replaced). */
  error: string;
}

/** Sets a value of one tensor of a safetensors file (the value NaN by default). */
function poison(tensor: string, value = NaN): Plant {
  return (path) => {
    const { tensors, metadata } = readSafetensors(path);
    tensors.get(tensor)!.data[0] = value;
    writeSafetensors(path, tensors, metadata);
  };
}

/** Replaces metadata entries of a safetensors file (writeSafetensors keeps them as given). */
function withMetadata(patch: Record<string, string>): Plant {
  return (path) => {
    const { tensors, metadata } = readSafetensors(path);
    writeSafetensors(path, tensors, { ...metadata, ...patch });
  };
}

/** A file whose safetensors header is the given JSON text (and no data). */
function rawHeader(json: string): Plant {
  return (path) => {
    const header = Buffer.from(json);
    const length = Buffer.alloc(8);
    length.writeBigUInt64LE(BigInt(header.length));
    writeFileSync(path, Buffer.concat([length, header]));
  };
}

const remove: Plant = (path) => rmSync(path);

/**
 * Another run: a copy of {case}/run whose vocabulary has `size` tokens, its config.json and the
 * rows of its step-6 checkpoint's embeddings and generator grown to match.
 */
function runWithVocabulary(size: number): Plant {
  return (path) => {
    cpSync(join(path, '..', 'run'), path, { recursive: true });
    const config = JSON.parse(readFileSync(join(path, 'config.json'), 'utf8'));
    writeFileSync(join(path, 'config.json'), JSON.stringify({ ...config, src_vocab: size, tgt_vocab: size }));
    writeFileSync(join(path, 'vocab.json'), JSON.stringify({ kind: 'task', size }));
    const file = join(path, 'checkpoints', 'step-6.safetensors');
    const { tensors, metadata } = readSafetensors(file);
    for (const [name, t] of tensors) {
      if (!/embed\.weight$|^generator\./.test(name)) continue;
      const width = t.data.length / t.shape[0]!;
      tensors.set(name, { shape: [size, ...t.shape.slice(1)], data: new Float32Array(size * width) });
    }
    writeSafetensors(file, tensors, metadata);
  };
}

/** A BPE vocabulary of 11 tokens: the base run's size, other tokens. */
const OTHER_BPE = JSON.stringify({
  format: 'attention-debugger-bpe',
  version: 1,
  endOfWord: '</w>',
  vocab: ['<pad>', '<s>', '</s>', '<unk>', 'a</w>', 'b</w>', 'c</w>', 'd</w>', 'e</w>', 'f</w>', 'g</w>'],
  merges: [],
});

const CKPT = 'run/checkpoints/step-6.safetensors';
const OPTIM = 'run/checkpoints/step-6.optim.safetensors';
const train = (...args: string[]) => ['train', '--backend', 'wasm', ...args];
const resume = (...args: string[]) => train('--out', '{case}/run', '--resume', ...args);
const fork = (...args: string[]) => train('--fork', '{case}/run', '--out', '{case}/fork', ...args);
const decode = (...args: string[]) => ['decode', '--backend', 'wasm', '--run', '{case}/run', ...args];
const newRun = (config: string, ...args: string[]) =>
  train('--task', 'copy', '--config', config, '--out', '{case}/new', ...args);

export const MALFORMED: MalformedCase[] = [
  // 1. Everything is checked before anything is written, and a run folder appears whole or not at all.
  {
    name: 'a model config that fails validation after the data is ready',
    item: 1,
    args: newRun('{case}/heads3.json'),
    files: { 'heads3.json': micro({ heads: 3 }) },
    code: 1,
    error: '{case}/heads3.json: d_model: 16 is not divisible by heads=3',
  },
  {
    name: '--out is a folder left by a failed run (a vocabulary, no config.json)',
    item: 1,
    args: newRun('{case}/micro.json'),
    files: { 'micro.json': micro(), 'new/vocab.json': JSON.stringify({ kind: 'task', size: 11 }) },
    code: 1,
    error: '--out {case}/new: not empty (vocab.json) but holds no run (no config.json)',
  },
  // 2. The translation direction is named, never guessed wrong silently.
  {
    name: '--src-lang names a language without a train file',
    item: 2,
    args: train('--data', '{case}/data', '--src-lang', 'fr', '--config', '{case}/micro.json', '--out', '{case}/new'),
    files: { 'micro.json': micro(), 'data/train.en': 'a b\n', 'data/train.de': 'c d\n' },
    code: 1,
    error: '--src-lang fr: {case}/data/train.fr not found (found train.de, train.en)',
  },
  {
    name: '--src-lang and --tgt-lang are the same language',
    item: 2,
    args: train(
      '--data',
      '{case}/data',
      '--src-lang',
      'en',
      '--tgt-lang',
      'en',
      '--config',
      '{case}/micro.json',
      '--out',
      '{case}/new',
    ),
    files: { 'micro.json': micro(), 'data/train.en': 'a b\n', 'data/train.de': 'c d\n' },
    code: 1,
    error: '--src-lang and --tgt-lang are both "en"',
  },
  // 4. Decoding never shortens input silently.
  {
    name: 'a stdin line longer than the model’s positions',
    item: 4,
    run: true,
    args: decode(),
    stdin: `4 5\n${Array.from({ length: 40 }, (_, i) => 4 + (i % 7)).join(' ')}\n`,
    code: 1,
    error: "stdin line 2: 41 tokens (with </s>), more than the model's max_len of 32 positions",
  },
  // 5. A checkpoint is checked against the run that decodes it, and for finite values.
  {
    name: 'a checkpoint of a run with another vocabulary size',
    item: 5,
    run: true,
    files: { other: runWithVocabulary(29) },
    args: decode('--checkpoint', '{case}/other/checkpoints/step-6.safetensors'),
    code: 1,
    error: 'tensor "src_embed.weight" has shape [29,16], config expects [11,16]',
  },
  {
    name: 'a checkpoint of a run with another vocabulary of the same size',
    item: 5,
    run: true,
    files: {
      other: (path) => cpSync(join(path, '..', 'run'), path, { recursive: true }),
      'other/vocab.json': OTHER_BPE,
    },
    args: decode('--checkpoint', '{case}/other/checkpoints/step-6.safetensors'),
    code: 1,
    error: '{case}/other/checkpoints/step-6.safetensors: a checkpoint of another vocabulary',
  },
  {
    name: 'a checkpoint holding NaN',
    item: 5,
    run: true,
    files: { [CKPT]: poison('encoder.layers.0.linear1.weight') },
    args: decode(),
    stdin: '4 5\n',
    code: 1,
    error: `{case}/${CKPT}: tensor "encoder.layers.0.linear1.weight" holds NaN at index 0`,
  },
  // 6. Unknown names are refused with the nearest known one; a resume refuses what it cannot change.
  {
    name: 'a misspelt model field ("dropuot")',
    item: 6,
    args: newRun('{case}/typo.json'),
    files: { 'typo.json': micro({ dropout: undefined, dropuot: 0.1 }) },
    code: 1,
    error: '{case}/typo.json: dropuot: unknown field; did you mean "dropout"?',
  },
  {
    name: 'a misspelt training setting ("warmpu")',
    item: 6,
    args: newRun('{case}/typo.json'),
    files: { 'typo.json': micro({}, { warmup: undefined, warmpu: 4 }) },
    code: 1,
    error: '{case}/typo.json: training.warmpu: unknown field; did you mean "training.warmup"?',
  },
  {
    name: '--resume with --task (the run fixes its data)',
    item: 6,
    run: true,
    args: resume('--task', 'reverse'),
    code: 2,
    error: "train --resume: --task is fixed by the run's config.json",
  },
  {
    name: '--resume with --config (the run fixes its model)',
    item: 6,
    run: true,
    args: resume('--config', 'tiny'),
    code: 2,
    error: "train --resume: --config is fixed by the run's config.json",
  },
  {
    name: '--resume with --batch-tokens (the data position depends on it)',
    item: 6,
    run: true,
    args: resume('--batch-tokens', '300'),
    code: 2,
    error: 'train --resume: --batch-tokens is fixed when a run is created',
  },
  {
    name: '--resume --steps below the step the run is at (--steps is a total)',
    item: 6,
    run: true,
    args: resume('--steps', '4'),
    code: 2,
    error: "train --resume: --steps 4 is not past the run's step 6",
  },
  // 12. A failed command leaves no state behind.
  {
    name: 'a batch budget too small for the longest pair (a check that used to fail at step 1)',
    item: 12,
    args: newRun('{case}/micro.json', '--batch-tokens', '5'),
    files: { 'micro.json': micro() },
    code: 1,
    error: '{case}/micro.json: batch_tokens: 5 tokens cannot hold the longest pair',
  },
  {
    name: 'a resume to more steps from a checkpoint holding NaN (config.json keeps steps 6)',
    item: 12,
    run: true,
    files: { [CKPT]: poison('decoder.layers.0.norm3.weight', Infinity) },
    args: resume('--steps', '62'),
    code: 1,
    error: `{case}/${CKPT}: tensor "decoder.layers.0.norm3.weight" holds Infinity at index 0`,
  },
  // 13. Errors name the field and say what to do.
  {
    name: '--config names neither a preset nor a file',
    item: 13,
    args: newRun('medium'),
    code: 1,
    error: '--config medium: not found: neither a preset (tiny, small, base, big)',
  },
  {
    name: 'a model with a tensor larger than an array can hold',
    item: 13,
    args: newRun('{case}/huge.json'),
    files: { 'huge.json': micro({ d_model: 65536, d_ff: 8 }) },
    code: 1,
    error: '{case}/huge.json: tensor "encoder.layers.0.self_attn.in_proj_weight" [196608,65536] would hold',
  },
  {
    name: 'a model whose training state exceeds the wasm heap',
    item: 13,
    args: newRun('{case}/big.json'),
    files: { 'big.json': micro({ d_model: 8192, d_ff: 8192 }) },
    code: 1,
    error: '{case}/big.json: 1074.0 M parameters need at least 16.0 GiB to train (16 bytes each: weights, gradients',
  },
  {
    name: 'optimizer metadata whose data position is not a number',
    item: 13,
    run: true,
    files: { [OPTIM]: withMetadata({ epoch: 'x' }) },
    args: resume('--steps', '8'),
    code: 1,
    error: `{case}/${OPTIM}: __metadata__.epoch: expected a whole number ≥ 0, got "x"`,
  },
  {
    name: 'a checkpoint whose safetensors header is a JSON array',
    item: 13,
    run: true,
    files: { [CKPT]: rawHeader('[{"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}]') },
    args: decode(),
    stdin: '4 5\n',
    code: 1,
    error: `{case}/${CKPT}: header is a JSON array, expected an object of tensors`,
  },
  {
    name: 'bleu on an empty hypothesis file',
    item: 13,
    args: ['bleu', '--hyp', '{case}/empty.hyp', '--ref', '{case}/empty.ref'],
    files: { 'empty.hyp': '', 'empty.ref': '' },
    code: 2,
    error: 'bleu: --hyp {case}/empty.hyp has no lines: nothing to score',
  },
  // 3. A resume never discards what is saved: a broken optimizer file is refused, not skipped.
  {
    name: 'the newest optimizer file is truncated',
    item: 3,
    run: true,
    files: { [OPTIM]: (path) => writeFileSync(path, readFileSync(path).subarray(0, 100)) },
    args: resume('--steps', '8'),
    code: 1,
    error: `{case}/${OPTIM}: header length`,
  },
  {
    name: 'the newest optimizer file is gone and the weights of that step are broken',
    item: 3,
    run: true,
    files: { [OPTIM]: remove, [CKPT]: poison('src_embed.weight') },
    args: resume('--steps', '8'),
    code: 1,
    error: `{case}/${CKPT}: tensor "src_embed.weight" holds NaN`,
  },
  // issue 13: a fork is made whole from a checked parent, or not at all.
  {
    name: '--fork with --task (the parent fixes its data)',
    item: 'fork',
    run: true,
    args: fork('--task', 'reverse', '--steps', '10'),
    code: 2,
    error: "train --fork: --task comes from the parent run's config.json",
  },
  {
    name: '--fork with --batch-tokens (the data position depends on it)',
    item: 'fork',
    run: true,
    args: fork('--batch-tokens', '300', '--steps', '10'),
    code: 2,
    error: 'train --fork: --batch-tokens is fixed by the parent run',
  },
  {
    name: '--freeze-heads without --fork',
    item: 'fork',
    args: train('--task', 'copy', '--out', '{case}/run2', '--freeze-heads', 'cross:0.0'),
    code: 2,
    error: 'train: --freeze-heads changes a fork: give --fork PARENT_RUN[@STEP] too',
  },
  {
    name: '--fork at a step without a checkpoint',
    item: 'fork',
    run: true,
    args: train('--fork', '{case}/run@4', '--out', '{case}/fork', '--steps', '10'),
    code: 1,
    error: '--fork {case}/run@4: no checkpoint at step 4; it has steps 3, 6',
  },
  {
    name: '--fork freezing a head the model lacks',
    item: 'fork',
    run: true,
    args: fork('--freeze-heads', 'cross:3.0', '--steps', '10'),
    code: 1,
    error: '--freeze-heads: cross:3.0 does not exist: cross has layers 0–0 and heads 0–1',
  },
  {
    name: '--fork of the newest checkpoint with no steps past it',
    item: 'fork',
    run: true,
    args: fork('--mask-heads', 'cross:0.0'),
    code: 1,
    error: '--steps: the fork starts at step 6 and would train to 6; give a total past 6',
  },
  {
    name: '--fork with a dropout outside [0, 1)',
    item: 'fork',
    run: true,
    args: fork('--dropout', '1.5', '--steps', '10'),
    code: 2,
    error: '--dropout: expected a number in [0, 1), got "1.5"',
  },
  {
    name: '--fork into the parent itself',
    item: 'fork',
    run: true,
    args: train('--fork', '{case}/run', '--out', '{case}/run', '--steps', '10'),
    code: 1,
    error: '--out {case}/run: already holds a run',
  },
];

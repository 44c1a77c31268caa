/**
 * What the rows of bad input share (malformed-inputs.ts, hostile-files.ts, bounded-sizes.ts,
 * silent-inputs.ts): the row type, the micro model's config, and what a row can plant in its folder.
 *
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
  /** The issue it belongs to (12 when absent). */
  issue?: number;
  /** The item of that issue it belongs to, or `fork`: issue 13's train --fork. */
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
export function poison(tensor: string, value = NaN): Plant {
  return (path) => {
    const { tensors, metadata } = readSafetensors(path);
    tensors.get(tensor)!.data[0] = value;
    writeSafetensors(path, tensors, metadata);
  };
}

/** Replaces metadata entries of a safetensors file (writeSafetensors keeps them as given). */
export function withMetadata(patch: Record<string, string>): Plant {
  return (path) => {
    const { tensors, metadata } = readSafetensors(path);
    writeSafetensors(path, tensors, { ...metadata, ...patch });
  };
}

/** A file whose safetensors header is the given JSON text (and no data). */
export function rawHeader(json: string): Plant {
  return (path) => {
    const header = Buffer.from(json);
    const length = Buffer.alloc(8);
    length.writeBigUInt64LE(BigInt(header.length));
    writeFileSync(path, Buffer.concat([length, header]));
  };
}

export const remove: Plant = (path) => rmSync(path);

/**
 * Another run: a copy of {case}/run whose vocabulary has `size` tokens, its config.json and the
 * rows of its step-6 checkpoint's embeddings and generator grown to match.
 */
export function runWithVocabulary(size: number): Plant {
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
export const OTHER_BPE = JSON.stringify({
  format: 'attention-debugger-bpe',
  version: 1,
  endOfWord: '</w>',
  vocab: ['<pad>', '<s>', '</s>', '<unk>', 'a</w>', 'b</w>', 'c</w>', 'd</w>', 'e</w>', 'f</w>', 'g</w>'],
  merges: [],
});

export const CKPT = 'run/checkpoints/step-6.safetensors';
export const OPTIM = 'run/checkpoints/step-6.optim.safetensors';
export const train = (...args: string[]) => ['train', '--backend', 'wasm', ...args];
export const resume = (...args: string[]) => train('--out', '{case}/run', '--resume', ...args);
export const fork = (...args: string[]) => train('--fork', '{case}/run', '--out', '{case}/fork', ...args);
export const decode = (...args: string[]) => ['decode', '--backend', 'wasm', '--run', '{case}/run', ...args];
export const newRun = (config: string, ...args: string[]) =>
  train('--task', 'copy', '--config', config, '--out', '{case}/new', ...args);

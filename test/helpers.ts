/** Shared test helpers: fixtures, numeric comparison, and which backends this machine runs. */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { test } from 'node:test';
import { dirname, join } from 'node:path';
import { initBackend, type BackendName } from '../src/engine/backend';
import { Transformer } from '../src/engine/model/transformer';
import type { TransformerConfig } from '../src/engine/model/config';
import { attentionOfPairs } from '../src/engine/inspect/attentionOfPairs';

/** The repository root: the nearest folder above this (bundled) test file with a package.json. */
function findRepo(from: string): string {
  for (let dir = from; dir !== dirname(dir); dir = dirname(dir)) if (existsSync(join(dir, 'package.json'))) return dir;
  throw new Error(`no package.json above ${from}`);
}
export const REPO = findRepo(__dirname);
export const GOLDEN = join(REPO, 'test', 'fixtures', 'golden');

export function readJson<T>(path: string): T {
  return JSON.parse(readFileSync(path, 'utf8')) as T;
}

/** Largest |a − b| over two nested arrays of equal shape; throws on a shape mismatch. */
export function maxAbsDiff(a: unknown, b: unknown, path = ''): number {
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) {
      throw new Error(
        `shape mismatch at ${path || 'root'}: ${Array.isArray(a) ? a.length : typeof a} vs ${Array.isArray(b) ? b.length : typeof b}`,
      );
    }
    return a.reduce((m: number, x, i) => Math.max(m, maxAbsDiff(x, b[i], `${path}[${i}]`)), 0);
  }
  return Math.abs((a as number) - (b as number));
}

/**
 * The skips this run allows: ATTENTION_DEBUGGER_ALLOW_SKIP=webgpu,gettext-de (test/README.md, "Skips").
 * Empty by default, so a test that cannot run here fails; `npm test` and .ci/run allow none.
 */
export function allowedSkips(): Set<string> {
  return new Set(
    (process.env.ATTENTION_DEBUGGER_ALLOW_SKIP ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  );
}

/** What a skip needs: the test's context (a skip is counted) or none (the skip is registered here). */
interface Skippable {
  skip(message?: string): void;
}

/**
 * A test that cannot run on this machine: skipped (and counted as skipped, its message starting
 * with `key:`) when ATTENTION_DEBUGGER_ALLOW_SKIP names `key`, otherwise a failure that says how to
 * allow it. Returns only when skipped: the caller returns right after.
 */
export function cannotRun(t: Skippable, key: string, why: string): void {
  if (!allowedSkips().has(key))
    throw new Error(`${why}: this test cannot run here (ATTENTION_DEBUGGER_ALLOW_SKIP=${key} lets it skip)`);
  t.skip(`${key}: ${why}`);
}

/**
 * Backends the tests exercise: webgpu (Dawn on lavapipe on CPU-only machines; scripts/setup-system.sh
 * installs it), wasm and cpu. A webgpu that does not load fails the calling test unless the run allows
 * the skip "webgpu"; then a skipped subtest "webgpu" of the calling test says so and counts it.
 */
export async function testBackends(): Promise<BackendName[]> {
  const names: BackendName[] = ['wasm', 'cpu'];
  try {
    await initBackend('webgpu');
    names.unshift('webgpu');
  } catch (err) {
    // test() called inside a running test adds a subtest to it (node:test's async context).
    cannotRun({ skip: (message) => void test('webgpu', { skip: message ?? true }) }, 'webgpu', (err as Error).message);
  }
  return names;
}

type Nest4 = number[][][][];
export interface NestedAttention {
  encoder_self: Nest4[]; // [B][L][H][S][S]
  decoder_self: Nest4[]; // [B][L][H][T][T]
  cross: Nest4[]; // [B][L][H][T][S]
  log_probs: number[][][]; // [B][T][V]
}

/** Splits a flat row-major buffer into nested arrays of `shape` (written here, apart from the engine's exports). */
export function unflatten(data: ArrayLike<number>, shape: number[]): unknown {
  if (shape.length === 1) return Array.from({ length: shape[0] }, (_, i) => data[i]);
  const size = shape.slice(1).reduce((a, b) => a * b, 1);
  return Array.from({ length: shape[0] }, (_, i) =>
    unflatten(Array.prototype.slice.call(data, i * size, (i + 1) * size), shape.slice(1)),
  );
}

/** attentionOfPairs as nested arrays, in the shape the golden fixtures hold (expected.json). */
export async function nestedAttention(
  model: Transformer,
  src: number[][],
  tgt: number[][],
  heads?: Parameters<typeof attentionOfPairs>[3],
): Promise<NestedAttention> {
  const pairs = await attentionOfPairs(model, src, tgt, heads);
  const V = model.config.tgt_vocab;
  const kind = (k: string) =>
    pairs.map((p) => {
      const m = p.maps.find((x) => x.kind === k)!;
      return unflatten(m.weights, m.shape) as Nest4;
    });
  return {
    encoder_self: kind('encoder_self'),
    decoder_self: kind('decoder_self'),
    cross: kind('cross'),
    log_probs: pairs.map((p, b) => unflatten(p.logProbs, [tgt[b].length, V]) as number[][]),
  };
}

/**
 * A small model for tests that build one by hand: d_model 16, 2 heads, 1 + 1 layers, vocab 12,
 * no dropout, post-LN, sinusoidal positions, shared embeddings, pad 0 / BOS 1 / EOS 2; `overrides`
 * says what a test needs otherwise.
 */
export function smallConfig(overrides: Partial<TransformerConfig> = {}): TransformerConfig {
  return {
    d_model: 16,
    heads: 2,
    d_ff: 32,
    encoder_layers: 1,
    decoder_layers: 1,
    src_vocab: 12,
    tgt_vocab: 12,
    dropout: 0,
    norm_first: false,
    final_norm: false,
    positional: 'sinusoidal',
    max_len: 16,
    share_embeddings: true,
    pad_id: 0,
    bos_id: 1,
    eos_id: 2,
    ...overrides,
  };
}

/** Two sentence pairs (one padded) as a training batch: what the step, loss and leak tests feed a smallConfig model. */
export const TOY_BATCH = {
  src: [
    [5, 6, 7, 2],
    [8, 9, 2, 0],
  ],
  tgtIn: [
    [1, 7, 6, 5],
    [1, 9, 8, 0],
  ],
  tgtOut: [
    [7, 6, 5, 2],
    [9, 8, 2, 0],
  ],
};

/**
 * A model that learns the copy task of 1–10 symbols in 600 steps on wasm (~190 of 200 test sequences
 * exact, greedy): d_model 32, 2 heads, 1 + 1 layers, no dropout. Writes the config file, returns its path.
 */
export function copyConfig(dir: string, training: Record<string, number> = {}): string {
  return writeConfig(join(dir, 'copy.json'), { d_model: 32, heads: 2, d_ff: 64, layers: 1 }, training);
}

/** Learns writeTextCorpus: 2 + 2 layers, 4 heads (19 of its 20 test sentences exact by step 1000). */
export function textConfig(dir: string, training: Record<string, number> = {}): string {
  return writeConfig(join(dir, 'text.json'), { d_model: 32, heads: 4, d_ff: 64, layers: 2 }, training);
}

function writeConfig(
  path: string,
  shape: { d_model: number; heads: number; d_ff: number; layers: number },
  training: Record<string, number>,
): string {
  const { layers, ...rest } = shape;
  const model = { ...rest, encoder_layers: layers, decoder_layers: layers, dropout: 0, norm_first: false };
  const common = { final_norm: false, positional: 'sinusoidal', max_len: 32, share_embeddings: true };
  const defaults = { steps: 600, warmup: 60, lr_factor: 1, batch_tokens: 400, label_smoothing: 0.1, clip_norm: 0 };
  const more = { seed: 3, checkpoint_every: 150, eval_every: 150, snapshot_every: 0, vocab_size: 60, max_length: 20 };
  const config = { ...model, ...common, training: { ...defaults, ...more, bleu_sentences: 0, ...training } };
  writeFileSync(path, JSON.stringify(config));
  return path;
}

/**
 * A parallel corpus in `dir` (train/valid/test .en and .xx; 600 / 20 / 20 pairs from a fixed generator):
 * 2–4 distinct words of 8, the first maybe followed by a comma, ending in "." or "!"; the target is the
 * source with its final "." and "!" swapped. Punctuation sits against the words, so only detokenized
 * output can equal a target, and no target equals its source.
 */
export function writeTextCorpus(dir: string): Record<'train' | 'valid' | 'test', { src: string; tgt: string }[]> {
  const words = ['red', 'blue', 'cat', 'dog', 'sees', 'runs', 'big', 'small'];
  let s = 7;
  const rnd = () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
  const pair = () => {
    const pool = [...words];
    const w = Array.from(
      { length: 2 + Math.floor(rnd() * 3) },
      () => pool.splice(Math.floor(rnd() * pool.length), 1)[0],
    );
    if (rnd() < 0.5) w[0] += ',';
    const bang = rnd() < 0.5;
    return { src: w.join(' ') + (bang ? '!' : '.'), tgt: w.join(' ') + (bang ? '.' : '!') };
  };
  const out = { train: [], valid: [], test: [] } as Record<'train' | 'valid' | 'test', { src: string; tgt: string }[]>;
  for (const [split, n] of [
    ['train', 600],
    ['valid', 20],
    ['test', 20],
  ] as const) {
    out[split] = Array.from({ length: n }, pair);
    writeFileSync(join(dir, `${split}.en`), out[split].map((p) => `${p.src}\n`).join(''));
    writeFileSync(join(dir, `${split}.xx`), out[split].map((p) => `${p.tgt}\n`).join(''));
  }
  return out;
}

/**
 * Corpus BLEU as sacreBLEU 2 computes it by default (13a tokens, exp smoothing, closest reference
 * length), written here from its definition, apart from src/engine/metrics; only for text of ASCII
 * letters, digits, spaces and , . ! ? ; : (where 13a is these few rules). `refs[k][i]` is reference k
 * of sentence i. `formatted` is sacreBLEU's line (round half to even, as Python's format).
 */
export function sacreBleu(hyps: string[], refs: string[][]): { score: number; formatted: string } {
  const tok = (line: string): string[] => {
    if (!/^[A-Za-z0-9 ,.!?;:]*$/.test(line)) throw new Error(`sacreBleu: not for ${JSON.stringify(line)}`);
    const t = ` ${line} `
      .replace(/([!?;:])/g, ' $1 ')
      .replace(/([^0-9])([.,])/g, '$1 $2 ')
      .replace(/([.,])([^0-9])/g, ' $1 $2');
    return t.split(/\s+/).filter(Boolean);
  };
  const grams = (w: string[], n: number) => {
    const m = new Map<string, number>();
    for (let i = 0; i + n <= w.length; i++)
      m.set(w.slice(i, i + n).join(' '), (m.get(w.slice(i, i + n).join(' ')) ?? 0) + 1);
    return m;
  };
  const correct = [0, 0, 0, 0];
  const total = [0, 0, 0, 0];
  let sysLen = 0;
  let refLen = 0;
  hyps.forEach((h, i) => {
    const hw = tok(h);
    const rw = refs.map((r) => tok(r[i]!));
    sysLen += hw.length;
    // The closest reference length; a tie goes to the shorter.
    refLen += rw
      .map((r) => r.length)
      .reduce((a, b) =>
        Math.abs(b - hw.length) < Math.abs(a - hw.length) ||
        (Math.abs(b - hw.length) === Math.abs(a - hw.length) && b < a)
          ? b
          : a,
      );
    for (let n = 1; n <= 4; n++) {
      const most = new Map<string, number>();
      for (const r of rw) for (const [g, c] of grams(r, n)) most.set(g, Math.max(most.get(g) ?? 0, c));
      for (const [g, c] of grams(hw, n)) correct[n - 1]! += Math.min(c, most.get(g) ?? 0);
      total[n - 1]! += Math.max(0, hw.length - n + 1);
    }
  });
  const bp = sysLen < refLen ? (sysLen > 0 ? Math.exp(1 - refLen / sysLen) : 0) : 1;
  const p = [0, 0, 0, 0];
  let score = 0;
  if (correct.some((c) => c > 0)) {
    let smooth = 1;
    for (let n = 0; n < 4 && total[n]! > 0; n++)
      p[n] = correct[n]! > 0 ? (100 * correct[n]!) / total[n]! : 100 / ((smooth *= 2) * total[n]!);
    score = bp * Math.exp(p.reduce((a, x) => a + (x === 0 ? -9999999999 : Math.log(x)), 0) / 4);
  }
  const f = (x: number, d: number): string => {
    const scaled = x * 10 ** d;
    const tie = Number.isInteger(scaled * 2) && !Number.isInteger(scaled);
    return tie ? ((Math.floor(scaled) + (Math.floor(scaled) % 2)) / 10 ** d).toFixed(d) : x.toFixed(d);
  };
  const ratio = refLen ? sysLen / refLen : 0;
  const formatted =
    `BLEU = ${f(score, 2)} ${p.map((x) => f(x, 1)).join('/')} ` +
    `(BP = ${f(bp, 3)} ratio = ${f(ratio, 3)} hyp_len = ${sysLen} ref_len = ${refLen})`;
  return { score, formatted };
}

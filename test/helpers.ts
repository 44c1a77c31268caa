/** Shared test helpers: fixtures, numeric comparison, and which backends this machine runs. */
import { existsSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { dirname, join } from 'node:path';
import { initBackend, type BackendName } from '../src/engine/backend';
import { Transformer } from '../src/engine/model/transformer';
import type { TransformerConfig } from '../src/engine/model/config';
import { Adam } from '../src/engine/train/adam';
import { trainStep } from '../src/engine/train/step';
import { attentionOfPairs } from '../src/engine/inspect';

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

/**
 * One training step of a 1+1-layer, d 16 model on a fixed two-sentence batch (no dropout) on the
 * active backend; the loss and the source embedding after the update, to compare backends.
 */
export async function tinyTrainingStep(): Promise<{ loss: number; after: number[][] }> {
  const config = {
    d_model: 16,
    heads: 4,
    d_ff: 32,
    encoder_layers: 1,
    decoder_layers: 1,
    src_vocab: 20,
    tgt_vocab: 20,
    dropout: 0,
    norm_first: false,
    final_norm: false,
    positional: 'sinusoidal' as const,
    max_len: 16,
    share_embeddings: true,
    pad_id: 0,
    bos_id: 1,
    eos_id: 2,
  };
  const batch = {
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
  const model = new Transformer(config, undefined, 3);
  const adam = new Adam();
  const r = await trainStep(model, adam, batch, { lr: 1e-2, labelSmoothing: 0.1 });
  const after = (await model.params.get('src_embed.weight')!.array()) as number[][];
  model.dispose();
  adam.dispose();
  return { loss: r.loss, after };
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

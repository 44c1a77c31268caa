/**
 * Our own GEMM on webgpu (backend/webgpu/gemm.ts; Dawn on lavapipe here, so the sizes are small):
 * a hand-worked 2×3·3×2 product with every transpose by addressing, bias and ReLU; against tfjs's
 * matMul on webgpu at sizes that divide no tile (1, 3, 17, 65, 130), K = 1, every transpose, bias
 * and ReLU, under several tile shapes, vec4 reads on and off; the tile checks; and the switch
 * ATTENTION_DEBUGGER_GEMM (gemmSwitch.ts), whose unknown values are an error naming it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { checkTiles, gemm, type GemmTiles, LARGE_TILES, SMALL_TILES } from '../../src/engine/backend/webgpu/gemm';
import { GEMM_ENV, gemmFromEnv, usesOwnGemm } from '../../src/engine/backend/webgpu/gemmSwitch';
import type { WebgpuBackend } from '../../src/engine/backend/webgpu/program';
import { filled, leakFree, useWebgpu } from './kernelHelpers';

/** gemm(...) read back as a Float32Array (its output disposed). */
async function ownProduct(
  a: tf.Tensor,
  b: tf.Tensor,
  ta: boolean,
  tb: boolean,
  bias?: tf.Tensor,
  relu = false,
  tiles?: GemmTiles,
): Promise<Float32Array> {
  const info = gemm(tf.backend() as WebgpuBackend, a, b, ta, tb, bias, relu, tiles);
  const out = tf.engine().makeTensorFromTensorInfo(info);
  const values = (await out.data()) as Float32Array;
  out.dispose();
  return values;
}

/** tfjs's product on the active backend: op(a)·op(b) (+ bias) (then ReLU), unfused ops. */
const tfjsProduct = (a: tf.Tensor, b: tf.Tensor, ta: boolean, tb: boolean, bias?: tf.Tensor, relu = false) =>
  tf.tidy(() => {
    let y = tf.matMul(a, b, ta, tb);
    if (bias) y = tf.add(y, bias);
    return relu ? tf.relu(y) : y;
  });

/** The stored shape of an operand whose op is [rows, cols]: transposed, [cols, rows]. */
const stored = (rows: number, cols: number, t: boolean) => (t ? [cols, rows] : [rows, cols]);

const TRANSPOSES = [
  [false, false],
  [true, false],
  [false, true],
  [true, true],
] as const;
const PLAIN_AND_FUSED = [
  [false, false],
  [true, true],
] as const;

test('webgpu gemm: a hand-worked 2×3·3×2 product, every transpose by addressing, with bias and ReLU', async (t) => {
  if (!(await useWebgpu(t))) return;
  // [1 2 3; 4 5 6]·[7 8; 9 10; 11 12] = [58 64; 139 154]; + [1, −100] then ReLU → [59 0; 140 54]
  const a = [1, 2, 3, 4, 5, 6];
  const aT = [1, 4, 2, 5, 3, 6];
  const b = [7, 8, 9, 10, 11, 12];
  const bT = [7, 9, 11, 8, 10, 12];
  const bias = tf.tensor1d([1, -100]);
  for (const [ta, tb] of TRANSPOSES) {
    const A = tf.tensor2d(ta ? aT : a, stored(2, 3, ta) as [number, number]);
    const B = tf.tensor2d(tb ? bT : b, stored(3, 2, tb) as [number, number]);
    const what = `transposeA ${ta}, transposeB ${tb}`;
    await leakFree(what, async () => {
      assert.deepEqual(Array.from(await ownProduct(A, B, ta, tb)), [58, 64, 139, 154], what);
      assert.deepEqual(Array.from(await ownProduct(A, B, ta, tb, bias, true)), [59, 0, 140, 54], `${what}, bias, ReLU`);
    });
    tf.dispose([A, B]);
  }
  bias.dispose();
});

/**
 * Our product equals tfjs's at [m, n, k] under `tiles`, for each of `transposes` and each [bias,
 * ReLU] of `epilogues` (each a pipeline to compile: lavapipe compiles slowly, so the lists are short).
 */
async function sameAsTfjs(
  [m, n, k]: readonly [number, number, number],
  tiles?: GemmTiles,
  transposes: readonly (readonly [boolean, boolean])[] = TRANSPOSES,
  epilogues: readonly (readonly [boolean, boolean])[] = PLAIN_AND_FUSED,
) {
  const bias = filled([n], m + n, 2);
  for (const [ta, tb] of transposes) {
    const a = filled(stored(m, k, ta), 3 * m + k);
    const b = filled(stored(k, n, tb), 5 * n + k);
    for (const [withBias, relu] of epilogues) {
      const want = tfjsProduct(a, b, ta, tb, withBias ? bias : undefined, relu);
      const expected = (await want.data()) as Float32Array;
      want.dispose();
      const got = await ownProduct(a, b, ta, tb, withBias ? bias : undefined, relu, tiles);
      const what = `[${m}, ${n}, ${k}] transposeA ${ta} transposeB ${tb} bias ${withBias} relu ${relu} tiles ${JSON.stringify(tiles ?? 'default')}`;
      assert.equal(got.length, m * n, what);
      const scale = Math.max(1, ...Array.from(expected, Math.abs));
      let worst = 0;
      got.forEach((v, i) => (worst = Math.max(worst, Math.abs(v - expected[i]!))));
      assert.ok(worst <= 1e-5 * scale, `${what}: max |own − tfjs| = ${worst}, scale ${scale}`);
    }
    tf.dispose([a, b]);
  }
  bias.dispose();
}

test('webgpu gemm equals tfjs’s matMul at sizes that divide no tile, K = 1, every transpose, bias and ReLU', async (t) => {
  if (!(await useWebgpu(t))) return;
  // Each of 1, 3, 17, 65, 130 as M, N and K; K = 1; a vec4-aligned shape (every side a multiple of 4).
  const shapes = [
    [1, 3, 17],
    [17, 65, 1],
    [65, 130, 3],
    [130, 17, 65],
    [3, 1, 130],
    [130, 130, 17],
    [36, 68, 44],
  ] as const;
  await leakFree('gemm against tfjs', async () => {
    for (const shape of shapes) await sameAsTfjs(shape);
  });
});

test('webgpu gemm equals tfjs’s matMul under other tiles: 128×128 by 8×8, BK 4 and 16, TM ≠ TN, vec4 off by BK', async (t) => {
  if (!(await useWebgpu(t))) return;
  const tiles: GemmTiles[] = [
    LARGE_TILES,
    SMALL_TILES,
    { bm: 64, bn: 64, bk: 16, tm: 4, tn: 4 },
    { bm: 64, bn: 128, bk: 4, tm: 8, tn: 4 },
    { bm: 16, bn: 16, bk: 2, tm: 2, tn: 2 }, // BK 2: vec4 off along k even where K allows it
  ];
  // One transpose each (rotating) with bias and ReLU, scalar and vec4 reads: a pipeline per case.
  for (const [i, tile] of tiles.entries()) {
    const transposes = [TRANSPOSES[i % 4]!];
    await sameAsTfjs([130, 67, 33], tile, transposes, [[true, true]]);
    await sameAsTfjs([36, 68, 44], tile, transposes, [[true, true]]);
  }
});

test('gemm tiles beyond WebGPU’s default limits or not dividing evenly are refused, naming the field', () => {
  assert.doesNotThrow(() => checkTiles(LARGE_TILES));
  assert.throws(() => checkTiles({ ...LARGE_TILES, bk: 16 }), /16 KiB/);
  assert.throws(() => checkTiles({ ...LARGE_TILES, tm: 4 }), /512 threads/);
  assert.throws(() => checkTiles({ ...LARGE_TILES, tn: 3 }), /bn 128 is not a multiple of tn 3/);
  assert.throws(() => checkTiles({ ...LARGE_TILES, bm: 0 }), /bm must be a positive integer/);
});

test('ATTENTION_DEBUGGER_GEMM: own or tfjs (the default); another value is an error naming the variable', () => {
  const before = usesOwnGemm();
  try {
    gemmFromEnv({ [GEMM_ENV]: 'own' });
    assert.equal(usesOwnGemm(), true);
    gemmFromEnv({ [GEMM_ENV]: 'tfjs' });
    assert.equal(usesOwnGemm(), false);
    gemmFromEnv({ [GEMM_ENV]: 'own' });
    gemmFromEnv({});
    assert.equal(usesOwnGemm(), false, 'unset: tfjs');
    assert.throws(() => gemmFromEnv({ [GEMM_ENV]: 'cublas' }), /ATTENTION_DEBUGGER_GEMM: unknown value "cublas"/);
  } finally {
    gemmFromEnv({ [GEMM_ENV]: before ? 'own' : 'tfjs' });
  }
});

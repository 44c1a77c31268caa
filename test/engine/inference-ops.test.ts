/**
 * The fused decoding kernels on wasm (backend/inferenceOps.ts; native/blas.c linear, native/ops.c
 * logSoftmax, addLayerNorm, attendOne) against the tfjs ops they replace, on the same backend:
 * shapes with tails that are not a multiple of the kernels' four lanes, masks with −∞, ReLU, and
 * what an incremental decoding step runs (no wasm matMul, softmax or LayerNorm kernels). Decoding's
 * outputs against full recomputation are test/decode/incremental.test.ts's.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { initBackend } from '../../src/engine/backend';
import {
  fusedAddLayerNorm,
  fusedAttendOne,
  fusedGreedyPick,
  fusedLinear,
  fusedLinearSplit,
  fusedLogSoftmax,
  gatherAppend,
  hasInferenceKernels,
} from '../../src/engine/backend/inferenceOps';
import { scaledDotProductAttention } from '../../src/engine/model/attention';
import { configFromPreset } from '../../src/engine/model/config';
import { LAYER_NORM_EPS, layerNorm } from '../../src/engine/model/layers';
import { Transformer } from '../../src/engine/model/transformer';
import { IncrementalModel } from '../../src/engine/decode/incremental';
import { pickGreedy } from '../../src/engine/decode/search';
import { REPO } from '../helpers';

before(async () => {
  await initBackend('wasm');
});

async function close(got: tf.Tensor, want: tf.Tensor, tol: number, what: string): Promise<void> {
  assert.deepEqual(got.shape, want.shape, `${what}: shape`);
  const [g, w] = [await got.data(), await want.data()];
  for (let i = 0; i < g.length; i++) {
    const ok = g[i] === w[i] || Math.abs(g[i]! - w[i]!) <= tol * Math.max(1, Math.abs(w[i]!));
    assert.ok(ok, `${what}: element ${i}: ${g[i]} vs ${w[i]}`);
  }
}

test('the fused kernels are registered on wasm', () => {
  assert.ok(hasInferenceKernels());
});

test('linear: x·Wᵀ + b (and ReLU) in one kernel equals matMul + add', async () => {
  const x = tf.randomNormal([3, 5, 37], 0, 1, 'float32', 1); // [3, 5, in]
  const w = tf.randomNormal([19, 37], 0, 1, 'float32', 2); // [out, in]
  const b = tf.randomNormal([19], 0, 1, 'float32', 3);
  const want = tf.reshape(tf.add(tf.matMul(tf.reshape(x, [15, 37]), w, false, true), b), [3, 5, 19]);
  await close(fusedLinear(x, w, b), want, 1e-5, 'linear');
  await close(fusedLinear(x, w, b, true), tf.relu(want), 1e-5, 'linear + relu');
  // A NaN input stays NaN through ReLU, as tfjs's Relu keeps it.
  const nan = await fusedLinear(tf.tensor2d([[NaN, 1]]), tf.tensor2d([[1, 1]]), tf.tensor1d([0]), true).data();
  assert.ok(Number.isNaN(nan[0]));
});

test('linear split into parts, and a block of rows of W, equal one linear sliced', async () => {
  const x = tf.randomNormal([4, 1, 24], 0, 1, 'float32', 20); // [B, 1, in]
  const w = tf.randomNormal([3 * 10, 24], 0, 1, 'float32', 21); // [3·out, in]
  const b = tf.randomNormal([30], 0, 1, 'float32', 22);
  const parts = fusedLinearSplit(x, w, b, 3);
  const whole = fusedLinear(x, w, b);
  assert.equal(parts.length, 3);
  for (let p = 0; p < 3; p++) await close(parts[p]!, tf.slice(whole, [0, 0, 10 * p], [4, 1, 10]), 0, `part ${p}`);
  // One block of rows read in place (W^K of the stack), as the block sliced out (a product of another
  // width: OpenBLAS may round the last bit differently).
  await close(fusedLinear(x, w, b, false, [10, 10]), tf.slice(whole, [0, 0, 10], [4, 1, 10]), 1e-6, 'rows 10…19');
  assert.throws(() => fusedLinear(x, w, b, false, [25, 10]), /rows 25…34 of a \[30,24\] weight/);
});

test('greedy pick: logSoftmax’s argmax without BOS and PAD, lowest id on ties, EOS’s log-prob', async () => {
  const [bos, pad, eos] = [1, 0, 2];
  const rows = [
    [9, 9, 0, 3, 5, 5, 1], // BOS and PAD highest: never chosen; 4 and 5 tie: 4
    [-Infinity, 0, 7, 7, 7, 2, 7], // ties of three: the lowest id (2, EOS itself)
    [0, 0, -Infinity, -Infinity, -Infinity, -Infinity, -Infinity], // only BOS and PAD finite: the first index
    [0, 0, 1e30, -1e30, 80, 3, 80.00001], // a huge logit
  ];
  const logits = tf.tensor2d(rows);
  const V = rows[0]!.length;
  const got = await fusedGreedyPick(logits, bos, pad, eos)!.data();
  const full = (await fusedLogSoftmax(logits).data()) as Float32Array;
  for (let r = 0; r < rows.length; r++) [bos, pad].forEach((f) => (full[r * V + f] = -Infinity));
  const want = pickGreedy({ logProbs: full, vocab: V, state: null }, rows.length, eos);
  assert.deepEqual([...want.tokens], [4, 2, 0, 2]);
  for (let r = 0; r < rows.length; r++) {
    assert.equal(got[3 * r], want.tokens[r], `row ${r}: token`);
    assert.equal(got[3 * r + 1], want.logProbs[r], `row ${r}: log-prob`);
    assert.equal(got[3 * r + 2], want.eosLogProbs[r], `row ${r}: EOS log-prob`);
  }
  // A random batch with V not a multiple of 4: the same, to the bit.
  const x = tf.mul(tf.randomNormal([5, 8003], 0, 1, 'float32', 23), 5);
  const lp = (await fusedLogSoftmax(x).data()) as Float32Array;
  for (let r = 0; r < 5; r++) [bos, pad].forEach((f) => (lp[r * 8003 + f] = -Infinity));
  const w2 = pickGreedy({ logProbs: lp, vocab: 8003, state: null }, 5, eos);
  const g2 = await fusedGreedyPick(x as tf.Tensor2D, bos, pad, eos)!.data();
  for (let r = 0; r < 5; r++)
    assert.deepEqual([g2[3 * r], g2[3 * r + 1], g2[3 * r + 2]], [w2.tokens[r], w2.logProbs[r], w2.eosLogProbs[r]]);
});

test('logSoftmax over [rows, V] with a V that is not a multiple of 4 equals tf.logSoftmax', async () => {
  const x = tf.mul(tf.randomNormal([4, 8003], 0, 1, 'float32', 4), 20);
  await close(fusedLogSoftmax(x), tf.logSoftmax(x), 1e-5, 'logSoftmax');
  const spiky = tf.tensor2d([[0, -1e30, 80, 3, -Infinity]]);
  await close(fusedLogSoftmax(spiky), tf.logSoftmax(spiky), 1e-6, 'logSoftmax with −∞ and a large logit');
});

test('LayerNorm(x + r) and LayerNorm(x) in one kernel equal layerNorm', async () => {
  const x = tf.randomNormal([2, 3, 30], 2, 3, 'float32', 5);
  const r = tf.randomNormal([2, 3, 30], 0, 1, 'float32', 6);
  const norm = { gain: tf.randomNormal([30], 1, 0.5, 'float32', 7), bias: tf.randomNormal([30], 0, 1, 'float32', 8) };
  const fallback = (z: tf.Tensor): tf.Tensor => layerNorm(norm, z);
  const plain = fusedAddLayerNorm(x, undefined, norm.gain, norm.bias, LAYER_NORM_EPS, fallback);
  await close(plain, layerNorm(norm, x), 1e-5, 'LayerNorm(x)');
  const added = fusedAddLayerNorm(x, r, norm.gain, norm.bias, LAYER_NORM_EPS, fallback);
  await close(added, layerNorm(norm, tf.add(x, r)), 1e-5, 'LayerNorm(x + r)');
});

test('one query’s attention, with and without a key mask, equals scaledDotProductAttention', async () => {
  const [b, h, s, dk] = [3, 2, 7, 12]; // dk not a multiple of 8: the dot product's tail
  const q = tf.randomNormal([b, h, 1, dk], 0, 1, 'float32', 9);
  const k = tf.randomNormal([b, h, s, dk], 0, 1, 'float32', 10);
  const v = tf.randomNormal([b, h, s, dk], 0, 1, 'float32', 11);
  const mask = tf.tensor4d(
    Array.from({ length: b * s }, (_, i) => (i % s >= s - 2 * Math.floor(i / s) ? -Infinity : 0)), // sentence n: 2n pad keys
    [b, 1, 1, s],
  );
  await close(fusedAttendOne(q, k, v)!, scaledDotProductAttention(q, k, v).output, 1e-5, 'unmasked');
  await close(fusedAttendOne(q, k, v, mask)!, scaledDotProductAttention(q, k, v, mask).output, 1e-5, 'masked');
  assert.equal(fusedAttendOne(tf.zeros([b, h, 2, dk]), k, v), null, 'two query positions: not this kernel');
});

test('a reordered key/value cache with one position appended equals concat(gather(past, rows), next)', async () => {
  const past = tf.randomNormal([3, 2, 4, 5], 0, 1, 'float32', 12); // [B0, h, t, dk]
  const next = tf.randomNormal([4, 2, 1, 5], 0, 1, 'float32', 13); // [B, h, 1, dk]
  const rows = tf.tensor1d([2, 0, 0, 1], 'int32');
  await close(gatherAppend(past, next, rows), tf.concat([tf.gather(past, rows, 0), next], 2), 0, 'gatherAppend');
  assert.throws(
    () => gatherAppend(past, next, tf.tensor1d([0, 1, 3, 0], 'int32')),
    /row 3 is outside the cache's 3 rows/,
  );
});

test('an incremental decoding step runs the fused kernels and no tfjs LayerNorm', async () => {
  const seen = new Set<string>();
  const profile = await tf.profile(async () => {
    const model = new Transformer({ ...configFromPreset('tiny', { src_vocab: 40, tgt_vocab: 40 }) }, undefined, 3);
    const m = new IncrementalModel(model);
    const state = m.initial([[5, 6, 7, 2]]);
    const first = await m.step(state, Int32Array.of(model.config.bos_id));
    const second = await m.step(first.state, Int32Array.of(9));
    const third = await m.greedyStep(second.state, Int32Array.of(9));
    m.release(third.state);
    m.dispose();
    model.dispose();
  });
  for (const k of profile.kernels) seen.add(k.name);
  for (const name of ['AttentionDebuggerLinear', 'AttentionDebuggerAttendOne', 'AttentionDebuggerAddLayerNorm'])
    assert.ok(seen.has(name), `${name} ran`);
  assert.ok(seen.has('AttentionDebuggerLogSoftmax'), 'log-softmax ran fused');
  assert.ok(seen.has('AttentionDebuggerLinearSplit'), 'W^Q, W^K, W^V as one product');
  assert.ok(seen.has('AttentionDebuggerGreedyPick'), 'greedy picked on the backend');
  // The encoder (several positions) still runs tfjs's attention; the steps' single queries do not.
  assert.ok(!seen.has('Mean') && !seen.has('Rsqrt'), `no tfjs LayerNorm: ${[...seen].join(', ')}`);
});

test('the addon’s fused kernels refuse arrays shorter than their sizes, naming the argument', () => {
  const file = require('node:path').join(REPO, 'dist', 'native', 'blas.node') as string;
  const m = {
    exports: {} as Record<
      'linear' | 'logSoftmax' | 'greedyPick' | 'addLayerNorm' | 'attendOne',
      (...a: unknown[]) => void
    >,
  };
  process.dlopen(m, file);
  const f = new Float32Array(6);
  assert.throws(() => m.exports.linear(f, f, f, f, 2, 4, 2, false), /native.linear: x has 6 values, needs 8/);
  assert.throws(() => m.exports.logSoftmax(f, f, 2, 4), /native.logSoftmax: x has 6 values, needs 8/);
  assert.throws(() => m.exports.greedyPick(f, f, 2, 4, 1, 0, 2), /native.greedyPick: x has 6 values, needs 8/);
  assert.throws(() => m.exports.greedyPick(f, f, 1, 3, 3, 0, 2), /bos, pad and eos must be below v/);
  assert.throws(() => m.exports.addLayerNorm(f, f, f, f, f, 1, 6, 1e-5, 1, 0, 0), /residual must be true or false/);
  assert.throws(() => m.exports.addLayerNorm(f, f, f, f, f, 1, 6, 1e-5, true, 1, 0), /rate must be in \[0, 1\)/);
  assert.throws(() => m.exports.attendOne(f, f, f, f, f, 3, 2, 1, 2, 1, false), /bh must be a multiple of heads/);
  assert.throws(() => m.exports.attendOne(f, f, f, f, f, 2, 2, 2, 3, 1, false), /k has 6 values, needs 12/);
});

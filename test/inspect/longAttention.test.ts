/**
 * Attention of long inputs (issue 12, "Big input"): max-pooling worked by hand, the bounds of
 * attention/block, a 4,096-token pair computed layer by layer within a bounded memory and reply,
 * the pooled pass and its blocks against the whole maps of the ordinary pass, and the refusal of
 * inputs past max_len with learned positions.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { initBackend } from '../../src/engine/backend';
import { saveCheckpoint } from '../../src/engine/checkpoint';
import { attentionOfPairs } from '../../src/engine/inspect/attentionOfPairs';
import { Transformer } from '../../src/engine/model/transformer';
import { attentionAt } from '../../src/engine/inspect/attentionAt';
import { attentionBlockAt, blockOf, keptPass, passKey, releasePass } from '../../src/engine/inspect/attentionBlock';
import { blockCheck } from '../../src/protocol/attentionBlock';
import { attentionBlock } from '../../src/protocol/methods';
import { isString } from '../../src/protocol/check';
import { maxPoolBlocks, poolCaption, pooledLabels, thumbnailPool } from '../../src/algorithms/pool';
import { toAttentionInTurns } from '../../src/extension/convert';
import type { Attention } from '../../src/protocol/attention';
import { attentionToWire } from '../../src/protocol/wire';
import { smallConfig } from '../helpers';

const dirs: string[] = [];
before(async () => {
  await initBackend('wasm');
});
after(() => {
  releasePass();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A checkpoint folder (config.json + model.safetensors, as PyTorch writes) of random weights. */
async function folder(overrides: Parameters<typeof smallConfig>[0] = {}): Promise<{ dir: string; model: Transformer }> {
  const dir = mkdtempSync(join(tmpdir(), 'long-attention-'));
  dirs.push(dir);
  const model = new Transformer(smallConfig(overrides), undefined, 7);
  await saveCheckpoint(model, join(dir, 'model.safetensors'), join(dir, 'config.json'));
  return { dir, model };
}

/** Ids 3…11 cycling (the small vocabulary of 12 without pad, BOS, EOS), n of them. */
const ids = (n: number, from = 0) => Array.from({ length: n }, (_, i) => 3 + ((i + from) % 9));

test('max-pooling by blocks, worked by hand: a 5 × 5 map by 2 × 2 is 3 × 3, the edge blocks shorter', () => {
  // prettier-ignore
  const m = [
    0.1, 0.9, 0.0, 0.2, 0.3,
    0.4, 0.0, 0.5, 0.1, 0.0,
    0.0, 0.0, 0.0, 0.7, 0.6,
    0.2, 0.3, 0.8, 0.0, 0.0,
    1.0, 0.0, 0.0, 0.0, 0.25,
  ];
  // Blocks: rows {0,1} {2,3} {4}, cols {0,1} {2,3} {4}.
  assert.deepEqual([...maxPoolBlocks(m, 5, 5, 2, 2)], [0.9, 0.5, 0.3, 0.3, 0.8, 0.6, 1.0, 0.0, 0.25].map(Math.fround));
  // Into a larger buffer at an offset, from an offset: the second row of blocks only.
  const out = new Float32Array(5).fill(7);
  maxPoolBlocks(m, 2, 5, 2, 2, out, 10, 1);
  assert.deepEqual([...out], [7, 0.3, 0.8, 0.6, 7].map(Math.fround));
  assert.deepEqual(pooledLabels(['a', 'b', 'c', 'd', 'e'], 2), ['a…b', 'c…d', 'e']);
});

test('which maps are pooled: both sides ≤ 256 whole; past 256 a side, to ≤ 64 cells; the caption says so', () => {
  assert.equal(thumbnailPool(256, 256), undefined);
  assert.deepEqual(thumbnailPool(4096, 4096), { rows: 64, cols: 64 });
  assert.deepEqual(thumbnailPool(300, 10), { rows: 5, cols: 1 }); // ⌈300/64⌉ = 5
  assert.deepEqual(thumbnailPool(2048, 1024), { rows: 32, cols: 16 });
  assert.equal(poolCaption({ rows: 16, cols: 16 }), 'pooled 16×16 → max');
  assert.equal(poolCaption({ rows: 1, cols: 1 }), '');
});

test('the extension decodes a reply a kind per event-loop turn: the same weights, checked, the field named', async () => {
  // One layer, one head per kind; source a b </s>, target <s> x: weights written by hand (exact in float32).
  const a: Attention = {
    source: { runDir: '/r', step: 3, input: 'input' },
    srcTokens: ['a', 'b', '</s>'],
    tgtTokens: ['<s>', 'x'],
    maps: [
      { kind: 'encoder_self', shape: [1, 1, 3, 3], weights: Float32Array.of(1, 0, 0, 0.5, 0.5, 0, 0.25, 0.25, 0.5) },
      { kind: 'decoder_self', shape: [1, 1, 2, 2], weights: Float32Array.of(1, 0, 0.75, 0.25) },
      { kind: 'cross', shape: [1, 1, 2, 3], weights: Float32Array.of(0.125, 0.375, 0.5, 0, 1, 0) },
    ],
  };
  // A task that queues itself again each time it runs counts the host's turns while the reply is decoded.
  let turns = 0;
  let counting = true;
  const tick = () => {
    turns++;
    if (counting) setImmediate(tick);
  };
  setImmediate(tick);
  const got = await toAttentionInTurns(attentionToWire(a), 'attention/get result.attention');
  counting = false;
  assert.ok(turns >= 3, `the host ran other work ${turns} times while 3 kinds were decoded`);
  assert.deepEqual(
    got.maps.map((m) => [m.kind, [...m.weights]]),
    [
      ['encoder_self', [1, 0, 0, 0.5, 0.5, 0, 0.25, 0.25, 0.5]],
      ['decoder_self', [1, 0, 0.75, 0.25]],
      ['cross', [0.125, 0.375, 0.5, 0, 1, 0]],
    ],
  );
  const wire = attentionToWire(a);
  await assert.rejects(
    toAttentionInTurns({ ...wire, maps: [wire.maps[0]!, { ...wire.maps[1]!, weights: 'AAA=' }] }, 'result'),
    { message: 'result.maps[1].weights: 2 bytes is not whole float32 values' },
  );
  await assert.rejects(toAttentionInTurns({ ...wire, srcTokens: ['a', 'b'] }, 'result'), {
    message: 'result.maps[0].shape[2] must be 2 (srcTokens.length), got 3',
  });
});

test('attention/block params are bounded, and a block reply holds at most 256² weights', () => {
  const base = { runDir: '/r', input: { kind: 'probe' }, kind: 'encoder_self', layer: 0, head: 0 };
  const check = (v: object) => attentionBlock.checkParams(v, 'params');
  assert.equal(check({ ...base, q0: 0, q1: 4096, k0: 0, k1: 4096 }), undefined);
  assert.equal(check({ ...base, q0: 5, q1: 5, k0: 0, k1: 1 }), 'params.q1 must be more than q0 (5), got 5');
  assert.equal(check({ ...base, q0: 0, q1: 1, k0: 3, k1: 2 }), 'params.k1 must be more than k0 (3), got 2');
  assert.match(check({ ...base, q0: 0, q1: 9000, k0: 0, k1: 1 })!, /^params\.q1 must be .*8193.*got 9000$/);
  assert.match(check({ ...base, q0: -1, q1: 1, k0: 0, k1: 1 })!, /^params\.q0 /);
  assert.match(check({ ...base, kind: 'self', q0: 0, q1: 1, k0: 0, k1: 1 })!, /^params\.kind must be one of/);
  assert.match(check({ ...base, runDir: 'rel', q0: 0, q1: 1, k0: 0, k1: 1 })!, /^params\.runDir/);
  // A reply for 4,096 × 4,096 must be pooled 16 × 16 into 256 × 256; 257 rows would be too many.
  const r = { ...base, q0: 0, q1: 4096, k0: 0, k1: 4096, pool: { rows: 16, cols: 16 } };
  const b64 = (n: number) => Buffer.alloc(4 * n).toString('base64');
  const result = blockCheck(isString, (w) => Buffer.from(w as string, 'base64').length / 4);
  assert.equal(result({ ...r, shape: [256, 256], weights: b64(65536) }, 'result'), undefined);
  assert.match(
    result({ ...r, pool: { rows: 15, cols: 16 }, shape: [274, 256], weights: b64(274 * 256) }, 'result')!,
    /^result\.shape\[0\] must be 274 \(the range over pool, at most 256\)/,
  );
});

test('a 4,096-token source: the encoder computed layer by layer, its maps pooled, the reply and the memory bounded', async () => {
  const { dir } = await folder({ encoder_layers: 2, decoder_layers: 1, max_len: 64 });
  const src = [...ids(4095), 2]; // 4,096 tokens ending with EOS, past max_len 64 (sinusoidal positions extend)
  const tgt = [1, 3, 4, 5];
  const before = tf.memory().numTensors;
  let reply = '';
  const profile = await tf.profile(async () => {
    const r = await attentionAt(dir, undefined, { kind: 'ids', src, tgt });
    reply = JSON.stringify({ ...r, attention: attentionToWire(r.attention) });
    const enc = r.attention.maps.find((m) => m.kind === 'encoder_self')!;
    assert.deepEqual(enc.shape, [2, 2, 64, 64]);
    assert.deepEqual(enc.pool, { rows: 64, cols: 64 });
    const cross = r.attention.maps.find((m) => m.kind === 'cross')!;
    assert.deepEqual([cross.shape, cross.pool], [[1, 2, 4, 64], { rows: 1, cols: 64 }]);
    assert.equal(r.attention.maps.find((m) => m.kind === 'decoder_self')!.pool, undefined); // 4 × 4: whole
    // Each encoder row sums to 1 over 4,096 keys, so a block's max is at least 1/4096 and at most 1.
    assert.ok(enc.weights.every((w) => w >= 1 / 4096 - 1e-7 && w <= 1));
  });
  // All encoder maps at once would be 2 layers × 2 heads × 4,096² × 4 bytes = 268 MB; one slice is 32 MB.
  assert.ok(profile.peakBytes < 200 << 20, `peak ${profile.peakBytes} bytes`);
  // Pooled: 2·2·64² + 1·2·4² + 1·2·4·64 floats = 16,928 → 68 KB raw, 90 KB in base64.
  assert.ok(reply.length < 120_000, `reply of ${reply.length} bytes`);
  assert.ok(keptPass(passKey(dir, undefined, { kind: 'ids', src, tgt })), 'Q and K kept for attention/block');
  releasePass();
  assert.equal(tf.memory().numTensors, before, 'every tensor released');
});

test('the pooled pass equals the ordinary pass max-pooled, and its blocks equal the whole maps', async () => {
  const { dir, model } = await folder({
    encoder_layers: 1,
    decoder_layers: 2,
    max_len: 400,
    norm_first: true,
    final_norm: true,
  });
  const src = [...ids(299), 2];
  const tgt = [1, ...ids(299, 4)]; // 300 + 300: every map pooled 5 × 5 into 60 × 60
  const [whole] = await attentionOfPairs(model, [src], [tgt]);
  const input = { kind: 'ids' as const, src, tgt };
  const r = await attentionAt(dir, undefined, input);
  for (const m of r.attention.maps) {
    const w = whole!.maps.find((x) => x.kind === m.kind)!;
    assert.deepEqual(m.pool, { rows: 5, cols: 5 }, m.kind);
    const [L, H, Q, K] = w.shape;
    const want = new Float32Array(L * H * 60 * 60);
    for (let i = 0; i < L * H; i++) maxPoolBlocks(w.weights, Q, K, 5, 5, want, i * Q * K, i * 3600);
    let diff = 0;
    for (let i = 0; i < want.length; i++) diff = Math.max(diff, Math.abs(want[i]! - m.weights[i]!));
    assert.ok(diff < 1e-5, `${m.kind}: pooled differs by ${diff}`);
  }
  // A block of decoder self-attention, layer 2, head 2: queries 250–299 × keys 10–279, whole.
  const range = { kind: 'decoder_self' as const, layer: 1, head: 1, q0: 250, q1: 300, k0: 10, k1: 280 };
  const b = await attentionBlockAt({ runDir: dir, input, ...range }, () => Promise.reject(new Error('kept')));
  assert.deepEqual([b.shape, b.pool], [[50, 135], { rows: 1, cols: 2 }]);
  const full = whole!.maps.find((x) => x.kind === 'decoder_self')!.weights.subarray(3 * 300 * 300);
  let diff = 0;
  for (let q = 250; q < 300; q++)
    for (let c = 0; c < 135; c++) {
      const k = 10 + 2 * c;
      diff = Math.max(
        diff,
        Math.abs(Math.max(full[q * 300 + k]!, full[q * 300 + k + 1]!) - b.weights[(q - 250) * 135 + c]!),
      );
    }
  assert.ok(diff < 1e-5, `block differs by ${diff}`);
  const pass = keptPass(passKey(dir, undefined, input))!.pass;
  await assert.rejects(blockOf(pass, 0, { ...range, q1: 301 }), {
    message: 'attention/block params.q1 must be at most 300 (the queries of decoder_self), got 301',
  });
  await assert.rejects(blockOf(pass, 0, { ...range, layer: 2 }), {
    message: 'attention/block params.layer must be below 2 (the decoder_self layers), got 2',
  });
  const lp = r.tokenLogProbs;
  assert.equal(lp.length, 300);
  releasePass();
  model.dispose();
});

test('past max_len, learned positions are refused, naming the field; sinusoidal ones extend', async () => {
  const learned = await folder({ positional: 'learned', max_len: 16 });
  await assert.rejects(attentionAt(learned.dir, undefined, { kind: 'ids', src: [...ids(19), 2], tgt: [1, 3] }), {
    message:
      'the source has 20 tokens, more than max_len 16, and this model\'s positions are learned (positional: "learned"): ' +
      'it has no encoding for positions past 15, so longer inputs cannot be inspected; shorten the input to 16 tokens ' +
      '(sinusoidal positions extend to any length)',
  });
  const sin = await folder({ max_len: 16 });
  const r = await attentionAt(sin.dir, undefined, { kind: 'ids', src: [...ids(19), 2], tgt: [1, 3] });
  const enc = r.attention.maps.find((m) => m.kind === 'encoder_self')!;
  assert.deepEqual([enc.shape, enc.pool], [[1, 2, 20, 20], undefined]); // whole: 20 ≤ 256
  releasePass();
  learned.model.dispose();
  sin.model.dispose();
});

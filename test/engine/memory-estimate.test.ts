/**
 * The memory estimate of a training step (run/memory.ts) against the wasm heap's measured peak
 * (issue 27 #4): a few steps of the tiny and the small preset through the trainer (the copy task,
 * validation and telemetry included), the highest byte malloc handed out meanwhile measured by
 * backend/wasm/wasmHeap.ts. The estimate must be at least that peak (else a run it lets start could trap)
 * and at most 1.5 times it (else it refuses runs that fit: the peaks measured in bench/README.md
 * are 1.05 to 1.2 times below it). And the refusal of a model that cannot fit, with the largest
 * batch that does.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { initBackend } from '../../src/engine/backend';
import { watchWasmHeap } from '../../src/engine/backend/wasm/wasmHeap';
import { taskSpec } from '../../src/engine/data/dataset';
import { configFromPreset, type TransformerConfig } from '../../src/engine/model/config';
import { checkTrainingMemory, parameterCount, trainingMemory, WASM_HEAP_BYTES } from '../../src/engine/run/memory';
import { prepareRun } from '../../src/engine/run/setup';
import { startTrainer } from '../../src/engine/train/start';
import { MICRO_MODEL, scratch } from '../train/helpers';

before(async () => {
  await initBackend('wasm');
});

/** The micro model (test/train/helpers.ts) over the copy task's 11 tokens. */
const MICRO: TransformerConfig = {
  ...MICRO_MODEL,
  src_vocab: 11,
  tgt_vocab: 11,
  pad_id: 0,
  bos_id: 1,
  eos_id: 2,
} as TransformerConfig;

test('parameters counted by hand: the micro model has 5,755', () => {
  // d 16, d_ff 32, 1 + 1 layers, 11 tokens, embeddings shared with the generator (its bias apart).
  const attention = 3 * 16 * 16 + 3 * 16 + 16 * 16 + 16; // W^Q,K,V stacked and bias, W^O and bias: 1,088
  const ffn = 32 * 16 + 32 + 16 * 32 + 16; // W1, b1, W2, b2: 1,072
  const norm = 2 * 16;
  const encoder = attention + ffn + 2 * norm; // 2,224
  const decoder = 2 * attention + ffn + 3 * norm; // 3,344
  assert.equal(parameterCount(MICRO), encoder + decoder + 11 * 16 + 11);
  assert.equal(parameterCount(MICRO), 5755);
});

test('the estimate of the micro model for 100 batch tokens, worked by hand', () => {
  const e = trainingMemory(MICRO, 100);
  const params = 5755 * 4;
  assert.equal(e.weights, params);
  assert.equal(e.gradients, params);
  assert.equal(e.adam, 2 * params);
  assert.equal(e.scratch, params + 32 * 16 * 4 + (1 << 20)); // the norm's squares, the sinusoid table, the runtime
  // A source token: embedding 4·16, one encoder layer 12·16 + 32, cross K, V 2·16 = 320;
  // a target token: 4·16 + 17·16 + 32 = 368; 50 of each.
  assert.equal(e.activations, 4 * 50 * (320 + 368));
  assert.equal(e.logits, 4 * 50 * 4 * 11); // 4 copies of a target token's 11 logits
  assert.equal(e.bytes, 5 * params + 32 * 16 * 4 + (1 << 20) + 4 * 50 * (320 + 368) + 4 * 50 * 44);
});

/** Trains `steps` steps of a preset on the copy task; the heap's highest byte meanwhile. */
async function measuredPeak(preset: string, batchTokens: number, steps: number) {
  const dir = scratch(`ad-memory-${preset}-`);
  const watch = watchWasmHeap();
  try {
    const opened = prepareRun({
      out: join(dir, 'run'),
      data: taskSpec('copy', { train: 2000, valid: 40, test: 4 }),
      config: preset,
      overrides: {
        steps,
        batch_tokens: batchTokens,
        eval_every: steps,
        checkpoint_every: steps,
        snapshot_every: 2,
        telemetry_every: 2,
        bleu_sentences: 0,
      },
    });
    const { trainer } = startTrainer(opened, { resume: false });
    try {
      await trainer.train({});
    } finally {
      trainer.dispose();
    }
    return { config: opened.config, peak: watch.highest() };
  } finally {
    watch.stop();
  }
}

for (const [preset, batchTokens] of [
  ['tiny', 3000],
  ['small', 1500],
] as const) {
  test(`${preset} on wasm: the estimate is at least the measured peak and at most 1.5 times it`, async (t) => {
    const { config, peak } = await measuredPeak(preset, batchTokens, 4);
    const estimate = trainingMemory(config, batchTokens).bytes;
    const mb = (b: number) => `${(b / 2 ** 20).toFixed(1)} MiB`;
    t.diagnostic(`estimate ${mb(estimate)}, measured peak ${mb(peak)}: ${(estimate / peak).toFixed(2)} times`);
    assert.ok(estimate >= peak, `estimate ${mb(estimate)} below the measured peak ${mb(peak)}`);
    assert.ok(estimate <= 1.5 * peak, `estimate ${mb(estimate)} over 1.5 times the measured peak ${mb(peak)}`);
  });
}

test('big on wasm is refused with its estimate and the largest batch_tokens that fits', () => {
  const big = configFromPreset('big', { src_vocab: 37000, tgt_vocab: 37000 });
  assert.throws(
    () => checkTrainingMemory(big, 'preset big', { tokens: 50000 }, 'wasm'),
    (err: Error) => {
      const largest = Number(/the largest batch_tokens that fits is (\d+)/.exec(err.message)?.[1]);
      // 6 encoder layers of 12,596,224, 6 decoder layers of 16,796,672, 37,000 × 1,024 embeddings and 37,000 biases.
      assert.match(err.message, /^preset big: 214\.3 M parameters with batch_tokens 50000 need about [\d.]+ GiB/);
      assert.match(err.message, /more than the wasm backend's heap \(4\.0 GiB\)/);
      // The largest that fits, and one more token does not.
      assert.ok(trainingMemory(big, largest).bytes <= WASM_HEAP_BYTES, err.message);
      assert.ok(trainingMemory(big, largest + 1).bytes > WASM_HEAP_BYTES, err.message);
      return true;
    },
  );
  // A batch that fits is let through.
  checkTrainingMemory(big, 'preset big', { tokens: 5 }, 'wasm');
});

test('a model whose weights and optimizer alone pass the heap: no batch fits, and the message says so', () => {
  const huge = configFromPreset(
    'big',
    { src_vocab: 37000, tgt_vocab: 37000 },
    { encoder_layers: 24, decoder_layers: 24 },
  );
  assert.throws(
    () => checkTrainingMemory(huge, 'preset big', { tokens: 1000 }, 'wasm'),
    /no batch fits: the weights, gradients, Adam's moments and scratch alone take [\d.]+ GiB/,
  );
});

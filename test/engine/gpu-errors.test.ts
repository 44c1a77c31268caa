/**
 * A step the GPU fails is an error that loses nothing (backend/webgpu/errors.ts, train/step.ts), on
 * Dawn over lavapipe: a fault planted in the step's error scopes (a real validation error, or an
 * out-of-memory or internal error reported as the scope would) fails trainStep with a GpuError of
 * that kind, before the update or during it, and every parameter, Adam moment and t keeps its bits;
 * the next step is then the step a twin model that never failed takes, bit for bit; with Adam in
 * either layout (train/adam.ts, train/flatAdam.ts: webgpu's default). A request's GPU
 * work fails the same way and the next one runs. (A lost device ends webgpu for the process: the CLI
 * test test/cli/gpu-failure.test.ts loses one.)
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { type GpuErrorKind, GpuError, guardGpu, plantGpuFault } from '../../src/engine/backend/webgpu/errors';
import { Transformer } from '../../src/engine/model/transformer';
import { Adam } from '../../src/engine/train/adam';
import { FlatAdam } from '../../src/engine/train/flatAdam';
import type { Optimizer } from '../../src/engine/train/optimizer';
import { trainStep } from '../../src/engine/train/step';
import { smallConfig, TOY_BATCH } from '../helpers';
import { snapshot, useWebgpu } from './kernelHelpers';

/** Every parameter and moment as its float32 words, and t. */
async function state(model: Transformer, adam: Optimizer): Promise<{ t: number; words: Map<string, string> }> {
  const words = new Map<string, string>();
  for (const [name, data] of await snapshot(model, adam)) words.set(name, Buffer.from(data.buffer).toString('hex'));
  return { t: adam.step, words };
}

const opts = (work: string) => ({ lr: 1e-3, labelSmoothing: 0.1, clipNorm: 1, work });

test('a step the GPU fails changes no parameter, moment or t, and the next step is a clean one', async (t) => {
  if (!(await useWebgpu(t))) return;
  const cases: { kind: GpuErrorKind; part: string; first?: boolean }[] = [
    { kind: 'out-of-memory', part: '' },
    { kind: 'out-of-memory', part: ' (update)', first: true }, // Adam's moments do not exist yet
    { kind: 'validation', part: '' },
    { kind: 'validation', part: ' (update)' },
    { kind: 'internal', part: ' (update)' },
  ];
  for (const [layout, make] of [
    ['per-parameter', () => new Adam()],
    ['flat', () => new FlatAdam()],
  ] as const)
    for (const c of cases) {
      await t.test(`${layout} Adam, ${c.kind} in step 2${c.part}${c.first ? ', the first update' : ''}`, async () => {
        const [model, twin] = [
          new Transformer(smallConfig(), undefined, 5),
          new Transformer(smallConfig(), undefined, 5),
        ];
        const [adam, twinAdam] = [make(), make()];
        try {
          if (!c.first) {
            await trainStep(model, adam, TOY_BATCH, opts('step 1'));
            await trainStep(twin, twinAdam, TOY_BATCH, opts('step 1'));
          }
          const before = await state(model, adam);
          plantGpuFault(c.kind, `step 2${c.part}`);
          const failed = await trainStep(model, adam, TOY_BATCH, opts('step 2')).then(
            () => undefined,
            (err: unknown) => err,
          );
          assert.ok(failed instanceof GpuError, `a GpuError, got ${String(failed)}`);
          assert.equal(failed.kind, c.kind);
          const part = c.part ? 'update' : 'forward and backward passes'; // planted in the step's first scope, or its last
          assert.ok(failed.message.startsWith(`step 2 (${part}): `), failed.message);
          assert.deepEqual(
            await state(model, adam),
            before,
            'parameters, moments and t bit for bit as before the step',
          );
          const r = await trainStep(model, adam, TOY_BATCH, opts('step 2'));
          const want = await trainStep(twin, twinAdam, TOY_BATCH, opts('step 2'));
          assert.ok(r.applied && r.loss === want.loss, `the step after: loss ${r.loss}, the twin's ${want.loss}`);
          assert.deepEqual(await state(model, adam), await state(twin, twinAdam), 'the twin that never failed');
        } finally {
          for (const x of [model, twin, adam, twinAdam]) x.dispose();
        }
      });
    }
});

test("a request's GPU work fails with the GPU's error, and the next request runs", async (t) => {
  if (!(await useWebgpu(t))) return;
  const model = new Transformer(smallConfig(), undefined, 5);
  try {
    const work = async (): Promise<number> => {
      const logits = tf.tidy(() =>
        model.logits(tf.tensor2d(TOY_BATCH.src, undefined, 'int32'), tf.tensor2d(TOY_BATCH.tgtIn, undefined, 'int32')),
      );
      const n = (await logits.data()).length;
      logits.dispose();
      return n;
    };
    plantGpuFault('out-of-memory', 'attention/get');
    await assert.rejects(guardGpu('attention/get', work), (err: unknown) => {
      assert.ok(err instanceof GpuError && err.kind === 'out-of-memory');
      assert.match(err.message, /^attention\/get: the GPU ran out of memory \(Dawn: /);
      return true;
    });
    assert.equal(await guardGpu('attention/get', work), 2 * 4 * 12, 'logits [2, 4, 12]');
  } finally {
    model.dispose();
  }
});

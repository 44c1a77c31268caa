/**
 * The engine against PyTorch: each fixture is a random checkpoint that PyTorch's own nn.Transformer
 * modules ran (test/fixtures/make_fixtures.py); the engine must reproduce every attention weight and
 * log-probability to 1e-4, on every backend that loads here.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { initBackend } from '../../src/engine/backend';
import { loadCheckpoint } from '../../src/engine/checkpoint';
import { ablationGates } from '../../src/engine/ablate/gates';

import { GOLDEN, maxAbsDiff, readJson, testBackends, nestedAttention, type NestedAttention } from '../helpers';

interface Expected extends NestedAttention {
  src: number[][];
  tgt: number[][];
  tolerance: number;
}

const cases = readdirSync(GOLDEN).sort();

test('the fixtures cover post-LN, pre-LN, learned positions, shared embeddings and padding', () => {
  assert.deepEqual(cases, [
    'post_ln_learned',
    'post_ln_sinusoidal',
    'pre_ln_sinusoidal_final_norm',
    'shared_embeddings',
  ]);
  for (const name of cases) {
    const e = readJson<Expected>(join(GOLDEN, name, 'expected.json'));
    assert.ok(
      e.src.some((row) => row.includes(0)),
      `${name} has source padding`,
    );
  }
});

test('attention weights and log-probs equal PyTorch on every backend', async (t) => {
  for (const backend of await testBackends()) {
    await initBackend(backend);
    for (const name of cases) {
      await t.test(`${backend}: ${name}`, async () => {
        const e = readJson<Expected>(join(GOLDEN, name, 'expected.json'));
        const model = loadCheckpoint(join(GOLDEN, name));
        try {
          const got = await nestedAttention(model, e.src, e.tgt);
          for (const key of ['encoder_self', 'decoder_self', 'cross', 'log_probs'] as const) {
            const diff = maxAbsDiff(got[key], e[key]);
            assert.ok(
              diff <= e.tolerance,
              `${key}: max |engine − PyTorch| = ${diff.toExponential(2)} > ${e.tolerance}`,
            );
          }
        } finally {
          model.dispose();
        }
      });
    }
  }
});

interface Ablated {
  src: number[][];
  tgt: number[][];
  ablations: { heads: string[]; log_probs: number[][][] }[];
  tolerance: number;
}

test('zero-ablated heads give PyTorch’s log-probs with those heads zeroed before W^O, on every backend', async (t) => {
  for (const backend of await testBackends()) {
    await initBackend(backend);
    for (const name of cases) {
      await t.test(`${backend}: ${name}`, async () => {
        const e = readJson<Ablated>(join(GOLDEN, name, 'ablated.json'));
        assert.equal(e.ablations.length, 2);
        const model = loadCheckpoint(join(GOLDEN, name));
        try {
          for (const a of e.ablations) {
            const gates = ablationGates(model, { heads: a.heads, mode: 'zero' });
            try {
              const got = await nestedAttention(model, e.src, e.tgt, gates.heads);
              const diff = maxAbsDiff(got.log_probs, a.log_probs);
              assert.ok(diff <= e.tolerance, `${a.heads.join(',')}: max |engine − PyTorch| = ${diff.toExponential(2)}`);
            } finally {
              gates.dispose();
            }
          }
        } finally {
          model.dispose();
        }
      });
    }
  }
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { solveTask, generateTask, taskSplits, TASKS } from '../../src/engine/data/tasks';
import { mulberry32 } from '../../src/engine/data/random';

test('mulberry32 matches the reference algorithm (values from a separate Python port of the C code)', () => {
  const r0 = mulberry32(0);
  assert.deepEqual([r0(), r0(), r0()], [0.26642920868471265, 0.0003297457005828619, 0.2232720274478197]);
  const r42 = mulberry32(42);
  assert.deepEqual([r42(), r42(), r42()], [0.6011037519201636, 0.44829055899754167, 0.8524657934904099]);
});

test('task targets: copy, reverse, sort (hand examples)', () => {
  assert.deepEqual(solveTask('copy', [7, 4, 9]), [7, 4, 9]);
  assert.deepEqual(solveTask('reverse', [4, 7, 5]), [5, 7, 4]);
  assert.deepEqual(solveTask('sort', [9, 4, 10, 6, 4]), [4, 4, 6, 9, 10]); // numeric, not string, order
});

test('generated sequences respect vocabulary and length ranges, and are reproducible by seed', () => {
  for (const task of TASKS) {
    const opts = { task, vocabSize: 12, minLength: 3, maxLength: 6, seed: 5 };
    const a = generateTask(opts, 300);
    assert.deepEqual(generateTask(opts, 300), a);
    assert.notDeepEqual(generateTask({ ...opts, seed: 6 }, 300), a);
    const lengths = new Set<number>();
    for (const { src, tgt } of a) {
      lengths.add(src.length);
      assert.ok(src.length >= 3 && src.length <= 6);
      for (const t of src) assert.ok(Number.isInteger(t) && t >= 4 && t <= 11, `token ${t} out of [4, 11]`);
      assert.equal(tgt.length, src.length);
      if (task === 'copy') assert.deepEqual(tgt, src);
      if (task === 'reverse') src.forEach((t, i) => assert.equal(tgt[src.length - 1 - i], t));
      if (task === 'sort') for (let i = 1; i < tgt.length; i++) assert.ok((tgt[i - 1] as number) <= (tgt[i] as number));
    }
    assert.deepEqual([...lengths].sort(), [3, 4, 5, 6]); // every length occurs in 300 draws
  }
});

test('splits are reproducible and held-out sources never appear in train', () => {
  const opts = { task: 'reverse' as const, vocabSize: 6, minLength: 1, maxLength: 4, seed: 9 };
  const a = taskSplits(opts, { train: 500, valid: 30, test: 30 });
  assert.deepEqual(taskSplits(opts, { train: 500, valid: 30, test: 30 }), a);
  assert.equal(a.train.length, 500);
  const key = (s: number[]): string => s.join(',');
  const held = new Set([...a.valid, ...a.test].map((p) => key(p.src)));
  for (const p of a.train) assert.ok(!held.has(key(p.src)), `train repeats held-out ${key(p.src)}`);
  const test = new Set(a.test.map((p) => key(p.src)));
  for (const p of a.valid) assert.ok(!test.has(key(p.src)));
});

test('bad options and impossible splits are errors, not hangs', () => {
  assert.throws(() => generateTask({ task: 'copy', vocabSize: 4 }, 1), /vocabSize must be an integer > 4/);
  assert.throws(() => generateTask({ task: 'copy', minLength: 5, maxLength: 2 }, 1), /minLength <= maxLength/);
  // vocabSize 5 and length 1 give exactly one possible sequence: [4].
  assert.throws(
    () => taskSplits({ task: 'copy', vocabSize: 5, minLength: 1, maxLength: 1 }, { train: 1, valid: 0, test: 1 }),
    /cannot draw 1 sequences/,
  );
});

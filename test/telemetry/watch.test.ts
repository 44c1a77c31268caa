/**
 * Watch conditions (issue 31) over a telemetry row made by hand: every figure below is read off
 * the row, so each expected answer can be checked with a pencil.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseWatch } from '../../src/engine/telemetry/watch';
import type { TelemetryRow } from '../../src/protocol/telemetry';

const HEADS = ['encoder_self:0.0', 'encoder_self:0.1', 'cross:0.0', 'cross:0.1', 'cross:1.0', 'cross:1.1'];
const STATS = ['entropy', 'confidence'];
const ROW: TelemetryRow = {
  step: 400,
  pairs: 4,
  heads: HEADS,
  stats: {
    entropy: [1.2, 0.8, 0.5, 0.1, 0.3, null],
    confidence: [0.4, 0.5, 0.95, 0.7, 0.6, null],
  },
};

const run = (source: string, metrics = { step: 400, loss: 1.6 }) =>
  parseWatch(source, HEADS, STATS).evaluate(ROW, metrics);

test('a comparison over a head pattern holds for the heads it holds for', () => {
  assert.deepEqual(run('cross:*.*.entropy < 0.4'), { hit: true, heads: ['cross:0.1', 'cross:1.0'] });
  // cross:1.0 has 0.3, cross:1.1 no value: a head without a value satisfies nothing
  assert.deepEqual(run('cross:1.*.entropy < 0.2'), { hit: false, heads: [] });
  assert.deepEqual(run('cross:1.1.entropy < 100'), { hit: false, heads: [] });
  assert.deepEqual(run('0.9 < cross:*.*.confidence'), { hit: true, heads: ['cross:0.0'] });
});

test('max, min and mean fold a pattern; metrics and arithmetic', () => {
  assert.equal(run('max(encoder_self:*.*.entropy) > 1.1').hit, true); // 1.2
  assert.equal(run('max(encoder_self:*.*.entropy) > 1.3').hit, false);
  assert.equal(run('min(cross:*.*.entropy) == 0.1').hit, true);
  // (0.5 + 0.1) / 2 = 0.3
  assert.equal(run('mean(cross:0.*.entropy) > 0.29 && mean(cross:0.*.entropy) < 0.31').hit, true);
  assert.equal(run('loss * 2 > 3').hit, true); // 3.2
  assert.equal(run('loss * 2 > 3.3').hit, false);
  assert.equal(run('-loss < -1.5').hit, true);
});

test('&&, || and ! combine conditions, with the step', () => {
  const watch = 'cross:0.0.confidence > 0.9 && step > 500';
  assert.deepEqual(run(watch), { hit: false, heads: [] });
  assert.deepEqual(run(watch, { step: 600, loss: 1 }), { hit: true, heads: ['cross:0.0'] });
  assert.deepEqual(run('cross:0.1.entropy < 0.2 || loss > 100'), { hit: true, heads: ['cross:0.1'] });
  assert.deepEqual(run('!(loss > 100) && (step == 400)'), { hit: true, heads: [] });
  assert.equal(run('val_loss < 5').hit, false); // no validation at this step: no value
});

test('a condition that cannot mean anything is refused when parsed, naming what is wrong', () => {
  const refused = (source: string, why: RegExp) =>
    assert.throws(
      () => parseWatch(source, HEADS, STATS),
      (e: Error) => {
        assert.match(e.message, new RegExp(`^watch "${source.replace(/[()*.|]/g, '\\$&')}": `));
        assert.match(e.message, why);
        return true;
      },
    );
  refused('cross:0.*.entropi < 1', /no statistic "entropi" \(entropy, confidence\)/);
  refused('cross:9.0.entropy < 1', /no head cross:9\.0 in this model \(heads count from 0\)/);
  refused('decoder:0.0.entropy < 1', /no attention kind "decoder"/);
  refused('cross:0.0.entropy', /a number, not a condition/);
  refused('cross:0.0.entropy <', /found the end/);
  refused('step > 5 loss', /expected an operator or the end, found "loss" \(column 10\)/);
  refused('cross:*.*.entropy < cross:0.0.entropy', /two head patterns/);
  refused('max(step) > 1', /max\(\) takes a head pattern/);
  refused('step > 1 && 2', /need conditions/);
  refused('step # 1', /cannot read "# 1" \(column 6\)/);
});

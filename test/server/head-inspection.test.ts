/**
 * The real `serve` process (dist/cli.js) asked for issue 32's inspections: attention/get with
 * valueWeighted (norms beside each kind's weights, absent when not asked, refused past 256 tokens)
 * and heads/scores (a row's split, and each bound refused naming its field).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { REPO } from '../helpers';
import { micro } from '../cli/malformed-plants';
import { scratch } from '../train/helpers';
import { RawEngine } from './rawEngine';
import type { WireAttention } from '../../src/protocol/wire';
import { attentionFromWire } from '../../src/protocol/wire';
import type { HeadScores } from '../../src/protocol/headScores';

const dir = scratch('ad-head-inspection-');
const run = join(dir, 'run'); // the copy task, 6 steps; 300 positions, so a 300-token input is pooled
let engine: RawEngine;

before(async () => {
  writeFileSync(join(dir, 'micro.json'), micro({ max_len: 300 }));
  const args = ['train', '--backend', 'wasm', '--task', 'copy', '--config', join(dir, 'micro.json'), '--out', run];
  const r = spawnSync(process.execPath, [join(REPO, 'dist', 'cli.js'), ...args], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  engine = new RawEngine();
});

after(() => engine.proc.kill());

const text = (src: string, tgt?: string) => ({ kind: 'text', src, ...(tgt !== undefined ? { tgt } : {}) });

test('attention/get carries value-weighted norms of every kind only when asked, and refuses them for pooled maps', async () => {
  const input = text('4 5 6', '4 5 6');
  const asked = await engine.ask('attention/get', { runDir: run, input, valueWeighted: true });
  assert.equal(asked.error, undefined);
  const a = attentionFromWire((asked.result as { attention: WireAttention }).attention, 'reply');
  for (const m of a.maps) {
    assert.equal(m.valueWeighted?.length, m.weights.length, `${m.kind} norms beside the weights`);
    m.weights.forEach((w, i) => assert.equal(w === 0, m.valueWeighted![i] === 0, `${m.kind}: zero weight, zero norm`));
  }
  const plain = await engine.ask('attention/get', { runDir: run, input });
  const maps = (plain.result as { attention: WireAttention }).attention.maps;
  assert.ok(
    maps.every((m) => !('valueWeighted' in m)),
    'not asked: the reply is as before',
  );
  const long = Array.from({ length: 290 }, (_, i) => 4 + (i % 5)).join(' ');
  const refused = await engine.ask('attention/get', { runDir: run, input: text(long, '4 5'), valueWeighted: true });
  assert.match(refused.error ?? '', /valueWeighted needs every weight, so inputs of at most 256 tokens a side/);
});

test('heads/scores splits a row; a layer, head or query past the run is refused naming the field', async () => {
  const base = { runDir: run, input: text('4 5 6', '4 5 6'), kind: 'encoder_self', layer: 0, head: 1, query: 2 };
  const r = await engine.ask('heads/scores', base);
  assert.equal(r.error, undefined);
  const s = r.result as HeadScores;
  assert.deepEqual(s.keyTokens.length, 4); // 4 5 6 <eos>
  assert.ok(s.embedding, 'layer 0 of a post-LN run: token and position terms');
  s.scores.forEach((score, j) => assert.ok(Math.abs(s.dimensions[j]!.reduce((x, y) => x + y, 0) - score) < 1e-5));
  const cases: [object, RegExp][] = [
    [{ layer: 1 }, /layer must be below 1 \(encoder_self has 1 layers/],
    [{ head: 2 }, /head must be below 2 \(the run has 2 heads/],
    [{ query: 4 }, /query must be below 4 \(the source has 4 tokens/],
    [{ kind: 'cross', query: 4 }, /query must be below 4 \(the target has 4 tokens/],
    [{ query: -1 }, /params.query must be a whole number from 0 to 8192/],
  ];
  for (const [change, why] of cases) {
    const bad = await engine.ask('heads/scores', { ...base, ...change });
    assert.match(bad.error ?? '', why, JSON.stringify(change));
  }
});

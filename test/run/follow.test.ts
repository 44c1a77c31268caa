/**
 * Following a folder another process writes (run/poll): only complete lines are read, a partial
 * last line is read again once whole, a rewritten file starts over, a torn line is skipped, the
 * writer's activity comes from status.json and the files' times, and a folder without telemetry
 * gets per-head rows from its snapshots (entropy worked by hand).
 */
import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { pollRun } from '../../src/engine/run/follow';
import { writeSnapshotFile } from '../../src/engine/run/snapshots';
import { FIRST_POLL } from '../../src/protocol/follow';
import { STALLED_AFTER_MS } from '../../src/protocol/runFolder';

const work = mkdtempSync(join(tmpdir(), 'follow-'));
after(() => rmSync(work, { recursive: true, force: true }));

const CONFIG = {
  d_model: 8,
  heads: 2,
  d_ff: 16,
  encoder_layers: 1,
  decoder_layers: 1,
  src_vocab: 7,
  tgt_vocab: 7,
  dropout: 0,
  positional: 'sinusoidal',
  max_len: 16,
  training: { steps: 10 },
};
const line = (step: number, loss: number) => `${JSON.stringify({ step, lr: 0.001, loss })}\n`;

function folder(name: string): string {
  const dir = join(work, name);
  mkdirSync(dir);
  writeFileSync(join(dir, 'config.json'), JSON.stringify(CONFIG));
  return dir;
}

test('complete lines only; a partial last line is read once whole; a rewrite starts over; a torn line is skipped', () => {
  const dir = folder('lines');
  const metrics = join(dir, 'metrics.jsonl');
  const half = line(3, 1.5).slice(0, 9);
  writeFileSync(metrics, line(1, 2.5) + line(2, 2) + half);
  const first = pollRun(dir);
  assert.deepEqual(
    first.rows.map((r) => [r.step, r.loss]),
    [
      [1, 2.5],
      [2, 2],
    ],
  );
  assert.equal(first.cursor.files.metrics.offset, Buffer.byteLength(line(1, 2.5) + line(2, 2)));
  appendFileSync(metrics, line(3, 1.5).slice(9) + '{"step": 4, "lr": 0.0\n' + line(5, 1));
  const second = pollRun(dir, first.cursor);
  assert.equal(second.reset, false);
  assert.deepEqual(
    second.rows.map((r) => r.step),
    [3, 5],
    'the partial line whole now; the torn one skipped',
  );
  const third = pollRun(dir, second.cursor);
  assert.deepEqual(third.rows, [], 'nothing new');
  // A resume rewrites the file (a new file renamed into place), here longer than before.
  writeFileSync(join(dir, 'tmp'), line(1, 2.5) + line(2, 2) + line(3, 1.4) + line(4, 1.3) + line(5, 1.2) + line(6, 1));
  renameSync(join(dir, 'tmp'), metrics);
  const fourth = pollRun(dir, third.cursor);
  assert.equal(fourth.reset, true);
  assert.deepEqual(
    fourth.rows.map((r) => r.step),
    [1, 2, 3, 4, 5, 6],
  );
});

test('activity: live while running and writing, stalled after a minute of silence, paused, finished by the end marker', () => {
  const dir = folder('activity');
  writeFileSync(join(dir, 'metrics.jsonl'), line(1, 2));
  const status = (state: string, step: number) =>
    writeFileSync(join(dir, 'status.json'), JSON.stringify({ state, step, time: Date.now(), writer: 'pytorch' }));
  status('running', 1);
  const live = pollRun(dir);
  assert.deepEqual([live.activity, live.state, live.step], ['live', 'running', 1]);
  assert.equal(pollRun(dir, FIRST_POLL, { now: live.lastWrite + STALLED_AFTER_MS + 1000 }).activity, 'stalled');
  status('paused', 1);
  assert.equal(pollRun(dir).activity, 'paused');
  status('completed', 10);
  const done = pollRun(dir);
  assert.deepEqual([done.activity, done.step], ['finished', 10]);
  rmSync(join(dir, 'status.json'));
  const old = pollRun(dir, FIRST_POLL, { now: Date.now() + STALLED_AFTER_MS + 1000 });
  assert.deepEqual([old.activity, old.state], ['finished', null], 'no status and long silent: nothing writes it');
});

test('run/open’s poll reads no snapshot where the folder has telemetry, and the next poll starts after them', () => {
  const dir = folder('opened');
  mkdirSync(join(dir, 'snapshots'));
  writeFileSync(join(dir, 'telemetry.jsonl'), '');
  const maps = [
    {
      kind: 'encoder_self' as const,
      shape: [1, 1, 1, 1] as [number, number, number, number],
      weights: new Float32Array([1]),
    },
  ];
  const snap = (step: number) =>
    writeSnapshotFile(join(dir, 'snapshots', `step-${step}.safetensors`), {
      step,
      pairs: [{ src: ['a'], tgt: ['<s>'], maps }],
    });
  snap(5);
  // A file that is not a snapshot at step 7: reading it would throw; run/open does not read it.
  writeFileSync(join(dir, 'snapshots', 'step-7.safetensors'), 'not a snapshot');
  const opened = pollRun(dir, FIRST_POLL, { withSnapshots: false });
  assert.deepEqual([opened.snapshots, opened.cursor.lastSnapshot], [[], 7]);
  rmSync(join(dir, 'snapshots', 'step-7.safetensors'));
  snap(10);
  assert.deepEqual(
    pollRun(dir, opened.cursor).snapshots.map((s) => s.source.step),
    [10],
  );
});

test('a folder without telemetry gets per-head rows from its snapshots; only new snapshots are sent', () => {
  const dir = folder('snapshots');
  mkdirSync(join(dir, 'snapshots'));
  // Encoder self-attention of 1 layer × 2 heads over 4 tokens: head 0 uniform (entropy ln 4 per
  // row), head 1 all on key 0 (entropy 0). Other kinds likewise on their shapes.
  const maps = (kind: 'encoder_self' | 'decoder_self' | 'cross', q: number, k: number) => {
    const w = new Float32Array(2 * q * k);
    for (let r = 0; r < q; r++) {
      const seen = kind === 'decoder_self' ? r + 1 : k;
      for (let c = 0; c < seen; c++) w[r * k + c] = 1 / seen;
      w[(q + r) * k] = 1;
    }
    return { kind, shape: [1, 2, q, k] as [number, number, number, number], weights: w };
  };
  const pair = {
    src: ['a', 'b', 'c', '</s>'],
    tgt: ['<s>', 'x', 'y'],
    maps: [maps('encoder_self', 4, 4), maps('decoder_self', 3, 3), maps('cross', 3, 4)],
  };
  const snap = (step: number) =>
    writeSnapshotFile(join(dir, 'snapshots', `step-${step}.safetensors`), { step, pairs: [pair] });
  snap(5);
  const first = pollRun(dir);
  assert.deepEqual(
    first.snapshots.map((s) => s.source.step),
    [5],
  );
  assert.equal(first.telemetry.length, 1);
  const row = first.telemetry[0]!;
  const at = (id: string) => row.stats['entropy']![row.heads.indexOf(id)]!;
  assert.ok(Math.abs(at('encoder_self:0.0') - Math.log(4)) < 1e-6, `uniform over 4 keys: ${at('encoder_self:0.0')}`);
  assert.ok(Math.abs(at('encoder_self:0.1')) < 1e-6);
  // Causal rows see 1, 2, 3 keys: mean of ln 1, ln 2, ln 3.
  const causal = (Math.log(1) + Math.log(2) + Math.log(3)) / 3;
  assert.ok(Math.abs(at('decoder_self:0.0') - causal) < 1e-6, `decoder_self:0.0 ${at('decoder_self:0.0')}`);
  snap(10);
  const second = pollRun(dir, first.cursor);
  assert.deepEqual([second.snapshots.map((s) => s.source.step), second.telemetry.map((t) => t.step)], [[10], [10]]);
  assert.deepEqual(pollRun(dir, second.cursor).snapshots, []);
});

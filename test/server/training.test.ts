/**
 * Training, decoding and inspection over the engine's JSON-RPC wire, as the extension drives them:
 * a real child process on stdio (this file, run with ENGINE_SERVER_CHILD=1).
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { after, test } from 'node:test';
import {
  createMessageConnection,
  type MessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
} from 'vscode-jsonrpc/node';
import type { RunSummary } from '../../src/protocol/training';
import { base64ToFloat32, type WireAttention } from '../../src/protocol/wire';
import type { MetricRow } from '../../src/protocol/metrics';
import { runServer } from '../../src/engine/server';
import { microConfig, scratch } from '../train/helpers';
import { copyConfig } from '../helpers';

if (process.env['ENGINE_SERVER_CHILD'] === '1') {
  void runServer({ backend: 'wasm' }).then((code) => (process.exitCode = code));
} else {
  // A failed assertion skips a test's conn.end(): its engine must not outlive the file (node --test
  // would wait for it forever).
  const engines: ChildProcess[] = [];
  after(() => engines.forEach((c) => c.kill('SIGKILL')));
  const start = () => {
    const child = spawn(process.execPath, [__filename], {
      stdio: ['pipe', 'pipe', 'inherit'],
      env: { ...process.env, ENGINE_SERVER_CHILD: '1' },
    });
    const conn: MessageConnection = createMessageConnection(
      new StreamMessageReader(child.stdout),
      new StreamMessageWriter(child.stdin),
    );
    const rows: MetricRow[] = [];
    const snapshots: WireAttention[] = [];
    const ended: { reason: string; step: number }[] = [];
    conn.onNotification('train/metrics', (p: { rows: MetricRow[] }) => rows.push(...p.rows));
    conn.onNotification('train/snapshot', (p: { attention: WireAttention }) => snapshots.push(p.attention));
    conn.onNotification('train/ended', (p: { reason: string; step: number }) => ended.push(p));
    conn.listen();
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    engines.push(child);
    return { conn, rows, snapshots, ended, exited };
  };
  const until = async (cond: () => boolean): Promise<void> => {
    const end = Date.now() + 120_000;
    while (!cond()) {
      if (Date.now() > end) throw new Error('timed out');
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  test('train/start streams metrics and snapshots; train/stop checkpoints; resume, open, attention/get decodes, snapshots, positional', async () => {
    const dir = scratch('ad-server-');
    const runDir = join(dir, 'run');
    // A model that learns to copy by step 600 (helpers.ts): its decode of a sequence is known.
    const config = copyConfig(dir, { steps: 100000, checkpoint_every: 1000, snapshot_every: 5 });
    const e = start();
    const summary = (await e.conn.sendRequest('train/start', {
      runDir,
      data: { kind: 'task', task: 'copy' },
      config,
    })) as RunSummary;
    assert.equal(summary.running, true);
    assert.equal(summary.dModel, 32);
    // The planned curve is eq. 3: d_model 32, warmup 60 → peak (32 · 60)^-0.5 = 1/43.8178046
    // = 0.0228217732 at step 60.
    const peak = summary.schedule.reduce((a, b) => (b.lr > a.lr ? b : a));
    assert.equal(peak.step, 60);
    assert.ok(Math.abs(peak.lr - 0.0228217732) < 1e-9);
    await until(() => e.rows.length >= 12 && e.snapshots.length >= 2);
    assert.deepEqual(
      e.rows.slice(0, 12).map((r) => r.step),
      Array.from({ length: 12 }, (_, i) => i + 1),
    );
    await assert.rejects(
      e.conn.sendRequest('train/start', { runDir: join(dir, 'other'), data: { kind: 'task', task: 'copy' }, config }),
      /a run is already training/,
    );
    const stopped = (await e.conn.sendRequest('train/stop')) as { step: number };
    assert.ok(stopped.step >= 12);
    await until(() => e.ended.length === 1);
    assert.deepEqual(e.ended[0], { runDir, step: stopped.step, reason: 'stopped' });

    // A snapshot's maps are [L, H, q, k] float32 whose rows are softmax distributions.
    const snap = e.snapshots[0];
    const cross = snap.maps.find((m) => m.kind === 'cross')!;
    assert.deepEqual(cross.shape, [1, 2, snap.tgtTokens.length, snap.srcTokens.length]);
    const w = base64ToFloat32(cross.weights);
    const k = cross.shape[3];
    for (let row = 0; row < w.length / k; row++)
      assert.ok(Math.abs(w.slice(row * k, row * k + k).reduce((a, b) => a + b, 0) - 1) < 1e-5);

    const opened = (await e.conn.sendRequest('run/open', { runDir })) as { summary: RunSummary; rows: MetricRow[] };
    assert.equal(opened.rows.length, stopped.step);
    assert.deepEqual(opened.summary.checkpoints, [stopped.step]);
    assert.ok(opened.summary.snapshots.includes(5));

    const resumed = (await e.conn.sendRequest('train/resume', { runDir, steps: 600 })) as RunSummary;
    assert.equal(resumed.step, stopped.step);
    await until(() => e.ended.length === 2);
    assert.deepEqual(e.ended[1], { runDir, step: 600, reason: 'completed' });

    // Decoding is attention/get of a text with no target: the engine decodes it at the checkpoint.
    const decoded = (await e.conn.sendRequest('attention/get', {
      runDir,
      input: { kind: 'text', src: '5 6 7' },
      beam: 2,
    })) as { attention: WireAttention; decoded: { text: string; tokens: string[] } };
    // The copy task's answer is its input.
    assert.equal(decoded.decoded.text, '5 6 7');
    assert.deepEqual(decoded.decoded.tokens, ['5', '6', '7']);
    assert.deepEqual(
      decoded.attention.tgtTokens.slice(1),
      decoded.decoded.tokens,
      'the attention is of the decoded target',
    );
    assert.deepEqual(decoded.attention.srcTokens, ['5', '6', '7', '</s>']);
    assert.equal(decoded.attention.tgtTokens[0], '<s>');

    const history = (await e.conn.sendRequest('snapshots/get', { runDir, steps: [5, 10] })) as WireAttention[];
    assert.deepEqual(
      history.map((h) => h.source.step),
      [5, 10],
    );

    // PE(pos, 2i) = sin(pos / 10000^(2i/d)): pos 1, i 0 → sin 1; pos 1, dim 1 → cos 1
    const pe = (await e.conn.sendRequest('positional', { dModel: 4, positions: 3 })) as {
      shape: number[];
      data: string;
    };
    assert.deepEqual(pe.shape, [3, 4]);
    const v = base64ToFloat32(pe.data);
    assert.ok(
      Math.abs(v[4] - Math.sin(1)) < 1e-6 &&
        Math.abs(v[5] - Math.cos(1)) < 1e-6 &&
        Math.abs(v[6] - Math.sin(1 / 100)) < 1e-6,
    );

    await assert.rejects(
      e.conn.sendRequest('train/start', { runDir, data: { kind: 'task', task: 'juggle' }, config }),
      /train\/start params\.data\.task must be one of copy, reverse, sort/,
    );
    await assert.rejects(
      e.conn.sendRequest('attention/get', { runDir: join(dir, 'nothing'), input: { kind: 'text', src: 'x' } }),
      /nothing: no such file or folder/,
    );
    e.conn.end();
    assert.equal(await e.exited, 0);
  });

  test('a client that goes away mid-training leaves a checkpoint to resume from', async () => {
    const dir = scratch('ad-server-');
    const runDir = join(dir, 'run');
    const e = start();
    await e.conn.sendRequest('train/start', {
      runDir,
      data: { kind: 'task', task: 'copy' },
      config: microConfig(dir, { steps: 100000, checkpoint_every: 1000 }),
    });
    await until(() => e.rows.length >= 3);
    e.conn.end();
    assert.equal(await e.exited, 0);
    const again = start();
    const opened = (await again.conn.sendRequest('run/open', { runDir })) as { summary: RunSummary };
    assert.equal(opened.summary.checkpoints.length, 1);
    assert.ok(opened.summary.checkpoints[0] >= 3);
    again.conn.end();
    await again.exited;
  });
}

/**
 * Malformed messages from the engine are logged with the field they get wrong and dropped: never
 * thrown, never shown in a panel. A fake engine (a few lines of Node that write JSON-RPC frames)
 * sends broken notifications and then a good one, which must still arrive.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { EngineClient } from '../../../src/extension/engineClient';
import { TrainingSession } from '../../../src/extension/training';
import { test, waitFor } from './harness';

const good = { step: 3, loss: 2.5, lr: 1e-3, tokensPerSec: 100, gradNorm: 1 };
const messages = [
  { method: 'train/metrics', params: { runDir: '/r', rows: [{ ...good, loss: 'high' }] } },
  { method: 'train/metrics', params: ['/r', [good]] },
  { method: 'train/ended', params: { runDir: '/r', step: 3, reason: 'exploded' } },
  // Four weights in base64 for a 1×1 map of one token: caught where it enters the extension.
  {
    method: 'train/snapshot',
    params: {
      runDir: '/r',
      attention: {
        source: { runDir: '/r', step: 1, input: 'probe' },
        srcTokens: ['a'],
        tgtTokens: ['b'],
        maps: [{ kind: 'cross', shape: [1, 1, 1, 1], weights: 'AACAPwAAgD8AAIA/AACAPw==' }],
      },
    },
  },
  { method: 'train/metrics', params: { runDir: '/r', rows: [good] } },
];

function fakeEngine(dir: string): string {
  const file = path.join(dir, 'fake-engine.js');
  fs.writeFileSync(
    file,
    `
const frames = ${JSON.stringify(messages)};
for (const m of frames) {
  const body = JSON.stringify({ jsonrpc: '2.0', ...m });
  process.stdout.write('Content-Length: ' + Buffer.byteLength(body) + '\\r\\n\\r\\n' + body);
}
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
`,
  );
  return file;
}

test('malformed engine notifications are logged naming the field, and a good one after them still arrives', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attn-fake-'));
  const output = vscode.window.createOutputChannel('Attention Debugger (fake engine test)');
  const engine = new EngineClient(fakeEngine(dir), output);
  const session = new TrainingSession(engine, (l) => engine.log(l));
  try {
    const metrics: unknown[] = [];
    const snapshots: unknown[] = [];
    session.onDidMetrics((e) => metrics.push(e.rows));
    session.onDidSnapshot((e) => snapshots.push(e));
    const arrived = waitFor(session.onDidMetrics, () => true, 20_000, 'the well-formed train/metrics');
    engine.start();
    const { rows } = await arrived;
    assert.deepEqual(rows, [good]);
    assert.deepEqual(metrics, [[good]], 'only the good row got past the boundary (the panels see what it passes)');
    assert.deepEqual(snapshots, [], 'the broken snapshot never got past the boundary');
    const log = engine.recentLog().join('\n');
    assert.match(log, /malformed notification ignored: train\/metrics params\.rows\[0\]\.loss must be a finite number/);
    assert.match(log, /malformed notification ignored: train\/metrics params(\.runDir)? must be/);
    assert.match(
      log,
      /malformed notification ignored: train\/ended params\.reason must be one of completed, stopped, failed/,
    );
    assert.match(
      log,
      /malformed notification ignored: train\/snapshot params\.attention\.maps\[0\]\.weights must hold 1 values/,
    );
  } finally {
    session.dispose();
    await engine.dispose();
    output.dispose();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, 30_000);

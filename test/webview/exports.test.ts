import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dataUrlBytes } from '../../src/extension/panels/dataUrl';
import { PanelStore } from '../../src/extension/panels/store';

test('data: URLs from webviews decode (base64 PNG, percent-encoded SVG)', () => {
  assert.deepEqual(Array.from(dataUrlBytes('data:image/png;base64,iVBORw==')), [0x89, 0x50, 0x4e, 0x47]);
  assert.equal(new TextDecoder().decode(dataUrlBytes('data:image/svg+xml,%3Csvg%20a%3D%221%22%3E')), '<svg a="1">');
  assert.throws(() => dataUrlBytes('http://x'), /not a data: URL/);
});

test('the panel store replaces resent steps and merges snapshots by step', () => {
  const s = new PanelStore();
  const row = (step: number, loss: number) => ({ step, loss, lr: 1, tokensPerSec: 1, gradNorm: 1 });
  s.appendMetrics([row(1, 5), row(2, 4), row(3, 3)]);
  s.appendMetrics([row(2, 4.5), row(3, 3.5), row(4, 3)]); // resumed from step 2
  assert.deepEqual(
    s.rows.map((r) => [r.step, r.loss]),
    [
      [1, 5],
      [2, 4.5],
      [3, 3.5],
      [4, 3],
    ],
  );
  s.appendMetrics([row(1, 9)], true);
  assert.deepEqual(
    s.rows.map((r) => r.step),
    [1],
  );
  const snap = (step: number) => ({
    source: { runDir: '/r', step, input: 'probe' as const },
    srcTokens: [],
    tgtTokens: [],
    maps: [],
  });
  s.addSnapshots([snap(200), snap(100)]);
  s.addSnapshots([snap(300), snap(200)]);
  assert.deepEqual(
    s.snapshots.map((x) => x.source.step),
    [100, 200, 300],
  );
});

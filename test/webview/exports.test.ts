import { test } from 'node:test';
import assert from 'node:assert/strict';
import { csvField, headCsv, metricsCsv } from '../../webview/lib/csv';
import { dataUrlBytes } from '../../src/extension/panels/dataUrl';
import { PanelStore } from '../../src/extension/panels/store';

test('CSV quoting per RFC 4180', () => {
  assert.equal(csvField('plain'), 'plain');
  assert.equal(csvField('a,b'), '"a,b"');
  assert.equal(csvField('say "hi"'), '"say ""hi"""');
  assert.equal(csvField(' pad'), '" pad"');
  assert.equal(csvField(undefined), '');
  assert.equal(csvField(0.25), '0.25');
});

test('metrics CSV: header, one line a row, optional columns empty', () => {
  const csv = metricsCsv([
    { step: 1, loss: 9.5, lr: 1e-7, tokensPerSec: 1200, gradNorm: 3 },
    { step: 2, loss: 9, lr: 2e-7, tokensPerSec: 1250, gradNorm: 2.5, valLoss: 9.25, valBleu: 0.5 },
  ]);
  assert.equal(
    csv,
    'step,loss,lr,tokensPerSec,gradNorm,valLoss,valBleu\n1,9.5,1e-7,1200,3,,\n2,9,2e-7,1250,2.5,9.25,0.5\n',
  );
});

test('head CSV: key tokens across, query tokens down', () => {
  const csv = headCsv({
    queries: 2,
    keys: 2,
    weights: new Float32Array([0.75, 0.25, 0.5, 0.5]),
    queryTokens: ['x', ','],
    keyTokens: ['a', 'b'],
  });
  assert.equal(csv, 'query\\key,a,b\nx,0.75,0.25\n",",0.5,0.5\n');
});

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
  const snap = (step: number) => ({ step, srcTokens: [], tgtTokens: [], maps: [] });
  s.addSnapshots([snap(200), snap(100)]);
  s.addSnapshots([snap(300), snap(200)]);
  assert.deepEqual(
    s.snapshots.map((x) => x.step),
    [100, 200, 300],
  );
});

/**
 * The Head Importance table (webview/importance/table.ts): rows of a heads report with ranks and
 * the metric once removed worked by hand, sorting by a column and reversing it, and the CSV.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { type HeadReport, nothingToLose } from '../../src/protocol/heads';
import { importanceCsv, importanceRows, nextOrder, sortRows } from '../../webview/importance/table';

const point = (removed: number, head: string | null, metric: number) => ({ removed, head, metric });
const REPORT: HeadReport = {
  run: '/runs/r',
  checkpoint: '/runs/r/checkpoints/step-10.safetensors',
  step: 10,
  metric: 'exact_match_percent',
  sentences: 20,
  tolerance: 1,
  importance: { 'dec:0.0': 0.001, 'cross:0.0': 0.02, 'enc:0.0': 0.3 },
  byImportance: [point(0, null, 90), point(1, 'dec:0.0', 90), point(2, 'cross:0.0', 40), point(3, 'enc:0.0', 0)],
  random: {
    seed: 1,
    points: [point(0, null, 90), point(1, 'enc:0.0', 10), point(2, 'dec:0.0', 5), point(3, 'cross:0.0', 0)],
  },
  prunable: { byImportance: 1, random: 0 },
};

test('rows: one per head, rank 1 the most important, the metric once it and every less important head are removed', () => {
  assert.deepEqual(importanceRows(REPORT), [
    { head: 'dec:0.0', importance: 0.001, rank: 3, whenRemoved: 90 },
    { head: 'cross:0.0', importance: 0.02, rank: 2, whenRemoved: 40 },
    { head: 'enc:0.0', importance: 0.3, rank: 1, whenRemoved: 0 },
  ]);
});

test('a click sorts by a column ascending, the next click on it reverses it; another column starts ascending', () => {
  const rows = importanceRows(REPORT);
  let o = nextOrder({ key: 'rank', descending: false }, 'importance');
  assert.deepEqual(o, { key: 'importance', descending: false });
  assert.deepEqual(
    sortRows(rows, o).map((r) => r.head),
    ['dec:0.0', 'cross:0.0', 'enc:0.0'],
  );
  o = nextOrder(o, 'importance');
  assert.deepEqual(
    sortRows(rows, o).map((r) => r.head),
    ['enc:0.0', 'cross:0.0', 'dec:0.0'],
  );
  o = nextOrder(o, 'head');
  assert.deepEqual(
    sortRows(rows, o).map((r) => r.head),
    ['cross:0.0', 'dec:0.0', 'enc:0.0'],
  );
  const never = [...rows, { head: 'enc:0.1', importance: 0, rank: 4, whenRemoved: null }];
  for (const descending of [false, true])
    assert.equal(sortRows(never, { key: 'whenRemoved', descending }).at(-1)!.head, 'enc:0.1', 'never removed: last');
});

test('the CSV has a header and one line per row, in the order shown', () => {
  const rows = sortRows(importanceRows(REPORT), { key: 'rank', descending: false });
  assert.equal(
    importanceCsv(rows, REPORT),
    'head,importance,rank,exact_match_percent_when_removed\nenc:0.0,0.3,1,0\ncross:0.0,0.02,2,40\ndec:0.0,0.001,3,90\n',
  );
});

test('a model that scores no more than may be lost says so instead of how many heads can go', () => {
  // 90% with every head: the pruning curve means something, nothing is said instead.
  assert.equal(nothingToLose(REPORT), undefined);
  // 0.5% with every head, 1 point may be lost: every head "can go" by the rule, and the report says why.
  const untrained = {
    ...REPORT,
    byImportance: REPORT.byImportance.map((p) => ({ ...p, metric: p.removed ? 0 : 0.5 })),
  };
  const said = nothingToLose(untrained) ?? '';
  assert.ok(said.startsWith('with every head the model scores 0.50 exact match % on 20 test sentences'), said);
  assert.ok(
    said.includes('no more than the 1 point that may be lost') && said.endsWith('Train further before pruning.'),
    said,
  );
  // Just above the tolerance (1.25 > 1): the report counts the heads as before.
  const trained = { ...REPORT, byImportance: [point(0, null, 1.25), ...REPORT.byImportance.slice(1)] };
  assert.equal(nothingToLose(trained), undefined);
  // BLEU: 0.4 with every head, 0.5 may be lost.
  const bleu = { ...untrained, metric: 'bleu' as const, tolerance: 0.5, byImportance: [point(0, null, 0.4)] };
  assert.match(
    nothingToLose(bleu)!,
    /^with every head the model scores 0\.40 BLEU on 20 test sentences, no more than the 0\.5 BLEU that/,
  );
});

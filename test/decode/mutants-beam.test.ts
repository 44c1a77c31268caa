/**
 * Beam search's rules (beam.ts's header) on hand-worked tables, where beam.test.ts leaves them open:
 * ties among finished hypotheses, first-k keeping the first k, the forced EOS taken best first,
 * the exact rule's bound (strictly above; p itself when p > 0), the search tree's depths and
 * statuses, a search whose every candidate is −∞, argument checks, and a model without `release`.
 * Each case was found by a mutant that survived beam.test.ts (test/README.md, "Mutation score").
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { beamSearch } from '../../src/engine/decode/beam';
import type { SearchOptions, SentenceResult, StepModel } from '../../src/engine/decode/search';
import { BOS, EOS, FakeModel, fromTable, type FakeState } from './fake-model';

const A = 2;
const B = 3;
const C = 4;
const NAMES = ['BOS', 'EOS', 'a', 'b', 'c'];
const close = (a: number, b: number) => assert.ok(Math.abs(a - b) < 1e-5, `${a} ≉ ${b}`);
const lp = (length: number, alpha: number) => ((5 + length) / 6) ** alpha; // GNMT, by its formula
const tokens = (r: SentenceResult) => r.nBest.map((h) => [...h.tokens]);

/** A table by prefix ('' for none, 'a b' for [a, b]); a prefix it lacks is an error. */
function byPrefix(vocab: number, table: Record<string, Record<number, number>>) {
  return (_s: number, p: number[]) => {
    const key = p.map((t) => NAMES[t]).join(' ');
    const row = table[key];
    if (!row) throw new Error(`unexpected prefix "${key}"`);
    return fromTable(vocab, row);
  };
}

async function search(table: (s: number, p: number[]) => Float32Array, opts: Partial<SearchOptions>, vocab = 4) {
  const m = new FakeModel(vocab, table);
  const n = opts.sourceLengths?.length ?? 1;
  const all = { bos: BOS, eos: EOS, sourceLengths: [5], ...opts };
  const rs = await beamSearch(m, m.initial(Array.from({ length: n }, (_, i) => i)), all);
  return { rs, m };
}

test('each row’s candidates come from its own V log-probs, not the next row’s', async () => {
  // Sentence 0: [] a −1, EOS −2 → k = 1 keeps a; [a] EOS −0.5. Sentence 1: [] token 0 −0.125; [0] EOS −1.
  // Row 1's token 0 (−0.125) follows row 0's last entry and beats all of row 0's.
  const table = (s: number, p: number[]) => {
    if (p.length > 0) return fromTable(4, { [EOS]: s === 0 ? -0.5 : -1 });
    return s === 0 ? fromTable(4, { [A]: -1, [EOS]: -2 }) : fromTable(4, { 0: -0.125, [B]: -3 });
  };
  const { rs } = await search(table, { sourceLengths: [5, 5], beamSize: 1 });
  assert.deepEqual(rs.map(tokens), [[[A, EOS]], [[0, EOS]]]);
  assert.deepEqual(
    rs.map((r) => r.best.logProb),
    [-1.5, -1.125],
  );
});

test('finished hypotheses of equal score keep the order they finished in (exact and first-k)', async () => {
  // [] a −1, b −1 (tie: a ranks first); [a] EOS −0.5, [b] EOS −0.5: both end at −1.5, a's first.
  const table = byPrefix(4, { '': { [A]: -1, [B]: -1 }, a: { [EOS]: -0.5 }, b: { [EOS]: -0.5 } });
  for (const earlyStop of ['exact', 'first-k'] as const) {
    const { rs } = await search(table, { beamSize: 2, earlyStop });
    assert.deepEqual(tokens(rs[0]!), [
      [A, EOS],
      [B, EOS],
    ]);
  }
});

// k = 2, α = 0.6, first-k. [] EOS −1, a −2, b −3, c −4; [a] a −0.25, EOS −0.5; [b] EOS −0.25, a −4.
//   step 1: [EOS] −1 (rank 0: finished), [a] −2, [b] −3 live, [c] −4 (rank 3, beam full: pruned)
//   step 2: [a a] −2.25 (live), [a EOS] −2.5 (rank 1: finished; 2 = k), [b EOS] −3.25 (rank 2 ≥ k:
//           pruned), [b a] −7 (live); k finished: stop, [a a] and [b a] left open.
const firstK = byPrefix(5, {
  '': { [EOS]: -1, [A]: -2, [B]: -3, [C]: -4 },
  a: { [A]: -0.25, [EOS]: -0.5 },
  b: { [EOS]: -0.25, [A]: -4 },
});

test('the tree: every node’s depth, score logP / lp(depth) and status; open where the search stopped', async () => {
  const { rs, m } = await search(firstK, { beamSize: 2, earlyStop: 'first-k', tree: true }, 5);
  const r = rs[0]!;
  assert.equal(m.calls.length, 2);
  assert.deepEqual(tokens(r), [[EOS], [A, EOS]]);
  const t = r.tree!;
  const name = (id: number): string => {
    const n = t.nodes[id]!;
    return n.parent < 0 ? NAMES[n.token]! : `${name(n.parent)} ${NAMES[n.token]}`;
  };
  assert.deepEqual(
    t.nodes.map((n) => `${name(n.id)}: ${n.depth} ${n.status}${n.chosen ? ' chosen' : ''}`),
    [
      'BOS: 0 expanded chosen',
      'BOS EOS: 1 finished chosen',
      'BOS a: 1 expanded',
      'BOS b: 1 expanded',
      'BOS c: 1 pruned',
      'BOS a a: 2 open',
      'BOS a EOS: 2 finished',
      'BOS b EOS: 2 pruned',
      'BOS b a: 2 open',
    ],
  );
  const logProbs = [0, -1, -2, -3, -4, -2.25, -2.5, -3.25, -7];
  t.nodes.forEach((n, i) => {
    close(n.logProb, logProbs[i]!);
    close(n.score, logProbs[i]! / lp(n.depth, 0.6));
  });
  assert.deepEqual(t.nBest, [1, 6]);
});

test('first-k keeps the first k finished and prunes the rest, even from the same step', async () => {
  // As above without c: [a EOS] fills the list, [b EOS] (rank 1 here, ≥ k finished) is pruned.
  const table = byPrefix(4, { '': { [EOS]: -1, [A]: -2, [B]: -3 }, a: { [EOS]: -0.5 }, b: { [EOS]: -0.25 } });
  const { rs } = await search(table, { beamSize: 2, earlyStop: 'first-k', alpha: 0, tree: true });
  assert.deepEqual(tokens(rs[0]!), [[EOS], [A, EOS]]);
  assert.deepEqual(
    rs[0]!.tree!.nodes.map((n) => n.status),
    ['expanded', 'finished', 'expanded', 'expanded', 'finished', 'pruned'],
  );
});

// Forced end (maxLen 0 + 2), k = 2, α = 0, first-k. [] EOS −0.5, a −1, b −2; [a], [b] a −1, EOS −4.
//   step 1: [EOS] finished (−0.5); live [a] −1, [b] −2
//   step 2: [a a] −2, [b a] −3 live; [a EOS] −5, [b EOS] −6 rank ≥ k: pruned
//   step 3: both at maxLen: EOS forced, best log-prob first; one place left in the k.
const forced = (aaEos: number) =>
  byPrefix(4, {
    '': { [EOS]: -0.5, [A]: -1, [B]: -2 },
    a: { [A]: -1, [EOS]: -4 },
    b: { [A]: -1, [EOS]: -4 },
    'a a': { [EOS]: aaEos },
    'b a': { [EOS]: -0.25 },
  });
const forcedOpts = { sourceLengths: [0], maxLenOffset: 2, beamSize: 2, alpha: 0, earlyStop: 'first-k' as const };

test('at maximum length the forced EOS ends the best log-prob first', async () => {
  // [a a EOS] −2 − 5 = −7, [b a EOS] −3 − 0.25 = −3.25: [b a EOS] takes the last place.
  const { rs, m } = await search(forced(-5), forcedOpts);
  assert.equal(m.calls.length, 3);
  assert.deepEqual(tokens(rs[0]!), [[EOS], [B, A, EOS]]);
  assert.deepEqual(
    rs[0]!.nBest.map((h) => h.logProb),
    [-0.5, -3.25],
  );
});

test('at maximum length a tie keeps the live order (stable): the earlier live hypothesis ends first', async () => {
  // [a a EOS] −2 − 1.25 = −3.25 = [b a EOS]: [a a] was live first.
  const { rs } = await search(forced(-1.25), forcedOpts);
  assert.deepEqual(tokens(rs[0]!), [[EOS], [A, A, EOS]]);
});

test('the exact rule stops when the bound only equals the k-th finished score (it cannot beat it)', async () => {
  // k = 1, α = 0 (bound = p): [] EOS −1, a −1 (tie: EOS, the lower id, ranks first and finishes);
  // live [a] −1 could at best reach −1 = the finished score: stop after one step.
  const table = byPrefix(4, { '': { [EOS]: -1, [A]: -1 }, a: { [EOS]: -1 } });
  const { rs, m } = await search(table, { beamSize: 1, alpha: 0 });
  assert.equal(m.calls.length, 1);
  assert.deepEqual(tokens(rs[0]!), [[EOS]]);
});

test('the exact rule’s bound is p itself for a live log-prob p > 0 (an unnormalised model)', async () => {
  // k = 1, α = 0.6, maxLen 55. [] a +1; [a] EOS +2, a +1.9; [a a] EOS +1.
  //   step 2: [a EOS] +3 finishes, score 3/lp(2) = 2.734976; live [a a] +2.9: bound 2.9 > 2.734976 → go on
  //     (2.9/lp(56) = 0.721 would stop here)
  //   step 3: [a a EOS] +3.9, score 3.9/lp(3) = 3.281720 replaces it.
  const table = byPrefix(4, { '': { [A]: 1 }, a: { [EOS]: 2, [A]: 1.9 }, 'a a': { [EOS]: 1 } });
  const { rs, m } = await search(table, { beamSize: 1 });
  assert.equal(m.calls.length, 3);
  assert.deepEqual(tokens(rs[0]!), [[A, A, EOS]]);
  close(rs[0]!.best.score, 3.9 / lp(3, 0.6));
  close(3 / lp(2, 0.6), 2.734976);
});

test('when every candidate is −∞ from the first step: no tokens, log-prob −∞, an empty n-best', async () => {
  for (const tree of [false, true]) {
    const { rs, m } = await search(() => fromTable(4, {}), { beamSize: 2, tree });
    const r = rs[0]!;
    assert.deepEqual([...r.best.tokens], []);
    assert.deepEqual([...r.best.stepRows], []);
    assert.equal(r.best.logProb, -Infinity);
    assert.equal(r.best.score, -Infinity);
    assert.deepEqual(r.nBest, []);
    assert.equal(m.calls.length, 1);
    assert.equal(m.released, 1);
    if (tree)
      assert.deepEqual(r.tree, {
        nodes: [{ id: 0, parent: -1, depth: 0, token: BOS, logProb: 0, score: 0, status: 'expanded', chosen: false }],
        nBest: [],
      });
    else assert.ok(!('tree' in r), 'a tree only when asked for');
  }
});

test('no tree unless asked for', async () => {
  const table = byPrefix(4, { '': { [A]: -1, [B]: -1 }, a: { [EOS]: -0.5 }, b: { [EOS]: -0.5 } });
  for (const tree of [undefined, false]) {
    const { rs } = await search(table, { beamSize: 2, tree });
    assert.ok(!('tree' in rs[0]!), `tree: ${tree}`);
  }
});

test('the beam size must be a positive integer and α ≥ 0', async () => {
  const m = new FakeModel(4, () => fromTable(4, { [EOS]: 0 }));
  const run = (o: Partial<SearchOptions>) =>
    beamSearch(m, m.initial([0]), { bos: BOS, eos: EOS, sourceLengths: [1], ...o });
  for (const k of [0, -2, 1.5, NaN])
    await assert.rejects(run({ beamSize: k }), {
      name: 'RangeError',
      message: `beamSize must be a positive integer, got ${k}`,
    });
  for (const alpha of [-0.5, NaN])
    await assert.rejects(run({ alpha }), { name: 'RangeError', message: `alpha must be ≥ 0, got ${alpha}` });
  assert.equal(m.calls.length, 0);
  const [r] = await run({ beamSize: 1, alpha: 0 });
  assert.deepEqual([...r!.best.tokens], [EOS]);
});

test('a model without `release` is searched (release is optional)', async () => {
  const inner = new FakeModel(4, byPrefix(4, { '': { [A]: -1 }, a: { [EOS]: -1 } }));
  const bare: StepModel<FakeState> = { step: (s, t) => inner.step(s, t), select: (s, r) => inner.select(s, r) };
  const [r] = await beamSearch(bare, inner.initial([0]), { bos: BOS, eos: EOS, sourceLengths: [5], beamSize: 2 });
  assert.deepEqual([...r!.best.tokens], [A, EOS]);
});

/**
 * heads/global (engine/inspect/globalView.ts, headVectors.ts, plane.ts): one head's queries and keys
 * over many pairs in 2-D. The PCA plane against hand-worked values; seeded UMAP repeats itself; the
 * head's q and k against PyTorch (their softmax(q·k/√d_k) is the golden fixtures' own attention, so
 * every query and key vector is checked on every head); and on a real run the basis fitted once is
 * kept for the other steps, and each bound is refused naming its field.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { initBackend } from '../../src/engine/backend';
import { loadCheckpoint } from '../../src/engine/checkpoint';
import { globalViewAt } from '../../src/engine/inspect/globalView';
import { headVectors } from '../../src/engine/inspect/headVectors';
import { fitPca, fitUmap } from '../../src/engine/inspect/plane';
import { ATTENTION_KINDS } from '../../src/protocol/attention';
import { UMAP_MAX_POINTS, checkGlobalView, checkGlobalViewParams } from '../../src/protocol/globalView';
import { micro } from '../cli/malformed-plants';
import { GOLDEN, maxAbsDiff, type NestedAttention, REPO, readJson } from '../helpers';
import { scratch } from '../train/helpers';

before(async () => {
  await initBackend('wasm');
});

const near = (got: unknown, want: unknown, what: string, tol = 1e-9) =>
  assert.ok(maxAbsDiff(got, want) < tol, `${what}: ${JSON.stringify(got)} vs ${JSON.stringify(want)}`);

test('PCA, worked by hand: centred, first axis (0.6, 0.8, 0), second (0, 0, 1), and the basis reused for new vectors', () => {
  // Four points about o = (1, 1, 1): o ± 5·(0.6, 0.8, 0) and o ± (0, 0, 1). Centred, their covariance
  // has eigenvalues 50/3 along (0.6, 0.8, 0) and 2/3 along (0, 0, 1): the variance shares 50/52, 2/52.
  // Each axis's largest loading is made positive (0.8, then 1), so the coordinates are
  // (5, 0), (−5, 0), (0, 1), (0, −1). A new vector (4, 5, 1) = o + (3, 4, 0) lands at (5, 0) on the
  // same axes and centre; (1, 1, 3) = o + (0, 0, 2) at (0, 2).
  const rows = [
    [4, 5, 1],
    [-2, -3, 1],
    [1, 1, 2],
    [1, 1, 0],
  ];
  const plane = fitPca(rows);
  near(plane.fitted.x, [5, -5, 0, 0], 'x');
  near(plane.fitted.y, [0, 0, 1, -1], 'y');
  near(plane.explained, [50 / 52, 2 / 52], 'explained');
  const placed = plane.place([
    [4, 5, 1],
    [1, 1, 3],
  ]);
  near(
    [placed.x, placed.y],
    [
      [5, 0],
      [0, 2],
    ],
    'placed on the kept basis',
  );
  // The rows in another order give the same plane: the signs are fixed by the loadings, not the data's order.
  const reordered = fitPca([rows[3]!, rows[1]!, rows[2]!, rows[0]!]).fitted;
  near(
    [reordered.x, reordered.y],
    [
      [0, -5, 0, 5],
      [-1, 0, 1, 0],
    ],
    'reordered',
  );
  assert.throws(() => fitPca([[1, 2]]), /PCA needs at least 2 vectors, got 1/);
});

test('UMAP is seeded: the same rows give the same picture, two far clusters stay apart, and new rows are placed by its transform', () => {
  const rand = (i: number) => ((i * 2654435761) % 1000) / 1000; // fixed jitter
  const rows = Array.from({ length: 60 }, (_, i) => [(i < 30 ? 0 : 50) + rand(i), rand(i + 7), rand(i + 13)]);
  const a = fitUmap(rows);
  const b = fitUmap(rows);
  assert.deepEqual(a.fitted, b.fitted);
  const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
  const centre = (lo: number, hi: number) => [mean(a.fitted.x.slice(lo, hi)), mean(a.fitted.y.slice(lo, hi))];
  const [c0, c1] = [centre(0, 30), centre(30, 60)];
  const nearer = (i: number, own: number[], other: number[]) =>
    Math.hypot(a.fitted.x[i]! - own[0]!, a.fitted.y[i]! - own[1]!) <
    Math.hypot(a.fitted.x[i]! - other[0]!, a.fitted.y[i]! - other[1]!);
  for (let i = 0; i < 60; i++)
    assert.ok(i < 30 ? nearer(i, c0!, c1!) : nearer(i, c1!, c0!), `point ${i} by its own cluster`);
  const placed = a.place([[50.5, 0.5, 0.5]]);
  assert.ok(
    Math.hypot(placed.x[0]! - c1![0]!, placed.y[0]! - c1![1]!) <
      Math.hypot(placed.x[0]! - c0![0]!, placed.y[0]! - c0![1]!),
    'a new row of the second cluster is placed by it',
  );
});

interface Golden extends NestedAttention {
  src: number[][];
  tgt: number[][];
  tolerance: number;
}

test("each head's q and k against PyTorch: softmax(q·k/√d_k) over the unmasked keys is the fixture's attention", async () => {
  for (const name of readdirSync(GOLDEN).sort()) {
    const e = readJson<Golden>(join(GOLDEN, name, 'expected.json'));
    const model = loadCheckpoint(join(GOLDEN, name));
    const c = model.config;
    const unpad = (ids: number[]) => ids.slice(0, ids.length - [...ids].reverse().findIndex((id) => id !== c.pad_id));
    const pairs = e.src.map((s, b) => ({ src: unpad(s), tgt: unpad(e.tgt[b]!) }));
    try {
      for (const kind of ATTENTION_KINDS)
        for (let layer = 0; layer < (kind === 'encoder_self' ? c.encoder_layers : c.decoder_layers); layer++)
          for (let head = 0; head < c.heads; head++) {
            const v = await headVectors(model, pairs, { kind, layer, head });
            const dk = v.dk;
            let diff = 0;
            for (let iq = 0; iq < v.queries.sentence.length; iq++) {
              const b = v.queries.sentence[iq]!;
              const i = v.queries.position[iq]!;
              const keys = v.keys.sentence.flatMap((s, ik) => (s === b ? [ik] : []));
              const scores = keys.map((ik) => {
                let s = 0;
                for (let m = 0; m < dk; m++) s += v.queries.vectors[iq * dk + m]! * v.keys.vectors[ik * dk + m]!;
                return s / Math.sqrt(dk);
              });
              const open = keys.map((_, j) => kind !== 'decoder_self' || j <= i);
              const top = Math.max(...scores.filter((_, j) => open[j]));
              const ex = scores.map((s, j) => (open[j] ? Math.exp(s - top) : 0));
              const sum = ex.reduce((a, x) => a + x, 0);
              const want = e[kind][b]![layer]![head]![i]!.slice(0, keys.length);
              diff = Math.max(
                diff,
                maxAbsDiff(
                  ex.map((x) => x / sum),
                  want,
                ),
              );
            }
            assert.ok(diff <= e.tolerance, `${name} ${kind}:${layer}.${head}: max |engine − PyTorch| = ${diff}`);
            const want = { q: kind === 'encoder_self' ? 'src' : 'tgt', k: kind === 'decoder_self' ? 'tgt' : 'src' };
            for (const [role, r] of [
              ['q', v.queries],
              ['k', v.keys],
            ] as const)
              assert.equal(
                r.sentence.length,
                pairs.reduce((n, p) => n + p[want[role] as 'src' | 'tgt'].length, 0),
              );
          }
    } finally {
      model.dispose();
    }
  }
});

const dir = scratch('ad-global-view-');
const run = join(dir, 'run'); // the copy task, 6 steps, checkpoints at steps 3 and 6

test('on a run: the basis fitted at the newest step is kept for step 3, and the reply passes its check', async () => {
  writeFileSync(join(dir, 'micro.json'), micro());
  const args = ['train', '--backend', 'wasm', '--task', 'copy', '--config', join(dir, 'micro.json'), '--out', run];
  const r = spawnSync(process.execPath, [join(REPO, 'dist', 'cli.js'), ...args], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const head = { runDir: run, kind: 'cross', layer: 0, head: 1, pairs: 20 } as const;

  const basis = await globalViewAt(head);
  assert.equal(checkGlobalView(basis, 'reply'), undefined);
  assert.deepEqual([basis.step, basis.basisStep, basis.steps], [6, 6, [3, 6]]);
  assert.equal(basis.pairs.length, 20);
  // A pair's words: its source's tokens without EOS ("5 6 7", where its ids are 5 6 7 2), its
  // target's without the decoder's BOS.
  for (const p of basis.pairs) {
    assert.deepEqual([p.srcTokens.at(-1), p.tgtTokens[0]], ['</s>', '<s>']);
    const words = { src: p.srcTokens.slice(0, -1).join(' '), tgt: p.tgtTokens.slice(1).join(' ') };
    assert.deepEqual(p.words, words, `pair ${p.src}`);
  }
  const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
  near([mean(basis.points.x), mean(basis.points.y)], [0, 0], 'PCA centres the basis step', 1e-5);
  // cross: queries are the targets' tokens (BOS, <s>, first), keys the sources' (EOS last).
  const first = basis.points.sentence.indexOf(0);
  assert.deepEqual([basis.points.role[first], basis.points.token[first]], ['q', '<s>']);
  const q = basis.points.role.filter((x) => x === 'q').length;
  assert.equal(
    q,
    basis.pairs.reduce((n, p) => n + p.tgtTokens.length, 0),
  );
  assert.equal(
    basis.points.x.length - q,
    basis.pairs.reduce((n, p) => n + p.srcTokens.length, 0),
  );

  const early = await globalViewAt({ ...head, step: 3 });
  assert.deepEqual([early.step, early.basisStep], [3, 6]);
  assert.match(early.note, /step 3 placed on step 6's PCA axes/);
  // The same basis: step 3 placed by the kept plane equals step 3 placed after fitting step 6 afresh
  // (another head first, so nothing is kept), and differs from step 3's own fit.
  await globalViewAt({ ...head, head: 0 });
  const again = await globalViewAt({ ...head, step: 3 });
  near([again.points.x, again.points.y], [early.points.x, early.points.y], 'kept basis = refitted basis', 1e-9);
  const own = await globalViewAt({ ...head, step: 3, basisStep: 3 });
  assert.ok(maxAbsDiff(own.points.x, early.points.x) > 1e-3, "step 3's own basis is another plane");

  // UMAP without a pair count: as many pairs as stay within its points; seeded, so asked twice it
  // draws the same; another step is placed by its transform.
  const { pairs: _all, ...noPairs } = head;
  const umap = await globalViewAt({ ...noPairs, projection: 'umap' });
  assert.ok(umap.points.x.length <= UMAP_MAX_POINTS, `${umap.points.x.length} points`);
  assert.ok(umap.points.x.length + 30 > UMAP_MAX_POINTS, `as many pairs as fit: ${umap.points.x.length} points`);
  await globalViewAt({ ...head, head: 0 }); // nothing kept: the UMAP is fitted again
  assert.deepEqual((await globalViewAt({ ...noPairs, projection: 'umap' })).points, umap.points, 'UMAP repeats');
  assert.match((await globalViewAt({ ...head, projection: 'umap', step: 3 })).note, /its transform, not a refit/);
  await assert.rejects(
    globalViewAt({ ...head, projection: 'umap', pairs: 500 }),
    new RegExp(`umap takes at most ${UMAP_MAX_POINTS} points`),
  );

  await assert.rejects(
    globalViewAt({ ...head, layer: 1 }),
    /heads\/global params: layer must be below 1 \(cross\), got 1/,
  );
  await assert.rejects(globalViewAt({ ...head, head: 2 }), /head must be below 2, got 2/);
  await assert.rejects(
    globalViewAt({ ...head, step: 4 }),
    /has no checkpoint at step 4 \(its checkpoints: steps 3, 6\)/,
  );
  assert.match(checkGlobalViewParams({ ...head, pairs: 501 }, 'params') ?? '', /params\.pairs/);
  assert.match(checkGlobalViewParams({ ...head, projection: 'tsne' }, 'params') ?? '', /params\.projection/);
  const bad = { ...basis, points: { ...basis.points, token: basis.points.token.slice(1) } };
  assert.match(checkGlobalView(bad, 'reply') ?? '', /reply\.points\.token must hold/);
});

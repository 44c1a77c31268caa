/**
 * heads/global (protocol/globalView.ts): one head's queries and keys over the run's first N
 * validation pairs, in 2-D. The basis (PCA, or seeded UMAP) is fitted once at the basis step, on its
 * queries and keys together, and kept (one at a time, in this process) so that every other step is
 * placed in the same plane: PCA by the same centring and axes, UMAP by its transform.
 */
import { type HeadRef, headId } from '../../protocol/attention';
import {
  GLOBAL_MAX_PAIRS,
  type GlobalPair,
  type GlobalView,
  type GlobalViewParams,
  UMAP_MAX_POINTS,
  sideOf,
} from '../../protocol/globalView';
import { checkpointStep, listCheckpoints, loadCheckpoint } from '../checkpoint';
import { decoderInput } from '../data/specialTokens';
import { attentionLayers } from '../model/headParams';
import type { TransformerConfig } from '../model/config';
import { openRun } from '../run/setup';
import { checkpointOf } from './attentionAt';
import { type HeadVectors, headVectors, type PassPair } from './headVectors';
import { fitPlane, type Plane, rowsOf } from './plane';

/** The newest basis fitted: its key and plane. */
let kept: { key: string; plane: Plane } | undefined;

function checkHead(c: TransformerConfig, { kind, layer, head }: HeadRef): void {
  const layers = attentionLayers(c)[kind];
  if (layer >= layers)
    throw new RangeError(`heads/global params: layer must be below ${layers} (${kind}), got ${layer}`);
  if (head >= c.heads) throw new RangeError(`heads/global params: head must be below ${c.heads}, got ${head}`);
}

/**
 * How many of the first pairs a view takes when the params name none: GLOBAL_MAX_PAIRS, or for UMAP
 * as many as stay within UMAP_MAX_POINTS queries and keys (the pass's sides: source with EOS, BOS + target).
 */
function umapBudget(ref: HeadRef, valid: readonly { src: number[]; tgt: number[] }[], projection: string): number {
  if (projection !== 'umap') return GLOBAL_MAX_PAIRS;
  let points = 0;
  let n = 0;
  for (const v of valid.slice(0, GLOBAL_MAX_PAIRS)) {
    const side = (role: 'q' | 'k') => (sideOf(ref.kind, role) === 'source' ? v.src.length : v.tgt.length + 1);
    points += side('q') + side('k');
    if (points > UMAP_MAX_POINTS) break;
    n++;
  }
  return Math.max(1, n);
}

/** Queries then keys, as rows. */
const rowsOfBoth = (v: HeadVectors) => [...rowsOf(v.queries.vectors, v.dk), ...rowsOf(v.keys.vectors, v.dk)];

async function vectorsAt(weightsPath: string, pairs: PassPair[], ref: HeadRef): Promise<HeadVectors> {
  const model = loadCheckpoint(weightsPath, true);
  try {
    return await headVectors(model, pairs, ref);
  } finally {
    model.dispose();
  }
}

export async function globalViewAt(p: GlobalViewParams): Promise<GlobalView> {
  const { run, config, data } = openRun(p.runDir, {}, 'read');
  checkHead(config, p);
  const projection = p.projection ?? 'pca';
  const valid = data.valid.slice(0, p.pairs ?? umapBudget(p, data.valid, projection));
  if (!valid.length) throw new Error(`${run.path} has no validation split to show queries and keys of`);
  const passPairs = valid.map((v) => ({ src: v.src, tgt: decoderInput(v.tgt) }));
  const basisPath = checkpointOf(run, p.basisStep);
  const basisStep = checkpointStep(basisPath);
  const stepPath = p.step === undefined ? basisPath : checkpointOf(run, p.step);
  const step = checkpointStep(stepPath);

  const key = JSON.stringify([run.path, basisStep, headId(p), valid.length, projection]);
  const basisVectors = kept?.key === key && step !== basisStep ? undefined : await vectorsAt(basisPath, passPairs, p);
  if (basisVectors && projection === 'umap') {
    const n = basisVectors.queries.sentence.length + basisVectors.keys.sentence.length;
    if (n > UMAP_MAX_POINTS)
      throw new RangeError(
        `heads/global params: umap takes at most ${UMAP_MAX_POINTS} points, and ${valid.length} pairs make ${n}; ` +
          'ask for fewer pairs, or use pca',
      );
  }
  if (basisVectors && kept?.key !== key) kept = { key, plane: fitPlane(projection, rowsOfBoth(basisVectors)) };
  const plane = kept!.plane;
  const vectors = step === basisStep ? basisVectors! : await vectorsAt(stepPath, passPairs, p);
  const { x, y } = step === basisStep ? plane.fitted : plane.place(rowsOfBoth(vectors));

  const pairs: GlobalPair[] = valid.map((v, i) => ({
    src: v.src,
    tgt: v.tgt,
    words: { src: data.vocab.decode(v.src), tgt: data.vocab.decode(v.tgt) },
    srcTokens: data.vocab.tokens(v.src),
    tgtTokens: data.vocab.tokens(passPairs[i]!.tgt),
  }));
  const roles = [
    ['q', vectors.queries],
    ['k', vectors.keys],
  ] as const;
  const side = (role: 'q' | 'k', i: number) =>
    p.kind === 'encoder_self' || (p.kind === 'cross' && role === 'k') ? pairs[i]!.srcTokens : pairs[i]!.tgtTokens;
  const note =
    step === basisStep
      ? `${projection.toUpperCase()} fitted at step ${basisStep} on its ${x.length.toLocaleString('en-US')} queries and keys`
      : projection === 'pca'
        ? `step ${step} placed on step ${basisStep}'s PCA axes (same centring)`
        : `step ${step} placed by the UMAP fitted at step ${basisStep} (its transform, not a refit)`;
  return {
    runDir: run.path,
    kind: p.kind,
    layer: p.layer,
    head: p.head,
    step,
    basisStep,
    projection,
    steps: listCheckpoints(run.path).map((c) => c.step),
    pairs,
    points: {
      x,
      y,
      role: roles.flatMap(([role, r]) => r.sentence.map(() => role)),
      sentence: roles.flatMap(([, r]) => r.sentence),
      position: roles.flatMap(([, r]) => r.position),
      token: roles.flatMap(([role, r]) => r.sentence.map((s, i) => side(role, s)[r.position[i]!]!)),
    },
    ...(plane.explained ? { explained: plane.explained } : {}),
    note,
  };
}

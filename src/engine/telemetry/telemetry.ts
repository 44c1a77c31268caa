/**
 * A telemetry row: per-head statistics of the probe batch at one step (stats.ts), with the gradient
 * norm of each head's projections from that step's update (heads.ts), as telemetry.jsonl holds it
 * (docs/RUN_FOLDER.md, docs/TELEMETRY.md): `heads` names the rows once, `stats` gives one array per
 * statistic in that order.
 */
import { ATTENTION_KINDS, type AttentionKind, type AttentionMaps, headId } from '../../protocol/attention';
import type { TelemetryRow } from '../../protocol/telemetry';
import { alignmentError } from './alignment';
import { ATTENTION_STATS, headStats, type ProbePair } from './stats';

/** A head's projections, in the order of per-matrix norms (heads.ts): W^Q, W^K, W^V, W^O. */
export const PROJECTIONS = ['wq', 'wk', 'wv', 'wo'] as const;
/** `wq_norm` … `wo_norm`: each projection's weight norm, head by head. */
export const WEIGHT_NORM_STATS = PROJECTIONS.map((p) => `${p}_norm`);
/** `wq_grad_norm` … `wo_grad_norm`: each projection's gradient norm at the step, head by head. */
export const GRAD_NORM_STATS = PROJECTIONS.map((p) => `${p}_grad_norm`);

/** Every statistic of a telemetry row: the attention's, and the step's per-head norms (the trainer's). */
export const HEAD_STATS: readonly string[] = [
  ...ATTENTION_STATS,
  'align_err',
  'grad_norm',
  'output_norm',
  ...WEIGHT_NORM_STATS,
  ...GRAD_NORM_STATS,
];

/** `{ wq_norm: [heads], … }` from projection-major values [4 · heads] (heads.ts's headMatrixNorms). */
function byProjection(names: readonly string[], values: ArrayLike<number>): Record<string, number[]> {
  const all = Array.from(values);
  const heads = all.length / names.length;
  return Object.fromEntries(names.map((name, i) => [name, all.slice(i * heads, (i + 1) * heads)]));
}

/**
 * A telemetry step's per-head norms as statistics: the gradient's (whole and per projection, when
 * the step measured them), each head's output norm, and its projections' weight norms [4 · heads].
 */
export function headNormStats(
  step: { headGradNorms?: ArrayLike<number>; headMatrixGradNorms?: ArrayLike<number> },
  outputs: ArrayLike<number>,
  weights: ArrayLike<number>,
): Record<string, number[]> {
  return {
    ...(step.headGradNorms ? { grad_norm: Array.from(step.headGradNorms) } : {}),
    output_norm: Array.from(outputs),
    ...byProjection(WEIGHT_NORM_STATS, weights),
    ...(step.headMatrixGradNorms ? byProjection(GRAD_NORM_STATS, step.headMatrixGradNorms) : {}),
  };
}

/** Head ids of a model, kind-major, layer-major: the order of every telemetry array. */
export function headIds(layers: Record<AttentionKind, number>, heads: number): string[] {
  return ATTENTION_KINDS.flatMap((kind) =>
    Array.from({ length: layers[kind] * heads }, (_, i) =>
      headId({ kind, layer: Math.floor(i / heads), head: i % heads }),
    ),
  );
}

/**
 * The row of one step: attention statistics of every kind over the probe pairs, `align_err` of the
 * cross heads when every pair carries its task's alignment (null for the other heads), and whatever
 * per-head figures the step measured (gradient and output norms), already in head order.
 */
export function telemetryRow(
  step: number,
  probe: { maps: AttentionMaps[]; align?: readonly number[] | undefined }[],
  extra: Record<string, number[]> = {},
): TelemetryRow {
  const pairs: ProbePair[] = probe.map((p) => ({ maps: p.maps }));
  const perKind = ATTENTION_KINDS.map((kind) => ({ kind, s: headStats(kind, pairs) }));
  const first = probe[0]?.maps ?? [];
  const heads = perKind.flatMap(({ kind }) => {
    const m = first.find((x) => x.kind === kind)!;
    const [L, H] = m.shape;
    return Array.from({ length: L * H }, (_, i) => headId({ kind, layer: Math.floor(i / H), head: i % H }));
  });
  const stats: Record<string, (number | null)[]> = {};
  for (const name of ATTENTION_STATS) stats[name] = perKind.flatMap(({ s }) => s[name]);
  if (probe.length && probe.every((p) => p.align)) {
    const cross = alignmentError(probe.map((p) => ({ maps: p.maps, align: p.align! })));
    const at = heads.findIndex((id) => id.startsWith('cross:'));
    stats.align_err = heads.map((id, i) => (id.startsWith('cross:') ? (cross[i - at] ?? null) : null));
  }
  for (const [name, values] of Object.entries(extra)) {
    if (values.length !== heads.length)
      throw new Error(`telemetry ${name}: ${values.length} values for ${heads.length} heads`);
    stats[name] = values;
  }
  return { step, pairs: probe.length, heads, stats };
}

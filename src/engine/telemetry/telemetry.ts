/**
 * A telemetry row: per-head statistics of the probe batch at one step (stats.ts), with the gradient
 * norm of each head's projections from that step's update (heads.ts), as telemetry.jsonl holds it
 * (docs/RUN_FOLDER.md, docs/TELEMETRY.md): `heads` names the rows once, `stats` gives one array per
 * statistic in that order.
 */
import { ATTENTION_KINDS, type AttentionKind, type AttentionMaps, headId } from '../../protocol/attention';
import type { TelemetryRow } from '../../protocol/telemetry';
import { ATTENTION_STATS, headStats, type ProbePair } from './stats';

/** Every statistic of a telemetry row: the attention's, and the step's per-head norms (the trainer's). */
export const HEAD_STATS: readonly string[] = [...ATTENTION_STATS, 'grad_norm', 'output_norm'];

/** Head ids of a model, kind-major, layer-major: the order of every telemetry array. */
export function headIds(layers: Record<AttentionKind, number>, heads: number): string[] {
  return ATTENTION_KINDS.flatMap((kind) =>
    Array.from({ length: layers[kind] * heads }, (_, i) =>
      headId({ kind, layer: Math.floor(i / heads), head: i % heads }),
    ),
  );
}

/**
 * The row of one step: attention statistics of every kind over the probe pairs, and whatever
 * per-head figures the step measured (gradient and output norms), already in head order.
 */
export function telemetryRow(
  step: number,
  probe: { maps: AttentionMaps[] }[],
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
  for (const [name, values] of Object.entries(extra)) {
    if (values.length !== heads.length)
      throw new Error(`telemetry ${name}: ${values.length} values for ${heads.length} heads`);
    stats[name] = values;
  }
  return { step, pairs: probe.length, heads, stats };
}

/**
 * Pruning curves after Michel et al. (2019, fig. 2) and Voita et al. (2019): heads are removed
 * (ξ_h = 0) one more at a time in a given order, and a held-out metric is taken after each removal.
 * Removing in increasing importance should keep the metric longer than a random order.
 */
import { type AttentionKind, parseHeadId } from '../../protocol/attention';
import type { PruningPoint } from '../../protocol/heads';
import { mulberry32, shuffleInPlace } from '../data/random';
import type { ForwardContext } from '../model/context';
import type { Transformer } from '../model/transformer';
import { layersOf } from '../telemetry/importance';
import { headIds } from '../telemetry/telemetry';
import { ablationGates } from './gates';

/** Every head id of the model, `kind:layer.head`, in forward order. */
export function allHeads(model: Transformer): string[] {
  return headIds(layersOf(model), model.config.heads);
}

/** I_h of the head `id` names (one of allHeads) in per-kind [layers · heads] importances. */
export function importanceOf(importance: Record<AttentionKind, Float32Array>, model: Transformer, id: string): number {
  const { kind, layer, head } = parseHeadId(id)!;
  return importance[kind][layer * model.config.heads + head]!;
}

/** Heads ordered by increasing importance (ties: forward order). */
export function byImportance(importance: Record<AttentionKind, Float32Array>, model: Transformer): string[] {
  const heads = allHeads(model);
  return heads
    .map((id, i) => ({ id, i, v: importanceOf(importance, model, id) }))
    .sort((a, b) => a.v - b.v || a.i - b.i)
    .map((x) => x.id);
}

/** The heads in a seeded random order. */
export function randomOrder(model: Transformer, seed: number): string[] {
  return shuffleInPlace(allHeads(model), mulberry32(seed));
}

/**
 * The metric with the first 0, 1, …, `upTo` heads of `order` removed. `metric` scores the model
 * under the given gates (undefined: the model as trained).
 */
export async function pruningCurve(
  model: Transformer,
  order: readonly string[],
  metric: (heads: ForwardContext['heads'] | undefined) => Promise<number>,
  upTo = order.length,
  onPoint?: (p: PruningPoint) => void,
): Promise<PruningPoint[]> {
  const points: PruningPoint[] = [];
  for (let n = 0; n <= upTo; n++) {
    const gates = n ? ablationGates(model, { heads: order.slice(0, n), mode: 'zero' }) : undefined;
    try {
      const p = { removed: n, head: n ? order[n - 1]! : null, metric: await metric(gates?.heads) };
      points.push(p);
      onPoint?.(p);
    } finally {
      gates?.dispose();
    }
  }
  return points;
}

/**
 * How many heads can go with the metric lost by at most `tolerance`: the longest prefix of the
 * curve whose every point stays within `tolerance` of the intact model's.
 */
export function prunable(points: readonly PruningPoint[], tolerance: number): number {
  const base = points[0]!.metric;
  let n = 0;
  for (const p of points.slice(1)) {
    if (p.metric < base - tolerance) break;
    n = p.removed;
  }
  return n;
}

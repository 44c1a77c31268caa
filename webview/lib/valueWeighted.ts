/**
 * Value-weighted attention as the views draw it (Kobayashi et al., 2020): an attention whose maps'
 * `weights` are their `valueWeighted` norms ‖α_ij · v_j W^O_h‖, the caption every view shows with
 * them, and the largest norm of a view (the top of a colour scale shared by the whole view).
 */
import type { Attention } from '../../src/protocol/attention';
import { maxOf } from './attention';

/** What a view says it draws when it draws the norms. */
export const VALUE_WEIGHTED_CAPTION = 'value-weighted ‖α·vW^O‖';

/** Whether every map of `a` holds its value-weighted norms. */
export const hasNorms = (a: Attention): boolean => a.maps.length > 0 && a.maps.every((m) => m.valueWeighted);

/** `a` with each map's norms in place of its weights (maps without norms are left out). */
export function normsOf(a: Attention): Attention {
  const maps = a.maps.flatMap((m) =>
    m.valueWeighted ? [{ kind: m.kind, shape: m.shape, weights: m.valueWeighted }] : [],
  );
  return { ...a, maps };
}

/** The largest value over every map of `a` (0 when it has none). */
export const viewMax = (a: Attention): number => a.maps.reduce((top, m) => Math.max(top, maxOf(m.weights)), 0);

/** `a` with every map divided by `top` (> 0): values from 0 to 1, as the head view's opacities want. */
export function scaledBy(a: Attention, top: number): Attention {
  const maps = a.maps.map((m) => ({ ...m, weights: m.weights.map((w) => w / top) }));
  return { ...a, maps };
}
